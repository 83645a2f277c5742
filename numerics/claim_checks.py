"""The checks of the theory's own claims: compiled derivations against the theory's stated values.

Each check is named by a claim of :mod:`grpodyn.theory.claims.registry` and called as
``check(claim, None)``; it reads the stated value and the parameters from ``claim.values`` and
returns the claim's report rows (:meth:`grpodyn.theory.claims.Claim.row`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from grpodyn.theory.claims import Check, Claim

from . import stability
from .compiled import compiled

__all__ = ["staleness_threshold", "first_unstable_refresh", "stiffness_limit",
           "critical_stiffness", "refresh_threshold_no_momentum", "grpo_update_variance"]


def staleness_threshold(claim: Claim, data: Any = None) -> list[Check]:
    """Compare the exact fixed-staleness threshold k* with docs/theory.md section 5's digits."""
    v = claim.values
    value = stability.staleness_stiffness_max(v["momentum"], v["staleness"])
    continuum = (1 - v["momentum"]) / v["staleness"]
    return [claim.row(f"{value:.6f} (continuum c/d = {continuum:.4f})",
                      round(value, v["digits"]) == v["value"])]


def first_unstable_refresh(claim: Claim, data: Any = None) -> list[Check]:
    """Compare the first unstable refresh interval (exact Jury test) with section 5's."""
    v = claim.values
    value = stability.first_unstable_refresh(momentum=v["momentum"], stiffness=v["stiffness"])
    continuum = float(compiled("refresh_threshold_continuum")(v["momentum"], v["stiffness"]))
    return [claim.row(f"{value} (continuum {continuum:.4g})", value == v["value"])]


def stiffness_limit(claim: Claim, data: Any = None) -> list[Check]:
    """Compare the on-policy stiffness limit 2 (1 + beta) with the stated value (section 5)."""
    v = claim.values
    value = float(compiled("stiffness_max")(v["momentum"]))
    return [claim.row(f"{value:.12g}", abs(value - v["value"]) < v["tolerance"])]


def critical_stiffness(claim: Claim, data: Any = None) -> list[Check]:
    """Compare the continuum critical stiffness with the exact discrete one (section 4)."""
    v = claim.values
    continuum = float(compiled("critical_stiffness")(v["momentum"]))
    discrete = float(compiled("critical_stiffness_discrete")(v["momentum"]))
    return [claim.row(f"{continuum:.6g} vs {discrete:.6g} (rel. diff "
                      f"{continuum / discrete - 1:.2e})",
                      abs(continuum / discrete - 1) < v["tolerance"])]


def refresh_threshold_no_momentum(claim: Claim, data: Any = None) -> list[Check]:
    """Compare the refresh threshold without momentum, 2 / k, with section 5's value."""
    v = claim.values
    value = float(compiled("refresh_threshold_no_momentum")(v["stiffness"]))
    return [claim.row(f"{value:.12g}", abs(value - v["value"]) < v["tolerance"])]


def grpo_update_variance(claim: Claim, data: Any = None) -> list[Check]:
    """Check that G^2 Var of the GRPO update at p = 1/2 tends to 1/8 (section 7)."""
    v = claim.values
    scaled = [float(compiled("grpo_update_variance")(g, v["p"], 0.0)) * g**2
              for g in v["group_sizes"]]
    limit = Fraction(v["limit"]).limit_denominator()
    return [claim.row("G^2 Var = " + ", ".join(f"{x:.4f}" for x in scaled) + f" (-> {limit})",
                      abs(scaled[-1] - v["limit"]) < v["tolerance"])]
