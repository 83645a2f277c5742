"""The advice's statuses and words say what its numbers are.

Seeded synthetic TRL logs pin each: a number that rests on an assumed momentum says so; a slow
mode's tau is said as a median, the reward range's cap or a lower bound, never a central estimate
where it is not one; the note on G and B names a G the user gave; an interval that leaves out
the advice says what it bounds before its numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.advice import advise_log
from grpodyn.empirical.logs.infer import group_batch_notes
from grpodyn.empirical.logs.loaders import load_run

LZHIHAN = (Path(__file__).parent / "data" / "real_logs"
           / "lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_checkpoint-1200"
             "_trainer_state.excerpt.json")
STEPS = np.arange(100.0)


def _log(tmp_path: Path, reward: np.ndarray, name: str = "trainer_state.json") -> Path:
    rows = [{"step": i + 1, "reward": float(r), "learning_rate": 1e-5}
            for i, r in enumerate(reward)]
    path = tmp_path / name
    path.write_text(json.dumps({"log_history": rows}))
    return path


def _exponential(seed: int = 4, tau: float = 50.0) -> np.ndarray:
    t = np.arange(200.0)
    rng = np.random.default_rng(seed)
    return 0.85 - 0.6 * np.exp(-t / tau) + 0.02 * rng.standard_normal(t.size)


def _fast_then_drift(seed: int, start: float, drift: float) -> np.ndarray:
    """A fast mode (tau 5) and a straight drift that shows no decay by the run's end."""
    rng = np.random.default_rng(seed)
    return (start + 0.3 * (1 - np.exp(-STEPS / 5)) + drift * STEPS
            + 0.01 * rng.standard_normal(STEPS.size))


def test_a_stiffness_on_an_assumed_momentum_says_so(tmp_path):
    """k = (1 - beta) / tau at beta = 0.9 assumed was reported as if beta were known."""
    run = load_run(_log(tmp_path, _exponential()))
    advice = advise_log(run)
    assert advice.basis["kind"] == "measured_tau" and advice.status == "determined"
    stiffness = advice.basis["stiffness"]
    assert stiffness["momentum_source"] == "assumed" and "assumed" in stiffness["reason"]
    momentum = advice.basis["momentum"]
    assert momentum["source"] == "assumed" and momentum["value"] == 0.9
    assert {"stiffness", "kappa"} <= set(momentum["bears_on"])
    assert "per step (at beta = 0.9, assumed)" in advice.basis["text"]
    assert any("resting on it: stiffness, kappa" in line for line in advice.reasoning)
    given = advise_log(run, momentum=0.9)
    assert given.basis["stiffness"]["momentum_source"] == "user"
    assert "assumed" not in given.basis["text"] + given.basis["stiffness"]["reason"]
    assert given.basis["stiffness"]["value"] == stiffness["value"]  # the numbers do not move


def test_a_goal_floored_on_an_assumed_momentum_says_its_ratio_rests_on_it(tmp_path):
    advice = advise_log(load_run(_log(tmp_path, _exponential(6, tau=150))), steps=10)
    assert {"goal_tau", "lr_ratio"} <= set(advice.basis["momentum"]["bears_on"])
    assert any("at beta = 0.9, assumed)" in w for w in advice.warnings)
    assert any(line.endswith("this ratio rests on beta = 0.9, assumed")
               for line in advice.reasoning)


def test_a_tau_the_inertial_fit_measured_rests_on_the_momentum(tmp_path):
    """The inertial model's tau is (1 - beta) / k: it rests on beta as the stiffness does."""
    rng = np.random.default_rng(0)
    t = np.arange(200.0)
    reward = 0.7 - 0.5 * (1 + t / 20) * np.exp(-t / 20) + 0.005 * rng.standard_normal(t.size)
    advice = advise_log(load_run(_log(tmp_path, reward)))
    tau = advice.basis["tau"]
    assert tau["model"] == "inertial" and tau["momentum_source"] == "assumed"
    assert "tau" in advice.basis["momentum"]["bears_on"]
    assert "inertial model (95% interval) (at beta = 0.9, assumed)" in advice.basis["text"]


def test_a_slow_mode_at_the_ranges_cap_is_not_called_a_central_estimate(tmp_path):
    """The median gain to come fills the room below the ceiling: median = 97.5% quantile."""
    advice = advise_log(load_run(_log(tmp_path, _fast_then_drift(0, 0.1, 0.002))))
    tau = advice.basis["tau"]
    assert advice.basis["kind"] == "slow_mode" and tau["estimate"] == "range_cap"
    assert tau["value"] == tau["upper"]
    assert "(central estimate" not in tau["method"] and "a cap, not a central" in tau["method"]
    assert f"tau = {tau['value']:.3g} steps (the reward range's cap)" in advice.basis["text"]
    assert any("the raise follows the range's cap" in w for w in advice.warnings)


