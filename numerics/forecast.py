"""Forecast the rest of a reward curve from its first part (docs/theory.md section 6).

A stacked ensemble of curve models with the noise model of docs/theory.md section 6.

Each member is a mean curve m(t) (``level``: a random-walk local level, the k -> 0 limit of
the overdamped map; ``flat``; ``damped``, a damped trend (Gardner & McKenzie 1985) from the
line of the training part's recent half, its memory that half's span, capped so that it never
leaves the reward range: the early part of an overdamped relaxation whose time constant the
data do not determine yet; ``linear`` on request; and the saturating laws of
:mod:`numerics.fit`: ``exponential``, ``power``, ``inertial`` when the momentum is known,
``exponential_lr`` when the learning rate is logged). Around its mean the run deviates by
x + w: x a correlated process (the discrete overdamped map driven by sampling noise is an AR(1)
in the deviation, section 6) with per-step autocorrelation rho and stationary variance v, and w
white observation noise of variance s^2. (rho, v, s^2) are fitted per member by maximum
likelihood (Kalman filter) on the training residuals; the filtered deviation at the cut is
carried into the future with decay rho^h, so the band widens with the horizon h from
sqrt(s^2 + P) towards sqrt(s^2 + v), plus the parameter uncertainty of the mean (delta method).

Weights come from the training part only, by stacking (Yao et al. 2018) of the predictive
densities of rolling-origin forecasts inside the training part (fits on its first 50%, 65% and
80%, scored on the rest of it): the weights maximise sum_i log sum_k w_k p_k(y_i). With too few
points for that, BIC weights. The band is the members' Gaussian quantiles averaged with
those weights (Vincentization; ``band="mixture"``: the mixture's quantiles), its half-widths
about the averaged median scaled by the factor that would have made a band of the same width
cover the requested share of the rolling-origin forecasts' errors, lag by lag
(conformal-style, shrunk toward 1 by a pseudo-count), measured on the near and the far half
of the validated lags and extrapolated beyond them when it grows with the lag; the point
forecast combines the members with weights that minimise the absolute error of the same
rolling-origin forecasts.
Domhan et al. (2015) also combine parametric curves (by MCMC), LC-PFN (Adriaensen et al. 2023)
learns their posterior; here the weights are chosen for forecasts, the noise is the run's own.

The members live in :mod:`numerics.forecast_members`, their noise model in
:mod:`numerics.forecast_noise`, the result in :mod:`numerics.forecast_result`; this module
weighs them and forecasts, and its names cover all four. :class:`EnsembleForecaster` is the
ensemble's entry in :mod:`numerics.forecasters`: the calibrated learned prior's point and band
where it gives them, the stacked curve models' where it does not (:func:`with_prior`), the
plateau from the curve models, and the band widened by the regime of the run at the cut.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
from scipy.optimize import minimize
from scipy.special import ndtr, ndtri

from grpodyn.ground import InputError, check_fraction

from .fit import reward_unit
from .forecast_checks import check_forecast_inputs
from .forecast_members import (
    ALL_MEMBERS,
    MEMBERS,
    SATURATING,
    Member,
    fit_member,
    fit_members,
    member_from_fit,
)
from .forecast_noise import ResidualNoise, fit_random_walk, fit_residual_noise
from .forecast_result import EnsembleForecast, Forecast

__all__ = ["MEMBERS", "ALL_MEMBERS", "SATURATING", "ResidualNoise", "Member", "Forecast",
           "EnsembleForecast", "fit_residual_noise", "fit_random_walk", "fit_member",
           "member_from_fit", "forecast_curve", "member_weights", "Weights", "Validation",
           "plateau_summary", "EnsembleForecaster", "with_prior"]

_CUTS = (0.5, 0.65, 0.8)
#: Pseudo-points of the band's calibration (:func:`_band_scale`): the noise model's own band
#: counts as this many validation points inside it (set once, a priori, not tuned).
_BAND_PRIOR = 20


def _mixture_quantiles(weights: np.ndarray, means: np.ndarray, sds: np.ndarray,
                       q: float) -> np.ndarray:
    """Quantile q of a Gaussian mixture at every column (bisection, 60 halvings)."""
    lo = np.min(means - 10 * sds, axis=0)
    hi = np.max(means + 10 * sds, axis=0)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        cdf = weights @ ndtr((mid[None, :] - means) / sds)
        below = cdf < q
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return 0.5 * (lo + hi)


def _averaged_quantiles(weights: np.ndarray, means: np.ndarray, sds: np.ndarray,
                        q: float) -> np.ndarray:
    """Quantile q of the members' Gaussians averaged with ``weights`` (Vincentization).

    sum_k w_k (m_k + Phi^-1(q) s_k) at every column: the quantile of the combined forecast is
    the weighted mean of the members' quantiles (Vincent 1912; Lichtendahl, Grushka-Cockayne
    & Winkler 2013), not the quantile of their mixture. Unlike the mixture it does not add the
    spread between the members' means to the band's width; the band's calibration
    (:func:`_band_scale`) measures on the run's own validation errors how wide it must be.
    """
    return weights @ (means + float(ndtri(q)) * sds)


def _stacking_weights(log_density: np.ndarray) -> np.ndarray:
    """Weights on the simplex maximising sum_i log sum_k w_k p_k(y_i).

    The objective is concave in w; SLSQP on the simplex with the analytic gradient
    -sum_i p_k(y_i) / sum_j w_j p_j(y_i) (each point's densities divided by their largest,
    which moves the objective by a constant and keeps it from underflowing).
    """
    k, n = log_density.shape
    if k == 1:
        return np.ones(1)
    density = np.exp(log_density - log_density.max(axis=0))

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        mixture = np.maximum(w @ density, 1e-300)
        return -float(np.sum(np.log(mixture))) / n, -(density / mixture).sum(axis=1) / n

    sol = minimize(objective, np.full(k, 1.0 / k), jac=True, method="SLSQP",
                   bounds=[(0.0, 1.0)] * k,
                   constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1.0,
                                 "jac": lambda w: np.ones(k)}],
                   options={"ftol": 1e-12, "maxiter": 500})
    w = np.maximum(sol.x, 0.0)
    w[w < 1e-4] = 0.0
    return w / w.sum()


def _point_weights(forecasts: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Return the simplex weights minimising mean |y_i - sum_k w_k f_k(i)|.

    A linear programme (HiGHS), solved in its dual form: the primal, minimise
    sum_i (e+_i + e-_i) subject to sum_k w_k f_k(i) + e+_i - e-_i = y_i, sum_k w_k = 1,
    w, e+, e- >= 0, has k + 2n variables; its dual, maximise sum_i y_i u_i + v subject to
    sum_i f_k(i) u_i + v <= 0 for every member k and -1 <= u_i <= 1, has n + 1 variables and
    only k rows, and the weights are minus the marginals of those k rows (strong duality: the
    same optimum, exact, no iterative search on the simplex; about 8x faster at 1000
    validation points). ``forecasts``: the validation forecasts, members x points; a member
    with a missing forecast gets 0. Weights under 1e-4 are dropped. The programme is posed in
    the rewards' own frame (less their median, in :func:`~.fit.reward_unit`): the
    weights sum to 1, so the optimum is the same at any offset and unit of the reward, which
    keeps the solver within its tolerances for rewards of any size.
    """
    from scipy.optimize import linprog

    usable = np.all(np.isfinite(forecasts), axis=1)
    w = np.zeros(forecasts.shape[0])
    f = forecasts[usable]
    k, n = f.shape
    if k == 1:
        w[usable] = 1.0
        return w
    centre = float(np.median(observed))
    values = np.append(f, observed)
    unit = reward_unit(values) if np.ptp(values) > 0 else 1.0
    f, observed = (f - centre) / unit, (observed - centre) / unit
    sol = linprog(-np.append(observed, 1.0), A_ub=np.hstack([f, np.ones((k, 1))]),
                  b_ub=np.zeros(k), bounds=[(-1.0, 1.0)] * n + [(None, None)],
                  method="highs")
    if sol.status != 0:
        raise InputError(f"point weights: the linear programme failed ({sol.message})")
    w[usable] = np.maximum(-sol.ineqlin.marginals, 0.0)
    w[w < 1e-4] = 0.0
    return w / w.sum()


