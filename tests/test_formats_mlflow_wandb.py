"""Logs of W&B's binary run file, MLflow's file store, nested log folders and W&B runs tables.

Data (tests/data/formats):

- ``wandb_binary_run/run-bpdp57kt.wandb``: the first 36746 bytes of an offline TRL run's
  ``run-<id>.wandb`` written by wandb 0.31 (the header, run, config and summary records and
  the history of steps 1-12, one record spanning the 32 KiB block boundary), cut at a record's
  end; one local path in it was replaced by another of the same length and the checksums of
  those blocks recomputed.
- ``mlflow_mlruns/``: an MLflow file store (``mlruns/``) of a TRL run written through the
  Trainer's MLflow callback (steps 1-30, evaluation at 25) and a verl run written through verl's
  MLflow adapter (steps 1-20, validation every 5 steps, ``@`` spelled ``_at_``), each with a
  dozen of its metrics and params, and the empty ``Default`` experiment.
"""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from grpodyn.empirical.logs.loaders import LogFormatError, list_runs, load_run, load_runs
from grpodyn.empirical.logs.wandb_records import read_run_file

FORMATS = Path(__file__).parent / "data" / "formats"
WANDB = FORMATS / "wandb_binary_run" / "run-bpdp57kt.wandb"
MLRUNS = FORMATS / "mlflow_mlruns"
TRL_EXPERIMENT = MLRUNS / "645224189259869132"
TRL_RUN = TRL_EXPERIMENT / "05369907f1be4fe5b280eaa52016b18b"
VERL_RUN = MLRUNS / "286819226640426723" / "44301ecd00c3418da23c8b80d58316be"
REWARDS = [0.121875, 0.19375, 0.3296875, 0.1796875, 0.228125, 0.23125, 0.48125, 0.3171875,
           0.365625, 0.303125, 0.25, 0.334375]


def _wandb_folder(root: Path, *, online: bool = False) -> Path:
    """Lay out a ``wandb/`` folder as wandb writes it around the run file; return the folder."""
    run = root / "wandb" / (("run-" if online else "offline-run-") + "20261206_063714-bpdp57kt")
    (run / "files").mkdir(parents=True)
    (run / "files" / "requirements.txt").write_text("trl\n")
    shutil.copy(WANDB, run / "run-bpdp57kt.wandb")
    (root / "wandb" / "latest-run").symlink_to(run)
    return root / "wandb"


# ---------------------------------------------------------------------------- W&B run file


def test_the_wandb_run_file_of_an_offline_run_is_read(tmp_path):
    folder = _wandb_folder(tmp_path)
    for path in (folder, folder / "latest-run", folder / "latest-run" / "run-bpdp57kt.wandb"):
        run = load_run(path)
        assert run.format == "wandb_binary" and run.n_points == 12
        assert list(run.steps) == list(range(1, 13))  # train/global_step, not W&B's _step
        np.testing.assert_allclose(run.reward, REWARDS)
        assert run.reward_key == "train/reward" and run.metric_keys["kl"] == "train/kl"
        # the config record: the run's settings
        assert (run.meta.lr.value, run.meta.group_size.value) == (1e-6, 8)
        assert "run-bpdp57kt.wandb" in run.meta.lr.source


def test_the_run_file_is_read_before_a_console_log_beside_it(tmp_path):
    folder = _wandb_folder(tmp_path, online=True)
    files = folder / "latest-run" / "files"
    (files / "output.log").write_text("{'loss': 0.1, 'reward': 0.9, 'epoch': 0.1}\n")
    (files / "config.yaml").write_text("learning_rate:\n  value: 1.0e-06\n")
    run = load_run(folder)
    assert run.format == "wandb_binary" and run.n_points == 12


def test_a_run_file_cut_short_keeps_its_whole_records_with_a_note(tmp_path):
    cut = tmp_path / "run-x.wandb"
    cut.write_bytes(WANDB.read_bytes()[:-500])  # the last history record loses its end
    run = load_run(cut)
    assert run.n_points == 11
    assert any("cut short" in w for w in run.warnings)


def test_a_corrupt_run_file_is_refused_in_one_line_naming_it(tmp_path):
    data = bytearray(WANDB.read_bytes())
    data[20000] ^= 0xFF
    bad = tmp_path / "run-y.wandb"
    bad.write_bytes(bytes(data))
    with pytest.raises(LogFormatError, match=r"run-y\.wandb: .*checksum") as caught:
        load_run(bad)
    assert "\n" not in str(caught.value)
    other = tmp_path / "run-z.wandb"
    other.write_bytes(b"not a run file at all")
    with pytest.raises(LogFormatError, match=r"run-z\.wandb: not a W&B run file"):
        load_run(other)


