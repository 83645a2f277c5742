"""Fits recover known parameters; their 95% intervals cover the truth 90-98% of the time."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.ground import InputError
from grpodyn.numerics.fit import estimate_noise, fit_curve, fit_models
from grpodyn.numerics.simulate import simulate_sde

#: (momentum, stiffness, process noise s^2, observation noise sd, points): several regimes
#: (overdamped, oscillatory, no momentum) and noise levels.
SETTINGS = [(0.9, 0.002, 1e-7, 0.03, 1000), (0.5, 0.01, 1e-6, 0.02, 600),
            (0.0, 0.02, 0.0, 0.05, 300), (0.9, 0.01, 1e-6, 0.01, 400)]
R0, R_STAR = 0.2, 0.7


def _synthetic(seed, momentum, stiffness, s2, obs, n):
    e = simulate_sde(momentum=momentum, stiffness=stiffness, e0=R0 - R_STAR, steps=n - 1,
                     noise=s2, seed=seed)[0]
    return np.arange(n), R_STAR + e + obs * np.random.default_rng(seed + 10**6).standard_normal(n)


@pytest.mark.parametrize("setting", SETTINGS)
def test_interval_coverage_over_200_seeded_trials(setting):
    momentum, stiffness = setting[0], setting[1]
    truth = {"r0": R0, "r_star": R_STAR, "stiffness": stiffness}
    hits = {name: 0 for name in truth}
    trials = 200
    for seed in range(trials):
        t, y = _synthetic(seed, *setting)
        intervals = fit_curve("inertial", t, y, momentum=momentum).interval(0.95)
        for name, value in truth.items():
            low, high = intervals[name]
            hits[name] += low <= value <= high
    coverage = {name: count / trials for name, count in hits.items()}
    assert all(0.90 <= c <= 0.98 for c in coverage.values()), coverage


def test_free_inertial_recovers_damping_and_frequency():
    from grpodyn.numerics.compiled import compiled

    # near critical damping the inertia is visible, so zeta and omega0 are both identified
    momentum, stiffness = 0.9, 0.0026
    t, y = _synthetic(3, momentum, stiffness, 0.0, 0.005, 400)
    fit = fit_curve("inertial", t, y)
    zeta = compiled("damping_ratio")(momentum, stiffness)
    omega0 = compiled("natural_frequency")(momentum, stiffness)
    intervals = fit.interval(0.95)
    assert intervals["zeta"][0] <= zeta <= intervals["zeta"][1]
    assert intervals["omega0"][0] <= omega0 <= intervals["omega0"][1]
    assert fit.derived()["tau"] == pytest.approx(2 * zeta / omega0, rel=0.05)


def test_exponential_law_recovers_tau_and_aic_prefers_inertia_when_present():
    t = np.arange(500)
    rng = np.random.default_rng(0)
    y = 0.8 - 0.6 * np.exp(-t / 60.0) + 0.01 * rng.standard_normal(t.size)
    fit = fit_curve("exponential", t, y)
    low, high = fit.interval()["tau"]
    assert low <= 60.0 <= high
    # slow start from inertia (zeta ~ 1): the inertial model wins by AIC
    t2, y2 = _synthetic(1, 0.9, 0.0026, 0.0, 0.01, 400)
    fits = fit_models(t2, y2, models=("inertial", "exponential", "sigmoid"))
    assert min(fits, key=lambda n: fits[n].aic) == "inertial"


def test_learning_rate_clock_captures_warmup():
    t = np.arange(300.0)
    lr = np.minimum(t / 50.0, 1.0) * 1e-3
    clock = np.concatenate([[0.0], np.cumsum(0.5 * (lr[1:] + lr[:-1]))])
    y = 0.9 - 0.7 * np.exp(-clock / 0.04) + 0.005 * np.random.default_rng(2).standard_normal(300)
    fits = fit_models(t, y, learning_rate=lr)
    assert fits["exponential_lr"].params["lr_time"] == pytest.approx(0.04, rel=0.05)
    assert fits["exponential_lr"].aic < fits["exponential"].aic


def test_noise_ceiling_of_white_noise_around_a_curve():
    t = np.arange(2000)
    signal = 0.5 - 0.4 * np.exp(-t / 300)
    y = signal + 0.05 * np.random.default_rng(5).standard_normal(t.size)
    noise = estimate_noise(y)
    assert noise.sigma == pytest.approx(0.05, rel=0.05)
    expected = 1 - 0.05**2 / np.var(y)
    assert noise.r2_ceiling == pytest.approx(expected, abs=0.02)
    assert fit_curve("exponential", t, y).r2 <= noise.r2_ceiling + 0.01


def test_plateau_range_constrains_the_fit_and_bounds_are_reported():
    # a straight ramp on [0, 1]: unconstrained, the exponential's plateau runs away
    t = np.arange(100.0)
    y = 0.1 + 0.004 * t + 0.01 * np.random.default_rng(3).standard_normal(t.size)
    free = fit_curve("exponential", t, y)
    boxed = fit_curve("exponential", t, y, plateau_bounds=(0.0, 1.0))
    assert free.params["r_star"] > 1
    assert 0 <= boxed.params["r_star"] <= 1 and 0 <= boxed.params["r0"] <= 1
    assert "r_star" in boxed.at_bounds
    assert boxed.rss >= free.rss  # the box can only cost fit
    # a saturated curve inside the range is untouched by the box
    y2 = 0.8 - 0.6 * np.exp(-t / 15) + 0.01 * np.random.default_rng(4).standard_normal(t.size)
    a, b = fit_curve("exponential", t, y2), fit_curve("exponential", t, y2,
                                                       plateau_bounds=(0.0, 1.0))
    assert a.params == pytest.approx(b.params) and not b.at_bounds


def test_singular_fit_has_no_standard_errors():
    # a sigmoid on a clean step: the width collapses and J^T J is singular; the covariance's
    # "standard errors" (0 for the width) must not be reported
    t = np.arange(60.0)
    y = np.where(t < 30, 0.2, 0.8) + 0.001 * np.random.default_rng(1).standard_normal(t.size)
    fit = fit_curve("sigmoid", t, y)
    assert fit.singular
    assert all(v is None for v in fit.to_dict()["stderr"].values())
    # a well-posed fit is not flagged
    y2 = 0.8 - 0.6 * np.exp(-t / 15) + 0.01 * np.random.default_rng(4).standard_normal(t.size)
    assert not fit_curve("exponential", t, y2).singular


@pytest.mark.parametrize("t,y,needle", [
    (np.arange(3), np.arange(3.0), "at least 5"),
    (np.arange(10), np.ones(10), "constant"),
    (np.arange(10)[::-1], np.arange(10.0), "increasing"),
    (np.arange(10), np.r_[np.arange(9.0), np.nan], "finite"),
])
def test_bad_series_are_refused(t, y, needle):
    with pytest.raises(InputError, match=needle):
        fit_curve("exponential", t, y)


def test_fit_cli_on_an_excerpt(capsys, tmp_path):
    from pathlib import Path

    log = Path(__file__).parent / "data" / "real_logs" / \
        "IMJONEZZ__UnslothGRPO__outputs_checkpoint-250_trainer_state.excerpt.json"
    assert main(["fit", str(log), "--train-fraction", "0.6", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"source", "n_points", "models", "best", "forecast", "plateau"} <= set(result)
    for entry in result["models"].values():
        assert {"params", "r2", "aic", "bic", "stderr", "at_bounds", "singular"} <= set(entry)
    assert {"r2_holdout", "mae_holdout", "coverage", "weights"} <= set(result["forecast"])
    assert main(["fit", str(log), "--momentum", "0.9", "--model", "inertial", "--json"]) == 0
    fixed = json.loads(capsys.readouterr().out)
    assert set(fixed["models"]) == {"inertial"}
    assert set(fixed["models"]["inertial"]["params"]) == {"r0", "r_star", "stiffness"}
    assert main(["fit", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["fit", str(log), "--train-fraction", "1.5"]) == 2
    assert main(["fit", str(log), "--reward-range", "1,0"]) == 2
    assert "LO < HI" in capsys.readouterr().err
