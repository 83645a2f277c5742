"""Console logs: what trainers print, read without evaluating any of it.

- TRL / transformers console: one dict literal per logged step (``{'loss': ..., 'reward':
  ...}``, values numbers or strings), between progress-bar refreshes. The step of a dict is,
  in order: its own step field; the training progress counter ``n/total`` printed just before
  it (transformers updates the bar, then writes the logs, so ``n`` is the global step); the
  ``logging_steps`` given (or found beside the log); the total step count of the final
  ``train_runtime`` summary when it leaves one interval possible. Otherwise an error says what
  is missing. Evaluation dicts (``eval_*``) are merged into the step of the training dict before
  them. Markdown copies and HF-Jobs JSON streams (``[{"stream_name", "data"}, ...]``) of such
  consoles are unwrapped first.
- verl console: ``step:12 - critic/score/mean:0.41 - actor/entropy:0.83 - ...``, with or
  without a Ray prefix ``(TaskRunner pid=...)``; values may print as ``np.float64(x)``. A config
  dict printed by verl at start (``{'actor_rollout_ref': ...}``) is kept for the
  hyperparameters.
- OpenRLHF console: the progress bar's postfix ``reward=..., kl=..., actor_lr=...`` (or the short
  ``rm=``, ``act_lr=``), one update per optimizer step; the step is the update's order.
- MiniMind-style console: ``Epoch:[1/1](12/9751), Reward: 0.41, KL_ref: ...``.
- Per-batch reward tensors: ``rewards: tensor([1., 0., ...])``; the step is the batch's order,
  the reward the tensor's mean (its spread the reward std).
"""

from __future__ import annotations

import ast
import json
import math
import re
import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.aliases import per_function_rewards, reward_candidates
from grpodyn.empirical.logs.common import LogFormatError, Parsed, Rows, number
from grpodyn.empirical.logs.meta import Hyperparameter
from grpodyn.empirical.logs.records import STEP_NAMES, merge_by_step

__all__ = ["parse_text"]

_ANSI = re.compile(r"\x1b?\[[0-9;]*m")
_RAY_PREFIX = r"(?:\([\w.\-]+ pid=\d+(?:, ip=[\d.]+)?\)\s*)?"
_VERL = re.compile(r"^" + _RAY_PREFIX + r"step:(\d+)\s+-\s+(.*)$")
_TRAIN_BAR = re.compile(r"(\d+)/(\d+) \[[^\]\n\r]*?(?:it/s|s/it)\]")
_OPENRLHF = re.compile(r"(\d+)/(\d+) \[[^\]]*?,\s*((?:[\w/]+=[^,\]]*,?\s*)+)\]")
_MINIMIND = re.compile(r"Epoch:\s*\[(\d+)/(\d+)\]\s*\((\d+)/(\d+)\),?\s*(.*)$")
_TENSOR = re.compile(r"rewards?:\s*tensor\(\[([^\]]*)\]")
_VERL_CONFIG_START = re.compile(r"^" + _RAY_PREFIX + r"\{'(?:actor_rollout_ref|algorithm|data|"
                                r"trainer)'")


def _literal_dict(text: str) -> dict[str, Any] | None:
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


