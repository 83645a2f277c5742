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
from grpodyn.empirical.logs.run_settings import learning_rate_of, lr_schedule

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


def test_the_schedule_is_the_trapezoid_mean_and_the_peak_and_none_when_constant() -> None:
    run = _scheduled(_decay(), 40.0)
    schedule = lr_schedule(run.steps, learning_rate_of(run))
    assert schedule.peak == PEAK_LR
    assert schedule.share == pytest.approx((1 + 1 / 300) / 2)
    flat = _scheduled(np.full(300, PEAK_LR), 40.0)
    assert learning_rate_of(flat) is None
    assert lr_schedule(flat.steps, learning_rate_of(flat)) is None


def test_a_decaying_schedule_gives_tau_and_the_stiffness_at_its_peak() -> None:
    """Before the lr clock was read, tau was not determined here (exponential_lr trusted)."""
    dynamics = analyse_run(_scheduled(_decay(), 40.0), momentum=BETA,
                           diagnose_run=False).dynamics
    assert dynamics["model"] == "exponential_lr"
    assert dynamics["tau"]["status"] == "determined"
    assert dynamics["tau"]["value"] == pytest.approx(80.0, rel=0.05)  # at the mean lr
    stiffness = dynamics["stiffness"]
    assert stiffness["at_peak"]["lr_share"] == pytest.approx(0.5, abs=0.01)
    assert stiffness["at_peak"]["value"] == pytest.approx((1 - BETA) / 40.0, rel=0.05)
    assert dynamics["kappa"]["value"] == pytest.approx((1 - BETA) / 40.0 / PEAK_LR, rel=0.05)
    assert "peak" in dynamics["stability_margin"]["caveat"]


def test_a_constant_lr_reads_no_peak() -> None:
    dynamics = analyse_run(_scheduled(np.full(300, PEAK_LR), 40.0), momentum=BETA,
                           diagnose_run=False).dynamics
    assert dynamics["tau"]["value"] == pytest.approx(40.0, rel=0.05)
    assert "at_peak" not in dynamics["stiffness"]
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


def test_advice_under_a_decay_reads_the_headroom_at_the_peak_and_warns_of_the_step_clock(
        ) -> None:
    """A slow relaxation the run does not finish: tau is read from its thirds, on steps."""
    advice = advise_log(_scheduled(_decay(), 400.0), momentum=BETA)
    stiffness = advice.basis["stiffness"]
    assert stiffness["at_peak"]["lr_share"] == pytest.approx(0.5, abs=0.01)
    assert stiffness["kappa"] == pytest.approx(stiffness["at_peak"]["value"] / PEAK_LR)
    headroom = [r for r in advice.reasoning if r.startswith("headroom")]
    assert headroom and "at the lr's peak" in headroom[0]
    assert any("read on the step clock" in w for w in advice.warnings)
    constant = advise_log(_scheduled(np.full(300, PEAK_LR), 400.0), momentum=BETA)
    assert "at_peak" not in constant.basis["stiffness"]
    assert not any("step clock" in w for w in constant.warnings)
