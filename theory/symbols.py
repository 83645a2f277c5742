"""The symbol table: every symbol the theory uses, declared once.

Each symbol has a name that is a valid Python identifier (it becomes an argument name of the
compiled functions and of the exported code), sympy assumptions, a LaTeX name and a meaning with
its unit. Notation follows docs/theory.md; ``lam`` is the KL coefficient (TRL's ``beta``)
and is never confused with the momentum ``beta``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import sympy as sp

__all__ = ["SymbolInfo", "TABLE", "declared", "info", "latex_names", "sym",
           "vocabulary_latex"]


@dataclass(frozen=True)
class SymbolInfo:
    """One row of the symbol table."""

    name: str
    latex: str
    meaning: str
    unit: str = "dimensionless"
    assumptions: dict[str, bool] = field(default_factory=dict)

    @property
    def symbol(self) -> sp.Symbol:
        """The sympy symbol with this row's name and assumptions."""
        return sp.Symbol(self.name, **self.assumptions)


_POS = {"positive": True}
_NONNEG = {"nonnegative": True}
_REAL = {"real": True}
_POSINT = {"integer": True, "positive": True}
_NONNEGINT = {"integer": True, "nonnegative": True}

_ROWS = [
    # time and state
    SymbolInfo("n", "n", "optimizer step (discrete time)", "steps", _NONNEGINT),
    SymbolInfo("t", "t", "continuous time", "steps", _NONNEG),
    SymbolInfo("h", "h", "lag of an autocorrelation", "steps", _NONNEGINT),
    SymbolInfo("e", "e", "displacement from the fixed point, r - r*", "reward", _REAL),
    SymbolInfo("e_next", "e_{n+1}", "displacement at step n+1", "reward", _REAL),
    SymbolInfo("e_now", "e_{n}", "displacement at step n", "reward", _REAL),
    SymbolInfo("e_prev", "e_{n-1}", "displacement at step n-1", "reward", _REAL),
    SymbolInfo("e_lag", "e_{n-l}", "displacement at the lagged step n-l", "reward", _REAL),
    SymbolInfo("e0", "e_0", "initial displacement e(0)", "reward", _REAL),
    SymbolInfo("v0", "v_0", "initial velocity e'(0)", "reward/step", _REAL),
    SymbolInfo("r0", "r_0", "initial expected reward", "reward", _REAL),
    SymbolInfo("r_star", "r^{*}", "fixed point (plateau) of the expected reward", "reward", _REAL),
    SymbolInfo("q", "q", "fraction of the total gain", "dimensionless", _POS),
    # optimizer
    SymbolInfo("eta", r"\eta", "learning rate", "parameter/gradient", _POS),
    SymbolInfo("beta", r"\beta", "momentum (heavy-ball beta or Adam beta1)", "dimensionless",
               _NONNEG),
    SymbolInfo("beta1", r"\beta_1", "Adam first-moment decay", "dimensionless", _NONNEG),
    SymbolInfo("v_hat", r"\hat v", "Adam second-moment estimate", "gradient^2", _POS),
    SymbolInfo("g_mean", r"\bar g", "mean of the projected gradient", "gradient", _REAL),
    SymbolInfo("sigma_g2", r"\sigma_g^2", "per-completion variance of the projected gradient",
               "gradient^2", _POS),
    SymbolInfo("a", "a", "effective step (eta for heavy-ball SGD)", "parameter/gradient", _POS),
    SymbolInfo("rho_A", r"\rho_A", "Adam noise ratio sigma_g^2 / g_mean^2 (per completion)",
               "completions", _POS),
    SymbolInfo("sigma_p2", r"\sigma_p^2", "between-prompt variance of the projected gradient "
               "(per prompt; not removed by more completions)", "gradient^2", _NONNEG),
    SymbolInfo("sigma_c2", r"\sigma_c^2", "within-group variance of the projected gradient "
               "(per completion)", "gradient^2", _NONNEG),
    SymbolInfo("rho_p", r"\rho_p", "Adam between-prompt noise ratio sigma_p^2 / g_mean^2",
               "prompts", _NONNEG),
    SymbolInfo("rho_c", r"\rho_c", "Adam within-group noise ratio sigma_c^2 / g_mean^2",
               "completions", _NONNEG),
    SymbolInfo("h_noise", r"h_{\mathrm{noise}}", "curvature of the reward along the sampling "
               "noise of the step (minus its second derivative, averaged over the noise)",
               "reward/parameter^2", _NONNEG),
    SymbolInfo("kappa_A", r"\kappa_A", "Adam-normalised curvature kappa / |g_mean|",
               "1/reward", _POS),
    SymbolInfo("kappa", r"\kappa", "curvature scale: slope of the projected drift",
               "gradient/reward", _POS),
    SymbolInfo("kappa0", r"\kappa_0", "curvature scale at unit model size", "gradient/reward",
               _POS),
    SymbolInfo("N", "N", "model size (parameters)", "parameters", _POS),
    SymbolInfo("alpha", r"\alpha", "model-size exponent of the curvature scale", "dimensionless",
               _REAL),
    SymbolInfo("T_w", "T_w", "linear learning-rate warmup length", "steps", _POS),
    # oscillator
    SymbolInfo("k", "k", "dimensionless stiffness a*kappa", "1/step^2", _POS),
    SymbolInfo("m", "m", "mass of the continuum limit", "dimensionless", _POS),
    SymbolInfo("k_s", "k_{s}", "stiffness of the stiff mode of the two-mode map (lr h_s)",
               "1/step^2", _POS),
    SymbolInfo("k_r", "k_{r}", "stiffness of the soft mode of the two-mode map (lr h_r)",
               "1/step^2", _POS),
    SymbolInfo("f_sat", r"F_{\mathrm{sat}}", "saturated restoring force along the stiff "
               "direction (delayed relay, per unit lr)", "parameter/gradient", _POS),
    SymbolInfo("w_s", "w_{s}", "stiff mode's share of the reward deficit r* - r",
               "dimensionless", _NONNEG),
    SymbolInfo("c", "c", "damping of the continuum limit", "1/step", _POS),
    SymbolInfo("zeta", r"\zeta", "damping ratio", "dimensionless", _POS),
    SymbolInfo("omega0", r"\omega_0", "natural angular frequency", "rad/step", _POS),
    SymbolInfo("omega", r"\omega", "angular frequency of a spectrum", "rad/step", _REAL),
    SymbolInfo("z", "z", "root of a discrete characteristic polynomial", "dimensionless", {}),
    SymbolInfo("tau", r"\tau", "relaxation time", "steps", _POS),
    # baseline reward curves (theory/curves.py)
    SymbolInfo("t_mid", r"t_{\mathrm{mid}}", "midpoint of a baseline reward curve", "steps",
               _NONNEG),
    SymbolInfo("width", "w", "width of the logistic baseline's transition", "steps", _POS),
    SymbolInfo("exponent", "b", "exponent of the saturating power-law baseline",
               "dimensionless", _POS),
    # lag
    SymbolInfo("l", "l", "lag of the force", "steps", _NONNEGINT),
    SymbolInfo("l_bar", r"\bar l", "mean lag of the force", "steps", _NONNEG),
    SymbolInfo("K", "K", "refresh interval (optimizer steps per sampling refresh)", "steps",
               _POSINT),
    SymbolInfo("d", "d", "fixed staleness", "steps", _POSINT),
    # sampling
    SymbolInfo("G", "G", "group size (completions per prompt)", "completions", _POSINT),
    SymbolInfo("B", "B", "prompts per step", "prompts", _POSINT),
    SymbolInfo("S", "S", "number of successes in a group", "completions", _NONNEGINT),
    SymbolInfo("S_lo", r"S_{\mathrm{lo}}", "fewest successes allowed to a group with spread",
               "completions", _NONNEGINT),
    SymbolInfo("S_hi", r"S_{\mathrm{hi}}", "most successes allowed to a group with spread",
               "completions", _NONNEGINT),
    SymbolInfo("q_in", r"q_{\mathrm{in}}", "probability that a group has no spread or between "
               "S_lo and S_hi successes", "dimensionless", _POS),
    SymbolInfo("p", "p", "success probability of a prompt", "dimensionless", _POS),
    SymbolInfo("a_p", "a_p", "first shape parameter of the Beta law of prompt success rates",
               "dimensionless", _POS),
    SymbolInfo("b_p", "b_p", "second shape parameter of the Beta law of prompt success rates",
               "dimensionless", _POS),
    SymbolInfo("N_p", "N_p", "prompts in the dataset a trainer deals its batches from",
               "prompts", _POS),
    SymbolInfo("sigma_r2", r"\sigma_r^2", "between-prompt variance of the success rates "
               "Var_i(p_i)", "reward^2", _NONNEG),
    SymbolInfo("w_r", "w_r", "mean within-prompt Bernoulli variance E_i[p_i (1 - p_i)]",
               "reward^2", _NONNEG),
    SymbolInfo("x_r", "x_r", "half the variance of the step reward's change over m (1 - m) / B",
               "dimensionless", _NONNEG),
    SymbolInfo("r1", "r_1", "expected reward at a later window of steps", "reward", _POS),
    SymbolInfo("j", "j", "index of a finite product or sum", "dimensionless", _NONNEGINT),
    SymbolInfo("eps", r"\epsilon", "epsilon added to the group std (TRL: 1e-4)", "reward",
               _NONNEG),
    SymbolInfo("s2", "s^{2}", "per-step noise variance of the increment of r", "reward^2",
               _POS),
    SymbolInfo("Sigma", r"\Sigma", "per-completion variance of the projected gradient",
               "gradient^2", _POS),
    SymbolInfo("T", "T", "noise temperature", "reward^2/step^2", _POS),
    SymbolInfo("lam", r"\lambda", "KL coefficient (TRL's beta)", "dimensionless", _NONNEG),
    SymbolInfo("x", "x", "logit gap of the two-arm bandit", "nats", _REAL),
    SymbolInfo("x_ref", r"x_{\mathrm{ref}}", "logit gap of the reference policy", "nats", _REAL),
    SymbolInfo("x_old", r"x_{\mathrm{old}}", "logit gap of the sampling policy (last refresh)",
               "nats", _REAL),
]

