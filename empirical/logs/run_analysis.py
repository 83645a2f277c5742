"""The analysis of one run, built in one place: :func:`analyse_run` -> :class:`RunAnalysis`.

Every consumer (``grpodyn fit``, ``forecast``, ``report LOG``, ``advise --log``, the TRL
callback) goes through :func:`analyse_run`. It holds the fits of the reward, the noise
estimate, the dynamics read from the model the analysis trusts (plateau, tau, stiffness, regime,
stability margins), each with a status and a reason, the diagnosis, a forecast when a cut is
given, and warnings; it prints itself as a dict (JSON), text, an HTML section and a figure.

Nothing the data do not determine is printed as a number: a plateau of a run that has not begun
to saturate, a parameter on a bound, a standard error from a singular information matrix get a
status (``not_determined``, ``at_bound``, ``singular``) with the reason and, where one exists, a
one-sided bound. The reward range (declared, or inferred: an accuracy, pass rate or binary
reward lies in [0, 1]; a summed reward's range is unknown unless declared) constrains the
plateau. Momentum is the user's value or the log's; never assumed.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from grpodyn.empirical.diagnostics.diagnose import MIN_POINTS as DIAGNOSIS_POINTS
from grpodyn.empirical.diagnostics.early_warning import warning_at_cut
from grpodyn.empirical.logs.common import counted
from grpodyn.empirical.logs.fit_text import (
    fit_notes,
    fits_table,
    trusted_member,
    unweighed_reason,
    weight_on,
    weight_text,
)
from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.pinned import held_if_pinned, pinned_plateau
from grpodyn.empirical.logs.plateau_stacks import curve_stack
from grpodyn.empirical.logs.run_dynamics import dynamics_of, not_determined, tau_model
from grpodyn.empirical.logs.run_settings import (
    check_magnitudes,
    infer_reward_range,
    learning_rate_of,
    logged_schedule,
    momentum_of,
    peak_lr_of,
)
from grpodyn.ground import (
    InputError,
    TooFewPoints,
    check_flag,
    check_fraction,
    check_group_size,
)
from grpodyn.ground.checks import check_finite
from grpodyn.ground.jsonio import finite_json
from grpodyn.numerics.fit import FitResult, NoiseEstimate, estimate_noise
from grpodyn.numerics.forecast import (
    EnsembleForecast,
    Forecast,
    Member,
    fit_member,
    plateau_summary,
)
from grpodyn.numerics.forecasters import FORECASTERS as REGISTRY
from grpodyn.numerics.forecasters import get_forecaster

__all__ = ["RunAnalysis", "analyse_run", "infer_reward_range", "learning_rate_of",
           "momentum_of", "not_determined", "FIT_MODELS", "FORECASTERS"]

#: Models fitted to the whole run (the forecaster's saturating members and the sigmoid).
FIT_MODELS = ("exponential", "power", "sigmoid", "inertial", "exponential_lr")
#: The forecasters ``analyse_run(forecaster=...)`` and ``grpodyn forecast --forecaster`` know.
#: (The registered ones, :data:`grpodyn.numerics.forecasters.FORECASTERS`, at import.)
FORECASTERS = tuple(REGISTRY)
#: The most points a forecast past the log may hold (a horizon beyond them is refused).
MAX_FORECAST_POINTS = 100_000


@dataclass(eq=False)
class RunAnalysis:
    """Everything grpodyn says about one run. Build it with :func:`analyse_run`.

    Compared by identity (``a == b`` is ``a is b``), as it holds arrays.

    Attributes
    ----------
    run : Run
        The loaded run.
    reward_range : (lo, hi) or None
        Range of the reward, and ``range_source`` where it comes from.
    momentum : float or None
        Momentum used for the regime and margins (``momentum_source`` says whence).
    fits : dict of str to FitResult
        Fits of the whole run, or of its training part where ``n_fitted`` says so
        (constrained to the reward range).
    fit_errors : dict of str to str
        Models that could not be fitted, with the reason.
    noise : NoiseEstimate
        White observation noise from first differences.
    weights : dict of str to float
        The forecaster's stacking weights over the whole run (which model the analysis trusts).
    plateau : dict
        ``value``, ``lower``, ``upper``, ``status``, ``reason`` (see
        :func:`grpodyn.numerics.forecast.plateau_summary`).
    dynamics : dict
        tau, stiffness, regime and margins, each with a status.
    diagnosis : object or None
        :func:`grpodyn.empirical.diagnostics.diagnose.diagnose` result (None under 10 points).
    forecast : Forecast or None
        The forecast after the cut (``train_fraction`` / ``until``), or after the run's last
        step with a ``horizon`` alone.
    n_fitted : int or None
        The leading points the fits, noise, weights, plateau and dynamics read (the training
        part before the cut); None: the whole run.
    forecaster : str
        The forecaster asked for (``forecast.model`` names the one that supplied the point).
    """

    run: Run
    reward_range: tuple[float, float] | None
    range_source: str
    momentum: float | None
    momentum_source: str
    lr: float | None
    lr_source: str
    fits: dict[str, FitResult]
    fit_errors: dict[str, str]
    noise: NoiseEstimate
    weights: dict[str, float]
    plateau: dict[str, Any]
    dynamics: dict[str, Any]
    diagnosis: Any
    forecast: Forecast | None
    level: float
    warnings: list[str] = field(default_factory=list)
    n_fitted: int | None = None
    forecaster: str = "ensemble"

    def __repr__(self) -> str:
        """Return a compact summary: the run, its trusted model, plateau and tau (or statuses)."""
        def entry(d: dict[str, Any]) -> str:
            value = d.get("value")
            return f"{value:.4g}" if isinstance(value, (int, float)) else d.get("status", "?")

        name = self.run.run_name or self.run.source.rsplit("/", 1)[-1]
        return (f"RunAnalysis({name!r}, {counted(self.run.n_points, 'point')}, "
                f"model={self.trusted_model!r}, plateau={entry(self.plateau)}, "
                f"tau={entry(self.dynamics.get('tau', {}))}, "
                f"{counted(len(self.warnings), 'warning')})")

    # ---------------------------------------------------------------- output
    def forecast_dict(self) -> dict[str, Any] | None:
        """Return the forecast as the JSON contract of ``grpodyn forecast``.

        With the early warning standing at the cut (``early_warning``: null, or its ``step``,
        ``signals``, ``evidence`` and ``remedy`` as ``diagnose`` gives them, its note first
        among the warnings) and the plateau's one-sided
        ``bound``, as ``RunAnalysis.plateau`` has it.
        """
        fc = self.forecast
        if fc is None:
            return None
        members = fc.members if isinstance(fc, EnsembleForecast) else {}
        if self.forecaster == "ensemble" and self.n_fitted == fc.train_points:
            plateau = self.plateau  # the training part's one plateau (:func:`one_plateau`)
        elif members:
            plateau = plateau_summary(members, fc.weights, level=fc.level,
                                      bounds=fc.bounds)
        else:
            plateau = {"value": None, "lower": None, "upper": None,
                       "status": "not_determined",
                       "reason": "this forecaster gives the path's quantiles, not a plateau "
                                 "parameter (the default ensemble's curve models give one)"}
        out: dict[str, Any] = {
            "forecaster": self.forecaster, "model": fc.model, "weights": fc.weights,
            "weighting": fc.weighting, "train_points": fc.train_points,
            "cut_step": float(self.run.steps[fc.train_points - 1]),
            "steps": fc.steps.tolist(), "mean": fc.mean.tolist(), "mean_of": (
                "the curve models' mixture mean (the models of the plateau), which need not "
                "lie in the band: the forecast is 'point', its band 'lower' and 'upper'" if members
                else
                "the forecaster's mean; the point it forecasts is 'point'"),
            "lower": fc.lower.tolist(),
            "upper": fc.upper.tolist(), "level": fc.level,
            "point": fc.point.tolist(), "point_weights": fc.point_weights,
            "plateau": {k: plateau.get(k) for k in ("value", "lower", "upper", "status",
                                                    "reason", "bound")},
            "warnings": list(fc.warnings)}
        out["early_warning"] = warning_at_cut(self.run, out["cut_step"])
        if out["early_warning"] is not None:
            out["warnings"].insert(0, out["early_warning"].pop("note"))
        held = self._held_out()
        if held is not None:
            scores = fc.score(held, upto=held.size)
            out.update(mae=scores["mae"], mae_mean=scores["mae_mean"],
                       coverage=scores["coverage"],
                       interval_score=scores["interval_score"])
            ss_tot = float(np.sum((held - held.mean()) ** 2))
            ss_res = float(np.sum((held - fc.point[: held.size]) ** 2))
            # the keys of the former ``fit --train-fraction`` forecast, kept for scripts
            out.update(n_train=fc.train_points, n_holdout=int(held.size),
                       mae_holdout=scores["mae"],
                       r2_holdout=1 - ss_res / ss_tot if ss_tot > 0 else None)
            out["per_model"] = {}
            for name, member in members.items():
                mean, var = member.predictive(fc.steps[: held.size], fc.bounds)
                out["per_model"][name] = {"mae": float(np.mean(np.abs(held - mean)))}
        return out

    def _held_out(self) -> np.ndarray | None:
        fc = self.forecast
        if fc is None:
            return None
        logged = self.run.steps[fc.train_points:]
        n = int(np.sum(np.isin(fc.steps, logged)))
        return self.run.reward[fc.train_points: fc.train_points + n] if n else None

    def to_dict(self) -> dict[str, Any]:
        """Return everything as a dict of strict-JSON values, as the command line writes it.

        A non-finite float (an unbounded interval's side, an undefined ratio) is None
        (:func:`grpodyn.ground.finite_json`), so ``json.dumps(..., allow_nan=False)`` takes it.
        """
        models = {}
        for name, fit in self.fits.items():
            entry = fit.to_dict()
            # a share above 1 says only that the ceiling (an estimate) is too low: not given
            entry["r2_of_explainable"] = (float(fit.r2 / self.noise.r2_ceiling)
                                          if 0 < self.noise.r2_ceiling >= fit.r2 else None)
            entry["weight"] = self.weights.get(name)  # None: a model the stack never weighs
            entry["weight_reason"] = (None if name in self.weights else unweighed_reason(
                name, self.momentum, stacked=bool(self.weights)))
            models[name] = entry
        diagnosis = None if self.diagnosis is None else self.diagnosis.to_dict()
        return finite_json({
            "source": self.run.source, "format": self.run.format, "run": self.run.run_name,
            "reward_key": self.run.reward_key, "n_points": self.run.n_points,
            "steps_reconstructed": self.run.steps_reconstructed,
            "reward_range": None if self.reward_range is None else list(self.reward_range),
            "reward_range_source": self.range_source,
            "hyperparameters": self.run.meta.to_dict(),
            "momentum": self.momentum, "momentum_source": self.momentum_source,
            "lr": self.lr, "lr_source": self.lr_source,
            "noise": {"sigma": self.noise.sigma, "r2_ceiling": self.noise.r2_ceiling,
                      "method": self.noise.method},
            "models": models, "fit_errors": self.fit_errors,
            "best": self.trusted_model, "weights": self.weights,
            "weight_on": weight_on(self.weights),
            "plateau": self.plateau, "dynamics": self.dynamics, "diagnosis": diagnosis,
            "fitted_on": self.fitted_on, "forecast": self.forecast_dict(),
            "warnings": list(self.warnings)})

    @property
    def fitted_on(self) -> dict[str, Any]:
        """The steps the fits read: ``first_step``, ``last_step``, ``points`` ``of`` the run's."""
        n = self.run.n_points if self.n_fitted is None else self.n_fitted
        return {"first_step": float(self.run.steps[0]), "last_step": float(self.run.steps[n - 1]),
                "points": n, "of": self.run.n_points}

    @property
    def trusted_model(self) -> str | None:
        """The fitted curve that carries the largest weight (None: the weight is on no curve)."""
        return trusted_member(self.weights, self.fits)

    def to_text(self) -> str:
        """Return a few lines for a terminal."""
        run = self.run
        lines = [f"{run.source} ({run.format}, {run.n_points} points, reward = "
                 f"{run.reward_key})"]
        rng = "unknown" if self.reward_range is None else \
            f"[{self.reward_range[0]:g}, {self.reward_range[1]:g}]"
        lines.append(f"reward range {rng} ({self.range_source})")
        lines.append(f"noise sigma {self.noise.sigma:.4g}: R^2 ceiling "
                     f"{self.noise.r2_ceiling:.3f}")
        for name, fit in self.fits.items():
            mark = "*" if name == self.trusted_model else " "
            at = fit.params_at_bounds
            bounds = f"  at bound: {', '.join(at)}" if at else ""
            sing = "  singular: no standard errors" if fit.singular else ""
            lines.append(f"{mark} {name:15s} R^2 {fit.r2:.3f}  weight "
                         f"{weight_text(self.weights, name)}{bounds}{sing}")
        lines.append("plateau: " + _status_text(self.plateau))
        for key in ("tau", "stiffness", "regime", "stability_margin"):
            entry = self.dynamics.get(key)
            if entry is not None:
                lines.append(f"{key}: " + _status_text(entry))
        if self.diagnosis is not None:
            lines.append(f"diagnosis: {self.diagnosis.headline}")
        fc = self.forecast_dict()
        if fc is not None:
            line = (f"forecast ({fc['model']}, {fc['train_points']} training points -> "
                    f"{len(fc['steps'])} steps, {fc['level']:.0%} band)")
            if "mae" in fc:
                line += f": MAE {fc['mae']:.4g}, coverage {fc['coverage']:.0%}"
            lines.append(line)
        lines += [f"note: {w}" for w in self.warnings]
        return "\n".join(lines)

    def html_section(self) -> str:
        """Return an HTML fragment: plateau and dynamics with statuses, fits, warnings."""
        rows = [("plateau", _status_text(self.plateau))]
        rows += [(k, _status_text(v)) for k, v in self.dynamics.items() if isinstance(v, dict)]
        table = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
                        for k, v in rows)
        notes = "".join(f"<li>{html.escape(w)}</li>" for w in self.warnings)
        rng = "unknown" if self.reward_range is None else \
            f"[{self.reward_range[0]:g}, {self.reward_range[1]:g}]"
        return (f"<p>Reward range {html.escape(rng)} ({html.escape(self.range_source)}); "
                f"momentum {'not known' if self.momentum is None else f'{self.momentum:g}'} "
                f"({html.escape(self.momentum_source)}).</p><ul>{notes}</ul>"
                f"<table>{table}</table><h3>Fits</h3>{fits_table(self)}")

    def _repr_html_(self) -> str:
        return self.html_section()

    def plot(self, *, path: str | None = None) -> Any:
        """Draw the run's figure (:func:`grpodyn.empirical.logs.run_figure.analysis_figure`).

        Parameters
        ----------
        path : str, optional
            Save the figure there (atomically) when given.

        Returns
        -------
        matplotlib.figure.Figure
            The figure.
        """
        from grpodyn.empirical.logs.run_figure import analysis_figure

        return analysis_figure(self, path=path)


