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
from .derivation import Derivation, Step, whole_number
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
    # defined where the map is stable (beta < 1, k < k_max): beyond it the fluctuations grow
    # without bound, and the formula's sign turns
    return Derivation("stationary_variance", variance, (sym.beta, sym.k, sym.s2),
                      "Stationary variance of e for K = 1 (AR(2), exact); diverges at 2(1+beta).",
                      SECTION, (Step("Yule-Walker equations", sp.Tuple(*yule_walker)),),
                      domain=sp.And(sym.beta < 1, sym.k < get("stiffness_max").expr))


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


def _real_root_autocorrelation(phi1: sp.Expr, beta: sp.Expr, root_gap: sp.Expr) -> sp.Expr:
    """rho(h) for two real roots of one sign, larger one z1 = (phi1 + s)/2 > 0 (s = z1 - z2).

    With z_{1,2} = sqrt(beta) e^{+-t}, sinh t = s / (2 sqrt(beta)), q = z2/z1 = e^{-2t} and
    1 - q^n = tanh(n t) (1 + q^n), tanh t = s / phi1, the root form of ``derive_autocorrelation``
    reads rho(h) = z1^h [(1 - q^{h+1}) - beta q (1 - q^{h-1})] / ((1 - q)(1 + beta)): no
    difference of nearly equal roots near critical damping, no overflow of sinh at large h t, and
    at beta = 0 (t infinite, q = 0) the AR(1) value phi1^h.
    """
    h = sym.h
    t = sp.asinh(root_gap / (2 * sp.sqrt(beta)))
    q = sp.exp(-2 * t)
    z1 = (phi1 + root_gap) / 2
    numerator = (sp.tanh((h + 1) * t) * (1 + q ** (h + 1))
                 - beta * sp.tanh((h - 1) * t) * (q + q**h))
    return z1**h * numerator / ((1 + beta) * (root_gap / phi1) * (1 + q))


@derivation
def derive_autocorrelation() -> Derivation:
    """rho(h) of the AR(2), real in every regime.

    From the characteristic roots z1, z2 (z1 z2 = beta, z1 + z2 = phi1) and rho(1) = phi1/(1+beta)
    (Yule-Walker), rho(h) = (z1^{h+1} (1 - z2^2) - z2^{h+1} (1 - z1^2)) / ((z1 - z2)(1 + beta)).
    Written without the roots, with the discriminant phi1^2 - 4 beta =
    ((1 - sqrt(beta))^2 - k)((1 + sqrt(beta))^2 - k) and s = sqrt(|discriminant|):

    - oscillatory (discriminant < 0): z_{1,2} = sqrt(beta) e^{+-i theta}, theta = atan2(s, phi1),
      rho(h) = beta^{h/2} [sin((h+1) theta) - beta sin((h-1) theta)] / ((1 + beta) sin theta);
    - critically damped (discriminant = 0): a double root phi1/2,
      rho(h) = (phi1/2)^h (1 + h (1 - beta)/(1 + beta));
    - overdamped (real roots, phi1 > 0): ``_real_root_autocorrelation``;
    - flip (real roots, phi1 < 0): (-1)^h times the overdamped form at -phi1;
    - beta = 0 (one root phi1, the AR(1)): rho(h) = rho(1)^h = (phi1/(1 + beta))^h.

    Checked against the Yule-Walker recursion at rational points of every regime.
    """
    phi1, phi2 = _ar2_coefficients()
    beta = -phi2
    z1, z2, amp1, amp2 = sp.symbols("z_1 z_2 A_1 A_2")
    roots = sp.solve(sym.z**2 - phi1 * sym.z - phi2, sym.z)
    rho1 = phi1 / (1 - phi2)  # Yule-Walker at lag 1
    amplitudes = sp.solve([amp1 + amp2 - 1, amp1 * z1 + amp2 * z2 - rho1], [amp1, amp2],
                          dict=True)[0]
    root_form = (amplitudes[amp1] * z1**sym.h + amplitudes[amp2] * z2**sym.h).subs(
        {z1: roots[0], z2: roots[1]})
    r = sp.sqrt(beta)
    discriminant = ((1 - r) ** 2 - sym.k) * ((1 + r) ** 2 - sym.k)
    if sp.expand(discriminant - (phi1**2 + 4 * phi2)) != 0:
        raise AssertionError("discriminant of z^2 - phi1 z - phi2 is not the factored form")
    # every branch is evaluated (numpy.select), so each takes its own root gap and keeps the
    # bases of its powers h within [-1, 1] for a stable map in the other regimes too
    gap = sp.sqrt(sp.Abs(discriminant))
    real_gap = sp.sqrt((discriminant + sp.Abs(discriminant)) / 2)  # sqrt(max(discriminant, 0))
    theta = sp.atan2(gap, phi1)
    oscillatory = (r**sym.h * (sp.sin((sym.h + 1) * theta) - beta * sp.sin((sym.h - 1) * theta))
                   / ((1 + beta) * sp.sin(theta)))
    critical = (phi1 / 2) ** sym.h * (1 + sym.h * (1 - beta) / (1 + beta))
    rho = sp.Piecewise((rho1**sym.h, sp.Eq(beta, 0)), (oscillatory, discriminant < 0),
                       (critical, sp.Eq(discriminant, 0)),
                       ((-1) ** sym.h * _real_root_autocorrelation(-phi1, beta, real_gap),
                        phi1 < 0),
                       (_real_root_autocorrelation(phi1, beta, real_gap), True))
    checks = [(sp.Rational(1, 3), sp.Rational(1, 50)), (sp.Rational(9, 10), sp.Rational(1, 100)),
              (sp.Rational(1, 4), sp.Rational(1, 4)), (sp.Rational(1, 2), sp.Rational(14, 5)),
              (sp.Rational(1, 2), sp.Rational(29, 10)), (0, sp.Rational(1, 3))]
    for beta_value, k_value in checks:  # overdamped, oscillatory, critical, flip x2, AR(1)
        at = {sym.beta: beta_value, sym.k: k_value}
        exact = [sp.Integer(1), rho1.subs(at)]  # the Yule-Walker recursion, in rationals
        for _ in range(6):
            exact.append(phi1.subs(at) * exact[-1] + phi2.subs(at) * exact[-2])
        for lag in (0, 1, 2, 7):
            if abs(sp.N(rho.subs({**at, sym.h: lag}) - exact[lag], 40)) > 1e-30:
                raise AssertionError(f"real autocorrelation fails Yule-Walker at {at}, h = {lag}")
    return Derivation("autocorrelation", rho, (sym.h, sym.beta, sym.k),
                      "Autocorrelation rho(h) of e at lag h (real form valid in every regime).",
                      SECTION, (Step("rho(1) = phi1 / (1 - phi2)", rho1),
                                Step("roots of z^2 - phi1 z - phi2", sp.Tuple(*roots)),
                                Step("root form of rho(h)", root_form),
                                Step("discriminant phi1^2 + 4 phi2", discriminant)),
                      domain=whole_number(sym.h))  # (-1)^h and the powers of a negative root


