"""The forecasting field's baselines and the stratified matrix of ``benchmarks/forecast.py``.

Every forecast is scored on the rest of the run after a cut at a fraction F of its points
(F = 0.3 and 0.5): MAE over the held-out points in units of the noise floor sigma sqrt(2/pi)
(sigma from the first differences of the whole run, :func:`numerics.fit.estimate_noise`),
coverage of the 90% band and the interval score / sigma (Gneiting & Raftery 2007).

Strata. A forecast is "still moving" when the mean of the held-out part differs from the mean
of the last 20% of the training part by at least 2 noise sigmas, "quiet" otherwise. The
forecaster cannot know this: the stratum only sorts the score.

Baselines (each band: its own interval where the method has one, else the forecast +- z times
the standard deviation of its training residuals; for last value and recent mean, of the last
20% of the training part):

- ``last_value``: persistence;
- ``mean_last20``: the mean of the last 20% of the training part;
- ``linear``: the least-squares line of the training part;
- ``damped_ets``: additive damped-trend exponential smoothing (Gardner & McKenzie 1985),
  statsmodels' ``ETSModel`` with its prediction interval;
- ``theta``: the Theta method (Assimakopoulos & Nikolopoulos 2000), statsmodels'
  ``ThetaModel`` (no seasonality) with its prediction interval;
- ``scalerl_sigmoid``: R(t) = R0 + (A - R0) / (1 + (t_mid / t)^B) (Khatri et al. 2025, the
  ScaleRL compute-reward law, steps for compute), by ``scipy.optimize.curve_fit``;
- ``oracle_median``: a constant at the held-out part's own median (not a forecast; no band).

statsmodels is the ``baselines`` extra: without it the two rows are marked unavailable.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy.optimize import curve_fit
from scipy.stats import norm

LEVEL = 0.9
Z = float(norm.ppf(0.5 + LEVEL / 2))
STRATA = ("all", "moving", "quiet")
Band = tuple[np.ndarray, np.ndarray, np.ndarray]


def stratum(train: np.ndarray, held: np.ndarray, sigma: float) -> str:
    """Return ``moving`` when mean(held) - mean(last 20% of train) >= 2 sigma, else ``quiet``."""
    recent = train[int(0.8 * train.size):]
    return "moving" if abs(float(held.mean()) - float(recent.mean())) >= 2 * sigma else "quiet"


def _symmetric(mean: np.ndarray, sd: float) -> Band:
    return mean, mean - Z * sd, mean + Z * sd


def last_value(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> Band:
    """Persistence: the last training value, band from the last 20%'s spread."""
    return _symmetric(np.full(future.size, y[-1]), float(np.std(y[int(0.8 * y.size):])))