class Validation(NamedTuple):
    """One rolling-origin block: members' forecasts of the training points after an inner cut.

    Attributes
    ----------
    lags : numpy.ndarray
        Steps after the inner cut.
    mean, sd : numpy.ndarray
        Members' predictive means and standard deviations (members x points; NaN where a
        member could not be fitted), reward units.
    observed : numpy.ndarray
        The rewards observed there.
    """

    lags: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    observed: np.ndarray


class Weights(NamedTuple):
    """The members' weights and the rolling-origin forecasts they come from (training only)."""

    weights: np.ndarray
    point_weights: np.ndarray
    weighting: str
    notes: list[str]
    validation: tuple[Validation, ...] = ()


def _band_scale(members: list[Member], weights: np.ndarray, rows: list[int],
                validation: tuple[Validation, ...], bounds: tuple[float, float] | None,
                level: float, future: np.ndarray, band: str = "averaged") -> np.ndarray:
    """Return the factor on the band's half-widths at ``future``, horizon by horizon.

    Conformal-style calibration of the final band: each validation point's error from its block's
    centre (the members' medians averaged, :func:`_averaged_quantiles`, or the mixture's median for
    ``band="mixture"``), in units of the half-width (on its side) that the final band has at the
    same lag after the cut. The ``level`` quantile c of those ratios is the factor that would have
    made a band of the final width cover ``level`` of the validation errors; each c is shrunk toward
    1 (the noise model's own band) as if ``_BAND_PRIOR`` more validation points had said 1: c^(n /
    (n + _BAND_PRIOR)). The factor is measured in two halves of the validated lags (up to half the
    longest and beyond), c_near and c_far at their median lags h_near < h_far, and carried to every
    lag as c_near (h / h_near)^s for h >= h_near (c_near below), with s = log(c_far / c_near) /
    log(h_far / h_near) when positive, else 0: beyond the validated horizon a factor that grew with
    the lag keeps growing at the same rate, one that shrank is not extrapolated (a band is never
    narrowed where nothing was validated). Fewer than 3 ratios in a half (or repeated steps, h_near
    = 0): one factor from all of them, at every lag. Blocks where a weighted member could not be
    fitted are left out; none left: 1.

    Parameters
    ----------
    members : list of Member
        The final members with weight (fitted on the whole training part).
    weights : numpy.ndarray
        Their weights.
    rows : list of int
        Their rows in the validation blocks' arrays.
    validation : tuple of Validation
        The rolling-origin blocks of :func:`member_weights`.
    bounds : (lo, hi) or None
        The reward range.
    level : float
        Central probability of the band.
    future : numpy.ndarray
        The forecast's steps (after the cut).
    band : {"averaged", "mixture"}
        How the members make the band (:func:`forecast_curve`): its centre and half-widths
        here are those of the same construction.

    Returns
    -------
    numpy.ndarray
        The factor at every step of ``future`` (dimensionless, > 0).
    """
    t_cut = members[0].t_last
    lags = np.asarray(future, dtype=float) - t_cut
    levels = ((1 - level) / 2, 0.5, (1 + level) / 2)
    quantiles = _BANDS[band]
    ratios, at = [], []
    for block in validation:
        mean, sd = block.mean[rows], block.sd[rows]
        if not np.all(np.isfinite(mean)):
            continue
        centre = quantiles(weights, mean, sd, 0.5)
        final = [m.predictive(t_cut + block.lags, bounds) for m in members]
        lower, median, upper = (quantiles(
            weights, np.array([f[0] for f in final]),
            np.sqrt(np.maximum(np.array([f[1] for f in final]), 1e-300)), q) for q in levels)
        error = block.observed - centre
        ratios.append(np.where(error >= 0, error / np.maximum(upper - median, 1e-300),
                               -error / np.maximum(median - lower, 1e-300)))
        at.append(block.lags)
    if not ratios:
        return np.ones(lags.shape)
    r, h = np.concatenate(ratios), np.concatenate(at)

    def shrunk(x: np.ndarray) -> float:
        c = max(float(np.quantile(x, level)), 1e-3)
        return float(np.exp(np.log(c) * x.size / (x.size + _BAND_PRIOR)))

    far = h > h.max() / 2
    if far.sum() < 3 or (~far).sum() < 3 or not np.median(h[~far]) > 0:
        return np.full(lags.shape, shrunk(r))
    c_near, c_far = shrunk(r[~far]), shrunk(r[far])
    h_near, h_far = float(np.median(h[~far])), float(np.median(h[far]))
    slope = max(math.log(c_far / c_near) / math.log(h_far / h_near), 0.0)
    return c_near * (np.maximum(lags, h_near) / h_near) ** slope


