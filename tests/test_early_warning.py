"""Early warning: coincident precursors of a collapse at the last steps, read causally."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.early_warning import (
    ALONE,
    COINCIDE,
    MIN_POINTS,
    early_warning,
    prefix,
)
from grpodyn.empirical.diagnostics.series import PAIRWISE_POINTS, trend_tau
from grpodyn.empirical.logs.loaders import Run, load_run
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta
from grpodyn.ground import InputError

E8 = Path(__file__).parent / "data" / "real_logs" / (
    "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_sweep_"
    "runs_broad_e8_tb256_metrics.excerpt.jsonl")


def _quiet(n: int = 120, seed: int = 0) -> Run:
    """A learning run whose entropy, KL and length wander around slow trends."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, n + 1, dtype=float)
    metrics = {"entropy": 0.8 - 0.002 * t + rng.normal(0, 0.03, n),
               "kl": 0.01 + 0.0001 * t + np.abs(rng.normal(0, 0.002, n)),
               "completion_length": 300 + 0.5 * t + rng.normal(0, 10, n)}
    reward = 0.2 + 0.5 * (1 - np.exp(-t / 40)) + rng.normal(0, 0.04, n)
    return Run("quiet", "test", t, reward, metrics)


def _with_jump(run: Run, names: tuple[str, ...]) -> Run:
    metrics = {k: v.copy() for k, v in run.metrics.items()}
    for name in names:
        metrics[name][-1] = metrics[name][-1] * 3 + 0.5
    return Run(run.source, run.format, run.steps, run.reward, metrics)


def test_a_quiet_run_gives_no_warning() -> None:
    assert early_warning(_quiet()) is None


def test_coincident_precursors_warn_and_a_lone_one_does_not() -> None:
    """Entropy and KL leaving their trends together warn; the entropy alone does not."""
    assert COINCIDE == 2
    warning = early_warning(_with_jump(_quiet(), ("entropy", "kl")))
    assert warning is not None and warning.step == 120
    assert warning.signals == ("entropy_rise", "kl_rise")
    assert "rose above its trend" in warning.evidence["entropy_rise"]
    assert set(warning.to_dict()) == {"step", "signals", "evidence", "remedy"}
    assert early_warning(_with_jump(_quiet(), ("entropy",))) is None


def _beside_reward(metric: str, values: np.ndarray, seed: int = 0) -> Run:
    """A log of the reward and one other metric alone (no entropy, KL nor zero-std share), as
    a custom loop writes."""
    rng = np.random.default_rng(seed)
    n = values.size
    reward = 0.5 + rng.normal(0, 0.03, n)
    return Run(metric, "test", np.arange(1.0, n + 1), reward, {metric: values})


def test_the_length_surging_towards_the_cap_warns_alone_on_a_short_log() -> None:
    """20 steps of reward and length: the length leaps 40% above its trend at the last step,
    the collapse's mechanism, before any second precursor can be read."""
    assert ALONE["length_departure"] == "rose above"
    rng = np.random.default_rng(1)
    length = 400 + 3 * np.arange(20) + rng.normal(0, 8, 20)
    length[-1] = 1.4 * length[-2]
    warning = early_warning(_beside_reward("completion_length", length))
    assert warning is not None and warning.step == 20
    assert warning.signals == ("length_departure",)
    assert "rose above its trend" in warning.evidence["length_departure"]
    # the step before: nothing yet
    assert early_warning(_beside_reward("completion_length", length[:-1])) is None


def test_a_length_that_rises_on_its_trend_or_falls_does_not_warn_alone() -> None:
    """Lengths growing steadily (x2.5 over the run, far from any cap) stay on their trend; a
    fall of the length is a precursor that still needs a second one."""
    rng = np.random.default_rng(2)
    steady = 200 + 6 * np.arange(1.0, 81) + rng.normal(0, 10, 80)
    for end in range(10, 81):
        assert early_warning(_beside_reward("completion_length", steady[:end], seed=3)) is None, end
    falling = steady.copy()
    falling[-1] = 0.5 * falling[-2]
    assert early_warning(_beside_reward("completion_length", falling, seed=3)) is None


def test_the_truncated_share_rising_above_its_trend_warns_alone() -> None:
    """256 completions a step, 2% truncated (binomial noise): no prefix warns; the share
    leaping to 20% at the last step, the collapse's mechanism, warns on its own."""
    assert ALONE["clipped_rise"] == "rose above"
    rng = np.random.default_rng(6)
    share = rng.binomial(256, 0.02, 60) / 256
    for end in range(10, 61):
        assert early_warning(_beside_reward("clipped_share", share[:end])) is None, end
    share[-1] = 0.2
    warning = early_warning(_beside_reward("clipped_share", share))
    assert warning is not None and warning.step == 60 and warning.signals == ("clipped_rise",)
    assert "completions truncated at the length cap" in warning.evidence["clipped_rise"]
    share[-1] = 0.1  # 8 points above a 2% trend: within the 10% of the batch that matters
    assert early_warning(_beside_reward("clipped_share", share)) is None


