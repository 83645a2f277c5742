"""The softmax-bandit lab: simulator against theory (docs/theory.md section 8)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.bandit import lab
from grpodyn.empirical.bandit.simulation import BanditConfig, expected_update, simulate_bandit
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.ground import InputError
from grpodyn.numerics.bandit import bandit_theory
from grpodyn.numerics.compiled import compiled


@pytest.mark.parametrize("estimator", ["grpo", "dr_grpo", "rloo"])
@pytest.mark.parametrize("kl_estimator", ["k3", "forward"])
def test_enumerated_simulator_update_equals_sympy_drift(estimator, kl_estimator):
    config = BanditConfig(estimator=estimator, kl=0.7, kl_estimator=kl_estimator, x_ref=-0.3,
                          group_size=8)
    extra = (config.eps,) if estimator == "grpo" else ()
    for x in (-1.0, 0.2, 1.5, 3.0):
        drift = compiled(f"bandit_drift_{estimator}")(x, 8, *extra)
        kl = compiled(f"bandit_kl_gradient_{kl_estimator}")(x, -0.3)
        assert expected_update(x, config) == pytest.approx(drift - 0.7 * kl, abs=1e-13)


def test_runs_are_seeded_and_reproducible():
    config = replace(lab.DEFAULT_CONFIG, momentum=0.5)
    a = simulate_bandit(config, steps=50, seeds=8, seed=3)
    b = simulate_bandit(config, steps=50, seeds=8, seed=3)
    c = simulate_bandit(config, steps=50, seeds=8, seed=4)
    assert np.array_equal(a.x, b.x) and not np.array_equal(a.x, c.x)
    assert set(a.metrics) == {"reward", "reward_std", "frac_reward_zero_std", "kl", "entropy"}


def test_long_runs_settle_at_the_fixed_point():
    theory = bandit_theory(group_size=16, kl=0.5, kl_estimator="k3")
    run = simulate_bandit(lab.DEFAULT_CONFIG, steps=1500, seeds=200, seed=1)
    assert run.x[500:].mean() == pytest.approx(theory.x_star, abs=0.01)


def test_three_stiffness_measurements_agree_within_two_percent():
    estimate = lab.measure_stiffness(seeds=200_000)
    assert estimate.max_relative_spread < 0.02
    assert estimate.finite_difference == pytest.approx(estimate.analytic, rel=1e-6)


def test_transition_agrees_within_ten_percent():
    result = lab.transition_experiment(momenta=np.linspace(0.6, 0.9, 31), steps=2000)
    assert result.relative_error < 0.10
    # monotone below the boundary: no overshoot beyond the rounding of the fixed point
    assert all(o < 1e-9 for b, o in zip(result.momenta, result.overshoot, strict=True)
               if b < 0.95 * result.predicted_momentum)


@pytest.mark.parametrize("kind", ["refresh", "staleness"])
@pytest.mark.parametrize("momentum", [0.0, 0.5, 0.9])
def test_lag_threshold_within_one_step(kind, momentum):
    theory = bandit_theory(group_size=64, kl=0.5, kl_estimator="k3")
    k = lab.THRESHOLD_CONFIG.lr * theory.kappa
    from grpodyn.numerics import stability

    predicted = (stability.first_unstable_refresh(momentum=momentum, stiffness=k)
                 if kind == "refresh" else
                 stability.staleness_max(momentum=momentum, stiffness=k) + 1)
    lags = [lag for lag in (predicted - 2, predicted - 1, predicted + 1) if lag >= 1]
    result = lab.threshold_experiment(kind, momentum=momentum, lags=lags, seeds=16)
    assert result.predicted == predicted
    assert abs(result.observed - predicted) <= max(1, 0.1 * predicted), result


def test_importance_corrected_reuse_removes_the_threshold():
    for estimator in ("dr_grpo", "rloo"):
        theory = bandit_theory(estimator=estimator, group_size=64, kl=0.5, kl_estimator="k3")
        assert theory.kappa_stale == pytest.approx(0.0, abs=1e-12)
    config = replace(lab.THRESHOLD_CONFIG, estimator="dr_grpo")
    held = lab.threshold_experiment("refresh", config, lags=[40], seeds=8)
    reused = lab.threshold_experiment("num_iterations", config, lags=[40], seeds=8)
    assert held.observed == 40 and not np.isfinite(reused.observed)
    assert reused.predicted == float("inf")


def test_group_size_variance_matches_exact_finite_g_and_not_one_over_g():
    result = lab.group_size_experiment(group_sizes=(2, 8, 64), seeds=128,
                                       stationary_steps=2000, path_steps=50)
    for observed, predicted in zip(result.variance_observed, result.variance_predicted,
                                   strict=True):
        assert observed == pytest.approx(predicted, rel=0.10)
    # p* ~ 1/2: the GRPO noise vanishes to first order, so 1/G overestimates at large G
    assert result.variance_one_over_g[-1] > 10 * result.variance_observed[-1]


def test_closed_form_tracks_the_simulated_mean_path():
    with_inertia = lab.trajectory_experiment(momentum=0.8, seeds=256)
    assert with_inertia.r2_inertial > 0.95
    assert with_inertia.r2_inertial > with_inertia.r2_exponential


def test_many_arms_and_adam_run_and_learn():
    config = BanditConfig(arms=5, optimizer="adam", lr=0.05, momentum=0.9, estimator="rloo",
                          kl=0.05, kl_estimator="forward")
    run = simulate_bandit(config, steps=300, seeds=16)
    assert run.p[-1].mean() > run.p[0].mean() + 0.3
    assert np.isfinite(run.x).all()


def test_simulated_log_reads_like_a_trl_run(tmp_path, capsys):
    log = tmp_path / "trainer_state.json"
    assert main(["bandit", "--write-log", str(log), "--steps", "120", "--json"]) == 0
    capsys.readouterr()
    run = load_run(log)
    assert run.n_points == 120 and {"reward_std", "frac_reward_zero_std", "entropy",
                                    "kl"} <= set(run.metrics)
    assert main(["bandit", "--write-log", str(log)]) == 2  # never overwrites
    assert main(["bandit", "--experiment", "stiffness", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stiffness"]["max_relative_spread"] < 0.02


@pytest.mark.parametrize("kwargs,needle", [
    ({"momentum": 1.0}, "momentum"), ({"group_size": 1}, "group_size"),
    ({"estimator": "ppo"}, "estimator"), ({"refresh": 2, "staleness": 1}, "one of"),
    ({"kl": -0.1}, "kl"),
])
def test_bad_configs_are_refused(kwargs, needle):
    with pytest.raises(InputError, match=needle):
        BanditConfig(**kwargs)


@pytest.mark.parametrize("kl_estimator", ["k3", "forward"])
@pytest.mark.parametrize("reuse", [False, True])
def test_two_arm_fast_path_equals_general_engine(kl_estimator, reuse):
    from grpodyn.empirical.bandit.simulation import _Engine, _TwoArmEngine

    config = BanditConfig(estimator="grpo", kl=0.4, kl_estimator=kl_estimator, x_ref=0.3,
                          group_size=8, prompts=3)
    rng = np.random.default_rng(0)
    x = np.array([-0.5, 0.4, 1.7])
    wins = rng.integers(0, 9, size=(3, 3))
    p_old = 1 / (1 + np.exp(-(x - 0.3))) if reuse else None
    fast, fast_metrics = _TwoArmEngine(config, rng, 3).gradient(x, wins, p_old)
    logits = np.column_stack([x, np.zeros(3)])
    counts = np.stack([wins, 8 - wins], axis=-1)
    old = None if p_old is None else np.column_stack([p_old, 1 - p_old])
    general, general_metrics = _Engine(config, rng, 3).gradient(logits, counts, old)
    np.testing.assert_allclose(fast, general[:, 0], rtol=1e-12, atol=1e-15)
    for key in fast_metrics:
        np.testing.assert_allclose(fast_metrics[key], general_metrics[key], rtol=1e-12)


def test_theory_and_simulator_share_defaults():
    config = BanditConfig(kl=0.5)
    assert bandit_theory(group_size=config.group_size, kl=0.5).x_star == pytest.approx(
        bandit_theory(group_size=config.group_size, kl=0.5,
                      kl_estimator=config.kl_estimator).x_star, rel=1e-12)


def test_a_written_log_reads_back_its_own_settings(tmp_path, capsys):
    # the advice read beta = 0.9, "Adam's default", from a heavy-ball SGD run at beta = 0.5
    log = tmp_path / "m05.json"
    # and the KL coefficient (not the default 0.5), which only the sweep read
    assert main(["bandit", "--write-log", str(log), "--momentum", "0.5", "--steps", "60",
                 "--kl", "0.25", "--json"]) == 0
    capsys.readouterr()
    meta = load_run(log).meta
    read = {name: (getattr(meta, name).value, getattr(meta, name).source.split(":")[0])
            for name in ("optimizer", "momentum", "group_size", "batch", "lr", "kl")}
    config = json.loads(log.read_text())["grpodyn_bandit_config"]
    assert read == {"optimizer": ("sgd", "file"), "momentum": (0.5, "file"),
                    "group_size": (config["group_size"], "file"),
                    "batch": (config["prompts"], "file"), "lr": (config["lr"], "file"),
                    "kl": (0.25, "file")}


def test_the_kl_of_grpodyn_s_own_log_is_no_config_key_for_other_logs():
    """Reading grpodyn_hparams' ``kl`` must not make a bare ``kl`` a config key: an OpenRLHF
    console prints the KL metric as ``kl=...`` every step, and a config's ``"kl": "k3"`` (an
    estimator) hid TRL's ``beta``."""
    from pathlib import Path

    from grpodyn.empirical.logs.config import meta_from_config

    console = load_run(Path(__file__).parent / "data" / "formats" / "openrlhf_console.log")
    assert console.meta.kl is None and not any("kl printed" in w for w in console.warnings)
    assert meta_from_config({"beta": 0.04, "kl": "k3"}, "file:x", "x").kl.value == 0.04
