"""What the sources cannot resolve is not called determined, and is not used as if it were."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from grpodyn.empirical.logs.sweep_exponents import TAU_LR_PRIOR_SD, lr_exponent
from grpodyn.empirical.logs.sweep_fit import fit_sweep
from grpodyn.empirical.logs.sweep_runs import SweepRun

ADAM = {"optimizer": "adam", "momentum": 0.9, "group_size": 8, "batch": 16}


def _measured(value: float | None, stderr: float | None, status: str = "") -> SimpleNamespace:
    """A sweep fit of two Adam runs whose tau-lr exponent is ``value`` +- ``stderr``."""
    runs = [SimpleNamespace(hparams={**ADAM, "lr": lr}) for lr in (1e-5, 2e-5)]
    measured = {"value": value, "stderr": stderr, "learning_rates": [1e-5, 2e-5]}
    if status:
        measured["status"] = status
    return SimpleNamespace(fitted=runs, tau_lr_exponent=lambda: {"adam": measured})


def test_an_exponent_with_an_error_of_51_is_not_used() -> None:
    """-4.43 +- 51 from two lrs a factor 2 apart: the law's -1 with its spread, said so."""
    used = lr_exponent(_measured(-4.43, 51.3), {"optimizer": "adam"})
    assert (used["value"], used["stderr"]) == (-1.0, TAU_LR_PRIOR_SD)
    assert used["status"].startswith("not determined (the sources' error on it is 1 or more)")
    assert "-4.43 +- 51.3" in used["status"]


def test_a_resolved_exponent_is_used() -> None:
    used = lr_exponent(_measured(-1.05, 0.05), {"optimizer": "adam"})
    assert used["value"] == pytest.approx(-1.05)
    assert used["status"].startswith("determined by the sources' learning rates")


def test_two_lrs_without_a_stiffness_say_so() -> None:
    """Not 'one learning rate' where the sources hold two: the sweep's own reason."""
    why = ("not determined: fewer than two learning rates with a determined stiffness at "
           "otherwise equal settings")
    used = lr_exponent(_measured(None, None, why), {"optimizer": "adam"})
    assert "fewer than two learning rates with a determined stiffness" in used["status"]
    assert "one learning rate" not in used["status"]


def test_a_stiffness_known_to_a_factor_beyond_20_is_not_determined() -> None:
    """Two runs of noise around 0: the stiffness's log error is tens of units."""
    runs = []
    for seed, lr in enumerate((1e-5, 2e-5)):
        steps = np.arange(120.0)
        reward = 0.1 * np.random.default_rng(seed).standard_normal(120)
        runs.append(SweepRun(f"lr {lr:g}", steps, reward, {**ADAM, "lr": lr}))
    kappa = fit_sweep(runs).constants()["kappa_A_ref"]
    assert kappa["status"].startswith("not determined (log error")


def test_runs_that_read_different_rewards_are_warned_of() -> None:
    steps = np.arange(60.0)
    reward = 0.2 + 0.5 * (1 - np.exp(-steps / 15))
    runs = [SweepRun("a", steps, reward, {**ADAM, "lr": 1e-5}, reward_key="reward"),
            SweepRun("b", steps, reward, {**ADAM, "lr": 2e-5}, reward_key="mean_reward")]
    warnings = fit_sweep(runs).warnings
    assert any("different metrics (a: 'reward', b: 'mean_reward')" in w for w in warnings)


def test_the_sweep_states_the_exponent_against_the_law_as_transfer_tests_it() -> None:
    """-1.23 +- 0.037: 6.2 se off -1, yet within the 2 sd of the law; -1.75 beyond both, yet
    transfer uses it (tau falls with lr); +0.5 falls back, as transfer's own status says."""
    from grpodyn.cli.sweep import _off_law

    near = _off_law(-1.23, 0.037)
    assert "6.2 se off it" in near and "within the 2 sd in which grpodyn transfer reads" in near
    assert "beyond the 2 sd of the law, but tau falls with lr as the law says: grpodyn " \
           "transfer uses the measured exponent" in _off_law(-1.75, 0.077)
    assert "grpodyn transfer falls back to the nearest source" in _off_law(0.5, 0.1)
    assert "resolves nothing: grpodyn transfer uses the law's -1" in _off_law(-4, 1.2)
    assert "groups of learning rates disagree: grpodyn transfer falls back" in _off_law(
        -1.75, 0.077, {"p_value": 1e-6})
    assert _off_law(-1.05, 0.05) == ""
