"""The forecaster: calibrated bands on runs with known truth, the noise model, the weights."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.optimize import linprog, minimize
from scipy.sparse import csr_array, eye_array, hstack, vstack
from scipy.special import logsumexp

from grpodyn.ground import InputError
from grpodyn.numerics.forecast import (
    _BAND_PRIOR,
    Validation,
    _averaged_quantiles,
    _band_scale,
    _mixture_quantiles,
    _point_weights,
    _stacking_weights,
    fit_member,
    fit_residual_noise,
    forecast_curve,
    plateau_summary,
)
from grpodyn.numerics.forecast_noise import _kalman

N, CUT = 200, 100


def _saturating(seed: int, *, tau: float = 60.0, rho: float = 0.9, process: float = 0.01,
                white: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    """0.8 - 0.6 exp(-t/tau) plus an AR(1) process and white noise (docs/theory.md section 6)."""
    rng = np.random.default_rng(seed)
    t = np.arange(N, dtype=float)
    x = np.zeros(N)
    for i in range(1, N):
        x[i] = rho * x[i - 1] + process * rng.standard_normal()
    return t, 0.8 - 0.6 * np.exp(-t / tau) + x + white * rng.standard_normal(N)


def _pooled_coverage(seeds: range, **kwargs: Any) -> float:
    inside = total = 0
    for seed in seeds:
        t, y = _saturating(seed)
        fc = forecast_curve(t, y, n_train=CUT, future_steps=t[CUT:], bounds=(0.0, 1.0),
                            level=0.9, **kwargs)
        inside += np.sum((y[CUT:] >= fc.lower) & (y[CUT:] <= fc.upper))
        total += N - CUT
    return inside / total


def test_band_of_the_true_model_covers_90_percent_over_200_seeds() -> None:
    """Check the 90% band of the true model covers 85-95% of held-out points over 200 seeds."""
    coverage = _pooled_coverage(range(200), members=("exponential",))
    assert 0.85 <= coverage <= 0.95, coverage


@pytest.mark.slow
def test_band_of_the_ensemble_covers_90_percent_over_200_seeds() -> None:
    """Check the ensemble's 90% band covers 85-95% of held-out points over 200 seeds."""
    coverage = _pooled_coverage(range(200))
    assert 0.85 <= coverage <= 0.95, coverage


def test_noise_model_recovers_process_and_white_parts() -> None:
    """Check the Kalman likelihood recovers rho, process and white variances."""
    rng = np.random.default_rng(0)
    n, rho, q, s = 3000, 0.95, 0.02, 0.05
    x = np.zeros(n)
    for i in range(1, n):
        x[i] = rho * x[i - 1] + q * rng.standard_normal()
    noise = fit_residual_noise(np.arange(n, dtype=float), x + s * rng.standard_normal(n))
    assert noise.rho == pytest.approx(rho, abs=0.02)
    assert noise.process_var == pytest.approx(q**2 / (1 - rho**2), rel=0.3)
    assert noise.white_var == pytest.approx(s**2, rel=0.3)
    # the band widens with the horizon, from the filtered state towards the stationary one
    _, var = noise.predict(np.array([1.0, 10.0, 1000.0]))
    assert var[0] < var[1] < var[2]
    assert var[2] == pytest.approx(noise.process_var + noise.white_var, rel=1e-6)


def test_flat_run_is_forecast_flat_and_plateau_not_determined() -> None:
    """Check a flat run is forecast flat, with no invented plateau."""
    rng = np.random.default_rng(5)
    t = np.arange(150, dtype=float)
    y = 0.4 + 0.05 * rng.standard_normal(t.size)
    fc = forecast_curve(t, y, n_train=100, future_steps=t[100:], bounds=(0.0, 1.0))
    assert abs(np.mean(fc.mean) - 0.4) < 0.03
    assert np.ptp(fc.mean) < 0.05
    plateau = plateau_summary(fc.members, fc.weights, bounds=(0.0, 1.0))
    assert plateau["status"] != "determined" or abs(plateau["value"] - 0.4) < 0.05