#: How the members' Gaussians make the band (``forecast_curve(band=...)``): their quantiles
#: averaged with the weights (the default) or their mixture's (the benchmark's control).
_BANDS = {"averaged": _averaged_quantiles, "mixture": _mixture_quantiles}


def member_weights(fitted: dict[str, Member], t: np.ndarray, y: np.ndarray, *,
                   stack: bool = True, bounds: tuple[float, float] | None = None,
                   momentum: float | None = None,
                   learning_rate: tuple[np.ndarray, np.ndarray] | None = None) -> Weights:
    """Weights of the members ``fitted`` on (t, y), from (t, y) only.

    Stacking (Yao et al. 2018) of rolling-origin forecasts inside (t, y): fits on its first
    50%, 65% and 80%, scored on the rest of it by their predictive densities. With ``stack``
    False, or too few points for that, BIC weights (no refit, no residual-noise fit). The
    point forecast gets its own weights from the same validation forecasts: the mixture's
    mean is not the point that minimises the absolute error (the target of a point forecast);
    the convex combination of the members' forecasts that does so on the validation blocks is.
    The same validation forecasts calibrate the band's width (:func:`_band_scale`).

    Parameters
    ----------
    fitted : dict of str to Member
        Members fitted on (t, y).
    t, y : numpy.ndarray
        The training steps and rewards.
    stack : bool
        Stack (refits on three parts of (t, y)); False: BIC weights.
    bounds, momentum, learning_rate : optional
        As for :func:`forecast_curve` (the refits need them).

    Returns
    -------
    Weights
        ``weights`` (the predictive mixture, the band), ``point_weights`` (the convex
        combination of the members' validation forecasts with the least mean absolute error;
        BIC weights when not stacked), ``weighting`` (``"stacking"``, ``"bic"`` or
        ``"single"``), ``notes`` (too few points to stack) and ``validation`` (the
        rolling-origin forecasts, for the band's calibration: :func:`_band_scale`).
    """
    kwargs = {"momentum": momentum, "learning_rate": learning_rate}
    tt, yt = t, y
    names = list(fitted)
    if len(names) == 1:
        return Weights(np.ones(1), np.ones(1), "single", [])
    n_train = tt.size
    blocks, validation = [], []
    for cut in _CUTS if stack else ():
        m = int(round(cut * n_train))
        if m < 8 or n_train - m < 3 or np.ptp(yt[:m]) == 0:
            continue
        inner = fit_members(names, tt[:m], yt[:m], bounds=bounds, **kwargs)
        mean = np.full((len(names), n_train - m), np.nan)
        var = np.full((len(names), n_train - m), np.nan)
        for k, name in enumerate(names):
            if name in inner:
                mean[k], var[k] = inner[name].predictive(tt[m:], bounds)
        sd = np.sqrt(np.maximum(var, 1e-300))
        with np.errstate(invalid="ignore"):
            block = -0.5 * ((yt[m:] - mean) / sd) ** 2 - np.log(sd) - 0.5 * np.log(2 * np.pi)
        blocks.append(np.where(np.isfinite(block), block, -np.inf))
        validation.append(Validation(tt[m:] - tt[m - 1], mean, sd, yt[m:]))
    if blocks:
        w = _stacking_weights(np.maximum(np.concatenate(blocks, axis=1), -1e6))
        point_weights = _point_weights(np.concatenate([v.mean for v in validation], axis=1),
                                       np.concatenate([v.observed for v in validation]))
        return Weights(w, point_weights, "stacking", [], tuple(validation))
    notes = [] if not stack else [f"{n_train} training points: too few to stack, BIC weights"]
    bic = np.array([fitted[name].bic if fitted[name].n == n_train else np.inf
                    for name in names])
    w = np.exp(-(bic - bic.min()) / 2)
    return Weights(w / w.sum(), w / w.sum(), "bic", notes)


