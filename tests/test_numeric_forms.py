"""A derivation's numeric form is its expression, and keeps the digits the expression loses.

Some derivations carry a numeric form (``Derivation.numeric_form``) that the generated and
exported code evaluate: ``1 - q^G`` as ``-expm1(G ln q)``, a pole's ``ln z`` as ``log1p`` of a
rationalised ``z - 1``, and a difference of two nearly equal stiffnesses rationalised. Each form
must equal the expression (here at 50 digits, inside the domain) and be accurate where the
expression cancels. Counts, group sizes and lags must be whole numbers in every language.
"""

from __future__ import annotations

import ctypes
import math
import shutil
import subprocess
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
import sympy as sp

from grpodyn.cli import main
from grpodyn.numerics.compiled import compiled
from grpodyn.theory import registry

from .test_export_domain import EDOM, _c

#: Arguments drawn for the equality check: a range per symbol, log-uniform where it spans decades.
RANGES = {"G": (1, 64), "p": (1e-9, 1 - 1e-9), "beta": (0.0, 0.999), "k_r": (1e-10, 0.5),
          "eta": (1e-7, 1e-2), "kappa": (1e-2, 1e3), "beta1": (0.0, 0.99), "kappa_A": (1e-2, 1e3),
          "rho_A": (1e-3, 1e3), "rho_p": (1e-3, 1e3), "rho_c": (1e-3, 1e3), "B": (1, 512)}


def _with_numeric_form() -> list[str]:
    return sorted(name for name, d in registry().items() if d.numeric_form is not None)


def _draw(name: str, rng: np.random.Generator) -> dict[str, float]:
    """Arguments of ``name`` inside its domain (doubles, read exactly by the references)."""
    d = registry()[name]
    while True:
        values = {}
        for s in d.args:
            low, high = RANGES[s.name]
            if s.is_integer:
                values[s.name] = float(rng.integers(low, high + 1))
            elif low > 0 and high / low > 1e3:
                values[s.name] = float(np.exp(rng.uniform(np.log(low), np.log(high))))
            else:
                values[s.name] = float(rng.uniform(low, high))
        if d.domain is None or bool(d.domain.subs({s: values[s.name] for s in d.args})):
            return values


def test_the_forms_with_a_numeric_form():
    assert _with_numeric_form() == [
        "adam_stiffness_finite_group", "adam_stiffness_split_finite_group",
        "critical_stiffness_relative_error", "finite_group_drift_factor",
        "sgd_stiffness_finite_group", "two_mode_relaxation_time"]


@pytest.mark.parametrize("name", _with_numeric_form())
def test_the_numeric_form_equals_the_expression(name):
    d = registry()[name]
    expression = sp.lambdify(d.args, d.expr, "mpmath")
    numeric = sp.lambdify(d.args, d.numeric_form, "mpmath")
    rng = np.random.default_rng(7)
    with mp.workdps(50):
        for _ in range(25):
            values = _draw(name, rng)
            arguments = [mp.mpf(values[s.name]) for s in d.args]
            exact, form = expression(*arguments), numeric(*arguments)
            assert abs(form - exact) <= mp.mpf("1e-40") * max(abs(exact), 1), values


def _exact(name: str, *args: float) -> float:
    """The derivation's expression at the doubles ``args``, evaluated at 60 digits."""
    d = registry()[name]
    values = {s: sp.Rational(a) for s, a in zip(d.args, args, strict=True)}
    return float(sp.N(d.expr.subs(values), 60))


#: Points where the expression as written loses digits to cancellation: (name, args).
CANCELLING = [
    ("two_mode_relaxation_time", (0.0, 1e-12)),
    ("two_mode_relaxation_time", (0.9, 1e-13)),
    ("two_mode_relaxation_time", (0.0, 1 - 1e-9)),  # near the bound: the discriminant factored
    ("sgd_stiffness_finite_group", (1e-3, 2.0, 8, 1e-13)),
    ("adam_stiffness_finite_group", (1e-3, 0.9, 2.0, 4.0, 16, 8, 1e-13)),
    ("adam_stiffness_split_finite_group", (1e-3, 0.9, 2.0, 1.0, 4.0, 16, 8, 1e-13)),
    ("finite_group_drift_factor", (8, 1e-13)),
    ("finite_group_drift_factor", (64, 3e-11)),
    ("critical_stiffness_relative_error", (0.9999,)),
    ("critical_stiffness_relative_error", (0.999999,)),
]


@pytest.mark.parametrize(("name", "args"), CANCELLING)
def test_accurate_where_the_expression_cancels(name, args):
    value = float(compiled(name)(*args))
    assert value == pytest.approx(_exact(name, *args), rel=1e-12)


@pytest.mark.parametrize(("name", "args"), CANCELLING)
def test_the_expression_as_written_would_lose_them(name, args):
    """The points above are ones where evaluating ``expr`` in doubles is off: the form matters."""
    d = registry()[name]
    naive = float(sp.lambdify(d.args, d.expr, "numpy")(*args))
    exact = _exact(name, *args)
    assert abs(naive - exact) > 1e-9 * abs(exact)


