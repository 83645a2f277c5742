"""Diagnosis of the four failure modes: the labelled bandit test bed, missing metrics, the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.diagnostics.diagnose import MODES, Diagnosis, diagnose
from grpodyn.empirical.diagnostics.testbed import LABELS, bandit_testbed, evaluate
from grpodyn.empirical.logs.loaders import Run
from grpodyn.ground import InputError


@pytest.fixture(scope="module")
def scored() -> dict:
    """Score the bandit test bed (5 seeds per label) once."""
    return evaluate(bandit_testbed(seeds=5))


def test_testbed_precision_and_recall(scored: dict) -> None:
    """Score every bandit label but concentration at >= 0.9.

    Every label but concentration >= 0.9. The bandit's concentration runs end at reward 1.00
    (the policy locked onto the rewarded arm): an entropy collapse at the ceiling is
    convergence, not a failure, so they are called converged (the only
    healthy-precision loss); studies/tiny_grids/findings.md, section 4b.
    """
    for label in LABELS:
        if label in ("policy_concentration", "healthy"):
            continue
        assert scored["model"]["per_mode"][label]["precision"] >= 0.9, label
        assert scored["model"]["per_mode"][label]["recall"] >= 0.9, label
    assert scored["model"]["per_mode"]["healthy"]["recall"] == 1.0
    locked = [c for c in scored["cases"] if c["label"] == "policy_concentration"]
    assert all(c["model"] == "healthy" for c in locked)


def test_the_bandit_can_only_lock_onto_the_rewarded_arm() -> None:
    """Show that the bandit can only lock onto its rewarded arm.

    Why the bandit bed has no concentration below the ceiling (source matrix relabels its
    locked runs converged): on-policy GRPO without KL never lowers the rewarded arm's logit,
    with two arms or three, whatever the learning rate.
    """
    from grpodyn.empirical.bandit.simulation import BanditConfig, simulate_bandit

    for arms in (2, 3):
        for lr in (0.5, 3.0):
            sim = simulate_bandit(BanditConfig(lr=lr, group_size=8, prompts=8, kl=0.0,
                                               arms=arms), steps=150, seeds=30, seed=arms,
                                  x0=-1.5)
            assert np.all(np.diff(sim.x, axis=0) >= -1e-12)
            assert sim.p[-1].min() > 0.99


def test_the_matrix_scores_the_bandits_locked_runs_as_converged() -> None:
    """Score the bandit's locked runs as converged in the matrix."""
    from grpodyn.empirical.diagnostics.source_matrix import _bandit_relabelled

    cases = _bandit_relabelled()
    assert "policy_concentration" not in {c.label for c in cases}
    locked = [c for c in cases if "converged_lock" in c.name]
    assert len(locked) == 5 and all(c.label == "healthy" for c in locked)


def test_bandit_concentration_at_the_ceiling_is_convergence() -> None:
    """Bandit concentration at the ceiling is convergence."""
    case = next(c for c in bandit_testbed(seeds=1) if c.label == "policy_concentration")
    d = diagnose(case.run)
    assert d.state == "converged" and d.primary is None
    assert "at the ceiling" in d.modes["policy_concentration"].evidence


def test_healthy_runs_are_never_flagged_unstable(scored: dict) -> None:
    """Healthy runs are never flagged unstable."""
    assert scored["model"]["healthy_flagged_unstable"] == 0


def test_threshold_rules_are_scored_on_the_same_runs(scored: dict) -> None:
    """Threshold rules are scored on the same runs."""
    rules = scored["threshold_rules"]
    assert sum(sum(row.values()) for row in rules["confusion"].values()) == 25


def _run(n: int = 200, **metrics: np.ndarray) -> Run:
    steps = np.arange(1.0, n + 1)
    reward = 0.9 - 0.6 * np.exp(-steps / 40) + 0.02 * np.random.default_rng(0).normal(size=n)
    return Run(source="synthetic", format="test", steps=steps, reward=reward, metrics=metrics)