def _surging(cap: float | None, *, share: bool = False) -> Run:
    """A length that ran into the cap and back: its last rise stays within its trend's noise."""
    rng = np.random.default_rng(7)
    cycle = np.array([550.0, 650, 800, 950, 1000, 900, 700])
    length = np.tile(cycle, 5)[:30] + rng.normal(0, 10, 30)
    length[-1] = 880.0
    metrics = {"completion_length": length}
    if share:
        metrics["clipped_share"] = np.full(30, 0.01)
    meta = RunMeta() if cap is None else RunMeta(length_cap=Hyperparameter(cap, "user", "given"))
    return Run("surging", "test", np.arange(1.0, 31), 0.5 + rng.normal(0, 0.03, 30), metrics,
               meta=meta)


def test_the_length_rising_to_within_reach_of_a_known_cap_warns_alone() -> None:
    """The length at 880 above its trend: within 25% of its level below a cap of 1024 it
    warns; without the cap, or with a cap of 4096, the trend test alone does not (the earlier
    surges widen its noise); where the truncated share is logged, the share is read instead."""
    warning = early_warning(_surging(1024))
    assert warning is not None and warning.signals == ("cap_approach",)
    assert "length cap 1024" in warning.evidence["cap_approach"]
    assert early_warning(_surging(None)) is None
    assert early_warning(_surging(4096)) is None
    assert early_warning(_surging(1024, share=True)) is None


def test_the_public_trl_excerpt_names_the_truncated_share() -> None:
    """lzhihan (TRL): the truncated share leapt 0.15 -> 0.34 at step 320 while the entropy and
    the length left their trends; without the share the same prefix does not name it."""
    run = load_run(Path(__file__).parent / "data" / "real_logs" / (
        "lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_checkpoint-1200_"
        "trainer_state.excerpt.json"))
    warning = early_warning(prefix(run, 320))
    assert warning is not None and "clipped_rise" in warning.signals
    assert warning.evidence["clipped_rise"].startswith("clipped_share 0.3375 at step 320")
    bare = Run(run.source, run.format, run.steps, run.reward,
               {k: v for k, v in run.metrics.items() if k != "clipped_share"})
    assert "clipped_rise" not in early_warning(prefix(bare, 320)).signals


def test_critical_slowing_down_is_named_when_the_fluctuations_slow_and_grow() -> None:
    """An AR(1) whose pole rises towards 1 and whose noise grows: both rolling stats rise."""
    rng = np.random.default_rng(4)
    n = 300
    x = np.zeros(n)
    for i in range(1, n):
        x[i] = (0.1 + 0.85 * i / n) * x[i - 1] + (0.02 + 0.05 * i / n) * rng.normal()
    run = _with_jump(Run("slow", "test", np.arange(1.0, n + 1), 0.5 + x,
                         _quiet(n, seed=5).metrics), ("entropy",))
    warning = early_warning(run)
    assert warning is not None and "critical_slowing_down" in warning.signals
    assert "Kendall tau" in warning.evidence["critical_slowing_down"]


