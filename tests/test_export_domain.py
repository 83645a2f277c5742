"""The exported functions at the edges of their domain agree with numpy and with exact values.

Pins three fixes of the derivations: the autocorrelation is real in every regime (it was NaN in
every export when oscillatory), the spectral density is a sum of squares (the expanded form lost
four digits near beta -> 1), and the binomial formulas refuse group sizes whose coefficient
overflows a double, as do degenerate inputs, in every target as the export documents.
"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import shutil
import subprocess

import mpmath as mp
import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.numerics import fluctuations
from grpodyn.numerics.compiled import compiled
from grpodyn.theory.finite_group import MAX_GROUP

EDOM = 33  # Linux


def _regime_points(regime: str) -> list[tuple[float, float]]:
    """(beta, k) points of one regime of the AR(2): 20 or more each."""
    betas = np.linspace(0.05, 0.95, 7)
    if regime == "overdamped":  # real positive roots: k < (1 - sqrt(beta))^2
        return [(b, f * (1 - np.sqrt(b)) ** 2) for b in betas for f in (0.02, 0.5, 0.97)]
    if regime == "critical":  # a double root, to the rounding of k
        return [(b, (1 - np.sqrt(b)) ** 2 * (1 + f)) for b in betas for f in (-1e-9, 0.0, 1e-9)]
    if regime == "oscillatory":  # complex roots
        return [(b, (1 - np.sqrt(b)) ** 2 + f * 4 * np.sqrt(b)) for b in betas
                for f in (0.01, 0.5, 0.99)]
    # flip: real negative roots, k > (1 + sqrt(beta))^2, still stable below 2 (1 + beta)
    return [(b, (1 + np.sqrt(b)) ** 2 + f * (1 - np.sqrt(b)) ** 2) for b in betas
            for f in (0.05, 0.5, 0.95)]


def _exact_autocorrelation(lag: int, beta: float, k: float) -> tuple[mp.mpf, mp.mpf]:
    """rho(lag) by the AR(2) recursion at 60 digits, and the envelope max|root|^lag."""
    with mp.workdps(60):
        b, phi1 = mp.mpf(beta), 1 + mp.mpf(beta) - mp.mpf(k)
        rho = [mp.mpf(1), phi1 / (1 + b)]
        for _ in range(2, lag + 1):
            rho.append(phi1 * rho[-1] - b * rho[-2])
        envelope = max(abs(z) for z in mp.polyroots([1, -phi1, b])) ** lag
        return rho[lag], envelope


LAGS = (0, 1, 2, 5, 17, 60)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """The C library (ctypes, errno kept), the Python export module and the JS module path."""
    root = tmp_path_factory.mktemp("export_domain")
    for lang in ("c", "python", "javascript"):
        assert main(["export", "--lang", lang, "--out", str(root / lang), "--json"]) == 0
    spec = importlib.util.spec_from_file_location("grpodyn_theory_domain",
                                                  root / "python" / "grpodyn_theory.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    so = None
    if shutil.which("gcc") is not None:
        lib = root / "c" / "libdomain.so"
        subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared",
                        "-fPIC", str(root / "c" / "grpodyn_theory.c"), "-o", str(lib), "-lm"],
                       check=True)
        so = ctypes.CDLL(str(lib), use_errno=True)
    return so, module, root / "javascript" / "grpodyn_theory.mjs"


def _c(so, name: str, nargs: int):
    if so is None:
        pytest.skip("gcc not installed")
    fn = getattr(so, f"grpodyn_{name}")
    fn.argtypes = [ctypes.c_double] * nargs
    fn.restype = ctypes.c_double
    return fn


@pytest.mark.parametrize("regime", ["overdamped", "critical", "oscillatory", "flip"])
def test_autocorrelation_is_exact_in_every_regime(regime, exports):
    so, module, _ = exports
    c_fn = _c(so, "autocorrelation", 3)
    points = _regime_points(regime)
    assert len(points) >= 20
    for (beta, k), lag in itertools.product(points, LAGS):
        exact, envelope = _exact_autocorrelation(lag, beta, k)
        tolerance = 1e-10 * float(max(abs(exact), envelope))  # relative, but not at a zero
        with np.errstate(all="ignore"):
            values = {"numpy": float(compiled("autocorrelation")(lag, beta, k)),
                      "python": float(module.autocorrelation(lag, beta, k)),
                      "c": c_fn(lag, beta, k)}
        for target, value in values.items():
            assert abs(value - float(exact)) <= tolerance, (regime, target, beta, k, lag, value)


def test_autocorrelation_at_the_readme_setting(exports):
    so, module, _ = exports
    c_fn = _c(so, "autocorrelation", 3)
    want = [1.0, 0.9947368421052631, 0.8902272131052632]
    rho = fluctuations.autocorrelation(np.array([0, 1, 5]), momentum=0.9, stiffness=0.01)
    np.testing.assert_allclose(rho, want, rtol=1e-12)
    for lag, value in zip((0, 1, 5), want, strict=True):
        assert c_fn(lag, 0.9, 0.01) == pytest.approx(value, rel=1e-12)
        with np.errstate(all="ignore"):  # numpy evaluates every branch of the Piecewise
            exported = float(module.autocorrelation(lag, 0.9, 0.01))
        assert exported == pytest.approx(value, rel=1e-12)


def _exact_spectral_density(omega: float, beta: float, k: float, s2: float) -> float:
    with mp.workdps(50):
        w, b, k, s2 = map(mp.mpf, (omega, beta, k, s2))
        phi1 = 1 + b - k
        re = 1 - phi1 * mp.cos(w) + b * mp.cos(2 * w)
        im = phi1 * mp.sin(w) - b * mp.sin(2 * w)
        return float(s2 / (2 * mp.pi * (re**2 + im**2)))


def test_spectral_density_is_stable_near_unit_momentum(exports):
    so, module, _ = exports
    c_fn = _c(so, "spectral_density", 4)
    grid = itertools.product([1e-4, 1e-3, 0.1, 1.0, 3.0], [0.9, 0.99, 0.999, 0.9999],
                             [1e-8, 1e-6, 1e-3, 0.1, 1.0])
    for omega, beta, k in grid:
        exact = _exact_spectral_density(omega, beta, k, 1.0)
        for value in (float(compiled("spectral_density")(omega, beta, k, 1.0)),
                      float(module.spectral_density(omega, beta, k, 1.0)),
                      c_fn(omega, beta, k, 1.0)):
            assert abs(value / exact - 1) <= 1e-10, (omega, beta, k, value, exact)
    # the audit's point: the expanded form was off by 3e-4 there
    exact = _exact_spectral_density(0.001, 0.999, 1e-6, 1.0)
    assert abs(float(compiled("spectral_density")(0.001, 0.999, 1e-6, 1.0)) / exact - 1) < 1e-12


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_javascript_autocorrelation_and_spectrum(exports, tmp_path):
    _, _, mjs = exports
    cases = [("autocorrelation", [lag, 0.9, 0.01]) for lag in (0, 1, 5, 40)]
    cases += [("autocorrelation", [lag, b, k]) for lag in (0, 3) for b, k in
              [(0.3, 0.02), (0.25, 0.25), (0.5, 2.9), (0.0, 0.3)]]
    cases += [("spectral_density", [0.001, 0.999, 1e-6, 1.0])]
    script = tmp_path / "check.mjs"
    script.write_text(f"import * as g from '{mjs.as_uri()}';\n"
                      f"const cases = {[[n, a] for n, a in cases]!r};\n"
                      "console.log(JSON.stringify(cases.map(([n, a]) => g[n](...a))));\n")
    out = subprocess.run(["node", str(script)], check=True, capture_output=True, text=True)
    for (name, args), got in zip(cases, eval(out.stdout), strict=True):  # noqa: S307 - numbers
        with np.errstate(all="ignore"):
            want = float(compiled(name)(*args))
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300), (name, args)


BINOMIAL_CALLS = {  # name -> arguments with the group size G as the placeholder None
    "binomial_pmf": (300, None, 0.3),
    "grpo_update_mean": (None, 0.3, 1e-4),
    "grpo_update_variance": (None, 0.3, 1e-4),
    "bandit_drift_grpo": (None, 0.4, 1e-4),
    "bandit_drift_slope_grpo": (None, 0.4, 1e-4),
    "prompt_pool_successes_pmf": (300, None, 0.7, 1.3),
}


def _with_group(name: str, group: int) -> list[float]:
    args = BINOMIAL_CALLS[name]
    args = tuple(group if a is None else a for a in args)
    if name.startswith("bandit"):
        return [args[1], args[0], args[2]]  # (x, G, eps)
    return list(args)


@pytest.mark.parametrize("name", sorted(BINOMIAL_CALLS))
def test_binomial_formulas_agree_up_to_the_largest_group(name, exports):
    so, module, _ = exports
    args = _with_group(name, MAX_GROUP)
    want = float(compiled(name)(*args))
    assert np.isfinite(want) and want != 0.0
    assert float(module.__dict__[name](*args)) == pytest.approx(want, rel=1e-12)
    assert _c(so, name, len(args))(*args) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("name", sorted(BINOMIAL_CALLS))
@pytest.mark.parametrize("group", [1025, 4096])
def test_binomial_formulas_refuse_larger_groups(name, group, exports):
    so, module, _ = exports
    args = _with_group(name, group)
    for function in (compiled(name), module.__dict__[name]):
        with pytest.raises(ValueError, match=rf"{name}: defined only where G <= {MAX_GROUP}"):
            function(*args)
    fn = _c(so, name, len(args))
    ctypes.set_errno(0)
    assert np.isnan(fn(*args))
    assert ctypes.get_errno() == EDOM


@pytest.mark.parametrize("name,args", [("slow_root", (0.6, 0.0, 3.3)),
                                       ("staleness_stiffness_max_continuum", (0.5, 0.0)),
                                       ("gain_fraction_time", (1.0, 0.9, 0.01, 0.8)),
                                       ("grpo_update_variance_expansion", (16.0, 0.0)),
                                       ("stiffness_max", (1.5,)), ("stiffness_max", (1.0,))])
def test_degenerate_inputs_are_refused_everywhere(name, args, exports):
    """Each refusal names the function; stiffness_max at beta >= 1, where the Jury margin
    1 - beta > 0 fails and no stiffness is stable, gives no limit (it said 5 at beta 1.5)."""
    so, module, _ = exports
    for function in (compiled(name), module.__dict__[name]):
        with pytest.raises(ValueError, match=f"{name}: defined only where"):
            function(*args)
    fn = _c(so, name, len(args))
    ctypes.set_errno(0)
    assert np.isnan(fn(*args))
    assert ctypes.get_errno() == EDOM


@pytest.mark.parametrize(("beta", "k"), [(0.0, 3.0), (0.5, 3.0), (0.9, 3.8), (1.0, 1.0)])
def test_stationary_variance_is_refused_where_the_map_is_unstable(beta, k):
    """Beyond k_max = 2 (1 + beta) the AR(2) formula turns negative (-3.3e-5 at beta 0, k 3) or
    divides by zero; the compiled function refuses it, and the numeric one says inf."""
    with pytest.raises(ValueError, match="stationary_variance: defined only where"):
        compiled("stationary_variance")(beta, k, 1e-4)
    if beta < 1:
        assert fluctuations.stationary_variance(momentum=beta, stiffness=k, noise=1e-4) == np.inf
    assert compiled("stationary_variance")(beta / 2, 0.5, 1e-4) > 0


@pytest.mark.parametrize(("name", "args"), [
    ("grpo_update_given_successes", (0, 1, 0.0)), ("rloo_update_variance", (1, 0.5)),
    ("prompt_pool_batch_variance", (1, 1, 1.0, 1.0)), ("grpo_top_advantage", (0, 1, 0.1)),
    ("monodromy_trace", (1.0, 1.0, 2)), ("power_law", (0.5, 0.1, 0.3, 0.0, 0.5))])
def test_python_numbers_at_a_pole_give_what_an_array_gives(name, args):
    """Python ints and floats raised ZeroDivisionError where numpy gives inf or nan."""
    with np.errstate(all="ignore"):
        array = compiled(name)(*(np.array([a]) for a in args))
    got = compiled(name)(*args)
    assert np.array_equal(np.asarray(got).reshape(1), np.asarray(array, dtype=float).reshape(1),
                          equal_nan=True), (got, array)


def test_staleness_stable_says_false_at_unit_momentum_whatever_the_staleness():
    """On-policy it raised stiffness_max's refusal, while d = 1 said False."""
    from grpodyn.numerics.stability import staleness_stable

    assert [staleness_stable(1.0, 0.5, d) for d in (0, 1, 2)] == [False, False, False]
    assert staleness_stable(0.5, 0.5, 0)
