"""W&B's binary run file ``run-<id>.wandb`` read; a run's ``wandb-summary.json`` refused.

The run file holds the run's history since wandb 0.10 (``logs.wandb_records`` decodes it);
``wandb-summary.json`` holds only the last value of each metric, so its error says where the
history is.
"""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.common import LogFormatError, Parsed, missing_step_key
from grpodyn.empirical.logs.formats.base import Options, Source, log_suffix
from grpodyn.empirical.logs.records import STEP_NAMES, restart_notes, split_restarts, step_of
from grpodyn.empirical.logs.wandb_records import read_run_file

__all__ = ["parse", "sniff", "SUMMARY", "EXPORT"]

#: The file of a run's last values.
SUMMARY = "wandb-summary.json"

#: How to get a run's history out of W&B, for errors on files that do not hold it.
EXPORT = ("`wandb sync` the run folder and export its history (the run page's history CSV, or "
          "wandb.Api().run('ENTITY/PROJECT/RUN_ID').history())")


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a ``.wandb`` file or a ``wandb-summary.json``."""
    return path.is_file() and (log_suffix(path) == ".wandb" or path.name == SUMMARY)


def _summary_error(path: Path) -> LogFormatError:
    """Return the error of a summary file, naming the run file beside it where there is one."""
    run = path.parent.parent if path.parent.name == "files" else path.parent
    found = sorted(run.glob("run-*.wandb"))
    where = (f"give the run folder {run} (its history is in {found[0].name})" if found else
             f"the history is in the run folder's run-<id>.wandb (give the folder), or {EXPORT}")
    return LogFormatError(f"{path}: W&B's summary holds only the last value of each metric, "
                          f"not a history: {where}")


def parse(path: Path, options: Options) -> Source:
    """Return the run file's history by step (format ``wandb_binary``) and its config.

    The step is the first of ``records.STEP_NAMES`` a row holds (the trainer's
    ``train/global_step`` before W&B's ``_step``), or ``options.step_key``.

    Raises
    ------
    LogFormatError
        For a summary file, a file that is not a W&B run file or is corrupt, and one without
        history records.
    """
    if path.name == SUMMARY:
        raise _summary_error(path)
    found = read_run_file(path)
    if not found.history:
        raise LogFormatError(f"{path}: a W&B run file without history records (the run logged "
                             "no metrics, or the file was cut short before them)")
    rows = []
    for row in found.history:
        key, step = step_of(row, options.step_key)
        if key is not None:
            rows.append((step, row))
    if not rows and options.step_key is not None:
        raise missing_step_key(str(path), options.step_key, found.history)
    if not rows:
        raise LogFormatError(f"{path}: no history record holds a step (looked for "
                             f"{', '.join(STEP_NAMES)}; give --step-key)")
    runs = split_restarts(rows)
    config = {k: v for k, v in found.config.items() if not k.startswith("_wandb")}
    parsed = Parsed("wandb_binary", runs, ecosystem="wandb",
                    notes=found.notes + restart_notes(len(runs)), config=config)
    return Source(parsed, str(path), [path.parent])
