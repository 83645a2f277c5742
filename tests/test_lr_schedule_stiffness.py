"""A logged lr schedule: tau read on the lr clock, the stiffness and margins at the lr's peak.

A relaxation on the lr clock, r = r* - A exp(-kappa A(t) / (1 - beta)) with A(t) the cumulative
lr (docs/theory.md section 3 with k = kappa lr), is fitted by the exponential_lr law; its time
constant gives tau in steps at the mean lr, and the stiffness at the peak lr is k / share.
"""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.empirical.logs.advice import advise_log
from grpodyn.empirical.logs.advice_stiffness import stiffness_entry
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_analysis import analyse_run
from grpodyn.empirical.logs.run_settings import learning_rate_of, logged_schedule
from grpodyn.numerics.advise import headroom_raise
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.stability import regime, staleness_max

PEAK_LR = 1e-5
BETA = 0.9


def _scheduled(lr: np.ndarray, tau_at_peak: float, seed: int = 1) -> Run:
    """A run relaxing on the lr clock, its tau at the peak lr ``tau_at_peak`` steps."""
    n = lr.size
    t = np.arange(1.0, n + 1)
    clock = np.concatenate([[0.0], np.cumsum(0.5 * (lr[1:] + lr[:-1]))])
    reward = 0.8 - 0.6 * np.exp(-clock / (PEAK_LR * tau_at_peak))
    noise = np.random.default_rng(seed).normal(0.0, 0.02, n)
    return Run("scheduled", "test", t, reward + noise, {"learning_rate": lr})


def _decay(n: int = 300) -> np.ndarray:
    return PEAK_LR * (1.0 - np.arange(n) / n)


def test_the_schedule_is_the_trapezoid_mean_over_a_peak_held_three_points() -> None:
    run = _scheduled(_decay(), 40.0)
    schedule = logged_schedule(run.steps, learning_rate_of(run))
    assert schedule.peak == pytest.approx(PEAK_LR * (1 - 2 / 300))  # the third highest
    assert schedule.mean == pytest.approx(PEAK_LR * (1 + 1 / 300) / 2)
    steps = np.array([1.0, 2.0, 4.0, 8.0, 16.0])  # uneven: the trapezoid, not the mean
    lr = np.array([1.0, 1.0, 1.0, 0.5, 0.25])
    assert logged_schedule(steps, lr).mean == pytest.approx((1 + 2 + 4 * 0.75 + 8 * 0.375) / 15)
    spike = np.where(np.arange(300) == 150, PEAK_LR, PEAK_LR / 10)  # logged once: no peak
    assert logged_schedule(np.arange(300.0), spike) is None
    flat = _scheduled(np.full(300, PEAK_LR), 40.0)
    assert learning_rate_of(flat) is None
    assert logged_schedule(flat.steps, learning_rate_of(flat)) is None
    assert logged_schedule(np.arange(5.0), np.full(5, PEAK_LR)) is None  # constant over the part


def test_a_decaying_schedule_reads_tau_on_the_lr_clock_and_the_limits_at_its_peak() -> None:
    """Before the lr clock was read, tau was not determined here (exponential_lr trusted).

    A peak tau of 30 steps puts the peak stiffness (0.0033) beyond critical damping (0.0026)
    and the mean one (0.0017) below it: the regime is the peak's.
    """
    dynamics = analyse_run(_scheduled(_decay(), 30.0), momentum=BETA,
                           diagnose_run=False).dynamics
    assert dynamics["model"] == "exponential_lr"
    assert dynamics["tau"]["status"] == "determined" and "clock" in dynamics["tau"]
    assert "steps_to_plateau" not in dynamics["tau"]  # it depends on the lr ahead
    mean_stiffness = dynamics["stiffness"]["value"]
    peak = dynamics["stiffness"]["at_peak"]
    assert peak["lr_share"] == pytest.approx(0.505, abs=0.005)
    assert peak["value"] == pytest.approx(mean_stiffness / peak["lr_share"])
    assert peak["value"] == pytest.approx((1 - BETA) / 30.0, rel=0.05)
    k_max = float(compiled("stiffness_max")(BETA))
    assert dynamics["stability_margin"]["value"] == pytest.approx(1 - peak["value"] / k_max)
    assert dynamics["regime"]["value"] == regime(momentum=BETA, stiffness=peak["value"])
    assert dynamics["regime"]["value"] != regime(momentum=BETA, stiffness=mean_stiffness)
    assert dynamics["staleness_max"]["value"] == staleness_max(momentum=BETA,
                                                               stiffness=peak["value"])
    assert dynamics["kappa"]["value"] == pytest.approx(peak["value"] / PEAK_LR)


