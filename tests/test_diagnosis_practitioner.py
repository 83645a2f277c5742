"""The diagnosis reads like a careful practitioner: hacking, headline, decline, signs, cycles."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.loaders import Run, load_run

DATA = Path(__file__).parent / "data" / "real_logs"
E8 = DATA / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_"
             "policy_sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")


def _near_ceiling(held_gain: float, seed: int = 3) -> Run:
    """A verl-like run: train 0.85 -> 0.98, validation every 10 steps rising by held_gain."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, 301, dtype=float)
    train = np.clip(0.85 + 0.13 * (1 - np.exp(-t / 80)) + rng.normal(0, 0.02, t.size), 0, 1)
    held = np.full(t.size, np.nan)
    at = np.arange(9, t.size, 10)
    held[at] = 0.845 + held_gain * (1 - np.exp(-t[at] / 80)) + rng.normal(0, 0.005, at.size)
    return Run("verl-like", "test", t, train, {"heldout_reward": held})


def test_a_smaller_held_out_rise_near_the_ceiling_is_not_hacking() -> None:
    """Train 0.85 -> 0.98 while validation rises 0.845 -> 0.88: a gap, not hacking."""
    d = diagnose(_near_ceiling(0.035))
    verdict = d.modes["reward_hacking"]
    assert verdict.judged and not verdict.flag and verdict.score < 0.5
    assert "it follows" in verdict.evidence
    assert d.primary is None and d.healthy


def test_a_held_out_reward_that_stays_flat_or_falls_is_hacking() -> None:
    """The same train curve with a flat, then a falling, validation reward is hacking."""
    assert diagnose(_near_ceiling(0.0)).primary == "reward_hacking"
    assert diagnose(_near_ceiling(-0.06)).primary == "reward_hacking"


def _shaped(curve: np.ndarray, noise: float, seed: int = 0) -> Run:
    rng = np.random.default_rng(seed)
    t = np.arange(1, curve.size + 1, dtype=float)
    return Run("shaped", "test", t, curve + rng.normal(0, noise, curve.size), {})


def test_a_flat_run_is_never_called_healthy() -> None:
    """A not_learning run: no mode flagged, yet the headline names the state, not health."""
    d = diagnose(_shaped(np.full(300, 0.4), 0.05))
    assert d.state == "not_learning" and d.primary is None
    assert not d.healthy and "not learning" in d.headline and "healthy" not in d.headline
    assert d.to_dict()["headline"] == d.headline and d.to_dict()["healthy"] is False


def test_a_rise_then_a_fall_is_declining_with_the_step_of_its_peak() -> None:
    """-4.5 -> +3.3 -> -0.4: declining since the peak, never flat from the start."""
    t = np.arange(300)
    curve = np.where(t < 150, -4.5 + 7.8 * t / 150, 3.3 - 3.7 * (t - 150) / 150)
    d = diagnose(_shaped(curve, 2.0))
    assert d.state == "declining" and "flat" not in d.state_evidence
    assert d.peak_step == pytest.approx(150, abs=30)
    assert f"peak near step {d.peak_step:g}" in d.headline and not d.healthy


def test_a_pinned_reward_is_not_learning() -> None:
    """A reward that falls to -1 and sits there exactly carries no gradient: not learning."""
    curve = np.concatenate([np.linspace(-0.7, -1.0, 9), np.full(200, -1.0)])
    run = Run("pinned", "test", np.arange(1, curve.size + 1, dtype=float), curve, {})
    d = diagnose(run)
    assert d.state == "not_learning" and "pinned at -1" in d.state_evidence


def test_every_change_in_the_text_carries_its_direction_in_words() -> None:
    """Never "fell +0.815" or "rose -0.1": the verb carries the sign, the number none."""
    t = np.arange(300)
    curves = [0.2 + 0.6 * (1 - np.exp(-t / 60)), np.where(t < 100, 0.2 + 0.005 * t, 0.7 - 0.006 *
                                                          (t - 100)), np.full(300, 0.5)]
    for curve in curves:
        d = diagnose(_shaped(np.clip(curve, 0, 1), 0.03))
        text = " ".join([d.state_evidence, d.headline] + [v.evidence for v in d.modes.values()])
        assert not re.search(r"\b(fell|rose|moved|gain|grew)( back)? [+-]", text), text