TABLE: dict[str, SymbolInfo] = {row.name: row for row in _ROWS}


def info(name: str) -> SymbolInfo:
    """Return the table row of ``name``.

    Parameters
    ----------
    name : str
        A declared symbol name (``beta``, ``k``, ...).

    Returns
    -------
    SymbolInfo
        Its row.

    Raises
    ------
    KeyError
        Naming the unknown symbol.
    """
    try:
        return TABLE[name]
    except KeyError:
        raise KeyError(f"symbol {name!r} is not declared in grpodyn.theory.symbols") from None


def declared(name: str) -> sp.Symbol:
    """Return the sympy symbol declared under ``name``.

    Parameters
    ----------
    name : str
        A declared symbol name.

    Returns
    -------
    sympy.Symbol
        The symbol, with its assumptions.
    """
    return info(name).symbol


def latex_names() -> dict[sp.Symbol, str]:
    """Map from every declared symbol to its LaTeX name (for ``sympy.latex``)."""
    return {row.symbol: row.latex for row in _ROWS}


def vocabulary_latex() -> dict[str, str]:
    r"""Map each public name of :mod:`grpodyn.theory.vocabulary` to its LaTeX symbol.

    Returns
    -------
    dict of str to str
        ``{"momentum": r"\beta", "stiffness": "k", ...}`` for every term that has a symbol.
    """
    from grpodyn.theory.vocabulary import VOCABULARY

    return {name: info(term.symbol).latex for name, term in VOCABULARY.items() if term.symbol}


#: Every declared symbol as an attribute: ``sym.beta``, ``sym.k``.
sym = SimpleNamespace(**{row.name: row.symbol for row in _ROWS})
