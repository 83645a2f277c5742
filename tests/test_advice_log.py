"""Advice from a log: every run that loads gets a recommendation with its basis.

Seeded synthetic runs pin each basis (measured tau, a flat run's upper bound on the stiffness, a
fall's stability limit, a slow mode still rising at the end); the garg-aayush lr-sweep excerpt
(tests/data/real_logs, runs 1e-5 and 1e-4 of the public sweep) pins advice on a real log.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import grpodyn
from grpodyn.cli import main
from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.advice import advise_log, run_trend
from grpodyn.empirical.logs.loaders import load_run, load_runs
from grpodyn.ground import InputError
from grpodyn.numerics.advise import (
    bg_exponent_range,
    critical_headroom,
    critical_relaxation_steps,
    goal_relaxation,
    headroom_raise,
    late_relaxation,
    lr_ratio_for_relaxation,
    settling_headroom,
    settling_target,
    stiffness_of_relaxation,
)

GARG = (Path(__file__).parent / "data" / "real_logs"
        / "garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data.excerpt.csv")
KEYS = {"recommendation", "basis", "interval", "status", "warnings"}


def _log(tmp_path: Path, reward: np.ndarray, *, lr: float | None = 1e-5) -> Path:
    rows = [{"step": i + 1, "reward": float(r), **({} if lr is None else {"learning_rate": lr})}
            for i, r in enumerate(reward)]
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": rows}))
    return path


def test_theory_helpers():
    assert goal_relaxation(steps=100, momentum=0.9) == (pytest.approx(100 / math.log(10)), False)
    # no lr reaches 90% of the gain for good in fewer than the fastest settling's 26 steps
    fastest = settling_target(0.9)["steps"]
    assert fastest == 26
    assert goal_relaxation(steps=10, momentum=0.9) == (pytest.approx(fastest / math.log(10)),
                                                       True)
    assert goal_relaxation(steps=26, momentum=0.9)[1] is False
    assert lr_ratio_for_relaxation(tau=200, goal=50) == pytest.approx(4.0)
    assert lr_ratio_for_relaxation(tau=200, goal=50, exponent=-0.5) == pytest.approx(16.0)
    assert bg_exponent_range() == (0.0, 0.5)


def test_critical_headroom_of_the_map():
    """k from the dominant pole inverts the map: its pole relaxes in tau; k_c is its ceiling."""
    beta, k = 0.9, 0.001
    radius = max(abs(np.roots([1.0, -(1.0 + beta - k), beta])))
    tau = -1 / math.log(radius)
    assert stiffness_of_relaxation(tau=tau, momentum=beta) == pytest.approx(k)
    k_c = (1 - math.sqrt(beta)) ** 2
    assert critical_headroom(tau=tau, momentum=beta) == pytest.approx(k_c / k)
    assert critical_headroom(tau=tau, momentum=beta, exponent=-0.5) == pytest.approx(
        (k_c / k) ** 2)
    floor = critical_relaxation_steps(beta)
    assert stiffness_of_relaxation(tau=floor, momentum=beta) == pytest.approx(k_c)
    assert critical_headroom(tau=0.9 * floor, momentum=beta) is None  # no such pole
    assert critical_headroom(tau=math.inf, momentum=beta) == math.inf
    # the settling target: k_s instead of k_c, the same pole inversion
    k_s = settling_target(beta)["stiffness"]
    assert settling_headroom(tau=tau, momentum=beta) == pytest.approx(k_s / k)
    assert settling_headroom(tau=0.9 * floor, momentum=beta) is None
    head = headroom_raise(tau_lower=tau, tau_upper=None, momentum=beta, margin=0.5)
    assert head["ratio"] == 2.0 and head["capped"] and head["upper"] is None
    assert head["target"] == k_s and head["critical"] == pytest.approx(k_c / k)
    # at beta = 0.9 k_s is 2.8 k_c: even a run just short of critical damping is x2 (capped)
    near = headroom_raise(tau_lower=25, tau_upper=40, momentum=beta)
    assert near["ratio"] == 2.0 and near["capped"] and 2 < near["settling"] < near["upper"]
    assert 1 < near["critical"] < 2
    gentle = headroom_raise(tau_lower=25, tau_upper=40, momentum=beta, margin=0.2)
    assert gentle["ratio"] == pytest.approx(gentle["settling"]) and not gentle["capped"]


@pytest.mark.parametrize("seed", [11, 12])
def test_a_run_at_its_plateau_short_of_critical_damping_is_raised(tmp_path, seed):
    """tau = 60 in 300 steps meets the goal (130 steps): the goal alone keeps the lr, but at
    beta = 0.9 critical damping relaxes in 19 steps, so the lower end of tau leaves headroom
    toward the fastest settling: a raise by at most 1 / margin, with its warning; with --steps
    the goal's keep stands."""
    rng = np.random.default_rng(seed)
    t = np.arange(300)
    reward = 0.7 - 0.5 * np.exp(-t / 60) + 0.01 * rng.standard_normal(t.size)
    run = load_run(_log(tmp_path, reward))
    advice = advise_log(run)
    tau = advice.basis["tau"]
    assert tau["kind"] == "measured_tau" and tau["value"] < advice.basis["goal_tau"]
    assert advice.recommendation["direction"] == "raise"
    expected = min(settling_headroom(tau=tau["lower"], momentum=0.9), 2.0)
    assert advice.recommendation["lr_ratio"] == pytest.approx(expected)
    assert 1 < advice.recommendation["lr_ratio"] <= 2
    assert advice.interval["lr_ratio"][0] == 1.0
    assert any(w.startswith("headroom") and "plateau may move" in w for w in advice.warnings)
    assert advise_log(run, steps=299).recommendation["direction"] == "keep"