def test_missing_metrics_say_which_modes_cannot_be_judged() -> None:
    """Missing metrics say which modes cannot be judged."""
    d = diagnose(_run())
    judged = {name: v.judged for name, v in d.modes.items()}
    assert judged == {"reward_hacking": False, "advantage_degeneracy": False,
                      "policy_concentration": False, "dynamical_instability": True}
    # without entropy, B nor G the reward's sampling noise has no prediction: concentration
    # is not judged and the diagnosis abstains instead of calling the run healthy
    assert d.primary is None and len(d.notes) == 4 and not d.healthy
    assert d.modes["policy_concentration"].undecided
    assert "batch B" in d.modes["policy_concentration"].evidence
    # neither mode that reads G is judged: no note on how they would read an unknown G
    assert not any("G unknown" in note for note in d.notes)
    assert "held-out" in d.modes["reward_hacking"].evidence


def test_group_size_predicts_zero_std_groups_when_not_logged() -> None:
    """Group size predicts zero std groups when not logged."""
    d = diagnose(_run(), group_size=2)
    verdict = d.modes["advantage_degeneracy"]
    assert verdict.judged and "predicted from the reward at G = 2" in verdict.evidence


def test_a_collapse_is_unstable_and_upstream_of_what_follows() -> None:
    """A collapse is unstable and upstream of what follows."""
    run = _run()
    run.reward[120:] = 0.02
    run.metrics["entropy"] = np.where(np.arange(200) < 120, 0.5, 1e-4)
    d = diagnose(run)
    assert d.modes["dynamical_instability"].flag and d.modes["policy_concentration"].flag
    assert d.primary == "dynamical_instability"


def test_too_short_a_log_is_refused() -> None:
    """Too short a log is refused; one too short for the modes judges none of them."""
    with pytest.raises(InputError, match="at least 10"):
        diagnose(_run(n=9))
    d = diagnose(_run(n=15))
    assert d.state == "too_short" and d.primary is None and not d.healthy
    assert not any(v.judged for v in d.modes.values())