def mean_last20(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> Band:
    """The mean of the last 20% of the training part, band from their spread."""
    tail = y[int(0.8 * y.size):]
    return _symmetric(np.full(future.size, tail.mean()), float(np.std(tail)))


def linear(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> Band:
    """The least-squares line of the training part, band from its residuals."""
    coef = np.polyfit(t - t[0], y, 1)
    resid = y - np.polyval(coef, t - t[0])
    return _symmetric(np.polyval(coef, future - t[0]), float(np.std(resid)))


def damped_ets(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> Band:
    """Additive damped-trend exponential smoothing (statsmodels ETSModel), h = 1..len(future)."""
    import pandas as pd
    from statsmodels.tsa.exponential_smoothing.ets import ETSModel

    with warnings.catch_warnings():  # a Series: statsmodels' interval needs an index
        warnings.simplefilter("ignore")
        fit = ETSModel(pd.Series(y), error="add", trend="add", damped_trend=True).fit(disp=False)
        frame = fit.get_prediction(start=y.size, end=y.size + future.size - 1).summary_frame(
            alpha=1 - LEVEL)
    return (np.asarray(frame["mean"]), np.asarray(frame["pi_lower"]),
            np.asarray(frame["pi_upper"]))


def theta(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> Band:
    """The Theta method (statsmodels ThetaModel, no seasonality), h = 1..len(future)."""
    from statsmodels.tsa.forecasting.theta import ThetaModel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = ThetaModel(y, period=1, deseasonalize=False).fit()
        mean = np.asarray(fit.forecast(future.size))
        interval = np.asarray(fit.prediction_intervals(future.size, alpha=1 - LEVEL))
    return mean, interval[:, 0], interval[:, 1]


def scalerl_sigmoid(t: np.ndarray, y: np.ndarray, future: np.ndarray) -> Band:
    """ScaleRL's sigmoid R0 + (A - R0) / (1 + (t_mid / t)^B) in the step count t (from 1)."""
    x, xf = t - t[0] + 1.0, future - t[0] + 1.0

    def f(s: np.ndarray, a: float, r0: float, log_mid: float, b: float) -> np.ndarray:
        return r0 + (a - r0) / (1.0 + np.exp(b * (log_mid - np.log(s))))

    rise = y[-max(3, y.size // 5):].mean() - y[: max(3, y.size // 5)].mean()
    p0 = (y.max() if rise >= 0 else y.min(), y[0], np.log(x[-1] / 2), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        popt, _ = curve_fit(f, x, y, p0=p0, maxfev=5000,
                            bounds=([-np.inf, -np.inf, -5.0, 0.05], [np.inf, np.inf, 25.0, 20.0]))
    return _symmetric(f(xf, *popt), float(np.std(y - f(x, *popt))))


#: The baselines, in the matrix's order.
BASELINES: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], Band]] = {
    "last_value": last_value, "mean_last20": mean_last20, "linear": linear,
    "damped_ets": damped_ets, "theta": theta, "scalerl_sigmoid": scalerl_sigmoid}
LABELS = {"adaptive": "grpodyn adaptive (trend-aware stacking)",
          "ensemble": "grpodyn ensemble", "learned_prior": "grpodyn learned prior",
          "calibrated_prior": "grpodyn calibrated prior (conformal band)",
          "last_value": "last value", "mean_last20": "mean of the last 20%",
          "linear": "linear trend of the training part",
          "damped_ets": "damped-trend exp. smoothing (statsmodels)",
          "theta": "Theta method (statsmodels)", "scalerl_sigmoid": "ScaleRL sigmoid (scipy)",
          "oracle_median": "constant at the future median (unreachable)"}


def scores(held: np.ndarray, band: Band, sigma: float) -> dict[str, float]:
    """MAE / noise floor, band coverage (share and count) and interval score / sigma."""
    mean, lower, upper = band
    alpha = 1 - LEVEL
    penalty = (2 / alpha) * (np.maximum(lower - held, 0) + np.maximum(held - upper, 0))
    inside = (held >= lower) & (held <= upper)
    return {"mae_floor": float(np.mean(np.abs(held - mean)) / (sigma * np.sqrt(2 / np.pi))),
            "coverage": float(np.mean(inside)), "inside": int(inside.sum()), "n": int(held.size),
            "is_sigma": float(np.mean(upper - lower + penalty) / sigma)}


def baseline_scores(t: np.ndarray, y: np.ndarray, n_train: int, sigma: float
                    ) -> dict[str, dict[str, float] | None]:
    """Score every baseline and the oracle on (t, y) cut after ``n_train`` points.

    A baseline that fails (no fit, statsmodels missing) scores None.
    """
    tt, yt, future, held = t[:n_train], y[:n_train], t[n_train:], y[n_train:]
    out: dict[str, dict[str, float] | None] = {}
    for name, method in BASELINES.items():
        try:
            band = method(tt, yt, future)
        except (ImportError, RuntimeError, ValueError, TypeError, np.linalg.LinAlgError):
            out[name] = None
            continue
        out[name] = scores(held, band, sigma) if all(np.all(np.isfinite(b)) for b in band) \
            else None
    level = np.full(held.size, np.median(held))
    out["oracle_median"] = scores(held, (level, level, level), sigma)
    return out


def summarise(results: list[dict]) -> dict[str, dict[str, dict]]:
    """Per stratum and method: forecasts, failures, median MAE / floor, coverage, interval score.

    ``results``: one dict per forecast with ``stratum`` and method -> scores (or None).
    """
    methods = list(dict.fromkeys(k for r in results for k in r if k != "stratum"))
    table: dict[str, dict[str, dict]] = {}
    for part in STRATA:
        chosen = [r for r in results if part == "all" or r["stratum"] == part]
        table[part] = {}
        for method in methods:
            rows = [r[method] for r in chosen if r.get(method) is not None]
            if not rows:
                continue
            table[part][method] = {
                "forecasts": len(rows), "failed": len(chosen) - len(rows),
                "median_mae_floor": float(np.median([r["mae_floor"] for r in rows])),
                "pooled_coverage": float(sum(r["inside"] for r in rows)
                                         / sum(r["n"] for r in rows)),
                "share_runs_cov_ge_0.6": float(np.mean([r["coverage"] >= 0.6 for r in rows])),
                "median_is_sigma": float(np.median([r["is_sigma"] for r in rows]))}
    return table


def print_matrix(title: str, table: dict[str, dict[str, dict]]) -> None:
    """Print the matrix: median MAE / floor per stratum, then the bands' scores per stratum."""
    counts = {part: max((s["forecasts"] + s["failed"] for s in table[part].values()), default=0)
              for part in STRATA}
    print(f"\n### {title}\n")
    print("| forecaster | " + " | ".join(f"{p} ({counts[p]})" for p in STRATA)
          + " | pooled 90% coverage (all / moving / quiet) | runs with coverage >= 0.6 | "
          "median interval score / sigma |")
    print("|---|---|---|---|---|---|---|")
    for method in table["all"]:
        cells = []
        for part in STRATA:
            s = table[part].get(method)
            fail = f" ({s['failed']} failed)" if s and s["failed"] else ""
            cells.append("-" if s is None else f"{s['median_mae_floor']:.2f}{fail}")
        if method.startswith("oracle"):
            band = ["-", "-", "-"]
        else:
            band = [" / ".join("-" if table[p].get(method) is None else
                               f"{table[p][method][key]:.2f}" for p in STRATA)
                    for key in ("pooled_coverage", "share_runs_cov_ge_0.6", "median_is_sigma")]
        print(f"| {LABELS.get(method, method)} | " + " | ".join(cells + band) + " |")
