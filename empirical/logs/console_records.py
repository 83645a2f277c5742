"""Trainer consoles whose lines each hold a record: verl, OpenRLHF, MiniMind, reward tensors.

- verl console: ``step:12 - critic/score/mean:0.41 - actor/entropy:0.83 - ...``, with or
  without a Ray prefix ``(TaskRunner pid=...)``; values may print as ``np.float64(x)``. A config
  dict printed by verl at start (``{'actor_rollout_ref': ...}``) is kept for the
  hyperparameters (of several runs, each its own; one that printed none, the settings the
  others share); the line ``Total training steps: N`` it prints at start is the run's planned
  length.
- OpenRLHF console: the trainer's ``✨ Global step N: {'policy_loss': ..., 'reward': ...}``
  records at their own steps, each evaluation's ``eval_metrics: {...}`` at the ``global_step``
  it names; the progress bars (the ``Train epoch`` bar updates once per micro-batch) are then
  not read. A console of older OpenRLHF, without those records: the progress bar's postfix
  ``reward=..., kl=..., actor_lr=...`` (or the short ``rm=``, ``act_lr=``), one update per
  optimizer step; the step is the update's order, over the bars of every episode.
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

__all__ = ["literal_dict", "restart_starts", "parse_verl", "parse_openrlhf",
           "parse_openrlhf_steps", "parse_minimind", "parse_tensors"]

_RAY_PREFIX = r"(?:\([\w.\-]+ pid=\d+(?:, ip=[\d.]+)?\)\s*)?"
_VERL = re.compile(r"^" + _RAY_PREFIX + r"step:(\d+)\s+-\s+(.*)$")
_VERL_CONFIG_START = re.compile(r"^" + _RAY_PREFIX + r"\{'(?:actor_rollout_ref|algorithm|data|"
                                r"trainer)'")
#: OpenRLHF's ``trainer/ppo_trainer.py`` lines after its logger's prefix (``INFO 06-01 12:01:59
#: ppo_trainer.py:366] ``) and Ray's: a step's status, an evaluation's metrics.
_GLOBAL_STEP = re.compile(r"\bGlobal step (\d+): (\{.*\})\s*$")
_EVALUATION = re.compile(r"\bEvaluation completed in [^,]*, global_step (\d+), eval_metrics: "
                         r"(\{.*\})\s*$")
#: verl's ``ray_trainer.py``: ``print(f"Total training steps: {self.total_training_steps}")``.
_VERL_TOTAL = re.compile(r"\bTotal training steps: ([-+]?\d+)\s*$")
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
    """Return verl's ``step:N - key:value`` lines, the config and planned length printed before.

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
    parsed.meta.planned_steps, planned_notes = _total_training_steps(lines)
    parsed.notes += restart_notes(len(runs)) + notes + planned_notes
    return parsed


def _total_training_steps(lines: list[str]) -> tuple[Hyperparameter | None, list[str]]:
    """Return the planned length verl prints at start, ``Total training steps: N``, and notes.

    verl's trainer prints the steps it will take (``trainer.total_training_steps``, else the
    train dataloader's length x ``total_epochs``) before training; its printed config holds
    only the placeholder ``-1`` the trainer replaces. A count not above zero is no planned
    length, and runs appended to one console that print different counts give none; both are
    said in a note.

    Parameters
    ----------
    lines : list of str
        The console's lines.

    Returns
    -------
    planned : Hyperparameter or None
        The one positive count printed, inferred from that line.
    notes : list of str
        Why a printed count was not read.
    """
    printed = list(dict.fromkeys(int(m.group(1)) for m in map(
        _VERL_TOTAL.search, (line for line in lines if "Total training steps" in line)) if m))
    notes = [f"'Total training steps: {n}' printed: not a planned length (no step count), the "
             "run's planned steps left undetermined" for n in printed if n <= 0]
    counts = [n for n in printed if n > 0]
    if len(counts) > 1:
        notes.append(f"'Total training steps' printed with {len(counts)} values "
                     f"({', '.join(map(str, counts))}): not read as the planned length")
    if len(counts) != 1:
        return None, notes
    return Hyperparameter(counts[0], "inferred", f"the line 'Total training steps: {counts[0]}' "
                          "the console printed (verl's planned number of steps)"), notes


