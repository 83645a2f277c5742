"""Console output: TRL dict lines, verl ``step:N - key:value``, OpenRLHF progress bars, others.

The fallback: every file no earlier format claims is read as a console log.
"""

from __future__ import annotations

from pathlib import Path

from grpodyn.empirical.logs.config import meta_beside
from grpodyn.empirical.logs.formats.base import Options, Source, log_text
from grpodyn.empirical.logs.text import parse_text

__all__ = ["parse", "sniff"]


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a file (any file: this format is the last resort)."""
    return path.is_file()


def parse(path: Path, options: Options) -> Source:
    """Return the console's metrics by step.

    Without ``logging_steps`` the logging interval comes from a config file beside the log,
    where one gives it (for consoles that print no step and no progress counter).
    """
    text = log_text(path)
    logging_steps, source = options.logging_steps, "given"
    if logging_steps is None:  # a logging interval in a config file beside the log
        found = meta_beside(path.parent)[0].logging_steps
        if found is not None and isinstance(found.value, int) and found.value > 0:
            logging_steps, source = found.value, found.evidence
    parsed = parse_text(path, text, step_key=options.step_key, logging_steps=logging_steps,
                        interval_source=source, reward_key=options.reward_key)
    return Source(parsed, str(path), [path.parent])