def test_a_record_longer_than_its_block_is_refused(tmp_path):
    data = bytearray(WANDB.read_bytes())
    struct.pack_into("<H", data, 7 + 4, 40000)  # the first record's length past its block
    bad = tmp_path / "run-w.wandb"
    bad.write_bytes(bytes(data))
    with pytest.raises(LogFormatError, match=r"run-w\.wandb: .*offset 7"):
        load_run(bad)


def _field(number: int, payload: bytes | int, wire: int = 2) -> bytes:
    """One protocol-buffer field: a length-delimited payload, or a varint."""
    def varint(value: int) -> bytes:
        out = bytearray()
        while True:
            out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
            value >>= 7
            if not value:
                return bytes(out)
    if wire == 0:
        return varint(number << 3) + varint(payload)
    if wire == 1:
        return varint(number << 3 | 1) + payload
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def test_typed_history_values_and_the_run_record_config_are_read(tmp_path):
    """wandb_internal.proto's HistoryItem: number 6, integer 5 (zigzag), boolean 4, text 7."""
    items = [_field(2, b"train/reward") + _field(6, struct.pack("<d", 0.25), wire=1),
             _field(1, b"train/global_step") + _field(5, 2 * 7, wire=0),
             _field(1, b"done") + _field(4, 1, wire=0), _field(1, b"phase") + _field(7, b"rl"),
             _field(1, b"delta") + _field(5, 2 * 3 - 1, wire=0)]
    history = _field(2, b"".join(_field(1, item) for item in items) + _field(2, _field(1, 3, 0)))
    config = _field(17, _field(4, _field(1, _field(1, b"learning_rate")
                                           + _field(16, b"2e-06"))))
    blob = struct.pack("<4sHB", b":W&B", 0xBEE1, 0)
    for record in (config, history):
        crc = zlib.crc32(record, zlib.crc32(b"\x01"))
        blob += struct.pack("<IHB", crc, len(record), 1) + record
    path = tmp_path / "run-t.wandb"
    path.write_bytes(blob)
    rows = read_run_file(path)
    assert rows.history == [{"train/reward": 0.25, "train/global_step": 7, "done": True,
                             "phase": "rl", "delta": -3, "_step": 3}]
    assert rows.config == {"learning_rate": 2e-6}


def test_a_wandb_summary_alone_says_where_the_history_is(tmp_path):
    folder = _wandb_folder(tmp_path)
    summary = folder / "latest-run" / "files" / "wandb-summary.json"
    summary.write_text('{"train/reward": 0.72, "_step": 208, "_runtime": 12.5}')
    with pytest.raises(LogFormatError, match="only the last value of each metric") as caught:
        load_run(summary)
    assert "run-bpdp57kt.wandb" in str(caught.value) and "\n" not in str(caught.value)


# ---------------------------------------------------------------------------- MLflow


def test_an_mlflow_run_of_trl_is_read_with_its_params():
    run = load_run(TRL_RUN)
    assert run.format == "mlflow" and run.n_points == 30
    assert list(run.steps) == list(range(1, 31))
    assert run.reward_key == "reward" and run.metric_keys["heldout_reward"] == "eval_reward"
    assert list(run.steps[np.isfinite(run.metrics["heldout_reward"])]) == [25]
    assert run.meta.lr.value == 1e-6 and run.meta.group_size.value == 8
    assert run.meta.kl.value == 0.04 and run.meta.batch.value == 8  # 16 x 4 / 8
    assert run.run_name is None
    # the metrics folder of a run is the run
    assert load_run(TRL_RUN / "metrics").n_points == 30


def test_an_mlflow_run_of_verl_maps_at_back_and_reads_the_policy_settings():
    run = load_run(VERL_RUN)
    assert run.reward_key == "critic/score/mean" and run.n_points == 20
    assert run.metric_keys["heldout_reward"] == "val-core/openai/gsm8k/reward/mean@1"
    # val_before_train's step-0 evaluation goes to the first training point
    assert list(run.steps[np.isfinite(run.metrics["heldout_reward"])]) == [1, 5, 10, 15, 20]
    assert any(w.startswith("the held-out value at step 0, before the first training point")
               for w in run.warnings)
    assert run.meta.lr.value == 1e-6  # the actor's, not the critic's 1e-5
    assert (run.meta.group_size.value, run.meta.batch.value) == (8, 128)