def forecast_curve(t: np.ndarray, y: np.ndarray, *, n_train: int, future_steps: np.ndarray,
                   members: tuple[str, ...] = MEMBERS, momentum: float | None = None,
                   learning_rate: tuple[np.ndarray, np.ndarray] | None = None,
                   bounds: tuple[float, float] | None = None, level: float = 0.9,
                   fitted: dict[str, Member] | None = None, stack: bool = True,
                   band: str = "averaged") -> EnsembleForecast:
    """Forecast the reward at ``future_steps`` from the first ``n_train`` points of (t, y).

    The stacked curve models alone; ``grpodyn forecast`` and ``analyse_run`` default to
    :class:`EnsembleForecaster`, the learned prior's point and band with this stack's plateau.

    Parameters
    ----------
    t, y : array_like
        Steps and rewards (only the first ``n_train`` are used).
    n_train : int
        Training points (at least 8).
    future_steps : array_like
        Steps to forecast, each after the last training step.
    members : sequence of str
        Members to use (of ``ALL_MEMBERS``, or ``sigmoid``; another name is refused);
        ``inertial`` needs ``momentum``, ``exponential_lr`` needs ``learning_rate``; members
        without their inputs are skipped.
    momentum : float, optional
        Optimiser momentum (Adam's beta1) in [0, 0.999]: fixes mass and damping of
        ``inertial``.
    learning_rate : (steps, lr), optional
        The learning rate schedule over the training part and the forecast horizon (a pair;
        one rate per training point gives no clock past the cut and is refused).
    bounds : (lo, hi), optional
        The reward range (lo < hi, holding a training reward): the plateau and the band are
        kept inside it.
    level : float
        Central probability of the band.
    fitted : dict of str to Member, optional
        Members already fitted on exactly the first ``n_train`` points (e.g. the run
        analysis's fits, :func:`member_from_fit`): reused, not refitted.
    stack : bool
        Weights by stacking (refits on three rolling origins inside the training part: the
        costly part); False: BIC weights of the members, no refit.
    band : {"averaged", "mixture"}
        How the members' Gaussians make the band before its calibration: their quantiles
        averaged with the weights (:func:`_averaged_quantiles`, the default) or the
        quantiles of their mixture (kept as the benchmark's control).

    Returns
    -------
    EnsembleForecast
        Members, weights, the mixture's mean, median and band at ``future_steps``.

    Raises
    ------
    InputError
        On an invalid input, named (:func:`numerics.forecast_checks.check_forecast_inputs`).
    """
    level = check_fraction("level", level)
    if band not in _BANDS:
        raise InputError(f"band: {band!r} is none of {', '.join(_BANDS)}")
    tt, yt, future, members, momentum, learning_rate, bounds = check_forecast_inputs(
        t, y, n_train=n_train, future_steps=future_steps, members=members, momentum=momentum,
        learning_rate=learning_rate, bounds=bounds)
    n_train = tt.size
    names = [m for m in members
             if not (m == "inertial" and momentum is None)
             and not (m == "exponential_lr" and learning_rate is None)]
    kwargs = {"momentum": momentum, "learning_rate": learning_rate}
    given = {} if fitted is None else {n: fitted[n] for n in names if n in fitted}
    fitted = {**given, **fit_members([n for n in names if n not in given], tt, yt, bounds=bounds,
                                  **kwargs)}
    fitted = {n: fitted[n] for n in names if n in fitted}
    if not fitted:
        raise InputError("no forecast model could be fitted to the training part")
    w, pw, weighting, warnings, validation = member_weights(fitted, tt, yt, stack=stack,
                                                            bounds=bounds, **kwargs)
    weights = dict(zip(fitted, map(float, w), strict=True))
    point_weights = dict(zip(fitted, map(float, pw), strict=True))
    used = [name for name in fitted if weights[name] > 0]
    means, sds = [], []
    for name in used:
        mean, var = fitted[name].predictive(future, bounds)
        means.append(mean)
        sds.append(np.sqrt(np.maximum(var, 1e-300)))
    means_a, sds_a = np.array(means), np.array(sds)
    wa = np.array([weights[name] for name in used])
    mean = wa @ means_a
    point = sum(point_weights[name] * fitted[name].predictive(future, bounds)[0]
                for name in fitted if point_weights[name] > 0)
    median = _mixture_quantiles(wa, means_a, sds_a, 0.5)
    centre, lower, upper = (_BANDS[band](wa, means_a, sds_a, q)
                            for q in (0.5, (1 - level) / 2, (1 + level) / 2))
    scale = _band_scale([fitted[name] for name in used], wa,
                        [list(fitted).index(name) for name in used], validation, bounds, level,
                        future, band)
    lower, upper = centre - scale * (centre - lower), centre + scale * (upper - centre)
    if bounds is not None:
        median, lower, upper = (np.clip(a, *bounds) for a in (median, lower, upper))
    return EnsembleForecast(weights, weighting, n_train, future, mean, lower, upper, level, bounds,
                            tuple(warnings), median, point, point_weights, members=fitted)


