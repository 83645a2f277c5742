"""MLflow's file store: a run folder, an experiment of run folders, or a store of experiments.

The layout mlflow's ``FileStore`` writes (``mlruns/``): ``<experiment id>/meta.yaml`` (its
``name``), and per run ``<experiment id>/<run id>/`` with ``meta.yaml`` (``run_name``,
``lifecycle_stage``), ``metrics/<name>`` (one ``timestamp value step`` line per logged value),
``params/<name>`` (the value as text) and ``tags/``; a name holding ``/`` is a path of folders.
The Trainer's MLflow callback (TRL) logs the Trainer's metric names at the global step and the
training arguments as params; verl's adapter logs its metric names with ``@`` spelled ``_at_``
(read back as ``@``, so that its validation names are found) and its config flattened with
``/`` (read as dotted keys). The params are the run's config, read into hyperparameters as any
config record is (``logs.config``).

An experiment folder of several runs gives one run per run folder, named by its run name; a
store gives its one experiment with runs, or an error naming them.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

from grpodyn.empirical.logs.common import MAX_BYTES, LogFormatError, Parsed, Rows, read_text
from grpodyn.empirical.logs.formats.base import Options, Source

__all__ = ["parse", "sniff", "read_run", "MAX_RUNS", "MAX_METRICS"]

#: The most run folders read as the runs of one experiment.
MAX_RUNS = 64
#: The most metric files read of one run.
MAX_METRICS = 10000

#: Metric names of verl's trainer (the ecosystem whose alias table names them first).
_VERL = ("actor/", "critic/", "val-core/", "val-aux/", "timing_s/", "response_length/")
#: verl's MLflow adapter writes ``mean@4`` as ``mean_at_4``.
_AT = re.compile(r"_at_(\d+)")


def _is_run(path: Path) -> bool:
    """Return whether ``path`` is a run folder: ``metrics/`` with ``params/`` or ``meta.yaml``."""
    return (path / "metrics").is_dir() and ((path / "params").is_dir()
                                            or (path / "meta.yaml").is_file())


def _subfolders(path: Path) -> list[Path]:
    """Return the folders directly inside ``path`` (not hidden), by name."""
    try:
        return sorted(p for p in path.iterdir() if not p.name.startswith(".") and p.is_dir())
    except OSError:
        return []


def _runs_of(path: Path) -> list[Path]:
    """Return the run folders directly inside an experiment folder."""
    return [p for p in _subfolders(path) if _is_run(p)]


def _experiments_of(path: Path) -> list[Path]:
    """Return the experiment folders (with runs) directly inside a store."""
    return [p for p in _subfolders(path) if (p / "meta.yaml").is_file() and _runs_of(p)]


def sniff(path: Path) -> bool:
    """Return whether ``path`` is an MLflow run (or its ``metrics/``), experiment or store."""
    if not path.is_dir():
        return False
    if _is_run(path) or (path.name == "metrics" and _is_run(path.parent)):
        return True
    return bool(_runs_of(path)) or bool(_experiments_of(path))


def _meta_field(folder: Path, key: str) -> str | None:
    """Return a top-level ``key: value`` of a folder's ``meta.yaml`` (no YAML reader needed)."""
    try:
        with (folder / "meta.yaml").open(encoding="utf-8", errors="replace") as stream:
            text = stream.read(65536)
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(f"{key}:"):
            value = line.split(":", 1)[1].strip().strip("'\"")
            return value or None
    return None


def _value(text: str) -> Any:
    """Return a param's text as the value it spells (``True``, ``None``, ``8``, ``1e-06``)."""
    words = {"True": True, "False": False, "None": None}
    if text in words:
        return words[text]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _files(folder: Path) -> list[tuple[str, Path]]:
    """Return (name, file) of the files below ``folder``, names as paths with ``/``.

    Symbolic links to folders are not followed.
    """
    found = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            found.append((path.relative_to(folder).as_posix(), path))
    return found


def _metric_rows(files: list[tuple[str, Path]]) -> tuple[Rows, int]:
    """Return the metrics by step, and how many values a later, different one replaced."""
    by_step: dict[int, dict[str, float]] = {}
    replaced = 0
    for name, file in files:
        for lineno, line in enumerate(read_text(file).splitlines(), start=1):
            if not line.strip():
                continue
            fields = line.split()
            try:
                if len(fields) != 3:
                    raise ValueError
                value, step = float(fields[1]), int(fields[2])
            except ValueError:
                raise LogFormatError(f"{file}:{lineno}: not an MLflow metric line (expected "
                                     "'timestamp value step')") from None
            row = by_step.setdefault(step, {})
            earlier = row.get(name)
            replaced += earlier is not None and earlier != value and not (
                math.isnan(earlier) and math.isnan(value))
            row[name] = value
    return [(float(step), by_step[step]) for step in sorted(by_step)], replaced


def _ecosystem(names: set[str], params: dict[str, Any]) -> str:
    """Return whose alias table names the run's metrics first."""
    if any(name.startswith(_VERL) for name in names):
        return "verl"
    if "num_generations" in params or any(n.startswith(("completions/", "rewards/"))
                                          for n in names):
        return "trl"
    return "custom"