def _unwrap_stream(path: Path, text: str) -> str | None:
    """Return the console text inside an HF-Jobs JSON stream, or None when ``text`` is not one."""
    head = text.lstrip()[:200]
    if '"stream_name"' not in head or not head.startswith(("[", "{")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        try:
            data = [json.loads(line.lstrip(",")) for line in text.splitlines()
                    if line.strip().lstrip(",[").strip() and line.strip() not in ("]", "[")]
        except ValueError:
            raise LogFormatError(f"{path}: a JSON stream of console output that is not "
                                 "valid JSON") from None
    except RecursionError:
        raise LogFormatError(f"{path}: JSON nested too deeply") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return None
    return "".join(str(e.get("data", "")) for e in data if isinstance(e, dict))


# ---------------------------------------------------------------------------- TRL console


def _pieces(text: str) -> list[tuple[int, str]]:
    """(offset, piece) for every piece between line breaks and carriage returns."""
    out, offset = [], 0
    for piece in re.split(r"(\r\n|\r|\n)", text):
        if piece not in ("\r\n", "\r", "\n"):
            out.append((offset, piece))
        offset += len(piece)
    return out


def _dict_candidate(piece: str) -> str | None:
    stripped = piece.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        return stripped
    bar = re.search(r"(?:it/s|s/it|\?it/s)\]\s*(\{.*\})\s*$", stripped)  # dict after a bar
    return bar.group(1) if bar else None


def _fits(lo: float, hi: float, n: int) -> set[int]:
    """Return logging intervals L with n L <= total < (n + 1) L for some total in [lo, hi]."""
    return {L for L in range(1, int(hi // max(n, 1)) + 1) if n * L <= hi and (n + 1) * L > lo}


def _bar_end(text: str) -> tuple[int, int] | None:
    """Return the training progress bar's last count and its total (the most printed), or None."""
    bars = Counter((int(m.group(2)), int(m.group(1))) for m in _TRAIN_BAR.finditer(text))
    if not bars:
        return None
    total = Counter(total for total, _ in bars.elements()).most_common(1)[0][0]
    return max(count for t, count in bars if t == total), total


def _inferred_interval(bar: tuple[int, int] | None, summary: dict[str, Any], n: int
                       ) -> tuple[int | None, str]:
    """Infer logging_steps from the total number of steps.

    Only when exactly one interval L fits n logged points (n L <= total < (n + 1) L). The total
    comes from the final summary (runtime x steps per second, both rounded as printed) and from the
    training progress bar's last count (``bar``: :func:`_bar_end` of the log's text).
    """
    sources: list[tuple[set[int], str]] = []
    runtime, rate = number(summary.get("train_runtime")), summary.get("train_steps_per_second")
    speed = number(rate)
    if math.isfinite(runtime) and math.isfinite(speed) and speed > 0 and n > 0:
        printed = str(rate).strip().strip("'\"")
        decimals = len(printed.split(".")[1]) if "." in printed and "e" not in printed.lower() \
            else 0
        half = 0.5 * 10.0 ** (-decimals)
        lo, hi = runtime * max(speed - half, 0.0), (runtime + 0.5) * (speed + half)
        sources.append((_fits(lo, hi, n), f"final summary: train_runtime {runtime:g} s x "
                        f"train_steps_per_second {printed} = {lo:.0f}..{hi:.0f} steps"))
    if bar is not None:
        last, total = bar
        if last >= n:
            sources.append((_fits(last, last, n), f"the training progress bar ends at "
                            f"{last}/{total}"))
    if not sources:
        return None, ""
    common = set.intersection(*(fits for fits, _ in sources))
    if len(common) != 1:
        return None, ""
    interval = next(iter(common))
    return interval, "; ".join(words for _, words in sources) + f", for {n} logged points"


def _counter_steps(text: str, offsets: list[int]
                   ) -> tuple[list[float] | None, str, int | None]:
    """Return the training progress counter printed before each offset, when it numbers them.

    Returns the steps (None where the counter does not number the offsets), how they were read,
    and the counter's total (the steps the run was set to take, TRL's ``max_steps``).
    """
    counters = [(m.start(), int(m.group(1)), int(m.group(2))) for m in _TRAIN_BAR.finditer(text)]
    if not counters:
        return None, "", None
    starts = [c[0] for c in counters]
    last = []
    for offset in offsets:
        i = _bisect(starts, offset) - 1
        last.append(counters[i] if i >= 0 else None)
    totals = Counter(c[2] for c in last if c is not None)
    if not totals:
        return None, "", None
    total = totals.most_common(1)[0][0]
    steps: list[float] = []
    for offset in offsets:
        i = _bisect(starts, offset) - 1
        while i >= 0 and counters[i][2] != total:
            i -= 1
        steps.append(float(counters[i][1]) if i >= 0 else math.nan)
    finite = [s for s in steps if math.isfinite(s)]
    if len(finite) < 0.9 * len(steps) or len(set(finite)) < 0.9 * len(finite) \
            or any(b < a for a, b in zip(finite, finite[1:], strict=False)) or max(finite) == 0:
        return None, "", None
    return steps, f"the training progress counter (n/{total}) printed before each logged dict", \
        total


def _bisect(values: list[int], x: int) -> int:
    lo, hi = 0, len(values)
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _is_eval(entry: dict[str, Any]) -> bool:
    return any(k.startswith("eval_") for k in entry) and not reward_candidates(set(entry))


def _parse_trl(path: Path, text: str, step_key: str | None, logging_steps: int | None,
               fmt: str, interval_source: str, reward_key: str | None = None) -> Parsed:
    train: list[tuple[int, dict[str, Any]]] = []
    evals: list[tuple[int, int, dict[str, Any]]] = []  # (index of train dict before, offset)
    summary: dict[str, Any] = {}
    lineno_at = _line_numbers(text)
    for offset, piece in _pieces(text):
        candidate = _dict_candidate(piece)
        if candidate is None:
            continue
        entry = _literal_dict(candidate)
        if entry is None:
            raise LogFormatError(f"{path}:{lineno_at(offset)}: a dict line that is not a "
                                 "literal dict")
        if "train_runtime" in entry:
            summary = entry
        elif _is_eval(entry):
            evals.append((len(train) - 1, offset, entry))
        elif reward_candidates(set(entry)) or per_function_rewards(set(entry)) \
                or (step_key is not None and step_key in entry) \
                or (reward_key is not None and reward_key in entry):
            train.append((offset, entry))
    if not train:
        raise LogFormatError(f"{path}: no dict lines with a reward")
    parsed = Parsed(fmt, {}, ecosystem="trl")
    keys = [step_key] if step_key else list(STEP_NAMES)
    own = [next((number(e[k]) for k in keys if k in e), math.nan) for _, e in train]
    if all(math.isfinite(s) for s in own):
        steps = own
    else:
        counted, how, total = _counter_steps(text, [o for o, _ in train])
        interval, where = None, ""
        if logging_steps is not None:
            interval, where = logging_steps, interval_source
        if counted is not None and interval is not None and where != "given":
            interval = None  # a config file's interval yields to the counter of the log itself
        if counted is not None and interval is not None:
            ordinal = [float(interval * (i + 1)) for i in range(len(train))]
            if counted != ordinal:
                parsed.notes.append(f"logging_steps {interval} does not match the progress "
                                    f"counter (steps {counted[0]:g}, {counted[-1]:g}, ...): "
                                    "used logging_steps as given")
            counted = None
        if counted is not None:
            steps = counted
            parsed.notes.append(f"no step field: steps read from {how}")
            parsed.meta.planned_steps = Hyperparameter(
                total, "inferred", f"the total of the training progress counter (n/{total}) "
                "the console printed, from which the steps were read")
        else:
            bar = _bar_end(text)
            if interval is None:
                interval, evidence = _inferred_interval(bar, summary, len(train))
                if interval is not None:
                    where = "inferred"
                    parsed.meta.logging_steps = Hyperparameter(interval, "inferred", evidence)
            if interval is None:
                raise LogFormatError(
                    f"{path}: a TRL console log without step numbers: no step field in its "
                    f"{len(train)} logged dicts, no training progress counter in step with "
                    "them, and no total step count (final summary, progress bar) that fixes "
                    "the logging interval; give --logging-steps N (the run's logging_steps)")
            steps = [float(interval * (i + 1)) for i in range(len(train))]
            parsed.steps_reconstructed = True
            if bar is not None:
                parsed.meta.planned_steps = Hyperparameter(
                    bar[1], "inferred", f"the total of the training progress bar the console "
                    f"printed (it ends at {bar[0]}/{bar[1]})")
            parsed.notes.append(f"no step field and no progress counter in step with the "
                                f"logged dicts: steps are their order x logging_steps "
                                f"{interval} ({where})")
    rows: Rows = [(s, e) for s, (_, e) in zip(steps, train, strict=True)]
    for index, _, entry in evals:
        if index >= 0:
            rows.append((steps[index], entry))
    if evals:
        rows, _ = merge_by_step(rows, average=False)
        parsed.notes.append(f"{len(evals)} evaluation dicts merged into the step logged "
                            "before them")
    parsed.runs[""] = rows
    return parsed


def _line_numbers(text: str) -> Callable[[int], int]:
    breaks = [m.start() for m in re.finditer("\n", text)]

    def at(offset: int) -> int:
        return _bisect(breaks, offset) + 1

    return at


# ---------------------------------------------------------------------------- other consoles


def _parse_verl(path: Path, lines: list[str]) -> Parsed | None:
    rows: Rows = []
    config: dict[str, Any] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if _VERL_CONFIG_START.match(line) and not config:
            block = [re.sub("^" + _RAY_PREFIX, "", line)]
            depth = block[0].count("{") - block[0].count("}")
            while depth > 0 and i + 1 < len(lines) and len(block) < 5000:
                i += 1
                block.append(re.sub("^" + _RAY_PREFIX, "", lines[i]))
                depth += block[-1].count("{") - block[-1].count("}")
            try:
                value = ast.literal_eval("\n".join(block))
            except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                value = None
            if isinstance(value, dict):
                config = value
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
    return Parsed("verl_console", {"": rows}, ecosystem="verl", config=config)


def _parse_openrlhf(lines: list[str]) -> Parsed | None:
    """Return the postfix updates of OpenRLHF's progress bars.

    Of several bars (the episode bar with the full status, the per-epoch bar with short names) the
    one that names ``reward``.
    """
    bars: dict[str, Rows] = {}
    last: dict[str, str] = {}
    for line in lines:
        for match in _OPENRLHF.finditer(line):
            postfix = match.group(3)
            if not re.search(r"\b(?:reward|rm)=", postfix):
                continue
            label = re.sub(r"\s*\d+%.*$", "", line[:match.start()]).strip(" :|") or "bar"
            label = re.sub(r"\[\d+/\d+\]", "[*]", label)
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
    if not bars:
        return None
    label = max(bars, key=lambda b: (any("reward" in e for _, e in bars[b]), len(bars[b])))
    parsed = Parsed("openrlhf_console", {"": bars[label]}, ecosystem="openrlhf",
                    steps_reconstructed=True)
    parsed.notes.append(f"OpenRLHF console: steps are the order of the {label!r} progress-bar "
                        "updates that carry a reward (one per optimizer step)")
    return parsed


def _parse_minimind(lines: list[str]) -> Parsed | None:
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


def _parse_tensors(text: str) -> Parsed | None:
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


def parse_text(path: Path, text: str, *, step_key: str | None = None,
               logging_steps: int | None = None, interval_source: str = "given",
               reward_key: str | None = None) -> Parsed:
    """Return a console log of any of the supported trainers.

    ``interval_source`` says where ``logging_steps`` comes from (``given`` by the user, else a file
    name); ``reward_key`` (the user's reward metric) marks a TRL-style dict line as a record
    when it holds none of the trainers' reward names.
    """
    fmt = "trl_console"
    inner = _unwrap_stream(path, text)
    if inner is not None:
        text, fmt = inner, "hf_jobs_trl_console"
    text = _ANSI.sub("", text)
    lines = text.splitlines()
    for parser in (lambda: _parse_verl(path, lines), lambda: _parse_minimind(lines),
                   lambda: _parse_openrlhf(lines)):
        parsed = parser()
        if parsed is not None and any(reward_candidates(set(entry))
                                      for rows in parsed.runs.values() for _, entry in rows):
            return parsed
    try:
        return _parse_trl(path, text, step_key, logging_steps, fmt, interval_source,
                          reward_key)
    except LogFormatError as exc:
        if "no dict lines" not in str(exc):
            raise
        parsed = _parse_tensors(text)
        if parsed is None:
            raise
        return parsed