def plateau_summary(members: dict[str, Member], weights: dict[str, float], *,
                    level: float = 0.9, bounds: tuple[float, float] | None = None
                    ) -> dict[str, Any]:
    """Summarise the plateau r* with a status: what the data determine about it, and why.

    Statuses: ``determined`` (a saturating member carries most weight, has covered at least
    half of its gain within the data, the data do not move on beyond it (:func:`_runs_on`),
    its information matrix is regular and its interval leaves out the run's starting level:
    value and interval, the interval cut at the one-sided bound of where the run is at the
    cut, since a saturating curve approaches its plateau monotonically);
    ``at_bound`` (r* on the reward range's edge after at least half of the fitted gain: the
    data push it there); ``singular`` (no standard error from a singular information matrix);
    ``not_determined`` (no saturation seen, or too little of it, under half of the fitted gain
    made, a plateau the fit put on the range's edge included, or an interval that holds the
    starting level) with a one-sided
    bound where one exists: the plateau of a rising run lies at or above where the run is now,
    at ``level``; its ``bound`` says which side (``"lower"`` for a run that rose, ``"upper"``
    for one that fell, None without one), since a known reward range fills the other side.
    """
    saturating = {n: w for n, w in weights.items() if n in SATURATING and w > 0}
    z = float(ndtri(level))
    any_member = next(iter(members.values()))
    t_end = any_member.t_last
    # where the run is at the cut (the weighted mean curve and its uncertainty), and whether it
    # rose or fell since the start
    now = sum(weights[n] * members[n].mean_curve(np.array([t_end]))[0] for n in weights)
    start = sum(weights[n] * members[n].mean_curve(np.array([any_member.t0]))[0]
                for n in weights)
    rising = None if now == start else bool(now > start)

    def now_sd() -> float:
        """Return the sd of where the run is at the cut (its residual noise fitted on demand)."""
        return float(np.sqrt(sum(weights[n] * (members[n].noise.state_var
                                               + members[n].param_var(np.array([t_end]))[0])
                                 for n in weights if weights[n] > 0)))

    def one_sided(reason: str) -> dict[str, Any]:
        out: dict[str, Any] = {"value": None, "lower": None, "upper": None,
                               "status": "not_determined", "reason": reason, "bound": None}
        low, high = (-np.inf, np.inf) if bounds is None else bounds
        if rising is True:  # a bound inside the range (beyond its edge it says nothing more)
            out["lower"] = float(np.clip(now - z * now_sd(), low, high))
            out["reason"] += f"; plateau >= {out['lower']:.4g} at {level:.0%}"
            out["bound"] = "lower"
        elif rising is False:
            out["upper"] = float(np.clip(now + z * now_sd(), low, high))
            out["reason"] += f"; plateau <= {out['upper']:.4g} at {level:.0%}"
            out["bound"] = "upper"
        if bounds is not None:
            out["lower"] = low if out["lower"] is None else out["lower"]
            out["upper"] = high if out["upper"] is None else out["upper"]
        return out

    if sum(saturating.values()) < 0.5:
        return one_sided("the curve models favour a flat or linear trend: no saturation seen")
    name = max(saturating, key=saturating.get)
    fit = members[name].fit
    p = fit.params
    shape = fit.model.shape(np.array([fit.t[-1]]), *fit.theta[2:])[0]
    realised = 1.0 - float(shape)
    if realised < 0.5:  # a plateau the fit pushed to the range's edge included
        return one_sided(f"{name}: only {realised:.0%} of the fitted gain is made by the last "
                         "training step; the run has not begun to saturate")
    if "r_star" in fit.at_bounds:
        return {"value": float(p["r_star"]), "lower": None, "upper": None, "status": "at_bound",
                "reason": f"{name}: the plateau sits on the reward range's edge "
                          f"{p['r_star']:.4g}: the data push it there, they do not place it",
                "model": name}
    if [b for b in fit.at_bounds if b != "r_star"]:
        return one_sided(f"{name}: {', '.join(fit.at_bounds)} at the fit's bound")
    beyond = _runs_on(fit, rising)
    if beyond is not None:
        return {**one_sided(f"{name}: the run {'rises' if rising else 'falls'} on beyond the "
                            f"fitted curve (its last half's residuals slope t = {beyond:+.2f}): "
                            "the curve saturates before the data do"),
                "runs_on_t": beyond, "model": name}
    if fit.singular:
        return {"value": float(p["r_star"]), "lower": None, "upper": None, "status": "singular",
                "reason": f"{name}: singular information matrix, no standard error",
                "model": name}
    err = fit.stderr["r_star"]
    half = float(ndtri(0.5 + level / 2)) * err if np.isfinite(err) else np.inf
    lower, upper = p["r_star"] - half, p["r_star"] + half
    if bounds is not None:
        lower, upper = max(lower, bounds[0]), min(upper, bounds[1])
    if lower <= start <= upper:
        # the interval holds the run's own starting level: the data do not tell the plateau
        # from where the run began, so they do not place it
        return {"value": None, "lower": float(lower), "upper": float(upper),
                "status": "not_determined",
                "reason": f"{name}: {p['r_star']:.4g} +- {half:.2g} at {level:.0%}, an "
                          f"interval that holds the starting level {start:.4g}: the data do "
                          "not tell the plateau from where the run began", "model": name}
    # a saturating curve nears r* monotonically: r* lies beyond where the run is at the cut
    if rising is True:
        lower = max(lower, min(now - z * now_sd(), p["r_star"]))
    elif rising is False:
        upper = min(upper, max(now + z * now_sd(), p["r_star"]))
    return {"value": float(p["r_star"]), "lower": float(lower), "upper": float(upper),
            "status": "determined", "reason": f"{name}: {realised:.0%} of the gain made",
            "model": name}