@derivation
def derive_spectral_density() -> Derivation:
    """S(omega) = s^2 / (2 pi |1 - phi1 e^{-i omega} - phi2 e^{-2 i omega}|^2), in a stable form.

    Multiplying the transfer function by e^{i omega} (same modulus) gives real part
    (1 + beta) cos omega - phi1 = k - 2 (1 + beta) sin^2(omega/2) and imaginary part
    (1 - beta) sin omega, so |T|^2 = (k - 2 (1 + beta) sin^2(omega/2))^2 + (1 - beta)^2 sin^2 omega:
    a sum of squares of terms without the cancellation of the expanded polynomial in cos omega
    near beta -> 1, k -> 0, omega -> 0 (checked equal to the expanded modulus).
    """
    phi1, phi2 = _ar2_coefficients()
    w = sp.Symbol("omega", real=True)
    transfer = 1 - phi1 * sp.exp(-sp.I * w) - phi2 * sp.exp(-2 * sp.I * w)
    modulus_sq = sp.expand(sp.expand_complex(transfer * sp.conjugate(transfer)))
    modulus_sq = sp.simplify(sp.trigsimp(modulus_sq))
    beta = -phi2
    real_part = sym.k - 2 * (1 + beta) * sp.sin(w / 2) ** 2
    stable = real_part**2 + ((1 - beta) * sp.sin(w)) ** 2
    half_angle = {sp.sin(w / 2) ** 2: (1 - sp.cos(w)) / 2}
    if sp.simplify(sp.expand(stable.subs(half_angle) - modulus_sq).rewrite(sp.cos)) != 0:
        raise AssertionError("the sum-of-squares form of |T|^2 differs from the expanded one")
    density = sym.s2 / (2 * sp.pi * stable)
    return Derivation("spectral_density", density.subs(w, sym.omega),
                      (sym.omega, sym.beta, sym.k, sym.s2),
                      "Power spectral density of e (per rad/step); a peak when oscillatory.",
                      SECTION, (Step("|transfer function|^2", modulus_sq),
                                Step("|e^{i omega} T|^2 as a sum of squares", stable)))


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
