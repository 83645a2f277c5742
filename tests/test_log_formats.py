"""The format gallery (tests/data/formats, see its README): every trainer's log, its steps,
metrics and hyperparameters with their sources, and the malformed variants of each format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.loaders import LogFormatError, list_runs, load_run, load_runs
from grpodyn.empirical.logs.meta import Hyperparameter, RunMeta

FORMATS = Path(__file__).parent / "data" / "formats"


def _source(run, name):
    return getattr(run.meta, name).source


@pytest.mark.parametrize("name,fmt,n,first,last", [
    ("custom_loop_history.json", "json_records", 30, 1, 30),
    ("verl_file_logger.jsonl", "verl_jsonl", 30, 1, 30),
    ("verl_ray_console.log", "verl_console", 30, 1, 30),
    ("jianghoucheng__Agent_On_Policy_Distillation__wandb_output.verl_console.excerpt.log",
     "verl_console", 24, 1, 26),
    ("openrlhf_console.log", "openrlhf_console", 25, 1, 25),
    ("trl_console_logging_steps5.log", "trl_console", 12, 5, 60),
    ("Rusheel86__Chaos-Economy__vsr-new.hf_jobs.excerpt.log", "hf_jobs_trl_console", 12, 5, 60),
    ("Coicozoi__minimind-from-scratch__logs_grpo.excerpt.log", "minimind_console", 40, 1, 40),
    ("josephdutoit__probability-aligned-llms__logs_grpo.excerpt.log", "reward_tensor_console",
     30, 1, 30),
    ("ShibukiZero__assignment5-alignment__broad_e2_tb256_metrics.excerpt.jsonl", "jsonl", 20,
     1, 20),
    ("esmaeil-abedi-dev__verifier-as-reward__training_log_warmstart_klsweep_0.1.jsonl", "jsonl",
     20, 25, 500),
    ("wandb_history_export.csv", "csv", 30, 1, 30),
    ("wandb_run/run-20250101_120000-abc12345", "wandb_run", 40, 1, 40),
    ("trl_run", "trl_trainer_state", 30, 2, 60),
    ("trl_run/checkpoint-30", "trl_trainer_state", 15, 2, 30),
])
def test_gallery_loads(name, fmt, n, first, last):
    run = load_run(FORMATS / name)
    assert run.format == fmt
    assert (run.n_points, run.steps[0], run.steps[-1]) == (n, first, last)
    assert np.all(np.diff(run.steps) > 0) and np.all(np.isfinite(run.reward))
    for series in run.metrics.values():
        assert series.shape == run.steps.shape


def test_trl_console_real_steps_and_eval_entries():
    run = load_run(FORMATS / "trl_console_logging_steps5.log")
    assert list(run.steps[:3]) == [5, 10, 15] and not run.steps_reconstructed
    assert any("progress counter" in w for w in run.warnings)
    held = run.metrics["heldout_reward"]
    assert list(run.steps[np.isfinite(held)]) == [20, 40, 60]  # eval every 20 steps, NaN between
    # the logged eval reward sits 0.05 below the train reward of its step (as the sample says)
    assert held[run.steps == 20][0] == pytest.approx(run.reward[run.steps == 20][0] - 0.05,
                                                     abs=2e-4)
    assert run.meta.lr.value == pytest.approx(1e-5) and run.meta.lr.source == "logged"
    given = load_run(FORMATS / "trl_console_logging_steps5.log", logging_steps=3)
    assert list(given.steps[:2]) == [3, 6]
    assert any("does not match the progress counter" in w for w in given.warnings)


def test_verl_console_config_and_aliases():
    run = load_run(FORMATS / "verl_ray_console.log")  # Ray prefix, np.float64(...) values
    assert run.reward_key == "critic/score/mean"
    assert run.metric_keys["entropy"] == "actor/entropy" and run.metric_keys["kl"] == \
        "actor/kl_loss"
    meta = run.meta
    assert (meta.lr.value, meta.group_size.value, meta.batch.value, meta.kl.value) == \
        (1e-6, 5, 1024, 0.001)  # the policy's lr, not the critic's 1e-5
    assert (meta.momentum.value, meta.beta2.value, meta.num_iterations.value) == (0.9, 0.999, 1)
    assert meta.schedule.value == "constant"
    assert all(h["source"] == "file:verl_ray_console.log" for k, h in meta.to_dict().items()
               if k != "schedule")


def test_verl_file_logger_heldout():
    run = load_run(FORMATS / "verl_file_logger.jsonl")
    assert run.metric_keys["heldout_reward"] == "val-core/openai/gsm8k/reward/mean@1"
    assert int(np.isfinite(run.metrics["heldout_reward"]).sum()) == 3


def test_openrlhf_reads_the_full_status_bar():
    run = load_run(FORMATS / "openrlhf_console.log")
    assert run.steps_reconstructed and run.n_points == 25  # not 50: the epoch bar is skipped
    assert run.metric_keys["learning_rate"] == "actor_lr"
    assert run.meta.lr.value == pytest.approx(5e-7)
    assert run.meta.warmup_steps.value == 5 and run.meta.warmup_steps.source == "inferred"


def test_trl_run_directory_latest_checkpoint_and_training_args_bin():
    run = load_run(FORMATS / "trl_run")
    assert run.source.endswith("checkpoint-60/trainer_state.json")
    assert any("read the latest, checkpoint-60" in w for w in run.warnings)
    # no total reward: the documented sum of the reward functions, said in the warnings
    assert run.reward_key == "rewards/correctness_reward/mean+rewards/format_reward/mean"
    assert any("sum of the 2 reward functions" in w for w in run.warnings)
    state = json.loads((FORMATS / "trl_run/checkpoint-60/trainer_state.json").read_text())
    first = state["log_history"][0]
    assert run.reward[0] == pytest.approx(first["rewards/correctness_reward/mean"]
                                          + first["rewards/format_reward/mean"])
    assert np.isfinite(run.metrics["heldout_reward"]).sum() == 6
    meta = run.meta.to_dict()
    expected = {"lr": 2e-5, "group_size": 4, "kl": 0.04, "num_iterations": 2, "momentum": 0.9,
                "beta2": 0.99, "warmup_steps": 3, "schedule": "linear", "optimizer": "adamw",
                "logging_steps": 2}
    for name, value in expected.items():
        assert meta[name]["value"] == pytest.approx(value) if isinstance(value, float) \
            else meta[name]["value"] == value, name
        assert meta[name]["source"] == "file:training_args.bin", name
    assert (meta["batch"]["value"], meta["batch"]["source"]) == (4, "inferred")
    assert "assuming one process" in meta["batch"]["evidence"]
    one = load_run(FORMATS / "trl_run", reward_key="rewards/format_reward/mean")
    assert one.reward_key == "rewards/format_reward/mean"


def test_wandb_run_directory_and_config_yaml():
    pytest.importorskip("yaml")
    run = load_run(FORMATS / "wandb_run/run-20250101_120000-abc12345")
    assert run.reward_key == "train/reward" and run.metric_keys["heldout_reward"] == \
        "eval/reward"
    assert list(run.steps[np.isfinite(run.metrics["heldout_reward"])]) == [10, 20, 30, 40]
    assert run.meta.group_size == Hyperparameter(8, "file:config.yaml",
                                                 "num_generations in config.yaml")
    assert run.meta.lr.value == 1e-6 and run.meta.schedule.value == "constant_with_warmup"


def test_typed_records_merge_and_log_their_hyperparameters():
    run = load_run(FORMATS / "ShibukiZero__assignment5-alignment__broad_e2_tb256_metrics"
                             ".excerpt.jsonl")
    assert run.metric_keys["heldout_reward"] == "eval/reward"  # eval records, every 5 steps
    held = run.metrics["heldout_reward"]
    assert list(run.steps[np.isfinite(held)]) == [1, 5, 10, 15, 20]
    assert held[0] == 0.0380859375  # grpo_step 0, the evaluation before training, at step 1
    assert (run.meta.group_size.value, run.meta.group_size.source) == (8, "logged")
    assert (run.meta.batch.value, run.meta.batch.source) == (32, "logged")
    assert any("records of one step merged" in w for w in run.warnings)


def test_config_record_and_appended_runs():
    run = load_run(FORMATS / "esmaeil-abedi-dev__verifier-as-reward__training_log_warmstart_"
                             "klsweep_0.1.jsonl")
    assert run.reward_key == "mean_reward"
    assert (run.meta.lr.value, run.meta.kl.value) == (2e-5, 0.1)
    assert run.meta.lr.source.startswith("file:esmaeil")
    path = FORMATS / "jorahn__rookworld-rlvr__src_mini_logs_training_history.excerpt.jsonl"
    assert list_runs(path) == ["run1", "run2", "run3"]
    chosen = load_run(path)
    assert chosen.run_name == "run3" and "3 runs in this log" in chosen.warnings[0]
    assert load_run(path, run="run2").n_points == 5
    with pytest.raises(LogFormatError, match="no run named 'run9'; runs: run1, run2, run3"):
        load_run(path, run="run9")


def test_hf_jobs_stream_saved_as_json(tmp_path):
    path = tmp_path / "job.json"
    shutil.copy(FORMATS / "Rusheel86__Chaos-Economy__vsr-new.hf_jobs.excerpt.log", path)
    run = load_run(path)
    assert run.format == "hf_jobs_trl_console" and list(run.steps[:2]) == [5, 10]


def test_run_option_on_a_one_run_log_is_an_error():
    with pytest.raises(LogFormatError, match="holds one run"):
        load_run(FORMATS / "custom_loop_history.json", run="a")


def test_step_and_reward_keys(tmp_path):
    path = tmp_path / "log.json"
    path.write_text(json.dumps([{"it": i, "score": i / 10, "acc": 1 - i / 10}
                                for i in range(1, 8)]))
    with pytest.raises(LogFormatError, match="no step field.*give --step-key"):
        load_run(path)
    run = load_run(path, step_key="it")
    assert run.reward_key == "score" and list(run.steps) == list(range(1, 8))
    assert list(load_run(path, step_key="it", reward_key="acc").reward[:2]) == [0.9, 0.8]
    with pytest.raises(LogFormatError, match="no metric 'nope' \\(reward_key=, --reward-key\\)"):
        load_run(path, step_key="it", reward_key="nope")
    with pytest.raises(LogFormatError, match="no field 'nope' \\(--step-key\\)"):
        load_run(FORMATS / "verl_ray_console.log", step_key="nope")


def test_tensorboard_tree_searched_recursively(tmp_path):
    pytest.importorskip("tensorboard")
    torch_tb = pytest.importorskip("torch.utils.tensorboard")
    for name, scale in (("runs/a", 0.5), ("runs/nested/b", 0.8)):
        writer = torch_tb.SummaryWriter(str(tmp_path / name))
        for step in range(1, 21):
            writer.add_scalar("train/reward", scale * (1 - np.exp(-step / 5)), step)
            writer.add_scalar("train/learning_rate", 1e-5, step)
        writer.close()
    runs = load_runs(tmp_path)
    assert sorted(r.run_name for r in runs) == ["runs/a", "runs/nested/b"]
    assert load_run(tmp_path, run="runs/nested/b").reward[-1] == pytest.approx(
        0.8 * (1 - np.exp(-4)), rel=1e-5)


def test_empty_directory_says_what_it_looked_for(tmp_path):
    with pytest.raises(LogFormatError, match="a directory without a log .*trainer_state.json"):
        load_run(tmp_path)


@pytest.mark.parametrize("name,content,needle", [
    ("a.json", '[{"step": 1, "reward": 0.1}, 3]', "item 1 of the JSON array is not an object"),
    ("a.json", '{"history": [{"reward": 0.1}]}', "no step field"),
    ("a.jsonl", '{"step": 1, "data": {"actor/entropy": 0.3}}\n', "no reward metric"),
    ("a.jsonl", '{"type": "config", "args": {"lr": 1}}\n', "no records with a step field"),
    ("a.log", "step:1 - actor/entropy:0.5 - actor/lr:1e-6\n", "no dict lines with a reward"),
    ("a.log", "(TaskRunner pid=1) step:1 - critic/score/mean:np.float64(nan)\n",
     "no finite value of 'critic/score/mean'"),
    ("a.log", "Episode [1/1]:  4%| | 1/25 [00:01<00:10, 1.0s/it, policy_loss=0.1, kl=0.1]\n",
     "no dict lines with a reward"),
    ("a.log", "Epoch:[1/1](1/10), KL_ref: 0.1\n", "no dict lines with a reward"),
    ("a.log", "rewards: tensor([nan, 1.])\n", "no dict lines with a reward"),
    ("a.log", '[{"stream_name":"stdout","data":"x"}\n,{"stream_name":', "not valid JSON"),
    ("a.log", "{'loss': 0.1, 'reward': 0.2}\n{'loss': 0.1, 'reward': 0.3}\n",
     "give --logging-steps"),
    ("a.csv", '"_step","train/reward"\n', "no logged step"),
    ("a.bin", "x", "binary file, not a log"),
])
def test_malformed_variants_get_one_line_errors(tmp_path, name, content, needle):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(LogFormatError) as info:
        load_run(path)
    message = str(info.value)
    assert str(path) in message and needle in message and "\n" not in message


def test_truncated_gallery_files_fail_clearly_or_load(tmp_path):
    """Every gallery file cut at several places: a Run, or an error naming the file."""
    for source in sorted(p for p in FORMATS.iterdir() if p.is_file() and p.suffix != ".md"):
        text = source.read_text()
        for cut in (0.1, 0.5, 0.97):
            path = tmp_path / source.name
            path.write_text(text[: int(len(text) * cut)])
            try:
                run = load_run(path, logging_steps=1)
            except LogFormatError as error:
                assert str(path) in str(error)
                continue
            assert run.n_points >= 1 and np.all(np.diff(run.steps) > 0)


def test_runmeta_interface():
    meta = RunMeta(lr=Hyperparameter(1e-5, "file:training_args.json", "learning_rate"))
    assert meta.value("lr") == 1e-5 and meta.value("group_size", 4) == 4
    changed = meta.with_overrides(lr=3e-6, group_size=8, batch=None)
    assert changed.lr == Hyperparameter(3e-6, "user", "given on the command line")
    assert changed.batch is None and meta.lr.value == 1e-5  # a copy
    assert changed.to_dict()["group_size"] == {"value": 8, "source": "user",
                                               "evidence": "given on the command line"}
    with pytest.raises(KeyError):
        meta.value("G")
    with pytest.raises(ValueError, match="unknown hyperparameter source"):
        Hyperparameter(1, "guessed")


def test_input_directories_are_never_modified(tmp_path):
    tree = tmp_path / "trl_run"
    shutil.copytree(FORMATS / "trl_run", tree)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tree.rglob("*") if p.is_file()}
    load_runs(tree)
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in tree.rglob("*") if p.is_file()}
    assert before == after


def _binary_run(tmp_path, *, prompts, group, steps=60, seed=0, name="trainer_state.json"):
    """A trainer_state of binary rewards: B prompts x G completions per step."""
    rng = np.random.default_rng(seed)
    history = []
    for step in range(1, steps + 1):
        p = rng.uniform(0.1, 0.9, size=prompts)
        rewards = rng.random((prompts, group)) < p[:, None]
        history.append({"step": step, "reward": float(rewards.mean()),
                        "frac_reward_zero_std": float(np.mean(rewards.std(axis=1) == 0)),
                        "learning_rate": 1e-5})
    path = tmp_path / name
    path.write_text(json.dumps({"log_history": history}))
    return path


def test_group_size_and_batch_from_the_granularity_of_binary_rewards(tmp_path):
    run = load_run(_binary_run(tmp_path, prompts=8, group=4))
    assert (run.meta.group_size.value, run.meta.group_size.source) == (4, "inferred")
    assert (run.meta.batch.value, run.meta.batch.source) == (8, "inferred")
    assert "multiple of 1/32" in run.meta.group_size.evidence
    assert "multiple of 1/8" in run.meta.batch.evidence


def test_granularity_that_does_not_pin_g_says_not_determined(tmp_path):
    path = _binary_run(tmp_path, prompts=8, group=4)
    state = json.loads(path.read_text())
    for entry in state["log_history"]:
        del entry["frac_reward_zero_std"]  # B G = 32 alone: G and B not separately known
    path.write_text(json.dumps(state))
    run = load_run(path)
    assert run.meta.group_size is None and run.meta.batch is None
    assert any("group size G: not determined" in w and "B G = 32" in w for w in run.warnings)
    # with G known from a config beside the log, B follows (and says how)
    (tmp_path / "training_args.json").write_text(json.dumps({"num_generations": 4}))
    run = load_run(path)
    assert run.meta.group_size.source == "file:training_args.json"
    assert (run.meta.batch.value, run.meta.batch.source) == (8, "inferred")


def test_no_inference_from_continuous_or_averaged_rewards(tmp_path):
    path = tmp_path / "log.json"
    path.write_text(json.dumps([{"step": s, "reward": 0.5 + 0.1 * np.sin(s)}
                                for s in range(1, 40)]))
    assert load_run(path).meta.group_size is None
    path.write_text(json.dumps([{"step": 5 * s, "reward": (s % 8) / 8} for s in range(1, 40)]))
    run = load_run(path)  # every 5th step: each point may average 5 steps
    assert run.meta.group_size is None
    assert any("not consecutive steps" in w for w in run.warnings)


@pytest.mark.parametrize("shape,expected", [("constant", "constant"), ("linear", "linear"),
                                             ("cosine", "cosine")])
def test_schedule_from_the_logged_learning_rate(tmp_path, shape, expected):
    from grpodyn.empirical.logs.infer import schedule_of

    steps = np.arange(1.0, 301.0)
    warm = np.minimum(1.0, steps / 20)
    u = np.clip((steps - 20) / 280, 0, 1)
    decay = {"constant": np.ones_like(u), "linear": 1 - u,
             "cosine": 0.5 * (1 + np.cos(np.pi * u))}[shape]
    name, warmup, words = schedule_of(steps, 3e-5 * warm * decay)
    assert name.startswith(expected) and warmup == 20 and "3e-05" in words


def test_config_files_of_each_trainer(tmp_path):
    from grpodyn.empirical.logs.config import meta_from_config

    verl = {"actor_rollout_ref": {"actor": {"use_kl_loss": False, "kl_loss_coef": 0.5,
                                            "ppo_epochs": 2, "optim": {"lr": 3e-6}},
                                  "rollout": {"n": 16}},
            "critic": {"optim": {"lr": 9e-6}, "ppo_epochs": 7},
            "algorithm": {"kl_ctrl": {"kl_coef": 0.002}}, "data": {"train_batch_size": 64}}
    meta = meta_from_config(verl, "file:config.yaml", "config.yaml")
    assert (meta.lr.value, meta.group_size.value, meta.batch.value) == (3e-6, 16, 64)
    assert meta.kl.value == 0.002 and meta.num_iterations.value == 2  # not the critic's
    openrlhf = {"n_samples_per_prompt": 8, "rollout_batch_size": 128, "max_epochs": 1,
                "init_kl_coef": 0.01, "actor_learning_rate": 5e-7, "micro_train_batch_size": 4}
    meta = meta_from_config(openrlhf, "file:args.json", "args.json")
    assert (meta.group_size.value, meta.batch.value, meta.num_iterations.value) == (8, 128, 1)
    assert (meta.kl.value, meta.lr.value) == (0.01, 5e-7)
    model_config = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 896,
                    "rope_theta": 1e6, "vocab_size": 151936}  # HF config.json: no settings
    assert meta_from_config(model_config, "file:config.json", "config.json").to_dict() == {}


def test_yaml_and_broken_config_files_beside_a_log(tmp_path):
    pytest.importorskip("yaml")
    log = tmp_path / "metrics.jsonl"
    log.write_text("\n".join(json.dumps({"step": s, "reward": s / 10}) for s in range(1, 9)))
    (tmp_path / "hparams.yaml").write_text("optimizer:\n  name: AdamW\n  betas: [0.9, 0.95]\n"
                                           "lr: 4.0e-5\ngroup_size: 8\n")
    (tmp_path / "args.json").write_text("{not json")
    run = load_run(log)
    assert (run.meta.lr.value, run.meta.group_size.value) == (4e-5, 8)
    assert (run.meta.momentum.value, run.meta.beta2.value) == (0.9, 0.95)
    assert run.meta.optimizer.value == "adamw"
    assert run.meta.lr.source == "file:hparams.yaml"
    assert any("args.json: not valid JSON" in w for w in run.warnings)


def test_console_interval_from_a_config_file_beside(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("".join(f"{{'reward': {s / 10}, 'loss': 0.1}}\n" for s in range(1, 9)))
    with pytest.raises(LogFormatError, match="give --logging-steps"):
        load_run(log)
    (tmp_path / "training_args.json").write_text(json.dumps({"logging_steps": 10}))
    run = load_run(log)
    assert list(run.steps[:2]) == [10, 20]
    assert any("logging_steps 10 (logging_steps in training_args.json)" in w
               for w in run.warnings)
    assert run.meta.logging_steps.source == "file:training_args.json"
    # the log's own progress counter wins over a config file's interval
    shutil.copy(FORMATS / "trl_console_logging_steps5.log", tmp_path / "bar.log")
    assert list(load_run(tmp_path / "bar.log").steps[:2]) == [5, 10]


def test_config_values_that_are_not_numbers_are_skipped(capsys):
    from grpodyn.cli import main
    from grpodyn.empirical.logs.config import meta_from_config

    meta = meta_from_config({"learning_rate": float("nan"), "num_generations": b"\x00",
                             "beta": "abc", "adam_beta1": True, "warmup_steps": 10**5000,
                             "logging_steps": 10, "optim": 3, "betas": ["x", 0.99]},
                            "file:a.json", "a.json")
    assert meta.to_dict().keys() == {"logging_steps", "beta2"}
    assert main(["runs", str(FORMATS / "trl_run"), "--json"]) == 0
    json.loads(capsys.readouterr().out)  # every value serialisable


def test_wandb_folder_reads_latest_run_or_asks(tmp_path):
    wandb = tmp_path / "wandb"
    shutil.copytree(FORMATS / "wandb_run", wandb)
    run = load_run(wandb)  # one run: that one
    assert run.format == "wandb_run" and any("a W&B folder: read run-2025" in w
                                             for w in run.warnings)
    shutil.copytree(wandb / "run-20250101_120000-abc12345", wandb / "run-20250102_080000-zz")
    with pytest.raises(LogFormatError, match="2 runs and no latest-run: give one of"):
        load_run(wandb)
    (wandb / "latest-run").symlink_to(wandb / "run-20250102_080000-zz")
    run = load_run(wandb)
    assert any("read latest-run (run-20250102_080000-zz)" in w for w in run.warnings)


def test_grpodyn_made_runs_carry_their_hyperparameters():
    """A run grpodyn made (the shipped tiny grid) records them in ``grpodyn_hparams``."""
    from grpodyn.empirical.logs.loaders import load_run

    folder = Path(__file__).resolve().parents[1] / "studies" / "tiny_grids" / "data" / "tiny_grid"
    if not folder.is_dir():
        pytest.skip("the tiny grid lives in the repository's studies/ folder, absent here")
    run = load_run(sorted(folder.glob("sgd_*.json"))[0])
    assert run.meta.value("optimizer") == "sgd" and run.meta.value("momentum") == 0.9
    assert run.meta.momentum.source.startswith("file:")
    assert run.meta.value("batch") >= 1 and run.meta.value("group_size") >= 2


def test_a_warm_up_still_rising_at_the_last_logged_point_is_not_called_flat():
    from grpodyn.empirical.logs.infer import schedule_of

    steps = np.arange(1.0, 80.0)
    name, warmup, words = schedule_of(steps, 3e-7 * (steps - 1))  # ijinyu1113's excerpt: rising
    assert warmup == 79 and "then flat" not in words and "at least to step 79" in words


def test_a_negative_learning_rate_entry_neither_sets_the_peak_nor_overflows():
    """A corrupt negative entry (found by the loader fuzzing) is left out of the schedule."""
    from grpodyn.empirical.logs.infer import schedule_of

    steps = np.arange(1.0, 4.0)
    assert schedule_of(steps, np.array([0.0, 2.5e-238, -4.5e70])) is None  # too few points left
    found = schedule_of(np.arange(1.0, 6.0), np.array([1e-6, 1e-6, -1e300, 1e-6, 1e-6]))
    assert found is not None and found[0] == "constant"
    from grpodyn.empirical.logs.loaders import Run
    from grpodyn.empirical.logs.run_analysis import learning_rate_of

    steps = np.arange(1.0, 6.0)
    run = Run("r", "test", steps, np.full(5, 0.5),
              {"learning_rate": np.array([1e-6, 2e-6, -1e300, 4e-6, 5e-6])})
    assert np.allclose(learning_rate_of(run), [1e-6, 2e-6, 3e-6, 4e-6, 5e-6])  # a gap


def test_a_long_csv_takes_its_own_step_column_as_the_step_key(tmp_path):
    """--step-key step on a long table (run, metric, step, value) named the step column and was
    refused as missing: the column is the step."""
    from grpodyn.empirical.logs.loaders import load_run

    path = tmp_path / "long.csv"
    path.write_text("run_name,metric,step,value\n" + "".join(
        f"a,eval/reward,{s},{0.1 + 0.01 * s}\n" for s in range(0, 40, 2)))
    assert load_run(path, step_key="step").n_points == load_run(path).n_points == 20
