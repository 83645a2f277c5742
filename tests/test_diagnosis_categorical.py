"""The degeneracy's reward-level margin and the limit cycles of the categorical simulator.

Degeneracy (docs/theory.md section 7): the drift lost to groups of G is read at the reward
level least degenerate within the diagnosis's false-alarm margin of the measured one, so a
flat run whose level the noise cannot tell from one that keeps half its drift is not flagged.
The categorical simulator (studies/diagnosis) labels its limit cycles a second way, from the
dynamics: an oscillation that survives a fourfold cut of the sampling noise is the map's own.
Seeded synthetic runs and two seen seeds of the simulator.
"""

from __future__ import annotations

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.diagnostics.series import segments, window_mean
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta
from grpodyn.numerics.prompt_pool import drift_loss

_B, _N = 16, 240


def _flat(rate: float, group_size: int, *, seed: int) -> Run:
    """A run that never learns: B identical prompts at ``rate``, G answers each, G declared."""
    rng = np.random.default_rng(seed)
    reward = rng.binomial(_B * group_size, rate, size=_N) / (_B * group_size)
    meta = RunMeta()
    meta.group_size = Hyperparameter(group_size, "user", "test")
    return Run(source="synthetic", format="test", steps=np.arange(1.0, _N + 1), reward=reward,
               metrics={}, meta=meta)


def test_a_level_within_the_noise_of_keeping_half_the_drift_is_not_degeneracy() -> None:
    """p = 0.13 at G = 4 loses 51% of the drift, within 2.8 s.e. of a level that loses 49%."""
    run = _flat(0.13, 4, seed=3)
    late = segments(_N)[1]
    assert drift_loss(window_mean(run.reward, late), float("inf"), 4) >= 0.5
    d = diagnose(run)
    verdict = d.modes["advantage_degeneracy"]
    assert verdict.judged and not verdict.flag and 0.4 < verdict.score < 0.5
    assert "least degenerate value" in verdict.evidence
    assert d.primary is None and d.state == "not_learning"


def test_a_level_far_below_is_degeneracy() -> None:
    """p = 0.02 at G = 2: almost no group has spread, beyond any margin."""
    d = diagnose(_flat(0.02, 2, seed=4))
    assert d.modes["advantage_degeneracy"].flag and d.modes["advantage_degeneracy"].score > 0.85
    assert d.primary == "advantage_degeneracy"


def test_with_the_entropy_but_no_zero_std_share_a_locked_pool_stays_undecided() -> None:
    """The entropy falls x0.07 and the prompts are locked (kappa near 1): still undecided.

    Where the entropy is logged without the zero-std share, the reward's sampling share does
    not decide: public runs that learn (ShibukiZero's, late kappa 0.52-0.98) and the
    simulator's concentrated runs (0.29-0.89) overlap, so the diagnosis abstains there.
    """
    rng = np.random.default_rng(5)
    rates = np.where(np.arange(1000) < 700, 1.0, 0.0)
    idx = rng.integers(0, rates.size, size=(_N, _B))
    reward = rng.binomial(8, rates[idx]).sum(axis=1) / (_B * 8)
    meta = RunMeta()
    meta.batch = Hyperparameter(_B, "user", "test")
    meta.group_size = Hyperparameter(8, "user", "test")
    steps = np.arange(1.0, _N + 1)
    entropy = 1.4 * np.exp(-steps / 40) + 0.1
    run = Run(source="synthetic", format="test", steps=steps, reward=reward,
              metrics={"entropy": entropy}, meta=meta)
    d = diagnose(run)
    verdict = d.modes["policy_concentration"]
    assert verdict.undecided and not verdict.flag and "cannot tell" in verdict.evidence
    assert d.primary is None and not d.healthy


def _case(module, family: str, seed: int) -> tuple:
    config = module.settings(family, seed)
    sim_seed = 10_000 * module.FAMILIES.index(family) + seed
    return config, sim_seed, module.simulate(config, seed=sim_seed)[1]


def test_a_cycle_under_the_fixed_threshold_is_the_maps_own(categorical) -> None:
    """limit_cycle seed 301: std 0.033 < 0.05 (label_of: healthy), 0.10 with a quarter the noise."""
    config, sim_seed, truth = _case(categorical, "limit_cycle", 301)
    assert categorical.label_of("limit_cycle", truth) == "healthy"
    reading = categorical.sustained_oscillation(config, truth, seed=sim_seed)
    assert reading["amplitude"] < 0.05 and reading["quiet_amplitude"] > reading["amplitude"]
    assert reading["sustained"]
    assert categorical.label_sustained("limit_cycle", truth, config=config,
                                       seed=sim_seed) == "dynamical_instability"


def test_a_healthy_run_keeps_its_label_and_fluctuates_with_the_noise(categorical) -> None:
    """healthy seed 300: its fluctuation falls with the noise and stays under the quiet noise."""
    config, sim_seed, truth = _case(categorical, "healthy", 300)
    reading = categorical.sustained_oscillation(config, truth, seed=sim_seed)
    assert not reading["sustained"] and reading["quiet_amplitude"] < reading["quiet_noise"]
    assert categorical.label_sustained("healthy", truth, config=config,
                                       seed=sim_seed) == categorical.label_of("healthy", truth)
