"""The runs a sweep or a transfer reads from its logs: every run of a log that holds several.

``load_sweep_run`` reads one run of a log (the one with the most reward points); a sweep's
long CSV holds the whole sweep, so ``grpodyn sweep``, ``grpodyn transfer --from`` and
``grpodyn advise --sweep`` take each of its runs, with that log's ``--hparams``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from grpodyn.cli.options import check_step_key, refuse_repeats

#: Sources of a hyperparameter that rank above the log's metadata (``load_sweep_run``), beside
#: the command's option that gives them.
_ABOVE_METADATA = ("log (grpodyn_hparams)",)


def load_log_runs(path: str | Path, overrides: dict[str, Any], *, reward_key: str | None = None,
                  step_key: str | None = None, logging_steps: int | None = None,
                  reward_range: tuple[float, float] | None = None,
                  option: str = "--hparams", min_points: int | None = None
                  ) -> tuple[list, list[str], dict[str, set]]:
    """Return the sweep runs of the log ``path``, notes on runs left out, and its own values.

    The own values are those its runs record of each hyperparameter ``overrides`` sets (key ->
    set), which the option replaces.

    ``reward_key``, ``step_key`` and ``logging_steps`` are the loader's (``--reward-key``,
    ``--step-key``, ``--logging-steps``), and ``reward_range`` the declared range of the reward
    (``--reward-range``), the same for every log. ``option`` is the command's option that
    gives the hyperparameters (``overrides``), named where one is missing.

    A log of one run gives ``load_sweep_run(path, overrides)``. A log of several gives each run
    named ``path [run]``, with the hyperparameters ``load_sweep_run`` resolves for the log's
    largest run, where that run's own metadata (its lr, read from its name in a sweep's CSV)
    replaces the largest run's; runs with fewer than ``min_points`` reward points (default
    the joint fit's least, ``sweep_runs.FEWEST_POINTS``) are left out with a note instead of
    ending the command.
    """
    from grpodyn.empirical.logs.loaders import load_runs
    from grpodyn.empirical.logs.sweep import load_sweep_run
    from grpodyn.empirical.logs.sweep_runs import FEWEST_POINTS

    min_points = FEWEST_POINTS if min_points is None else min_points

    base = load_sweep_run(path, overrides, reward_key=reward_key, step_key=step_key,
                          logging_steps=logging_steps, reward_range=reward_range, option=option)
    runs = load_runs(path, reward_key=reward_key, step_key=step_key, logging_steps=logging_steps)
    for run in runs:  # a step key that names the reward would fit the reward against itself
        check_step_key(run, step_key)
    own = _own_values(runs, overrides)
    if len(runs) == 1:
        return [base], [], own
    out, notes = [], _replaced_values(own, overrides, option,
                                      whose=f"the {len(runs)} runs of {path}",
                                      hint="leave {key} out to read each run's own")
    for run in runs:
        name = f"{path} [{run.run_name}]"
        if run.n_points < min_points:
            notes.append(f"{name}: {run.n_points} reward points, fewer than the {min_points} a "
                         "run of a sweep needs: left out")
            continue
        hparams, sources = _own_metadata(run, base.hparams, base.sources, name, option)
        out.append(dataclasses.replace(base, name=name, steps=run.steps - run.steps[0],
                                       reward=run.reward, hparams=hparams, sources=sources,
                                       first_step=float(run.steps[0]),
                                       reward_key=run.reward_key))
    return out, notes, own


def load_sources(pairs: list, *, bars: bool, reward_key: str | None = None,
                 step_key: str | None = None, logging_steps: int | None = None,
                 reward_range: tuple[float, float] | None = None,
                 option: str = "--hparams", min_points: int | None = None
                 ) -> tuple[list, list[str]]:
    """Return the runs of every (log, ``--hparams`` text) pair and the notes on runs left out.

    Each log gives its runs by :func:`load_log_runs`, with its own ``--hparams`` (and the
    loader's options and the declared reward range, shared by every log); a progress
    bar counts the logs when ``bars``. ``option`` is the command's option of the
    hyperparameters (``--hparams``, or advise's ``--sweep-hparams``), named in the errors. A
    log given twice (the same file by its resolved path) is refused: its runs would enter the
    fit twice, as if independent, and halve its errors. ``min_points`` is
    :func:`load_log_runs`'s.
    """
    from grpodyn.empirical.logs.sweep import parse_hparams
    from grpodyn.progress import progress_bar

    # one log's runs twice would count as twice the evidence
    refuse_repeats([path for path, _ in pairs], "each run enters a sweep once")
    runs, notes, recorded = [], [], {}
    for path, text in progress_bar(pairs, total=len(pairs), description="loading runs",
                                   enabled=bars):
        overrides = parse_hparams(text or "", name=option)
        loaded, left_out, own = load_log_runs(path, overrides, reward_key=reward_key,
                                              step_key=step_key, logging_steps=logging_steps,
                                              reward_range=reward_range, option=option,
                                              min_points=min_points)
        runs += loaded
        notes += left_out
        for key, values in own.items():
            recorded.setdefault(key, set()).update(values)
    texts = {text or "" for _, text in pairs}
    if len(pairs) > 1 and len(texts) == 1 and texts != {""}:  # the same text for every log
        notes += _replaced_values(recorded, parse_hparams(texts.pop(), name=option), option,
                                  whose=f"the {len(pairs)} logs given the same {option}",
                                  hint="leave {key} out to read each log's own, or give each "
                                       f"log its own {option}")
    return runs, notes


def _own_values(runs: list, overrides: dict[str, Any]) -> dict[str, set]:
    """Return, for each hyperparameter ``overrides`` sets, the values the ``runs`` record."""
    from grpodyn.empirical.logs.sweep_runs import META_NAMES

    return {key: {run.meta.value(field) for run in runs} - {None}
            for key, field in META_NAMES.items() if key in overrides}


def _replaced_values(own: dict[str, set], overrides: dict[str, Any], option: str, *,
                     whose: str, hint: str) -> list[str]:
    """Say where an ``option`` value replaces the different values that runs record.

    A sweep's CSV names each run's lr, and the logs of a sweep each record theirs; one
    ``--hparams lr=`` for a whole log, or the same for every log, sets every run to it (the
    option ranks above the log), and the sweep loses its lrs and its falls: a note for each
    such hyperparameter. ``own`` holds the values recorded (key -> set), ``whose`` says by
    what ("the 2 runs of LOG"), ``hint`` how to keep them (``{key}`` stands for the key).
    """
    notes = []
    for key, values in own.items():
        if len(values) > 1:
            shown = ", ".join(f"{v:g}" if isinstance(v, (int, float)) else str(v)
                              for v in sorted(values, key=lambda v: (str(type(v)), v)))
            notes.append(f"{key}={overrides[key]} ({option}) replaces the {key} that {whose} "
                         f"record ({shown}): every run is read at {overrides[key]}; "
                         + hint.format(key=key))
    return notes


def _own_metadata(run: Any, hparams: dict[str, Any], sources: dict[str, str], name: str,
                  option: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Return the largest run's hyperparameters with ``run``'s own metadata in place of its.

    A hyperparameter still missing is refused, naming ``option``, the option that gives it.
    """
    from grpodyn.empirical.logs.sweep_runs import META_NAMES, check_complete, checked_run

    hparams, sources = dict(hparams), dict(sources)
    for key, meta_name in META_NAMES.items():
        if sources.get(key, "").startswith("log metadata"):
            del hparams[key], sources[key]  # the largest run's, not this one's
        value = run.meta.value(meta_name)
        if value is not None and sources.get(key) not in (option, *_ABOVE_METADATA):
            hparams[key] = value
            sources[key] = f"log metadata ({getattr(run.meta, meta_name).source})"
    hparams = checked_run(hparams, name)
    check_complete(hparams, name, option)
    return hparams, sources


#: The fewest reward points a run needs to be read for a fall (the thirds' test).
FALL_POINTS = 3


def split_short(runs: list) -> tuple[list, list, list[str]]:
    """Split runs into those the joint fit takes and those too short for it, read for a fall.

    A run under ``sweep_runs.FEWEST_POINTS`` reward points still says whether it fell
    (``sweep_advice.fall_limit``), which bounds the stability limit, from :data:`FALL_POINTS`
    on; a shorter one is left out. Returns the runs to fit, the short runs and a note on each
    run left out of the fit.

    Raises
    ------
    InputError
        No run has the points the joint fit needs.
    """
    from grpodyn.empirical.logs.sweep_runs import FEWEST_POINTS
    from grpodyn.ground import InputError

    fit = [r for r in runs if r.reward.size >= FEWEST_POINTS]
    if not fit:
        raise InputError(f"no run has the {FEWEST_POINTS} reward points the joint fit needs: "
                         + ", ".join(f"{r.name} {r.reward.size}" for r in runs))
    short = [r for r in runs if FALL_POINTS <= r.reward.size < FEWEST_POINTS]
    notes = [f"{r.name}: {r.reward.size} reward points, fewer than the {FEWEST_POINTS} the "
             "joint fit needs: left out of the fit, read for a fall" for r in short]
    notes += [f"{r.name}: {r.reward.size} reward point{'s' * (r.reward.size != 1)}, fewer than "
              f"the {FALL_POINTS} a fall needs: left out" for r in runs
              if r.reward.size < FALL_POINTS]
    return fit, short, notes