def _status_text(entry: dict[str, Any]) -> str:
    status = entry.get("status", "determined")
    value = entry.get("value")
    if status == "determined" and value is not None:
        if isinstance(value, str):
            return value
        text = f"{value:.4g}"
        if entry.get("lower") is not None and entry.get("upper") is not None:
            text += f" [{entry['lower']:.4g}, {entry['upper']:.4g}]"
        if entry.get("at_peak") is not None:
            peak = entry["at_peak"]
            text += (f" over the run, {peak['value']:.4g} at the lr schedule's peak (the lr "
                     f"averaged {peak['lr_share']:.2f} of it)")
        return text
    return f"{status}: {entry.get('reason', '')}"


def analyse_run(run: Run, *, momentum: float | None = None, group_size: int | None = None,
                reward_range: tuple[float, float] | None = None,
                train_fraction: float | None = None, until: float | None = None,
                horizon: float | None = None, level: float = 0.9,
                models: str | tuple[str, ...] = FIT_MODELS, diagnose_run: bool = True,
                stack: bool = True, forecaster: str = "ensemble",
                fit_on_training_part: bool | None = None) -> RunAnalysis:
    """Analyse one run: fits, noise, plateau and dynamics with statuses, diagnosis, forecast.

    Parameters
    ----------
    run : Run
        A loaded run (:func:`grpodyn.empirical.logs.loaders.load_run`).
    momentum : float, optional
        Optimiser momentum (Adam's beta1); default: the log's, else unknown (never assumed).
    group_size : int, optional
        G for the diagnosis.
    reward_range : (lo, hi), optional
        The range the reward can reach; default inferred (:func:`infer_reward_range`).
    train_fraction, until : optional
        Cut for the forecast: the leading fraction of the points, or the last training step.
    horizon : float, optional
        Forecast up to this step (default: the last logged step). Without a cut, forecast the
        whole run forward to it, as ``grpodyn forecast LOG --horizon STEP`` does.
    level : float
        Central probability of bands and intervals (default 0.9).
    models : str or tuple of str
        Models fitted to the whole run (one name: that model alone); the stack weighs every
        model of a choice other than :data:`FIT_MODELS`, of that one the forecaster's members.
    diagnose_run : bool
        Run the diagnosis (from 10 points; the modes need 20).
    stack : bool
        Which model to trust by stacking (rolling-origin refits inside the run: the costly
        part, ~0.4 s at 1000 points). False: BIC weights over the fits already made, and the
        residual noise fitted only where a one-sided plateau bound needs it.
    forecaster : str
        A name in :data:`grpodyn.numerics.forecasters.FORECASTERS`: ``ensemble`` (the calibrated
        prior's point and band, the stacked curve models' plateau), ``learned_prior`` (the theory's
        prior; bands up to level 0.95), ``adaptive`` (trend-aware members weighted by
        rolling-origin errors inside the training part), ``calibrated_prior`` (the learned
        prior's median, its band conformal on its own rolling-origin errors) or another one
        registered there.
    fit_on_training_part : bool, optional
        True (the default with a cut, ``train_fraction`` / ``until``): fit the models, noise,
        weights, plateau, dynamics and diagnosis on the training part only, as ``grpodyn fit
        --train-fraction`` and ``grpodyn forecast`` do, with one plateau for it
        (:func:`~grpodyn.empirical.logs.plateau_stacks.one_plateau`). False: the whole run,
        beside a forecast of its held-out rest (``grpodyn report LOG``).

    Returns
    -------
    RunAnalysis
        The analysis.

    Notes
    -----
    Every model is fitted once on the whole run (or its training part); the weights reuse those
    fits, stacking refits on parts. A monitor's cheap refit (ms at hundreds of points)::

        analyse_run(run, momentum=b, models=("exponential",), diagnose_run=False,
                    stack=False)

    A forecast (``train_fraction`` / ``until``, or ``horizon`` alone) fits the training part
    separately: it must not see the steps it forecasts.
    """
    train_fraction, until, horizon = _finite_options(train_fraction, until, horizon)
    if fit_on_training_part is None:
        fit_on_training_part = train_fraction is not None or until is not None
    models = _checked_choices(models, diagnose_run=diagnose_run, stack=stack,
                              fit_on_training_part=fit_on_training_part)
    check_magnitudes(run)
    if group_size is not None:  # read by the diagnosis alone, checked whether or not it runs
        group_size = check_group_size(group_size)
    get_forecaster(forecaster)
    level = check_fraction("level", level)
    bounds, range_source = infer_reward_range(run, reward_range)
    beta, momentum_source = momentum_of(run, momentum)
    lr_peak, lr_source = peak_lr_of(run)
    lr = learning_rate_of(run)
    warnings = _opening_notes(run, bounds, range_source, beta, momentum_source)
    n_fitted = None
    if fit_on_training_part and (train_fraction is not None or until is not None):
        n_fitted = _training_points(run, train_fraction=train_fraction, until=until)
    part = run if n_fitted in (None, run.n_points) else _leading(run, n_fitted)
    part_lr = None if lr is None else lr[: part.n_points]
    members, errors = _fit_members(part, models, momentum=beta, lr=part_lr, bounds=bounds,
                                   cut=part is not run)
    fits = {name: m.fit for name, m in members.items() if m.fit is not None}
    if not fits and errors:
        raise InputError(f"{run.source}: {next(iter(errors.values()))}")
    noise = estimate_noise(part.reward)
    forecast = None
    if train_fraction is not None or until is not None or horizon is not None:
        forecast = _forecast(run, train_fraction=train_fraction, until=until, horizon=horizon,
                             level=level, momentum=beta, lr=lr, bounds=bounds,
                             forecaster=forecaster)
    one = (forecast if forecaster == "ensemble" and forecast is not None
           and forecast.train_points == part.n_points else None)
    weights, plateau, notes = curve_stack(
        part.steps, part.reward, members, level=level, bounds=bounds, momentum=beta,
        learning_rate=None if part_lr is None else (part.steps, part_lr), stack=stack,
        one=one if one is not None else fit_on_training_part,
        asked=() if set(models) == set(FIT_MODELS) else models)
    warnings += fit_notes(fits, weights) + notes
    plateau = pinned_plateau(part.reward) or plateau
    trusted_fit, favoured = tau_model(fits, weights)
    span = float(part.steps[-1] - part.steps[0])
    dynamics = dynamics_of(trusted_fit, plateau, beta, span, lr_peak, favoured=favoured,
                           fitted=tuple(fits), schedule=logged_schedule(part.steps, part_lr))
    diagnosis = None
    if diagnose_run and part.n_points >= DIAGNOSIS_POINTS:  # under 20: the early warning only
        from grpodyn.empirical.diagnostics.diagnose import diagnose
        diagnosis = diagnose(part, group_size=group_size)
    if part is not run:
        warnings.insert(0, f"fitted on steps {part.steps[0]:g}-{part.steps[-1]:g}, "
                           f"{n_fitted} of {run.n_points} points: the models, the plateau and "
                           "tau read the training part only; the forecast scores the rest")
    return RunAnalysis(run, bounds, range_source, beta, momentum_source, lr_peak, lr_source,
                       fits, errors, noise, weights, plateau, dynamics, diagnosis, forecast,
                       level, warnings, n_fitted, forecaster)


