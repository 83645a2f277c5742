"""Load a GRPO training log of any trainer into a :class:`Run`: :func:`load_run`.

Formats (docs/guide.md shows what is read or inferred from a log; ``grpodyn runs LOG`` says it
for one):
TRL ``trainer_state.json`` (eval entries merged as the held-out reward), TRL console logs (dict
lines; the real step from the progress counter or ``logging_steps``), JSON arrays of step dicts,
JSON lines (flat, typed eval/rollout/train records, verl's file logger, W&B
``wandb-history.jsonl``), verl console (``step:N - key:value - ...``), OpenRLHF console
(progress-bar postfix), other hand-written consoles, CSV/TSV (wide, W&B export, long format),
TensorBoard event files; and directories: a TRL checkpoint, a run with several checkpoints (the
latest), a W&B run, a TensorBoard tree. Metric names map onto the canonical quantities through
the per-trainer tables of ``logs_aliases``; hyperparameters come with their source
(``logs_meta.RunMeta``) from the log, the files beside it (``logs_config``) and, where rewards
are binary, the granularity of the logged values (``logs_infer``).

Nothing here evaluates text or unpickles with the standard unpickler: dict literals are read by
walking their syntax tree, ``training_args.bin`` by a restricted reader that builds only plain
containers. Malformed input raises :class:`LogFormatError` naming the file and the problem.

A run resumed from a checkpoint logs its steps from the checkpoint on again: the abandoned
records from there on are dropped (``common.drop_abandoned``), as TensorBoard's reader
purges them; records repeated at one step keep the first, with a note.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from grpodyn.empirical.logs import formats
from grpodyn.empirical.logs.aliases import (
    CANONICAL,
    METRIC_ALIASES,
    combine_heldout_sources,
    per_function_rewards,
    resolve,
)
from grpodyn.empirical.logs.common import (
    STRAY_INTERVALS,
    LogFormatError,
    Parsed,
    Rows,
    check_series,
    counted,
    drop_abandoned,
    merged_steps,
    missing_step_key,
    number,
    stray_steps,
    unread,
)
from grpodyn.empirical.logs.formats import Source
from grpodyn.empirical.logs.infer import Functions, logged_meta
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta

__all__ = ["Run", "LogFormatError", "load_run", "load_runs", "list_runs", "Hyperparameter",
           "RunMeta", "METRIC_ALIASES"]


@dataclass(eq=False)
class Run:
    """One training run: steps, reward and the other metrics found, aligned on the steps.

    Compared by identity (``a == b`` is ``a is b``), as it holds arrays. A run built by hand
    has its series checked (:func:`~grpodyn.empirical.logs.common.check_series`: one length,
    numbers, steps strictly increasing), a ``LogFormatError`` naming the fault otherwise, and
    held as float arrays.

    Attributes
    ----------
    source : str
        Path of the log.
    format : str
        Detected format.
    steps : numpy.ndarray
        Optimizer steps of the logged points (increasing).
    reward : numpy.ndarray
        The reward fitted by default (``reward_key`` says which metric it is).
    metrics : dict of str to numpy.ndarray
        Canonical metrics (``logs_aliases.CANONICAL``) aligned on ``steps``, NaN where not
        logged; ``heldout_reward`` is NaN where the run was not evaluated (an evaluation
        logged between two points is placed at the later point's step, with a warning).
    reward_key : str
        The metric read as the reward (a ``+``-joined list when per-function rewards are summed).
    run_name : str or None
        Which run of a file that holds several.
    meta : RunMeta
        Hyperparameters found in the log or the files beside it, each with its source.
    steps_reconstructed : bool
        True when the log has no step and the steps are the order of the logged points.
    warnings : list of str
        Repairs, choices and assumptions made while loading.
    metric_keys : dict of str to str
        Canonical name -> the log's own metric name it was read from.
    """

    source: str
    format: str
    steps: np.ndarray
    reward: np.ndarray
    metrics: dict[str, np.ndarray]
    reward_key: str = "reward"
    run_name: str | None = None
    meta: RunMeta = field(default_factory=RunMeta)
    steps_reconstructed: bool = False
    warnings: list[str] = field(default_factory=list)
    metric_keys: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.steps, self.reward, self.metrics = check_series(self.source, self.steps,
                                                             self.reward, self.metrics)

    @property
    def n_points(self) -> int:
        """Number of logged points."""
        return int(self.steps.size)

    def __repr__(self) -> str:
        span = f", steps {self.steps[0]:g}-{self.steps[-1]:g}" if self.n_points else ""
        which = "" if self.run_name is None else f", run={self.run_name!r}"
        return (f"Run({Path(self.source).name!r}, {self.format}, "
                f"{counted(self.n_points, 'point')}{span}{which}, reward={self.reward_key!r}, "
                f"metrics={len(self.metrics)}, "
                f"{counted(len(self.meta.to_items()), 'hyperparameter')}, "
                f"{counted(len(self.warnings), 'warning')})")

    def to_dict(self) -> dict[str, Any]:
        """Return the run as plain JSON values.

        The series as lists (None where a metric was not logged), the hyperparameters with
        their sources (``RunMeta.to_dict``), the warnings.
        """
        def listed(values: np.ndarray) -> list[float | None]:
            return [float(v) if np.isfinite(v) else None for v in np.asarray(values, float)]

        return {"source": self.source, "format": self.format, "run": self.run_name,
                "reward_key": self.reward_key, "steps": listed(self.steps),
                "reward": listed(self.reward),
                "metrics": {name: listed(values) for name, values in self.metrics.items()},
                "metric_keys": dict(self.metric_keys), "meta": self.meta.to_dict(),
                "steps_reconstructed": self.steps_reconstructed,
                "warnings": list(self.warnings)}

    def to_pandas(self) -> Any:
        """Return the run as a pandas DataFrame indexed by step (pandas: an optional dependency).

        The hyperparameters, each with its source and evidence, ride in
        ``frame.attrs["grpodyn_meta"]``, which :meth:`from_pandas` reads back.

        Raises
        ------
        ImportError
            Without pandas, naming the extra that installs it.
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Run.to_pandas needs pandas: pip install pandas (or the extra "
                              "'grpodyn[trl]', which includes it)") from None

        frame = pd.DataFrame({"reward": self.reward, **self.metrics},
                             index=pd.Index(self.steps, name="step"))
        frame.attrs["grpodyn_meta"] = self.meta.to_dict()  # read back by from_pandas
        return frame

    @classmethod
    def from_pandas(cls, frame: Any, *, source: str = "<DataFrame>") -> Run:
        """Return a run from a DataFrame with a ``step`` column (or index) and metric columns.

        Hyperparameters in ``frame.attrs["grpodyn_meta"]`` (as :meth:`to_pandas` writes them)
        are the run's; others it states in its metric columns are read as from any log.
        """
        if not hasattr(frame, "columns") or not hasattr(frame, "reset_index"):
            raise LogFormatError(f"{source}: expected a pandas DataFrame, got "
                                 f"{type(frame).__name__} (pandas.DataFrame(data) makes one)")
        table = frame.reset_index() if "step" not in frame.columns else frame
        if "step" not in table.columns:
            raise LogFormatError(f"{source}: no 'step' column or index")
        metric_columns = [c for c in table.columns if c != "step"]
        rows = [(number(row["step"]), {c: row[c] for c in metric_columns})
                for _, row in table.iterrows()]
        run = _assemble(source, Parsed("pandas", {"": rows}), rows)[0]
        stated = getattr(frame, "attrs", {}).get("grpodyn_meta") or {}
        if stated:
            try:
                kept = RunMeta(**{name: Hyperparameter(**entry) for name, entry in
                                  stated.items()})
            except (TypeError, ValueError) as exc:
                raise LogFormatError(f"{source}: attrs['grpodyn_meta'] is not what "
                                     f"Run.to_pandas writes ({exc})") from None
            run.meta = kept.merged(run.meta)
        return run


# ---------------------------------------------------------------------------- assembly


def _choose_reward(source: str, available: set[str], ecosystem: str, reward_key: str | None
                   ) -> tuple[list[str], list[str]]:
    """Return the reward's metric names (several are summed) and notes on the choice."""
    if reward_key is not None:
        if reward_key not in available:
            alias = resolve(reward_key, available, ecosystem)  # a name `grpodyn runs` shows
            if alias is not None:
                raise LogFormatError(f"{source}: no metric {reward_key!r} (reward_key=, "
                                     f"--reward-key): it is grpodyn's name for {alias!r} in "
                                     f"this log; give reward_key={alias!r} (--reward-key "
                                     f"{alias})")
            raise LogFormatError(f"{source}: no metric {reward_key!r} (reward_key=, "
                                 f"--reward-key); metrics present ({len(available)}): "
                                 f"{', '.join(sorted(available))}")
        return [reward_key], []
    key = resolve("reward", available, ecosystem)
    if key is not None:
        return [key], []
    functions = per_function_rewards(available)
    if len(functions) == 1:
        return functions, [f"no total reward: reading the one reward function {functions[0]!r}"]
    if functions:
        return functions, [
            f"no total reward: the reward is the sum of the {len(functions)} reward functions "
            f"({', '.join(functions)}), TRL's total when reward_weights are all 1 (weights "
            "not known here); choose one with reward_key= (--reward-key)"]
    held = resolve("heldout_reward", available, ecosystem)
    if held is not None:
        return [held], [f"no training reward: fitting the held-out {held!r} instead"]
    raise LogFormatError(f"{source}: no reward metric found (looked for the reward names of "
                         "TRL, verl, OpenRLHF, W&B and custom loops; name it with --reward-key, "
                         "in Python reward_key=); "
                         f"metrics present ({len(available)}): {', '.join(sorted(available))}")


def _check_heldout_key(source: str, heldout_key: str | None, available: set[str],
                       reward: list[str]) -> str | None:
    """Refuse a ``heldout_key`` that is the reward itself; say so where the run lacks it.

    Returns
    -------
    str or None
        The note of a run without the metric (it then has no held-out reward; a log none of
        whose runs has it is refused by :func:`load_runs`), else None.

    Raises
    ------
    LogFormatError
        Where the key names the metric read as the reward.
    """
    if heldout_key is None:
        return None
    if heldout_key in reward:
        raise LogFormatError(f"{source}: heldout_key {heldout_key!r} (--heldout-key) is the "
                             "metric read as the reward; name the training reward with "
                             "reward_key= (--reward-key), or another metric as the held-out one")
    if heldout_key not in available:
        return (f"{_no_heldout(heldout_key)}{_IN_THIS_RUN}; metrics present ({len(available)}): "
                f"{', '.join(sorted(available))}")
    return None


#: What a run without the named held-out metric adds to :func:`_no_heldout` in its note.
_IN_THIS_RUN = " in this run: no held-out reward"


def _no_heldout(heldout_key: str) -> str:
    """Say that the metric ``heldout_key`` names is not in the log (a note's or error's head)."""
    return f"no metric {heldout_key!r} (heldout_key=, --heldout-key)"


def _eval_twins(keys: list[str], available: set[str]) -> list[str]:
    """Return the evaluation names of reward functions, when every one is logged.

    TRL logs them as ``eval_<key>``, W&B as ``eval/<key>``.
    """
    twins = []
    for key in keys:
        bare = key[len("train/"):] if key.startswith("train/") else key
        twin = next((t for t in (f"eval_{bare}", f"eval/{bare}") if t in available), None)
        if twin is None:
            return []
        twins.append(twin)
    return twins


#: How far beyond the others a lone highest or lowest reward must lie, in spans of the others,
#: to be named: farther than any sampling noise of a mean reward carries one point.
LONE_EXTREME_SPANS = 10.0


def lone_extremes(steps: np.ndarray, reward: np.ndarray) -> list[str]:
    """Return a note for a highest or lowest reward that stands alone far beyond the others.

    One such point (a logging error, a reward summed over a batch once) moves every fit's level
    and the diagnosis's windows; it is named, not dropped, where its gap to the next value
    exceeds :data:`LONE_EXTREME_SPANS` times the span of the rest.

    Parameters
    ----------
    steps, reward : numpy.ndarray
        The run's finite steps and rewards.

    Returns
    -------
    list of str
        At most two notes (the highest and the lowest), none under 10 points.
    """
    if reward.size < 10:
        return []
    order = np.argsort(reward, kind="stable")
    notes = []
    for end, nxt, far in ((order[-1], order[-2], order[0]), (order[0], order[1], order[-1])):
        with np.errstate(over="ignore", invalid="ignore"):  # rewards near the float limit
            span, gap = abs(reward[nxt] - reward[far]), abs(reward[end] - reward[nxt])
            beyond = span > 0 and gap > LONE_EXTREME_SPANS * span
        if beyond:
            rest = np.delete(reward, end)
            far_words = (f"{gap / span:.3g} spans" if np.isfinite(gap) and np.isfinite(span)
                         else "beyond any multiple of the span")
            notes.append(f"the reward at step {steps[end]:g}, {reward[end]:.4g}, lies "
                         f"{far_words} of the other rewards ([{rest.min():.4g}, "
                         f"{rest.max():.4g}]) beyond them: a logging error? it weighs on every "
                         "fit and on the diagnosis; check the log")
    return notes


def _heldout_on_steps(steps: np.ndarray, at: dict[float, float]
                      ) -> tuple[np.ndarray, list[str]]:
    """Return held-out values on the training points' steps, and notes on those moved.

    A value logged at a training point's step is that point's. One logged at a step with no
    training point (evaluations every 25 steps, training logged every 10) goes to the next
    training point, unless that point holds a value of its own; of several bound for one point,
    the nearest to it is placed. An evaluation before training (verl's ``val_before_train``,
    TRL's ``eval_on_start``: step 0) goes to the first training point when it lies within one
    logging interval before it: that point's rewards come from the first policies the run
    trained (at one logged step per update, from the very policy the evaluation scored). The
    others, and those further before the first training point or after the last, are said.

    Parameters
    ----------
    steps : numpy.ndarray
        The training points' steps (increasing, at least one).
    at : dict of float to float
        The held-out values by the step they were logged at.

    Returns
    -------
    values : numpy.ndarray
        One per training point, NaN where none was placed.
    notes : list of str
        What was moved and what found no place.
    """
    values = np.full(steps.size, np.nan)
    index = {float(s): i for i, s in enumerate(steps)}
    interval = float(steps[1] - steps[0]) if steps.size > 1 else 0.0
    off, outside = [], []
    for step, value in sorted(at.items()):
        if not math.isfinite(value):
            continue
        if step in index:
            values[index[step]] = value
        elif steps[0] < step < steps[-1] or steps[0] - interval <= step < steps[0]:
            off.append((step, value))
        else:
            outside.append(step)
    placed: dict[int, tuple[float, float]] = {}
    lost = []
    for step, value in off:
        i = int(np.searchsorted(steps, step))
        if np.isfinite(values[i]):
            lost.append(step)
            continue
        if i in placed:  # the later value is the nearer to the point
            lost.append(placed[i][0])
        placed[i] = (step, value)
    notes = []
    if 0 in placed and placed[0][0] < steps[0]:
        notes.append(f"the held-out value at step {placed[0][0]:g}, before the first training "
                     f"point (step {steps[0]:g}) and within one logging interval of it, placed "
                     "there (an evaluation before training scores the policy that the first "
                     "rewards come from)")
    between = {i: sv for i, sv in placed.items() if sv[0] > steps[0]}
    if between:
        moves = [f"{s:g}->{steps[i]:g}" for i, (s, _) in sorted(between.items())]
        notes.append(f"{counted(len(between), 'held-out value')} logged at steps without a "
                     "training point placed at the step of the training point after them: "
                     f"{', '.join(moves[:6])}{', ...' if len(moves) > 6 else ''}")
    if placed:
        values[list(placed)] = [v for _, v in placed.values()]
    for which, why in ((lost, "the training point after it holds a held-out value of its own "
                              "or a nearer one"),
                       (outside, f"outside the training points' steps, {steps[0]:g} to "
                                 f"{steps[-1]:g}")):
        if which:
            notes.append(f"{counted(len(which), 'held-out value')} not placed (logged at step"
                         f"{'' if len(which) == 1 else 's'} "
                         f"{', '.join(f'{s:g}' for s in which[:6])}"
                         f"{', ...' if len(which) > 6 else ''}): {why}")
    return values, notes


def _blank(value: Any) -> bool:
    """Return whether a logged value is an empty cell (an empty or all-space string)."""
    return isinstance(value, str) and not value.strip()


def _assemble(source: str, parsed: Parsed, rows: Rows, *, run_name: str | None = None,
              reward_key: str | None = None, heldout_key: str | None = None
              ) -> tuple[Run, Functions]:
    """Build a Run from (step, {metric: value}) rows; repairs are recorded as warnings.

    ``heldout_key`` names the held-out reward where the trainer's names do not
    (:func:`_check_heldout_key`).

    The held-out metrics of several validation sets are averaged into one held-out reward here,
    for every format, with a note (``aliases.combine_heldout_sources``). Also returned: TRL's
    per-function reward means beside a total reward, with their stds where logged, on the run's
    steps: a 0/1 function's granularity gives B G where a weighted total gives none
    (``infer.infer_meta``).
    """
    warnings: list[str] = list(parsed.notes)
    finite_steps = [(s, r) for s, r in rows if math.isfinite(s)]
    if not rows:
        raise LogFormatError(f"{source}: no records: the log holds no logged step")
    if not finite_steps:
        raise LogFormatError(f"{source}: no logged step with a finite step number")
    if len(finite_steps) < len(rows):
        warnings.append(f"{len(rows) - len(finite_steps)} entries without a finite step "
                        "number dropped")
    # several validation sets (verl's val-core/<data_source>/...): their mean, whatever the
    # format, unless the held-out metric is named
    rows, notes = (finite_steps, []) if heldout_key is not None else combine_heldout_sources(
        finite_steps, parsed.ecosystem)
    warnings += notes
    available = {k for _, r in rows for k, v in r.items() if not _blank(v)}
    keys, notes = _choose_reward(source, available, parsed.ecosystem, reward_key)
    warnings += notes
    lacking = _check_heldout_key(source, heldout_key, available, keys)
    if lacking is not None:
        warnings.append(lacking)
        heldout_key = None
    # a resume is marked by the reward's records (held-out ones may be written late)
    rows, notes = drop_abandoned(rows, lambda r: all(k in r and not _blank(r[k]) for k in keys))
    warnings += notes
    all_rows = rows
    rows = [(s, r) for s, r in rows if all(k in r for k in keys)]
    # an empty reward cell (a table's row with no value there) is a point with a missing
    # reward: counted as dropped, but taking no part in the choice between duplicate steps
    n_blank = sum(any(_blank(r[k]) for k in keys) for _, r in rows)
    rows = [(s, r) for s, r in rows if not any(_blank(r[k]) for k in keys)]
    steps = np.array([s for s, _ in rows], dtype=float)
    stray = stray_steps(steps)
    if stray.any():
        shown = ", ".join(f"{s:g}" for s in steps[stray][:3])
        warnings.append(f"{int(stray.sum())} record(s) with a corrupt step number dropped "
                        f"({shown}{', ...' if stray.sum() > 3 else ''}): negative, or out of the "
                        f"file's order and more than {STRAY_INTERVALS} logging intervals beyond "
                        "all the other steps")
        steps, rows = steps[~stray], [r for r, bad in zip(rows, stray, strict=True) if not bad]
        if steps.size == 0:
            raise LogFormatError(f"{source}: every logged step is negative or corrupt; a step "
                                 "counts optimizer steps from 0")
    order = np.argsort(steps, kind="stable")
    if np.any(steps[1:] < steps[:-1]):
        warnings.append("steps were not increasing: sorted by step")
    steps, rows = steps[order], [rows[i] for i in order]
    keep = np.ones(steps.size, dtype=bool)
    keep[1:] = steps[1:] != steps[:-1]
    if not keep.all():
        warnings.append(merged_steps(steps.size, int(keep.sum()),
                                     "duplicate steps: the first record of each kept, the others "
                                     "dropped"))
    steps, rows = steps[keep], [r for r, k in zip(rows, keep, strict=True) if k]

    def column(key: str) -> np.ndarray:
        return np.array([number(r.get(key)) for _, r in rows], dtype=float)

    reward = np.sum([column(k) for k in keys], axis=0) if rows else np.zeros(0)
    finite = np.isfinite(reward)
    seen = [r[k] for _, r in rows for k in keys if r.get(k) is not None] if not finite.any() \
        else []
    if n_blank or not finite.all():
        warnings.append(f"{n_blank + int((~finite).sum())} point(s) with a missing or "
                        "non-finite reward dropped")
        steps, reward, rows = steps[finite], reward[finite], [r for r, f in
                                                               zip(rows, finite, strict=True) if f]
    label = "+".join(keys)
    if steps.size == 0:
        raise LogFormatError(f"{source}: no finite value of {label!r}{unread(seen)}")
    warnings += lone_extremes(steps, reward)
    metrics, metric_keys = {}, {"reward": label}
    for name in CANONICAL[1:]:
        found = (heldout_key if name == "heldout_reward" and heldout_key is not None
                 else resolve(name, available - set(keys), parsed.ecosystem))
        held = [found] if found else []
        if name == "heldout_reward" and not held and len(keys) > 1:
            held = _eval_twins(keys, available)  # summed reward functions: their eval twins
        if not held:
            continue
        key = "+".join(held)
        if name == "heldout_reward":  # evaluated at its own steps: align, NaN elsewhere
            at: dict[float, float] = {}
            for s, r in all_rows:
                if all(k in r and not _blank(r[k]) for k in held) and not math.isfinite(
                        at.get(s, math.nan)):  # the first finite value of a step
                    at[s] = sum(number(r[k]) for k in held)
            values, notes = _heldout_on_steps(steps, at)
            warnings += notes
        else:
            values = column(key)
        values[~np.isfinite(values)] = np.nan
        if np.isfinite(values).any():
            metrics[name], metric_keys[name] = values, key
        elif name != "heldout_reward":  # a held-out key without a value has its own note
            named = key if key == name else f"{key} ({name})"
            warnings.append(f"{named} is logged but never as a finite number: left out")
    functions: Functions = {}
    for name in per_function_rewards(available - set(keys)):
        twin = name[:-len("mean")] + "std" if name.endswith("/mean") else None
        functions[name] = (column(name), column(twin) if twin in available else None)
    meta = replace(parsed.meta).merged(logged_meta(rows))
    return Run(source=source, format=parsed.format, steps=steps, reward=reward,
               metrics=metrics, reward_key=label, run_name=run_name or None,
               meta=meta, steps_reconstructed=parsed.steps_reconstructed,
               warnings=warnings, metric_keys=metric_keys), functions


# ---------------------------------------------------------------------------- dispatch


def _parse(path: Path, opts: dict[str, Any]) -> Source:
    """Parse ``path`` with the first format of the registry that sniffs it (``formats``)."""
    return formats.dispatch(path, formats.Options(opts["step_key"], opts["logging_steps"],
                                                  formats.FORMATS, opts["reward_key"]))


def _with_meta(run: Run, source: Source, functions: Functions) -> Run:
    """Return the run's hyperparameters by source.

    Config files (the log's own config record, the files beside it) before values logged as metrics,
    before what parsers inferred, before what ``infer_meta`` deduces from the metrics.
    """
    from grpodyn.empirical.logs.config import meta_beside, meta_from_config
    from grpodyn.empirical.logs.infer import infer_meta

    files = RunMeta()
    config = source.parsed.run_configs.get(run.run_name or "", source.parsed.config)
    if config:
        files = meta_from_config(config, f"file:{Path(source.label).name}",
                                 "the log's own config record", notes=run.warnings)
    for folder in dict.fromkeys(source.beside):
        found, notes = meta_beside(folder)
        files = files.merged(found)
        run.warnings += notes
    logged = {name: h for name, h in run.meta.to_items() if h.source == "logged"}
    meta = files.merged(RunMeta(**logged)).merged(run.meta)
    run.meta, notes = infer_meta(run, meta, functions=functions)
    run.warnings += notes
    return run


def load_runs(path: str | Path, *, reward_key: str | None = None, step_key: str | None = None,
              logging_steps: int | None = None, heldout_key: str | None = None) -> list[Run]:
    """Every run of a log (one for most formats), each with its hyperparameters.

    Parameters are those of :func:`load_run`. A run without a usable reward raises for a file
    of one run; in a file of several such runs are left out with a note on the others.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise LogFormatError(f"path must be a log's path (str or pathlib.Path), got "
                             f"{type(path).__name__} {path!r:.60}")
    if logging_steps is not None:
        if (isinstance(logging_steps, (bool, np.bool_))
                or not isinstance(logging_steps, numbers.Integral) or logging_steps < 1):
            raise LogFormatError(f"{path}: logging_steps must be a positive integer, got "
                                 f"{logging_steps!r}")
        logging_steps = int(logging_steps)
    path = Path(path)
    source = _parse(path, {"step_key": step_key, "logging_steps": logging_steps,
                           "reward_key": reward_key})
    if step_key is not None and not any(
            step_key in r for rows in source.parsed.runs.values() for _, r in rows):
        raise missing_step_key(source.label, step_key,
                               [r for rows in source.parsed.runs.values() for _, r in rows])
    runs, failures = [], []
    for name, rows in source.parsed.runs.items():
        try:
            run, functions = _assemble(source.label, source.parsed, rows, run_name=name,
                                       reward_key=reward_key, heldout_key=heldout_key)
        except LogFormatError as exc:
            if len(source.parsed.runs) == 1:
                raise
            failures.append(f"{name}: {str(exc).split(': ', 1)[-1]}")
            continue
        runs.append(_with_meta(run, source, functions))
    if not runs:
        raise LogFormatError(f"{source.label}: no run with a usable reward ({'; '.join(failures)})")
    if heldout_key is not None and not any(
            r.metric_keys.get("heldout_reward") == heldout_key for r in runs):
        note = next((w for w in runs[0].warnings if w.startswith(_no_heldout(heldout_key))),
                    f"no finite value of {heldout_key!r} (heldout_key=, --heldout-key)")
        raise LogFormatError(f"{source.label}: {note.replace(_IN_THIS_RUN, '')}")
    unused = [] if logging_steps is None or source.parsed.steps_reconstructed else [
        f"logging_steps {logging_steps} not used: this {source.parsed.format} log gives the step "
        "of every point (logging_steps spaces the points of a console log that prints no step "
        "and no progress counter)"]
    for run in runs:
        run.warnings += [f"run {f} left out" for f in failures] + unused
    return runs


def list_runs(path: str | Path) -> list[str]:
    """Names of the runs in a log; one empty name for a format that holds one run."""
    return [run.run_name or "" for run in load_runs(path)]


def load_run(path: str | Path, *, run: str | None = None, reward_key: str | None = None,
             step_key: str | None = None, logging_steps: int | None = None,
             heldout_key: str | None = None) -> Run:
    """Load a training log (a file or a directory), detecting its format.

    Parameters
    ----------
    path
        The log file, or a checkpoint, run, W&B run or TensorBoard directory.
    run
        Which run of a log that holds several (``list_runs``); default: the run with the most
        reward points, named in the warnings. An error for a log of one run.
    reward_key
        The metric to read as the reward (default: the trainer's reward, see
        ``logs_aliases``).
    step_key
        The field that holds the optimizer step (default: the first of the usual names).
    logging_steps
        Optimizer steps between two logged points, for console logs that print no step and no
        progress counter.
    heldout_key
        The metric to read as the held-out (validation or verifier) reward, which the diagnosis
        compares the reward with (default: the trainer's eval reward, see ``logs_aliases``).

    Raises
    ------
    LogFormatError
        When the file cannot be read, has no usable reward series, or ``run`` names no run.
    """
    runs = load_runs(path, reward_key=reward_key, step_key=step_key, logging_steps=logging_steps,
                     heldout_key=heldout_key)
    names = [r.run_name or "" for r in runs]
    if run is not None:
        if names == [""]:
            raise LogFormatError(f"{path}: run={run!r} (--run) given, but this "
                                 f"{runs[0].format} log holds one run (no run names)")
        if run not in names:
            raise LogFormatError(f"{path}: no run named {run!r}; runs: {', '.join(names)}")
        return runs[names.index(run)]
    if len(runs) == 1:
        return runs[0]
    chosen = max(runs, key=lambda r: r.n_points)
    tied = sum(r.n_points == chosen.n_points for r in runs)
    which = (f"the first of the {tied} with the most reward points ({chosen.n_points})"
             if tied > 1 else "the one with the most reward points")
    chosen.warnings.insert(0, f"{len(runs)} runs in this log ({', '.join(names)}): read "
                           f"{chosen.run_name!r}, {which}; choose "
                           "another with run= (--run)")
    return chosen
