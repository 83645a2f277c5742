"""A forecaster learnt from a prior over reward curves (in the manner of LC-PFN).

Adriaensen et al. (2023, LC-PFN) train a network on curves drawn from a prior over parametric
learning curves, so that its output approximates the posterior predictive of the rest of a
curve given its first part. This module does the same in a compact form: the prior is the
theory's (docs/theory.md sections 1, 3 and 6: a mean path that relaxes, saturates, or does not move,
plus the correlated process noise of the discrete map and white sampling noise), the network is
a small multilayer perceptron on a fixed summary of the training part, and its output is a set
of quantiles of the reward at a requested future step, trained with the pinball loss. The
median is the point forecast (it minimises the absolute error); the quantiles give the band.

Units: the network works in noise units, z = (r - loc) / scale, where loc is the mean of the
last 20 % of the training part and scale the white-noise estimate of the training part,
std(diff r) / sqrt(2) (the estimate of :func:`numerics.fit.estimate_noise`). A curve's
position is its step's fraction of the training span; the horizon is (t - t_cut) / span.

The prior (:func:`sample_prior_curves`) and the summary (:func:`curve_features`) are numpy;
the network's weights are trained once by ``python -m grpodyn.empirical.learned_prior_training``
(torch, an extra) and shipped as ``learned_prior_weights.npz``; this module evaluates them with
numpy only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy.special import ndtri

from grpodyn.ground import InputError, TooFewPoints, check_series

from .fit import estimate_noise
from .forecast_result import Forecast
from .forecasters import CurveForecaster

__all__ = ["QUANTILE_LEVELS", "TOP_LEVEL", "N_BINS", "HORIZON_CAP", "FAMILIES", "THEORY_SHARES",
           "PriorCurve", "sample_prior_curves", "curve_features", "LearnedPrior",
           "load_learned_prior", "learned_prior_forecast", "check_n_train",
           "LearnedPriorForecaster", "WEIGHTS_PATH"]

#: The quantile levels the network outputs (a band at level Q needs (1 -+ Q) / 2 inside them).
QUANTILE_LEVELS = (0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.975)
#: The widest central band the network gives (0.95).
TOP_LEVEL = QUANTILE_LEVELS[-1] - QUANTILE_LEVELS[0]
#: Bins that summarise the training part's shape.
N_BINS = 16
#: Smallest white-noise scale, relative to the training part's size, taken for noise.
_NOISE_FLOOR = 1e-6
#: Horizon (in training spans) beyond which the forecast is held: training reached about 5.
HORIZON_CAP = 5.0
#: Stand-in for an unknown reward bound's distance in noise units (before the asinh squash).
_FAR = 1e3
#: How far a known bound of the training's curves lies from their level, at most, in noise
#: units: a [0, 1] range over the least white noise drawn, 0.005 (:func:`sample_prior_curves`;
#: the noise the features estimate on a short or clipped part, or on the mean of Bernoulli
#: rewards near 0, can be smaller, so a few training bounds lie farther). A declared bound
#: farther away is read at this distance, and two as no bound: a looser range constrains
#: nothing the network learned to read, and beyond it the input leaves its training.
FARTHEST_BOUND = 1.0 / 0.005
#: The mean paths' families (docs/theory.md sections 3 and 6) and their shares in the theory's
# prior.
FAMILIES = ("exponential", "logistic", "power", "flat", "two_timescale", "collapse")
THEORY_SHARES = (0.32, 0.2, 0.18, 0.15, 0.1, 0.05)
#: The shipped weights.
WEIGHTS_PATH = Path(__file__).with_name("learned_prior_weights.npz")


def _squash(z: np.ndarray | float) -> np.ndarray:
    """Compress noise-unit values for the network's input: asinh(z / 3)."""
    return np.arcsinh(np.asarray(z, dtype=float) / 3.0)


@dataclass(frozen=True)
class PriorCurve:
    """One curve drawn from the prior: its reward per step and whether its range is known."""

    reward: np.ndarray
    bounds: tuple[float, float] | None
    family: str