def test_non_saturating_run_gets_a_one_sided_bound_not_a_number() -> None:
    """Check a ramp far from its range gets a one-sided plateau bound, not a number."""
    rng = np.random.default_rng(2)
    t = np.arange(120, dtype=float)
    y = 0.1 + 0.003 * t + 0.02 * rng.standard_normal(t.size)  # a ramp, far from 1
    fc = forecast_curve(t, y, n_train=120, future_steps=[130.0], bounds=(0.0, 1.0))
    plateau = plateau_summary(fc.members, fc.weights, bounds=(0.0, 1.0))
    assert plateau["status"] in ("not_determined", "at_bound")
    if plateau["status"] == "not_determined":
        assert plateau["value"] is None and plateau["lower"] > 0.3
        assert "plateau >=" in plateau["reason"]
    assert np.all((fc.lower >= 0) & (fc.upper <= 1))


def test_a_one_sided_bound_lies_inside_the_reward_range(capsys) -> None:
    """The README's e8 run, collapsed onto the floor of [0, 1], read "plateau <= -0.001121":
    the bound the reason gives is the one the summary holds, inside the range."""
    import json
    from pathlib import Path

    from grpodyn.cli import main

    log = Path(__file__).parent / "data" / "real_logs" / (
        "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_"
        "sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")
    assert main(["forecast", str(log), "--horizon", "300", "--json"]) == 0
    plateau = json.loads(capsys.readouterr().out)["plateau"]
    assert plateau["status"] == "not_determined" and "plateau <=" in plateau["reason"]
    assert 0.0 <= plateau["lower"] <= plateau["upper"] <= 1.0
    assert f"plateau <= {plateau['upper']:.4g} " in plateau["reason"]


def test_saturated_run_has_a_determined_plateau_near_the_truth() -> None:
    """Check a saturated run's plateau is determined and its interval holds the truth."""
    t, y = _saturating(7, tau=20.0)
    fc = forecast_curve(t, y, n_train=N, future_steps=[N + 10.0], bounds=(0.0, 1.0))
    plateau = plateau_summary(fc.members, fc.weights, bounds=(0.0, 1.0))
    assert plateau["status"] == "determined", plateau
    assert plateau["lower"] <= 0.8 <= plateau["upper"]
    assert abs(sum(fc.weights.values()) - 1) < 1e-9


@pytest.mark.parametrize("kwargs,needle", [
    ({"n_train": 5}, "at least 8"),
    ({"n_train": 50, "level": 1.0}, "level"),
    ({"n_train": 50, "band": "median"}, "band"),
])
def test_bad_requests_are_refused(kwargs: dict, needle: str) -> None:
    """Check too few training points, a level outside (0, 1), an unknown band are refused."""
    t, y = _saturating(0)
    with pytest.raises(InputError, match=needle):
        forecast_curve(t, y, future_steps=t[60:], **kwargs)


def test_constant_and_nan_inputs_are_refused() -> None:
    """Check constant and NaN rewards and repeated steps are refused with a clear error."""
    t = np.arange(50, dtype=float)
    with pytest.raises(InputError, match="constant"):
        forecast_curve(t, np.full(50, 0.3), n_train=30, future_steps=t[30:])
    y = np.linspace(0, 1, 50)
    y[3] = np.nan
    with pytest.raises(InputError, match="finite"):
        forecast_curve(t, y, n_train=30, future_steps=t[30:])
    steps = np.repeat(np.arange(25, dtype=float), 2)
    with pytest.raises(InputError, match="strictly increasing"):
        forecast_curve(steps, np.linspace(0, 1, 50), n_train=30, future_steps=steps[30:])


def test_point_weights_minimise_the_validation_absolute_error() -> None:
    """Check the point weights minimise the validation absolute error on the simplex."""
    rng = np.random.default_rng(8)
    truth = np.linspace(0.2, 0.6, 40)
    observed = truth + 0.01 * rng.standard_normal(40)
    forecasts = np.array([truth, truth + 0.3, np.full(40, np.nan), truth - 0.3])
    w = _point_weights(forecasts, observed)
    assert w[2] == 0 and abs(w.sum() - 1) < 1e-9  # a member without a forecast gets nothing
    assert w[0] > 0.9 or abs(w[1] - w[3]) < 0.1  # the truth, or the two that cancel out
    combined = w[[0, 1, 3]] @ forecasts[[0, 1, 3]]
    assert np.mean(np.abs(observed - combined)) < np.mean(np.abs(observed - truth)) + 0.005


