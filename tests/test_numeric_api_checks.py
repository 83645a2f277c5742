"""Inputs of the numeric API refused with an error that names them.

forecast_curve, regime and the lag searches, fit_curve's loss and the bandit's Adam settings:
each bad value raises :class:`grpodyn.ground.InputError` naming the argument, where it was
once ignored, dropped or answered.
"""

from __future__ import annotations

import numpy as np
import pytest

import grpodyn
from grpodyn.ground import InputError
from grpodyn.numerics.stability import BeyondCap, first_unstable_refresh, regime, staleness_max

T = np.arange(1.0, 61.0)
Y = 0.2 + 0.5 * (1 - np.exp(-T / 15)) + 0.03 * np.random.default_rng(0).standard_normal(60)
FUTURE = np.arange(61.0, 81.0)


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"bounds": (1.0, 0.0)}, "bounds must be .lo, hi. with lo < hi"),
    ({"bounds": (0.9, 1.0)}, "bounds .* hold none of the training rewards"),
    ({"bounds": (0.0, np.nan)}, "bounds must be finite"),
    ({"momentum": 1.5}, "momentum must lie in"),
    ({"momentum": -3.0}, "momentum must lie in"),
    ({"future_steps": np.arange(1.0, 11.0)}, "future_steps must all lie after the last "
                                              "training step 60"),
    ({"future_steps": []}, "future_steps holds no step"),
    ({"members": ("exponential", "exponentail")}, "members: unknown 'exponentail'; the members "
                                                  "are level, flat"),
    ({"members": ("exponentail",)}, "members: unknown 'exponentail'"),
    ({"members": "exponential"}, "members must be a sequence of names"),
    ({"members": ("exponential_lr",), "learning_rate": np.linspace(1e-5, 0, 60)},
     "learning_rate must be the pair .steps, lr."),
    ({"learning_rate": (T, -np.ones(60))}, "learning_rate must be non-negative"),
    ({"learning_rate": (T, np.ones(59))}, "learning_rate: the schedule's steps .60. and rates "
                                          ".59."),
    ({"n_train": 30.5}, "n_train must be an integer"),
])
def test_forecast_curve_refuses_a_bad_input_naming_it(kwargs, needle):
    arguments = {"n_train": 60, "future_steps": FUTURE, **kwargs}
    with pytest.raises(InputError, match=needle):
        grpodyn.forecast_curve(T, Y, **arguments)


def test_forecast_curve_refuses_series_of_two_lengths():
    with pytest.raises(InputError, match=r"steps \(60\) and reward \(59\) differ in length"):
        grpodyn.forecast_curve(T, Y[:-1], n_train=40, future_steps=FUTURE)


def test_forecast_curve_takes_what_it_documents():
    """A valid schedule pair, a reward range holding the rewards and sigmoid as a member."""
    lr = (np.arange(1.0, 81.0), np.full(80, 1e-3))
    fc = grpodyn.forecast_curve(T, Y, n_train=60, future_steps=FUTURE, learning_rate=lr,
                                bounds=(0.0, 1.0), members=("exponential", "exponential_lr",
                                                            "sigmoid"), stack=False)
    assert set(fc.weights) <= {"exponential", "exponential_lr", "sigmoid"}
    assert fc.steps.size == FUTURE.size


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"refresh": 0}, "refresh must be >= 1, got 0"),
    ({"refresh": -3}, "refresh must be >= 1"),
    ({"refresh": 2.5}, "refresh must be an integer, got 2.5"),
    ({"staleness": -1}, "staleness must be >= 0"),
    ({"staleness": 0.5}, "staleness must be an integer, got 0.5"),
    ({"staleness": 10_000}, "staleness 10000: at most 200"),
    ({"refresh": 2, "staleness": 1}, "either refresh or staleness, not both"),
])
def test_regime_refuses_the_lags_that_the_map_refuses(kwargs, needle):
    with pytest.raises(InputError, match=needle):
        regime(momentum=0.9, stiffness=1.0, **kwargs)
    with pytest.raises(InputError):
        grpodyn.MeanFieldMap(lr=1.0, kappa=1.0, momentum=0.9, **kwargs)


def test_regime_takes_integer_lags_of_any_integer_type():
    assert regime(momentum=0.9, stiffness=0.01, refresh=np.int64(4)) == regime(
        momentum=0.9, stiffness=0.01, refresh=4.0)
    assert regime(momentum=0.9, stiffness=1.0, staleness=0) == "oscillatory"


@pytest.mark.parametrize(("search", "cap", "needle"), [
    (first_unstable_refresh, 0, "cap must be >= 1, got 0"),
    (first_unstable_refresh, 2.5, "cap must be an integer"),
    (staleness_max, -1, "cap must be >= 0, got -1"),
])
def test_the_lag_searches_refuse_a_bad_cap(search, cap, needle):
    with pytest.raises(InputError, match=needle) as caught:
        search(momentum=0.9, stiffness=0.1, cap=cap)
    assert not isinstance(caught.value, BeyondCap)


@pytest.mark.parametrize("loss", ["hubber", "l1", 3, None])
def test_fit_curve_refuses_an_unknown_loss_naming_the_valid_ones(loss):
    with pytest.raises(InputError, match="loss must be one of linear, soft_l1, huber, cauchy, "
                                         "arctan"):
        grpodyn.fit_curve("exponential", T, Y, loss=loss)


def test_fit_curve_still_takes_a_robust_loss():
    assert grpodyn.fit_curve("exponential", T, Y, loss="huber").params["r_star"] > 0.5


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"beta2": 1.0}, "beta2 must lie in"), ({"beta2": 1.5}, "beta2 must lie in"),
    ({"beta2": -0.1}, "beta2 must lie in"), ({"adam_eps": 0.0}, "adam_eps must be positive"),
    ({"adam_eps": -1.0}, "adam_eps must be positive"),
    ({"adam_eps": float("nan")}, "adam_eps must be finite"),
])
def test_bandit_config_refuses_bad_adam_settings(kwargs, needle):
    with pytest.raises(InputError, match=needle):
        grpodyn.BanditConfig(lr=0.1, optimizer="adam", **kwargs)


def test_bandit_config_takes_valid_adam_settings():
    config = grpodyn.BanditConfig(lr=0.1, optimizer="adam", beta2=0.0, adam_eps=1e-6)
    run = grpodyn.simulate_bandit(config, steps=5, seeds=2)
    assert np.isfinite(run.p).all()


@pytest.mark.parametrize("unit, offset", [(1e-9, 0.0), (1.0, 5.0), (1e11, 0.0), (1e11, 3e12)])
def test_the_point_weights_are_the_same_at_any_unit_and_offset(unit, offset):
    # the linear programme of the point's weights is posed in the rewards' own frame: at 1e11
    # the solver stopped (HiGHS status 15) before
    from grpodyn.numerics.forecast import _point_weights

    rng = np.random.default_rng(4)
    observed = 0.5 + 0.1 * rng.standard_normal(60)
    forecasts = np.vstack([observed + 0.05 * rng.standard_normal(60) + shift
                           for shift in (-0.1, 0.0, 0.05)])
    reference = _point_weights(forecasts, observed)
    scaled = _point_weights(forecasts * unit + offset, observed * unit + offset)
    np.testing.assert_allclose(scaled, reference, atol=1e-6)
