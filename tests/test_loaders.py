"""Loaders: the real-log excerpts, every format, and clear errors on bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.loaders import LogFormatError, list_runs, load_run

DATA = Path(__file__).parent / "data" / "real_logs"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "real_logs"


@pytest.mark.parametrize("path", sorted(p for p in DATA.iterdir() if p.suffix != ".md"),
                         ids=lambda p: p.name[:30])
def test_every_excerpt_loads(path):
    # the console excerpt lacks the full log's final summary and progress bar that pin its
    # logging interval (1): it must be given
    run = load_run(path, logging_steps=1 if path.suffix == ".log" else None)
    assert run.n_points >= 20
    assert np.all(np.diff(run.steps) > 0)
    assert np.all(np.isfinite(run.reward))


def test_trainer_state_metrics_are_canonical():
    run = load_run(DATA / "lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_"
                          "checkpoint-1200_trainer_state.excerpt.json")
    assert run.format == "trl_trainer_state"
    assert {"reward_std", "frac_reward_zero_std", "entropy", "completion_length",
            "learning_rate"} <= set(run.metrics)
    assert run.steps[0] == 10 and np.all(np.diff(run.steps) == 10)


def test_trainer_state_epoch_is_a_canonical_series_and_gives_the_sampling_fraction():
    """TRL's epoch (passes over the dataset) loads as ``epoch``; its rate per step is B/N_p.

    The excerpt logs every 10 steps with epoch 0.00833 per 10 (1200 steps to one pass)."""
    from grpodyn.empirical.diagnostics.fluctuation import sampling_fraction

    run = load_run(DATA / "lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_"
                          "checkpoint-1200_trainer_state.excerpt.json")
    assert run.metric_keys["epoch"] == "epoch"
    assert run.metrics["epoch"][0] == pytest.approx(10 / 1200)
    fraction, why = sampling_fraction(run)
    assert fraction == pytest.approx(1 / 1200) and why == ""


def test_verl_epoch_index_gives_the_sampling_fraction(tmp_path):
    """verl's ``training/epoch`` is the epoch's index: it changes every N_p / B steps."""
    from grpodyn.empirical.diagnostics.fluctuation import sampling_fraction

    log = tmp_path / "verl.jsonl"
    log.write_text("\n".join(json.dumps({"step": s, "critic/score/mean": 0.5,
                                         "training/epoch": (s - 1) // 4}) for s in range(1, 21)))
    run = load_run(log)
    assert run.metric_keys["epoch"] == "training/epoch"
    assert sampling_fraction(run)[0] == pytest.approx(1 / 4)
    log.write_text("\n".join(json.dumps({"step": s, "reward": 0.5, "epoch": s % 3})
                             for s in range(1, 21)))
    fraction, why = sampling_fraction(load_run(log))  # an inner-loop counter, not dataset passes
    assert np.isnan(fraction) and "does not increase" in why

def test_console_log_steps_need_an_interval_and_are_flagged():
    path = DATA / "Sunshine535__nips-grpo-dynamics__results_gates_1_2_logs_gate2_rho1.00_seed42" \
        ".excerpt.log"
    with pytest.raises(LogFormatError, match="give --logging-steps"):
        load_run(path)  # no step field, no counter in step with the dicts, no consistent total
    run = load_run(path, logging_steps=1)
    assert run.format == "trl_console" and run.steps_reconstructed
    assert run.n_points == 60 and list(run.steps[:3]) == [1, 2, 3]
    assert run.reward[:3] == pytest.approx([0.125, 0.25, 0.375])
    assert any("logging_steps 1 (given)" in w for w in run.warnings)
    assert list(load_run(path, logging_steps=5).steps[:3]) == [5, 10, 15]


def test_long_csv_runs_and_heldout_reward():
    path = DATA / ("garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data"
                   ".excerpt.csv")
    assert set(list_runs(path)) == {"lr_sweep_1e-5", "lr_sweep_1e-4"}
    run = load_run(path)
    assert run.run_name == "lr_sweep_1e-5"  # the run with the most reward points
    assert run.reward_key == "eval/reward" and run.n_points == 26
    other = load_run(path, run="lr_sweep_1e-4")
    assert other.n_points == 4
    with pytest.raises(LogFormatError, match="no run named"):
        load_run(path, run="nope")
    # the sweep names its runs by their lr: read, and labelled as read from the name
    assert run.meta.lr.value == 1e-5 and run.meta.lr.source == "inferred"
    assert "lr_sweep_1e-5" in run.meta.lr.evidence and other.meta.lr.value == 1e-4


@pytest.mark.parametrize(("name", "lr"), [
    ("lr_sweep_1.5e-5", 1.5e-5), ("grpo_on_policy_lr1e-5_metrics", 1e-5), ("run-LR=3e-6", 3e-6),
    ("lr0.0002", 2e-4), ("clr_1e-5", None), ("lr_2", None), ("lr1e-5_vs_lr2e-5", None),
    ("lr_sweep_lr_sweep_data", None), (None, None)])
def test_the_lr_a_run_name_gives(name, lr):
    """One lr token with a value in (0, 1); none, two, or an impossible value give nothing."""
    from grpodyn.empirical.logs.infer import lr_from_name

    assert lr_from_name(name) == lr


def test_wide_csv_jsonl_and_wandb(tmp_path):
    wide = tmp_path / "metrics.csv"
    wide.write_text("step,reward,reward_std,entropy\n1,0.1,0.3,2.0\n2,0.2,0.3,1.9\n3,0.3,0.2,1.8\n")
    run = load_run(wide)
    assert run.format == "csv" and list(run.reward) == [0.1, 0.2, 0.3]
    assert list(run.metrics["entropy"]) == [2.0, 1.9, 1.8]
    lines = tmp_path / "metrics.jsonl"
    lines.write_text("\n".join(json.dumps({"step": s, "train/reward": s / 10}) for s in (1, 2, 3)))
    assert list(load_run(lines).reward) == [0.1, 0.2, 0.3]
    wandb = tmp_path / "export.csv"
    wandb.write_text('"Step","run-a - train/reward","run-a - train/reward__MIN","run-a - '
                     'train/reward__MAX"\n1,0.1,0.0,0.2\n2,0.4,0.3,0.5\n')
    run = load_run(wandb)
    assert run.format == "wandb_csv" and run.run_name == "run-a"
    assert list(run.reward) == [0.1, 0.4]


def test_repairs_are_warned(tmp_path):
    path = tmp_path / "messy.csv"
    path.write_text("step,reward\n3,0.3\n1,0.1\n2,nan\n2,0.2\n4,abc\n5,0.5\n")
    run = load_run(path)
    assert list(run.steps) == [1, 3, 5]  # sorted, duplicate step 2 kept first (nan), then dropped
    assert any("sorted" in w for w in run.warnings)
    assert any("duplicate" in w for w in run.warnings)
    assert any("dropped" in w for w in run.warnings)


@pytest.mark.parametrize("content,suffix,needle", [
    ("", ".json", "empty"),
    ('{"log_history": [', ".json", "not valid JSON"),
    ('{"something": 1}', ".json", "log_history"),
    ("[1, 2]", ".json", "not an object"),
    ("[]", ".json", "empty JSON array"),
    ("step,loss\n1,0.5\n", ".csv", "no reward metric"),
    ("step,reward\n1,0.5\n2\n", ".csv", ":3:"),
    ("time,reward\n1,0.5\n", ".csv", "no step column"),
    ('{"step": 1, "reward": 0.1}\n{"step": 2, "reward": \n', ".jsonl", ":2:"),
    ("just some text\nwithout metrics\n", ".log", "no dict lines"),
    ("{'step': 1, 'reward': __import__('os')}\n", ".log", "no finite value"),  # never run
    ("{'reward': 0.1, 1: 2}\n", ".log", "not a literal dict"),
])
def test_bad_logs_get_clear_errors(tmp_path, content, suffix, needle):
    path = tmp_path / f"bad{suffix}"
    path.write_text(content)
    with pytest.raises(LogFormatError) as info:
        load_run(path)
    assert str(path) in str(info.value) and needle in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(LogFormatError, match="no such file"):
        load_run(tmp_path / "absent.json")


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.is_dir(), reason="shared real logs not present")
def test_every_shared_real_log_loads_and_fits():
    from grpodyn.analysis import fit_run

    for path in sorted(p for p in SHARED.iterdir() if p.name not in ("README.md", "MANIFEST.md")):
        result = fit_run(load_run(path), train_fraction=0.5)
        # the trusted curve model, or none where the forecaster's weight sits on a flat level
        assert result["best"] in result["models"] or (
            result["best"] is None and result["weight_on"] not in result["models"]), path.name
        assert 0 <= result["forecast"]["coverage"] <= 1


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.is_dir(), reason="shared real logs not present")
def test_real_log_table_matches_the_corpus_manifest(capsys):
    """benchmarks/real_log_table.py: grpodyn runs and fit on every shared log, run counts and
    step spans as the corpus's README and MANIFEST give them."""
    import runpy
    import sys

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "real_log_table.py"
    argv, sys.argv = sys.argv, [str(script), str(SHARED)]
    try:
        with pytest.raises(SystemExit) as info:
            runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
    assert info.value.code == 0, capsys.readouterr().out