def test_point_forecast_of_rising_runs_beats_the_recent_mean() -> None:
    """Check the point forecast of runs still rising at the cut beats the recent mean.

    The point forecast follows the curve; the mean of the last 20 training points cannot (mean
    error against the true curve over 6 seeds).
    """
    point, recent = [], []
    for seed in range(11, 17):
        t, y = _saturating(seed)
        fc = forecast_curve(t, y, n_train=CUT, future_steps=t[CUT:], bounds=(0.0, 1.0))
        truth = 0.8 - 0.6 * np.exp(-t[CUT:] / 60.0)
        assert abs(sum(fc.point_weights.values()) - 1) < 1e-9
        assert fc.score(y[CUT:])["mae"] == pytest.approx(np.mean(np.abs(y[CUT:] - fc.point)))
        point.append(np.mean(np.abs(fc.point - truth)))
        recent.append(np.mean(np.abs(y[CUT - 20:CUT].mean() - truth)))
    assert np.mean(point) < 0.6 * np.mean(recent), (point, recent)


def _weight_problem(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Members' validation forecasts and log densities around a noisy truth (random sizes)."""
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(2, 7)), int(rng.integers(30, 400))
    observed = rng.uniform(0.2, 0.8) + 0.05 * rng.standard_normal(n)
    forecasts = (observed[None] + 0.05 * rng.standard_normal((k, 1))
                 + 0.03 * rng.standard_normal((k, n)))
    sd = rng.uniform(0.02, 0.1, (k, 1))
    log_density = -0.5 * ((observed - forecasts) / sd) ** 2 - np.log(sd)
    return forecasts, observed, log_density


@pytest.mark.parametrize("seed", range(12))
def test_stacking_weights_reach_the_maximum_of_the_log_score(seed: int) -> None:
    """Check the SLSQP weights are the stacking optimum: optimality conditions and a reference.

    The log score S(w) = sum_i log sum_k w_k p_k(y_i) is concave on the simplex; at its
    maximum dS/dw_k = n for every member with weight and <= n for the others (Karush-Kuhn-
    Tucker), to 1e-3 relative. And no lower than a slow generic search (Nelder-Mead on softmax
    parameters, the previous solver's parameterisation) finds, to 1e-6 per point.
    """
    _, _, log_density = _weight_problem(seed)
    k, n = log_density.shape

    def score(w: np.ndarray) -> float:
        return float(np.sum(logsumexp(np.log(np.maximum(w, 1e-300))[:, None] + log_density,
                                      axis=0)))

    w = _stacking_weights(log_density)
    assert abs(w.sum() - 1) < 1e-12 and np.all(w >= 0)
    density = np.exp(log_density - log_density.max(axis=0))
    gradient = (density / (w @ density)).sum(axis=1) / n
    assert np.all(np.abs(gradient[w > 1e-3] - 1) < 1e-3), (w, gradient)
    assert np.all(gradient[w == 0] < 1 + 1e-3), (w, gradient)
    ref = minimize(lambda z: -score(np.exp(z - logsumexp(z))), np.zeros(k),
                   method="Nelder-Mead",
                   options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 5000, "maxfev": 5000})
    assert score(w) >= score(np.exp(ref.x - logsumexp(ref.x))) - 1e-6 * n


@pytest.mark.parametrize("seed", range(12))
def test_point_weights_are_the_exact_least_absolute_error_optimum(seed: int) -> None:
    """Check the linear programme's weights are at least as good as any simplex search.

    Against Nelder-Mead on softmax parameters (the previous solver) and every vertex (a
    single member): the programme's mean absolute error is never higher, to 1e-9.
    """
    forecasts, observed, _ = _weight_problem(seed)
    k = forecasts.shape[0]

    def mae(w: np.ndarray) -> float:
        return float(np.mean(np.abs(observed - w @ forecasts)))

    ref = minimize(lambda z: mae(np.exp(z - logsumexp(z))), np.zeros(k), method="Nelder-Mead")
    w = _point_weights(forecasts, observed)
    assert abs(w.sum() - 1) < 1e-12 and np.all(w >= 0)
    assert mae(w) <= mae(np.exp(ref.x - logsumexp(ref.x))) + 1e-9
    assert mae(w) <= min(mae(e) for e in np.eye(k)) + 1e-9


