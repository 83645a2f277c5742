"""The numeric API's objects: the grpodyn.numerics namespace, the map's noise band, equality of
the array-holding results, and the documented parameters of the public functions."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import grpodyn
import grpodyn.numerics as numerics
from grpodyn.numerics.mean_field_map import MeanFieldMap
from grpodyn.numerics.simulate import simulate_map

NUMERICS = Path(numerics.__file__).parent
#: grpodyn's exports that live in grpodyn.numerics (name -> module)
FROM_NUMERICS = {name: module for name, module in grpodyn._EXPORTS.items()
                 if module.startswith("grpodyn.numerics.")}
#: those whose name is also a submodule's, which the import system binds on the package
SUBMODULE_NAMES = {name for name in FROM_NUMERICS if (NUMERICS / f"{name}.py").exists()}


def test_the_numeric_names_of_grpodyn_are_re_exported_by_grpodyn_numerics():
    assert SUBMODULE_NAMES == {"predict", "trajectory", "compiled"}
    assert set(numerics.__all__) == set(FROM_NUMERICS) - SUBMODULE_NAMES
    for name in numerics.__all__:
        assert getattr(numerics, name) is getattr(grpodyn, name), name
        assert name in dir(numerics)
    namespace: dict = {}
    exec("from grpodyn.numerics import MeanFieldMap, fit_curve, forecast_curve, regime",
         namespace)
    assert namespace["MeanFieldMap"] is grpodyn.MeanFieldMap
    assert namespace["regime"] is grpodyn.regime


def test_submodules_still_import_and_an_unknown_name_is_an_attribute_error():
    from grpodyn.numerics import _generated, stability  # noqa: F401

    assert stability is importlib.import_module("grpodyn.numerics.stability")
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        numerics.nonsense  # noqa: B018
    with pytest.raises(ImportError):
        exec("from grpodyn.numerics import nonsense", {})


def test_importing_grpodyn_numerics_loads_neither_sympy_nor_its_modules():
    code = ("import sys, grpodyn.numerics; "
            "print(sorted(m for m in sys.modules if m.startswith(('sympy', 'scipy', "
            "'grpodyn.numerics.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def _half_width(system: MeanFieldMap, steps: int = 200):
    band = system.trajectory(r0=0.2, plateau=0.8, steps=steps, noise=1e-4, paths=400)
    return (band.upper - band.lower) / 2


def test_the_noise_band_follows_the_schedule_and_the_warmup():
    constant = _half_width(MeanFieldMap(lr=0.05, kappa=1.0, momentum=0.9))
    warm = _half_width(MeanFieldMap(lr=0.05, kappa=1.0, momentum=0.9, warmup=150))
    decay = _half_width(MeanFieldMap(lr=0.05, kappa=1.0, momentum=0.9, schedule="linear"))
    # during the warm-up the kicks are small: the band is far narrower than at the peak lr
    assert warm[10] < 0.2 * constant[10]
    assert warm[200] == pytest.approx(constant[200], rel=0.2)  # at the peak lr after it
    # a decay to 0 leaves the kicks of the last steps small
    assert decay[200] < 0.5 * constant[200]


def test_the_noise_band_at_a_constant_lr_is_the_simulated_map_s():
    """At a constant lr the band is the one the position-form simulation gives (same draws)."""
    for lags in ({}, {"refresh": 4}, {"staleness": 2}):
        system = MeanFieldMap(lr=0.05, kappa=1.0, momentum=0.9, **lags)
        band = system.trajectory(r0=0.2, plateau=0.8, steps=150, noise=1e-4, paths=300, seed=4)
        sim = simulate_map(momentum=0.9, stiffness=system.stiffness, e0=0.0, steps=150,
                           noise=1e-4, paths=300, seed=4, **lags)
        lower, upper = band.values + np.quantile(sim.e, [0.05, 0.95], axis=0)
        np.testing.assert_allclose(band.lower, lower, atol=1e-9)
        np.testing.assert_allclose(band.upper, upper, atol=1e-9)


def test_adam_s_noise_band_follows_its_bias_correction():
    """Adam's first, bias-corrected steps take whole kicks: the band opens faster than SGD's."""
    sgd = _half_width(MeanFieldMap(lr=0.05, kappa=1.0, momentum=0.9), steps=60)
    adam = _half_width(MeanFieldMap(lr=0.5, kappa=1.0, optimizer="adam", momentum=0.9), steps=60)
    assert adam[3] > 1.5 * sgd[3]


def _pairs():
    t = np.arange(1.0, 41.0)
    y = 0.2 + 0.5 * (1 - np.exp(-t / 10)) + 0.01 * np.sin(t)
    config = grpodyn.BanditConfig()
    return {
        "FitResult": lambda: grpodyn.fit_curve("exponential", t, y),
        "Forecast": lambda: grpodyn.forecast_curve(t, y, n_train=30, future_steps=t[30:],
                                                   stack=False),
        "BanditRun": lambda: grpodyn.simulate_bandit(config, steps=5),
        "PredictionResult": lambda: grpodyn.predict(lr=0.01, momentum=0.9, kappa=1.0, r0=0.2,
                                                    plateau=0.8, steps=20),
        # without a path as with one (its path, a Trajectory, compares by identity)
        "PredictionResult without a path": lambda: grpodyn.predict(lr=0.01, momentum=0.9,
                                                                   kappa=1.0),
    }


@pytest.mark.parametrize("name", list(_pairs()))
def test_array_holding_results_compare_by_identity(name):
    make = _pairs()[name]
    a, b = make(), make()
    assert a == a and not (a == b) and a != b
    assert a in [b, a] and b not in [a]
    assert len({a, b}) == 2  # hashable, by identity


def _documented(obj) -> set[str]:
    """The names of a numpydoc docstring's Parameters section."""
    lines = inspect.getdoc(obj).splitlines()
    start = lines.index("Parameters") + 2
    assert lines[start - 1].startswith("---")
    names = set()
    for line in lines[start:]:
        if not line.strip():
            break
        if not line.startswith(" "):
            names.update(n.strip() for n in line.split(":")[0].split(","))
    return names


@pytest.mark.parametrize("name", ["stationary_variance", "estimate_noise", "fit_models",
                                  "BanditConfig"])
def test_public_functions_document_every_parameter(name):
    obj = getattr(grpodyn, name)
    parameters = set(inspect.signature(obj).parameters) - {"self"}
    assert _documented(obj) == parameters
    assert "docs/theory.md section" in inspect.getdoc(obj)
