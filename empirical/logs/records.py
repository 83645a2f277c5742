"""Logs made of records (dicts): TRL ``trainer_state.json``, JSON arrays and JSON lines.

The step field is the first of ``STEP_NAMES`` present (the trainer's ``train/global_step``, or
``eval/global_step`` in the evaluation records OpenRLHF writes to W&B, before W&B's own
``_step`` counter), or the one given (``--step-key``).

- TRL ``trainer_state.json``: ``log_history`` entries; evaluation entries (``eval_*`` keys) and
  the final summary share a step with a training entry and are merged into it, so
  ``eval_reward`` becomes the held-out reward at that step.
- A JSON array of step dicts (what custom loops write), or ``{"history": [...]}``.
- JSON lines: flat records; verl's file logger (``{"step": N, "data": {...}}``); W&B
  ``wandb-history.jsonl`` (``_step``); typed records (``"type": "eval" | "rollout" | "train"
  | "config"``, e.g. CS336-style ``metrics.jsonl``): evaluation records become ``eval/<key>``,
  records of one step are merged (numbers averaged over the records, with a note), and a config
  record's settings are kept for the hyperparameters. Records tagged with the run they belong
  to (a ``run``, ``run_name``, ``run_id``, ... field: ``common.RUN_TAGS``, as a long-format
  table's run column) are that run's, named by the tag, even where runs interleave; runs
  appended to one file without a tag (the step restarts at the file's first step) become runs
  ``run1``, ``run2``, ... A resumed run's abandoned records are dropped
  (``common.drop_abandoned``); a last line cut short (a run still writing, a job killed) is left
  unread with a note.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.common import (
    RUN_TAGS,
    LogFormatError,
    Parsed,
    Rows,
    drop_abandoned,
    merged_steps,
    missing_step_key,
    number,
)

__all__ = ["STEP_NAMES", "parse_trainer_state", "parse_json", "parse_jsonl", "step_of",
           "merge_by_step", "split_restarts", "restart_notes"]

#: Field names that hold the optimizer step, in order of preference.
STEP_NAMES = ("step", "global_step", "train/global_step", "eval/global_step",
              "trainer/global_step", "training/global_step", "Step", "_step", "grpo_step",
              "iteration", "iter")
_EVAL_TYPES = {"eval", "evaluation", "val", "validation", "test", "heldout"}
_CONFIG_TYPES = {"config", "args", "hparams", "hyperparameters", "settings"}


def step_of(entry: dict[str, Any], step_key: str | None) -> tuple[str | None, float]:
    """Return the step field of a record and its value (NaN when absent or not a number)."""
    if step_key is not None:
        return (step_key, number(entry[step_key])) if step_key in entry else (None, math.nan)
    key = next((n for n in STEP_NAMES if n in entry), None)
    return key, (number(entry[key]) if key is not None else math.nan)


def merge_by_step(rows: Rows, *, average: bool) -> tuple[Rows, int]:
    """Rows with one entry per step: keys of later records at a step are added.

    With ``average`` a number logged by several records of a step is their mean, else the first
    value is kept. Returns the rows (in first-seen order) and how many records were merged.
    """
    merged: dict[float, dict[str, Any]] = {}
    counts: dict[float, dict[str, int]] = {}
    order: list[float] = []
    n_merged = 0
    for step, entry in rows:
        if not math.isfinite(step):
            continue  # kept apart and appended below: assembly drops them with a note
        if step not in merged:
            merged[step], counts[step] = dict(entry), dict.fromkeys(entry, 1)
            order.append(step)
            continue
        n_merged += 1
        target, count = merged[step], counts[step]
        for key, value in entry.items():
            if key not in target:
                target[key], count[key] = value, 1
            elif average and math.isfinite(number(value)) and math.isfinite(number(target[key])):
                count[key] += 1
                target[key] = number(target[key]) + (number(value) - number(target[key])) \
                    / count[key]
    out = [(step, merged[step]) for step in order]
    out += [(s, e) for s, e in rows if not math.isfinite(s)]
    return out, n_merged


def parse_trainer_state(path: Path, data: dict[str, Any], step_key: str | None) -> Parsed:
    """Return a TRL ``trainer_state.json`` (already decoded)."""
    history = data.get("log_history")
    if not isinstance(history, list):
        raise LogFormatError(f"{path}: 'log_history' is missing or not a list")
    rows: Rows = []
    for index, entry in enumerate(history):
        if not isinstance(entry, dict):
            raise LogFormatError(f"{path}: log_history[{index}] is not an object")
        key, step = step_of(entry, step_key)
        if key is None:
            continue
        rows.append((step, entry))
    if step_key is not None and not rows:
        raise missing_step_key(str(path), step_key, [e for e in history if isinstance(e, dict)])
    rows, resumed = drop_abandoned(rows, counts=_training_entry)
    merged, n_merged = merge_by_step(rows, average=False)
    parsed = Parsed("trl_trainer_state", {"": merged}, ecosystem="trl", notes=resumed)
    # evaluation entries and the final summary share a training entry's step by design; training
    # entries that share one (a resumed run logged twice, a hand-made file) are said
    training = [s for s, e in rows if math.isfinite(s) and _training_entry(e)]
    if len(training) > len(set(training)):
        parsed.notes.append(merged_steps(len(training), len(set(training)),
                                         "the first value of each metric kept"))
    # runs that grpodyn made (the tiny grid, the test beds) record their hyperparameters
    # (config.meta_from_config reads them by their exact names)
    if isinstance(data.get("grpodyn_hparams"), dict):
        parsed.config = {"grpodyn_hparams": data["grpodyn_hparams"]}
    # the Trainer records the steps it was set to take beside the history
    if isinstance(data.get("max_steps"), int) and data["max_steps"] > 0:
        parsed.config = {**(parsed.config or {}), "max_steps": data["max_steps"]}
    # evaluation entries at a step with no training entry stay entries of their own (assembly
    # places them): only those at a training entry's step are merged into it
    at_training = set(training)
    n_eval = sum(any(k.startswith("eval_") for k in e) for s, e in rows if s in at_training)
    if n_eval:
        parsed.notes.append(f"{n_eval} evaluation entries merged into the training entries "
                            "of their steps")
    return parsed


def _training_entry(entry: dict[str, Any]) -> bool:
    """Return whether a ``log_history`` entry is a training entry (no evaluation, no summary)."""
    return "train_runtime" not in entry and not any(k.startswith("eval_") for k in entry)


def _records_parsed(path: Path, records: list[tuple[int, Any]], fmt: str,
                    step_key: str | None, where: str) -> Parsed:
    """Rows, runs and config of decoded records; ``records`` are (line or index, object)."""
    rows: Rows = []
    typed = False
    config: dict[str, Any] = {}
    ecosystem = "custom"
    evaluations: set[int] = set()  # ids of evaluation records: they mark no resume
    for position, entry in records:
        if not isinstance(entry, dict):
            raise LogFormatError(f"{path}{where}{position}: a record that is not an object")
        kind = entry.get("type") if isinstance(entry.get("type"), str) else None
        if kind is not None and kind.lower() in _CONFIG_TYPES:
            for key in ("args", "config", "hparams"):
                if isinstance(entry.get(key), dict):
                    config.update(entry[key])
            continue
        if isinstance(entry.get("data"), dict) and "step" in entry and len(entry) <= 3:
            entry = {"step": entry["step"], **entry["data"]}  # verl file logger
            fmt, ecosystem = "verl_jsonl", "verl"
        key, step = step_of(entry, step_key)
        if key is None:
            if step_key is not None:
                continue
            raise LogFormatError(f"{path}{where}{position}: no step field (looked for "
                                 f"{', '.join(STEP_NAMES)}; give --step-key)")
        if kind is not None:
            typed = True
            if kind.lower() in _EVAL_TYPES:
                entry = {("eval/" + k if k != key else k): v for k, v in entry.items()
                         if k != "type"}
                evaluations.add(id(entry))
        rows.append((step, entry))
    if not rows and step_key is not None:
        raise missing_step_key(str(path), step_key,
                               [e for _, e in records if isinstance(e, dict)])
    if not rows:
        raise LogFormatError(f"{path}: no records with a step field")
    if "_step" in rows[0][1] and fmt == "jsonl":
        fmt, ecosystem = "wandb_history", "wandb"
    runs, notes = _split_runs(rows)
    parsed = Parsed(fmt, runs, ecosystem=ecosystem, notes=notes)
    if typed:  # records of one step are merged: a resumed run's abandoned ones are dropped first
        for name, run_rows in parsed.runs.items():
            run_rows, resumed = drop_abandoned(run_rows, lambda e: id(e) not in evaluations)
            parsed.notes += [f"{name}: {note}" if name else note for note in resumed]
            parsed.runs[name] = run_rows
        for name, run_rows in parsed.runs.items():
            parsed.runs[name], n_merged = merge_by_step(run_rows, average=True)
            if n_merged:
                finite = sum(math.isfinite(step) for step, _ in run_rows)
                parsed.notes.append("records of one step merged: " + merged_steps(
                    finite, finite - n_merged,
                    "numbers logged several times per step averaged"))
                break
    parsed.config = config
    return parsed


def _run_tag(entry: dict[str, Any]) -> tuple[str, str] | None:
    """Return the run-tag field of a record (``common.RUN_TAGS``) and its value, or None.

    A tag is a non-empty string or an integer; any other value tags no run.
    """
    for key, value in entry.items():
        if not isinstance(key, str) or key.lower() not in RUN_TAGS:
            continue
        if isinstance(value, str) and value.strip():
            return key, value.strip()
        if isinstance(value, int) and not isinstance(value, bool):
            return key, str(value)
    return None


def _split_runs(rows: Rows) -> tuple[dict[str, Rows], list[str]]:
    """Return the runs of a file's records, by their run tag, else by the step's restarts.

    Records tagged with a run (``_run_tag``) are that run's, in the order of the file, even
    where several runs interleave; records without a tag in a tagged file make a run named
    ``untagged``. Within a run (or an untagged file), the step returning to the run's first
    step starts a run appended to it (``split_restarts``).

    Parameters
    ----------
    rows : Rows
        The file's records, in order.

    Returns
    -------
    runs : dict of str to Rows
        The runs by name (one run named ``""`` for a file of one untagged run).
    notes : list of str
        How the file was split.
    """
    tags = [_run_tag(entry) for _, entry in rows]
    field = next((t[0] for t in tags if t is not None), None)
    if field is None:
        runs = split_restarts(rows)
        return runs, restart_notes(len(runs))
    by_tag: dict[str, Rows] = {}
    for row, tag in zip(rows, tags, strict=True):
        by_tag.setdefault("untagged" if tag is None else tag[1], []).append(row)
    runs: dict[str, Rows] = {}
    notes = []
    for tag, tagged in by_tag.items():
        parts = split_restarts(tagged)
        runs.update({tag if not part else f"{tag}-{part}": r for part, r in parts.items()})
        notes += [f"run {tag!r}: {note}" for note in restart_notes(len(parts))]
    if len(by_tag) > 1:
        notes.insert(0, f"records tagged with their run by the field {field!r}: {len(by_tag)} "
                        "runs, named by the tag")
    if None in tags:
        notes.append(f"{tags.count(None)} records without a run tag ({field!r}): run "
                     "'untagged'")
    return runs, notes


def restart_notes(n_runs: int) -> list[str]:
    """Return the note on runs appended to one file (:func:`split_restarts`), none for one run."""
    return [f"the step restarts {n_runs - 1} time{'s' if n_runs > 2 else ''}: {n_runs} runs "
            "appended to one file"] if n_runs > 1 else []


def split_restarts(rows: Rows) -> dict[str, Rows]:
    """Return one run, or several when the step returns to the first step (appended runs).

    Parameters
    ----------
    rows : Rows
        A file's rows, in order.

    Returns
    -------
    dict of str to Rows
        ``{"": rows}``, or runs ``run1``, ``run2``, ... where the step went back to the first
        row's step after a later one.
    """
    first = rows[0][0]
    runs: list[Rows] = [[]]
    for step, entry in rows:
        current = runs[-1]
        if current and step == first and any(s > first for s, _ in current):
            runs.append([])
        runs[-1].append((step, entry))
    if len(runs) == 1:
        return {"": runs[0]}
    return {f"run{i}": r for i, r in enumerate(runs, start=1)}


def parse_json(path: Path, data: Any, step_key: str | None) -> Parsed:
    """Parse a decoded JSON document.

    A trainer_state, an array of step dicts, or ``{"history": [...]}``.
    """
    if isinstance(data, dict) and "log_history" in data:
        return parse_trainer_state(path, data, step_key)
    if isinstance(data, dict):
        for key in ("history", "logs", "log", "metrics", "records"):
            if isinstance(data.get(key), list):
                return _records_parsed(path, list(enumerate(data[key])), "json_records",
                                       step_key, f": {key}[")
    if isinstance(data, list):
        if data and not all(isinstance(e, dict) for e in data):
            bad = next(i for i, e in enumerate(data) if not isinstance(e, dict))
            raise LogFormatError(f"{path}: item {bad} of the JSON array is not an object "
                                 "(expected an array of step dicts)")
        if not data:
            raise LogFormatError(f"{path}: an empty JSON array")
        return _records_parsed(path, list(enumerate(data)), "json_records", step_key, ": item ")
    raise LogFormatError(f"{path}: a JSON file that is neither a TRL trainer_state.json "
                         "(no 'log_history') nor an array of step dicts")


def parse_jsonl(path: Path, text: str, step_key: str | None) -> Parsed:
    """JSON lines.

    A last line that is not JSON and ends the file without a newline (a run still writing, a
    job killed mid-write) is left unread with a note; any other line that is not JSON is an
    error.
    """
    records = []
    lines = text.splitlines()
    # only a line the writer did not finish can be cut short: the file's end, with no newline
    last = len(lines) if lines and not text.endswith(("\n", "\r")) else 0
    cut = None
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            if lineno == last and len(records) > 0:
                cut = (f"line {lineno}: the last line is cut short (a run still writing or "
                       "killed): not read")
                continue
            raise LogFormatError(f"{path}:{lineno}: not JSON "
                                 f"({getattr(exc, 'msg', exc)})") from None
        except RecursionError:
            raise LogFormatError(f"{path}:{lineno}: JSON nested too deeply") from None
        if not isinstance(entry, dict):
            raise LogFormatError(f"{path}:{lineno}: a JSON line that is not an object")
        records.append((lineno, entry))
    if not records:
        raise LogFormatError(f"{path}: empty file")
    parsed = _records_parsed(path, records, "jsonl", step_key, ":")
    parsed.notes += [cut] if cut else []
    return parsed