def test_tensorboard_event_files(tmp_path):
    pytest.importorskip("tensorboard")
    torch_tb = pytest.importorskip("torch.utils.tensorboard")
    writer = torch_tb.SummaryWriter(str(tmp_path / "tb"))
    for step in range(1, 31):
        writer.add_scalar("train/reward", 0.9 - 0.6 * np.exp(-step / 10), step)
        writer.add_scalar("train/entropy", 1.0 / step, step)
    writer.close()
    run = load_run(tmp_path / "tb")  # the folder
    assert run.format == "tensorboard" and run.n_points == 30
    assert run.reward[0] == pytest.approx(0.9 - 0.6 * np.exp(-0.1), rel=1e-6)
    assert "entropy" in run.metrics
    event_file = next((tmp_path / "tb").glob("*tfevents*"))
    assert load_run(event_file).n_points == 30
    broken = tmp_path / "events.out.tfevents.broken"
    broken.write_bytes(b"\x00garbage" * 10)
    with pytest.raises(LogFormatError, match=str(broken)):
        load_run(broken)


def test_pandas_in_and_out():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"step": [1, 2, 3, 4], "reward": [0.1, 0.2, 0.25, 0.3],
                          "kl": [0.0, 0.01, 0.02, 0.02]})
    from grpodyn.empirical.logs.loaders import Run

    run = Run.from_pandas(frame)
    assert list(run.reward) == [0.1, 0.2, 0.25, 0.3]
    back = run.to_pandas()
    assert list(back.index) == [1, 2, 3, 4] and list(back["kl"]) == [0.0, 0.01, 0.02, 0.02]


