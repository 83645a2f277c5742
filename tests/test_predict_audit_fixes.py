"""``grpodyn predict`` and the functions under it: lag limits beyond the search cap, diverging
paths, the two stiffness limits, the decay time of a deadbeat map, bad API input, the help text."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.ground import InputError, check_finite, check_momentum, check_positive
from grpodyn.numerics import stability
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.mean_field_map import MeanFieldMap
from grpodyn.numerics.predict import predict


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# -- 1. lag limits beyond the search cap, and tiny stiffnesses ------------------------------------
@pytest.mark.parametrize("argv", [["--lr", "1e-6", "--momentum", "0.9", "--kappa", "1"],
                                  ["--lr", "1e-5", "--momentum", "0", "--kappa", "1"]])
def test_a_small_stiffness_is_predicted_with_its_staleness_limit_beyond_the_cap(capsys, argv):
    result = _json(capsys, ["predict", *argv])
    assert result["staleness_max"] is None and result["staleness_max_status"] == "beyond_cap"
    assert f"{stability.STALENESS_SEARCH_CAP:,}" in result["staleness_max_reason"]
    assert result["refresh_max_status"] == "determined" and result["refresh_max"] > 1000
    assert main(["predict", *argv]) == 0
    assert "staleness_max: beyond the cap" in capsys.readouterr().out


def test_the_limit_functions_tell_beyond_the_cap_from_unstable_at_once():
    with pytest.raises(stability.BeyondCap, match="cap") as caught:
        stability.staleness_max(momentum=0.9, stiffness=1e-6)
    assert isinstance(caught.value, InputError) and caught.value.cap == 100_000
    with pytest.raises(stability.BeyondCap):
        stability.refresh_max(momentum=0.9, stiffness=1e-9)
    assert stability.staleness_max(momentum=0.5, stiffness=3.1) is None  # on-policy unstable
    assert stability.refresh_max(momentum=0.0, stiffness=3.0) is None  # K = 1 unstable
    # the exact values where they are found: without momentum K* = 2 / k, marginal K unstable
    assert stability.refresh_max(momentum=0.0, stiffness=2.0**-10) == 2047
    assert stability.staleness_max(momentum=0.0, stiffness=1e-4) == pytest.approx(
        np.pi / 2 / 1e-4, rel=1e-3)


@pytest.mark.parametrize("beta", [0.0, 0.9, 0.999])
def test_a_tiny_stiffness_is_stable_at_every_lag_below_the_caps(beta):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = predict(lr=1e-17, momentum=beta, kappa=1.0)
        assert result.regime == "overdamped"
        assert result.refresh_max is None and result.refresh_max_status == "beyond_cap"
        assert result.staleness_max is None and result.staleness_max_status == "beyond_cap"
        # the slow pole 1 - k / c to first order: the envelope decays in c / k steps
        assert result.decay_time == pytest.approx((1 - beta) / 1e-17, rel=1e-6)
        for lag in ({"refresh": 4}, {"staleness": 3}):
            assert stability.regime(momentum=beta, stiffness=1e-17, **lag) == "overdamped"
            lagged = predict(lr=1e-17, momentum=beta, kappa=1.0, **lag)
            assert lagged.decay_time == pytest.approx((1 - beta) / 1e-17, rel=1e-6)


def test_the_limit_statuses_name_an_unstable_map():
    result = predict(lr=5.0, momentum=0.9, kappa=1.0)
    assert result.refresh_max_status == result.staleness_max_status == "unstable"
    shown = result.to_dict()
    assert shown["refresh_max"] is None and "unstable" in shown["refresh_max_reason"]
    assert predict(lr=0.01, momentum=0.9, kappa=1.0).to_dict()["refresh_max_status"] \
        == "determined"


# -- 2. a diverging predicted path says so --------------------------------------------------------
def test_the_path_of_an_unstable_map_is_flagged_as_diverging(capsys):
    result = predict(lr=3.9, momentum=0.9, kappa=1.0, r0=0.2, plateau=0.8, steps=50)
    assert abs(result.trajectory[-1]) > 1e5
    assert result.path.unstable and result.trajectory_diverged
    assert result.to_dict()["trajectory_diverged"] is True
    band = MeanFieldMap(lr=3.9, kappa=1.0, momentum=0.9).trajectory(r0=0.2, plateau=0.8,
                                                                    steps=50)
    assert band.unstable
    stable = MeanFieldMap(lr=0.01, kappa=1.0, momentum=0.9).trajectory(r0=0.2, plateau=0.8,
                                                                       steps=50)
    assert not stable.unstable
    assert main(["predict", "--lr", "5", "--momentum", "0.9", "--kappa", "1", "--r0", "0.2",
                 "--plateau", "0.8", "--steps", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "regime: unstable" in lines and "trajectory_diverged: True" in lines


# -- 3. the two stiffness limits and the relaxation time of an unstable map ------------------------
def test_the_maps_dict_names_the_lag_limit_and_predict_the_on_policy_one():
    result = predict(lr=0.01, momentum=0.9, kappa=1.0, refresh=4)
    shown = result.system.to_dict()
    assert result.stiffness_max == pytest.approx(3.8)
    assert shown["stiffness_max_lag"] == pytest.approx(0.0730614, rel=1e-5)
    assert shown["stiffness_max_lag"] == shown["stiffness_max"] == result.stiffness_max_lag


def test_an_unstable_map_has_no_relaxation_time_in_either_place():
    system = MeanFieldMap(lr=5.0, kappa=1.0, momentum=0.9)
    assert math.isnan(system.tau) and system.to_dict()["tau"] is None
    assert predict(lr=5.0, momentum=0.9, kappa=1.0).tau is None
    stable = MeanFieldMap(lr=0.01, kappa=1.0, momentum=0.9)
    assert stable.tau == pytest.approx(10.0) == predict(lr=0.01, momentum=0.9, kappa=1.0).tau


# -- 4. the deadbeat map ------------------------------------------------------------------------
def test_the_deadbeat_map_decays_at_once_without_a_warning(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert predict(lr=1.0, momentum=0.0, kappa=1.0).decay_time == 0.0
        assert predict(lr=0.5, momentum=0.0, kappa=1.0, refresh=2).decay_time == 0.0  # K k = 1
        assert main(["predict", "--lr", "1", "--momentum", "0", "--kappa", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "decay_time: 0" in captured.out.splitlines()
    assert "vanishes after one step" in captured.out
    # the closed form agrees with the poles where both are resolved
    for beta, k in ((0.0, 0.3), (0.5, 0.01), (0.9, 0.5), (0.5, 2.9)):
        radius = MeanFieldMap(lr=k, kappa=1.0, momentum=beta).spectral_radius
        assert predict(lr=k, momentum=beta, kappa=1.0).decay_time == pytest.approx(
            -1 / math.log(radius), rel=1e-9)


# -- 5. bad API input ---------------------------------------------------------------------------
@pytest.mark.parametrize(("lr", "needle"), [
    (np.array([0.01, 0.02]), "lr must be a number, got an array of 2 values"),
    ("0.01", "lr must be a number, got a str"),
    (True, "lr must be a number, got a bool"),
    (None, "lr must be a number, got None")])
def test_predict_names_a_bad_lr(lr, needle):
    with pytest.raises(InputError, match=needle):
        predict(lr=lr, momentum=0.9, kappa=1.0)
    with pytest.raises(InputError, match=needle.replace("lr", "kappa", 1)):
        predict(lr=0.01, momentum=0.9, kappa=lr)


def test_the_shared_checks_take_numbers_and_arrays_of_numbers_and_refuse_text():
    assert float(check_positive("x", np.float32(0.5))) == 0.5
    assert float(check_positive("x", np.int64(3), scalar=True)) == 3.0
    assert float(check_momentum(0, scalar=True)) == 0.0
    assert check_finite("x", [1, 2.5]).shape == (2,)
    with pytest.raises(InputError, match="x must be a number, got a str"):
        check_finite("x", "1")
    with pytest.raises(InputError, match="x must be a number"):
        check_finite("x", ["1", "2"])
    with pytest.raises(InputError, match="momentum must be a number, got an array of 2"):
        check_momentum([0.1, 0.2], scalar=True)
    with pytest.raises(InputError, match="lr must be a number, got a str"):
        MeanFieldMap(lr="0.01", kappa=1.0)


def test_an_unknown_compiled_function_is_named_with_the_known_ones():
    with pytest.raises(InputError, match="no compiled function 'nope'; known: ") as caught:
        compiled("nope")
    assert isinstance(caught.value, KeyError) and "stiffness_max" in str(caught.value)
    with pytest.raises(InputError, match="did you mean 'stiffness_max'"):
        compiled("stifness_max")


# -- 6. the help text -----------------------------------------------------------------------------
def test_the_help_gives_the_momentum_bound_that_is_enforced(capsys):
    assert main(["predict", "-h"]) == 0
    assert "momentum beta in [0, 0.999]" in " ".join(capsys.readouterr().out.split())
