"""The README's promises: its commands and options exist, its Python tour's names resolve."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import grpodyn
from grpodyn.cli import build_parser

README = (Path(__file__).parents[1] / "README.md").read_text()


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_line_of_the_readme_parses_its_options():
    """Each ``$ grpodyn COMMAND ...`` line and each `grpodyn COMMAND [--opt ...]` synopsis:
    the command exists and every --option it shows belongs to it."""
    commands = _commands()
    lines = re.findall(r"^\$ grpodyn (.+)$", README, flags=re.M)
    lines += re.findall(r"`grpodyn ([a-z]+ [^`]*)`", README)
    assert len(lines) > 10
    for line in lines:
        name, *rest = line.split()
        if name.startswith("-"):
            assert name in ("--version", "--help", "-h"), line
            continue
        assert name in commands, f"README names an unknown command: grpodyn {line}"
        known = set(commands[name]._option_string_actions)
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", " ".join(rest)):
            assert option in known, f"grpodyn {name} has no {option} (README: {line})"


def test_the_readme_lists_every_command():
    """The commands table has a row for every command."""
    listed = set(re.findall(r"^\| `grpodyn ([a-z]+)\b", README, flags=re.M))
    assert listed == set(_commands())


def test_the_python_tour_uses_names_that_exist():
    tour = "\n".join(re.findall(r"```python\n(.*?)```", README, flags=re.S))
    names = set(re.findall(r"\bgrpodyn\.([A-Za-z_]+)\b", tour)) - {"empirical", "theory",
                                                                     "numerics"}
    assert {"MeanFieldMap", "analyse_run", "diagnose", "Monitor"} <= names
    for name in names:
        assert hasattr(grpodyn, name), f"README tour: grpodyn.{name} does not exist"


def _tour_commands() -> list[tuple[list[str], list[str]]]:
    """Each ``$ grpodyn ...`` line of the README's console blocks with the lines it shows."""
    commands: list[tuple[list[str], list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", README, flags=re.S):
        log = re.search(r"^\$ LOG=(\S+)$", block, flags=re.M)
        for line in block.splitlines():
            if line.startswith("$ grpodyn "):
                argv = line[len("$ grpodyn "):].split("#")[0].split()
                commands.append(([log.group(1) if a == "$LOG" else a for a in argv], []))
            elif commands and not line.startswith("$"):
                commands[-1][1].append(line)
    return commands


def test_the_console_tour_shows_what_the_commands_print(capsys):
    """Every line the tour shows is printed by its command, in that order ("..." marks lines
    left out, or the cut end or start of a line); the main job and export are left out here."""
    from grpodyn.cli import main

    commands = [(argv, shown) for argv, shown in _tour_commands()
                if argv[0] not in ("report", "export")]
    assert len(commands) >= 6
    root = Path(__file__).parents[1]
    for argv, shown in commands:
        argv = [str(root / a) if a.startswith("tests/") else a for a in argv]
        assert main(argv) == 0, argv
        printed = capsys.readouterr().out.splitlines()
        at = 0
        for line in shown:
            text = line.removesuffix("...").removeprefix("...").strip()
            if not text:
                continue
            hits = [i for i in range(at, len(printed)) if text in printed[i]]
            assert hits, f"grpodyn {' '.join(argv[:2])}: the README shows {line!r}"
            at = hits[0] + 1
