"""Policy concentration read from the reward's sampling noise, without the entropy.

A step's reward is the mean of B prompts x G Bernoulli answers. A policy that explores every
prompt fluctuates at the binomial prediction m(1-m)/(BG); one deterministic on each prompt at
m(1-m)/B (docs/theory.md sections 6-7 and 10; module ``fluctuation``). Seeded synthetic runs.
"""

from __future__ import annotations

import numpy as np
import pytest

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


# --- a small dataset dealt by epochs: the finite-population correction ----------------------

#: 32 prompts: 12 always solved, 8 never, 12 at one half; dealt 16 a step (f = 1/2), G = 4
_POOL = np.concatenate([np.ones(12), np.zeros(8), np.full(12, 0.5)])
_DEALT_B, _DEALT_G, _DEALT_STEPS = 16, 4, 2000


def _dealt_run(*, seed: int, with_epoch: bool) -> Run:
    """Rewards of a dataset shuffled each epoch and dealt in disjoint batches (as TRL does)."""
    rng = np.random.default_rng(seed)
    per_epoch = _POOL.size // _DEALT_B
    order = np.concatenate([rng.permutation(_POOL.size)
                            for _ in range(_DEALT_STEPS // per_epoch)])
    batches = order.reshape(_DEALT_STEPS, _DEALT_B)
    reward = rng.binomial(_DEALT_G, _POOL[batches]).sum(axis=1) / (_DEALT_B * _DEALT_G)
    steps = np.arange(1.0, _DEALT_STEPS + 1)
    meta = RunMeta()
    meta.batch = Hyperparameter(_DEALT_B, "user", "test")
    metrics = {"epoch": steps * _DEALT_B / _POOL.size} if with_epoch else {}
    return Run(source="synthetic", format="test", steps=steps, reward=reward, metrics=metrics,
               meta=meta)


def test_the_epoch_corrects_the_between_prompt_share_of_a_small_dataset() -> None:
    """Half the dataset a step: the uncorrected kappa reads low, the corrected one the truth.

    The pool's between-prompt share is Var_i(p_i) / (m (1 - m)) = 0.62; consecutive batches of
    an epoch are disjoint, so the change's between-prompt term is x(N_p - f B)/(N_p - 1) = 0.77
    of a fresh draw's (docs/theory.md section 7). Over 200 seeds the corrected kappa reads
    0.616 +- 0.043, the uncorrected 0.431 +- 0.030: the tolerances are three of those s.d."""
    truth = float(np.var(_POOL) / (_POOL.mean() * (1 - _POOL.mean())))
    whole = slice(None)
    corrected = sampling_share(_dealt_run(seed=11, with_epoch=True), whole, _DEALT_G)
    plain = sampling_share(_dealt_run(seed=11, with_epoch=False), whole, _DEALT_G)
    assert corrected.status == plain.status == "measured"
    assert corrected.fraction == 0.5 and np.isnan(plain.fraction)
    assert abs(corrected.kappa - truth) < 0.13
    assert plain.kappa < truth - 0.09 and corrected.kappa - plain.kappa > 0.09
    assert "dataset of 32" in corrected.words and "x0.77" in corrected.words
    assert "epoch is not in the log" in plain.words and "reads low" in plain.words
    # the same batch without G: the corrected bounds hold the truth, the plain ones sit lower
    bounds = sampling_share(_dealt_run(seed=11, with_epoch=True), whole, None)
    assert bounds.status == "bounded" and bounds.low < truth < bounds.high
    assert sampling_share(_dealt_run(seed=11, with_epoch=False), whole, None).high < bounds.high


def test_the_reading_equals_the_theory_registry_derivation() -> None:
    """kappa of module fluctuation is ``prompt_pool_between_share``, the sympy derivation, whose
    c is the between-prompt factor of ``prompt_pool_step_change_variance``; fresh draws
    (N_p -> infinity) give the reading without the epoch."""
    import sympy as sp

    from grpodyn.numerics.compiled import compiled
    from grpodyn.theory import get
    from grpodyn.theory.symbols import sym

    share = get("prompt_pool_between_share")
    numeric = compiled("prompt_pool_between_share")
    for x, g, b, n in ((0.6, 4, 16, 48.0), (0.3, 8, 64, 7473.0), (0.9, 2, 16, 32.0)):
        exact = float(share.expr.subs({sym.x_r: x, sym.G: g, sym.B: b, sym.N_p: n}))
        assert numeric(x, g, b, n) == pytest.approx(exact, rel=1e-12)
    fresh = sp.limit(share.expr, sym.N_p, sp.oo)
    assert sp.simplify(fresh - (sym.x_r - 1 / sym.G) / (1 - 1 / sym.G)) == 0
    v = get("prompt_pool_step_change_variance").expr
    factor = sp.simplify(v.subs(sym.w_r, 0) * sym.B / sym.sigma_r2)
    assert sp.simplify(factor - (sym.N_p - sym.B**2 / sym.N_p) / (sym.N_p - 1)) == 0
    run = _dealt_run(seed=12, with_epoch=True)
    fluct = sampling_share(run, slice(None), _DEALT_G)
    d = np.diff(run.reward)
    x = np.var(d, ddof=1) / 2 * _DEALT_B / (fluct.level * (1 - fluct.level))
    assert fluct.kappa == pytest.approx(numeric(x, _DEALT_G, _DEALT_B, 32.0), rel=1e-12)


def test_a_whole_dataset_a_step_leaves_no_between_prompt_term_to_read_without_g() -> None:
    """f = 1 (every prompt every step): the change has no between-prompt term, so without G
    (where it must weigh more than a group of 2's) nothing bounds kappa."""
    run = _dealt_run(seed=13, with_epoch=True)
    run = Run(source="synthetic", format="test", steps=run.steps, reward=run.reward,
              metrics={"epoch": run.steps * 1.0}, meta=run.meta)
    fluct = sampling_share(run, slice(None), None)
    assert fluct.status == "unknown" and "weigh alike" in fluct.words
