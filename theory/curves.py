"""Baseline reward curves: the shapes a fit compares the theory's laws against.

Neither curve follows from the mean-field theory; they are registered like its results so that a
fit model is built from a derivation (its arguments, assumptions and analytic Jacobian), not
typed out in the fitting code. Both are written as r* + (r0 - r*) U(t), the form every fit model
shares (the fit solves r0 and r* exactly for each shape, docs/theory.md section 3).

- ``sigmoid_law``: a logistic step from r0 to r* centred at t_mid with width w.
- ``power_law``: a saturating power law r* + (r0 - r*) / (1 + (t/t_mid)^b), the sigmoid in log
  time of the compute-performance law of RL scaling studies (ScaleRL, 2025): its approach to the
  plateau is algebraic, not exponential.
"""

from __future__ import annotations

import sympy as sp

from .build import derivation
from .derivation import Derivation, Step
from .symbols import sym

SECTION = "3. Overdamped limit and the empirical law (baselines compared with it)"


@derivation
def derive_sigmoid_law() -> Derivation:
    """r(t) = r* + (r0 - r*) / (1 + exp((t - t_mid) / w)): a logistic baseline."""
    shape = 1 / (1 + sp.exp((sym.t - sym.t_mid) / sym.width))
    law = sym.r_star + (sym.r0 - sym.r_star) * shape
    return Derivation("sigmoid_law", law, (sym.t, sym.r0, sym.r_star, sym.t_mid, sym.width),
                      "Logistic baseline: from r0 to the plateau r* around t_mid, width w.",
                      SECTION, (Step("logistic shape U(t), U(-inf) = 1, U(inf) = 0", shape),))


@derivation
def derive_power_law() -> Derivation:
    """r(t) = r* + (r0 - r*) / (1 + (t/t_mid)^b): a saturating power-law baseline."""
    shape = 1 / (1 + (sym.t / sym.t_mid) ** sym.exponent)
    law = sym.r_star + (sym.r0 - sym.r_star) * shape
    return Derivation("power_law", law, (sym.t, sym.r0, sym.r_star, sym.t_mid, sym.exponent),
                      "Saturating power law: half the gain at t_mid, algebraic approach to r*.",
                      SECTION, (Step("shape U(t) = 1 / (1 + (t/t_mid)^b)", shape),))