def test_measured_tau_gives_an_absolute_lr(tmp_path):
    rng = np.random.default_rng(0)
    t = np.arange(300)
    reward = 0.8 - 0.6 * np.exp(-t / 150) + 0.01 * rng.standard_normal(t.size)
    advice = advise_log(load_run(_log(tmp_path, reward)), steps=100)
    assert advice.basis["kind"] == "measured_tau" and advice.status == "determined"
    tau = advice.basis["tau"]["value"]
    assert tau == pytest.approx(150, rel=0.3)
    goal = 100 / math.log(10)
    assert advice.recommendation["lr_ratio"] == pytest.approx(tau / goal)
    assert advice.recommendation["lr"] == pytest.approx(1e-5 * tau / goal)
    lo, hi = advice.interval["lr_ratio"]
    assert lo < advice.recommendation["lr_ratio"] < hi
    assert len(repr(advice)) < 200


def test_flat_run_bounds_the_stiffness_from_above_and_raises(tmp_path):
    rng = np.random.default_rng(1)
    reward = 0.3 + 0.05 * rng.standard_normal(200)
    advice = advise_log(load_run(_log(tmp_path, reward, lr=None)))
    assert advice.basis["kind"] == "stiffness_upper_bound" and advice.status == "bound"
    assert advice.recommendation["direction"] == "raise"
    assert advice.recommendation["lr"] is None  # no lr in the log: a ratio only
    # tau > N and the goal N / ln 10: at least x ln 10, no upper end from this run (critical
    # damping is further, x5.5); one raise is at most 1 / margin = 2, and the interval keeps
    # what the evidence asks
    assert advice.recommendation["lr_ratio"] == pytest.approx(2.0)
    assert advice.interval["lr_ratio"][0] == pytest.approx(math.log(10), rel=0.02)
    assert critical_headroom(tau=199, momentum=0.9) > math.log(10)
    assert advice.interval["lr_ratio"][1] is None
    assert any("one step is at most x2" in line for line in advice.reasoning)
    assert advice.basis["stiffness"]["upper"] == pytest.approx(0.1 / 199)


def test_collapse_bounds_the_stiffness_from_below_and_lowers(tmp_path):
    rng = np.random.default_rng(2)
    t = np.arange(120)
    reward = np.where(t < 60, 0.1 + 0.4 * t / 60, np.maximum(0.5 - (t - 60) / 20, 0.0))
    reward = np.clip(reward + 0.02 * rng.standard_normal(t.size), 0, 1)
    advice = advise_log(load_run(_log(tmp_path, reward)))
    assert advice.basis["kind"] == "stability_limit"
    assert advice.recommendation["direction"] == "lower"
    assert advice.recommendation["lr"] == pytest.approx(0.5e-5)
    assert advice.interval["lr_ratio"] == [None, 0.5]


