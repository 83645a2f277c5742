"""The generated numpy module against the sympy registry it came from."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from grpodyn.numerics import _generated
from grpodyn.numerics.codegen import render_module
from grpodyn.numerics.compiled import compile_derivation, compiled, generated_is_fresh

#: A valid value of every symbol for the numeric comparisons (several points each).
POINTS = [
    {"beta": 0.3, "k": 0.02, "a": 0.01, "kappa": 2.0, "t": 3.5, "e0": -0.4, "v0": 0.05,
     "zeta": 1.7, "omega0": 0.2, "K": 7, "d": 2, "G": 8, "S": 3, "p": 0.3, "eps": 1e-4,
     "s2": 1e-3, "Sigma": 0.5, "B": 4, "h": 3, "omega": 0.7, "z": 0.9, "l_bar": 1.5, "m": 0.7,
     "c": 0.6, "q": 0.9, "tau": 12.0, "r0": 0.1, "r_star": 0.8, "alpha": 0.3, "eta": 1e-3,
     "beta1": 0.9, "v_hat": 4e-4, "g_mean": 0.02, "sigma_g2": 0.3, "n": 3, "T_w": 20.0,
     "e_now": 0.3, "e_prev": 0.25, "e_lag": 0.2},
    {"beta": 0.8, "k": 0.001, "a": 0.3, "kappa": 0.05, "t": 40.0, "e0": 0.6, "v0": 0.0,
     "zeta": 4.0, "omega0": 0.03, "K": 31, "d": 5, "G": 16, "S": 9, "p": 0.7, "eps": 0.0,
     "s2": 0.2, "Sigma": 2.0, "B": 1, "h": 10, "omega": 2.5, "z": -0.5, "l_bar": 15.0, "m": 0.9,
     "c": 0.2, "q": 0.5, "tau": 3.0, "r0": 0.9, "r_star": 0.2, "alpha": -0.1, "eta": 0.1,
     "beta1": 0.5, "v_hat": 1.0, "g_mean": -0.2, "sigma_g2": 0.01, "n": 1, "T_w": 2.0,
     "e_now": -1.0, "e_prev": 2.0, "e_lag": 0.0},
]


#: Derivations valid only on part of the table's ranges: values that put them in their domain.
DOMAIN = {"trajectory_underdamped": {"zeta": 0.4}, "discrete_damping_ratio": {"k": 0.5}}


def test_generated_module_is_fresh():
    assert generated_is_fresh(), "run: python -m grpodyn.numerics.generate"


def test_generated_module_is_exactly_the_rendering(reg):
    from pathlib import Path

    assert Path(_generated.__file__).read_text() == render_module(reg.values())


def test_generated_signatures_match_registry(reg):
    assert _generated.SIGNATURES == {name: d.arg_names for name, d in reg.items()}


@pytest.mark.parametrize("point", POINTS)
def test_every_compiled_function_matches_sympy(reg, point):
    compared = 0
    for name, d in reg.items():
        values = [DOMAIN.get(name, {}).get(a, point[a]) for a in d.arg_names]
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
        args = [POINTS[0][a] for a in reg[name].arg_names]
        assert np.allclose(lazy(*args), compiled(name)(*args), equal_nan=True)


def test_compiled_functions_broadcast():
    beta = np.linspace(0, 0.9, 5)[:, None]
    k = np.geomspace(1e-3, 1, 4)[None, :]
    assert compiled("damping_ratio")(beta, k).shape == (5, 4)
    grid = compiled("refresh_stability_condition")(beta, k, np.arange(1, 5)[None, :])
    assert grid.shape == (5, 4) and grid.dtype == bool
    g = np.array([2, 4, 8, 16])
    assert compiled("grpo_update_mean")(g, 0.4, 1e-4).shape == (4,)
