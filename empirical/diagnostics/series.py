"""Window statistics of a logged series that every part of the diagnosis reads.

Moving means that ignore NaN, the early/middle/late segments of a run, the noise of a window
mean, normal quantiles, Kendall's trend statistic, and a change written with its direction in
words. Needs numpy.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from grpodyn.empirical.logs.loaders import Run

__all__ = ["amount", "change_words", "smooth", "window_mean", "lowest_window", "segments",
           "is_success_rate", "z_quantile", "point_noise", "trend_tau"]

#: Up to this many points :func:`trend_tau` counts the pairs in numpy; beyond, scipy's
#: O(n log n) ``kendalltau`` is faster than the import it costs.
PAIRWISE_POINTS = 4000
#: pairs :func:`trend_tau` compares in one array (2 MiB of differences)
_PAIR_BLOCK = 262_144


def _window_sums(values: np.ndarray, window: int, mode: str) -> np.ndarray:
    """Sum ``window`` consecutive values as ``np.convolve(values, ones(window), mode)`` does.

    From one cumulative sum: linear in the length whatever the window.
    """
    n = values.size
    if window > n:  # numpy centres on the longer of the two: a window longer than the run
        return np.convolve(values, np.ones(window), mode)
    total = np.concatenate([[0.0], np.cumsum(values)])
    if mode == "valid":
        return total[window:] - total[: n - window + 1]
    centre = np.arange(n)
    lo = np.clip(centre - window // 2, 0, n)
    hi = np.clip(centre + (window - 1) // 2 + 1, 0, n)
    return total[hi] - total[lo]


def smooth(y: np.ndarray, window: int, mode: str = "same") -> np.ndarray:
    """Average over a moving window, ignoring NaN (NaN where a window has no finite point).

    ``mode="same"``: centred, same length, the edges use the points they have;
    ``mode="valid"``: one mean per full window, ``len(y) - window + 1`` of them.
    """
    finite = np.isfinite(y)
    total = _window_sums(np.where(finite, y, 0.0), window, mode)
    count = np.rint(_window_sums(finite.astype(float), window, mode))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def window_mean(y: np.ndarray, part: slice) -> float:
    """Return the mean of the finite values of ``y[part]`` (NaN when there is none)."""
    chunk = y[part]
    chunk = chunk[np.isfinite(chunk)]
    return float(chunk.mean()) if chunk.size else float("nan")


def lowest_window(y: np.ndarray, start: int, width: int) -> tuple[float, int]:
    """Find the lowest mean of ``width`` consecutive points from ``start`` on, and its start.

    Windows without a finite point are skipped (inf when every one lacks them).
    """
    means = np.nan_to_num(smooth(y[start:], width, mode="valid"), nan=np.inf)
    at = int(np.argmin(means))
    return float(means[at]), start + at


def segments(n: int) -> tuple[slice, slice, slice]:
    """Early (first 15%), late (last 25%) and middle of a run of n points."""
    early, late = max(3, n * 15 // 100), max(3, n // 4)
    return slice(0, early), slice(n - late, n), slice(early, n - late)


def is_success_rate(run: Run) -> bool:
    """Rewards in [0, 1], read as a success rate p (the p^G + (1-p)^G predictions need it)."""
    return bool(np.nanmin(run.reward) >= 0 and np.nanmax(run.reward) <= 1)


def z_quantile(alpha: float) -> float:
    """Return the standard normal quantile exceeded with probability ``alpha`` (one-sided)."""
    return NormalDist().inv_cdf(1.0 - alpha)


def trend_tau(y: np.ndarray) -> float:
    """Return Kendall's tau-b between the order of the points and ``y``: a monotone trend's sign.

    tau_b = (C - D) / sqrt(n0 (n0 - n_y)), with C and D the concordant and discordant pairs
    (i < j with y_j above or below y_i), n0 = n (n - 1) / 2 and n_y the pairs tied in y
    (Kendall 1945; the statistic of ``scipy.stats.kendalltau(arange(n), y)``). Counted pairwise
    in numpy for up to :data:`PAIRWISE_POINTS` points: importing ``scipy.stats`` takes a third
    of a second, a quarter of a ``grpodyn forecast`` call. NaN when y is constant or n < 2.
    """
    y = np.asarray(y, dtype=float)
    n = y.size
    if n > PAIRWISE_POINTS:
        from scipy.stats import kendalltau  # pairwise counting is quadratic in n

        return float(kendalltau(np.arange(n), y).statistic)
    n0 = n * (n - 1) // 2
    score, untied = 0.0, 0
    rows = max(1, _PAIR_BLOCK // max(n, 1))  # the pairs (i, j > i) of this many i at once
    for start in range(0, n - 1, rows):
        i = np.arange(start, min(start + rows, n - 1))
        signs = np.sign(y[None, :] - y[i, None])[np.arange(n)[None, :] > i[:, None]]
        score += float(signs.sum())  # exact to 2^53 pairs; NaN where y holds a NaN
        untied += int(np.count_nonzero(signs))
    tied = n0 - untied
    if n0 == 0 or tied == n0:
        return float("nan")
    return float(score / np.sqrt(n0 * (n0 - tied)))


def point_noise(r: np.ndarray, window: int, noise: float) -> float:
    """Estimate the reward's noise per point at the scale of ``window`` points.

    The point-to-point estimate ``noise`` (std of the differences over sqrt 2) holds for white
    noise; slow fluctuations of a stable run (a policy that wanders at a fixed distance from
    its reference) make means over a window vary more than it says. Their spread is read from
    consecutive disjoint window means: the median absolute second difference (blind to a
    linear trend, robust to one real fall; 0.6745 sqrt 6 times their s.e. for independent
    means), from six windows on. The larger of the two is used, expressed per point: a window
    mean has s.e. ``_point_noise / sqrt(window)``.
    """
    blocks = smooth(r, window, mode="valid")[::window]
    blocks = blocks[np.isfinite(blocks)]
    if blocks.size < 6:
        return noise
    spread = float(np.median(np.abs(np.diff(blocks, 2)))) / (0.6745 * np.sqrt(6.0))
    return max(noise, spread * np.sqrt(window))


def amount(value: float, digits: int = 3) -> str:
    """Write a reward level, change or s.e. to ``digits`` decimals, or two significant digits.

    A value that ``digits`` decimals would show with fewer than two significant digits keeps
    two ("0.00031", never "0.000"; "0.0021", not "0.002"): the text of a reward on a small
    scale must neither read as zero where its number is not nor lose the difference between
    two levels. Zero (and NaN) as ``digits`` decimals.
    """
    if value != 0 and np.isfinite(value) and round(abs(value), digits) < 10.0 ** (1 - digits):
        return f"{value:#.2g}"
    return f"{value:.{digits}f}"


def change_words(value: float, digits: int = 3) -> str:
    """Write a change with its direction in words: "rose 0.120", "fell 0.050".

    The number carries no sign: the verb says the direction ("fell 0.815", never "fell
    +0.815"). A change that ``digits`` decimals would print as 0 keeps two significant digits
    (:func:`amount`: "fell 0.00031", never "fell 0.000").
    """
    if not value > 0 and not value < 0:  # zero (or NaN, as before: no direction to name)
        return "did not change"
    return f"{'rose' if value > 0 else 'fell'} {amount(abs(value), digits)}"
