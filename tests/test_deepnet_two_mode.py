"""The two-mode map (theory/two_mode.py): sympy checks and a two-direction heavy-ball quadratic."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from grpodyn.numerics import _generated as gen
from grpodyn.numerics.two_mode import first_unstable_refresh, two_mode_prediction
from grpodyn.theory import get, sym
from grpodyn.theory.regimes import characteristic_polynomial


def _simulate(k: tuple[float, float], *, momentum: float, steps: int, refresh: int = 1,
              start: tuple[float, float] = (1.0, 1.0)) -> np.ndarray:
    """Heavy-ball on u with force diag(k) u held at each refresh; returns u per step (steps, 2)."""
    k_arr = np.asarray(k, dtype=float)
    u = np.asarray(start, dtype=float)
    v = np.zeros(2)
    held = k_arr * u
    out = np.empty((steps, 2))
    for n in range(steps):
        if n % refresh == 0:
            held = k_arr * u
        v = momentum * v - held
        u = u + v
        out[n] = u
    return out


def test_characteristic_polynomial_factorises() -> None:
    poly = get("two_mode_characteristic").expr
    single = characteristic_polynomial()
    product = single.subs(sym.k, sym.k_s) * single.subs(sym.k, sym.k_r)
    assert sp.expand(poly - product) == 0


def test_effective_stiffness_is_share_weighted_mean() -> None:
    expr = get("two_mode_effective_stiffness").expr
    assert sp.simplify(expr.subs(sym.w_s, 1) - 2 * sym.k_s) == 0
    assert sp.simplify(expr.subs(sym.w_s, 0) - 2 * sym.k_r) == 0


def test_relaxation_time_continuum_limit() -> None:
    tau = get("two_mode_relaxation_time").expr
    # overdamped limit of the soft mode: (1 - beta) / k_r for u, half of it for the reward
    leading = sp.limit(tau.subs(sym.beta, sp.Rational(1, 2)) * sym.k_r, sym.k_r, 0)
    assert leading == sp.Rational(1, 4)


@pytest.mark.parametrize("momentum", [0.0, 0.5, 0.9])
def test_reward_relaxation_matches_simulation(momentum: float) -> None:
    k_s, k_r = 0.6 * (1 - np.sqrt(momentum)) ** 2 + 0.05, 0.01 * (1 - momentum) + 0.002
    k_r = min(k_r, 0.5 * (1 - np.sqrt(momentum)) ** 2)
    u = _simulate((k_s, k_r), momentum=momentum, steps=3000)
    deficit = 0.5 * (k_s * u[:, 0] ** 2 + k_r * u[:, 1] ** 2)  # h_i proportional to k_i
    late = np.arange(2000, 3000)
    slope = np.polyfit(late, np.log(deficit[late]), 1)[0]
    assert -1 / slope == pytest.approx(gen.two_mode_relaxation_time(momentum, k_r), rel=2e-3)


def test_effective_stiffness_matches_one_step() -> None:
    h = np.array([5.0, 0.2])
    u = np.array([0.3, 1.0])
    lr = 1e-5
    deficit = 0.5 * (h * u**2).sum()
    after = 0.5 * (h * (u - lr * h * u) ** 2).sum()
    share = 0.5 * h[0] * u[0] ** 2 / deficit
    measured = (deficit - after) / deficit
    predicted = gen.two_mode_effective_stiffness(share, lr * h[0], lr * h[1])
    assert measured == pytest.approx(predicted, rel=1e-4)


@pytest.mark.parametrize("momentum", [0.0, 0.7])
def test_on_policy_stability_is_the_stiff_mode(momentum: float) -> None:
    limit = 2 * (1 + momentum)
    for k_s, expected in ((0.98 * limit, True), (1.02 * limit, False)):
        u = _simulate((k_s, 0.01), momentum=momentum, steps=4000)
        bounded = bool(np.abs(u[-100:]).max() < 1.0)
        assert bounded is expected
        assert bool(gen.two_mode_stability_condition(momentum, k_s, 0.01)) is expected


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_refresh_threshold_matches_simulation(momentum: float) -> None:
    k_s, k_r = 0.3, 0.02
    first = first_unstable_refresh(momentum=momentum, stiffness_stiff=k_s, stiffness_soft=k_r)
    assert first is not None
    for refresh, expected in ((first - 1, True), (first, False)):
        u = _simulate((k_s, k_r), momentum=momentum, steps=60 * refresh * 20, refresh=refresh)
        assert bool(np.abs(u[-refresh * 10:]).max() < 1.0) is expected
    # the soft mode alone would tolerate a much longer hold: the stiff one binds
    alone = first_unstable_refresh(momentum=momentum, stiffness_stiff=k_r, stiffness_soft=k_r)
    assert alone is None or alone > first
    if momentum == 0.0:
        assert first == int(np.floor(2 / k_s)) + 1 or first == 2 / k_s


def test_oscillation_momentum_matches_simulation() -> None:
    k = 0.04
    beta_osc = gen.oscillation_momentum(k)
    assert beta_osc == pytest.approx(0.64)
    for momentum, crosses in ((0.9 * beta_osc, False), (1.1 * beta_osc, True)):
        u = _simulate((k, k), momentum=momentum, steps=400)[:, 0]
        assert bool((u < 0).any()) is crosses


def test_prediction_bundle() -> None:
    p = two_mode_prediction(lr=0.1, momentum=0.0, curvature_stiff=4.0, curvature_soft=0.05)
    assert p.stable and p.refresh_max == 4  # k_s = 0.4: K* = 2 / 0.4 = 5 is the first unstable
    assert p.relaxation_time == pytest.approx(gen.two_mode_relaxation_time(0.0, 0.005))
    assert p.oscillation_momentum_soft == pytest.approx((1 - np.sqrt(0.005)) ** 2)
    with pytest.raises(ValueError, match="soft curvature"):
        two_mode_prediction(lr=0.1, momentum=0.0, curvature_stiff=1.0, curvature_soft=2.0)
