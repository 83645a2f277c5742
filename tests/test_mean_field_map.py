"""MeanFieldMap: the system object against the map's simulation, the stability code and
predict (which is its summary)."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.ground import InputError
from grpodyn.numerics import stability
from grpodyn.numerics.mean_field_map import MeanFieldMap, iterate_map, lr_schedule
from grpodyn.numerics.predict import predict
from grpodyn.numerics.simulate import simulate_map


@pytest.mark.parametrize(("refresh", "staleness"), [(1, 0), (4, 0), (1, 3)])
def test_buffer_form_equals_the_map(refresh, staleness):
    system = MeanFieldMap(lr=0.02, kappa=3.0, momentum=0.8, refresh=refresh,
                          staleness=staleness)
    reference = simulate_map(momentum=0.8, stiffness=system.stiffness, e0=-0.4, steps=150,
                             refresh=refresh, staleness=staleness).e[0]
    buffer = iterate_map(momentum=0.8, scale=np.array([system.stiffness]), e0=np.array([-0.4]),
                         steps=150, staleness=staleness, refresh=refresh)[0]
    np.testing.assert_allclose(buffer, reference, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(system.displacement(150, e0=-0.4)[0], reference, rtol=1e-12)


def test_adam_without_bias_correction_is_heavy_ball_with_its_stiffness():
    adam = MeanFieldMap(lr=1e-3, kappa=40.0, optimizer="adam", momentum=0.9, noise_ratio=20.0,
                        group_size=4, batch=8)
    k = adam.stiffness
    assert k == pytest.approx(1e-3 * 0.1 * 40.0 / np.sqrt(1 + 20.0 / 32))
    plain = iterate_map(momentum=0.9, scale=np.array([k / 0.1]), e0=np.ones(1), steps=300,
                        weight=0.1)[0]
    heavy = simulate_map(momentum=0.9, stiffness=k, e0=1.0, steps=300).e[0]
    np.testing.assert_allclose(plain, heavy, rtol=1e-9)
    # bias correction makes the first steps larger: no slow start
    corrected = adam.displacement(300)[0]
    assert corrected[5] < plain[5] and corrected[-1] == pytest.approx(plain[-1], abs=0.02)


def test_adam_stiffness_depends_on_b_g_only_and_sgd_on_neither():
    def adam(g, b):
        return MeanFieldMap(lr=1e-3, kappa=5.0, optimizer="adam", momentum=0.9,
                            noise_ratio=50.0, group_size=g, batch=b).stiffness

    assert adam(2, 16) == pytest.approx(adam(8, 4)) and adam(4, 16) > adam(4, 4)
    sgd = [MeanFieldMap(lr=0.01, kappa=2.0, momentum=0.9, group_size=g, batch=b).stiffness
           for g, b in ((2, 4), (8, 16))]
    assert sgd[0] == sgd[1]
    signal = MeanFieldMap(lr=1e-3, kappa=5.0, optimizer="adam", momentum=0.9)
    assert signal.stiffness == pytest.approx(1e-3 * 0.1 * 5.0)


def test_poles_margins_and_regime_agree_with_the_stability_code():
    for refresh, staleness in ((1, 0), (3, 0), (1, 2)):
        for lr in (0.01, 0.2, 0.9, 1.5):
            system = MeanFieldMap(lr=lr, kappa=2.0, momentum=0.5, refresh=refresh,
                                  staleness=staleness)
            unstable = system.regime == "unstable"
            assert (system.spectral_radius >= 1 - 1e-9) == unstable, (refresh, staleness, lr)
            assert (system.stability_margin <= 0) == unstable, (refresh, staleness, lr)
    system = MeanFieldMap(lr=0.1, kappa=2.0, momentum=0.5, refresh=3)
    k_max = system.stiffness_max
    assert stability.refresh_stable(0.5, 0.999 * k_max, 3)
    assert not stability.refresh_stable(0.5, 1.001 * k_max, 3)
    assert system.lr_max == pytest.approx(k_max / 2.0)


def test_an_unstable_map_has_no_relaxation_time():
    """tau = c / k describes a relaxation; beyond the stability limit nothing relaxes."""
    result = predict(lr=100.0, momentum=0.9, kappa=1.0)
    assert result.regime == "unstable" and result.tau is None
    assert "tau" in result.to_dict() and result.to_dict()["tau"] is None
    assert predict(lr=0.01, momentum=0.9, kappa=1.0).tau == pytest.approx(10.0)


def test_predict_is_the_map_summary():
    result = predict(lr=0.05, momentum=0.9, kappa=0.4, noise=1e-3, r0=0.2, r_star=0.7,
                     steps=50)
    system = MeanFieldMap(lr=0.05, kappa=0.4, momentum=0.9)
    assert result.stiffness == system.stiffness and result.tau == system.tau
    assert result.regime == system.regime and result.zeta == system.zeta
    assert result.stationary_variance == system.stationary_variance(1e-3)
    np.testing.assert_allclose(result.trajectory, 0.7 + system.displacement(50, e0=-0.5)[0])


def test_schedules_and_trajectory_band():
    lrs = lr_schedule(1.0, 100, schedule="cosine", warmup=10)
    assert lrs[0] == 0 and lrs[10] == pytest.approx(1.0) and lrs[-1] < 0.01
    assert np.all(np.diff(lr_schedule(1.0, 50, schedule="linear")) < 0)
    slow = MeanFieldMap(lr=0.01, kappa=1.0, momentum=0.9, schedule="linear", warmup=20)
    fast = MeanFieldMap(lr=0.01, kappa=1.0, momentum=0.9)
    assert slow.displacement(200)[0][100] > fast.displacement(200)[0][100]
    band = fast.trajectory(r0=0.2, r_star=0.8, steps=100, noise=1e-4, level=0.9)
    assert np.all(band.lower <= band.mean + 1e-12) and np.all(band.upper >= band.mean - 1e-12)
    assert band.upper[-1] - band.lower[-1] > band.upper[1] - band.lower[1]


@pytest.mark.parametrize("kwargs", [{"optimizer": "rmsprop"}, {"lr": -1.0},
                                    {"schedule": "step"}, {"refresh": 2, "staleness": 1},
                                    {"optimizer": "adam", "noise_ratio": 3.0},
                                    {"group_size": 1}])
def test_bad_settings_name_the_input(kwargs):
    settings = {"lr": 0.01, "kappa": 1.0, **kwargs}
    with pytest.raises(InputError):
        MeanFieldMap(**settings)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_finite_group_trajectory_carries_the_drift_factor(optimizer):
    """The finite-G trajectory is the buffer map with D(G, p) from the compiled derivations."""
    from grpodyn.numerics.compiled import compiled

    adam = optimizer == "adam"
    kwargs = {"lr": 2e-4, "kappa": 60.0, "noise_ratio": 40.0} if adam else {"lr": 0.003,
                                                                          "kappa": 2.0}
    system = MeanFieldMap(optimizer=optimizer, momentum=0.9, group_size=4, batch=8,
                          finite_group=True, **kwargs)
    plateau, r0 = 0.7, 0.25

    def factor(e):
        p = plateau + e
        if not adam:
            return compiled("finite_group_drift_factor")(4, p)
        return (compiled("adam_stiffness_finite_group")(2e-4, 0.9, 60.0, 40.0, 8, 4, p)
                / compiled("adam_stiffness_noise_ratio")(2e-4, 0.9, 60.0, 40.0, 8, 4))

    scale = system.stiffness / (0.1 if adam else 1.0)
    reference = plateau + iterate_map(momentum=0.9, scale=np.array([scale]), e0=np.array(
        [r0 - plateau]), steps=200, weight=0.1 if adam else 1.0, bias_correction=adam,
        force_factor=factor)[0]
    band = system.trajectory(r0=r0, plateau=plateau, steps=200)
    np.testing.assert_allclose(band.mean, reference, rtol=1e-10)
    # D < 1 slows the early rise against the large-G map of the same constants
    large = MeanFieldMap(optimizer=optimizer, momentum=0.9, group_size=4, batch=8, **kwargs)
    assert band.mean[10] - r0 < large.trajectory(r0=r0, plateau=plateau, steps=200).mean[10] - r0
    assert system.to_dict()["finite_group"] and any("finite-G" in a for a in system.assumptions)
    with pytest.raises(InputError, match="plateau"):
        system.displacement(10, e0=-0.3)
    with pytest.raises(InputError, match="group_size"):
        MeanFieldMap(lr=0.01, kappa=1.0, finite_group=True)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_noise_drag_lowers_the_fixed_point_by_the_derived_shift(optimizer):
    from grpodyn.numerics.compiled import compiled

    common = {"momentum": 0.9, "group_size": 8, "batch": 4, "noise_curvature": 2.0}
    if optimizer == "sgd":
        system = MeanFieldMap(lr=0.01, kappa=0.5, prompt_noise=3.0, completion_noise=40.0,
                              **common)
        derived = compiled("sgd_noise_plateau_shift")(0.01, 0.9, 0.5, 2.0, 3.0, 40.0, 4, 8)
        assert system.plateau_shift == pytest.approx(derived, rel=1e-12)
    else:
        system = MeanFieldMap(lr=1e-3, kappa=30.0, optimizer="adam", noise_ratio=50.0,
                              prompt_noise_ratio=5.0, **common)
        k = compiled("adam_stiffness_split")(1e-3, 0.9, 30.0, 5.0, 50.0, 4, 8)
        assert system.stiffness == pytest.approx(k, rel=1e-12)
    e = system.displacement(3000, e0=-0.2)[0]
    assert e[-1] == pytest.approx(-system.plateau_shift, rel=1e-6)  # e* = -drag (1-beta) / k
    # the drag grows like lr^2, the stiffness like lr: the shift grows like lr
    doubled = MeanFieldMap(**{k_: getattr(system, k_) for k_ in (
        "kappa", "optimizer", "momentum", "group_size", "batch", "noise_curvature",
        "noise_ratio", "prompt_noise_ratio", "prompt_noise", "completion_noise")},
        lr=2 * system.lr)
    assert doubled.noise_drag == pytest.approx(4 * system.noise_drag, rel=1e-12)
    assert doubled.plateau_shift == pytest.approx(2 * system.plateau_shift, rel=1e-9)
