"""Console logs that hold several runs, several progress bars, or hand-written key=value lines."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grpodyn.empirical.logs.common import LogFormatError
from grpodyn.empirical.logs.loaders import load_run, load_runs


def _verl(lr: float, steps: range, *, n: int = 8, config: bool = True, seed: int = 0
          ) -> list[str]:
    """A verl console run: its printed config, then one line per step."""
    rng = np.random.default_rng(seed)
    out = []
    if config:
        out.append(f"(TaskRunner pid=1) {{'actor_rollout_ref': {{'actor': {{'optim': "
                   f"{{'lr': {lr}}}}}, 'rollout': {{'n': {n}}}}}}}")
    for s in steps:
        r = 0.7 - 0.6 * math.exp(-s / 20) + rng.normal(0, 0.02)
        out.append(f"(TaskRunner pid=1) step:{s} - actor/lr:{lr} - actor/entropy:0.5 - "
                   f"critic/score/mean:{r:.4f} - response_length/mean:500.0")
    return out


def _write(tmp_path, name: str, lines: list[str], end: str = "\n"):
    path = tmp_path / name
    path.write_text(end.join(lines) + "\n")
    return path


def test_verl_runs_appended_to_one_console_become_two_runs(tmp_path):
    path = _write(tmp_path, "two.log", _verl(1e-6, range(1, 101)) + _verl(5e-6, range(1, 101),
                                                                           seed=1))
    runs = load_runs(path)
    assert [r.run_name for r in runs] == ["run1", "run2"]
    assert [r.n_points for r in runs] == [100, 100]
    assert [r.meta.value("lr") for r in runs] == [1e-6, 5e-6]
    assert all(r.meta.value("group_size") == 8 for r in runs)  # the same in both configs
    assert all(not any("distinct step" in w for w in r.warnings) for r in runs)
    assert any("restarts 1 time" in w and "2 runs" in w for w in runs[0].warnings)
    assert any("differ" in w and "actor_rollout_ref.actor.optim.lr" in w
               for w in runs[0].warnings)


def test_verl_runs_with_different_group_sizes_read_each_its_own_config(tmp_path):
    path = _write(tmp_path, "two.log", _verl(1e-6, range(1, 41), n=8)
                  + _verl(1e-6, range(1, 41), n=16))
    runs = load_runs(path)
    assert len(runs) == 2
    assert [r.meta.value("group_size") for r in runs] == [8, 16]
    assert all(r.meta.group_size.source == "file:two.log" for r in runs)
    assert any("actor_rollout_ref.rollout.n" in w and "8, 16" in w and "its own" in w
               for w in runs[0].warnings)


def test_verl_run_without_a_config_reads_what_the_others_share(tmp_path):
    path = _write(tmp_path, "three.log", _verl(1e-6, range(1, 41), n=8)
                  + _verl(1e-6, range(1, 41), n=16)
                  + _verl(1e-6, range(1, 41), config=False))
    runs = load_runs(path)
    assert [r.meta.value("group_size") for r in runs] == [8, 16, None]
    assert any("run3 printed no config" in w for w in runs[2].warnings)


def test_verl_run_without_a_config_of_its_own_is_named(tmp_path):
    path = _write(tmp_path, "two.log", _verl(1e-6, range(1, 41))
                  + _verl(1e-6, range(1, 41), config=False))
    runs = load_runs(path)
    assert len(runs) == 2
    assert any("run2 printed no config" in w for w in runs[1].warnings)


def test_verl_resume_from_a_checkpoint_stays_one_run(tmp_path):
    lines = _verl(1e-6, range(1, 81)) + ["Traceback (most recent call last):",
                                         "RuntimeError: NCCL timeout"]
    lines += _verl(1e-6, range(50, 151), seed=2)
    runs = load_runs(_write(tmp_path, "resumed.log", lines))
    assert len(runs) == 1 and runs[0].run_name is None
    assert runs[0].steps[0] == 1 and runs[0].steps[-1] == 150


def _trl(n: int, hi: float, lr: float, every: int = 1) -> list[str]:
    """A TRL console run as the Trainer prints it: a tqdm bar line, then the logged dict."""
    out = []
    for s in range(1, n + 1):
        pct = int(100 * s / n)
        out.append(f"{pct:3d}%|{'#' * (pct // 10):<10}| {s}/{n} [00:{s % 60:02d}<06:30, "
                   "10.00s/it]")
        if s % every == 0:
            out.append(repr({"loss": 0.0, "learning_rate": lr, "reward": round(
                hi - 0.6 * math.exp(-s / 10), 4), "reward_std": 0.41, "epoch": round(s / n, 2)}))
    out.append(repr({"train_runtime": 400.0, "train_samples_per_second": 0.8,
                     "train_steps_per_second": 0.1, "train_loss": 0.0, "epoch": 1.0}))
    return out


@pytest.mark.parametrize("logging_steps", [None, 1])
def test_trl_trainings_appended_to_one_console_become_two_runs(tmp_path, logging_steps):
    path = _write(tmp_path, "two.log", _trl(40, 0.7, 1e-6) + _trl(40, 0.4, 3e-6))
    runs = load_runs(path, logging_steps=logging_steps)
    assert [r.run_name for r in runs] == ["run1", "run2"]
    assert [r.n_points for r in runs] == [40, 40]
    assert list(runs[1].steps) == list(range(1, 41))
    assert [r.meta.value("lr") for r in runs] == [1e-6, 3e-6]
    assert runs[1].reward[-1] == pytest.approx(0.4 - 0.6 * math.exp(-4), abs=1e-4)
    assert all(r.meta.value("planned_steps") == 40 for r in runs)


def test_trl_runs_of_different_lengths_and_intervals(tmp_path):
    path = _write(tmp_path, "two.log", _trl(40, 0.7, 1e-6, every=5) + _trl(60, 0.4, 3e-6,
                                                                           every=5))
    runs = load_runs(path)
    assert [r.n_points for r in runs] == [8, 12]
    assert list(runs[1].steps) == list(range(5, 61, 5))
    assert all(r.meta.planned_steps is None for r in runs)
    assert any("planned_steps" in w and "40, 60" in w for w in runs[0].warnings)


def test_trl_single_console_is_still_one_run(tmp_path):
    run = load_run(_write(tmp_path, "one.log", _trl(40, 0.7, 1e-6)))
    assert run.run_name is None and run.n_points == 40 and run.steps[-1] == 40


def test_trl_dicts_with_their_own_step_restarting_become_two_runs(tmp_path):
    lines = [repr({"step": s, "reward": 0.1 * k + s / 100}) for k in (1, 2)
             for s in range(1, 21)]
    runs = load_runs(_write(tmp_path, "own.log", lines))
    assert [r.n_points for r in runs] == [20, 20]
    assert runs[1].reward[0] == pytest.approx(0.21)


def _openrlhf(labels: list[str], n_per: int = 30) -> str:
    out, step = [], 0
    for label in labels:
        bar = []
        for i in range(1, n_per + 1):
            step += 1
            post = f"pg=0.01, rm={step / 100:.3g}, glen={400 + step}, kl={1e-4 * step:.3g}, " \
                   "act_lr=5e-7"
            bar.append(f"{label}: {int(100 * i / n_per):3d}%|#| {i}/{n_per} [00:{i:02d}<00:30,"
                       f"  1.00s/it, {post}]")
        out.append("\r".join(bar))
    return "\n".join(out) + "\n"


def test_openrlhf_bars_of_every_episode_are_read_in_order(tmp_path):
    path = tmp_path / "openrlhf.log"
    path.write_text(_openrlhf(["Train step of episode 0", "Train step of episode 1"]))
    run = load_run(path)
    assert run.n_points == 60 and list(run.steps) == list(range(1, 61))
    assert run.reward[-1] == pytest.approx(0.6)
    assert any("'Train step of episode *'" in w and "episode 0" in w and "episode 1" in w
               for w in run.warnings)


def test_openrlhf_episode_numbers_going_back_are_said(tmp_path):
    path = tmp_path / "openrlhf.log"
    path.write_text(_openrlhf(["Train step of episode 1", "Train step of episode 0"]))
    run = load_run(path)
    assert run.n_points == 60
    assert any("go back" in w for w in run.warnings)


def test_openrlhf_other_bar_with_a_reward_is_said_to_be_left_out(tmp_path):
    path = tmp_path / "openrlhf.log"
    full = "".join(f"\rEpisode [1/1]:  4%| | {i}/5 [00:01<00:10, 1.0s/it, reward={i / 10}, "
                   f"kl=0.1]" for i in range(1, 6))
    path.write_text(full + "\n" + _openrlhf(["Train epoch [1/1]"], n_per=3))
    run = load_run(path)
    assert run.n_points == 5
    assert any("left out" in w and "'Train epoch [*]'" in w and "3 updates" in w
               for w in run.warnings)


_TRUTH = [round(0.7 - 0.6 * math.exp(-s / 15), 4) for s in range(1, 61)]
_SHAPES = {
    "pylogging": lambda s, x: f"2025-01-0{1 + s // 40} 12:{s % 60:02d}:07,123 - grpo - INFO - "
                              f"step={s * 10} reward={x:.4f} kl={0.001 * s:.4f} lr=1e-06",
    "pipes": lambda s, x: f"Step {s * 10} | reward: {x:.4f} | kl: {0.001 * s:.4f} | "
                          f"lr: 1.0e-06 | time: {12.5 + s:.1f}s",
    "brackets": lambda s, x: f"[step {s * 10:>5}/600] loss=0.0012 reward={x:.4f} acc={x:.3f} "
                             "len=312",
    "epochiter": lambda s, x: f"Epoch 1 Iter {s * 10}: mean_reward {x:.4f}, kl 0.001, lr 1e-6",
}


@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_key_value_console_lines_are_read(tmp_path, shape):
    lines = ["Loading model...", "some text without numbers"]
    lines += [_SHAPES[shape](s, x) for s, x in enumerate(_TRUTH, start=1)]
    run = load_run(_write(tmp_path, f"{shape}.log", lines))
    assert run.format == "key_value_console"
    assert list(run.steps) == [10.0 * s for s in range(1, 61)]
    assert np.allclose(run.reward, _TRUTH, atol=1e-4)
    if shape != "brackets":
        assert run.meta.value("lr") == pytest.approx(1e-6)
    else:
        assert run.meta.value("planned_steps") == 600


def test_key_value_console_evaluations_and_stepped_lines_without_a_reward(tmp_path):
    lines = [f"step={s} reward={s / 100}" for s in range(1, 21)]
    lines.insert(10, "step=10 eval_reward=0.5")
    lines.insert(5, "step=5 loss=0.3")
    run = load_run(_write(tmp_path, "eval.log", lines))
    assert run.n_points == 20
    assert run.metrics["heldout_reward"][9] == 0.5
    assert any("1 line with a step and no reward" in w for w in run.warnings)
    assert any("1 evaluation line" in w for w in run.warnings)


def test_key_value_console_runs_appended_split_at_the_restart(tmp_path):
    lines = [f"step={s} reward={s / 100}" for s in range(1, 21)] * 2
    assert [r.n_points for r in load_runs(_write(tmp_path, "two.log", lines))] == [20, 20]


def test_key_value_console_iteration_counted_per_epoch_is_refused(tmp_path):
    lines = [f"Epoch {e} Iter {i}: reward {i / 100}" for e in (1, 2) for i in range(1, 11)]
    path = _write(tmp_path, "epochs.log", lines)
    with pytest.raises(LogFormatError, match=r"restarts at each epoch.*JSON lines") as info:
        load_run(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("text", [
    "In step 3 we compute the reward as the mean of the group.\nStep two: reward shaping.\n",
    "step 10 done\nreward 0.5\n",
    "Epoch 1 | mean reward 0.4\n",
])
def test_text_that_is_no_log_is_refused_with_the_formats_read(tmp_path, text):
    path = tmp_path / "notes.log"
    path.write_text(text)
    with pytest.raises(LogFormatError) as info:
        load_run(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message
    assert "no dict lines with a reward" in message
    assert "key=value" in message and "JSON lines or CSV" in message


def test_cli_refuses_an_unreadable_console_with_exit_2(tmp_path, capsys):
    from grpodyn.cli import main

    path = tmp_path / "notes.log"
    path.write_text("nothing to read here\n")
    assert main(["runs", str(path)]) == 2
    err = capsys.readouterr().err
    assert "JSON lines or CSV" in err and "Traceback" not in err


def test_verl_config_block_cut_short_does_not_swallow_step_lines(tmp_path):
    lines = _verl(1e-6, range(1, 21)) + ["(TaskRunner pid=1) {'actor_rollout_ref': {'actor': {"]
    lines += _verl(1e-6, range(1, 21), config=False, seed=3)
    runs = load_runs(_write(tmp_path, "cut.log", lines))
    assert [r.n_points for r in runs] == [20, 20]