def test_a_slow_mode_without_a_median_says_tau_at_least(tmp_path, capsys):
    """No ceiling and no decay at the median: value null, and the text said 'tau = lower'."""
    path = _log(tmp_path, _fast_then_drift(3, -1.0, 0.003))
    advice = advise_log(load_run(path))
    tau = advice.basis["tau"]
    assert tau["value"] is None and tau["estimate"] == "lower_quantile"
    said = f"tau >= {tau['lower']:.3g} steps"
    assert f"{said} [{tau['lower']:.3g}, open]" in advice.basis["text"]
    assert "central estimate" not in tau["method"]
    assert any(f"the slow mode's {said} is longer" in line for line in advice.reasoning)
    assert main(["advise", "--log", str(path)]) == 0
    assert f"tau = {tau['lower']:.3g}" not in capsys.readouterr().out.replace("\n      ", " ")


def test_a_median_slow_mode_keeps_its_central_estimate(tmp_path):
    advice = advise_log(load_run(_log(tmp_path, _fast_then_drift(0, -1.0, 0.003))))
    tau = advice.basis["tau"]
    assert tau["estimate"] == "median" and "central estimate" in tau["method"]
    assert f"tau = {tau['value']:.3g} steps [" in advice.basis["text"]


@pytest.mark.parametrize("argv", [["diagnose", str(LZHIHAN), "--group-size", "8", "--json"],
                                  ["advise", "--log", str(LZHIHAN), "--group-size", "8",
                                   "--json"]])
def test_the_note_on_g_and_b_names_the_users_g(argv, capsys):
    assert main(argv) == 0
    notes = [w for w in json.loads(capsys.readouterr().out)["warnings"] if "group size G" in w]
    assert notes == ["group size G = 8 (source: user); batch B: not determined (logged points "
                     "are not consecutive steps (each may average several))"]


def test_the_note_on_g_and_b_goes_when_both_are_given():
    run = load_run(LZHIHAN)
    assert any(w.startswith("group size G and batch B: not determined") for w in run.warnings)
    run.meta = run.meta.with_overrides(group_size=8, batch=16)
    assert not any("not determined" in w for w in group_batch_notes(run))
    before = list(run.warnings)
    diagnose(run)
    assert run.warnings == before  # the diagnosis reads the run; it does not rewrite it
    only_b = load_run(LZHIHAN)
    only_b.meta = only_b.meta.with_overrides(batch=16)
    assert [w for w in group_batch_notes(only_b) if "batch B" in w][0].startswith(
        "group size G: not determined (")


def _interval_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  interval: "))
    rest = [x.strip() for x in lines[at + 1:at + 4] if x.startswith("      ")]
    return " ".join([lines[at].strip(), *rest])


def test_an_interval_below_a_keep_says_first_what_it_bounds(tmp_path, capsys):
    """'interval: [x0.189, x0.285]' under 'keep the lr x1' read as the advice's interval."""
    path = str(_log(tmp_path, _exponential(4, tau=10)))
    line = _interval_line(["advise", "--log", path], capsys)
    assert line.startswith("interval: of the least lr that still reaches the goal, not of the "
                           "advice: [x")
    assert "the advice x1 is above it" in line


def test_an_interval_above_a_capped_raise_says_first_what_it_bounds(tmp_path, capsys):
    path = str(_log(tmp_path, _fast_then_drift(0, -1.0, 0.003)))
    line = _interval_line(["advise", "--log", path], capsys)
    assert line.startswith("interval: of the raise the evidence asks, not of the advice: [x")
    assert "the advice x2 is one raise toward its lower end" in line


@pytest.mark.parametrize("n", [99, 100, 101])
def test_a_noise_free_straight_rise_bounds_tau_and_measures_nothing(tmp_path, n):
    """Thirds of unequal sizes once read a straight line's unequal gains as a tau of zero width."""
    run = load_run(_log(tmp_path, 0.1 + 0.003 * np.arange(1.0, n + 1)))
    advice = advise_log(run)
    whole = advice.basis["tau"].get("whole_run", advice.basis["tau"])
    assert whole["kind"] == "stiffness_upper_bound" and whole["lower"] == n - 1
    assert advice.status == "bound" and advice.recommendation["direction"] == "raise"
    assert "t = " not in advice.basis["tau"]["method"]
    curved = advise_log(load_run(_log(tmp_path, 0.8 - 0.6 * np.exp(-np.arange(n) / 30.0))))
    assert curved.basis["tau"]["kind"] == "measured_tau"