def test_an_mlflow_experiment_of_several_runs_reads_one_run_per_folder(tmp_path):
    experiment = tmp_path / "645224189259869132"
    shutil.copytree(TRL_EXPERIMENT, experiment)
    second = experiment / "aaaa0000bbbb1111cccc2222dddd3333"
    shutil.copytree(experiment / TRL_RUN.name, second)
    (second / "params" / "learning_rate").write_text("3e-06")
    meta = second / "meta.yaml"
    meta.write_text(meta.read_text().replace("run_name: qwen2.5-1.5b-grpo", "run_name: lr3e-6"))
    assert sorted(list_runs(experiment)) == ["lr3e-6", "qwen2.5-1.5b-grpo"]
    lrs = {run.run_name: run.meta.lr.value for run in load_runs(experiment)}
    assert lrs == {"lr3e-6": 3e-6, "qwen2.5-1.5b-grpo": 1e-6}


def test_an_mlflow_store_of_several_experiments_names_them():
    with pytest.raises(LogFormatError, match="286819226640426723.*645224189259869132") as caught:
        load_run(MLRUNS)
    assert "verl_grpo_example_gsm8k" in str(caught.value)


def test_an_mlflow_store_of_one_experiment_with_runs_reads_it(tmp_path):
    store = tmp_path / "mlruns"
    shutil.copytree(MLRUNS / "0", store / "0")
    shutil.copytree(TRL_EXPERIMENT, store / TRL_EXPERIMENT.name)
    run = load_run(store)
    assert run.n_points == 30 and any("grpo-gsm8k" in w for w in run.warnings)


def test_a_value_logged_again_at_its_step_replaces_the_earlier_one(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(TRL_RUN, run)
    with (run / "metrics" / "reward").open("a") as stream:
        stream.write("1796539173999 0.5 30\n")
    with (run / "metrics" / "epoch").open("a") as stream:  # the same value again: no note
        stream.write("1796539173999 0.15 30\n")
    loaded = load_run(run)
    assert loaded.reward[-1] == 0.5
    assert [w for w in loaded.warnings if "logged again" in w] == [
        "metric values logged again at their step with another value (1): the last one read"]


def test_deleted_runs_of_an_experiment_are_left_out(tmp_path):
    experiment = tmp_path / "645224189259869132"
    shutil.copytree(TRL_EXPERIMENT, experiment)
    gone = experiment / "aaaa0000bbbb1111cccc2222dddd3333"
    shutil.copytree(experiment / TRL_RUN.name, gone)
    (gone / "meta.yaml").write_text("run_id: aaaa0000bbbb1111cccc2222dddd3333\n"
                                    "lifecycle_stage: deleted\nrun_name: gone\n")
    run = load_run(experiment)
    assert run.run_name == "qwen2.5-1.5b-grpo"
    assert any("deleted runs left out (1): aaaa0000" in w for w in run.warnings)


def test_a_malformed_mlflow_metric_line_is_named(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(TRL_RUN, run)
    with (run / "metrics" / "kl").open("a") as stream:
        stream.write("1796539173999 oops 31\n")
    with pytest.raises(LogFormatError, match=r"metrics/kl:31: .*timestamp value step"):
        load_run(run)


# ---------------------------------------------------------------------------- nested folders


def test_a_folder_holding_one_folder_of_logs_is_read_through_it(tmp_path):
    project = tmp_path / "file_logger" / "verl_grpo_example_gsm8k"
    project.mkdir(parents=True)
    shutil.copy(FORMATS / "verl_file_logger.jsonl", project / "qwen2_7b_function_rm.jsonl")
    run = load_run(tmp_path / "file_logger")
    assert run.format == "verl_jsonl"
    assert any("verl_grpo_example_gsm8k" in w for w in run.warnings)


def test_a_folder_holding_one_empty_folder_names_it(tmp_path):
    (tmp_path / "root" / "project").mkdir(parents=True)
    with pytest.raises(LogFormatError, match=r"root/project: a directory without a log"):
        load_run(tmp_path / "root")


# ---------------------------------------------------------------------------- W&B runs table


def test_a_wandb_runs_table_is_refused_as_one_summary_row_per_run(tmp_path):
    table = tmp_path / "wandb_export_2026-06-01T12_00_00.000+00_00.csv"
    table.write_text(
        '"Name","State","Notes","User","Tags","Created","Runtime","Sweep","learning_rate",'
        '"train/global_step","train/reward","_step"\n'
        '"lr1e-6","finished","-","me","","2026-06-01T10:00:00.000Z","7204","","1e-06","200",'
        '"0.7012","208"\n'
        '"lr3e-6","finished","-","me","","2026-06-02T10:00:00.000Z","7190","","3e-06","200",'
        '"0.7523","208"\n')
    with pytest.raises(LogFormatError, match="one summary row per run") as caught:
        load_run(table)
    assert "2 runs" in str(caught.value) and "history" in str(caught.value)
    assert "\n" not in str(caught.value)
