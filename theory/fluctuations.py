"""docs/theory.md section 6: fluctuations about the fixed point.

On-policy with additive noise of variance s^2 per step, the map is the AR(2) process
e_{n+1} = phi1 e_n + phi2 e_{n-1} + xi_n with phi1 = 1 + beta - k, phi2 = -beta. Its stationary
variance follows from the Yule-Walker equations, its autocorrelation from the characteristic
roots, its spectrum from the transfer function; the continuum limit is an Ornstein-Uhlenbeck
oscillator whose variance follows from the Lyapunov equation. Sampling noise sets
s^2 = a^2 Sigma / (B G), and fluctuation-dissipation defines the noise temperature T.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from .build import derivation, get
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "6. Fluctuations"


@cache
def _ar2_coefficients() -> tuple[sp.Expr, sp.Expr]:
    update = get("mean_field_map").expr.subs({sym.a: sym.k / sym.kappa, sym.e_lag: sym.e_now})
    return update.coeff(sym.e_now), update.coeff(sym.e_prev)


@derivation
def derive_stationary_variance() -> Derivation:
    """Exact AR(2) stationary variance s^2 (1+beta) / ((1-beta) k (2(1+beta) - k))."""
    phi1, phi2 = _ar2_coefficients()
    g0, g1, g2 = sp.symbols("gamma_0 gamma_1 gamma_2")
    yule_walker = [sp.Eq(g0, phi1 * g1 + phi2 * g2 + sym.s2), sp.Eq(g1, phi1 * g0 + phi2 * g1),
                   sp.Eq(g2, phi1 * g1 + phi2 * g0)]
    solution = sp.solve(yule_walker, [g0, g1, g2], dict=True)[0]
    variance = sp.factor(solution[g0])
    return Derivation("stationary_variance", variance, (sym.beta, sym.k, sym.s2),
                      "Stationary variance of e for K = 1 (AR(2), exact); diverges at 2(1+beta).",
                      SECTION, (Step("Yule-Walker equations", sp.Tuple(*yule_walker)),))


@derivation
def derive_ou_stationary_variance() -> Derivation:
    """Continuum (Ornstein-Uhlenbeck) variance s^2 / (2 c k) from the Lyapunov equation."""
    m, c = sp.symbols("m c", positive=True)
    drift = sp.Matrix([[0, 1], [-sym.k / m, -c / m]])
    diffusion = sp.Matrix([[0, 0], [0, sym.s2 / m**2]])
    p11, p12, p22 = sp.symbols("P_11 P_12 P_22")
    cov = sp.Matrix([[p11, p12], [p12, p22]])
    lyapunov = drift * cov + cov * drift.T + diffusion
    solution = sp.solve(list(lyapunov), [p11, p12, p22], dict=True)[0]
    variance = solution[p11].subs(c, get("damping").expr)
    return Derivation("ou_stationary_variance", sp.factor(variance), (sym.beta, sym.k, sym.s2),
                      "Continuum stationary variance s^2 / (2 c k): the small-k limit of AR(2).",
                      SECTION, (Step("Lyapunov equation A P + P A^T + Q = 0",
                                     sp.ImmutableMatrix(lyapunov)),))


@derivation
def derive_autocorrelation() -> Derivation:
    """rho(h) of the AR(2) from its characteristic roots z1, z2."""
    phi1, phi2 = _ar2_coefficients()
    z1, z2, amp1, amp2 = sp.symbols("z_1 z_2 A_1 A_2")
    roots = sp.solve(sym.z**2 - phi1 * sym.z - phi2, sym.z)
    rho1 = phi1 / (1 - phi2)  # Yule-Walker at lag 1
    amplitudes = sp.solve([amp1 + amp2 - 1, amp1 * z1 + amp2 * z2 - rho1], [amp1, amp2],
                          dict=True)[0]
    rho = (amplitudes[amp1] * z1**sym.h + amplitudes[amp2] * z2**sym.h).subs(
        {z1: roots[0], z2: roots[1]})
    return Derivation("autocorrelation", rho, (sym.h, sym.beta, sym.k),
                      "Autocorrelation rho(h) of e at lag h (complex roots when oscillatory).",
                      SECTION, (Step("rho(1) = phi1 / (1 - phi2)", rho1),
                                Step("roots of z^2 - phi1 z - phi2", sp.Tuple(*roots))))


@derivation
def derive_spectral_density() -> Derivation:
    """S(omega) = s^2 / (2 pi |1 - phi1 e^{-i omega} - phi2 e^{-2 i omega}|^2)."""
    phi1, phi2 = _ar2_coefficients()
    w = sp.Symbol("omega", real=True)
    transfer = 1 - phi1 * sp.exp(-sp.I * w) - phi2 * sp.exp(-2 * sp.I * w)
    modulus_sq = sp.expand(sp.expand_complex(transfer * sp.conjugate(transfer)))
    modulus_sq = sp.simplify(sp.trigsimp(modulus_sq))
    density = sym.s2 / (2 * sp.pi * modulus_sq)
    return Derivation("spectral_density", density.subs(w, sym.omega),
                      (sym.omega, sym.beta, sym.k, sym.s2),
                      "Power spectral density of e (per rad/step); a peak when oscillatory.",
                      SECTION, (Step("|transfer function|^2", modulus_sq),))


@derivation
def derive_spectral_peak_frequency() -> Derivation:
    """omega* with cos omega* = (1 + beta - k)(1 + beta) / (4 beta), where the spectrum peaks."""
    phi1, phi2 = _ar2_coefficients()
    u = sp.Symbol("u")  # cos(omega)
    denominator = 1 + phi1**2 + phi2**2 - 2 * phi1 * (1 - phi2) * u - 2 * phi2 * (2 * u**2 - 1)
    (u_star,) = sp.solve(sp.diff(denominator, u), u)
    return Derivation("spectral_peak_frequency", sp.acos(sp.factor(u_star)), (sym.beta, sym.k),
                      "Frequency of the spectral peak (exists while |cos omega*| < 1).", SECTION,
                      (Step("denominator of S in u = cos omega", denominator),
                       Step("stationary point in u", u_star)),
                      domain=sp.And(sym.beta > 0, sp.Abs(sp.factor(u_star)) < 1))


@derivation
def derive_noise_variance() -> Derivation:
    """s^2 = a^2 Sigma / (B G): the variance of a mean over B G completions, times a^2."""
    draws = sp.Symbol("n_draws", positive=True)
    mean_variance = sym.Sigma / draws  # variance of a mean of n_draws iid terms
    s2 = (sym.a**2 * mean_variance).subs(draws, sym.B * sym.G)
    return Derivation("noise_variance", s2, (sym.a, sym.Sigma, sym.B, sym.G),
                      "Per-step noise variance a^2 Sigma / (B G) from sampling B G completions.",
                      SECTION, (Step("variance of a mean of B G iid projected gradients",
                                     mean_variance),))


@derivation
def derive_noise_temperature() -> Derivation:
    """T = k Var(e) = s^2 / (2 c): fluctuation-dissipation in the continuum limit."""
    ou = get("ou_stationary_variance").expr
    temperature = sp.simplify(sym.k * ou).subs(sym.s2, get("noise_variance").expr)
    return Derivation("noise_temperature", temperature,
                      (sym.beta, sym.a, sym.Sigma, sym.B, sym.G),
                      "Noise temperature T = k Var(e) = a^2 Sigma / (2 (1-beta) B G), ~ 1/G.",
                      SECTION, (Step("equipartition: k <e^2> = T", sym.k * ou),))


@derivation
def derive_temperature_group_exponent() -> Derivation:
    """Derive d ln T / d ln G = -1 at leading order."""
    temperature = get("noise_temperature").expr
    exponent = sp.simplify(sp.diff(sp.log(temperature), sym.G) * sym.G)
    return Derivation("temperature_group_exponent", exponent, (),
                      "Exponent of the group size in the noise temperature: -1.", SECTION,
                      (Step("T(G)", temperature),))
