"""The generated numpy module against the sympy registry it came from."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from grpodyn.numerics import _generated
from grpodyn.numerics.codegen import render_module
from grpodyn.numerics.compiled import compile_derivation, compiled, generated_is_fresh

from .points import argument_values


def test_generated_module_is_fresh():
    assert generated_is_fresh(), "run: python -m grpodyn.numerics.generate"


def test_generated_module_is_exactly_the_rendering(reg):
    from pathlib import Path

    assert Path(_generated.__file__).read_text() == render_module(reg.values())


def test_generated_signatures_match_registry(reg):
    assert _generated.SIGNATURES == {name: d.arg_names for name, d in reg.items()}


@pytest.mark.parametrize("point", range(2))
def test_every_compiled_function_matches_sympy(reg, point):
    """Every registry entry, compiled, against sympy's own evaluation (30 digits)."""
    compared = 0
    for name, d in reg.items():
        values = argument_values(name, d.arg_names, point)
        reference = d.expr.subs({s: sp.nsimplify(v) for s, v in zip(d.args, values, strict=True)})
        reference = reference.doit()
        if isinstance(reference, sp.logic.boolalg.BooleanAtom):
            assert bool(compiled(name)(*values)) == bool(reference), name
            compared += 1
            continue
        ref = complex(reference.evalf(30))
        if abs(ref.imag) > 1e-20 * max(1.0, abs(ref)):
            continue  # outside the real domain of this derivation at this point
        with np.errstate(all="ignore"):
            value = compiled(name)(*values)
        assert np.isclose(value, ref.real, rtol=1e-10, atol=1e-14), (name, value, ref)
        compared += 1
    assert compared >= len(reg) - 6


def test_lazy_compilation_equals_generated(reg):
    for name in ("trajectory", "grpo_update_mean", "refresh_stability_condition"):
        lazy = compile_derivation(reg[name])
        args = argument_values(name, reg[name].arg_names, 0)
        assert np.allclose(lazy(*args), compiled(name)(*args), equal_nan=True)


def test_compiled_functions_broadcast():
    beta = np.linspace(0, 0.9, 5)[:, None]
    k = np.geomspace(1e-3, 1, 4)[None, :]
    assert compiled("damping_ratio")(beta, k).shape == (5, 4)
    grid = compiled("refresh_stability_condition")(beta, k, np.arange(1, 5)[None, :])
    assert grid.shape == (5, 4) and grid.dtype == bool
    g = np.array([2, 4, 8, 16])
    assert compiled("grpo_update_mean")(g, 0.4, 1e-4).shape == (4,)
