"""Trainer consoles whose lines each hold a record: verl, OpenRLHF, MiniMind, reward tensors.

- verl console: ``step:12 - critic/score/mean:0.41 - actor/entropy:0.83 - ...``, with or
  without a Ray prefix ``(TaskRunner pid=...)``; values may print as ``np.float64(x)``. A config
  dict printed by verl at start (``{'actor_rollout_ref': ...}``) is kept for the
  hyperparameters (of several runs, each its own; one that printed none, the settings the
  others share).
- OpenRLHF console: the progress bar's postfix ``reward=..., kl=..., actor_lr=...`` (or the short
  ``rm=``, ``act_lr=``), one update per optimizer step; the step is the update's order, over the
  bars of every episode.
- MiniMind-style console: ``Epoch:[1/1](12/9751), Reward: 0.41, KL_ref: ...``.
- Per-batch reward tensors: ``rewards: tensor([1., 0., ...])``; the step is the batch's order,
  the reward the tensor's mean (its spread the reward std).

Runs appended to one console (the step returns to the first step) become runs ``run1``,
``run2``, ... (:func:`restart_starts`). Printed dicts are read as literals
(:func:`literal_dict`), never evaluated.
"""

from __future__ import annotations

import ast
import math
import re
import statistics
from collections import Counter
from typing import Any

from grpodyn.empirical.logs.common import Parsed, Rows, number
from grpodyn.empirical.logs.config import configs_of_runs
from grpodyn.empirical.logs.meta import Hyperparameter
from grpodyn.empirical.logs.records import restart_notes, split_restarts

__all__ = ["literal_dict", "restart_starts", "parse_verl", "parse_openrlhf", "parse_minimind",
           "parse_tensors"]

_RAY_PREFIX = r"(?:\([\w.\-]+ pid=\d+(?:, ip=[\d.]+)?\)\s*)?"
_VERL = re.compile(r"^" + _RAY_PREFIX + r"step:(\d+)\s+-\s+(.*)$")
_VERL_CONFIG_START = re.compile(r"^" + _RAY_PREFIX + r"\{'(?:actor_rollout_ref|algorithm|data|"
                                r"trainer)'")
_OPENRLHF = re.compile(r"(\d+)/(\d+) \[[^\]]*?,\s*((?:[\w/]+=[^,\]]*,?\s*)+)\]")
_MINIMIND = re.compile(r"Epoch:\s*\[(\d+)/(\d+)\]\s*\((\d+)/(\d+)\),?\s*(.*)$")
_TENSOR = re.compile(r"rewards?:\s*tensor\(\[([^\]]*)\]")