def test_wide_tau_is_not_called_determined(tmp_path):
    """A noisy run whose tau is 196 +- 182 gets a bound or nothing, not a measurement."""
    rng = np.random.default_rng(3)
    t = np.arange(250)
    reward = 0.2 + 0.1 * (1 - np.exp(-t / 200)) + 0.5 * rng.standard_normal(t.size)
    advice = advise_log(load_run(_log(tmp_path, reward)))
    assert advice.status != "determined"


def test_trend_reads_a_fall_to_the_floor():
    trend = run_trend(np.arange(4.0), np.array([0.03, 0.0, 0.0, 0.0]), floor=0.0)
    assert trend.kind == "fell"
    with pytest.raises(InputError, match="at least 3"):
        run_trend(np.arange(2.0), np.array([0.1, 0.2]))


def test_real_sweep_excerpt(capsys):
    runs = {run.run_name: run for run in load_runs(GARG)}
    collapsed = advise_log(runs["lr_sweep_1e-4"])  # 4 points: 0.03 then 0, 0, 0
    assert collapsed.recommendation["direction"] == "lower"
    healthy = advise_log(runs["lr_sweep_1e-5"])
    # still rising at its end (0.46 -> 0.50 over its last third), but the slow mode's interval
    # reaches down to the whole run's tau (30.5 steps [24.4, 38.8]): one timescale is all the
    # run shows. tau 30.5 < the goal 43, but tau >= 24.4 leaves the slow mode short of critical
    # damping (19 steps at beta 0.9), x1.1, and of the fastest settling, 2.8 k_c, further: one
    # step of x2 (1 / margin), below the collapsing lr
    assert healthy.recommendation["direction"] == "raise"
    assert healthy.basis["kind"] == "measured_tau"
    lower = healthy.basis["tau"]["lower"]
    assert 1 < critical_headroom(tau=lower, momentum=0.9) < 1.2
    assert settling_headroom(tau=lower, momentum=0.9) > 2
    assert healthy.recommendation["lr_ratio"] == pytest.approx(2.0)
    assert healthy.recommendation["lr_ratio"] * 1e-5 < 1e-4
    assert main(["advise", "--log", str(GARG), "--run", "lr_sweep_1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert KEYS <= set(out)
    assert set(out["recommendation"]) >= {"lr", "lr_ratio", "group_size", "batch"}
    assert out["basis"]["exponent"]["status"] == "theory"
    assert out["group_batch"]["exponent"]["status"] == "not_determined"


def test_cli_steps_and_human_output(tmp_path, capsys):
    rng = np.random.default_rng(4)
    log = _log(tmp_path, 0.3 + 0.05 * rng.standard_normal(100))
    assert main(["advise", "--log", str(log), "--steps", "1000", "--json"]) == 0
    long = json.loads(capsys.readouterr().out)
    assert long["basis"]["horizon"] == 1000
    assert main(["advise", "--log", str(log)]) == 0
    text = capsys.readouterr().out
    assert "raise the lr" in text and "basis: bound from above" in text


@pytest.mark.parametrize("argv,needle", [
    (["advise", "--log", "nope.json"], "nope.json"),
    (["advise", "--log", "LOG", "--steps", "0"], "--steps"),
    (["advise", "--log", "LOG", "--margin", "1.5"], "margin"),
])
def test_bad_input_one_line_exit_2(tmp_path, capsys, argv, needle):
    log = _log(tmp_path, np.linspace(0.1, 0.5, 30))
    argv = [str(log) if a == "LOG" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_two_point_log_is_refused(tmp_path, capsys):
    assert main(["advise", "--log", str(_log(tmp_path, np.array([0.1, 0.2])))]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_sweep_measures_the_exponent(tmp_path, capsys):
    """Two SGD runs at lr 0.01 and 0.02 (tau = 1 / lr): the joint fit gives p ~ -1, measured."""
    rng = np.random.default_rng(5)
    logs = []
    for lr in (0.01, 0.02):
        t = np.arange(200)
        reward = 0.8 - 0.6 * np.exp(-t * lr) + 0.01 * rng.standard_normal(t.size)
        path = tmp_path / f"run_{lr}.json"
        path.write_text(json.dumps({"log_history": [
            {"step": int(s), "reward": float(r)} for s, r in zip(t, reward, strict=True)]}))
        logs.append(str(path))
    argv = ["advise", "--log", logs[0], "--momentum", "0", "--lr", "0.01", "--json"]
    for log, lr in zip(logs, (0.01, 0.02), strict=True):
        argv += ["--sweep", log, "--sweep-hparams", f"optimizer=sgd,momentum=0,lr={lr}"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    exponent = out["basis"]["exponent"]
    assert exponent["status"] == "measured" and exponent["value"] == pytest.approx(-1, abs=0.1)
    tau, goal = out["basis"]["tau"], out["basis"]["goal_tau"]
    # the goal asks (goal / tau)^(1/p); critical damping at beta = 0 (k_c = 1) is ~x100 away,
    # so the headroom step, capped at 1 / margin = 2, is the larger
    goal_ratio = (goal / tau["value"]) ** (1 / exponent["value"])
    assert goal_ratio < 2 < critical_headroom(tau=tau["lower"], momentum=0,
                                              exponent=exponent["value"])
    assert out["recommendation"]["lr_ratio"] == pytest.approx(2.0)
    assert main(argv + ["--steps", "199"]) == 0  # a horizon of the user's: the goal's ratio
    assert json.loads(capsys.readouterr().out)["recommendation"]["lr_ratio"] == pytest.approx(
        goal_ratio, rel=1e-6)
    assert main(["advise", "--kappa", "1", "--sweep", logs[0]]) == 2
    assert "need --log" in capsys.readouterr().err


def test_late_relaxation_of_one_exponential():
    """Noise-free r = 0.8 - 0.6 exp(-t / 50): the end's relaxation time is the curve's own."""
    t = np.arange(200.0)
    late = late_relaxation(t, 0.8 - 0.6 * np.exp(-t / 50), ceiling=1.0)
    assert late["rising"]
    assert late["tau"][1] == pytest.approx(50, rel=0.05)
    assert late["remaining"][1] == pytest.approx(0.6 * math.exp(-199 / 50), rel=0.1)
    assert late_relaxation(t[:8], t[:8]) is None  # fewer than three points a third


def _two_timescales(rng: np.random.Generator) -> np.ndarray:
    """A fast mode (tau 5) and a slow one (tau 200): 74% of the gain reached at step 99."""
    t = np.arange(100.0)
    return (0.75 - 0.4 * np.exp(-t / 5) - 0.3 * np.exp(-t / 200)
            + 0.003 * rng.standard_normal(t.size))


def _converged(rng: np.random.Generator) -> np.ndarray:
    t = np.arange(100.0)
    return 0.7 - 0.6 * np.exp(-t / 10) + 0.01 * rng.standard_normal(t.size)


def _collapse(rng: np.random.Generator) -> np.ndarray:
    t = np.arange(100.0)
    reward = np.where(t < 50, 0.1 + 0.5 * t / 50, np.maximum(0.6 - (t - 50) / 15, 0.0))
    return np.clip(reward + 0.02 * rng.standard_normal(t.size), 0, 1)


@pytest.mark.parametrize("seed", [7, 8, 9])
@pytest.mark.parametrize("curve,direction", [
    (_two_timescales, "raise"), (_converged, "keep"), (_collapse, "lower")])
def test_slow_mode_rule(tmp_path, seed, curve, direction):
    """A fast rise plus a drift still rising at the end is raised; a converged run is kept."""
    advice = advise_log(load_run(_log(tmp_path, curve(np.random.default_rng(seed)))))
    assert advice.recommendation["direction"] == direction
    if curve is _two_timescales:
        assert advice.basis["kind"] == "slow_mode" and advice.status == "bound"
        assert any(w.startswith("two timescales") for w in advice.warnings)
        # 90% of the gain needs tau_eq = 99 / ln(0.70 / 0.18) = 73.8 steps; the goal is 43
        assert 0.5 * 73.8 < advice.basis["tau"]["value"] < 2 * 73.8
        assert advice.basis["tau"]["value"] > advice.basis["goal_tau"]
    if curve is _converged:
        assert any("plateau that rises with the lr" in w for w in advice.warnings)
    if curve is _collapse:
        assert advice.basis["kind"] == "stability_limit"


def test_unbounded_slow_mode_keeps_the_whole_run_bound(tmp_path):
    """A linear rise on an unbounded reward: the end shows no decay at all, so the slow mode
    bounds nothing finite and the thirds' lower bound on tau carries the raise."""
    rng = np.random.default_rng(10)
    t = np.arange(100.0)
    reward = -2 + 0.01 * t + 0.05 * rng.standard_normal(t.size)
    advice = advise_log(load_run(_log(tmp_path, reward, lr=None)))
    assert advice.basis["kind"] == "stiffness_upper_bound"
    assert advice.recommendation["direction"] == "raise"
    assert advice.interval["lr_ratio"][0] > 2  # the bound asks more than one step gives
    assert advice.recommendation["lr_ratio"] == pytest.approx(2.0)


def test_a_noise_free_end_is_read_without_dividing_by_zero():
    steps = np.arange(1.0, 61.0)
    fallen = np.maximum(0.0, 0.5 - steps / 20)  # exactly 0 from step 10: residuals exactly 0
    late = late_relaxation(steps, fallen)
    assert late["t"] == 0.0 and not late["rising"]
    line = 0.2 + 0.01 * steps  # a noise-free line still rises
    assert late_relaxation(steps, line)["rising"]
    trend = run_trend(steps, line)  # its standard error is rounding: no noise, said so
    assert trend.kind == "rising" and trend.text.endswith("without noise")
    falling = run_trend(steps, 0.8 - 0.01 * steps)
    assert falling.kind == "fell" and falling.text.endswith("without noise")
    level = np.full(steps.size, 0.3)
    level[40:] = 0.1 + 0.2  # one rounding step (0.30000000000000004): no move at all
    still = run_trend(steps, level)
    assert still.kind == "flat" and still.text.endswith("without noise")


def test_a_rise_without_deceleration_says_no_finite_tau_fits(tmp_path):
    """A rise that bends upward within its noise: the thirds bound tau by infinity, which the
    text says in words ("no finite tau fits"), never as "tau >= inf" or "xinf"."""
    rng = np.random.default_rng(0)
    t = np.arange(300)
    reward = np.clip(0.3 + 0.0004 * t + 1e-6 * t**2 + 0.03 * rng.standard_normal(t.size), 0, 1)
    advice = advise_log(load_run(_log(tmp_path, reward)))
    assert advice.basis["tau"]["lower"] == math.inf
    text = json.dumps(advice.to_dict())
    assert "no finite tau fits" in text and "inf steps" not in text and "xinf" not in text


def test_a_straight_rise_keeps_its_centre_inside_the_slope_bound(tmp_path):
    """A nearly straight rise: the thirds show no bend (centre tau beyond the upper end that
    the mean slope and the range allow), so the central tau is the interval's upper end."""
    rng = np.random.default_rng(14)
    t = np.arange(300)
    reward = np.clip(0.3 + 0.0003 * t + 2e-7 * t**2 + 0.03 * rng.standard_normal(t.size), 0, 1)
    advice = advise_log(load_run(_log(tmp_path, reward)))
    tau = advice.basis["tau"]
    assert tau["kind"] == "measured_tau" and "mean slope and the range" in tau["method"]
    assert tau["lower"] <= tau["value"] <= tau["upper"]
    assert advice.recommendation["direction"] == "raise"
    assert math.isfinite(advice.recommendation["lr_ratio"])


def _wander(seed: int, n: int = 200) -> np.ndarray:
    """A stationary reward: a slow AR(1) wander (phi 0.97) under white sampling noise."""
    rng = np.random.default_rng(seed)
    wander = np.zeros(n)
    for i in range(1, n):
        wander[i] = 0.97 * wander[i - 1] + rng.normal(0.0, 0.01)
    return 0.6 + wander + rng.normal(0.0, 0.1, n)


@pytest.mark.parametrize("seed", [25, 38])
def test_advice_and_diagnosis_read_one_direction(tmp_path, seed):
    """A wander whose thirds' test calls a fall, while the diagnosis's state (the peak's
    look-elsewhere effect, window-scale noise) calls it flat: advise follows the state, so the
    two commands never say opposite things about one run."""
    reward = _wander(seed)
    assert run_trend(np.arange(1.0, reward.size + 1), reward).kind == "fell"
    run = load_run(_log(tmp_path, reward))
    state = grpodyn.diagnose(run).state
    advice = advise_log(run)
    assert state == "not_learning"
    assert advice.basis["trend"] == "flat"
    assert advice.recommendation["direction"] != "lower"


def test_a_pinned_reward_is_not_an_lr_problem(tmp_path):
    """A reward pinned at one value has no group spread: no lr changes it, and advise says so."""
    reward = np.concatenate([np.linspace(-0.7, -1.0, 10), np.full(90, -1.0)])
    advice = advise_log(load_run(_log(tmp_path, reward)))
    assert advice.basis["trend"] == "pinned"
    assert advice.status == "not_determined"
    assert advice.recommendation["direction"] == "keep"


def test_short_horizon_is_floored_at_the_fastest_settling(tmp_path):
    """--steps 10 at beta = 0.9: no lr reaches 90% of the gain for good in fewer than 26 steps
    (the map's fastest settling into the 10% band), so the goal is 26 / ln 10, said."""
    rng = np.random.default_rng(6)
    t = np.arange(300)
    reward = 0.8 - 0.6 * np.exp(-t / 150) + 0.01 * rng.standard_normal(t.size)
    advice = advise_log(load_run(_log(tmp_path, reward)), steps=10)
    assert advice.basis["goal_tau"] == pytest.approx(26 / math.log(10))
    assert any("fastest settling into the 10% band (26 steps" in w for w in advice.warnings)
    assert advice.recommendation["lr_ratio"] == pytest.approx(
        advice.basis["tau"]["value"] / advice.basis["goal_tau"])


def test_thirds_that_dip_then_rise_bound_nothing(tmp_path):
    """A reward that dips in its middle third and ends above its start: no single relaxation
    fits its thirds (their curvature gives tau in [0, 0]), which bounds nothing; the advice
    says so instead of dividing by a zero bound (a length-collapse run of the categorical
    simulator, seed 1207, reads this way)."""
    rng = np.random.default_rng(3)
    t = np.arange(300.0)
    reward = 1.16 - 0.09 * np.sin(np.pi * t / 299) ** 2 + 0.08 * (t / 299) ** 3 \
        + 0.02 * rng.standard_normal(t.size)
    run = load_run(_log(tmp_path, reward, lr=None))
    advice = advise_log(run)
    assert advice.basis["kind"] in ("not_determined", "slow_mode", "stiffness_upper_bound")
    assert advice.basis["stiffness"].get("lower") is None or advice.basis["stiffness"]["lower"] > 0


def test_a_rise_too_small_to_count_is_not_called_within_the_noise(tmp_path):
    """A success rate that rose 0.02, beyond its noise: the diagnosis calls it flat in
    practice; the advice said "did not move beyond its noise" beside that state's "beyond its
    noise"."""
    rng = np.random.default_rng(5)
    reward = 0.60 + 0.02 * np.linspace(0, 1, 200) + rng.normal(0, 0.003, 200)
    advice = advise_log(load_run(_log(tmp_path, reward)))
    words = " ".join(advice.reasoning) + " " + advice.basis["text"]
    assert "flat in practice" in words and advice.recommendation["direction"] == "raise"
    assert "did not move beyond its noise" not in words and "no move beyond noise" not in words


def test_the_advice_names_the_modes_the_diagnosis_flags_with_what_to_try():
    """The public collapse: the diagnosis flags degeneracy, concentration and instability; the
    advice to lower the lr said nothing of the first two, which the lr does not cure."""
    from grpodyn.empirical.diagnostics.diagnose import diagnose
    from grpodyn.empirical.diagnostics.verdict import REMEDIES

    e8 = (Path(__file__).parent / "data" / "real_logs" / "ShibukiZero__assignment5-alignment__"
          "artifacts_experiments_main_ch7_grpo_off_policy_sweep_runs_broad_e8_tb256_metrics."
          "excerpt.jsonl")
    run = load_run(e8)
    flagged = {name for name, v in diagnose(run).modes.items() if v.flag}
    assert {"advantage_degeneracy", "policy_concentration", "dynamical_instability"} <= flagged
    advice = advise_log(run)
    assert advice.recommendation["direction"] == "lower"
    notes = [w for w in advice.warnings if w.startswith("the diagnosis flags")]
    assert len(notes) == 2 and not any("dynamical_instability" in w for w in notes)
    for name in ("advantage_degeneracy", "policy_concentration"):
        assert any(name in w and REMEDIES[name] in w and "lowering the lr does not cure it"
                   in w for w in notes), name


def test_the_group_and_batch_line_says_product(tmp_path):
    """"only B G matters, not G apart" read as two letters, not the product B x G."""
    rng = np.random.default_rng(4)
    effect = advise_log(load_run(_log(tmp_path, 0.3 + 0.05 * rng.standard_normal(100))
                                 )).group_batch["effect"]
    assert "only the product B x G matters, not G alone" in effect and "B G matters" not in effect


def test_the_exponent_line_says_what_it_means_and_how_to_measure_it(tmp_path):
    """It named internal derivations (relaxation_time, adam_tau_lr_exponent) instead."""
    rng = np.random.default_rng(4)
    advice = advise_log(load_run(_log(tmp_path, 0.3 + 0.05 * rng.standard_normal(100))))
    line = next(x for x in advice.reasoning if x.startswith("tau ~ lr^p"))
    assert "--sweep" in line and "halves the relaxation time" in line
    assert "adam_tau_lr_exponent" not in line and "derivations" not in line


def test_a_slow_rise_the_diagnosis_reads_as_converged_is_said_so():
    """A public verl run: the diagnosis reads its last quarter as at its plateau, the advice its
    last third as a slow rise; the advice says why the two differ instead of contradicting."""
    log = Path(__file__).parent / "data" / "real_logs" / (
        "jianghoucheng__Agent_On_Policy_Distillation__wandb_run-20251203_214315-cr3q4lay_files_"
        "output.reward.log")
    run = load_run(log)
    advice = advise_log(run)
    assert diagnose(run).state == "converged" and advice.basis["kind"] == "slow_mode"
    assert any("reads this run as converged" in w for w in advice.warnings)


TINY_HIGH = Path(__file__).parents[1] / "studies" / "tiny_grids" / "data" / "tiny_grid2_high"


def test_a_policy_that_concentrated_without_gain_is_lowered_not_raised() -> None:
    # the tiny Llama with Adam at lr 3.6e-3: within three steps the reward falls from the warm
    # start to about 0.1 and stays there while the entropy collapses x0.05; the reward is flat
    # over the run, but the policy moved: the flat reward bounds nothing, the steps are too large
    run = load_run(TINY_HIGH / "adam_lr0.0036_G8_B8_seed0.json")
    advice = advise_log(run)
    assert advice.basis["kind"] == "policy_concentration" and advice.basis["trend"] == "flat"
    assert advice.recommendation["direction"] == "lower"
    assert advice.recommendation["lr"] == pytest.approx(0.0018)
    assert advice.interval["lr_ratio"] == [None, 0.5] and advice.status == "bound"
    assert not any("fall can also come from the lag" in w for w in advice.warnings)
    # the same grid's run at 4e-4, whose entropy fell as its reward rose, is not concentrated
    healthy = advise_log(load_run(TINY_HIGH.parent / "tiny_grid2"
                                  / "adam_lr0.0004_G8_B8_seed0.json"))
    assert healthy.basis["kind"] != "policy_concentration"


def test_a_flat_reward_under_a_halved_entropy_is_no_slow_relaxation() -> None:
    # Adam at 3.6e-3, seed 21: flat at 0.09 while the entropy fell x0.06 and came back to x0.3;
    # the groups do not confirm a concentration (the diagnosis does not flag it), but the policy
    # moved while the reward did not: no raise on the flat run's bound
    run = load_run(TINY_HIGH.parent / "tiny_grid2b_high" / "adam_lr0.0036_G8_B8_seed21.json")
    assert not diagnose(run).modes["policy_concentration"].flag
    advice = advise_log(run)
    assert advice.basis["kind"] == "policy_concentration"
    assert advice.recommendation["direction"] == "lower"
    assert "entropy fell to x0.06" in advice.basis["tau"]["method"]
    # the same reward with an entropy that stayed at its start keeps the flat run's bound
    steady = replace(run, metrics={**run.metrics, "entropy": np.full(run.n_points, 0.7)})
    assert advise_log(steady).basis["kind"] == "stiffness_upper_bound"


def test_a_reward_on_an_exact_line_gets_advice(tmp_path) -> None:
    # no noise at all: the rise has a standard error of zero, said in words
    path = tmp_path / "line.csv"
    path.write_text("step,reward\n" + "".join(f"{i},{i}\n" for i in range(30)))
    advice = advise_log(load_run(path))
    assert advice.basis["trend"] == "rising" and "without noise" in advice.basis["trend_text"]


def test_the_entropy_alone_lowers_nothing_at_the_ceiling_or_on_a_pinned_reward() -> None:
    run = load_run(TINY_HIGH.parent / "tiny_grid2b_high" / "adam_lr0.0036_G8_B8_seed21.json")
    rng = np.random.default_rng(0)
    # the same entropy under a success rate flat at its ceiling: convergence, not a failure
    solved = replace(run, reward=np.clip(0.985 + 0.005 * rng.standard_normal(run.n_points), 0, 1))
    assert advise_log(solved).basis["kind"] != "policy_concentration"
    # a reward pinned at one value keeps its own basis: no group has spread, the lr moves nothing
    pinned = replace(run, reward=np.zeros(run.n_points))
    advice = advise_log(pinned)
    assert advice.basis["trend"] == "pinned" and advice.basis["kind"] == "not_determined"


def test_a_few_points_without_noise_bound_nothing(tmp_path):
    """Three points on a line show no noise; their noise cannot be told from zero, so their
    curvature bounds nothing (it gave tau >= 6e14 steps and an interval from x5e13)."""
    advice = advise_log(load_run(_log(tmp_path, np.array([0.3, 0.4, 0.5]))))
    assert advice.basis["kind"] == "not_determined" and advice.status == "not_determined"
    assert advice.recommendation["direction"] == "keep"
    assert advice.interval["lr_ratio"] == [None, None]
    assert "too few to tell a noise-free series" in advice.basis["text"]
    assert not any("plateau" in w and w.startswith("keep rests") for w in advice.warnings)


def test_a_rise_without_deceleration_says_no_stiffness_is_seen():
    """No finite tau fits a rise without deceleration: the stiffness is said to be too small
    to show, not "k <= (1 - beta) / tau = 0 per step" (a tiny-model run read that way)."""
    from grpodyn.empirical.logs.advice_text import basis_text

    tau = {"kind": "stiffness_upper_bound", "value": None, "lower": math.inf, "upper": None,
           "status": "bound", "method": "curvature of the rise over its thirds"}
    text = basis_text(tau, 0.9)
    assert "no finite tau fits" in text and "k too small to show" in text
    assert "= 0 per step" not in text


def test_a_horizon_that_asks_more_than_one_step_says_so(tmp_path):
    """--steps: the advice is the lr that reaches the goal; beyond x2 (1 / margin) a reason
    says to reach it in steps, as the advice without a horizon does."""
    rng = np.random.default_rng(0)
    t = np.arange(300)
    reward = 0.8 - 0.6 * np.exp(-t / 150) + 0.01 * rng.standard_normal(t.size)
    advice = advise_log(load_run(_log(tmp_path, reward)), steps=100)
    assert advice.recommendation["lr_ratio"] > 2
    assert any("is the lr the horizon asks for" in line
               and "in raises of at most x2" in line for line in advice.reasoning)