@pytest.mark.parametrize("seed", range(12))
def test_point_weights_of_the_dual_equal_the_primal_programme(seed: int) -> None:
    """Check the dual programme's weights equal the primal's (the former formulation).

    The primal: k weights and 2n error parts, n + 1 equality rows (HiGHS); the weights agree
    to 1e-9 and the mean absolute errors to 1e-12.
    """
    forecasts, observed, _ = _weight_problem(seed)
    k, n = forecasts.shape
    ident = eye_array(n, format="csr")
    a_eq = vstack([hstack([csr_array(forecasts.T), ident, -ident]),
                   hstack([csr_array(np.ones((1, k))), csr_array((1, 2 * n))])])
    primal = linprog(np.concatenate([np.zeros(k), np.ones(2 * n)]), A_eq=a_eq,
                     b_eq=np.append(observed, 1.0), bounds=(0, None), method="highs")
    reference = np.maximum(primal.x[:k], 0.0)
    reference[reference < 1e-4] = 0.0
    reference /= reference.sum()
    w = _point_weights(forecasts, observed)
    assert np.max(np.abs(w - reference)) < 1e-9, (w, reference)
    assert abs(np.mean(np.abs(observed - w @ forecasts))
               - np.mean(np.abs(observed - reference @ forecasts))) < 1e-12


def _kalman_step_by_step(rho: float, share: float, dt: np.ndarray, r: np.ndarray
                         ) -> tuple[float, float, float, float]:
    """Run the AR(1) + white Kalman filter one step at a time (the reference)."""
    x, p, log_det, quad = 0.0, share, 0.0, 0.0
    for i, value in enumerate(r):
        if i:
            f = rho ** dt[i - 1]
            x, p = f * x, f * f * p + share * (1 - f * f)
        s = p + 1 - share
        log_det += np.log(s)
        quad += (value - x) ** 2 / s
        gain = p / s
        x, p = x + gain * (value - x), (1 - gain) * p
    return log_det, quad, x, p


@pytest.mark.parametrize("seed", range(8))
def test_kalman_steady_state_tail_equals_the_step_by_step_filter(seed: int) -> None:
    """Check the constant-gain tail of the filter gives the step-by-step results (1e-10).

    Evenly and unevenly spaced steps, short and long runs, rho from 0.01 to 0.999.
    """
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 1500))
    steps = (np.cumsum(rng.choice([1.0, 1.0, 2.0, 5.0], n)) if seed % 2
             else np.arange(n) * float(rng.choice([1.0, 10.0])))
    if seed % 4 == 3:  # uneven at the start, even after
        steps = np.concatenate([[0.0, 3.0, 4.0], 5.0 + np.arange(n)])
    r = rng.standard_normal(steps.size)
    for rho in (0.01, 0.5, 0.9, 0.999):
        share = float(rng.uniform(0.05, 0.95))
        fast = _kalman(rho, share, np.diff(steps), r)
        slow = _kalman_step_by_step(rho, share, np.diff(steps), r)
        np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("near", "far"), [(0.5, 0.5), (1.0, 1.0), (2.0, 2.0), (1.0, 3.0),
                                           (2.0, 0.5)])
def test_band_scale_is_the_validation_errors_in_final_half_widths(near: float, far: float
                                                                  ) -> None:
    """Check the band's scale: validation errors at known multiples of the final half-width.

    One member (flat, fitted on noise); a validation block of lags 1-40 whose every error is
    ``near`` times the final band's half-width at the same lag for lags 1-20 and ``far`` times
    it for lags 21-40. Each half's factor is its multiple^(20 / (20 + prior)); beyond the
    validated lags the factor grows as (lag / 10.5)^s (10.5, 30.5: the halves' median lags)
    when the far factor is the larger, and stays the near factor otherwise.
    """
    rng = np.random.default_rng(3)
    t = np.arange(100.0)
    member = fit_member("flat", t, 0.5 + 0.05 * rng.standard_normal(100))
    lags = np.arange(1.0, 41.0)
    mean, var = member.predictive(t[-1] + lags, None)
    half = 1.6448536269514722 * np.sqrt(var)
    signs = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    multiple = np.where(lags <= 20, near, far)
    block = Validation(lags, mean[None], np.sqrt(var)[None], mean + signs * multiple * half)
    future = t[-1] + np.array([1.0, 10.5, 30.5, 80.0])
    scale = _band_scale([member], np.ones(1), [0], (block,), None, 0.9, future)
    c_near, c_far = (m ** (20 / (20 + _BAND_PRIOR)) for m in (near, far))
    slope = max(np.log(c_far / c_near) / np.log(30.5 / 10.5), 0.0)
    expected = c_near * (np.array([10.5, 10.5, 30.5, 80.0]) / 10.5) ** slope
    np.testing.assert_allclose(scale, expected, rtol=1e-6)
    if far > near:
        assert scale[2] == pytest.approx(c_far, rel=1e-6)
    np.testing.assert_array_equal(
        _band_scale([member], np.ones(1), [0], (), None, 0.9, future), np.ones(4))