def _runs_on(fit: Any, rising: bool | None) -> float | None:
    """Return the t of the residuals' last-half slope where the run moves on beyond ``fit``.

    The test of :func:`numerics.forecast_adaptive.regime` (``climbing``, not ``saturating``):
    the residuals about the fitted saturating curve still slope, beyond |t| = 2, in the
    direction the run moved; then the data have not saturated where the curve has. None where
    they do not (or the run neither rose nor fell).
    """
    from .forecast_adaptive import moves_on  # loaded on use

    if rising is None:
        return None
    return moves_on(fit.t, fit.y - fit.model(fit.t, fit.theta), 1.0 if rising else -1.0)


class EnsembleForecaster:
    """The calibrated learned prior's point and band, with the stacked curve models' plateau."""

    name = "ensemble"

    def forecast(self, steps: np.ndarray, reward: np.ndarray, *, n_train: int,
                 future_steps: np.ndarray, level: float = 0.9,
                 bounds: tuple[float, float] | None = None, momentum: float | None = None,
                 learning_rate: tuple[np.ndarray, np.ndarray] | None = None) -> EnsembleForecast:
        """Forecast ``future_steps`` from the first ``n_train`` points.

        :func:`forecast_curve` fits and stacks the curve models; the arguments are those of
        :meth:`numerics.forecasters.Forecaster.forecast`. The point and band are those of the
        calibrated learned prior
        (:func:`numerics.forecast_calibrated.calibrated_prior_forecast`), the curve models'
        where it gives none (:func:`with_prior`); the curve models give the plateau
        (:func:`plateau_summary` over ``members`` and ``weights``), which the prior, a
        distribution of paths, does not. On every source of real runs the prior's point was at
        or ahead of the two points' average (studies/forecast/README.md, "The calibrated prior
        alone against the default"). Saturation is trusted only where the data show the
        deceleration: where the training part still climbs at the cut without it
        (:func:`numerics.forecast_adaptive.regime`: ``climbing``), the band is widened to hold
        the curve models' band, the trend-aware forecaster's and the calibrated prior's (their
        union; the trends carry the climb on, the prior's curves include shapes no member has,
        such as a second rise; each band is calibrated on its own rolling-origin errors), and a
        warning says so. Where the run still moves but decelerates (``saturating``), a
        saturating path and a trend are both supported by the data: the band's bounds are the
        averages of the prior's band and the trend-aware one (the union over-covers runs that
        do saturate), and a warning says so (studies/forecast/README.md).
        """
        from .forecast_adaptive import adaptive_forecast, regime, trend_t  # loaded on use

        curves = forecast_curve(steps, reward, n_train=n_train, future_steps=future_steps,
                                members=MEMBERS, momentum=momentum, learning_rate=learning_rate,
                                bounds=bounds, level=level)
        result, prior = with_prior(curves, steps, reward, n_train=n_train, level=level,
                                   bounds=bounds)
        t, y = np.asarray(steps, float)[:n_train], np.asarray(reward, float)[:n_train]
        state = regime(t, y)
        if state == "quiet":
            return result
        t_slope = trend_t(t, y)
        slope = f"(its last half's slope t = {t_slope:+.3g})"
        trend = adaptive_forecast(steps, reward, n_train=n_train, future_steps=future_steps,
                                  level=level, bounds=bounds)
        if state == "saturating":
            return replace(result, lower=0.5 * (result.lower + trend.lower),
                           upper=0.5 * (result.upper + trend.upper),
                           warnings=(*result.warnings, (
                               f"the run still moves at the cut {slope}, decelerating: the "
                               "band averages the ensemble's band with that of "
                               "--forecaster adaptive (whose trends may carry the run on)")))
        bands = [curves, trend] + ([] if prior is None else [prior])
        names = "--forecaster adaptive" + ("" if prior is None else " and calibrated_prior")
        return replace(result, lower=np.minimum.reduce([b.lower for b in bands]),
                       upper=np.maximum.reduce([b.upper for b in bands]),
                       warnings=(*result.warnings, (
                           f"the run still {'rises' if t_slope > 0 else 'falls'} at the cut "
                           f"with no deceleration seen "
                           f"{slope}: the band holds the trend carried on as well (the union "
                           f"of the curve models' band with the bands of {names})")))


