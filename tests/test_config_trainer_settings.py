"""Trainer settings read from configs: verl's KL switches and unset step counts, TRL's args.

verl has two KL terms, each behind its switch: the KL loss of the actor
(``actor.use_kl_loss``, coefficient ``actor.kl_loss_coef``) and the KL penalty in the reward
(``algorithm.use_kl_in_reward``, coefficient ``algorithm.kl_ctrl.kl_coef``); the coefficient of a
term that is off is not the run's. A negative step count or warm-up (verl's
``total_training_steps: -1``, TRL's ``max_steps: -1``) is a placeholder, never a value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grpodyn.empirical.logs.config import meta_from_config
from grpodyn.empirical.logs.loaders import load_run

FORMATS = Path(__file__).parent / "data" / "formats"
VERL_CONSOLE = FORMATS / "config_verl_console.excerpt.log"


def _verl(use_kl_loss: bool | None, use_kl_in_reward: bool | None) -> dict:
    """A verl config with both KL coefficients set and the switches given (None: absent)."""
    actor = {"kl_loss_coef": 0.01, "optim": {"lr": 1e-6, "lr_warmup_steps": -1,
                                              "lr_warmup_steps_ratio": 0.0,
                                              "total_training_steps": -1}}
    algorithm = {"kl_ctrl": {"kl_coef": 0.001, "type": "fixed"}}
    if use_kl_loss is not None:
        actor["use_kl_loss"] = use_kl_loss
    if use_kl_in_reward is not None:
        algorithm["use_kl_in_reward"] = use_kl_in_reward
    return {"actor_rollout_ref": {"actor": actor, "rollout": {"n": 8}},
            "algorithm": algorithm, "trainer": {"total_training_steps": None}}


def test_the_kl_loss_coefficient_is_read_when_the_loss_is_on():
    run = load_run(VERL_CONSOLE)
    assert run.meta.kl.value == pytest.approx(0.01)
    assert run.meta.kl.evidence.startswith("actor_rollout_ref.actor.kl_loss_coef")


def test_no_kl_term_reads_zero_with_the_switches_as_evidence(tmp_path):
    log = tmp_path / "console.log"
    log.write_text(VERL_CONSOLE.read_text().replace("'use_kl_loss': True", "'use_kl_loss': False"))
    kl = load_run(log).meta.kl
    assert kl.value == 0
    assert "use_kl_loss" in kl.evidence and "use_kl_in_reward" in kl.evidence


@pytest.mark.parametrize("loss,reward,expected", [
    (True, False, 0.01), (False, True, 0.001), (True, None, 0.01), (False, False, 0),
    (False, None, 0.001)])
def test_the_kl_coefficient_follows_the_switches(loss, reward, expected):
    meta = meta_from_config(_verl(loss, reward), "file:config.yaml", "config.yaml")
    assert meta.kl.value == pytest.approx(expected)


def test_both_kl_terms_on_leave_the_coefficient_open_with_a_note():
    notes: list[str] = []
    meta = meta_from_config(_verl(True, True), "file:config.yaml", "config.yaml", notes=notes)
    assert meta.kl is None
    assert len(notes) == 1 and "use_kl_loss" in notes[0] and "use_kl_in_reward" in notes[0]
    assert "0.01" in notes[0] and "0.001" in notes[0]


def test_both_kl_terms_on_in_a_config_file_beside_the_log_is_noted(tmp_path):
    yaml = pytest.importorskip("yaml")
    log = tmp_path / "metrics.jsonl"
    log.write_text("\n".join(json.dumps({"step": s, "reward": s / 10}) for s in range(1, 9)))
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(_verl(True, True)))
    run = load_run(log)
    assert run.meta.kl is None
    assert any("use_kl_in_reward" in w for w in run.warnings)


def test_negative_step_counts_are_unset():
    meta = meta_from_config(_verl(True, False), "file:config.yaml", "config.yaml")
    assert meta.planned_steps is None
    trl = {"max_steps": -1, "warmup_steps": -3, "num_generations": 8, "logging_steps": -1}
    meta = meta_from_config(trl, "file:training_args.json", "training_args.json")
    assert (meta.planned_steps, meta.warmup_steps, meta.logging_steps) == (None, None, None)
    assert meta.group_size.value == 8


def test_a_negative_count_gives_way_to_a_later_key():
    config = _verl(True, False)
    config["trainer"]["total_training_steps"] = 500
    meta = meta_from_config(config, "file:config.yaml", "config.yaml")
    assert meta.planned_steps.value == 500
    assert meta.planned_steps.evidence.startswith("trainer.total_training_steps")


@pytest.mark.parametrize("key", ["steps", "total_steps", "num_train_steps", "max_train_steps"])
def test_a_custom_script_planned_length_is_read(key):
    meta = meta_from_config({key: 400, "lr": 1e-5, "seed": 7}, "file:run.jsonl", "run.jsonl")
    assert meta.planned_steps.value == 400
    assert meta.planned_steps.evidence.startswith(key)


def test_trainer_planned_length_wins_over_a_generic_steps_key():
    meta = meta_from_config({"steps": 10, "max_steps": 300}, "file:args.json", "args.json")
    assert meta.planned_steps.value == 300


def test_a_generic_length_name_inside_a_section_counts_something_else():
    config = {"sampling": {"steps": 256}, "eval": {"num_steps": 50}, "logging": {"steps": 10},
              "lr_scheduler": {"warmup": {"num_steps": 100}}}
    assert meta_from_config(config, "file:config.yaml", "config.yaml").planned_steps is None
    wandb = {"steps": {"value": 400, "desc": None}}  # W&B's entry at the top level
    assert meta_from_config(wandb, "file:config.yaml", "config.yaml").planned_steps.value == 400


def test_verl_warmup_from_its_ratio_where_the_steps_are_unset():
    meta = meta_from_config(_verl(True, False), "file:config.yaml", "config.yaml")
    assert meta.warmup_steps.value == 0
    assert "lr_warmup_steps_ratio" in meta.warmup_steps.evidence
    config = _verl(True, False)
    config["actor_rollout_ref"]["actor"]["optim"]["lr_warmup_steps_ratio"] = 0.05
    assert meta_from_config(config, "file:config.yaml", "config.yaml").warmup_steps is None


def test_a_verl_console_has_no_negative_planned_length_or_warmup():
    meta = load_run(VERL_CONSOLE).meta
    assert meta.planned_steps is None or meta.planned_steps.value > 0
    assert meta.warmup_steps.value == 0


def test_a_wandb_entry_holding_a_nested_config_is_flattened():
    from grpodyn.empirical.logs.config import flatten

    config = {"actor_rollout_ref": {"value": {"rollout": {"n": 8}, "actor": {"optim": {
        "lr": 1e-6}}}}, "data": {"desc": None, "value": {"train_batch_size": 128}},
        "seed": {"value": 3}}
    assert flatten(config) == {"actor_rollout_ref.rollout.n": 8,
                               "actor_rollout_ref.actor.optim.lr": 1e-6,
                               "data.train_batch_size": 128, "seed": 3}


def test_a_wandb_export_beside_its_nested_config_reads_the_settings():
    pytest.importorskip("yaml")
    meta = load_run(FORMATS / "config_verl_wandb" / "history.csv").meta
    assert (meta.group_size.value, meta.batch.value, meta.length_cap.value) == (8, 128, 1024)
    assert meta.lr.value == pytest.approx(1e-6) and meta.lr.source == "file:config.yaml"
    assert meta.kl.value == pytest.approx(0.01)
    assert meta.kl.evidence.startswith("actor_rollout_ref.actor.kl_loss_coef in config.yaml")


def _event_file(folder: Path, args: str | None, tag: str = "args/text_summary") -> Path:
    """An event file of 12 rewards and, as transformers' callback writes it, an ``args`` text."""
    pytest.importorskip("tensorboard")
    import struct

    from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    events = [event_pb2.Event(wall_time=0.0, file_version="brain.Event:2")]
    if args is not None:
        text = summary_pb2.Summary.Value(
            tag=tag, metadata=summary_pb2.SummaryMetadata(
                plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text")),
            tensor=tensor_pb2.TensorProto(dtype="DT_STRING", string_val=[args.encode()]))
        events.append(event_pb2.Event(step=0, summary=summary_pb2.Summary(value=[text])))
    events += [event_pb2.Event(step=step, summary=summary_pb2.Summary(value=[
        summary_pb2.Summary.Value(tag="train/reward", simple_value=0.2 + step / 50)]))
        for step in range(1, 13)]
    records = []
    for event in events:
        data = event.SerializeToString()
        head = struct.pack("<Q", len(data))
        records.append(head + struct.pack("<I", masked_crc32c(head)) + data
                       + struct.pack("<I", masked_crc32c(data)))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "events.out.tfevents.1.host.1.0"
    path.write_bytes(b"".join(records))
    return path


def test_the_args_text_summary_of_a_tensorboard_log_is_its_config():
    pytest.importorskip("tensorboard")
    meta = load_run(FORMATS / "config_trl_tensorboard").meta
    assert (meta.group_size.value, meta.kl.value, meta.planned_steps.value) == (8, 0.04, 200)
    assert meta.length_cap.value == 1024 and meta.num_iterations.value == 1
    assert meta.group_size.source == "file:config_trl_tensorboard"
    assert meta.batch.value == 8  # 16 per device x 4 accumulated / 8 completions a prompt


@pytest.mark.parametrize("tag", ["args/text_summary", "args"])
def test_an_args_text_of_an_event_file_is_read(tmp_path, tag):
    path = _event_file(tmp_path, json.dumps({"num_generations": 4, "beta": 0.0,
                                             "max_steps": 12}), tag)
    meta = load_run(path).meta
    assert (meta.group_size.value, meta.kl.value, meta.planned_steps.value) == (4, 0.0, 12)


@pytest.mark.parametrize("text", ["{not json", "[8, 0.04]", ""])
def test_a_malformed_args_text_is_ignored_with_a_note(tmp_path, text):
    run = load_run(_event_file(tmp_path, text))
    assert run.meta.group_size is None or run.meta.group_size.source != "file:" + tmp_path.name
    assert run.meta.kl is None and run.meta.planned_steps is None
    assert any("args text summary" in w and "ignored" in w for w in run.warnings)


def test_each_run_of_a_tensorboard_tree_reads_its_own_args(tmp_path):
    from grpodyn.empirical.logs.loaders import load_runs

    _event_file(tmp_path / "a", json.dumps({"num_generations": 4, "max_steps": 12}))
    _event_file(tmp_path / "b", json.dumps({"num_generations": 16}))
    _event_file(tmp_path / "c", None)
    runs = {run.run_name: run.meta for run in load_runs(tmp_path)}
    assert runs["a"].value("planned_steps") == 12 and runs["b"].value("planned_steps") is None
    assert (runs["a"].group_size.value, runs["b"].group_size.value) == (4, 16)
    assert runs["c"].group_size is None or runs["c"].group_size.source == "inferred"


@pytest.mark.parametrize("config,momentum", [
    ({"optim": "sgd", "adam_beta1": 0.9}, 0.0),
    ({"optim": "sgd", "adam_beta1": 0.9, "optim_args": "momentum=0.8, nesterov=True"}, 0.8),
    ({"optim": "sgd", "momentum": 0.5}, 0.5),
    ({"optim": "adamw_torch", "adam_beta1": 0.9}, 0.9),
    ({"optim": "rmsprop", "adam_beta1": 0.9}, 0.0),
    ({"optim": "adafactor", "adam_beta1": 0.9}, 0.0),
    ({"optim": "adagrad", "adam_beta1": 0.9}, 0.0),
    ({"optim": "adalomo", "adam_beta1": 0.9}, 0.0),
    ({"optim": "paged_lion_8bit", "adam_beta1": 0.9}, 0.9),
])
def test_an_sgd_run_never_takes_adams_beta1_as_its_momentum(config, momentum):
    meta = meta_from_config(config, "file:training_args.json", "training_args.json")
    assert meta.momentum.value == momentum