def _ramp(seed: int, n: int = 120, slope: float = 0.003) -> tuple[np.ndarray, np.ndarray]:
    """A straight ramp 0.1 + slope t with white noise: no curvature yet (a run far from r*)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n, dtype=float)
    return t, 0.1 + slope * t + 0.02 * rng.standard_normal(n)


def test_damped_trend_carries_the_recent_slope_on_and_damps_it() -> None:
    """Check the damped member starts at the recent line's slope and rises less than the line.

    Beyond the cut the abscissa is x_c + tau (1 - exp(-h / tau)), tau the span of the recent
    half of the training part: the slope at the cut is the line's, the rise after h steps is
    below b h and tends to b tau.
    """
    t, y = _ramp(3)
    member = fit_member("damped", t, y)
    half = t[t.size - t.size // 2:]
    slope, _ = np.polyfit(half - half[0], y[-half.size:], 1)
    assert member.coef[1] == pytest.approx(slope, rel=1e-9)
    tau = half[-1] - half[0]
    assert member.damping == pytest.approx(tau)
    cut = member.mean_curve(np.array([t[-1]]))[0]
    near = member.mean_curve(np.array([t[-1] + 1.0]))[0]
    assert near - cut == pytest.approx(slope * tau * -np.expm1(-1 / tau), rel=1e-9)
    far = member.mean_curve(np.array([t[-1] + 1e4]))[0]
    assert far - cut == pytest.approx(slope * tau, rel=1e-6)
    h = np.array([10.0, 50.0, 200.0])
    assert np.all(member.mean_curve(t[-1] + h) - cut < slope * h)


def test_damped_trend_never_leaves_the_reward_range() -> None:
    """Check the damped member's total further rise is capped at the room left in the range."""
    t, y = _ramp(4, slope=0.006)  # reaches ~0.82 at the cut: the line would leave [0, 1]
    member = fit_member("damped", t, y, bounds=(0.0, 1.0))
    far = member.mean_curve(np.array([t[-1] + 1e5]))[0]
    assert far <= 1.0 + 1e-9
    free = fit_member("damped", t, y)  # without the range, the rise is b tau and overshoots
    assert free.mean_curve(np.array([t[-1] + 1e5]))[0] > 1.0
    falling = fit_member("damped", t, 1.0 - y, bounds=(0.0, 1.0))
    assert falling.mean_curve(np.array([t[-1] + 1e5]))[0] >= -1e-9


def test_damped_trend_is_refused_on_too_few_or_constant_recent_points() -> None:
    """Check the damped member needs 8 recent points that are not constant (else skipped)."""
    t, y = _ramp(5, n=14)
    with pytest.raises(InputError, match="fewer than 8"):
        fit_member("damped", t, y)
    t, y = _ramp(5, n=40)
    y[20:] = 0.5
    with pytest.raises(InputError, match="constant"):
        fit_member("damped", t, y)


def test_bic_weights_leave_out_a_member_fitted_on_part_of_the_training_data() -> None:
    """Check BIC weights give the damped member nothing: its fit sees only the recent half.

    BIC values on different points are not comparable; with too few points to stack, the
    damped member gets no weight instead of a BIC made on half the data.
    """
    t, y = _ramp(6, n=40)
    fc = forecast_curve(t, y, n_train=20, future_steps=t[20:], stack=False,
                        members=("flat", "damped", "exponential"), bounds=(0.0, 1.0))
    assert fc.weighting == "bic"
    assert fc.weights["damped"] == 0.0
    assert abs(sum(fc.weights.values()) - 1) < 1e-9