def _mean_path(rng: np.random.Generator, x: np.ndarray, shares: tuple[float, ...]
               ) -> tuple[np.ndarray, str]:
    """Draw a mean path on positions x in [0, 1] (run fraction), in reward units of [0, 1]."""
    r0 = rng.uniform(0.0, 0.9)
    r_star = rng.uniform(r0, 1.0) if rng.random() < 0.9 else rng.uniform(0.0, r0)
    tau = np.exp(rng.uniform(np.log(0.02), np.log(5.0)))
    family = rng.choice(FAMILIES, p=shares)
    if family == "exponential":
        return r_star - (r_star - r0) * np.exp(-x / tau), family
    if family == "logistic":
        centre, width = rng.uniform(-0.2, 1.5), np.exp(rng.uniform(np.log(0.02), np.log(0.5)))
        s = 1 / (1 + np.exp(-(x - centre) / width))
        s0 = 1 / (1 + np.exp(centre / width))
        return r0 + (r_star - r0) * (s - s0) / (1 - s0), family
    if family == "power":
        return r_star - (r_star - r0) * (1 + x / tau) ** -rng.uniform(0.3, 1.0), family
    if family == "flat":
        return np.full(x.size, r0), family
    if family == "two_timescale":
        share = rng.uniform(0.2, 0.8)
        fast = np.exp(rng.uniform(np.log(0.01), np.log(0.2)))
        slow = np.exp(rng.uniform(np.log(0.3), np.log(10.0)))
        return r_star - (r_star - r0) * (share * np.exp(-x / fast)
                                         + (1 - share) * np.exp(-x / slow)), family
    rise = r_star - (r_star - r0) * np.exp(-x / tau)
    onset, floor = rng.uniform(0.3, 1.2), rng.uniform(0.0, r_star)
    fall = np.exp(rng.uniform(np.log(0.02), np.log(0.5)))
    after = np.clip(x - onset, 0.0, None)
    return rise - (rise - floor) * (1 - np.exp(-after / fall)), family


def sample_prior_curves(rng: np.random.Generator, count: int, *,
                        shares: tuple[float, ...] = THEORY_SHARES,
                        signal_to_noise: tuple[float, float] | None = None
                        ) -> list[PriorCurve]:
    """Draw ``count`` reward curves from the theory's prior (docs/theory.md sections 3 and 6).

    Each curve: 12-2000 steps (log-uniform); a mean path (exponential relaxation, logistic,
    power-law approach, flat, two timescales, or (5 %) a rise then a collapse; time constants
    0.02-5 run lengths, 90 % rising); around it an AR(1) deviation (the discrete overdamped
    map driven by sampling noise, correlation time 1 step to a fifth of the run) and white
    sampling noise (Gaussian, sd 0.005-0.2, or, for 30 % of the curves, the mean of m
    Bernoulli rewards, m = 8-256: an accuracy over a batch). 70 % are clipped to [0, 1] with
    the range known; the rest are unbounded, shifted and scaled at random, the range unknown.

    Parameters
    ----------
    rng : numpy.random.Generator
        The random source (the draw is reproducible from its seed).
    count : int
        Number of curves.
    shares : tuple of float
        Probabilities of the mean-path families ``FAMILIES`` (default the theory's,
        ``THEORY_SHARES``, those of the shipped weights).
    signal_to_noise : (mu, sd) or None
        A hyperprior on the ratio of the mean path's range to the white noise's sd: its
        logarithm normal with mean mu and sd sd (the noise sd then held to 0.002-0.5); paths
        whose range is below 0.01 keep the independent draw. None (default): the noise sd is
        drawn independently of the path, as for the shipped weights.

    Returns
    -------
    list of PriorCurve
    """
    from scipy.signal import lfilter  # here, not at the top: it costs 0.4 s of every CLI start

    out = []
    for _ in range(count):
        n = int(np.exp(rng.uniform(np.log(12), np.log(2000))))
        x = np.arange(n) / (n - 1)
        mean, family = _mean_path(rng, x, shares)
        white = np.exp(rng.uniform(np.log(0.005), np.log(0.2)))
        if signal_to_noise is not None and np.ptp(mean) > 0.01:
            white = float(np.clip(np.ptp(mean) / np.exp(rng.normal(*signal_to_noise)),
                                  0.002, 0.5))
        memory = np.exp(rng.uniform(0.0, np.log(max(2.0, n / 5))))
        rho = np.exp(-1 / memory)
        process_sd = white * np.exp(rng.uniform(np.log(0.05), np.log(2.0)))
        drive = process_sd * np.sqrt(1 - rho**2) * rng.standard_normal(n)
        path = mean + lfilter([1.0], [1.0, -rho], drive)
        bounded = rng.random() < 0.7
        if bounded and rng.random() < 0.3 / 0.7:
            batch = int(np.exp(rng.uniform(np.log(8), np.log(256))))
            reward = rng.binomial(batch, np.clip(path, 0.0, 1.0)) / batch
        else:
            reward = path + white * rng.standard_normal(n)
        if bounded:
            out.append(PriorCurve(np.clip(reward, 0.0, 1.0), (0.0, 1.0), str(family)))
        else:
            scale, shift = np.exp(rng.uniform(np.log(0.1), np.log(10.0))), rng.uniform(-2, 2)
            out.append(PriorCurve(shift + scale * reward, None, str(family)))
    return out