def test_at_its_best_is_the_best_level_it_names() -> None:
    """The level called "at its best" is the best window mean before the last quarter."""
    t = np.arange(300)
    curve = np.where(t < 120, 0.3 + 0.005 * t, 0.9 - 0.005 * (t - 120))
    d = diagnose(_shaped(curve, 0.02))
    best = float(re.search(r"([0-9.]+) at its best", d.state_evidence).group(1))
    assert best == pytest.approx(0.9, abs=0.05)


def test_a_run_still_rising_at_its_end_did_not_fall_from_its_best() -> None:
    """A best smoothed level at the end of a rise is not the start of a fall."""
    t = np.arange(300)
    d = diagnose(_shaped(0.2 + 0.002 * t, 0.03))
    words = d.modes["dynamical_instability"].evidence
    assert "at its best smoothed level at the end" in words and "fell" not in words


def test_a_limit_cycle_is_a_dynamical_instability() -> None:
    """An oscillating reward (complex AR(2) poles near the unit circle) is an instability."""
    t = np.arange(300)
    d = diagnose(_shaped(0.5 + 0.15 * np.sin(2 * np.pi * t / 14), 0.05))
    verdict = d.modes["dynamical_instability"]
    assert d.primary == "dynamical_instability" and "limit cycle" in verdict.evidence
    quiet = diagnose(_shaped(np.full(300, 0.5), 0.05, seed=1))
    assert not quiet.modes["dynamical_instability"].flag


def test_the_public_collapse_is_an_instability_declining_since_its_peak() -> None:
    """ShibukiZero broad_e8_tb256 (excerpt): rose to 0.44 by step 16, collapsed to 0."""
    d = diagnose(load_run(E8))
    assert d.primary == "dynamical_instability" and d.state == "declining"
    assert 10 <= d.peak_step <= 18
    assert d.headline.startswith("dynamical_instability (declining since its peak near step")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grpodyn", *args], capture_output=True,
                          text=True, timeout=120)