def _opening_notes(run: Run, bounds: tuple[float, float] | None, range_source: str,
                   momentum: float | None, momentum_source: str) -> list[str]:
    """Return the run's warnings, and whence the reward range and momentum where unknown.

    Parameters
    ----------
    run : Run
        The loaded run.
    bounds : (lo, hi) or None
        The reward range [reward], None where unknown; ``range_source`` says why.
    range_source : str
        Where the range comes from, or why it is unknown.
    momentum : float or None
        The momentum, None where unknown; ``momentum_source`` says why.
    momentum_source : str
        Where the momentum comes from, or why it is unknown.

    Returns
    -------
    list of str
        The warnings, the run's first.
    """
    warnings = list(run.warnings)
    if bounds is None:
        warnings.append(f"reward range {range_source}")
    if momentum is None:
        warnings.append(f"momentum {momentum_source}")
    return warnings


def _finite_options(train_fraction: float | None, until: float | None, horizon: float | None,
                    ) -> tuple[float | None, ...]:
    """Return the cut and the horizon as floats, None where not given; refuse text, NaN, inf.

    At most one of ``train_fraction`` and ``until`` cuts the run.
    """
    if train_fraction is not None and until is not None:
        raise InputError("give at most one of train_fraction and until")
    given = {"train_fraction": train_fraction, "until": until, "horizon": horizon}
    return tuple(None if value is None else float(check_finite(name, value, scalar=True))
                 for name, value in given.items())