def _location_scale(y: np.ndarray) -> tuple[float, float]:
    """Loc = mean of the last 20 % of ``y``; scale = its white noise, std(diff y) / sqrt(2).

    The scale is :func:`numerics.fit.estimate_noise`'s sigma. A scale below ``_NOISE_FLOOR``
    times the data's own size (rounding, not noise: a straight ramp, a noiseless curve) is
    refused: the network's units would be meaningless.
    """
    loc = float(y[int(0.8 * y.size):].mean())
    scale = estimate_noise(y).sigma
    size = max(float(np.ptp(y)), abs(loc))
    if not scale > _NOISE_FLOOR * size:
        raise InputError("reward: the training part shows no step-to-step noise (std of its "
                         f"first differences {scale * np.sqrt(2):.3g}); the learned prior works "
                         "in noise units: use the ensemble forecaster")
    return loc, scale


def curve_features(t: np.ndarray, y: np.ndarray, future_steps: np.ndarray,
                   bounds: tuple[float, float] | None
                   ) -> tuple[np.ndarray, float, float]:
    """Summarise a training part for the network, one row per future step.

    Row: the training part's mean in ``N_BINS`` equal bins of its step span, the last value,
    the means of the last 3 and 10 points (all in noise units, asinh-squashed), log of the
    recent spread over the white noise, log10 of the number of points, the distances of loc to
    the reward's bounds (squashed, at most :data:`FARTHEST_BOUND`; a far stand-in when unknown
    or when both lie beyond it) and whether they are known,
    and the horizon (t - t_cut) / span, as itself and as its logarithm, both held at
    ``HORIZON_CAP`` spans (the farthest the training saw): beyond it the forecast is held.

    Parameters
    ----------
    t, y : numpy.ndarray
        Training steps (increasing) and rewards, at least 8 points.
    future_steps : numpy.ndarray
        Steps after the last training step to forecast.
    bounds : tuple of float or None
        The reward's range, when known.

    Returns
    -------
    features : numpy.ndarray, shape (len(future_steps), n_features)
    loc, scale : float
        The units: r = loc + scale z.
    """
    loc, scale = _location_scale(y)
    z = (y - loc) / scale
    span = float(t[-1] - t[0])
    if not span > 0:
        raise InputError("steps: the training part spans no steps")
    position = (t - t[0]) / span
    index = np.minimum((position * N_BINS).astype(int), N_BINS - 1)
    counts = np.bincount(index, minlength=N_BINS)
    sums = np.bincount(index, weights=z, minlength=N_BINS)
    centres = (np.arange(N_BINS) + 0.5) / N_BINS
    filled = counts > 0
    bins = np.interp(centres, centres[filled], sums[filled] / counts[filled])
    recent = z[int(0.8 * z.size):]
    reach, known = [_FAR, _FAR], 0.0
    if bounds is not None:
        near = [(bounds[1] - loc) / scale, (loc - bounds[0]) / scale]
        if min(near) <= FARTHEST_BOUND:  # else both lie beyond any bound the training saw
            reach, known = [min(r, FARTHEST_BOUND) for r in near], 1.0
    head = np.concatenate([
        _squash(bins), _squash([z[-1], z[-3:].mean(), z[-10:].mean()]),
        [np.log(max(float(np.std(recent)), 1e-3)), np.log10(y.size)],
        _squash(reach), [known]])
    horizon = (np.asarray(future_steps, dtype=float) - t[-1]) / span
    if np.any(horizon <= 0):
        raise InputError("future_steps: every forecast step must come after the training part")
    capped = np.minimum(horizon, HORIZON_CAP)
    tail = np.column_stack([capped, np.log(capped)])
    return np.column_stack([np.tile(head, (horizon.size, 1)), tail]), loc, scale