@pytest.mark.parametrize("n", [2, 7, 501, PAIRWISE_POINTS + 1])
def test_the_trend_statistic_is_scipys_kendall_tau_b(n: int) -> None:
    """The pairwise count in numpy gives scipy's tau-b, ties in y included; constant y is NaN."""
    from scipy.stats import kendalltau

    rng = np.random.default_rng(n)
    for y in (rng.normal(size=n), np.round(rng.normal(size=n)), np.cumsum(rng.normal(size=n))):
        expected = kendalltau(np.arange(n), y).statistic
        assert trend_tau(y) == pytest.approx(expected, abs=1e-12)
    assert np.isnan(trend_tau(np.ones(n)))
    with_nan = rng.normal(size=n)
    with_nan[n // 2] = np.nan
    with np.errstate(invalid="ignore"):
        assert np.isnan(trend_tau(with_nan))  # as scipy's: a NaN statistic, never an error


def _smooth_runaway(width: float, spike: bool = False, n: int = 400, seed: int = 0) -> Run:
    """Entropy x5 and KL x20 along a logistic of ``width`` steps centred on step 245, the reward
    falling from step 250; with ``spike``, the KL jumps x20 for one step instead."""
    rng = np.random.default_rng(seed)
    t = np.arange(1.0, n + 1)
    rise = 1 / (1 + np.exp(-(t - 245) / width))
    reward = (0.2 + 0.5 * (1 - np.exp(-t / 40))) * (1 - 0.9 / (1 + np.exp(-(t - 250) / width)))
    kl_shape = np.where(t == 240, 19.0, 0.0) if spike else 19 * rise
    metrics = {"entropy": (0.8 - 0.001 * t) * (1 + (0 if spike else 4) * rise)
               * np.exp(rng.normal(0, 0.05, n)),
               "kl": (0.01 + 1e-4 * t) * (1 + kl_shape) * np.exp(rng.normal(0, 0.15, n)),
               "completion_length": 300 + 0.3 * t + rng.normal(0, 10, n)}
    return Run("runaway", "test", t, reward + rng.normal(0, 0.03, n), metrics)


@pytest.mark.parametrize("width", [6.0, 10.0])
def test_a_smooth_runaway_warns_before_the_reward_falls(width: float) -> None:
    """Over 25-45 steps (10-90%) the trend line keeps pace with the rise; the sustained rise
    does not."""
    run = _smooth_runaway(width)
    warned = [step for step in range(200, 250)
              if early_warning(prefix(run, float(step))) is not None]
    assert warned and warned[0] < 245
    warning = early_warning(prefix(run, float(warned[0])))
    assert {"entropy_rise", "kl_rise"} <= set(warning.signals)
    sustained = any("sustained rise" in words for words in warning.evidence.values())
    assert sustained == (width >= 10)  # a faster rise leaves its trend line as well
    assert early_warning(prefix(run, 200.0)) is None


def test_a_one_step_kl_spike_and_the_kl_growing_from_zero_are_no_sustained_rise() -> None:
    spike = _smooth_runaway(10.0, spike=True)
    for step in range(236, 246):
        warning = early_warning(prefix(spike, float(step)))
        assert warning is None or "sustained" not in warning.evidence.get("kl_rise", "")
    t = np.arange(1.0, 61)
    start = Run("start", "test", t, 0.3 + 0.002 * t,
                {"kl": 1e-4 * t**2, "entropy": 0.5 + 0.01 * t})  # both triple in the run
    for step in range(10, 61):
        warning = early_warning(prefix(start, float(step)))
        assert warning is None or not any("sustained" in w for w in warning.evidence.values())


def test_prefix_is_causal_and_refuses_a_step_before_the_log() -> None:
    run = _with_jump(_quiet(), ("entropy", "kl"))
    cut = prefix(run, 60)
    assert cut.n_points == 60 and cut.steps[-1] == 60
    assert np.array_equal(cut.metrics["kl"], run.metrics["kl"][:60])
    assert early_warning(cut) is None  # the jump at step 120 is not known at step 60
    with pytest.raises(InputError, match="no step is at or before"):
        prefix(run, 0)
    assert early_warning(prefix(run, MIN_POINTS - 1)) is None


def test_the_public_collapse_is_warned_before_half_its_fall() -> None:
    """ShibukiZero broad_e8_tb256: the reward lost half its fall at step 20; KL and length
    left their trends at steps 18-19."""
    run = load_run(E8)
    assert early_warning(prefix(run, 15)) is None
    warning = early_warning(prefix(run, 19))
    assert warning is not None and warning.step == 19
    assert {"kl_rise", "length_departure"} <= set(warning.signals)


def test_the_monitor_reports_the_early_warning() -> None:
    import grpodyn

    run = load_run(E8)
    monitor = grpodyn.Monitor(refit_every=1000, diagnose_every=0)
    states = []
    for i, step in enumerate(run.steps):
        metrics = {"reward": run.reward[i]}
        metrics |= {k: v[i] for k, v in run.metrics.items() if np.isfinite(v[i])}
        states.append(monitor.update(step, metrics))
    assert states[14].early_warning is None
    assert states[18].early_warning is not None and states[18].early_warning["step"] == 19
    assert states[18].to_dict()["early_warning"] == states[18].early_warning


def test_the_monitor_reads_the_approach_to_the_cap_it_is_given() -> None:
    import grpodyn

    run = _surging(1024)
    states = {}
    for cap in (None, 1024):
        monitor = grpodyn.Monitor(refit_every=1000, diagnose_every=0, length_cap=cap)
        for i, step in enumerate(run.steps):
            state = monitor.update(step, {"reward": run.reward[i],
                                          "completions/mean_length": run.metrics[
                                              "completion_length"][i]})
        states[cap] = state.early_warning
    assert states[None] is None
    assert states[1024] is not None and states[1024]["signals"] == ["cap_approach"]


def test_the_callback_accepts_early_warning_in_stop_on() -> None:
    pytest.importorskip("transformers")
    from grpodyn.empirical.callback import GRPODynamicsCallback

    GRPODynamicsCallback(stop_on=("early_warning", "dynamical_instability"))
    with pytest.raises(InputError, match="unknown modes"):
        GRPODynamicsCallback(stop_on=("collapse",))
