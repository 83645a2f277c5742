"""The registry of log formats: one module per format, in the order they are tried.

Each module under ``empirical/logs/formats/`` has ``sniff(path) -> bool`` and
``parse(path, options) -> Source`` (:class:`~grpodyn.empirical.logs.formats.base.Format`).
:func:`grpodyn.empirical.logs.loaders.load_run` parses a path with the first format of
:data:`FORMATS` that sniffs it. Directory formats come first (a checkpoint before a run of
checkpoints before a W&B run before an MLflow run ..., a folder of plain log files last); file
formats are told apart by name and suffix (W&B's binary run file before the JSON formats, which
would take its ``wandb-summary.json``; a W&B runs table before the other tables), and the
console format, last, takes every other file. A new format is one module and one entry here.
"""

from __future__ import annotations

from grpodyn.empirical.logs.formats import (
    binary,
    checkpoints,
    console,
    json_records,
    jsonl,
    log_folder,
    mlflow_run,
    table,
    tensorboard,
    trainer_checkpoint,
    wandb_binary,
    wandb_folder,
    wandb_run,
    wandb_runs_table,
)
from grpodyn.empirical.logs.formats.base import Format, Options, Source, dispatch

__all__ = ["FORMATS", "Format", "Options", "Source", "dispatch"]

#: The formats in the order they are tried: the first whose ``sniff`` is true parses the path.
FORMATS: list[Format] = [
    trainer_checkpoint,
    checkpoints,
    wandb_run,
    wandb_folder,
    mlflow_run,
    tensorboard,
    log_folder,
    binary,
    wandb_binary,
    jsonl,
    json_records,
    wandb_runs_table,
    table,
    console,
]