def with_prior(curves: EnsembleForecast, steps: np.ndarray, reward: np.ndarray, *,
               n_train: int, level: float, bounds: tuple[float, float] | None
               ) -> tuple[EnsembleForecast, Forecast | None]:
    """Give the curve models' forecast the calibrated learned prior's point and band.

    The members, their weights and so the plateau stay the curve models'; ``point``,
    ``lower`` and ``upper`` become the prior's and ``point_weights`` names the prior alone.
    Above the prior's widest band (:data:`numerics.learned_prior.TOP_LEVEL`) the point stays
    the prior's and the band is the union of its widest band and the curve models' band at the
    level, so that a higher level never narrows the band nor moves the point. Where the prior
    gives no forecast (a training part it refuses), the curve models' forecast is returned
    whole with a warning that says why.

    Returns
    -------
    (EnsembleForecast, Forecast or None)
        The forecast, and the calibrated prior's own (None where it gives none).
    """
    from .forecast_calibrated import calibrated_prior_forecast  # loaded on use
    from .learned_prior import TOP_LEVEL

    try:
        prior = calibrated_prior_forecast(steps, reward, n_train=n_train,
                                          future_steps=curves.steps,
                                          level=min(level, TOP_LEVEL), bounds=bounds)
    except InputError as err:
        reason = str(err).split(": use the ensemble forecaster")[0]  # the one in use
        return replace(curves, warnings=(*curves.warnings, (
            f"the calibrated learned prior gives no forecast ({reason}): the curve models give "
            "the point and band"))), None
    notes = tuple(f"calibrated prior (the point and band): {w}" for w in prior.warnings
                  if w not in curves.warnings)
    lower, upper = prior.lower, prior.upper
    if level > TOP_LEVEL:
        lower, upper = np.minimum(lower, curves.lower), np.maximum(upper, curves.upper)
        notes += (f"level {level:g} is above the learned prior's widest band ({TOP_LEVEL:g}): "
                  f"the band is the union of that band and the curve models' at {level:g}, so "
                  "that a higher level never narrows it",)
    return replace(curves, point=prior.point, lower=lower, upper=upper,
                   point_weights={"calibrated_prior": 1.0},
                   warnings=(*curves.warnings, *notes)), prior