def test_a_fit_on_steps_under_a_schedule_reads_no_peak_and_says_so() -> None:
    """A step-clock tau weighs the lr where the reward moved: it bounds the peak's stiffness
    from below only."""
    dynamics = analyse_run(_scheduled(_decay(), 40.0), momentum=BETA, models=("exponential",),
                           diagnose_run=False).dynamics
    assert dynamics["model"] == "exponential" and "at_peak" not in dynamics["stiffness"]
    k_max = float(compiled("stiffness_max")(BETA))
    stiffness = dynamics["stiffness"]["value"]
    assert dynamics["stability_margin"]["value"] == pytest.approx(1 - stiffness / k_max)
    assert "at least this one" in dynamics["stability_margin"]["caveat"]


def test_a_constant_lr_reads_no_peak() -> None:
    dynamics = analyse_run(_scheduled(np.full(300, PEAK_LR), 40.0), momentum=BETA,
                           diagnose_run=False).dynamics
    assert dynamics["tau"]["value"] == pytest.approx(40.0, rel=0.05)
    assert "at_peak" not in dynamics["stiffness"] and "clock" not in dynamics["tau"]
    assert "peak" not in dynamics["stability_margin"]["caveat"]


def test_the_advice_stiffness_is_divided_by_the_share_at_the_peak() -> None:
    tau = {"kind": "measured_tau", "value": 100.0, "lower": 80.0, "upper": 125.0}
    plain = stiffness_entry(tau, BETA, PEAK_LR, "user")
    peak = stiffness_entry(tau, BETA, PEAK_LR, "user", 0.5)
    assert plain["value"] == peak["value"] == pytest.approx(1e-3)
    assert peak["at_peak"]["value"] == pytest.approx(2e-3)
    assert peak["at_peak"]["upper"] == pytest.approx(2 * plain["upper"])
    assert peak["kappa"] == pytest.approx(2 * plain["kappa"])
    bound = stiffness_entry({**tau, "kind": "stiffness_upper_bound", "value": None}, BETA,
                            PEAK_LR, "user", 0.5)
    assert bound["value"] is None and "kappa" not in bound
    assert bound["at_peak"]["upper"] == pytest.approx(2 * bound["upper"])


def test_advice_on_the_lr_clock_reads_the_headroom_at_the_peak() -> None:
    advice = advise_log(_scheduled(_decay(), 40.0), momentum=BETA)
    tau, stiffness = advice.basis["tau"], advice.basis["stiffness"]
    assert tau["model"] == "exponential_lr"
    share = stiffness["at_peak"]["lr_share"]
    assert advice.measured["stiffness_at_peak"] == stiffness["at_peak"]["value"]
    assert advice.measured["kappa"] == pytest.approx(stiffness["at_peak"]["value"] / PEAK_LR)
    at_peak = headroom_raise(tau_lower=tau["lower"] * share, tau_upper=tau["upper"] * share,
                             momentum=BETA)
    at_mean = headroom_raise(tau_lower=tau["lower"], tau_upper=tau["upper"], momentum=BETA)
    assert advice.interval["lr_ratio"][1] == pytest.approx(at_peak["upper"])
    assert at_peak["upper"] < 0.6 * at_mean["upper"]
    assert any(r.startswith("headroom") and "at the lr's peak" in r for r in advice.reasoning)
    assert not any("step clock" in w for w in advice.warnings)


def test_advice_on_the_step_clock_under_a_decay_warns_and_reads_no_peak() -> None:
    """A slow relaxation the run does not finish: tau is read from its thirds, on steps."""
    advice = advise_log(_scheduled(_decay(), 400.0), momentum=BETA)
    assert advice.basis["tau"].get("model") != "exponential_lr"
    assert "at_peak" not in advice.basis["stiffness"]
    assert any("read on the step clock" in w for w in advice.warnings)
    constant = advise_log(_scheduled(np.full(300, PEAK_LR), 400.0), momentum=BETA)
    assert "at_peak" not in constant.basis["stiffness"]
    assert not any("step clock" in w for w in constant.warnings)
