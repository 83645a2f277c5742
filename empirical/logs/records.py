"""Logs made of records (dicts): TRL ``trainer_state.json``, JSON arrays and JSON lines.

The step field is the first of ``STEP_NAMES`` present (the trainer's ``train/global_step``
before W&B's own ``_step`` counter), or the one given (``--step-key``).

- TRL ``trainer_state.json``: ``log_history`` entries; evaluation entries (``eval_*`` keys) and
  the final summary share a step with a training entry and are merged into it, so
  ``eval_reward`` becomes the held-out reward at that step.
- A JSON array of step dicts (what custom loops write), or ``{"history": [...]}``.
- JSON lines: flat records; verl's file logger (``{"step": N, "data": {...}}``); W&B
  ``wandb-history.jsonl`` (``_step``); typed records (``"type": "eval" | "rollout" | "train"
  | "config"``, e.g. CS336-style ``metrics.jsonl``): evaluation records become ``eval/<key>``,
  records of one step are merged (numbers averaged over the records, with a note), and a config
  record's settings are kept for the hyperparameters. Several runs appended to one file (the
  step restarts at the file's first step) become runs ``run1``, ``run2``, ...
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.common import (
    LogFormatError,
    Parsed,
    Rows,
    merged_steps,
    missing_step_key,
    number,
)

__all__ = ["STEP_NAMES", "parse_trainer_state", "parse_json", "parse_jsonl", "step_of",
           "merge_by_step"]

#: Field names that hold the optimizer step, in order of preference.
STEP_NAMES = ("step", "global_step", "train/global_step", "trainer/global_step",
              "training/global_step", "Step", "_step", "grpo_step", "iteration", "iter")
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
    merged, n_merged = merge_by_step(rows, average=False)
    parsed = Parsed("trl_trainer_state", {"": merged}, ecosystem="trl")
    # evaluation entries and the final summary share a training entry's step by design; training
    # entries that share one (a resumed run logged twice, a hand-made file) are said
    training = [s for s, e in rows if math.isfinite(s) and "train_runtime" not in e
                and not any(k.startswith("eval_") for k in e)]
    if len(training) > len(set(training)):
        parsed.notes.append(merged_steps(len(training), len(set(training)),
                                         "the first value of each metric kept"))
    # runs that grpodyn made (the tiny grid, the test beds) record their hyperparameters
    if isinstance(data.get("grpodyn_hparams"), dict):
        parsed.config = data["grpodyn_hparams"]
    # the Trainer records the steps it was set to take beside the history
    if isinstance(data.get("max_steps"), int) and data["max_steps"] > 0:
        parsed.config = {**(parsed.config or {}), "max_steps": data["max_steps"]}
    n_eval = sum(any(k.startswith("eval_") for k in e) for _, e in rows)
    if n_eval:
        parsed.notes.append(f"{n_eval} evaluation entries merged into the training entries "
                            "of their steps")
    return parsed


def _records_parsed(path: Path, records: list[tuple[int, Any]], fmt: str,
                    step_key: str | None, where: str) -> Parsed:
    """Rows, runs and config of decoded records; ``records`` are (line or index, object)."""
    rows: Rows = []
    typed = False
    config: dict[str, Any] = {}
    ecosystem = "custom"
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
        rows.append((step, entry))
    if not rows and step_key is not None:
        raise missing_step_key(str(path), step_key,
                               [e for _, e in records if isinstance(e, dict)])
    if not rows:
        raise LogFormatError(f"{path}: no records with a step field")
    if "_step" in rows[0][1] and fmt == "jsonl":
        fmt, ecosystem = "wandb_history", "wandb"
    parsed = Parsed(fmt, _split_restarts(rows), ecosystem=ecosystem)
    if typed:
        for name, run_rows in parsed.runs.items():
            parsed.runs[name], n_merged = merge_by_step(run_rows, average=True)
            if n_merged:
                finite = sum(math.isfinite(step) for step, _ in run_rows)
                parsed.notes.append("records of one step merged: " + merged_steps(
                    finite, finite - n_merged,
                    "numbers logged several times per step averaged"))
                break
    if len(parsed.runs) > 1:
        parsed.notes.append(f"the step restarts {len(parsed.runs) - 1} times: "
                            f"{len(parsed.runs)} runs appended to one file")
    parsed.config = config
    return parsed


def _split_restarts(rows: Rows) -> dict[str, Rows]:
    """One run, or several when the step returns to the file's first step (appended runs)."""
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
    """JSON lines."""
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise LogFormatError(f"{path}:{lineno}: not JSON "
                                 f"({getattr(exc, 'msg', exc)})") from None
        except RecursionError:
            raise LogFormatError(f"{path}:{lineno}: JSON nested too deeply") from None
        if not isinstance(entry, dict):
            raise LogFormatError(f"{path}:{lineno}: a JSON line that is not an object")
        records.append((lineno, entry))
    if not records:
        raise LogFormatError(f"{path}: empty file")
    return _records_parsed(path, records, "jsonl", step_key, ":")