def test_averaged_quantiles_are_the_weighted_members_quantiles() -> None:
    """Check the band's quantiles: sum_k w_k (m_k + z_q s_k), against scipy's Gaussian quantiles.

    With members whose means disagree the averaged 90% band is narrower than the mixture's
    (the mixture adds the spread between the means); with one member the two are the same.
    """
    from scipy.stats import norm

    w = np.array([0.3, 0.7])
    means = np.array([[0.2, 0.4], [0.6, 0.5]])
    sds = np.array([[0.05, 0.1], [0.02, 0.03]])
    for q in (0.05, 0.5, 0.95):
        expected = w @ norm.ppf(q, loc=means, scale=sds)
        np.testing.assert_allclose(_averaged_quantiles(w, means, sds, q), expected, rtol=1e-12)
    averaged = [_averaged_quantiles(w, means, sds, q) for q in (0.05, 0.95)]
    mixture = [_mixture_quantiles(w, means, sds, q) for q in (0.05, 0.95)]
    assert np.all(averaged[1] - averaged[0] < mixture[1] - mixture[0])
    one = (np.ones(1), means[:1], sds[:1])
    for q in (0.05, 0.95):
        np.testing.assert_allclose(_averaged_quantiles(*one, q), _mixture_quantiles(*one, q),
                                   atol=1e-12)


def test_band_of_one_member_is_the_same_averaged_or_mixed() -> None:
    """Check ``band="averaged"`` and ``"mixture"`` give one member the same band and point."""
    t, y = _saturating(4)
    kwargs = {"n_train": CUT, "future_steps": t[CUT:], "bounds": (0.0, 1.0),
              "members": ("exponential",)}
    averaged = forecast_curve(t, y, **kwargs)
    mixed = forecast_curve(t, y, band="mixture", **kwargs)
    np.testing.assert_allclose(averaged.lower, mixed.lower, atol=1e-9)
    np.testing.assert_allclose(averaged.upper, mixed.upper, atol=1e-9)
    np.testing.assert_array_equal(averaged.point, mixed.point)


def test_a_point_outside_its_band_is_held_at_the_nearer_edge() -> None:
    from grpodyn.numerics.forecast_result import Forecast

    steps = np.arange(1.0, 5.0)
    lower, upper = np.zeros(4), np.ones(4)
    forecast = Forecast({"a": 1.0}, "single", 8, steps, np.full(4, 0.5), lower, upper, 0.9,
                        point=np.array([-2.0, 0.3, 0.7, 5.0]))
    assert forecast.point.tolist() == [0.0, 0.3, 0.7, 1.0]
    assert Forecast({"a": 1.0}, "single", 8, steps, np.full(4, 0.5), lower, upper, 0.9).point \
        is None


def test_the_first_step_beyond_the_seen_span_widened_by_its_width() -> None:
    from grpodyn.numerics.forecast_result import Forecast

    steps = np.arange(11.0, 15.0)
    forecast = Forecast({"a": 1.0}, "single", 10, steps, np.full(4, 0.5),
                        np.array([0.0, -0.5, -1.2, -3.0]), np.array([1.0, 1.5, 2.0, 3.0]), 0.9)
    assert forecast.leaves_span(np.array([0.0, 1.0])) == 13.0  # below 2a - b = -1 from there
    assert forecast.leaves_span(np.array([-3.0, 1.0])) is None


def test_a_forecast_to_pandas_keeps_its_band_and_says_without_pandas(request):
    """Forecast.to_pandas: one row per forecast step, the band's columns, the model in attrs;
    without pandas an ImportError that names the install."""
    pytest.importorskip("pandas")
    t = np.arange(1.0, 101.0)
    y = 0.8 - 0.6 * np.exp(-t / 30) + 0.01 * np.random.default_rng(0).standard_normal(t.size)
    forecast = forecast_curve(t, y, n_train=60, future_steps=t[60:])
    frame = forecast.to_pandas()
    assert frame.index.name == "step" and len(frame) == 40
    assert {"centre", "mean", "lower", "upper"} <= set(frame.columns)
    assert np.allclose(frame["upper"], forecast.upper) and frame.attrs["model"] == forecast.model
    request.getfixturevalue("without_pandas")
    with pytest.raises(ImportError, match="pip install pandas"):
        forecast.to_pandas()