def literal_dict(text: str) -> dict[str, Any] | None:
    """Return a dict literal of string keys and scalar values, read without evaluating code."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # incl. nesting too deep
        return None
    if not isinstance(node, ast.Dict):
        return None
    out = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) \
                and isinstance(value.operand, ast.Constant):
            out[key.value] = -number(value.operand.value)
        elif isinstance(value, ast.Constant):
            out[key.value] = value.value
        elif isinstance(value, ast.Call) and len(value.args) == 1 \
                and isinstance(value.args[0], ast.Constant):  # np.float64(0.5): the 0.5
            out[key.value] = value.args[0].value
        else:
            out[key.value] = None
    return out


def restart_starts(steps: list[float]) -> list[int]:
    """Return the index of each run's first record among records logged in order.

    A run begins where the step returns to the log's first step after a larger one (runs
    appended to one file, as ``records.split_restarts`` splits JSON lines); a step that goes
    back to any other step (a resume from a checkpoint) stays in its run.
    """
    runs = split_restarts([(step, {}) for step in steps]) if steps else {"": []}
    sizes = [len(rows) for rows in runs.values()]
    return [sum(sizes[:k]) for k in range(len(sizes))]


def parse_verl(lines: list[str]) -> Parsed | None:
    """Return verl's ``step:N - key:value`` lines, and the config printed before them.

    Runs appended to one console (:func:`restart_starts`) become runs ``run1``, ``run2``, ...
    """
    rows: Rows = []
    configs: list[tuple[int, dict[str, Any]]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _VERL_CONFIG_START.match(line):
            block = [re.sub("^" + _RAY_PREFIX, "", line)]
            depth = block[0].count("{") - block[0].count("}")
            while depth > 0 and i + 1 < len(lines) and len(block) < 5000 \
                    and not _VERL.match(lines[i + 1].strip()):  # a step line ends a bad block
                i += 1
                block.append(re.sub("^" + _RAY_PREFIX, "", lines[i]))
                depth += block[-1].count("{") - block[-1].count("}")
            try:
                value = ast.literal_eval("\n".join(block))
            except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                value = None
            if isinstance(value, dict):
                configs.append((len(rows), value))
        match = _VERL.match(line.strip())
        if match:
            entry: dict[str, Any] = {"step": match.group(1)}
            for part in match.group(2).split(" - "):
                key, sep, value = part.partition(":")
                if sep:
                    entry[key.strip()] = value.strip()
            rows.append((number(match.group(1)), entry))
        i += 1
    if not rows:
        return None
    starts = restart_starts([step for step, _ in rows])
    runs = split_restarts(rows)
    config, run_configs, notes = configs_of_runs(configs, starts)
    parsed = Parsed("verl_console", runs, ecosystem="verl", config=config,
                    run_configs=run_configs)
    parsed.notes += restart_notes(len(runs)) + notes
    return parsed


def parse_openrlhf(lines: list[str]) -> Parsed | None:
    """Return the postfix updates of OpenRLHF's progress bars.

    Bars whose labels differ only in numbers (``Episode [1/2]``, ``Train step of episode 0``)
    are one bar, their updates read in the order printed. Of several bars (the episode bar with
    the full status, the per-epoch bar with short names) the one that names ``reward`` is read.
    """
    bars: dict[str, Rows] = {}
    printed_as: dict[str, list[str]] = {}  # each bar's labels as printed, in order
    last: dict[str, str] = {}
    for line in lines:
        for match in _OPENRLHF.finditer(line):
            postfix = match.group(3)
            if not re.search(r"\b(?:reward|rm)=", postfix):
                continue
            printed = re.sub(r"\s*\d+%.*$", "", line[:match.start()]).strip(" :|") or "bar"
            label = re.sub(r"\d+", "*", re.sub(r"\[\d+/\d+\]", "[*]", printed))
            if last.get(label) == postfix:
                continue  # a refresh of the same update
            last[label] = postfix
            entry = {}
            for pair in postfix.split(","):
                key, sep, value = pair.partition("=")
                if sep:
                    entry[key.strip()] = value.strip()
            rows = bars.setdefault(label, [])
            rows.append((float(len(rows) + 1), entry))
            seen = printed_as.setdefault(label, [])
            if not seen or seen[-1] != printed:
                seen.append(printed)
    if not bars:
        return None
    label = max(bars, key=lambda b: (any("reward" in e for _, e in bars[b]), len(bars[b])))
    parsed = Parsed("openrlhf_console", {"": bars[label]}, ecosystem="openrlhf",
                    steps_reconstructed=True)
    seen = printed_as[label]
    parsed.notes.append(f"OpenRLHF console: steps are the order of the {label!r} progress-bar "
                        "updates that carry a reward (one per optimizer step)" + (
                            f", over {len(seen)} bars read in the order printed: "
                            f"{', '.join(seen[:4])}{', ...' if len(seen) > 4 else ''}"
                            if len(seen) > 1 else ""))
    numbers = [[int(n) for n in re.findall(r"\d+", printed)] for printed in seen]
    if any(b < a for a, b in zip(numbers, numbers[1:], strict=False)):
        parsed.notes.append(f"the numbers in the labels of the {label!r} bars go back, as when "
                            "a run is appended or resumed: their updates are read in the order "
                            "printed")
    others = [f"{b!r} ({len(bars[b])} updates)" for b in bars if b != label]
    if others:
        parsed.notes.append(f"other progress bars with a reward left out: {', '.join(others)}")
    return parsed


def parse_minimind(lines: list[str]) -> Parsed | None:
    """Return MiniMind's ``Epoch:[e/E](i/N), Reward: ...`` lines, at (e - 1) N + i."""
    rows: Rows = []
    for line in lines:
        match = _MINIMIND.search(line)
        if not match:
            continue
        epoch, per_epoch, index = int(match.group(1)), int(match.group(4)), int(match.group(3))
        entry = {}
        for pair in match.group(5).split(","):
            key, sep, value = pair.partition(":")
            if sep:
                entry[key.strip()] = value.strip()
        rows.append((float((epoch - 1) * per_epoch + index), entry))
    if not rows:
        return None
    parsed = Parsed("minimind_console", {"": rows})
    parsed.notes.append("MiniMind console: step = (epoch - 1) x steps per epoch + index")
    return parsed


def parse_tensors(text: str) -> Parsed | None:
    """Return printed per-batch reward tensors: each one's mean and spread, in printed order."""
    rows: Rows = []
    sizes = Counter()
    for match in _TENSOR.finditer(text):
        values = [number(v) for v in match.group(1).replace("\n", " ").split(",") if v.strip()]
        if not values or not all(math.isfinite(v) for v in values):
            continue
        sizes[len(values)] += 1
        rows.append((float(len(rows) + 1), {
            "reward": statistics.fmean(values),
            "reward_std": statistics.pstdev(values) if len(values) > 1 else math.nan}))
    if not rows:
        return None
    parsed = Parsed("reward_tensor_console", {"": rows}, steps_reconstructed=True)
    parsed.notes.append("per-batch reward tensors: steps are the order of the printed tensors, "
                        "the reward their mean, reward_std their spread (population std)")
    size, _ = sizes.most_common(1)[0]
    parsed.meta.group_size = Hyperparameter(
        size, "inferred", f"{size} rewards per printed batch tensor: B x G, so G = {size} only "
        "if each batch holds one prompt")
    return parsed
