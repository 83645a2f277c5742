"""A mistyped log path is refused before the command imports its numerics."""

from __future__ import annotations

import subprocess
import sys

import pytest

from grpodyn.cli import main


@pytest.mark.parametrize("argv", [["diagnose", "{p}"], ["advise", "--log", "{p}"],
                                  ["fit", "{p}"], ["forecast", "{p}"], ["runs", "{p}"]])
def test_a_missing_log_is_one_line_and_exit_2(argv, tmp_path, capsys):
    path = str(tmp_path / "no_such_log.jsonl")
    assert main([a.format(p=path) for a in argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"grpodyn: error: {path}: no such file or directory"]


def test_a_missing_log_is_refused_without_importing_scipy(tmp_path):
    code = ("import sys; from grpodyn.cli import main; "
            f"code = main(['advise', '--log', {str(tmp_path / 'x.jsonl')!r}]); "
            "print(code, 'scipy.optimize' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["2", "False"]