def _bar_updates(lines: list[str]) -> tuple[dict[str, Rows], dict[str, list[str]]]:
    """Return the postfix updates that carry a reward of each progress bar, in printed order.

    Bars whose labels differ only in numbers (``Episode [1/2]``, ``Train step of episode 0``)
    are one bar, keyed by the label with ``*`` for its numbers; a refresh that repeats the last
    update is none. Also returns each bar's labels as printed, in order.
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
    return bars, printed_as


def parse_openrlhf(lines: list[str]) -> Parsed | None:
    """Return the postfix updates of OpenRLHF's progress bars, one per optimizer step.

    What OpenRLHF printed before its ``Global step`` records (:func:`parse_openrlhf_steps`).
    The updates of a bar are read in the order printed, over its labels (:func:`_bar_updates`).
    Of several bars (the episode bar with the full status, the per-epoch bar with short names)
    the one that names ``reward`` is read.
    """
    bars, printed_as = _bar_updates(lines)
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


def parse_openrlhf_steps(lines: list[str]) -> Parsed | None:
    """Return OpenRLHF's ``Global step N: {...}`` records at their own steps, with evaluations.

    OpenRLHF's trainer logs ``✨ Global step {global_step}: {status}`` after each optimizer step
    (every metric it sends to W&B and TensorBoard at that step) and ``✨ Evaluation completed in
    {time}, global_step {global_step}, eval_metrics: {logs}`` after each evaluation. An
    evaluation joins the record of its step where that record is the last one printed before it,
    else it is a record of its own at its step. Runs appended to one console (the step returns
    to the first) become runs ``run1``, ``run2``, ... The progress bars are not read: the
    ``Train epoch`` bar's postfix (``act_loss=``, ``reward=``, ``gen_len=``) updates once per
    micro-batch, several times per step, and a note names the bars left out.

    Parameters
    ----------
    lines : list of str
        The console's lines (ANSI colours removed).

    Returns
    -------
    Parsed or None
        The records, or None where the console prints no ``Global step`` record.
    """
    if not any("Global step" in line for line in lines):  # a substring test, before the regexes
        return None
    rows: Rows = []
    n_eval = n_own = 0
    unread: list[int] = []
    for lineno, line in enumerate(lines, start=1):
        match = _GLOBAL_STEP.search(line) or _EVALUATION.search(line)
        if match is None:
            continue
        entry = literal_dict(match.group(2))
        if entry is None:
            unread.append(lineno)
            continue
        step, evaluation = float(match.group(1)), match.re is _EVALUATION
        if evaluation and rows and rows[-1][0] == step:
            rows[-1] = (step, {**rows[-1][1], **entry})
        else:
            rows.append((step, entry))
            n_own += int(evaluation)
        n_eval += int(evaluation)
    if len(rows) == n_own:  # no training record
        return None
    runs = split_restarts(rows)
    steps = [step for step, _ in rows]
    parsed = Parsed("openrlhf_console", runs, ecosystem="openrlhf")
    parsed.notes.append(f"OpenRLHF console: {len(rows) - n_own} 'Global step N: {{...}}' records "
                        f"read at their own steps ({min(steps):g}-{max(steps):g})")
    if n_eval:
        parsed.notes.append(
            f"{n_eval} evaluation records ('Evaluation completed ..., global_step N') merged into "
            "the record of their step" + (f"; {n_own} at a step with no record printed just "
                                          "before them kept as records of their own"
                                          if n_own else ""))
    if unread:
        parsed.notes.append(f"{len(unread)} 'Global step' or evaluation line"
                            f"{'s' if unread[1:] else ''} not a literal dict, not read (line"
                            f"{'s' if unread[1:] else ''} {', '.join(map(str, unread[:3]))}"
                            f"{', ...' if unread[3:] else ''})")
    bars = _bar_updates(lines)[0]
    if bars:
        parsed.notes.append(
            "progress-bar updates not read as steps: "
            + ", ".join(f"{label!r} ({len(updates)} updates)" for label, updates in bars.items())
            + "; the 'Global step' records number the optimizer steps, and OpenRLHF's 'Train "
            "epoch' bar updates once per micro-batch")
    parsed.notes += restart_notes(len(runs))
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
