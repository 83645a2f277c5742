"""Advice on G where the groups carry no reward spread (empirical/logs/group_advice)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.advice import advise_log
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.numerics.prompt_pool import group_size_for_spread


def _simulated_log(categorical, folder: Path, family: str, seed: int) -> tuple[Path, object]:
    """Simulate one categorical run as the benchmarks seed it; write it with G beside it."""
    config = categorical.settings(family, seed)
    log, _ = categorical.simulate(config, seed=10_000 * categorical.FAMILIES.index(family) + seed)
    return categorical.write_run(folder / f"{family}_{seed}", log, config=config, keys="full",
                                 with_g=True, label=family, seed=seed), config


@pytest.fixture(scope="module")
def degenerate(categorical, tmp_path_factory) -> tuple[Path, object]:
    """Seed 1011's degeneracy run: G = 2 at a success rate near 0.01 (the slow mode alone
    would ask x151 of the lr)."""
    return _simulated_log(categorical, tmp_path_factory.mktemp("degenerate"),
                          "advantage_degeneracy", 1011)


@pytest.mark.parametrize("success", [0.5, 0.3, 0.05, 0.01, 0.999])
def test_least_group_size_is_the_first_with_half_the_groups_spread(success: float) -> None:
    # p^G + (1 - p)^G written out: the registry's derivation and the search agree
    g = group_size_for_spread(success)
    flat = lambda n: success**n + (1 - success) ** n  # noqa: E731
    assert flat(g) <= 0.5
    assert g == 2 or flat(g - 1) > 0.5


def test_least_group_size_grows_as_the_rate_leaves_one_half() -> None:
    sizes = [group_size_for_spread(p) for p in (0.5, 0.2, 0.05, 0.01)]
    assert sizes == sorted(sizes) and sizes[0] == 2 and sizes[-1] == 69
    assert group_size_for_spread(0.01) == int(np.ceil(np.log(0.5) / np.log(0.99)))


@pytest.mark.parametrize("success", [0.0, 1.0])
def test_no_group_size_spreads_a_certain_outcome(success: float) -> None:
    assert group_size_for_spread(success) is None


def test_a_degenerate_run_hears_that_the_lr_is_not_the_lever(degenerate) -> None:
    path, config = degenerate
    advice = advise_log(load_run(path))
    assert advice.recommendation["direction"] == "raise"
    assert advice.recommendation["lr_ratio"] == pytest.approx(2.0)
    assert advice.interval["lr_ratio"][0] > 2.0  # what the evidence asks stays in the interval
    words = next(w for w in advice.warnings if "advantage degeneracy" in w)
    assert "a higher lr only scales" in words and "identical prompts need G >= 64" in words
    assert advice.recommendation["group_size"] == 64 > config.group_size


def test_a_healthy_run_keeps_its_group_size(categorical, tmp_path) -> None:
    path, config = _simulated_log(categorical, tmp_path, "healthy", 1001)
    advice = advise_log(load_run(path))
    assert advice.recommendation["group_size"] == config.group_size
    assert not any("advantage degeneracy" in w for w in advice.warnings)


def test_an_unknown_group_size_is_not_replaced_by_the_bound() -> None:
    # a public TRL run (excerpt) whose G is neither logged nor inferable: the bound, which may
    # lie below the G the run used, is said in words, not recommended
    log = Path(__file__).parent / "data" / "real_logs" / (
        "lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_checkpoint-1200_"
        "trainer_state.excerpt.json")
    advice = advise_log(load_run(log))
    assert any("identical prompts need G >= 3" in w for w in advice.warnings)
    assert advice.recommendation["group_size"] is None


def test_the_diagnosis_gives_the_same_g_as_the_advice(degenerate) -> None:
    # the degeneracy's evidence says what "raise G" means for this run, as the advice does
    from grpodyn.empirical.diagnostics.diagnose import diagnose

    path, _ = degenerate
    run = load_run(path)
    verdict = diagnose(run).modes["advantage_degeneracy"]
    assert verdict.flag and "identical prompts need G >= 64" in verdict.evidence
    assert advise_log(run).recommendation["group_size"] == 64


def test_the_advice_headline_names_the_g_it_recommends(degenerate, capsys) -> None:
    from grpodyn.cli import main

    path, _ = degenerate
    assert main(["advise", "--log", str(path)]) == 0
    headline = capsys.readouterr().out.splitlines()[0]
    assert headline.endswith("; G 2 -> 64 (see the note)")


def test_no_g_where_another_mode_is_primary(categorical, tmp_path) -> None:
    # seed 1221's concentration run: every group without spread at a success of 0.86, the
    # degeneracy flagged beside the concentration; the bound (G 4 -> 5) is not the lever there
    path, config = _simulated_log(categorical, tmp_path, "policy_concentration", 1221)
    advice = advise_log(load_run(path))
    words = next(w for w in advice.warnings if "advantage degeneracy" in w)
    assert "beside its primary mode, policy concentration" in words and "not G" in words
    assert advice.recommendation["group_size"] == config.group_size == 4
    # the concentration lowers the lr (empirical/logs/mode_advice.py): its simulator made it
    # with twice the healthy family's lr and no KL pull
    assert advice.recommendation["direction"] == "lower"
    assert advice.basis["kind"] == "policy_concentration"


def _floor_run(late: np.ndarray, rate: float = 0.05) -> object:
    """A [0, 1] reward, no G, no zero-std share: 120 noisy steps at ``rate``, then ``late``."""
    from grpodyn.empirical.logs.loaders import Run

    early = np.random.default_rng(5).binomial(16, rate, 120) / 16
    reward = np.concatenate([early, late])
    return Run("floor", "test", np.arange(1.0, reward.size + 1), reward, {})


def test_a_late_reward_of_exactly_zero_is_degenerate_whatever_g() -> None:
    # every mean of rewards in [0, 1] at 0: every reward 0, so no group has a spread at any G
    from grpodyn.empirical.diagnostics.diagnose import diagnose

    run = _floor_run(np.zeros(80))
    d = diagnose(run)
    verdict = d.modes["advantage_degeneracy"]
    assert d.group_size["value"] is None
    assert verdict.flag and verdict.score == 1.0 and "whatever G" in verdict.evidence
    assert d.primary == "advantage_degeneracy"


def test_one_nonzero_late_reward_leaves_an_unknown_g_unjudged_with_its_bound() -> None:
    from grpodyn.empirical.diagnostics.diagnose import diagnose

    late = np.zeros(80)
    late[40] = 1 / 16
    run = _floor_run(late)
    verdict = diagnose(run).modes["advantage_degeneracy"]
    assert not verdict.judged
    need = group_size_for_spread(float(np.mean(run.reward[-((run.n_points + 3) // 4):])))
    assert need is not None and need > 2
    assert f"a run with G < {need} has most groups without one" in verdict.evidence


def test_a_raise_without_g_near_the_floor_names_the_g_below_which_it_moves_little() -> None:
    rng = np.random.default_rng(11)
    run = _floor_run(rng.binomial(16, 0.02, 80) / 16, rate=0.02)
    advice = advise_log(run)
    assert advice.recommendation["direction"] == "raise"
    words = [w for w in advice.warnings if w.startswith("G unknown:")]
    assert len(words) == 1 and "raise G first" in words[0]
    assert advice.recommendation["group_size"] is None  # the bound is words, not a G


def test_a_known_g_gets_no_unknown_g_note() -> None:
    rng = np.random.default_rng(11)
    run = _floor_run(rng.binomial(16, 0.02, 80) / 16, rate=0.02)
    run = replace(run, meta=run.meta.with_overrides(group_size=4))
    assert not any(w.startswith("G unknown:") for w in advise_log(run).warnings)


def test_a_late_quarter_without_spread_is_advised_as_pinned_not_raised() -> None:
    # diagnose says no group had a spread late; the advice raised the lr on a stiffness bound
    # (a public console log: two successes early in 200 steps, its last 60 steps at 0)
    from grpodyn.empirical.logs.loaders import Run

    reward = np.zeros(200)
    reward[[30, 90]] = 0.5
    run = Run("floor", "test", np.arange(1.0, 201), reward, {})
    assert diagnose_state(run) == "not_learning"
    advice = advise_log(run)
    assert advice.recommendation["direction"] == "keep" and advice.recommendation["lr_ratio"] == 1
    assert advice.basis["kind"] == "not_determined" and advice.status == "not_determined"
    words = next(w for w in advice.warnings if "advantage degeneracy" in w)
    assert "none did late in the run" in words and "the few that do" not in words


def test_a_logged_reward_spread_overrules_a_late_mean_of_zero() -> None:
    # a part of the reward picked as the reward (--reward-key) sits at 0 while the reward the
    # groups are normalised on spreads: no "whatever G" claim, the abstention stays
    from grpodyn.empirical.diagnostics.diagnose import diagnose
    from grpodyn.empirical.logs.loaders import Run

    base = _floor_run(np.zeros(80))
    run = Run("parts", "test", base.steps, base.reward, {"reward_std": np.full(200, 0.45)})
    assert not diagnose(run).modes["advantage_degeneracy"].judged


@pytest.mark.parametrize("rate", [0.3, 0.45, 0.69])
def test_no_unknown_g_note_where_any_common_g_spreads_the_groups(rate: float) -> None:
    # near 1/2 identical prompts need G >= 3, which any run meets: no "raise G first"
    from grpodyn.empirical.diagnostics.diagnose import diagnose

    rng = np.random.default_rng(3)
    run = _floor_run(rng.binomial(64, rate, 80) / 64, rate=rate)
    assert not any(w.startswith("G unknown:") for w in advise_log(run).warnings)
    assert "identical prompts need" not in diagnose(run).modes["advantage_degeneracy"].evidence


def diagnose_state(run) -> str:
    """The state the diagnosis reads (flat here, not a fall: the advice's pinned case)."""
    from grpodyn.empirical.diagnostics.diagnose import diagnose

    return diagnose(run).state
