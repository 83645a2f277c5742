"""Loaders of GRPO training logs, one per format, behind :func:`load_run`.

Formats: TRL ``trainer_state.json`` (``log_history``), TRL console logs (one dict literal
per logged step; steps are reconstructed and flagged), wide CSV and JSONL of step-wise metrics,
Weights & Biases CSV exports (``<run> - <metric>`` columns), long-format CSV
(``run, step, metric, value``), and TensorBoard event files (a ``*tfevents*`` file or a folder
of them; needs the ``tensorboard`` extra). Every loader returns a :class:`Run`. Nothing here
evaluates text: dict literals are read by walking their syntax tree, and malformed input
raises :class:`LogFormatError` naming the file and, where there is one, the line.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Run", "LogFormatError", "load_run", "list_runs", "METRIC_ALIASES"]

#: Canonical metric name -> names used by TRL, verl, OpenRLHF and W&B exports (first found wins).
METRIC_ALIASES: dict[str, tuple[str, ...]] = {
    "reward": ("reward", "train/reward", "rewards/mean", "critic/score/mean", "train/rewards"),
    "reward_std": ("reward_std", "train/reward_std", "rewards/std"),
    "frac_reward_zero_std": ("frac_reward_zero_std", "train/frac_reward_zero_std",
                             "zero_std_ratio"),
    "entropy": ("entropy", "train/entropy", "actor/entropy"),
    "kl": ("kl", "train/kl", "actor/kl_loss"),
    "completion_length": ("completion_length", "completions/mean_length",
                          "train/completion_length", "train/mean_response_length",
                          "response_length/mean"),
    "learning_rate": ("learning_rate", "train/learning_rate", "lr", "actor/lr"),
    "heldout_reward": ("eval/reward", "eval_reward", "eval/rewards", "val/reward",
                       "test_score"),
}
_STEP_NAMES = ("step", "Step", "global_step", "_step", "train/global_step", "trainer/global_step")
_MAX_BYTES = 512 * 2**20


class LogFormatError(ValueError):
    """A log cannot be read; the message names the file, the line where known, and the problem."""


@dataclass
class Run:
    """One training run: steps, reward and the other metrics found, aligned on the steps.

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
        Canonical metrics (see ``METRIC_ALIASES``) aligned on ``steps``, NaN where not logged.
    hyperparameters : dict
        Hyperparameters found in the log or a config beside it (G, lr, ...).
    steps_reconstructed : bool
        True when the log has no step field and steps are the line order.
    warnings : list of str
        Repairs applied while loading (dropped duplicate steps, non-finite values, ...).
    """

    source: str
    format: str
    steps: np.ndarray
    reward: np.ndarray
    metrics: dict[str, np.ndarray]
    reward_key: str = "reward"
    run_name: str | None = None
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    steps_reconstructed: bool = False
    warnings: list[str] = field(default_factory=list)

    @property
    def n_points(self) -> int:
        return int(self.steps.size)

    def to_pandas(self):
        """The run as a pandas DataFrame indexed by step (pandas is an optional dependency)."""
        import pandas as pd

        return pd.DataFrame({"reward": self.reward, **self.metrics},
                            index=pd.Index(self.steps, name="step"))

    @classmethod
    def from_pandas(cls, frame, *, source: str = "<DataFrame>") -> Run:
        """A run from a DataFrame with a ``step`` column (or index) and metric columns."""
        table = frame.reset_index() if "step" not in frame.columns else frame
        if "step" not in table.columns:
            raise LogFormatError(f"{source}: no 'step' column or index")
        metric_columns = [c for c in table.columns if c != "step"]
        rows = [(_number(row["step"]), {c: row[c] for c in metric_columns})
                for _, row in table.iterrows()]
        return _assemble(source, "pandas", rows)


def _number(value: Any) -> float:
    """A float from a number or numeric string; NaN for anything else."""
    if isinstance(value, bool):
        return math.nan
    try:
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            return float(value.strip())
    except (ValueError, OverflowError):  # not a number, or an integer beyond float range
        return math.nan
    return math.nan


def _assemble(source: str, fmt: str, rows: list[tuple[float, dict[str, Any]]], *,
              run_name: str | None = None, steps_reconstructed: bool = False,
              hyperparameters: dict[str, Any] | None = None) -> Run:
    """Build a Run from (step, {metric: value}) rows; repairs are recorded as warnings."""
    warnings: list[str] = []
    finite_steps = [(s, r) for s, r in rows if math.isfinite(s)]
    if not finite_steps:
        raise LogFormatError(f"{source}: no logged step with a finite step number")
    if len(finite_steps) < len(rows):
        warnings.append(f"{len(rows) - len(finite_steps)} entries without a finite step "
                        "number dropped")
    rows = finite_steps
    available = set().union(*(r.keys() for _, r in rows))
    reward_key = next((k for k in METRIC_ALIASES["reward"] if k in available), None)
    if reward_key is None:
        reward_key = next((k for k in METRIC_ALIASES["heldout_reward"] if k in available), None)
        if reward_key is None:
            raise LogFormatError(f"{source}: no reward metric found (looked for "
                                 f"{', '.join(METRIC_ALIASES['reward'])}); metrics present: "
                                 f"{', '.join(sorted(available)[:12])}")
        warnings.append(f"no training reward: fitting {reward_key!r} instead")
    rows = [(s, r) for s, r in rows if reward_key in r]
    steps = np.array([s for s, _ in rows], dtype=float)
    order = np.argsort(steps, kind="stable")
    if np.any(steps[1:] < steps[:-1]):
        warnings.append("steps were not increasing: sorted by step")
    steps, rows = steps[order], [rows[i] for i in order]
    keep = np.ones(steps.size, dtype=bool)
    keep[1:] = steps[1:] != steps[:-1]
    if not keep.all():
        warnings.append(f"{int((~keep).sum())} duplicate steps: kept the first of each")
    steps, rows = steps[keep], [r for r, k in zip(rows, keep, strict=True) if k]

    def column(key: str) -> np.ndarray:
        return np.array([_number(r.get(key)) for _, r in rows], dtype=float)

    reward = column(reward_key)
    finite = np.isfinite(reward)
    if not finite.all():
        warnings.append(f"{int((~finite).sum())} points with a missing or non-finite reward "
                        "dropped")
        steps, reward, rows = steps[finite], reward[finite], [r for r, f in
                                                               zip(rows, finite, strict=True) if f]
    if steps.size == 0:
        raise LogFormatError(f"{source}: no finite value of {reward_key!r}")
    metrics = {}
    for name, aliases in METRIC_ALIASES.items():
        key = next((k for k in aliases if k in available and k != reward_key), None)
        if key is not None:
            values = column(key)
            values[~np.isfinite(values)] = np.nan
            if np.isfinite(values).any():
                metrics[name] = values
    return Run(source=source, format=fmt, steps=steps, reward=reward, metrics=metrics,
               reward_key=reward_key, run_name=run_name, hyperparameters=hyperparameters or {},
               steps_reconstructed=steps_reconstructed, warnings=warnings)


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise LogFormatError(f"{path}: cannot read ({exc.strerror})") from None
    if size > _MAX_BYTES:
        raise LogFormatError(f"{path}: {size} bytes is larger than the {_MAX_BYTES} byte limit")
    raw = path.read_bytes()
    for encoding in ("utf-8-sig", "utf-16"):
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding == "utf-16" and raw[:2] not in (b"\xff\xfe", b"\xfe\xff"):
            continue
        return text
    raise LogFormatError(f"{path}: not UTF-8 or UTF-16 text")


def _load_trainer_state(path: Path, data: dict) -> Run:
    history = data.get("log_history")
    if not isinstance(history, list):
        raise LogFormatError(f"{path}: 'log_history' is missing or not a list")
    rows = []
    for index, entry in enumerate(history):
        if not isinstance(entry, dict):
            raise LogFormatError(f"{path}: log_history[{index}] is not an object")
        if "step" not in entry:
            continue
        rows.append((_number(entry["step"]), entry))
    hyper = _hyperparameters_beside(path)
    for own in ("grpodyn_settings", "grpodyn_bandit_config"):  # logs grpodyn itself wrote
        settings = data.get(own)
        if isinstance(settings, dict) and isinstance(settings.get("group_size"), int):
            hyper.setdefault("G", settings["group_size"])
    return _assemble(str(path), "trl_trainer_state", rows, hyperparameters=hyper)


def _hyperparameters_beside(path: Path) -> dict[str, Any]:
    """G, lr, betas, num_iterations, KL beta from a training_args.json or config.json beside."""
    found: dict[str, Any] = {}
    names = {"num_generations": "G", "learning_rate": "lr", "adam_beta1": "beta1",
             "adam_beta2": "beta2", "num_iterations": "num_iterations", "beta": "beta_kl",
             "per_device_train_batch_size": "batch_size", "warmup_steps": "warmup_steps"}
    for candidate in ("training_args.json", "config.json", "grpo_config.json"):
        file = path.parent / candidate
        if not file.is_file():
            continue
        try:
            config = json.loads(file.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(config, dict):
            for key, name in names.items():
                if key in config and name not in found:
                    found[name] = config[key]
    return found


def _literal_dict(text: str) -> dict[str, Any] | None:
    """A dict literal of string keys and scalar values, read without evaluating code."""
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
            out[key.value] = -_number(value.operand.value)
        elif isinstance(value, ast.Constant):
            out[key.value] = value.value
        else:
            out[key.value] = None
    return out


def _load_console(path: Path, text: str) -> Run:
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not (stripped.startswith("{") and stripped.endswith("}")):
            continue
        entry = _literal_dict(stripped)
        if entry is None:
            raise LogFormatError(f"{path}:{lineno}: a dict line that is not a literal dict")
        if any(k in entry for k in METRIC_ALIASES["reward"]):
            step = _number(entry["step"]) if "step" in entry else float(len(rows) + 1)
            rows.append((step, entry))
    if not rows:
        raise LogFormatError(f"{path}: no dict lines with a reward")
    reconstructed = not any("step" in r for _, r in rows)
    run = _assemble(str(path), "trl_console", rows, steps_reconstructed=reconstructed)
    if reconstructed:
        run.warnings.append("no step field: steps reconstructed from the line order "
                            "(assumes logging_steps = 1)")
    return run


def _table_rows(path: Path, text: str) -> tuple[list[str], list[list[str]]]:
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    try:
        header = next(reader)
    except StopIteration:
        raise LogFormatError(f"{path}: empty file") from None
    except csv.Error as exc:
        raise LogFormatError(f"{path}:1: not a readable table ({exc})") from None
    body = []
    lineno = 1
    try:
        for lineno, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise LogFormatError(f"{path}:{lineno}: {len(row)} fields, the header has "
                                     f"{len(header)}")
            body.append(row)
    except csv.Error as exc:
        raise LogFormatError(f"{path}:{lineno + 1}: not a readable table ({exc})") from None
    return [h.strip() for h in header], body


def _runs_of_long_csv(path: Path, header: list[str], body: list[list[str]]
                      ) -> dict[str, list[tuple[float, dict[str, Any]]]]:
    col = {name.lower(): i for i, name in enumerate(header)}
    run_col = col.get("run", col.get("run_name"))
    by_run: dict[str, dict[float, dict[str, Any]]] = {}
    for row in body:
        name = row[run_col] if run_col is not None else "run"
        step = _number(row[col["step"]])
        by_run.setdefault(name, {}).setdefault(step, {})[row[col["metric"]].strip()] = \
            row[col["value"]]
    return {name: sorted(steps.items()) for name, steps in by_run.items()}


def _wide_rows(path: Path, header: list[str], body: list[list[str]]
               ) -> tuple[list[tuple[float, dict[str, Any]]], str, str | None]:
    step_col = next((header.index(n) for n in _STEP_NAMES if n in header), None)
    if step_col is None:
        raise LogFormatError(f"{path}: no step column (looked for {', '.join(_STEP_NAMES)})")
    names, fmt, run_name = list(header), "csv", None
    if any(" - " in h for h in header):  # W&B export: "<run> - <metric>", with __MIN/__MAX
        fmt = "wandb_csv"
        for i, h in enumerate(header):
            if " - " in h:
                run_name, metric = h.rsplit(" - ", 1)
                names[i] = "" if metric.endswith(("__MIN", "__MAX")) else metric
    rows = []
    for row in body:
        entry = {names[i]: v for i, v in enumerate(row) if i != step_col and names[i] and
                 v.strip() != ""}
        rows.append((_number(row[step_col]), entry))
    return rows, fmt, run_name


def _load_jsonl(path: Path, text: str) -> Run:
    rows = []
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
        step_key = next((n for n in _STEP_NAMES if n in entry), None)
        if step_key is None:
            raise LogFormatError(f"{path}:{lineno}: no step field")
        rows.append((_number(entry[step_key]), entry))
    return _assemble(str(path), "jsonl", rows)


def _load_tensorboard(path: Path) -> Run:
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError:
        raise LogFormatError(f"{path}: a TensorBoard event file; reading it needs the "
                             "tensorboard package (pip install grpodyn[tensorboard])") from None
    accumulator = EventAccumulator(str(path), size_guidance={"scalars": 0})
    try:
        accumulator.Reload()
    except Exception as exc:  # corrupt records surface as several exception types
        raise LogFormatError(f"{path}: not a readable TensorBoard event file ({exc})") from None
    by_step: dict[float, dict[str, float]] = {}
    for tag in accumulator.Tags().get("scalars", []):
        for event in accumulator.Scalars(tag):
            by_step.setdefault(float(event.step), {})[tag] = float(event.value)
    if not by_step:
        raise LogFormatError(f"{path}: no scalar summaries in the event file")
    return _assemble(str(path), "tensorboard", sorted(by_step.items()))


def list_runs(path: str | Path) -> list[str]:
    """Names of the runs in a multi-run (long-format) CSV; one empty name for other formats."""
    path = Path(path)
    text = _read_text(path)
    if path.suffix.lower() in {".csv", ".tsv"}:
        header, body = _table_rows(path, text)
        if {"metric", "value", "step"} <= {h.lower() for h in header}:
            return list(_runs_of_long_csv(path, header, body))
    return [""]


def load_run(path: str | Path, *, run: str | None = None) -> Run:
    """Load a training log, detecting its format.

    Parameters
    ----------
    path
        The log file.
    run
        For a long-format CSV with several runs, which one; default: the run with the most
        reward points.

    Raises
    ------
    LogFormatError
        When the file cannot be read or has no usable reward series.
    """
    path = Path(path)
    if path.is_dir() and any(path.glob("*tfevents*")):
        return _load_tensorboard(path)
    if not path.is_file():
        raise LogFormatError(f"{path}: no such file")
    if "tfevents" in path.name:
        return _load_tensorboard(path)
    text = _read_text(path)
    if not text.strip():
        raise LogFormatError(f"{path}: empty file")
    stripped = text.lstrip()
    if path.suffix.lower() == ".jsonl":
        return _load_jsonl(path, text)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LogFormatError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # e.g. a huge integer, deep nesting
            raise LogFormatError(f"{path}: not valid JSON ({type(exc).__name__}: "
                                 f"{str(exc)[:80]})") from None
        if isinstance(data, dict) and "log_history" in data:
            return _load_trainer_state(path, data)
        raise LogFormatError(f"{path}: a JSON file without 'log_history' (not a TRL "
                             "trainer_state.json)")
    if path.suffix.lower() in {".csv", ".tsv"}:
        header, body = _table_rows(path, text)
        if {"metric", "value", "step"} <= {h.lower() for h in header}:
            runs = _runs_of_long_csv(path, header, body)
            if not runs:
                raise LogFormatError(f"{path}: a long-format table with no rows")
            if run is None:
                def n_reward(rows: list) -> int:
                    return sum(any(k in r for k in METRIC_ALIASES["reward"]
                                   + METRIC_ALIASES["heldout_reward"]) for _, r in rows)
                run = max(runs, key=lambda name: n_reward(runs[name]))
            if run not in runs:
                raise LogFormatError(f"{path}: no run named {run!r}; runs: {', '.join(runs)}")
            return _assemble(str(path), "long_csv", runs[run], run_name=run)
        rows, fmt, run_name = _wide_rows(path, header, body)
        return _assemble(str(path), fmt, rows, run_name=run_name)
    if stripped.startswith("{"):  # JSON lines without the .jsonl suffix
        first = stripped.splitlines()[0]
        try:
            json.loads(first)
            return _load_jsonl(path, text)
        except ValueError:
            pass
    return _load_console(path, text)