def test_run_to_dict_is_plain_json(tmp_path):
    """A run's to_dict is strict JSON: series as lists, a metric not logged at a step as None."""
    path = tmp_path / "run.jsonl"
    path.write_text('{"step": 1, "reward": 0.1, "kl": 0.0}\n{"step": 2, "reward": 0.2}\n'
                    '{"step": 3, "reward": 0.3, "kl": 0.02}\n')
    out = load_run(path).to_dict()
    text = json.dumps(out, allow_nan=False)
    assert out["reward"] == [0.1, 0.2, 0.3] and out["steps"] == [1.0, 2.0, 3.0]
    assert out["metrics"]["kl"] == [0.0, None, 0.02] and json.loads(text) == out


@pytest.mark.parametrize(("text", "said"), [
    ('{"step": 1, "reward": false}\n{"step": 2, "reward": true}\n',
     "no finite value of 'reward' (its values are true/false, which are not read as numbers"),
    ('{"step": 1, "reward": "abc"}\n{"step": 2, "reward": "def"}\n',
     "no finite value of 'reward' (text such as 'abc', not a number)")])
def test_a_reward_with_no_number_says_what_it_held(tmp_path, text, said):
    path = tmp_path / "log.jsonl"
    path.write_text(text)
    with pytest.raises(LogFormatError, match=re.escape(said)):
        load_run(path)


def test_a_csv_of_a_header_alone_says_it_holds_no_records(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("step,reward\n")
    with pytest.raises(LogFormatError, match="no records: the log holds no logged step"):
        load_run(path)


def test_the_repr_of_a_run_of_one_point_says_point(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"step": 1, "reward": 0.5}\n')
    assert "1 point, " in repr(load_run(path))


@pytest.mark.parametrize(("text", "said"), [
    ("step,reward\n1,true\n2,FALSE\n", "true/false, which are not read as numbers: log 1/0"),
    ("step,reward\n1,nan\n2,nan\n", "every value is NaN or infinite")])
def test_a_csv_reward_of_words_or_nan_says_which(tmp_path, text, said):
    path = tmp_path / "log.csv"
    path.write_text(text)
    with pytest.raises(LogFormatError, match=re.escape(said)):
        load_run(path)