def _training_points(run: Run, *, train_fraction: float | None, until: float | None) -> int:
    """Return the points before the cut (a share of the points, a step, else all of them)."""
    if train_fraction is not None:
        n_train = int(np.floor(check_fraction("train_fraction", train_fraction) * run.n_points))
    elif until is not None and not run.steps[0] <= until <= run.steps[-1]:
        where = (f"past the log's last step {run.steps[-1]:g}" if until > run.steps[-1] else
                 f"before the log's first step {run.steps[0]:g}")
        raise InputError(f"{run.source}: until {until:g} (until= / --until) is {where}: a cut "
                         "lies within the log's steps (a horizon forecasts past its end)")
    elif until is not None:
        n_train = int(np.searchsorted(run.steps, until, side="right"))
    else:  # a horizon alone: the whole run is the training part
        n_train = run.n_points
    if n_train < 8:
        whole = n_train == run.n_points and train_fraction is None  # no cut, or one at its end
        part = "the run has" if whole else "the cut leaves"
        raise TooFewPoints(f"{run.source}: {part} {n_train} training "
                           f"point{'s' * (n_train != 1)}; a forecast needs 8")
    return n_train


def _leading(run: Run, n: int) -> Run:
    """Return the run cut to its first ``n`` points (the training part before a cut)."""
    return replace(run, steps=run.steps[:n], reward=run.reward[:n],
                   metrics={k: v[:n] for k, v in run.metrics.items()})


