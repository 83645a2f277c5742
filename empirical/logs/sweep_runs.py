"""The runs of a sweep: a log with its hyperparameters, and the ``--hparams`` syntax.

:func:`load_sweep_run` reads a log and the hyperparameters the theory needs (lr, optimizer,
momentum, G, B, ...) from ``--hparams``, the log's own ``grpodyn_hparams``, its metadata and
config, and the trainer its format names (a TRL log implies AdamW); :func:`collapsed` tells a
run that lost what it had.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.empirical.logs.common import counted
from grpodyn.empirical.logs.infer import format_defaults
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.empirical.logs.meta import HPARAM_FIELDS
from grpodyn.empirical.logs.run_settings import infer_reward_range
from grpodyn.ground import InputError, check_int, check_momentum
from grpodyn.ground.checks import BATCH_MAX, GROUP_SIZE_MAX, LR_MAX, MAX_STEPS
from grpodyn.numerics.mean_field_map import (
    OPTIMIZERS,
    SCHEDULES,
)

__all__ = ["HPARAM_KEYS", "META_NAMES", "REQUIRED_HPARAMS", "MAX_STEPS", "SweepRun",
           "parse_hparams", "checked_types", "load_sweep_run", "sweep_run_of", "as_runs",
           "collapsed", "unmoved", "optimizer_family", "FEWEST_POINTS", "check_complete"]


#: The fewest reward points a run of a sweep's joint fit needs (``fit_sweep`` refuses fewer).
FEWEST_POINTS = 10
#: keys of ``--hparams`` and ``--to`` and their types
HPARAM_KEYS: dict[str, type] = {"lr": float, "group_size": int, "batch": int, "momentum": float,
                                "kl": float, "num_iterations": int, "schedule": str,
                                "warmup": int, "steps": int, "optimizer": str, "seed": int}
#: each hyperparameter of a sweep run -> the name of the log metadata it is read from (the
#: planned steps of a source run are not among a sweep run's settings)
META_NAMES = {key: field for key, field in HPARAM_FIELDS.items()
              if key in HPARAM_KEYS and key != "steps"}


def parse_hparams(text: str, *, name: str = "--hparams") -> dict[str, Any]:
    """``"lr=1e-3,group_size=8,schedule=cosine"`` as a checked dict (empty text: empty dict).

    A key given twice is refused: which of its values was meant cannot be told.
    """
    out: dict[str, Any] = {}
    texts: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in HPARAM_KEYS:
            raise InputError(f"{name}: {item!r} is not key=value with a key among "
                             f"{', '.join(HPARAM_KEYS)}")
        if key in texts:
            raise InputError(f"{name}: {key} given twice ({key}={texts[key]} and "
                             f"{key}={value.strip()}); give each key once")
        texts[key] = value.strip()
        try:
            parsed = HPARAM_KEYS[key](value.strip())
        except ValueError:
            kind = {int: "an integer", float: "a number", str: "a name"}.get(
                HPARAM_KEYS[key], HPARAM_KEYS[key].__name__)
            raise InputError(f"{name}: {key} must be {kind}, got {value!r}") from None
        if isinstance(parsed, float) and not np.isfinite(parsed):
            raise InputError(f"{name}: {key} must be finite, got {value!r}")
        out[key] = parsed
    return checked_run(out, name)


def checked_types(hp: Any, name: str) -> dict[str, Any]:
    """Return a copy of the hyperparameter dict ``hp`` after checking its keys and value types.

    A key outside :data:`HPARAM_KEYS` (a misspelt one would otherwise be ignored) and a value
    of the wrong type (a string for a number, a bool, a float for a count) are refused with an
    :class:`~grpodyn.ground.InputError` naming the key; an int is taken for a float.
    """
    if not isinstance(hp, dict):
        raise InputError(f"{name}: hyperparameters must be a dict of key: value, got "
                         f"{type(hp).__name__}")
    out: dict[str, Any] = {}
    for key, value in hp.items():
        if key not in HPARAM_KEYS:
            raise InputError(f"{name}: unknown hyperparameter {key!r}; the keys are "
                             f"{', '.join(HPARAM_KEYS)}")
        kind = HPARAM_KEYS[key]
        if kind is str:
            ok = isinstance(value, str)
        elif kind is int:
            ok = isinstance(value, (int, np.integer)) or (
                isinstance(value, (float, np.floating)) and float(value).is_integer())
        else:
            ok = isinstance(value, (int, float, np.integer, np.floating))
        if not ok or isinstance(value, (bool, np.bool_)):
            article = "an" if kind is int else "a"
            raise InputError(f"{name}: {key} must be {article} {kind.__name__}, got {value!r} "
                             f"({type(value).__name__})")
        if kind is not str and not np.isfinite(float(value)):
            raise InputError(f"{name}: {key} must be finite, got {value!r}")
        out[key] = value if kind is str else kind(value)
    return out


def optimizer_family(optimizer: Any) -> str:
    """Return an optimizer as a sweep names it.

    ``adam`` for any Adam (AdamW, adamw_torch), else its name in lower case.
    """
    name = str(optimizer).lower()
    return "adam" if name.startswith("adam") else name


def checked_run(hp: dict[str, Any], name: str) -> dict[str, Any]:
    if "optimizer" in hp:
        hp["optimizer"] = optimizer_family(hp["optimizer"])
        if hp["optimizer"] not in OPTIMIZERS:
            raise InputError(f"{name}: optimizer must be sgd or adam, got {hp['optimizer']!r}")
    if "schedule" in hp:
        schedule = str(hp["schedule"]).lower().removesuffix("_with_warmup")
        hp["schedule"] = schedule
        if schedule not in SCHEDULES:
            raise InputError(f"{name}: schedule must be one of {', '.join(SCHEDULES)}, got "
                             f"{hp['schedule']!r}")
    if "lr" in hp and not 0 < hp["lr"] <= LR_MAX:
        raise InputError(f"{name}: lr must be positive and at most {LR_MAX:g}, got {hp['lr']!r}")
    if "momentum" in hp:
        check_momentum(hp["momentum"], f"{name}: momentum")
    for key, minimum, maximum in (("group_size", 2, GROUP_SIZE_MAX), ("batch", 1, BATCH_MAX),
                                  ("num_iterations", 1, MAX_STEPS), ("steps", 1, None),
                                  ("warmup", 0, MAX_STEPS), ("seed", 0, None)):
        if key in hp:
            check_int(f"{name}: {key}", hp[key], minimum=minimum, maximum=maximum)
    if "kl" in hp and hp["kl"] < 0:
        raise InputError(f"{name}: kl must be non-negative, got {hp['kl']!r}")
    return hp


@dataclass(eq=False)
class SweepRun:
    """One run of a sweep: its reward path and settings.

    ``steps`` counts the steps since the run's first logged point: 0 at that point, whatever
    the log calls it, so that every run of a sweep starts its map at index 0 and the fit and
    the transfer index their paths alike. ``first_step`` is the log's own step of that first
    point (1 for a log that counts from 1): the log's numbering of a point is
    ``first_step + steps``, and ``grpodyn transfer`` labels its predictions with it (a log of
    steps 1..360 gives ``steps`` 0..359 and ``first_step`` 1).
    """

    name: str
    steps: np.ndarray
    reward: np.ndarray
    hparams: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    first_step: float = 0.0
    reward_key: str = "reward"
    declared_range: tuple[float, float] | None = None

    def __repr__(self) -> str:
        h = self.hparams
        shown = ", ".join(f"{k}={h[k]:g}" if isinstance(h[k], float) else f"{k}={h[k]}"
                          for k in ("optimizer", "lr", "group_size", "batch", "seed") if k in h)
        span = (f", log steps {self.first_step + self.steps[0]:g}-"
                f"{self.first_step + self.steps[-1]:g}") if self.steps.size else ""
        return (f"SweepRun({Path(self.name).name!r}, {counted(self.reward.size, 'point')}{span}, "
                f"{shown})")

    @property
    def setting(self) -> tuple:
        """The hyperparameters that set the dynamics (the seed left out)."""
        h = self.hparams
        return (h["optimizer"], h["lr"], h.get("group_size"), h.get("batch"),
                h.get("momentum"), h.get("kl"), h.get("schedule", "constant"), h.get("warmup", 0))


#: what every sweep run must give, from its log or from ``--hparams``
REQUIRED_HPARAMS = ("optimizer", "lr", "momentum")


def check_complete(hparams: dict[str, Any], name: str, option: str) -> None:
    """Refuse a run whose hyperparameters lack one a sweep needs, naming all that are missing.

    Every run needs :data:`REQUIRED_HPARAMS`; an Adam run also G and B (Adam's v_hat depends
    on B G), which a run of unknown optimizer is told it may need.

    Raises
    ------
    InputError
        Naming ``name``, every missing hyperparameter and ``option``, the option that gives them.
    """
    missing = [k for k in REQUIRED_HPARAMS if k not in hparams]
    for_adam = [k for k in ("group_size", "batch") if k not in hparams]
    if hparams.get("optimizer") == "adam" and for_adam:
        missing += for_adam
        why = "; Adam's v_hat depends on B G"
    else:
        why = (f"; for Adam also {' and '.join(for_adam)} (its v_hat depends on B G)"
               if "optimizer" in missing and for_adam else "")
    if missing:
        many = len(missing) > 1
        raise InputError(f"{name}: hyperparameter{'s' * many} {', '.join(missing)} not found in "
                         f"the log{why}; give {'them' if many else 'it'} with {option}")


def load_sweep_run(path: str | Path, overrides: dict[str, Any] | None = None, *,
                   run: str | None = None, reward_key: str | None = None,
                   step_key: str | None = None, logging_steps: int | None = None,
                   reward_range: tuple[float, float] | None = None,
                   option: str = "--hparams") -> SweepRun:
    """Return a log and its hyperparameters.

    ``run``, ``reward_key``, ``step_key`` and ``logging_steps`` are those of
    :func:`~grpodyn.empirical.logs.loaders.load_run` (which run of a log that holds several,
    named in the sweep as ``PATH [RUN]``; the metric read as the reward; the field read as the
    step; the steps between logged points of a console log that prints no step). The
    hyperparameters and the reward range are resolved by :func:`sweep_run_of`, ``option``
    naming in its errors the option that gives the hyperparameters (``--hparams`` of ``grpodyn
    sweep`` and ``grpodyn transfer``, ``--sweep-hparams`` of ``grpodyn advise``).
    """
    loaded = load_run(path, run=run, reward_key=reward_key, step_key=step_key,
                      logging_steps=logging_steps)
    name = None if run is None else f"{path} [{run}]"
    return sweep_run_of(loaded, path, overrides, name=name, reward_range=reward_range,
                        option=option)


def sweep_run_of(run: Any, path: str | Path, overrides: dict[str, Any] | None = None, *,
                 name: str | None = None, reward_range: tuple[float, float] | None = None,
                 option: str = "--hparams") -> SweepRun:
    """Return the loaded run ``run`` of the log ``path`` with its hyperparameters.

    Parameters
    ----------
    run : grpodyn.empirical.logs.loaders.Run
        The run, as :func:`~grpodyn.empirical.logs.loaders.load_run` loaded it.
    path : str or Path
        Its log (read again for the settings grpodyn wrote into a JSON log).
    overrides : dict, optional
        Hyperparameters that override the log's (``--hparams``).
    name : str, optional
        The run's name in the sweep (default: ``path``).
    reward_range : tuple of float, optional
        The range the reward can reach, declared (``--reward-range``); a logged reward outside
        it is refused.
    option : str
        The option that gives the hyperparameters: named where one is missing, and the source
        of the hyperparameters it gave.

    Returns
    -------
    SweepRun
        The run, its steps counted from its first point.

    Notes
    -----
    ``overrides`` first, then the settings grpodyn wrote into the log (``grpodyn_hparams``),
    then what the loader found (RunMeta: the log's metrics, config and metadata), then the
    optimizer and beta1 of the trainer the log's format names
    (:func:`~grpodyn.empirical.logs.infer.format_defaults`: a TRL, verl or OpenRLHF log implies
    AdamW), so that ``option`` asks only for what none of them says.
    """
    name = str(path) if name is None else name
    overrides = checked_types(overrides or {}, f"{name}: overrides")
    found: dict[str, Any] = {}
    sources: dict[str, str] = {}
    defaults = format_defaults(run.format)
    for key in ("optimizer", "momentum"):
        value = defaults.value(key)
        if value is not None:
            found[key] = value
            sources[key] = f"{getattr(defaults, key).evidence} (trainer default)"
    for key, meta_name in META_NAMES.items():
        value = run.meta.value(meta_name)
        if value is not None:
            origin = getattr(run.meta, meta_name).source
            found[key], sources[key] = value, f"log metadata ({origin})"
    for key, value in _own_record(path).items():  # its own record ranks above what was read
        if key in HPARAM_KEYS and value is not None:
            found[key], sources[key] = value, "log (grpodyn_hparams)"
    for key, value in overrides.items():
        found[key], sources[key] = value, option
    if sources.get("momentum", "").endswith("(trainer default)") and \
            not str(found.get("optimizer", "")).lower().startswith("adam"):
        del found["momentum"]  # the trainer's beta1 says nothing of another optimizer's momentum
    found = checked_run({k: v for k, v in found.items() if k in HPARAM_KEYS}, name)
    check_complete(found, name, option)
    if reward_range is not None:  # refuses a range the logged rewards leave
        reward_range = infer_reward_range(run, reward_range)[0]
    # the loader keeps only points with a finite reward
    return SweepRun(name, run.steps - run.steps[0], run.reward, found, sources,
                    float(run.steps[0]), run.reward_key, reward_range)


def _own_record(path: str | Path) -> dict[str, Any]:
    """Return the ``grpodyn_hparams`` a log grpodyn wrote records (empty elsewhere).

    The sweep takes its values as they stand, ahead of the run's metadata: the loader shows
    them too, but may prefer a logged lr to a file's (``infer``) and passes over a value it
    cannot read, where a sweep refuses it (``checked_run``) and needs the seed, which no
    ``RunMeta`` field holds.
    """
    if not str(path).endswith(".json"):
        return {}
    try:
        own = json.loads(Path(path).read_text()).get("grpodyn_hparams")
    except (OSError, ValueError, AttributeError):
        return {}
    return own if isinstance(own, dict) else {}


def as_runs(runs: Any, name: str = "runs") -> list[SweepRun]:
    """Return ``runs`` as a list of distinct sweep runs, a path loaded as the CLI loads it.

    Each item is a :class:`SweepRun` or the path of a log (:func:`load_sweep_run` with the
    hyperparameters the log gives). The same run twice (one object, or the same settings and
    reward path under any name: two spellings of one path, or a copy of the file) is refused:
    it would count as two independent runs and shrink the errors.
    """
    if isinstance(runs, (str, Path, SweepRun)):
        runs = [runs]
    try:
        items = list(runs)
    except TypeError:
        raise InputError(f"{name}: a list of SweepRun or log paths, got "
                         f"{type(runs).__name__}") from None
    out: list[SweepRun] = []
    for i, item in enumerate(items):
        if isinstance(item, (str, Path)):  # in Python a log's missing settings come this way
            item = load_sweep_run(item, option="load_sweep_run(path, overrides={...})")
        elif not isinstance(item, SweepRun):
            raise InputError(f"{name}[{i}]: a SweepRun (grpodyn.load_sweep_run) or a log path, "
                             f"got {type(item).__name__}")
        for other in out:
            if other is item or (other.hparams == item.hparams
                                 and np.array_equal(other.steps, item.steps)
                                 and np.array_equal(other.reward, item.reward)):
                same = item.name if other.name == item.name else f"{other.name} and {item.name}"
                raise InputError(f"{name}: {same}: one run given twice (the same settings and "
                                 "reward path); each run enters a sweep once")
        out.append(item)
    return out


def collapsed(run: SweepRun) -> bool:
    """Tell whether ``run`` collapsed.

    A collapse: the last fifth of the run averages under half of its first tenth (and the reward
    started above 0.05), i.e. the run lost what it had instead of converging.
    """
    n = run.reward.size
    early = float(np.mean(run.reward[: max(n // 10, 3)]))
    late = float(np.mean(run.reward[-max(n // 5, 3):]))
    return early > 0.05 and late < 0.5 * early


def unmoved(run: SweepRun) -> bool:
    """Tell whether ``run``'s reward never moved: the same value at every logged point.

    Such a run shows no relaxation, so it says nothing of its stiffness: any k fits it once r0
    and the plateau sit at its value, and in a joint fit it would pull the shared constants
    toward that value as if it were informative.
    """
    values = run.reward
    return bool(np.ptp(values) <= 1e-12 * max(1.0, float(np.max(np.abs(values)))))

