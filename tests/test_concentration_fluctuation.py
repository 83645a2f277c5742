"""Policy concentration read from the reward's sampling noise, without the entropy.

A step's reward is the mean of B prompts x G Bernoulli answers. A policy that explores every
prompt fluctuates at the binomial prediction m(1-m)/(BG); one deterministic on each prompt at
m(1-m)/B (docs/theory.md sections 6-7 and 10; module ``fluctuation``). Seeded synthetic runs.
"""

from __future__ import annotations

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.diagnostics.fluctuation import sampling_share
from grpodyn.empirical.diagnostics.series import segments
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta

_B, _G, _N = 16, 8, 240


def _run(rates: np.ndarray, *, seed: int, batch: int | None = _B,
         group_size: int | None = _G) -> Run:
    """Rewards: each step draws B prompts with success rates ``rates[i]`` and G answers each."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, rates.size, size=(_N, _B))
    reward = rng.binomial(_G, rates[idx]).sum(axis=1) / (_B * _G)
    meta = RunMeta()
    if batch is not None:
        meta.batch = Hyperparameter(batch, "user", "test")
    if group_size is not None:
        meta.group_size = Hyperparameter(group_size, "user", "test")
    return Run(source="synthetic", format="test", steps=np.arange(1.0, _N + 1), reward=reward,
               metrics={}, meta=meta)


# 70% of 1000 prompts always solved, 30% never: deterministic on each prompt
_LOCKED = np.where(np.arange(1000) < 700, 1.0, 0.0)
# the same mean reward 0.7, every prompt explored
_EXPLORING = np.full(1000, 0.7)
# half the prompts solved, half at 0.3: x = v B / (m(1-m)) = 0.60, between the two readings
_MIXED = np.where(np.arange(1000) < 500, 1.0, 0.3)


def test_a_concentrated_policy_without_entropy_is_flagged_when_g_is_known() -> None:
    """Deterministic answers per prompt: the reward fluctuates ~G times the binomial noise."""
    run = _run(_LOCKED, seed=1)
    fluct = sampling_share(run, segments(_N)[1], _G)
    assert fluct.status == "measured" and fluct.kappa > 0.8 and fluct.ratio > 5
    d = diagnose(run)
    verdict = d.modes["policy_concentration"]
    assert verdict.judged and verdict.flag and "between prompts" in verdict.evidence
    assert d.primary == "policy_concentration" and not d.healthy


def test_an_exploring_policy_at_the_same_reward_is_not_flagged() -> None:
    """Every prompt at 0.7: the binomial prediction, kappa near 0, no flag, no abstention."""
    run = _run(_EXPLORING, seed=2)
    fluct = sampling_share(run, segments(_N)[1], _G)
    assert fluct.status == "measured" and abs(fluct.kappa) < 0.25 and fluct.ratio < 2
    verdict = diagnose(run).modes["policy_concentration"]
    assert verdict.judged and not verdict.flag and not verdict.undecided
    assert "still explore" in verdict.evidence


def test_without_g_the_share_is_bounded_and_the_diagnosis_abstains_between() -> None:
    """G unknown: kappa lies between its G = 2 and G -> infinity readings; between the two
    sides of one half the diagnosis abstains with the reason, never calls the run healthy."""
    late = segments(_N)[1]
    locked = sampling_share(_run(_LOCKED, seed=3, group_size=None), late, None)
    exploring = sampling_share(_run(_EXPLORING, seed=4, group_size=None), late, None)
    assert locked.status == exploring.status == "bounded"
    assert locked.low > 0.5 and exploring.high < 0.5
    mixed = _run(_MIXED, seed=5, group_size=None)
    verdict = diagnose(mixed).modes["policy_concentration"]
    assert not verdict.flag and verdict.undecided and "--group-size" in verdict.evidence
    assert not diagnose(mixed).healthy
    # declaring G decides it (kappa = 0.54 expected at G = 8): judged, no abstention
    declared = diagnose(mixed, group_size=_G).modes["policy_concentration"]
    assert declared.judged and not declared.undecided and 0.3 < declared.score < 0.8


def test_without_b_nothing_is_read_and_the_diagnosis_abstains() -> None:
    """No batch B: the sampling noise has no prediction; the run is not called healthy."""
    run = _run(_EXPLORING, seed=6, batch=None, group_size=None)
    assert sampling_share(run, segments(_N)[1], None).status == "unknown"
    d = diagnose(run)
    assert d.modes["policy_concentration"].undecided and not d.healthy


def test_correlated_fluctuations_are_dynamics_not_sampling() -> None:
    """An oscillating reward (period 12) moves by its dynamics: no sampling reading."""
    run = _run(_EXPLORING, seed=7)
    wave = 0.1 * np.sin(2 * np.pi * np.arange(_N) / 12)
    run = Run(source="synthetic", format="test", steps=run.steps, reward=run.reward * 0 + 0.6
              + wave + (run.reward - 0.7) * 0.2, metrics={}, meta=run.meta)
    assert sampling_share(run, segments(_N)[1], _G).status == "dynamics"