def test_cli_diagnose_until_is_causal_and_reports_the_early_warning() -> None:
    """--until 19 sees the precursors of the collapse; --until 15 sees none."""
    out = _cli("diagnose", str(E8), "--until", "19", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["until"] == 19 and result["state"] == "too_short"
    assert result["early_warning"]["step"] <= 19
    assert {"kl_rise", "length_departure"} <= set(result["early_warning"]["signals"])
    early = json.loads(_cli("diagnose", str(E8), "--until", "15", "--json").stdout)
    assert early["early_warning"] is None
    text = _cli("diagnose", str(E8), "--until", "19")
    assert "early warning at step" in text.stdout and "not a verdict" in text.stdout


@pytest.mark.parametrize("until", ["-3", "abc", "nan"])
def test_cli_diagnose_refuses_a_bad_until_in_one_line(until: str) -> None:
    """A step before the log, or not a number: one line, exit 2."""
    out = _cli("diagnose", str(E8), "--until", until)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_an_entropy_that_never_fell_is_not_written_as_its_lowest() -> None:
    """Entropy rising from its start: the words say it never fell, and name no fall."""
    rng = np.random.default_rng(4)
    t = np.arange(1, 201, dtype=float)
    reward = np.clip(0.02 + rng.normal(0, 0.01, t.size), 0, 1)
    entropy = 1.0 + t / 100 + rng.normal(0, 0.02, t.size)
    d = diagnose(Run("hot", "test", t, reward, {"entropy": entropy}))
    words = d.modes["policy_concentration"].evidence
    assert "never lower" in words and "at its lowest (x" not in words
    assert "concentrated onto wrong answers" not in words


def test_the_hacking_check_names_its_window_when_the_rise_is_within_noise() -> None:
    """A held-out window whose optimised reward rose within its noise says 'beyond its noise'."""
    rng = np.random.default_rng(5)
    t = np.arange(1, 201, dtype=float)
    train = 0.5 + 0.01 * t / 200 + rng.normal(0, 0.05, t.size)
    held = np.full(t.size, np.nan)
    held[9::10] = 0.5 + rng.normal(0, 0.01, held[9::10].size)
    d = diagnose(Run("noisy", "test", t, train, {"heldout_reward": held}))
    words = d.modes["reward_hacking"].evidence
    assert "steps with a held-out reward" in words and "noise" in words
    assert "did not rise (rose" not in words


def _early_plateau(eval_on_start: bool) -> Run:
    """A proxy at its plateau (0.4 -> 0.7) by step 15; the held-out every 20 steps, flat at 0.2.

    With ``eval_on_start`` the held-out also holds its value before training (0.2) at the first
    training point, as the loaders place TRL's ``eval_on_start`` and verl's
    ``val_before_train``.
    """
    rng = np.random.default_rng(11)
    t = np.arange(1, 301, dtype=float)
    train = 0.4 + 0.3 * (1 - np.exp(-t / 5)) + rng.normal(0, 0.02, t.size)
    held = np.full(t.size, np.nan)
    held[19::20] = 0.2 + rng.normal(0, 0.01, held[19::20].size)
    if eval_on_start:
        held[0] = 0.2
    return Run("early-plateau", "test", t, train, {"heldout_reward": held})


def test_a_rise_before_the_first_evaluation_is_said_and_one_at_the_start_sees_it() -> None:
    """The coupling reads the steps with a held-out reward; a rise before them is named."""
    unseen = diagnose(_early_plateau(False)).modes["reward_hacking"]
    assert not unseen.flag and "to the first held-out step (20) it had risen" in unseen.evidence
    assert "eval_on_start" in unseen.evidence and "val_before_train" in unseen.evidence
    seen = diagnose(_early_plateau(True)).modes["reward_hacking"]
    assert seen.flag and "to the first held-out step" not in seen.evidence


def test_an_unbounded_beta_phi_is_written_in_words() -> None:
    """The ijinyu1113 excerpt's prompts sit at one rate: phi is unbounded, never 'inf'."""
    run = load_run(DATA / "ijinyu1113__Learned-Remasking-Policy-for-dLLM__pretrained_"
                          "checkpoints_checkpoint-2000_trainer_state.excerpt.json")
    words = diagnose(run).modes["policy_concentration"].evidence
    assert "phi unbounded" in words and "inf" not in re.findall(r"phi (\S+)", words)


def test_every_flagged_mode_says_what_to_try(capsys) -> None:
    """The public collapse flags three modes: each carries a remedy in the JSON and a "try:"
    line under it in the text; an unflagged mode carries none."""
    from grpodyn.cli import main

    assert main(["diagnose", str(E8), "--json"]) == 0
    modes = json.loads(capsys.readouterr().out)["modes"]
    flagged = [name for name, v in modes.items() if v["flag"]]
    assert len(flagged) >= 2
    for name, v in modes.items():
        assert bool(v["remedy"]) == v["flag"], name
    assert main(["diagnose", str(E8)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 100 for line in lines[1:])  # wrapped, the path's line apart
    for name in flagged:
        at = next(i for i, line in enumerate(lines) if line.startswith(f"! {name} "))
        at = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith("      "))
        end = next((i for i in range(at + 1, len(lines)) if not lines[i].startswith("      ")),
                   len(lines))
        said = " ".join(line.strip() for line in lines[at:end])
        assert said == f"try: {modes[name]['remedy']}"
    assert sum(line.startswith("    try: ") for line in lines) == len(flagged)


def test_numbers_carry_the_figures_they_mean() -> None:
    """A verl run pinned at -1 after starting at -0.675977 with its entropy down to 0.3%:
    printed as "(it started at -0.675977)", "(x0.00, ...)" and "p = 3.9e-199"."""
    rng = np.random.default_rng(2)
    t = np.arange(1, 241, dtype=float)
    reward = np.full(t.size, -1.0)
    reward[:10] = -0.675977 - 0.03 * np.arange(10)
    entropy = 0.06 * np.exp(-t / 30) + 0.000188 + rng.normal(0, 1e-6, t.size)
    d = diagnose(Run("verl-like", "test", t, reward, {"entropy": entropy}))
    assert "(it started at -0.676)" in d.state_evidence
    words = d.modes["policy_concentration"].evidence
    assert re.search(r"at its lowest \(x0\.00[1-9]\d?, steps", words), words
    assert "x0.00," not in words
    cycle = d.modes["dynamical_instability"].evidence
    assert not re.search(r"p = \d(\.\d+)?e-\d{2,}", cycle), cycle
    assert not re.search(r"x\d(\.\d+)?e-\d{2,}", cycle), cycle


def test_a_short_prefix_says_each_reason_once_and_never_too_short_to_judge_a_flag(capsys):
    """--until 19: the state's reason was repeated under each of the four modes; --until 25:
    "dynamical_instability (too short to judge)" flagged a mode and said it could not judge."""
    from grpodyn.cli import main

    assert main(["diagnose", str(E8), "--until", "19"]) == 0
    out = capsys.readouterr().out
    state = next(line for line in out.splitlines() if line.startswith("  state: "))
    reason = state.split(": ", 2)[2]
    assert out.count(reason) == 1 and out.count("not judged: as the state says") == 4
    assert main(["diagnose", str(E8), "--until", "25", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["state"] == "too_short" and result["primary"] is not None
    assert "too short to judge" not in result["headline"]
    assert result["headline"] == f"{result['primary']} (too short to read its trend)"


def test_an_early_warning_says_what_to_try(capsys) -> None:
    """--until 19 warned of the collapse and said nothing of what to do about it."""
    from grpodyn.cli import main

    assert main(["diagnose", str(E8), "--until", "19", "--json"]) == 0
    warning = json.loads(capsys.readouterr().out)["early_warning"]
    assert "checkpoint" in warning["remedy"] and "lower the lr" in warning["remedy"]
    assert main(["diagnose", str(E8), "--until", "19"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("    try: "))
    assert lines[at - 1].startswith("      ") or lines[at - 1].startswith("    length_")
    said = " ".join(x.strip() for x in lines[at:at + 3] if x.startswith(("    try", "      ")))
    assert said.startswith(f"try: {warning['remedy']}")


def test_the_last_quarters_change_carries_its_noise() -> None:
    """Rusheel86's run: "fell 0.708 over the last quarter" of ten points with a noise of 0.5,
    a change the data barely determine, printed without it (the state says its noise)."""
    rng = np.random.default_rng(7)
    t = np.arange(1, 41, dtype=float)
    reward = 0.4 + rng.normal(0, 0.5, t.size)
    d = diagnose(Run("trl-like", "test", t, reward, {"frac_reward_zero_std": np.full(40, 0.2)}))
    words = d.modes["advantage_degeneracy"].evidence
    assert re.search(r"(rose|fell) \d\.\d{3} over the last quarter \(noise \d\.\d{3}\)", words) \
        or "did not change over the last quarter (noise" in words, words


def test_a_fall_from_the_first_step_names_no_peak():
    """A reward that falls from its first step has no peak: the state reads a fall from the
    start, and neither the state nor the headline names a best below the start."""
    steps = np.arange(1, 61)
    reward = 0.7 - 0.006 * steps + 0.005 * np.random.default_rng(3).standard_normal(steps.size)
    d = diagnose(Run("fall", "test", steps.astype(float), reward, {}))
    assert d.state == "declining" and d.from_start
    assert "from the start" in d.state_evidence and "at its best" not in d.state_evidence
    assert "declining from its start at step 1" in d.headline and "peak" not in d.headline
    assert d.to_dict()["from_start"] is True
    assert not any("peak" in note for note in d.notes)
    assert "state's peak" not in d.modes["dynamical_instability"].evidence


@pytest.mark.parametrize(("level", "at_top"), [(0.995, True), (0.5, False)])
def test_a_run_flat_at_the_top_of_its_range_from_the_start_names_the_missing_spread(level,
                                                                                    at_top):
    """A success rate at 0.995 from step 1 learns nothing because nearly every group is solved."""
    rng = np.random.default_rng(5)
    t = np.arange(1, 201, dtype=float)
    reward = np.clip(level + rng.normal(0, 0.004, t.size), 0, 1)
    d = diagnose(Run("flat", "test", t, reward, {}))
    assert d.state == "not_learning" and "flat from the start" in d.state_evidence
    assert ("harder prompts are the lever" in d.state_evidence) == at_top
