"""tau, stiffness, regime and margins of a run, read from the fit the analysis trusts.

:func:`tau_model` picks the fit whose relaxation time is reported (the exponential or the
inertial form, the one the stacking weights trust most); :func:`dynamics_of` reads tau from it
and, with the momentum, the stiffness (docs/theory.md section 3: tau = (1 - beta) / k), the
regime and the stability margins, each with a status and, where the data do not determine it,
the reason in words (:func:`not_determined`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grpodyn.empirical.logs.run_settings import LoggedSchedule
from grpodyn.numerics.fit import FitResult
from grpodyn.numerics.forecast import SATURATING

__all__ = ["not_determined", "dynamics_of", "tau_model"]


def not_determined(reason: str) -> dict[str, Any]:
    """Return the entry of a number the data do not determine: no value, a status and why.

    Parameters
    ----------
    reason : str
        Why it is not determined, in words.

    Returns
    -------
    dict
        ``{"value": None, "status": "not_determined", "reason": reason}``.
    """
    return {"value": None, "status": "not_determined", "reason": reason}


def dynamics_of(fit: FitResult | None, plateau: dict[str, Any], momentum: float | None,
                span: float, lr: float | None, *, favoured: str | None = None,
                fitted: tuple[str, ...] = (), schedule: LoggedSchedule | None = None
                ) -> dict[str, Any]:
    """tau, stiffness, regime and margins from the trusted fit, each with a status.

    Parameters
    ----------
    fit : FitResult or None
        The fit tau is read from (:func:`tau_model`); None where none has a relaxation time.
        The ``exponential_lr`` law's time constant is on the lr clock: over the schedule's
        mean lr it is tau in steps.
    plateau : dict
        The plateau with its status (tau is tied to it).
    momentum : float or None
        The optimiser's momentum (Adam's beta1), None where unknown.
    span : float
        The steps the fit covers.
    lr : float or None
        The peak learning rate (for kappa).
    favoured : str, optional
        Why the weights favour a saturating law with no single relaxation time.
    fitted : tuple of str
        The models that were fitted, named where none of them has a relaxation time.
    schedule : LoggedSchedule, optional
        The logged lr over the fit (:func:`~grpodyn.empirical.logs.run_settings.logged_schedule`;
        None: constant). Where the lr-clock law is trusted, tau is at the mean lr and the
        regime, the margins and kappa are read at the peak, k / share, where the limit binds;
        a fit on steps says that the peak's stiffness is at least its own.

    Returns
    -------
    dict
        ``tau``, ``stiffness``, ``regime``, ``stability_margin`` (and more where determined).
    """
    if fit is None:
        reason = ("no saturating model could be fitted" if not fitted else
                  "tau is read from the exponential or the inertial fit, and neither was "
                  f"fitted: {', '.join(fitted)} {'has' if len(fitted) == 1 else 'have'} no "
                  "single relaxation time")
        return {k: not_determined(reason)
                for k in ("tau", "stiffness", "regime", "stability_margin")}
    p = fit.params
    if fit.model.name == "exponential":
        tau, tau_err = p["tau"], fit.stderr["tau"]
    elif fit.model.name == "exponential_lr" and schedule is not None:
        tau, tau_err = p["lr_time"] / schedule.mean, fit.stderr["lr_time"] / schedule.mean
    elif fit.model.name == "inertial" and "stiffness" in p:
        tau = fit.derived()["tau"]
        tau_err = fit.stderr["stiffness"] * tau / p["stiffness"]
    else:
        tau, tau_err = None, None
    out: dict[str, Any] = {"model": fit.model.name}
    if favoured is not None:
        out["tau"] = not_determined(favoured)
    elif fit.model.name == "inertial" and tau is None:
        out["tau"] = not_determined(
            "the inertial form was fitted without a momentum, its damping ratio zeta and "
            "frequency omega0 free: its derived tau = 2 zeta / omega0 = "
            f"{fit.derived()['tau']:.4g} steps has no standard error from that fit and no "
            "stiffness follows from it; give momentum= (--momentum), Adam's beta1, to fix its "
            "mass and damping, and tau is read with its error")
    elif tau is None:
        out["tau"] = not_determined(f"the trusted model ({fit.model.name}) has no relaxation time")
    elif plateau["status"] != "determined" or fit.at_bounds:
        out["tau"] = not_determined(f"the plateau is {plateau['status']}: "
                        + plateau.get("reason", "") + "; tau is tied to it")
        if tau > span:
            out["tau"]["lower"] = span
            out["tau"]["reason"] = f"the run has not begun to saturate: tau > {span:.0f} steps"
    elif not tau_err < tau:
        out["tau"] = not_determined(f"its standard error ({tau_err:.3g}) is not smaller than tau "
                        f"({tau:.3g})")
    elif fit.singular:
        out["tau"] = {"value": tau, "status": "singular",
                      "reason": "singular information matrix: no standard error"}
    else:
        out["tau"] = {"value": tau, "stderr": tau_err, "status": "determined",
                      "lower": None, "upper": None, "unit": "steps"}
    on_clock = fit.model.name == "exponential_lr" and schedule is not None
    if on_clock and out["tau"]["status"] in ("determined", "singular"):
        out["tau"]["clock"] = (f"the lr's: tau in steps at its mean, {schedule.share:.2f} of its "
                               "peak; the steps to the plateau depend on the lr ahead")
    elif out["tau"]["status"] == "determined":
        out["tau"]["steps_to_plateau"] = max(0.0, float(tau * np.log(20) - span))
    if momentum is None:
        reason = "momentum unknown: give momentum= (--momentum), Adam's beta1"
        for k in ("stiffness", "regime", "stability_margin"):
            out[k] = not_determined(reason)
        return out
    if out["tau"]["status"] not in ("determined", "singular"):
        for k in ("stiffness", "regime", "stability_margin"):
            out[k] = not_determined("tau is not determined")
        return out
    out.update(_limits((1.0 - momentum) / tau, momentum, lr,  # tau = c / k, section 3
                       schedule.share if on_clock else None,
                       None if schedule is None else schedule.share))
    return out


def _limits(stiffness: float, momentum: float, lr: float | None, on_clock: float | None,
            logged_share: float | None) -> dict[str, Any]:
    """Stiffness, regime, margins and kappa from the stiffness k a tau gives [per step].

    ``on_clock``: the lr's share of its peak where tau was read on the lr clock; the limits are
    then read at the peak, k / share. ``logged_share``: the share of a varying logged lr where
    tau was read on steps; the caveat says the peak's stiffness is at least k.
    """
    from grpodyn.numerics.compiled import compiled
    from grpodyn.numerics.stability import first_unstable_refresh, regime, staleness_max

    out: dict[str, Any] = {}
    share = 1.0 if on_clock is None else on_clock
    peak = stiffness / share
    k_max = float(compiled("stiffness_max")(momentum))
    refresh = first_unstable_refresh(momentum=momentum, stiffness=peak)
    caveat = ("a fitted tau measures the slow mode: stiff directions may limit the learning "
              "rate far below what this margin says (studies/tiny_grids/findings.md section 1)")
    out["stiffness"] = {"value": stiffness, "status": "determined", "unit": "per step"}
    if on_clock is not None:
        caveat += (f"; the logged lr schedule averaged {share:.2f} of its peak over the fit, "
                   f"so the regime and the margins are read at the peak stiffness k / "
                   f"{share:.2f} = {peak:.3g} per step, where the limit binds")
        out["stiffness"]["at_peak"] = {"value": peak, "lower": None, "upper": None,
                                       "lr_share": share}
    elif logged_share is not None:
        caveat += (f"; the logged lr varies (it averaged {logged_share:.2f} of its peak) and "
                   f"tau was read on steps, which weighs the lr where the reward moved: the "
                   "stiffness at the lr's peak is at least this one, the margin there at most "
                   "this one")
    out["regime"] = {"value": regime(momentum=momentum, stiffness=peak),
                     "status": "determined", "caveat": caveat}
    out["stability_margin"] = {"value": 1.0 - peak / k_max, "status": "determined",
                               "caveat": caveat}
    out["refresh_max"] = {"value": None if refresh is None else refresh - 1,
                          "status": "determined"}
    out["staleness_max"] = {"value": staleness_max(momentum=momentum, stiffness=peak),
                            "status": "determined"}
    if lr is not None:
        out["kappa"] = {"value": peak / lr, "status": "determined",
                        "unit": "per unit learning rate", "caveat": caveat}
    return out


def tau_model(fits: dict[str, FitResult], weights: dict[str, float],
               ) -> tuple[FitResult | None, str | None]:
    """Return the fit whose relaxation time tau is reported, and why the data may favour another.

    tau comes from a model that has one (exponential, inertial, and exponential_lr, fitted
    where the logged lr varies: its time constant is on the lr clock), the one the stacking
    weights trust most; the second value says so when the weights trust the other saturating
    laws more than twice as much (``None`` otherwise).
    """
    with_tau = [n for n in ("exponential", "inertial", "exponential_lr") if n in fits]
    trusted_fit = fits[max(with_tau, key=lambda n: weights.get(n, 0.0))] if with_tau else None
    saturating = {n: w for n, w in weights.items() if n in SATURATING and w > 0}
    tau_weight = sum(weights.get(n, 0.0) for n in with_tau)
    favoured = None
    if trusted_fit is not None and saturating and tau_weight < 0.5 * sum(saturating.values()):
        top = max(saturating, key=saturating.get)
        favoured = (f"among the saturating laws the weights favour the {top} law ("
                    f"{saturating[top]:.2f} against {tau_weight:.2f} for the forms with one "
                    "(exponential, inertial, exponential_lr)"
                    + ("" if sum(saturating.values()) >= 0.5 else
                       f"; {1 - sum(saturating.values()):.2f} on no saturation at all")
                    + "), which has no single relaxation time")
    return trusted_fit, favoured
