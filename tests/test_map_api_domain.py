"""The domain of the map's Python API: what MeanFieldMap and predict take, refuse and return.

A fixed staleness is capped as on the command line and its stability limit is computed once, in
closed form; a decaying schedule is shaped to the run's planned length, not to the steps asked
for; inputs the map would ignore or could not compute with are refused by name; an unstable map
keeps its noise keys (null, with a note) and its path runs to +-inf, not NaN.
"""

from __future__ import annotations

import json
import time
import warnings

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.ground import InputError
from grpodyn.numerics import stability
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.mean_field_map import MeanFieldMap, lr_schedule
from grpodyn.numerics.predict import predict

BASE = {"lr": 0.01, "kappa": 1.0, "momentum": 0.9}
UNSTABLE_NOTE = "no stationary variance: the map is unstable"


def _cli(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# -- 1. fixed staleness: one closed-form limit per map, and the CLI's cap -------------------------

@pytest.mark.parametrize("beta", [0.0, 0.5, 0.9, 0.99])
@pytest.mark.parametrize("d", [1, 2, 3, 7, 40, 200])
def test_staleness_limit_sits_on_the_schur_cohn_boundary(beta, d):
    k = stability.staleness_stiffness_max(beta, d)
    assert stability.staleness_stable(beta, k * (1 - 1e-7), d)
    assert not stability.staleness_stable(beta, k * (1 + 1e-7), d)


@pytest.mark.parametrize("beta", [0.0, 0.3, 0.9, 0.999])
def test_staleness_limit_equals_the_derived_d1_d2_forms(beta):
    assert stability.staleness_stiffness_max(beta, 1) == pytest.approx(
        compiled("staleness_stiffness_max_d1")(beta), rel=1e-12)
    assert stability.staleness_stiffness_max(beta, 2) == pytest.approx(
        compiled("staleness_stiffness_max_d2")(beta), rel=1e-12)


def test_to_dict_computes_the_staleness_limit_once(monkeypatch):
    calls = []
    original = stability.staleness_stiffness_max

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(stability, "staleness_stiffness_max", counted)
    system = MeanFieldMap(**BASE, staleness=5)
    system.to_dict()
    system.to_dict()
    assert len(calls) == 1


def test_to_dict_at_the_staleness_cap_takes_well_under_seconds():
    MeanFieldMap(**BASE, staleness=2).to_dict()  # the compiled functions, built once
    start = time.perf_counter()
    out = MeanFieldMap(**BASE, staleness=stability.STALENESS_MAX).to_dict()
    assert time.perf_counter() - start < 2.0  # 6 s before (three O(d^3) root searches)
    assert out["stiffness_max_lag"] == out["stiffness_max"] == stability.staleness_stiffness_max(
        0.9, stability.STALENESS_MAX)


@pytest.mark.parametrize("build", [
    lambda d: MeanFieldMap(**BASE, staleness=d),
    lambda d: predict(**BASE, staleness=d),
])
def test_staleness_beyond_the_cap_is_refused_at_once_by_the_api(build):
    start = time.perf_counter()
    with pytest.raises(InputError, match=rf"staleness 5000: at most {stability.STALENESS_MAX}"):
        build(5000)
    assert time.perf_counter() - start < 1.0
    build(stability.STALENESS_MAX)  # the cap itself is taken


def test_cli_and_api_share_the_staleness_message(capsys):
    with pytest.raises(InputError) as api:
        MeanFieldMap(**BASE, staleness=800)
    code, _, err = _cli(["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1",
                         "--staleness", "800"], capsys)
    assert code == 2 and err.strip() == f"grpodyn: error: --{api.value}"


# -- 2. a decaying schedule is shaped to the run's planned length ---------------------------------

@pytest.mark.parametrize("schedule", ["linear", "cosine"])
def test_planned_steps_fix_the_schedule_whatever_steps_are_shown(schedule):
    system = MeanFieldMap(**BASE, schedule=schedule, warmup=2)
    short = system.trajectory(r0=0.1, plateau=0.8, steps=5, planned_steps=1000).values
    long = system.trajectory(r0=0.1, plateau=0.8, steps=1000, planned_steps=1000).values
    np.testing.assert_array_equal(short, long[:6])
    # the default plans the run to end at the last step shown (as before, now documented)
    np.testing.assert_array_equal(system.trajectory(r0=0.1, plateau=0.8, steps=5).values,
                                  system.trajectory(r0=0.1, plateau=0.8, steps=5,
                                                    planned_steps=5).values)


def test_lr_schedule_with_planned_steps():
    lrs = lr_schedule(1.0, 6, schedule="linear", planned_steps=4)
    np.testing.assert_allclose(lrs, [1.0, 0.75, 0.5, 0.25, 0.0, 0.0])  # 0 after the planned end
    np.testing.assert_allclose(lr_schedule(1.0, 3, schedule="cosine", planned_steps=100),
                               lr_schedule(1.0, 100, schedule="cosine")[:3])
    with pytest.raises(InputError, match="planned_steps"):
        lr_schedule(1.0, 3, schedule="linear", planned_steps=0)
    with pytest.raises(InputError, match="planned_steps"):
        MeanFieldMap(**BASE, schedule="cosine").trajectory(r0=0.1, plateau=0.8, steps=3,
                                                           planned_steps=2.5)


# -- 3. inputs the map would ignore, or cannot compute with ---------------------------------------

@pytest.mark.parametrize("extra,name", [
    ({"noise_ratio": 5.0}, "noise_ratio"),
    ({"prompt_noise_ratio": 2.0}, "prompt_noise_ratio"),
    ({"beta2": 0.5}, "beta2"),
])
def test_sgd_refuses_adams_constants_by_name(extra, name):
    with pytest.raises(InputError, match=name):
        MeanFieldMap(**BASE, **extra)


@pytest.mark.parametrize("name", ["prompt_noise", "completion_noise"])
def test_adam_refuses_sgds_noise_constants_by_name(name):
    with pytest.raises(InputError, match=name):
        MeanFieldMap(lr=1e-3, kappa=40.0, optimizer="adam", momentum=0.9, **{name: 3.0})


@pytest.mark.parametrize("lr,kappa", [(1e-320, 1.0), (1e-300, 1e-20), (1e300, 1e300)])
def test_map_refuses_a_stiffness_outside_the_normal_floats_as_predict_does(lr, kappa):
    with pytest.raises(InputError, match="stiffness") as mapped:
        MeanFieldMap(lr=lr, kappa=kappa, momentum=0.9)
    with pytest.raises(InputError) as predicted:
        predict(lr=lr, kappa=kappa, momentum=0.9)
    assert str(mapped.value) == str(predicted.value)
    assert "lr" in str(mapped.value) and "kappa" in str(mapped.value)


def test_adam_stiffness_outside_the_normal_floats_is_refused():
    with pytest.raises(InputError, match="stiffness"):
        MeanFieldMap(lr=1e-310, kappa=1.0, optimizer="adam", momentum=0.9)


# -- 4. predict --noise on an unstable map keeps its keys -----------------------------------------

def test_predict_unstable_noise_keys_are_null_with_a_note():
    out = predict(lr=3.8, momentum=0.9, kappa=1.0, noise=1e-4).to_dict()
    assert out["stationary_variance"] is None and out["noise_temperature"] is None
    assert any(note.startswith(UNSTABLE_NOTE) for note in out["notes"])
    stable = predict(lr=0.01, momentum=0.9, kappa=1.0, noise=1e-4).to_dict()
    assert stable["stationary_variance"] > 0 and "notes" not in stable
    assert "stationary_variance" not in predict(lr=3.8, momentum=0.9, kappa=1.0).to_dict()


def test_cli_predict_unstable_noise_says_why(capsys):
    argv = ["predict", "--lr", "3.8", "--momentum", "0.9", "--kappa", "1", "--noise", "1e-4"]
    code, out, _ = _cli([*argv, "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["stationary_variance"] is None
    assert result["noise_temperature"] is None
    assert any(UNSTABLE_NOTE in note for note in result["notes"])
    code, out, _ = _cli(argv, capsys)
    assert code == 0 and "stationary_variance: none" in out and "noise_temperature: none" in out
    assert f"note: {UNSTABLE_NOTE}" in out


# -- 5. a diverging path runs to +-inf, without NaN or RuntimeWarnings ----------------------------

@pytest.mark.parametrize("system", [
    MeanFieldMap(lr=5.0, kappa=1.0, momentum=0.9),
    MeanFieldMap(lr=3.0, kappa=1.0, momentum=0.9, staleness=3),
    MeanFieldMap(lr=20.0, kappa=1.0, momentum=0.9, schedule="cosine"),
    MeanFieldMap(lr=100.0, kappa=1.0, optimizer="adam", momentum=0.9),
], ids=["sgd", "stale", "cosine", "adam"])
def test_unstable_path_runs_to_inf_not_nan(system):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        band = system.trajectory(r0=0.1, plateau=0.8, steps=2000, noise=1e-4, paths=50)
    assert system.regime == "unstable"
    assert not np.isnan(band.values).any() and np.isinf(band.values[-1])
    first = int(np.argmax(~np.isfinite(band.values)))
    assert np.all(np.isinf(band.values[first:])) and np.all(np.isfinite(band.values[:first]))
    assert not np.isnan(band.lower).any() and not np.isnan(band.upper).any()
    assert np.all(band.lower <= band.upper)
    assert band.lower[-1] == -np.inf and band.upper[-1] == np.inf
    assert band.diverged


def test_predicted_path_of_an_unstable_map_has_no_nan():
    result = predict(lr=5.0, momentum=0.9, kappa=1.0, r0=0.1, plateau=0.8, steps=2000)
    assert not np.isnan(result.path.values).any() and result.trajectory_diverged