def _exported(tmp_path_factory, lang: str, tool: str) -> Path:
    """Export the registry in ``lang`` to a fresh folder; skip where ``tool`` is not installed."""
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")
    root = tmp_path_factory.mktemp(f"numeric_forms_{lang}")
    assert main(["export", "--lang", lang, "--out", str(root), "--json"]) == 0
    return root


@pytest.fixture(scope="module")
def c_library(tmp_path_factory):
    root = _exported(tmp_path_factory, "c", "gcc")
    lib = root / "libforms.so"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC",
                    str(root / "grpodyn_theory.c"), "-o", str(lib), "-lm"], check=True)
    return ctypes.CDLL(str(lib), use_errno=True)


@pytest.mark.parametrize(("name", "args"), CANCELLING)
def test_the_c_export_keeps_the_digits(name, args, c_library):
    value = _c(c_library, name, len(args))(*map(float, args))
    assert value == pytest.approx(_exact(name, *args), rel=1e-12)


WHOLE = [("binomial_pmf", (1, 2.5, 0.3)), ("binomial_pmf", (1.5, 3, 0.3)),
         ("grpo_update_mean", (7.5, 0.3, 1e-6)), ("autocorrelation", (1.5, 0.5, 0.1)),
         ("prompt_pool_zero_std_share", (7.5, 0.7, 1.9)),
         ("prompt_pool_failed_group_share", (math.inf, 0.7, 1.9)),  # inf - floor(inf) is NaN
         ("prompt_pool_zero_std_share", (1e300, 0.7, 1.9))]  # whole, but a product of 1e300


@pytest.mark.parametrize(("name", "args"), WHOLE)
def test_a_count_that_is_not_whole_is_refused(name, args, c_library):
    with pytest.raises(ValueError, match="is a whole number"):  # the message names the rule
        compiled(name)(*args)
    fn = _c(c_library, name, len(args))
    ctypes.set_errno(0)
    assert math.isnan(fn(*map(float, args)))
    assert ctypes.get_errno() == EDOM


def test_whole_numbers_given_as_doubles_are_accepted(c_library):
    assert float(compiled("binomial_pmf")(1.0, 2.0, 0.3)) == pytest.approx(0.42, rel=1e-15)
    assert _c(c_library, "binomial_pmf", 3)(1.0, 2.0, 0.3) == pytest.approx(0.42, rel=1e-15)
    rho = compiled("autocorrelation")(np.arange(3.0), 0.5, 0.1)
    np.testing.assert_allclose(rho, [1.0, 1.4 / 1.5, 1.4 * 1.4 / 1.5 - 0.5], rtol=1e-12)


def test_the_pool_bound_is_the_numeric_layers():
    from grpodyn.ground.checks import GROUP_SIZE_MAX
    from grpodyn.theory.prompt_pool import POOL_GROUP_MAX

    assert POOL_GROUP_MAX == GROUP_SIZE_MAX


def test_a_piecewise_of_numbers_is_a_number():
    """numpy.where returns a 0-d array; a function of Python numbers returns a number."""
    value = compiled("finite_group_drift_factor")(8, 1e-13)
    assert isinstance(value, float) and np.ndim(value) == 0
    assert compiled("finite_group_drift_factor")(8, np.array([0.1, 0.9])).shape == (2,)


@pytest.fixture(scope="module")
def javascript_module(tmp_path_factory):
    return _exported(tmp_path_factory, "javascript", "node")


@pytest.mark.parametrize(("name", "args"), WHOLE)
def test_javascript_refuses_a_count_that_is_not_whole(name, args, javascript_module):
    script = javascript_module / f"check_{name}.mjs"
    values = ", ".join("Infinity" if a == math.inf else repr(float(a)) for a in args)
    script.write_text("import * as g from './grpodyn_theory.mjs';\n"
                      f"try {{ g.{name}({values}); console.log('accepted'); }}\n"
                      "catch (e) { console.log(e.constructor.name + ': ' + e.message); }\n")
    out = subprocess.run(["node", str(script)], check=True, capture_output=True, text=True,
                         timeout=60).stdout
    assert out.startswith("RangeError") and "is a whole number" in out, out


def test_a_condition_with_a_domain_compiles_and_refuses_in_c(tmp_path):
    """A stability condition returns int in C: outside its domain 0 with errno EDOM, not NaN."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    from grpodyn.numerics.export import render
    from grpodyn.theory.derivation import Derivation, whole_number
    from grpodyn.theory.symbols import sym

    condition = Derivation("short_cycle", sym.k * sym.K < 2, (sym.k, sym.K), "A test condition.",
                           "5. Stability thresholds", domain=whole_number(sym.K))
    files = render("c", [condition])
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    lib = tmp_path / "libcondition.so"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function",
                    "-O2", "-shared", "-fPIC", str(tmp_path / "grpodyn_theory.c"), "-o", str(lib),
                    "-lm"], check=True)  # the binomial helper is unused by this one function
    fn = ctypes.CDLL(str(lib), use_errno=True).grpodyn_short_cycle
    fn.argtypes = [ctypes.c_double] * 2
    fn.restype = ctypes.c_int
    assert fn(0.5, 3.0) == 1
    ctypes.set_errno(0)
    assert fn(0.5, 2.5) == 0
    assert ctypes.get_errno() == EDOM
