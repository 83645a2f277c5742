"""Console output: TRL dict lines, verl ``step:N - key:value``, OpenRLHF progress bars, others.

The fallback: every file no earlier format claims is read as a console log. A console without a
config record of its own (verl prints one) may print its settings as lines such as
``num_generations: 8`` or ``kl_coef=0.001`` (a header, an argparse ``Namespace(...)``, Hydra
overrides ``+a.b.n=8``, flags ``--num_generations=8``): its group size G and KL coefficient are
read from those, under the names config files give them (``logs_config.CONFIG_KEYS``), with
the evidence "a line the console printed"; a config file beside the log ranks above them.
"""

from __future__ import annotations

import re
from pathlib import Path

from grpodyn.empirical.logs.common import Parsed, number
from grpodyn.empirical.logs.config import CONFIG_KEYS, meta_beside, meta_from_config
from grpodyn.empirical.logs.formats.base import Options, Source, log_text
from grpodyn.empirical.logs.text import parse_text

__all__ = ["parse", "sniff"]

#: The settings read from printed lines: G and the KL coefficient, which the theory needs and
#: a custom console prints more often than any config file holds them.
_PRINTED_FIELDS = ("group_size", "kl")

#: Their names, less a bare ``beta``: TRL's name for the KL coefficient, but on a console as
#: often Adam's or an EMA's (``Optimizer: Adam, beta: 0.9``).
_NAMES = sorted({name for field in _PRINTED_FIELDS for name in CONFIG_KEYS[field]} - {"beta"},
                key=len, reverse=True)

#: Where a printed key may begin: a line's start, a space, ``(``, ``,``, ``;``, ``|``, ``[``,
#: ``{``, a Hydra ``+`` or a flag's ``--``; never inside a word such as ``adam_beta1`` or a
#: metric path such as ``actor/kl_coef``, never a quoted dict key.
_KEY_START = r"(?:(?<![^\s(,;|\[{])|(?<=\+)|(?<=--))((?:[A-Za-z_]\w*\.)*(?:"

#: ``name: value``, ``name=value`` or ``name = value``: one of the names, or one ending in it
#: after a dot (``actor_rollout_ref.rollout.n``), then a number (a sentence's full stop may
#: follow it).
_PRINTED = re.compile(_KEY_START + "|".join(re.escape(name) for name in _NAMES)
                      + r"))\s*[:=]\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w/]|\.\d)")

#: verl's switches of its two KL terms, printed beside their coefficients (``kl_loss_coef``,
#: ``kl_ctrl.kl_coef``): the coefficient is that of the term switched on, none with both off
#: (``logs_config.meta_from_config``).
_KL_LOSS_SWITCH = re.compile(_KEY_START + r"use_kl_loss|use_kl_in_reward))\s*[:=]\s*"
                             r"(True|False|true|false)\b")


def sniff(path: Path) -> bool:
    """Return whether ``path`` is a file (any file: this format is the last resort)."""
    return path.is_file()


def _printed_settings(text: str) -> tuple[dict[str, str | bool], list[str]]:
    """Return the G and KL settings the console prints, as a flat config, and notes.

    A key printed with two different values (an adaptive KL coefficient printed at each step,
    two runs in one file) says no one setting, so it is left out with a note.

    Parameters
    ----------
    text : str
        The console's text.

    Returns
    -------
    settings : dict of str to str or bool
        Printed key -> its one value as printed (``use_kl_loss``: a bool), for
        ``logs_config.meta_from_config``.
    notes : list of str
        One per key left out, with the values it was printed with.
    """
    seen: dict[str, dict[float, str]] = {}
    for match in _PRINTED.finditer(text):
        key, value = match.groups()
        seen.setdefault(key, {}).setdefault(number(value), value)
    settings: dict[str, str | bool] = {}
    notes = []
    for key, values in seen.items():
        if len(values) == 1:
            settings[key] = next(iter(values.values()))
        else:
            shown = list(values.values())
            notes.append(f"{key} printed with {len(shown)} values ({', '.join(shown[:3])}"
                         f"{', ...' if len(shown) > 3 else ''}): not read as the run's setting")
    switches = {m.group(1): m.group(2).lower() == "true" for m in _KL_LOSS_SWITCH.finditer(text)}
    return {**settings, **switches}, notes


def _against_planned_length(parsed: Parsed, logging_steps: int) -> list[str]:
    """Return a note where a given logging interval disagrees with the run's planned length.

    Steps rebuilt as the points' order times ``logging_steps`` cannot pass the total that the
    log's own training progress counter or bar printed (``planned_steps``): an interval that
    puts them there contradicts the log, and every step-based number read from it (tau, the
    forecast's steps) is stretched by the same factor. An interval that puts them short of half
    the planned length (twice the interval would still fit) is said too: the run stopped
    early, or the interval is too small and every step-based number shrinks by its factor;
    the log alone cannot tell which.

    Parameters
    ----------
    parsed : Parsed
        The console parsed with the given interval.
    logging_steps : int
        The interval the user gave (``--logging-steps``).

    Returns
    -------
    list of str
        One note naming both, or none.
    """
    planned = parsed.meta.planned_steps
    if not parsed.steps_reconstructed or planned is None or not isinstance(
            planned.value, (int, float)):
        return []
    steps = [step for rows in parsed.runs.values() for step, _ in rows]
    if not steps:
        return []
    points = max(len(rows) for rows in parsed.runs.values())
    widest = int(planned.value // points)  # the most steps between points that fit the plan
    placed = (f"logging_steps {logging_steps} (given) puts the {points} logged points at steps "
              f"{min(steps):g}-{max(steps):g}")
    if max(steps) > planned.value:
        return [f"{placed}, past the run's planned {planned.value:g} steps "
                f"({planned.evidence}): the given interval contradicts the log (at most "
                f"{widest} steps between points); check --logging-steps"]
    if widest >= 2 * logging_steps:
        return [f"{placed}, short of half the run's planned {planned.value:g} steps "
                f"({planned.evidence}): the run stopped early, or the interval is larger than "
                f"given (up to {widest} steps between points would reach the planned end); "
                "check --logging-steps"]
    return []


def parse(path: Path, options: Options) -> Source:
    """Return the console's metrics by step, with the G and KL settings it prints.

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
    if options.logging_steps is not None:
        parsed.notes += _against_planned_length(parsed, options.logging_steps)
    if not parsed.config:  # no config record of its own: the settings its lines print
        settings, notes = _printed_settings(text)
        printed = meta_from_config(settings, f"file:{path.name}", "a line the console printed")
        for field in _PRINTED_FIELDS:
            if getattr(parsed.meta, field) is None:
                setattr(parsed.meta, field, getattr(printed, field))
        parsed.notes += notes
    return Source(parsed, str(path), [path.parent])