def read_run(path: Path) -> tuple[Rows, dict[str, Any], str, list[str]]:
    """Return a run folder's rows by step, its params (dotted keys), ecosystem and notes.

    Raises
    ------
    LogFormatError
        When the run logged no metric, has more than :data:`MAX_METRICS` metric files or more
        than ``common.MAX_BYTES`` of them, or a metric line is malformed (naming it).
    """
    metrics = _files(path / "metrics")
    if not metrics:
        raise LogFormatError(f"{path}: an MLflow run without metrics (metrics/ is empty)")
    if len(metrics) > MAX_METRICS:
        raise LogFormatError(f"{path}: an MLflow run of {len(metrics)} metric files, more than "
                             f"the {MAX_METRICS} read")
    size = sum(file.stat().st_size for _, file in metrics)
    if size > MAX_BYTES:
        raise LogFormatError(f"{path}: its metric files hold {size} bytes, more than the "
                             f"{MAX_BYTES} byte limit")
    params = {name.replace("/", "."): _value(read_text(file).strip())
              for name, file in _files(path / "params")}
    rows, replaced = _metric_rows(metrics)
    names = {name for name, _ in metrics}
    ecosystem = _ecosystem(names, params)
    notes = [] if not replaced else [
        f"metric values logged again at their step with another value ({replaced}): the last "
        "one read"]
    if ecosystem == "verl" and any(_AT.search(name) for name in names):
        rows = [(step, {_AT.sub(r"@\1", name): v for name, v in row.items()})
                for step, row in rows]
        notes.append("verl's MLflow names spell '@' as '_at_': read as '@' "
                     "(val-core/<source>/<var>/mean@<n>)")
    return rows, params, ecosystem, notes


def _run_name(run: Path, taken: set[str]) -> str:
    """Return a run's name in its experiment: its run name, with its id where one is taken."""
    name = _meta_field(run, "run_name") or run.name
    return f"{name} ({run.name})" if name in taken else name


def _experiment(path: Path) -> Parsed:
    """Return an experiment's runs, one per run folder, each with its params."""
    folders = _runs_of(path)
    deleted = [p for p in folders if _meta_field(p, "lifecycle_stage") == "deleted"]
    folders = [p for p in folders if p not in deleted]
    if not folders:
        raise LogFormatError(f"{path}: an MLflow experiment whose {len(deleted)} runs are all "
                             "deleted: give one run's folder to read it")
    if len(folders) > MAX_RUNS:
        raise LogFormatError(f"{path}: an MLflow experiment of {len(folders)} runs, more than "
                             f"the {MAX_RUNS} read together: give one run's folder")
    runs: dict[str, Rows] = {}
    configs: dict[str, dict[str, Any]] = {}
    ecosystems: dict[str, str] = {}
    notes = []
    for folder in folders:
        name = _run_name(folder, set(runs))
        runs[name], configs[name], ecosystems[name], run_notes = read_run(folder)
        notes += [f"{name}: {note}" for note in run_notes]
    if len(set(ecosystems.values())) > 1:
        shown = ", ".join(f"{name} ({kind})" for name, kind in ecosystems.items())
        raise LogFormatError(f"{path}: an MLflow experiment whose runs come from different "
                             f"trainers ({shown}): give one run's folder")
    title = _meta_field(path, "name")
    notes.insert(0, f"an MLflow experiment{f' {title!r}' if title else ''}: "
                    + ("its one run" if len(runs) == 1 else f"{len(runs)} runs, one per run "
                       "folder, named by their run names"))
    if deleted:
        notes.append(f"deleted runs left out ({len(deleted)}): "
                     f"{', '.join(p.name for p in deleted)}")
    first = next(iter(configs.values()))
    shared = {key: value for key, value in first.items()
              if all(key in c and c[key] == value for c in configs.values())}
    return Parsed("mlflow", runs, ecosystem=next(iter(ecosystems.values())), notes=notes,
                  config=shared, run_configs=configs)


def _store(path: Path, options: Options) -> Source:
    """Return the one experiment with runs of a store, or refuse naming them."""
    experiments = _experiments_of(path)
    if len(experiments) > 1:
        shown = ", ".join(f"{p.name} {_meta_field(p, 'name')!r}: runs {len(_runs_of(p))}"
                          for p in experiments)
        raise LogFormatError(f"{path}: an MLflow store of {len(experiments)} experiments with "
                             f"runs ({shown}): give one experiment's folder or one run's")
    source = parse(experiments[0], options)
    source.parsed.notes.insert(0, f"an MLflow store: read its one experiment with runs, "
                                  f"{experiments[0].name} "
                                  f"{_meta_field(experiments[0], 'name')!r}")
    return source


def parse(path: Path, options: Options) -> Source:
    """Return a run folder's metrics by step with its params as config, or an experiment's runs.

    Raises
    ------
    LogFormatError
        When a metric line is malformed, a store holds several experiments with runs, or an
        experiment's runs are too many or come from different trainers (each naming them).
    """
    if path.name == "metrics" and _is_run(path.parent) and not _is_run(path):
        source = parse(path.parent, options)
        source.parsed.notes.append(f"the metrics/ folder of an MLflow run: read the run "
                                   f"{path.parent.name}")
        return source
    if _is_run(path):
        rows, params, ecosystem, notes = read_run(path)
        parsed = Parsed("mlflow", {"": rows}, ecosystem=ecosystem, notes=notes, config=params)
        return Source(parsed, str(path), [path])
    if _runs_of(path):
        return Source(_experiment(path), str(path), [path])
    return _store(path, options)