@dataclass(frozen=True)
class LearnedPrior:
    """The trained network: a ReLU perceptron whose last layer gives monotone quantiles.

    The output layer gives the median and, through a softplus, the positive gaps between
    neighbouring levels, so the quantiles are ordered by construction (q_j = q_median +- the
    cumulative sum of the gaps).
    """

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    feature_mean: np.ndarray
    feature_sd: np.ndarray
    info: dict

    def noise_unit_quantiles(self, features: np.ndarray) -> np.ndarray:
        """Return the network's quantiles, in noise units, for rows of :func:`curve_features`."""
        h = (features - self.feature_mean) / self.feature_sd
        for w, b in zip(self.weights[:-1], self.biases[:-1], strict=True):
            h = np.maximum(h @ w + b, 0.0)
        out = h @ self.weights[-1] + self.biases[-1]
        mid = QUANTILE_LEVELS.index(0.5)
        steps = np.logaddexp(0.0, out[:, 1:])  # softplus increments
        upper = out[:, :1] + np.cumsum(steps[:, mid:], axis=1)
        lower = out[:, :1] - np.cumsum(steps[:, :mid], axis=1)[:, ::-1]
        return np.column_stack([lower, out[:, :1], upper])

    def quantiles(self, t: np.ndarray, y: np.ndarray, future_steps: np.ndarray, *,
                  bounds: tuple[float, float] | None = None) -> np.ndarray:
        """Quantiles of the reward at ``future_steps`` (rows) for ``QUANTILE_LEVELS`` (columns).

        Parameters
        ----------
        t, y : numpy.ndarray
            The training part: steps (increasing) and rewards (reward units).
        future_steps : numpy.ndarray
            Steps after the training part.
        bounds : tuple of float or None
            The reward's range; the quantiles are clipped to it.

        Returns
        -------
        numpy.ndarray, shape (len(future_steps), len(QUANTILE_LEVELS)), reward units
        """
        t = check_series("steps", t)
        y = check_series("reward", y)
        future = check_series("future_steps", future_steps)
        if t.size != y.size:
            raise InputError(f"reward: the learned prior needs one step per reward, got "
                             f"{y.size} rewards and {t.size} steps")
        if t.size < 8:
            raise TooFewPoints(f"reward: the learned prior needs at least 8 training points, "
                               f"got {t.size}")
        if np.any(np.diff(t) <= 0):
            raise InputError("steps: the training steps must increase strictly")
        if bounds is not None:
            lo, hi = (float(b) for b in bounds)
            if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                raise InputError(f"bounds: need finite lo < hi, got {bounds}")
        features, loc, scale = curve_features(t, y, future, bounds)
        q = loc + scale * self.noise_unit_quantiles(features)
        return q if bounds is None else np.clip(q, *bounds)

    def band(self, t: np.ndarray, y: np.ndarray, future_steps: np.ndarray, *, level: float,
             bounds: tuple[float, float] | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Median and the central band at ``level`` (0 < level <= 0.95), reward units.

        Levels between the network's are interpolated linearly in the normal score
        Phi^-1(level).
        """
        if not 0 < level <= TOP_LEVEL:
            raise InputError(f"level: the learned prior gives bands up to {TOP_LEVEL:.2f}, got "
                             f"{level}")
        q = self.quantiles(t, y, future_steps, bounds=bounds)
        scores = ndtri(np.asarray(QUANTILE_LEVELS))

        def at(p: float) -> np.ndarray:
            return np.array([np.interp(ndtri(p), scores, row) for row in q])

        return q[:, QUANTILE_LEVELS.index(0.5)], at((1 - level) / 2), at((1 + level) / 2)


@lru_cache(maxsize=2)
def load_learned_prior(path: Path = WEIGHTS_PATH) -> LearnedPrior:
    """Load trained weights (``python -m grpodyn.empirical.learned_prior_training`` writes them)."""
    if not Path(path).exists():
        raise InputError(f"{path}: no learned-prior weights; make them with `python -m "
                         "grpodyn.empirical.learned_prior_training`")
    with np.load(path) as data:
        missing = {"feature_mean", "feature_sd", "info", "w_0", "b_0"} - set(data.files)
        if missing:
            raise InputError(f"{path}: not learned-prior weights (missing {sorted(missing)})")
        layers = sorted({k.split("_")[1] for k in data.files if k.startswith("w_")}, key=int)
        model = LearnedPrior(tuple(data[f"w_{i}"] for i in layers),
                             tuple(data[f"b_{i}"] for i in layers),
                             data["feature_mean"], data["feature_sd"],
                             json.loads(str(data["info"])))
    if (tuple(model.info.get("levels", ())) != QUANTILE_LEVELS
            or model.weights[-1].shape[1] != len(QUANTILE_LEVELS)):
        raise InputError(f"{path}: the weights were trained for other quantile levels than "
                         f"{QUANTILE_LEVELS}")
    return model


def check_n_train(n_train: object, size: int) -> None:
    """Refuse a training length that is not a whole number in [8, ``size``], naming it."""
    if isinstance(n_train, bool) or not isinstance(n_train, (int, np.integer)) or not (
            8 <= n_train <= size):
        raise InputError(f"n_train: need a whole number of training points in [8, {size}], "
                         f"got {n_train!r}")


def learned_prior_forecast(t: np.ndarray, y: np.ndarray, *, n_train: int,
                           future_steps: np.ndarray, level: float = 0.9,
                           bounds: tuple[float, float] | None = None,
                           path: Path = WEIGHTS_PATH) -> Forecast:
    """Forecast the steps after the first ``n_train`` points with the learned prior.

    A :class:`numerics.forecast_result.Forecast` (``weighting`` ``"learned_prior"``): the
    median is the point forecast and the mean (the network gives quantiles, not moments), the
    band the quantiles at (1 -+ level) / 2.

    Parameters
    ----------
    t, y : numpy.ndarray
        Steps and rewards of the run (only the first ``n_train`` are read).
    n_train : int
        Training points (at least 8).
    future_steps : numpy.ndarray
        Steps to forecast, after ``t[n_train - 1]``.
    level : float
        Central probability of the band, at most 0.95.
    bounds : tuple of float or None
        The reward's range.
    path : Path
        The weights file.

    Returns
    -------
    Forecast
        The network's median as ``mean``, ``median`` and ``point``; its quantiles as the band.
    """
    t = check_series("steps", t)
    y = check_series("reward", y)
    future = check_series("future_steps", future_steps)
    check_n_train(n_train, min(t.size, y.size))
    median, lower, upper = load_learned_prior(path).band(t[:n_train], y[:n_train], future,
                                                         level=level, bounds=bounds)
    warnings = ()
    reach = (future[-1] - t[n_train - 1]) / (t[n_train - 1] - t[0]) if future.size else 0.0
    if reach > HORIZON_CAP:
        warnings = (f"the forecast reaches {reach:.0f} training spans past the cut; the learned "
                    f"prior was trained up to {HORIZON_CAP:g} and holds its forecast beyond",)
    return Forecast({"learned_prior": 1.0}, "learned_prior", int(n_train), future, median, lower,
                    upper, level, bounds, warnings=warnings, median=median, point=median,
                    point_weights={"learned_prior": 1.0})


class LearnedPriorForecaster(CurveForecaster):
    """The network trained on the theory's prior (bands up to level 0.95)."""

    name = "learned_prior"
    function = staticmethod(learned_prior_forecast)