def _checked_choices(models: str | tuple[str, ...], **flags: Any) -> tuple[str, ...]:
    """Return ``models`` as a tuple of names, refusing none and a switch that is not a bool.

    A single name is one model, not its letters; a switch of ``flags`` must be True or False
    (the string "no" is truthy).
    """
    models = (models,) if isinstance(models, str) else tuple(models)
    if not models:
        raise InputError(f"models: give at least one curve model (of {', '.join(FIT_MODELS)})")
    for name, flag in flags.items():
        check_flag(name, flag)
    return models


def _fit_members(run: Run, models: tuple[str, ...], *, momentum: float | None,
                 lr: np.ndarray | None, bounds: tuple[float, float] | None, cut: bool = False,
                 ) -> tuple[dict[str, Member], dict[str, str]]:
    """Fit the level, the flat line and ``models`` once on ``run`` (the whole run or its part).

    The report's fits and the forecaster's members over the same points are the same objects.
    Returns the fitted members and, per model that could not be fitted, the reason. ``cut``:
    ``run`` is the training part before a cut (the errors say so).
    """
    if run.n_points < 5:
        raise TooFewPoints(f"{run.source}: a fit needs at least 5 points, got {run.n_points}")
    if np.ptp(run.reward) == 0:
        raise InputError(f"{run.source}: the reward is constant ({run.reward[0]:g}"
                         f"{' before the cut' if cut else ''}): there is no curve to fit "
                         "(grpodyn diagnose reads it)")
    lr_pair = None if lr is None else (run.steps, lr)
    members: dict[str, Member] = {}
    errors: dict[str, str] = {}
    for name in ("level", "flat", *models):
        if name == "exponential_lr" and lr is None:
            errors[name] = "exponential_lr needs a logged learning rate that varies"
            continue
        try:
            members[name] = fit_member(name, run.steps, run.reward, momentum=momentum,
                                       learning_rate=lr_pair, bounds=bounds)
        except InputError as exc:
            errors[name] = str(exc)
    return members, errors


