"""The stiff direction as a delayed relay: a saturated restoring force with a lag.

Observation behind it (studies/deepnet/findings.md, section 10d; the deep-network study's
``scan_<size>.json``): along the top Hessian eigenvector v
of the GRPO objective the restoring force f(s) = v . g(theta_0 + s v) is linear only within
|s| of about one step's length; beyond it the force saturates at a magnitude F (the softmax along
v saturates, the groups it touches go degenerate). The linear map of docs/theory.md section 5 then
does not apply: a lag makes the coordinate u = v . (theta - theta_0) swing, but with a force of
bounded size it cannot grow geometrically. Model: the relay with staleness d,

    u_{n+1} = u_n - a F sign(u_{n-d}),

a the effective step (lr), F the saturated force per unit lr. Derived here: its limit cycle
spends 2 d + 1 steps on each sign of the force, so its period is 2 (2 d + 1) steps, and its
peak-to-peak swing is (2 d + 1) a F whatever the phase, i.e. a half swing (d + 1/2) a F. Cf. the
self-stabilization at the edge of stability (Damian, Nichani and Lee, arXiv 2209.15594): the
iterates leave along the top eigenvector until a higher-order term lowers the curvature.
"""

from __future__ import annotations

import sympy as sp

from .build import derivation
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "5. Lag structures (the stiff direction as a delayed relay)"


@derivation
def derive_relay_half_swing() -> Derivation:
    """Half the peak-to-peak swing of the delayed relay's limit cycle: (d + 1/2) a F."""
    x = sp.Symbol("x", nonnegative=True)  # |u| at the first step past a zero crossing, < a F
    step = sym.a * sym.f_sat
    # past a crossing the lagged force keeps its old sign for d more steps: the swing continues
    top = x + sym.d * step
    # the reversed force brings u back by steps of a F: it crosses zero at -(a F - x), and the
    # lag carries it d steps further
    bottom = -(step - x) - sym.d * step
    swing = sp.simplify(top - bottom)
    if sp.simplify(swing - (2 * sym.d + 1) * step) != 0 or x in swing.free_symbols:
        raise AssertionError("the relay's swing depends on the phase")
    half = sp.factor(swing / 2)
    return Derivation("relay_half_swing", half, (sym.d, sym.a, sym.f_sat),
                      "Half peak-to-peak swing of u under a saturated force with staleness d.",
                      SECTION,
                      (Step("extremum after a crossing at |u| = x: x + d a F", top),
                       Step("opposite extremum: -(a F - x) - d a F", bottom),
                       Step("peak to peak, independent of the phase x", swing)))


@derivation
def derive_relay_period() -> Derivation:
    """Period of the delayed relay's limit cycle: 2 (2 d + 1) steps."""
    # each sign of the force lasts from the step that sees a crossing (d steps late) to the step
    # that sees the next: d lagged steps past the crossing + d + 1 steps back across zero
    per_sign = sym.d + (sym.d + 1)
    return Derivation("relay_period", sp.expand(2 * per_sign), (sym.d,),
                      "Period [steps] of the delayed relay's limit cycle.", SECTION,
                      (Step("steps of one sign of the force", per_sign),))