def test_cli_diagnose_keys(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Keep the JSON keys of grpodyn diagnose."""
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


def test_tiny_trl_design_testbed_is_shipped_and_scored() -> None:
    """Score the TRL design runs: every label >= 0.85, the misses named.

    The TRL runs the diagnosis was designed on (seeds 0-39, 40 per label). Every label
    >= 0.85; the misses are four concentration runs of seeds 0-24 (made without a warm-up of
    the learning rate) that the first updates wrecked (reward 0 with the entropy kept: read as
    degeneracy), one concentration run that concentrated and then diverged, and one G = 2 run
    that truly collapsed (studies/tiny_grids/findings.md, section 4).
    """
    from grpodyn.empirical.diagnostics.testbed import TINY_TESTBED_DIR, TUNING_SEEDS, tiny_testbed

    if not TINY_TESTBED_DIR.is_dir():
        pytest.skip("the tiny test bed lives in the repository's studies/ folder, absent here")
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


def test_tiny_trl_heldout_testbed_meets_the_target() -> None:
    """Score the held-out TRL runs: every label >= 0.9.

    The held-out runs (seeds 40-49, made while the diagnosis was frozen) share
    no seed with the design runs; every label has ten runs; precision and recall >= 0.9 for
    every label (measured: all 1.00) and no healthy run flagged unstable. A change of the
    diagnosis that fails this has to be judged on fresh seeds, not tuned against these.
    """
    from grpodyn.empirical.diagnostics.testbed import (
        HELDOUT_SEEDS,
        TINY_TESTBED_DIR,
        TUNING_SEEDS,
        tiny_testbed,
    )

    if not TINY_TESTBED_DIR.is_dir():
        pytest.skip("the tiny test bed lives in the repository's studies/ folder, absent here")
    assert not set(HELDOUT_SEEDS) & set(TUNING_SEEDS)
    heldout = tiny_testbed(seeds=HELDOUT_SEEDS)
    assert all(sum(c.label == label for c in heldout) == 10 for label in LABELS)
    scored = evaluate(heldout)["model"]
    assert scored["healthy_flagged_unstable"] == 0
    for label in LABELS:
        assert scored["per_mode"][label]["precision"] >= 0.9, label
        assert scored["per_mode"][label]["recall"] >= 0.9, label


def _shaped(curve: Callable[[np.ndarray], np.ndarray], n: int = 200, noise: float = 0.02,
            seed: int = 0) -> Run:
    steps = np.arange(1.0, n + 1)
    reward = curve(steps) + noise * np.random.default_rng(seed).normal(size=n)
    return Run(source="synthetic", format="test", steps=steps, reward=reward, metrics={})


@pytest.mark.parametrize(("curve", "state"), [
    (lambda t: 0.9 - 0.6 * np.exp(-t / 20), "converged"),
    (lambda t: 0.2 + 0.003 * t, "learning"),
    (lambda t: 0.5 + 0 * t, "not_learning"),
    (lambda t: 0.3 + 0.5 * np.exp(-((t - 70) / 30) ** 2), "declining"),
])
def test_states_are_named(curve: Callable[[np.ndarray], np.ndarray], state: str) -> None:
    """Name each state on a small seeded curve."""
    d = diagnose(_shaped(curve))
    assert d.state == state, d.state_evidence
    if state != "declining":  # a fall without KL or entropy reads as a collapse (instability)
        assert d.primary is None


def test_flat_white_noise_is_rarely_called_declining() -> None:
    """Keep the false declines of flat white noise near the nominal rate.

    The fall-back test picks the best of many windows: its Bonferroni threshold keeps the
    false alarms of a flat run with white noise near the nominal rate (two tests at 0.0027:
    about 1 in 200; 4 of 200 would be 7 s.e. of a binomial at that rate above it).
    """
    calls = [diagnose(_shaped(lambda t: 0.5 + 0 * t, noise=0.05, seed=seed)).state
             for seed in range(200)]
    assert calls.count("declining") <= 4
    assert calls.count("not_learning") >= 190


def test_a_fall_back_beyond_the_best_of_many_windows_is_declining() -> None:
    """Call a fall back beyond the Bonferroni threshold declining, and one within it not.

    A rise and a fall of 0.1 at noise 0.05 per point: the best 20-point window stands about
    0.095 above the late mean, 7 s.e. of the drop, beyond the threshold (3.4 s.e. for the 7
    windows the best was picked from); at noise 0.3 the same shape is 1.2 s.e.
    """

    def bump(t: np.ndarray) -> np.ndarray:
        return 0.4 + 0.1 * np.exp(-((t - 60) / 30) ** 2)

    assert diagnose(_shaped(bump, noise=0.05)).state == "declining"
    assert diagnose(_shaped(bump, noise=0.3)).state != "declining"


def test_too_short_to_tell() -> None:
    """Call a run of 30 points too short to tell."""
    d = diagnose(_shaped(lambda t: 0.2 + 0.01 * t, n=30))
    assert d.state == "too_short"


def test_a_rise_that_falls_back_is_never_healthy() -> None:
    """Call a rise that falls back declining, cause unknown, never healthy.

    The public run that rose 0.33 -> 0.76 and fell back to 0.41, with a KL and an entropy
    that stay put: no mode explains it, so decline, cause unknown (never healthy).
    """
    run = _shaped(lambda t: 0.33 + 0.43 * np.exp(-((t - 80) / 35) ** 2))
    run.metrics["kl"] = np.full(run.n_points, 0.05)
    run.metrics["entropy"] = np.full(run.n_points, 0.4)
    d = diagnose(run)
    assert d.state == "declining" and d.primary is None
    assert any("cause unknown" in note for note in d.notes)
    from grpodyn.empirical.diagnostics.testbed import called

    assert called(d) == "declining"


@pytest.fixture(scope="module")
def pool_cases() -> list:
    """One prompt-pool simulator run per label (design seed 0), read back through load_run."""
    from grpodyn.empirical.diagnostics.testbed import pool_testbed

    return pool_testbed(seeds=range(0, 1))


def test_pool_runs_are_called_as_labelled(pool_cases: list) -> None:
    """Pool runs are called as labelled."""
    from grpodyn.empirical.diagnostics.testbed import called

    calls = {c.name: called(diagnose(c.run)) for c in pool_cases}
    expected = {c.name: c.label for c in pool_cases}
    assert calls == expected
    states = {c.name: diagnose(c.run).state for c in pool_cases}
    assert states["pool_converged_0"] == "converged"
    assert states["pool_not_learning_0"] == "not_learning"


def test_group_size_source_is_shown(pool_cases: list) -> None:
    """Group size source is shown."""
    run = pool_cases[0].run
    d = diagnose(run)
    assert d.group_size["source"] == "inferred" and d.group_size["value"] == 8
    assert diagnose(run, group_size=16).group_size["source"] == "user"
    assert set(d.prompt_pool) == {"early", "late"}
    out = d.to_dict()
    assert {"modes", "primary", "notes", "state", "group_size"} <= set(out)
    for verdict in out["modes"].values():
        assert {"flag", "score", "evidence", "judged", "steps"} <= set(verdict)


def test_unknown_group_size_is_said(pool_cases: list) -> None:
    """Unknown group size is said."""
    from dataclasses import replace

    case = next(c for c in pool_cases if c.label == "policy_concentration")
    run = replace(case.run, meta=replace(case.run.meta, group_size=None))
    d = diagnose(run)
    assert d.group_size["source"] == "unknown"
    assert any("G unknown" in note for note in d.notes)
    assert "judged at G = 2" in d.modes["policy_concentration"].evidence


def _convolve_smooth(y: np.ndarray, window: int, mode: str = "same") -> np.ndarray:
    """Average the plain way (np.convolve), for the identity test."""
    finite = np.isfinite(y)
    kernel = np.ones(window)
    total = np.convolve(np.where(finite, y, 0.0), kernel, mode=mode)
    count = np.convolve(finite.astype(float), kernel, mode=mode)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def test_cumulative_sums_give_the_convolution_to_round_off() -> None:
    """Cumulative sums give the convolution to round off."""
    from grpodyn.empirical.diagnostics.series import smooth as _smooth

    rng = np.random.default_rng(5)
    for n in (1, 7, 40, 1001):
        y = rng.normal(size=n)
        y[rng.random(n) < 0.2] = np.nan
        for window in (1, 2, 5, 10, 25, 60):
            for mode in ("same", "valid"):
                if mode == "valid" and window > n:
                    continue
                np.testing.assert_allclose(_smooth(y, window, mode),
                                           _convolve_smooth(y, window, mode),
                                           rtol=1e-9, atol=1e-12)


def test_public_outcome_mapping() -> None:
    """Map diagnoses onto the documented outcomes."""
    from grpodyn.empirical.diagnostics.public_outcomes import OUTCOMES, outcome_of

    def made(primary: str | None, state: str) -> Diagnosis:
        return Diagnosis({}, primary, "x", [], state)

    assert outcome_of(made(None, "declining")) == "declines"
    assert outcome_of(made("dynamical_instability", "learning")) == "declines"
    assert outcome_of(made("advantage_degeneracy", "not_learning")) == "flat"
    assert outcome_of(made(None, "converged")) == "learns"
    assert outcome_of(made("reward_hacking", "learning")) == "failure"
    assert outcome_of(made(None, "too_short")) == "abstains"
    assert {o.outcome for o in OUTCOMES} == {"declines", "learns", "flat"}
    assert all(o.source for o in OUTCOMES)


def test_public_agreement_is_split_by_label_source() -> None:
    """Public agreement is split by label source."""
    from grpodyn.empirical.diagnostics.public_outcomes import (
        _CAVEAT,
        _SHAPE,
        _by_label_source,
        _per_class,
    )

    rows = [{"label_source": _CAVEAT, "called": "declines", "documented": "declines",
             "agrees": True},
            {"label_source": _CAVEAT, "called": "declines", "documented": "flat",
             "agrees": False},
            {"label_source": _SHAPE, "called": "learns", "documented": "learns",
             "agrees": True},
            {"label_source": _SHAPE, "called": None, "documented": "learns"}]
    split = _by_label_source(rows)
    assert split["documented"] == {"agreement": 0.5, "agree": 1, "scored": 2}
    assert split["heuristic"] == {"agreement": 1.0, "agree": 1, "scored": 1}
    classes = _per_class(rows)
    assert classes["declines"]["precision"] == 0.5 and classes["declines"]["recall"] == 1.0
    assert classes["flat"]["recall"] == 0.0 and classes["learns"]["n"] == 1


def test_variant_bed_reads_through_the_verl_console(tmp_path: Path) -> None:
    """Read the variant bed through verl's console.

    The variant bed written as verl prints it: G and B from its config record, the
    held-out reward from val-core, the advantage extremes from critic/advantages,
    no zero-std share and no score std (verl logs neither). Concentration is judged from the
    Beta law the advantage extremes give: the locked run is flagged, the healthy
    one not. Without the extremes, the entropy bound: the healthy run's fall is
    explained (no abstention), the locked run's is not (the diagnosis abstains).
    """
    from dataclasses import replace

    from grpodyn.empirical.diagnostics.testbed import UNDETERMINED, called, pool_testbed

    cases = pool_testbed(seeds=range(0, 1), variant=True, log_format="verl", folder=tmp_path)
    assert len(cases) == 7 and all(c.run.format == "verl_console" for c in cases)
    for c in cases:
        assert c.run.meta.batch.value == 32
        assert "frac_reward_zero_std" not in c.run.metrics
        assert "reward_std" not in c.run.metrics
        assert np.isfinite(c.run.metrics["advantage_max"]).all()
        assert np.isfinite(c.run.metrics["heldout_reward"]).sum() == 20
    text = (tmp_path / "pool_variant_healthy_0.log").read_text()
    assert "critic/advantages/min:" in text and "critic/score/std" not in text

    def without_extremes(run: Run) -> Run:
        kept = {k: v for k, v in run.metrics.items() if not k.startswith("advantage_")}
        return replace(run, metrics=kept)

    locked = next(c for c in cases if c.label == "policy_concentration")
    diagnosis = diagnose(locked.run)
    verdict = diagnosis.modes["policy_concentration"]
    assert verdict.flag and "advantage extremes" in verdict.evidence
    assert called(diagnosis) == "policy_concentration"
    assert diagnosis.prompt_pool["late"]["phi"] < diagnosis.prompt_pool["early"]["phi"]
    verdict = diagnose(without_extremes(locked.run)).modes["policy_concentration"]
    assert not verdict.flag and verdict.undecided
    assert "beyond what the reward explains" in verdict.evidence
    assert called(diagnose(without_extremes(locked.run))) == UNDETERMINED
    learner = next(c for c in cases if c.name == "pool_variant_healthy_0")
    assert called(diagnose(learner.run)) == "healthy"
    assert not diagnose(learner.run).modes["policy_concentration"].flag
    verdict = diagnose(without_extremes(learner.run)).modes["policy_concentration"]
    assert not verdict.flag and not verdict.undecided
    assert "less than half of it, no sign of concentration" in verdict.evidence
    with pytest.raises(ValueError, match="log_format"):
        pool_testbed(seeds=range(0, 1), log_format="openrlhf")


def test_the_simulators_trl_log_carries_no_verl_metrics(tmp_path: Path) -> None:
    """Keep verl's metrics out of the TRL log: trainer_state.json holds what TRL logs."""
    from dataclasses import replace

    from grpodyn.empirical.diagnostics.prompt_pool_sim import (
        case_settings,
        simulate_pool,
        simulate_pool_outcome,
        write_trainer_state,
    )

    config = replace(case_settings("healthy", 0), steps=40)
    log, _ = simulate_pool_outcome(config, seed=5)
    path = write_trainer_state(tmp_path / "t.json", log, label="healthy", seed=5, config=config)
    entries = json.loads(path.read_text())["log_history"]
    assert entries == simulate_pool(config, seed=5)
    assert not any(k.startswith(("critic/", "response_length/", "_")) for e in entries for k in e)


@pytest.mark.parametrize(("group_size", "flagged"), [(3, True), (16, False)])
def test_degeneracy_counts_the_drift_lost_over_the_run(group_size: int, flagged: bool) -> None:
    """Flag a small-G run that started at the floor and escaped late.

    The reward rises 0.02 -> 0.49 (B = 16, binomial noise, zero-std share of identical
    prompts): at G = 3 the late steps lose under half the drift (46%), but over the run most
    of it (57%, weighted by the drift each level could carry, each level read at its least
    degenerate value within the noise's margin); at G = 16 neither.
    """
    steps = np.arange(1.0, 401)
    p = 0.02 * np.exp(steps / 125)
    reward = np.random.default_rng(1).binomial(16 * group_size, p) / (16 * group_size)
    frac = p**group_size + (1 - p) ** group_size
    run = Run(source="synthetic", format="test", steps=steps, reward=reward,
              metrics={"frac_reward_zero_std": frac})
    d = diagnose(run, group_size=group_size)
    assert d.modes["advantage_degeneracy"].flag is flagged
    assert d.state == "learning"
    if flagged:
        assert "lose 46% of the drift a large group would carry late, 57% over the run" in \
            d.modes["advantage_degeneracy"].evidence


def test_a_significant_but_negligible_rise_is_not_learning() -> None:
    """Call a rise beyond the noise but under NEGLIGIBLE_RISE flat in practice.

    0.50 -> 0.52 over 400 points at noise 0.005 per point is tens of s.e.: significant, yet
    less than any mode reads from a success rate. 0.50 -> 0.60 learns. A reward that is no
    success rate (a game score) keeps the statistical test alone.
    """
    from grpodyn.empirical.diagnostics.diagnose import NEGLIGIBLE_RISE

    assert NEGLIGIBLE_RISE == 0.03

    def ramp(gain: float, base: float = 0.5) -> Callable[[np.ndarray], np.ndarray]:
        return lambda t: base + gain * t / 400

    d = diagnose(_shaped(ramp(0.02), n=400, noise=0.005))
    assert d.state == "not_learning" and "flat in practice" in d.state_evidence
    assert diagnose(_shaped(ramp(0.1), n=400, noise=0.005)).state in ("learning", "converged")
    assert diagnose(_shaped(ramp(0.02, base=5.0), n=400, noise=0.005)).state != "not_learning"


def test_outcome_labels_follow_the_simulators_ground_truth() -> None:
    """Label pool runs from the exact pool success rate, not from their settings family."""
    from grpodyn.empirical.diagnostics.testbed import outcome_label

    def success(start: float, end: float) -> np.ndarray:
        """Rise from ``start`` to ``end`` by step 200, then stay."""
        steps = np.arange(0.0, 401.0, 20.0)
        return np.column_stack([steps, start + (end - start) * np.minimum(steps / 200, 1)])

    # the rule reads the start and the mean over the last quarter (steps > 300)
    assert outcome_label("not_learning", success(0.40, 0.42), steps=400) == "not_learning"
    assert outcome_label("not_learning", success(0.40, 0.48), steps=400) == "healthy"
    assert outcome_label("healthy", success(0.30, 0.31), steps=400) == "not_learning"
    assert outcome_label("converged", success(0.50, 0.95), steps=400) == "healthy"
    assert outcome_label("policy_concentration", success(0.5, 0.99), steps=400) == "healthy"
    assert outcome_label("policy_concentration", success(0.5, 0.70), steps=400) == \
        "policy_concentration"
    assert outcome_label("reward_hacking", success(0.2, 0.2), steps=400) == "reward_hacking"


def test_the_simulators_ground_truth_matches_its_train_reward() -> None:
    """The exact pool success rate is what the logged train reward estimates."""
    from grpodyn.empirical.diagnostics.prompt_pool_sim import case_settings, simulate_pool_outcome

    config = case_settings("converged", 0)
    log, success = simulate_pool_outcome(config, seed=3)
    train = np.array([e["reward"] for e in log if "reward" in e])
    assert success.shape == (config.steps // config.eval_every + 1, 2)
    late = success[success[:, 0] > 0.75 * config.steps, 1].mean()
    se = 0.5 / np.sqrt(config.batch * config.group_size * train[-75:].size)
    assert abs(train[-75:].mean() - late) < 6 * se + 0.02  # plus the pool's sampling of B


def test_concentration_without_the_zero_std_share_reads_the_entropy_or_abstains() -> None:
    """Read the entropy against the reward's move when the log has no zero-std share.

    An entropy that falls about as the kept-spread bound allows while the reward
    rises to 0.9 is learning (decided, no abstention); one that collapses while the reward
    moves 0.3 -> 0.6 is beyond the bound, which a token entropy can be while learning, so the
    diagnosis abstains (``undetermined``, a miss); at the ceiling the fall is convergence;
    rewards outside [0, 1] give no success rate to set the bound: it abstains.
    """
    from dataclasses import replace

    from grpodyn.empirical.diagnostics.testbed import UNDETERMINED, _matrix, called
    def case(level: float, entropy: Callable[[np.ndarray], np.ndarray],
             scale: float = 1.0) -> Diagnosis:
        run = _shaped(lambda t, v=level: v - (v - 0.3) * np.exp(-t / 30), noise=0.004)
        run = replace(run, reward=scale * np.clip(run.reward, 0, 1))
        run.metrics["entropy"] = entropy(run.reward / scale)
        return diagnose(run)

    collapsed = case(0.6, lambda r: 0.6 * np.exp(-np.arange(r.size) / 40) + 0.01)
    verdict = collapsed.modes["policy_concentration"]
    assert not verdict.flag and verdict.undecided, verdict.evidence
    assert called(collapsed) == UNDETERMINED and "beyond what the reward" in verdict.evidence
    # the entropy of a polarized pool that keeps its spread (E[h] ~ r (1 - r)), lowered a
    # further 30% over the run: learning that spreads the prompts somewhat
    learning = case(0.9, lambda r: r * (1 - r) * (1 - 0.3 * np.arange(r.size) / r.size))
    verdict = learning.modes["policy_concentration"]
    assert not verdict.flag and not verdict.undecided, verdict.evidence
    assert called(learning) == "healthy"
    at_ceiling = case(0.985, lambda r: 0.6 * np.exp(-np.arange(r.size) / 40) + 0.01)
    assert not at_ceiling.modes["policy_concentration"].flag
    assert called(at_ceiling) == "healthy"
    scaled = case(0.6, lambda r: 0.6 * np.exp(-np.arange(r.size) / 40) + 0.01, scale=5.0)
    assert scaled.modes["policy_concentration"].undecided
    assert called(scaled) == UNDETERMINED
    assert any("abstains" in note for note in scaled.notes)
    scored = _matrix(["healthy", "policy_concentration"], [UNDETERMINED, UNDETERMINED])
    assert scored["abstained"] == 1.0 and scored["healthy_flagged"] == 0.0
    assert scored["per_class"]["policy_concentration"]["recall"] == 0.0
    assert scored["per_class"]["healthy"]["recall"] == 0.0