def check_horizon(run: Run, horizon: float, *, what: str | None = None) -> None:
    """Refuse a horizon that asks for more than :data:`MAX_FORECAST_POINTS` forecast points.

    The points are laid at the log's median spacing from its last step at or before the
    horizon, as the forecast lays them, and their number is said as it is (100,001, not
    1e+05). A log of one point, or a horizon before it, has no count: the forecast says why.

    Parameters
    ----------
    run : Run
        The log.
    horizon : float
        The step to forecast up to.
    what : str, optional
        How the message names the horizon (default ``"horizon H"``).

    Raises
    ------
    InputError
        When the count exceeds :data:`MAX_FORECAST_POINTS`.
    """
    reached = run.steps[run.steps <= horizon]
    if run.n_points < 2 or reached.size == 0:
        return
    start, spacing = float(reached[-1]), float(np.median(np.diff(run.steps)))
    points = (horizon - start) / spacing
    if points > MAX_FORECAST_POINTS:
        raise InputError(f"{run.source}: {what or f'horizon {horizon:.15g}'} asks for "
                         f"{math.ceil(points):,} points past step {start:g} (one every "
                         f"{spacing:g} steps, as logged); at most {MAX_FORECAST_POINTS:,}")


def _forecast(run: Run, *, train_fraction: float | None, until: float | None,
              horizon: float | None, level: float, momentum: float | None,
              lr: np.ndarray | None, bounds: tuple[float, float] | None,
              forecaster: str = "ensemble") -> Forecast:
    """Forecast past the cut (a share of the points, a step, else the end), fitted before it."""
    n_train = _training_points(run, train_fraction=train_fraction, until=until)
    future = run.steps[n_train:]
    if horizon is not None:
        if horizon <= run.steps[n_train - 1]:
            raise InputError(f"{run.source}: horizon {horizon:g} is not after step "
                             f"{run.steps[n_train - 1]:g}, the last step fitted")
        future = future[future <= horizon]
        check_horizon(run, horizon)
        spacing = float(np.median(np.diff(run.steps)))
        start = future[-1] if future.size else run.steps[n_train - 1]
        extra = np.arange(start + spacing, horizon + 0.5 * spacing, spacing)
        future = np.concatenate([future, extra[extra <= horizon]])
    if future.size == 0:
        raise InputError(f"{run.source}: nothing to forecast: " + (
            f"horizon {horizon:g} leaves no step after step {run.steps[n_train - 1]:g}, the "
            "last step fitted, at the log's spacing"
            if horizon is not None else f"the cut is at or past the log's last step "
            f"{run.steps[-1]:g}; give horizon= (--horizon) or a cut before it"))
    lr_pair = None
    if lr is not None:
        # past the log, the learning rate stays at its last value
        steps = np.concatenate([run.steps, future[future > run.steps[-1]]])
        lr_pair = (steps, np.concatenate([lr, np.full(steps.size - lr.size, lr[-1])]))
    try:
        result = get_forecaster(forecaster).forecast(run.steps, run.reward, n_train=n_train,
                                                     future_steps=future, level=level,
                                                     bounds=bounds, momentum=momentum,
                                                     learning_rate=lr_pair)
    except InputError as exc:  # the forecasters see arrays: the error names the log here
        raise InputError(f"{run.source}: {exc}") from None
    return held_if_pinned(result, run.reward[:n_train])

