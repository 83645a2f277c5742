"""A TRL console log whose progress bar is not in step with its dicts still gives its planned
length, and ``grpodyn forecast`` says the run reached it instead of that none is recorded."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.logs.loaders import LogFormatError, load_run


def _console(path, n_dicts: int, interval: int, total: int) -> str:
    """Dict lines without a step, then the finished progress bar printed once at the end."""
    rng = np.random.default_rng(0)
    lines = [f"{{'loss': 0.1, 'reward': {0.3 + 0.002 * i + 0.02 * rng.normal():.4f}, "
             f"'epoch': {i / n_dicts:.3f}}}" for i in range(n_dicts)]
    lines.append(f"100%|##########| {total}/{total} [1:00:00<00:00, 1.00s/it]")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_the_bar_total_is_the_planned_length_where_the_bar_is_not_in_step(tmp_path) -> None:
    run = load_run(_console(tmp_path / "train.log", n_dicts=93, interval=20, total=1875))
    assert run.steps[-1] == 1860 and run.steps_reconstructed
    assert run.meta.value("planned_steps") == 1875
    assert "progress bar" in run.meta.planned_steps.evidence


def test_forecast_says_the_planned_length_is_reached(tmp_path, capsys) -> None:
    log = _console(tmp_path / "train.log", n_dicts=93, interval=20, total=1875)
    assert main(["forecast", log]) == 2
    err = capsys.readouterr().err
    assert "its planned length, step 1875, is reached (its last logged step 1860, logged " \
           "every 20)" in err
    assert "records no planned length" not in err


def test_a_bar_no_interval_fits_is_named_in_the_refusal(tmp_path) -> None:
    """60 dicts and a bar ending at 200/200 fit no whole interval L (60 L <= 200 < 61 L has
    none): the error said "no total step count (final summary, progress bar)" of a log that
    prints one."""
    with pytest.raises(LogFormatError, match=r"its training progress bar ends at 200/200, which "
                       r"no one logging interval fits with 60 logged dicts; give --logging-steps"):
        load_run(_console(tmp_path / "train.log", n_dicts=60, interval=3, total=200))
