"""Console logs: what trainers print, read without evaluating any of it.

- TRL / transformers console: one dict literal per logged step (``{'loss': ..., 'reward':
  ...}``, values numbers or strings), between progress-bar refreshes. The step of a dict is,
  in order: its own step field; the training progress counter ``n/total`` printed just before
  it (transformers updates the bar, then writes the logs, so ``n`` is the global step); the
  ``logging_steps`` given (or found beside the log); the total step count of the final
  ``train_runtime`` summary when it leaves one interval possible. Otherwise an error says what
  is missing. Evaluation dicts (``eval_*``) are merged into the step of the training dict before
  them. Markdown copies and HF-Jobs JSON streams (``[{"stream_name", "data"}, ...]``) of such
  consoles are unwrapped first. Runs appended to one console (the step, or the progress counter,
  returns to the first step) become runs ``run1``, ``run2``, ..., as in verl and key=value logs.
- verl, OpenRLHF, MiniMind consoles and per-batch reward tensors: lines that each hold a
  record, read by ``logs.console_records``.
- Hand-written consoles: ``step=10 reward=0.41``, ``Step 10 | reward: 0.41``, ``[step 10/600]
  reward=0.41``, ``Iter 10: mean_reward 0.41``: a step and a reward name on each line.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.aliases import per_function_rewards, resolve, reward_candidates
from grpodyn.empirical.logs.common import LogFormatError, Parsed, Rows, number
from grpodyn.empirical.logs.console_records import (
    literal_dict,
    parse_minimind,
    parse_openrlhf,
    parse_openrlhf_steps,
    parse_tensors,
    parse_verl,
    restart_starts,
)
from grpodyn.empirical.logs.meta import Hyperparameter
from grpodyn.empirical.logs.records import (
    STEP_NAMES,
    merge_by_step,
    restart_notes,
    split_restarts,
)

__all__ = ["parse_text"]

_ANSI = re.compile(r"\x1b?\[[0-9;]*m")
_TRAIN_BAR = re.compile(r"(\d+)/(\d+) \[[^\]\n\r]*?(?:it/s|s/it)\]")
#: ``key=value``, ``key: value`` or ``key value``: a key not inside a word or metric path, a number
#: (a step also ``n/total``) that a space or punctuation ends (``13.5s``, ``45%`` are none).
_PAIR = re.compile(r"([A-Za-z_](?<![\w/.\-].)[\w/.\-]*)(?:\s*[=:]\s*|\s+)([-+]?(?:\d+\.?\d*|\.\d+)"
                   r"(?:[eE][-+]?\d+)?|(?i:nan|inf))(?:/(\d+))?(?=$|[\s,;:|)\]])")



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
        i = bisect_left(starts, offset) - 1
        last.append(counters[i] if i >= 0 else None)
    totals = Counter(c[2] for c in last if c is not None)
    if not totals:
        return None, "", None
    total = totals.most_common(1)[0][0]
    steps: list[float] = []
    for offset in offsets:
        i = bisect_left(starts, offset) - 1
        while i >= 0 and counters[i][2] != total:
            i -= 1
        steps.append(float(counters[i][1]) if i >= 0 else math.nan)
    finite = [s for s in steps if math.isfinite(s)]
    if len(finite) < 0.9 * len(steps) or len(set(finite)) < 0.9 * len(finite) \
            or any(b < a for a, b in zip(finite, finite[1:], strict=False)) or max(finite) == 0:
        return None, "", None
    return steps, f"the training progress counter (n/{total}) printed before each logged dict", \
        total


def _is_eval(entry: dict[str, Any]) -> bool:
    return any(k.startswith("eval_") for k in entry) and not reward_candidates(set(entry))


def _counter_restarts(text: str, offsets: list[int]) -> list[int]:
    """Return where runs appended to one TRL console begin (:func:`restart_starts`).

    A dict's step is the counter printed last before it, where a neighbouring dict's counter has
    the same total (an evaluation bar's counter left last before a training dict has not).
    """
    found = [(m.start(), int(m.group(1)), int(m.group(2))) for m in _TRAIN_BAR.finditer(text)]
    starts = [c[0] for c in found]
    last = [found[i] if i >= 0 else None for i in (bisect_left(starts, o) - 1 for o in offsets)]
    totals = [c[2] if c is not None else None for c in last]
    steps = [float(c[1]) if c is not None and (
        len(last) == 1 or totals[i] in totals[max(i - 1, 0):i] + totals[i + 1:i + 2])
        else math.nan for i, c in enumerate(last)]
    return restart_starts(steps)


def _run_steps(label: str, text: str, offsets: list[int], summary: dict[str, Any],
               logging_steps: int | None, interval_source: str
               ) -> tuple[list[float], list[str], dict[str, Hyperparameter], bool]:
    """Return the steps of one run's dicts (no step field), notes, hyperparameters found.

    ``text`` is the run's part of the console, ``offsets`` its dicts' within it; the last value
    returned says whether the steps were reconstructed from the dicts' order.
    """
    notes: list[str] = []
    meta: dict[str, Hyperparameter] = {}
    counted, how, total = _counter_steps(text, offsets)
    interval, where = (logging_steps, interval_source) if logging_steps is not None else (None, "")
    if counted is not None and interval is not None and where != "given":
        interval = None  # a config file's interval yields to the counter of the log itself
    if counted is not None and interval is not None:
        if counted != [float(interval * (i + 1)) for i in range(len(offsets))]:
            notes.append(f"logging_steps {interval} does not match the progress counter "
                         f"(steps {counted[0]:g}, {counted[-1]:g}, ...): used logging_steps "
                         "as given")
        counted = None
    if counted is not None:
        notes.append(f"no step field: steps read from {how}")
        meta["planned_steps"] = Hyperparameter(
            total, "inferred", f"the total of the training progress counter (n/{total}) the "
            "console printed, from which the steps were read")
        return counted, notes, meta, False
    bar = _bar_end(text)
    if interval is None:
        interval, evidence = _inferred_interval(bar, summary, len(offsets))
        if interval is not None:
            where = "inferred"
            meta["logging_steps"] = Hyperparameter(interval, "inferred", evidence)
    if interval is None:
        total_words = ("no total step count (final summary, progress bar) that fixes the "
                       "logging interval" if bar is None else
                       f"its training progress bar ends at {bar[0]}/{bar[1]}, which no one "
                       f"logging interval fits with {len(offsets)} logged dicts")
        raise LogFormatError(
            f"{label}: a TRL console log without step numbers: no step field in its "
            f"{len(offsets)} logged dicts, no training progress counter in step with them, and "
            f"{total_words}; give --logging-steps N (the run's logging_steps)")
    if bar is not None:
        meta["planned_steps"] = Hyperparameter(
            bar[1], "inferred", f"the total of the training progress bar the console printed "
            f"(it ends at {bar[0]}/{bar[1]})")
    notes.append(f"no step field and no progress counter in step with the logged dicts: steps "
                 f"are their order x logging_steps {interval} ({where})")
    return [float(interval * (i + 1)) for i in range(len(offsets))], notes, meta, True


def _parse_trl(path: Path, text: str, step_key: str | None, logging_steps: int | None,
               fmt: str, interval_source: str, reward_key: str | None = None) -> Parsed:
    """Return a TRL console's dict lines; trainings appended to one console become runs.

    A run begins where the step field, else the progress counter, restarts
    (:func:`restart_starts`); its part of the console begins after the last dict before it.
    """
    train: list[tuple[int, dict[str, Any]]] = []
    evals: list[tuple[int, int, dict[str, Any]]] = []  # (index of train dict before, offset)
    summaries: list[tuple[int, dict[str, Any]]] = []
    ends: list[int] = []  # where each dict line ends
    lineno_at = _line_numbers(text)
    for offset, piece in _pieces(text):
        candidate = _dict_candidate(piece)
        if candidate is None:
            continue
        entry = literal_dict(candidate)
        if entry is None:
            raise LogFormatError(f"{path}:{lineno_at(offset)}: a dict line that is not a "
                                 "literal dict")
        if "train_runtime" in entry:
            summaries.append((offset, entry))
        elif _is_eval(entry):
            evals.append((len(train) - 1, offset, entry))
        elif reward_candidates(set(entry)) or per_function_rewards(set(entry)) \
                or (step_key is not None and step_key in entry) \
                or (reward_key is not None and reward_key in entry):
            train.append((offset, entry))
        else:
            continue
        ends.append(offset + len(piece))
    if not train:
        raise LogFormatError(f"{path}: no dict lines with a reward")
    parsed = Parsed(fmt, {}, ecosystem="trl")
    keys = [step_key] if step_key else list(STEP_NAMES)
    own = [next((number(e[k]) for k in keys if k in e), math.nan) for _, e in train]
    offsets = [o for o, _ in train]
    owned = all(math.isfinite(s) for s in own)
    starts = restart_starts(own) if owned else _counter_restarts(text, offsets)
    bounds = [0] + [max([e for e in ends if e <= offsets[k]], default=0) for k in starts[1:]]
    bounds.append(len(text))
    steps: list[float] = []
    metas: list[dict[str, Hyperparameter]] = []
    notes: list[str] = []
    spans = list(zip(starts, starts[1:] + [len(train)], strict=True))
    for k, (first, end) in enumerate(spans):
        if owned:
            steps += own[first:end]
            continue
        lo, hi = bounds[k], bounds[k + 1]
        summary = next((e for o, e in reversed(summaries) if lo <= o < hi), {})
        label = f"{path}: run{k + 1}" if len(starts) > 1 else str(path)
        run_steps, run_notes, meta, rebuilt = _run_steps(
            label, text[lo:hi], [o - lo for o in offsets[first:end]], summary, logging_steps,
            interval_source)
        steps += run_steps
        notes += run_notes
        metas.append(meta)
        parsed.steps_reconstructed |= rebuilt
    parsed.notes += list(dict.fromkeys(notes))
    for field in ("planned_steps", "logging_steps"):
        found = [meta[field] for meta in metas if field in meta]
        values = list(dict.fromkeys(str(h.value) for h in found))
        if len(found) == len(metas) and len(values) == 1:
            setattr(parsed.meta, field, found[0])
        elif found:
            parsed.notes.append(f"{field} not the same for every run ({', '.join(values)}): "
                                "not read")
    names = [f"run{k}" for k in range(1, len(starts) + 1)] if len(starts) > 1 else [""]
    for k, (first, end) in enumerate(spans):
        rows: Rows = [(steps[i], train[i][1]) for i in range(first, end)]
        held = [(steps[i], e) for i, _, e in evals if first <= i < end]
        parsed.runs[names[k]] = merge_by_step(rows + held, average=False)[0] if held else rows
    merged = sum(i >= 0 for i, _, _ in evals)
    if merged:
        parsed.notes.append(f"{merged} evaluation dicts merged into the step logged before them")
    if merged < len(evals):
        parsed.notes.append(f"{len(evals) - merged} evaluation dicts printed before the first "
                            "training dict left out (no step to merge them into)")
    parsed.notes += restart_notes(len(starts))
    return parsed


def _line_numbers(text: str) -> Callable[[int], int]:
    breaks = [m.start() for m in re.finditer("\n", text)]

    def at(offset: int) -> int:
        return bisect_left(breaks, offset) + 1

    return at


# ---------------------------------------------------------------------------- other consoles




def _parse_pairs(path: Path, lines: list[str], step_key: str | None, reward_key: str | None
                 ) -> Parsed | None:
    """Return a hand-written console of ``key=value``, ``key: value`` or ``key value`` lines.

    A record is a line with a step (``step_key``, else a name of ``STEP_NAMES`` in any case)
    that is a whole number and a reward (a name of the metric aliases, or ``reward_key``). A line
    with a step and an evaluation reward joins the record of its step just before it (else is
    its own); other lines with a step are named in a note. Runs appended to one console
    (:func:`restart_starts`) become runs; a step that restarts with each epoch is refused.
    """
    rank = {name.lower(): i for i, name in enumerate(STEP_NAMES)}
    rows: Rows = []
    used: dict[str, set[str]] = {}  # step key -> the totals (n/total) printed with it
    skipped: list[int] = []
    n_eval = 0
    kinds: dict[frozenset[str], tuple[str | None, str]] = {}  # a line's keys -> step key, kind
    for lineno, line in enumerate(lines, start=1):
        pairs: dict[str, tuple[str, str]] = {}  # key -> value, total ("" when none)
        for name, value, total in _PAIR.findall(line):
            pairs.setdefault(name, (value, total))
        names = frozenset(pairs)
        if names not in kinds:
            kinds[names] = (step_key if step_key in names else None if step_key else min(
                (k for k in names if k.lower() in rank), key=lambda k: rank[k.lower()],
                default=None), "reward" if reward_candidates(set(names)) or reward_key in names
                else "eval" if resolve("heldout_reward", set(names)) is not None else "")
        key, kind = kinds[names]
        if key is None:
            continue
        step, entry = number(pairs[key][0]), {k: value for k, (value, _) in pairs.items()}
        if not (kind and math.isfinite(step) and step >= 0 and step.is_integer()):
            skipped.append(lineno)
        elif kind == "eval" and rows and rows[-1][0] == step:  # of the step just logged
            n_eval += 1
            rows[-1] = (step, {**entry, **rows[-1][1]})
        else:
            rows.append((step, entry))
            used.setdefault(key, set()).add(pairs[key][1])
    if not rows:
        return None
    for i in (i for i in range(1, len(rows)) if rows[i][0] < rows[i - 1][0]):
        epochs = [number(next((v for k, v in e.items() if k.lower() == "epoch"), None))
                  for _, e in rows[i - 1:i + 1]]
        if epochs[1] > epochs[0]:
            raise LogFormatError(
                f"{path}: the step counter restarts at each epoch (epoch {epochs[1]:g} begins "
                f"at step {rows[i][0]:g} after step {rows[i - 1][0]:g}): the global step cannot "
                "be read; convert the log to JSON lines or CSV with each record's global step")
    parsed = Parsed("key_value_console", split_restarts(rows))
    parsed.notes.append(f"key=value console: {len(rows)} lines with a step ({', '.join(used)}) "
                        "and a reward (or an evaluation reward) read as records")
    if n_eval:
        parsed.notes.append(f"{n_eval} evaluation line{'s' if n_eval > 1 else ''} (a step and "
                            "an evaluation reward) merged into the record of their step")
    parsed.notes += restart_notes(len(parsed.runs))
    if skipped:
        parsed.notes.append(f"{len(skipped)} line{'s' if len(skipped) > 1 else ''} with a step "
                            "and no reward (or a step that is no whole number) not read "
                            f"(line{'s' if skipped[1:] else ''} {', '.join(map(str, skipped[:3]))}"
                            f"{', ...' if skipped[3:] else ''})")
    totals = set().union(*used.values()) - {""}
    if len(totals) == 1:
        total = int(next(iter(totals)))
        parsed.meta.planned_steps = Hyperparameter(
            total, "inferred", f"the total of the step counter (n/{total}) the console printed")
    return parsed


def parse_text(path: Path, text: str, *, step_key: str | None = None,
               logging_steps: int | None = None, interval_source: str = "given",
               reward_key: str | None = None) -> Parsed:
    """Return a console log of any of the supported trainers.

    ``interval_source`` says where ``logging_steps`` comes from (``given`` by the user, else a file
    name); ``reward_key`` (the user's reward metric) marks a line (a TRL-style dict, verl's,
    key=value) as a record when it holds none of the trainers' reward names.
    """
    fmt = "trl_console"
    inner = _unwrap_stream(path, text)
    if inner is not None:
        text, fmt = inner, "hf_jobs_trl_console"
    text = _ANSI.sub("", text)
    lines = text.splitlines()
    for parser in (lambda: parse_verl(lines), lambda: parse_minimind(lines),
                   lambda: parse_openrlhf_steps(lines), lambda: parse_openrlhf(lines)):
        parsed = parser()
        if parsed is not None and any(reward_candidates(set(entry)) or reward_key in entry
                                      for rows in parsed.runs.values() for _, entry in rows):
            return parsed
    try:
        return _parse_trl(path, text, step_key, logging_steps, fmt, interval_source,
                          reward_key)
    except LogFormatError as exc:
        if "no dict lines" not in str(exc):
            raise
        parsed = parse_tensors(text) or _parse_pairs(path, lines, step_key, reward_key)
        if parsed is None:
            raise LogFormatError(
                f"{exc}, and no line of another console format; read are TRL dict lines "
                "({'reward': ...}), verl 'step:N - key:value' lines, OpenRLHF 'Global step N: "
                "{...}' lines and progress bars (reward= or rm=), MiniMind 'Epoch:[e/E](i/N), "
                "Reward: ...' lines, 'rewards: tensor([...])' lines, and key=value or 'key: "
                "value' lines with a step (step, iter, ...) and a reward (reward, mean_reward, "
                "score, ...) on each line: convert other logs to JSON lines or CSV (a step and a "
                "reward in each record)") from None
        return parsed
