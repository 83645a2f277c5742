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


def _run_over_time(start: np.ndarray, end: np.ndarray, *, seed: int, group_size: int,
                   zero_std: bool) -> Run:
    """Rewards (and, with ``zero_std``, TRL's zero-std share) of B prompts x G answers a step,
    the prompts' success rates moving linearly from ``start`` to ``end`` over the first half."""
    rng = np.random.default_rng(seed)
    t = np.clip(np.arange(_N) / (_N / 2), 0.0, 1.0)[:, None]
    idx = rng.integers(0, start.size, size=(_N, _B))
    rates = (1 - t) * start[idx] + t * end[idx]
    hits = rng.binomial(group_size, rates)
    reward = hits.sum(axis=1) / (_B * group_size)
    metrics = {}
    if zero_std:
        metrics["frac_reward_zero_std"] = ((hits == 0) | (hits == group_size)).mean(axis=1)
    meta = RunMeta()
    meta.batch = Hyperparameter(_B, "user", "test")
    meta.group_size = Hyperparameter(group_size, "user", "test")
    return Run(source="synthetic", format="test", steps=np.arange(1.0, _N + 1), reward=reward,
               metrics=metrics, meta=meta)


# hard prompts (1% success) of which 6% get solved: at the floor from the first steps
_HARD = np.full(1000, 0.01)
_HARD_ESCAPED = np.where(np.arange(1000) < 60, 1.0, 0.005)
# prompts that explore at 0.5, then lock: 70% always right, 30% always wrong
_SPREAD = np.full(1000, 0.5)


def test_groups_without_spread_from_the_start_are_degeneracy_not_concentration() -> None:
    """Prompts at the floor from the first steps (G = 2): the few that escape make the late
    success rates deterministic per prompt, like a concentrated policy, but the groups had no
    spread to lose; without the entropy concentration abstains and degeneracy is primary,
    with or without the zero-std share."""
    for zero_std in (True, False):
        run = _run_over_time(_HARD, _HARD_ESCAPED, seed=11, group_size=2, zero_std=zero_std)
        d = diagnose(run)
        verdict = d.modes["policy_concentration"]
        assert not verdict.flag and verdict.undecided and "no spread" in verdict.evidence
        assert d.primary == "advantage_degeneracy"


def test_the_zero_std_share_reads_prompts_that_locked_after_exploring() -> None:
    """Prompts that explored at 0.5 lock at a mean of 0.7: every group without spread against
    the few a pool of the first steps' spread predicts; flagged from the zero-std share."""
    run = _run_over_time(_SPREAD, _LOCKED, seed=12, group_size=_G, zero_std=True)
    d = diagnose(run)
    verdict = d.modes["policy_concentration"]
    assert verdict.flag and "zero-std groups" in verdict.evidence
    assert d.primary == "policy_concentration"
    # the same pool that keeps exploring at 0.7: not flagged by the zero-std share
    calm = diagnose(_run_over_time(_SPREAD, _EXPLORING, seed=13, group_size=_G,
                                   zero_std=True)).modes["policy_concentration"]
    assert not calm.flag and not calm.undecided and "still explore" in calm.evidence
