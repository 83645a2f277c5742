"""Diagnosis of the four failure modes: the labelled bandit test bed, missing metrics, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.diagnostics import MODES, diagnose
from grpodyn.empirical.loaders import Run
from grpodyn.empirical.testbed import LABELS, bandit_testbed, evaluate
from grpodyn.numerics.validation import InputError


@pytest.fixture(scope="module")
def scored():
    return evaluate(bandit_testbed(seeds=5))


def test_testbed_precision_and_recall(scored):
    for label in LABELS:
        assert scored["model"]["per_mode"][label]["precision"] >= 0.9, label
        assert scored["model"]["per_mode"][label]["recall"] >= 0.9, label


def test_healthy_runs_are_never_flagged_unstable(scored):
    assert scored["model"]["healthy_flagged_unstable"] == 0


def test_threshold_rules_are_scored_on_the_same_runs(scored):
    rules = scored["threshold_rules"]
    assert sum(sum(row.values()) for row in rules["confusion"].values()) == 25


def _run(n=200, **metrics):
    steps = np.arange(1.0, n + 1)
    reward = 0.9 - 0.6 * np.exp(-steps / 40) + 0.02 * np.random.default_rng(0).normal(size=n)
    return Run(source="synthetic", format="test", steps=steps, reward=reward, metrics=metrics)


def test_missing_metrics_say_which_modes_cannot_be_judged():
    d = diagnose(_run())
    judged = {name: v.judged for name, v in d.modes.items()}
    assert judged == {"reward_hacking": False, "advantage_degeneracy": False,
                      "policy_concentration": False, "dynamical_instability": True}
    assert d.primary is None and len(d.notes) == 3
    assert "held-out" in d.modes["reward_hacking"].evidence


def test_group_size_predicts_zero_std_groups_when_not_logged():
    d = diagnose(_run(), group_size=2)
    verdict = d.modes["advantage_degeneracy"]
    assert verdict.judged and "predicted from the reward at G = 2" in verdict.evidence


def test_a_collapse_is_unstable_and_upstream_of_what_follows():
    run = _run()
    run.reward[120:] = 0.02
    run.metrics["entropy"] = np.where(np.arange(200) < 120, 0.5, 1e-4)
    d = diagnose(run)
    assert d.modes["dynamical_instability"].flag and d.modes["policy_concentration"].flag
    assert d.primary == "dynamical_instability"


def test_too_short_a_log_is_refused():
    with pytest.raises(InputError, match="at least 20"):
        diagnose(_run(n=10))


def test_cli_diagnose_keys(tmp_path, capsys):
    case = bandit_testbed(seeds=1)[LABELS.index("advantage_degeneracy")]
    history = [{"step": float(s), "reward": float(r),
                **{k: float(v[i]) for k, v in case.run.metrics.items() if np.isfinite(v[i])}}
               for i, (s, r) in enumerate(zip(case.run.steps, case.run.reward, strict=True))]
    log = tmp_path / "trainer_state.json"
    log.write_text(json.dumps({"log_history": history}))
    assert main(["diagnose", str(log), "--group-size", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["modes"]) == set(MODES) and out["primary"] == "advantage_degeneracy"
    assert set(out["modes"]["advantage_degeneracy"]) >= {"flag", "score", "evidence"}


def test_tiny_trl_design_testbed_is_shipped_and_scored():
    """The TRL runs the diagnosis was designed on (seeds 0-39, 40 per label). Every label
    >= 0.85; the misses are four concentration runs of seeds 0-24 (made without a warm-up of
    the learning rate) that the first updates wrecked (reward 0 with the entropy kept: read as
    degeneracy), one concentration run that concentrated and then diverged, and one G = 2 run
    that truly collapsed (docs/findings.md, section 4)."""
    from grpodyn.empirical.testbed import TUNING_SEEDS, tiny_testbed

    cases = tiny_testbed(seeds=TUNING_SEEDS)
    assert all(sum(c.label == label for c in cases) == 40 for label in LABELS)
    evaluation = evaluate(cases)
    scored = evaluation["model"]
    assert scored["healthy_flagged_unstable"] == 0
    for label in LABELS:
        assert scored["per_mode"][label]["precision"] >= 0.9, label
        assert scored["per_mode"][label]["recall"] >= 0.85, label
    assert scored["per_mode"]["policy_concentration"]["precision"] == 1.0
    wrecked = [c["name"] for c in evaluation["cases"] if c["label"] == "policy_concentration"
               and c["model"] == "advantage_degeneracy"]
    assert len(wrecked) == 4
    assert all(int(name.rsplit("seed", 1)[1]) < 25 for name in wrecked)


def test_tiny_trl_heldout_testbed_meets_the_target():
    """The held-out runs (seeds 40-49, made while revision 4 of the diagnosis was frozen) share
    no seed with the design runs; every label has ten runs; precision and recall >= 0.9 for
    every label (measured: all 1.00) and no healthy run flagged unstable. A change of the
    diagnosis that fails this has to be judged on fresh seeds, not tuned against these."""
    from grpodyn.empirical.testbed import HELDOUT_SEEDS, TUNING_SEEDS, tiny_testbed

    assert not set(HELDOUT_SEEDS) & set(TUNING_SEEDS)
    heldout = tiny_testbed(seeds=HELDOUT_SEEDS)
    assert all(sum(c.label == label for c in heldout) == 10 for label in LABELS)
    scored = evaluate(heldout)["model"]
    assert scored["healthy_flagged_unstable"] == 0
    for label in LABELS:
        assert scored["per_mode"][label]["precision"] >= 0.9, label
        assert scored["per_mode"][label]["recall"] >= 0.9, label
