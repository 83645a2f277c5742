"""The slow drift of the reward: the finite-step drift at zero fluctuation, by errors in variables.

The state route (``studies/deepnet/findings.md`` 10e) measured the finite-step drift D_lr at
single states of a copy run and found it dominated by the state's own fluctuation relaxing:
the 20-step change regresses on the state's deviation from the copy run's smooth trend with
slope -0.5 to -1.0. docs/theory.md section 1's drift F(r) is the expectation of the step at a given
slow level, the fluctuation xi_n averaged out (section 6: the fluctuation is a zero-mean process
about the mean path), not the drift of one fluctuating state. Here the two are separated at the
segments already measured:

- the copy states' rewards r_i (copy step n_i) are split into a smooth trend T_i (a quadratic in
  the copy step, :func:`.relaxation.trend_and_deviation`) and a deviation e_i = r_i - T_i;
- each state's drift per step is regressed, weighted by its standard error, on
  [1, T_i, T_i^2, e_i]: D_i = a + b T_i + c T_i^2 + g e_i;
- the slow drift is the part at zero deviation, D_slow(r) = a + b r + c r^2 (the intercept of the
  deviation regression at each trend level); g x segment is the share of a deviation undone within
  one segment (the fast component). Covariance scaled by the reduced chi-square when above 1.

The prediction rules are those of :func:`.relaxation.predict_relaxation` (the mean-field curve
r_{n+1} = r_n + D_slow(r_n) from the measured start reward through the fixed observation rule
:func:`.sweeps.fit_relaxation`; 1 / kappa at the stable root), with D_slow in place of the
quadratic through the states, and setting ``runs: "relaxation_slow"``. Added: the predicted path
(the curve's mean per 60-step window), judged against the runs' seed-mean windows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SLOW_SEGMENT_SEED", "PATH_WINDOW", "PATH_TOLERANCE", "fit_slow_drift",
           "path_windows", "path_within"]

SLOW_SEGMENT_SEED = 30_000  # segment seeds of the slow route: 31000-41104 (state route: 1700-12104)
PATH_WINDOW = 60  # steps per window of the predicted and observed paths
PATH_TOLERANCE = 0.25  # a window's predicted mean within 25 % of the observed one (as tau)


def fit_slow_drift(points: list[dict[str, Any]]) -> dict[str, Any]:
    """Slow drift a + b r + c r^2 from the states of one copy run at one lr (module docstring).

    Parameters
    ----------
    points : list of dict
        :func:`.relaxation.segment_drift` records with ``copy_step``: ``reward`` (state reward),
        ``drift`` and ``drift_se`` (per step), ``segment`` (steps).

    Returns
    -------
    dict
        ``coef`` (a, b, c) of the slow drift per step and their covariance ``cov`` (scaled by
        the reduced chi-square when above 1), ``fast_slope`` (g x segment: the share of a
        deviation undone within a segment) with its s.e., ``reduced_chi2``, ``r_range`` (the
        trend levels spanned) and ``deviation_sd``.
    """
    if len(points) < 6:
        raise ValueError(f"the slow drift needs at least 6 states, got {len(points)}")
    from .relaxation import trend_and_deviation, weighted_fit

    segment = float(points[0]["segment"])
    trend, deviation = trend_and_deviation(points)
    coef, cov, chi2 = weighted_fit(
        np.vstack([np.ones_like(trend), trend, trend * trend, deviation]).T,
        np.array([p["drift"] for p in points]), np.array([p["drift_se"] for p in points]))
    return {"coef": coef[:3].tolist(), "cov": cov[:3, :3].tolist(),
            "fast_slope": float(coef[3] * segment),
            "fast_slope_se": float(np.sqrt(cov[3, 3]) * segment),
            "reduced_chi2": chi2, "r_range": [float(trend.min()), float(trend.max())],
            "deviation_sd": float(deviation.std())}


def path_windows(curve: np.ndarray, width: int = PATH_WINDOW) -> list[float]:
    """Mean of ``curve`` over consecutive windows of ``width`` steps (NaN ignored)."""
    return [float(np.nanmean(curve[s:s + width]))
            for s in range(0, curve.size - width + 1, width)]


def path_within(predicted: list[float] | None, observed: list[float]) -> dict[str, Any]:
    """Judge a predicted path against the observed one, window by window.

    Met when every window's predicted mean reward lies within ``PATH_TOLERANCE`` of the observed
    seed-mean window (relative to the observed). Returns ``path_within`` (None without a
    predicted path) and ``path_windows_within`` (how many windows are).
    """
    if predicted is None or len(predicted) != len(observed):
        return {"path_within": None, "path_windows_within": None}
    ok = [abs(p - o) <= PATH_TOLERANCE * abs(o) for p, o in zip(predicted, observed, strict=True)]
    return {"path_within": bool(all(ok)), "path_windows_within": int(sum(ok))}
