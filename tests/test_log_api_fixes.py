"""The Python API of the log analysis: strict-JSON dicts, the Monitor's analysis and early
warning against ``analyse_run`` and ``diagnose --until``, canonical metric names, skipped
rewards, reprs, argument errors, comparison by identity, and messages that name the Python
arguments."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from grpodyn.ground import InputError

REAL = Path(__file__).resolve().parent / "data" / "real_logs"
LZHIHAN = REAL / ("lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_"
                  "checkpoint-1200_trainer_state.excerpt.json")
E8 = REAL / ("ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_"
             "policy_sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")
JIANG = REAL / ("jianghoucheng__Agent_On_Policy_Distillation__wandb_run-20251203_214315-"
                "cr3q4lay_files_output.reward.log")
GARG = REAL / "garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data.excerpt.csv"


def _metrics(run, i: int) -> dict[str, float]:
    """The reward and the finite metrics of point ``i`` of ``run``, as a trainer logs them."""
    out = {"reward": float(run.reward[i])}
    out.update({k: float(v[i]) for k, v in run.metrics.items() if np.isfinite(v[i])})
    return out


def _feed(monitor, run, until: float = np.inf) -> dict:
    """Feed ``run``'s points up to step ``until`` to ``monitor``; return the states by step."""
    return {float(s): monitor.update(float(s), _metrics(run, i))
            for i, s in enumerate(run.steps) if s <= until}


# ---------------------------------------------------------------- 1. strict JSON


def test_to_dict_of_a_diagnosis_and_an_analysis_is_strict_json_as_the_command_writes_it(
        capsys):
    """The prompt pool's phi (NaN) and its interval's upper side (inf) were left in."""
    import grpodyn
    from grpodyn.cli import main

    diagnosis = grpodyn.diagnose(grpodyn.load_run(LZHIHAN)).to_dict()
    json.dumps(diagnosis, allow_nan=False)
    assert diagnosis["prompt_pool"]["early"]["phi"] is None
    assert main(["diagnose", str(LZHIHAN), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert {k: cli[k] for k in diagnosis} == diagnosis
    analysis = grpodyn.analyse_run(grpodyn.load_run(LZHIHAN)).to_dict()
    json.dumps(analysis, allow_nan=False)
    assert analysis["diagnosis"] == diagnosis


# ---------------------------------------------------------------- 2. the Monitor's analysis


def test_the_full_analysis_of_the_monitor_gives_the_statuses_of_analyse_run():
    """The exponential law alone called plateau and tau determined where the analysis of the
    same steps (five models, stacked) did not: the jianghoucheng run from step 55 on."""
    import grpodyn
    from grpodyn.empirical.diagnostics.early_warning import prefix
    from grpodyn.empirical.monitor import BASES

    run = grpodyn.load_run(JIANG)
    cheap = grpodyn.Monitor(momentum=0.9, diagnose_every=0, refit_every=20)
    full = grpodyn.Monitor(momentum=0.9, diagnose_every=0, refit_every=20, full_analysis=True)
    states, cheap_states = _feed(full, run, until=77), _feed(cheap, run, until=77)
    analysed = [s for s, state in states.items() if state.analysed_at == s]
    assert analysed
    for step in analysed:
        analysis = grpodyn.analyse_run(prefix(run, step), momentum=0.9, diagnose_run=False)
        assert states[step].plateau["status"] == analysis.plateau["status"]
        assert states[step].tau["status"] == analysis.dynamics["tau"]["status"]
        assert states[step].basis == BASES[True]
        assert cheap_states[step].basis == BASES[False]
    assert "exponential law alone" in BASES[False]
    assert cheap.state.to_dict()["basis"] == BASES[False]
    with pytest.raises(InputError, match="full_analysis"):
        grpodyn.Monitor(full_analysis="yes")


def test_the_callback_passes_full_analysis_to_its_monitor():
    pytest.importorskip("transformers")
    from types import SimpleNamespace

    from grpodyn.empirical.callback import GRPODynamicsCallback

    args = SimpleNamespace(num_generations=8, adam_beta1=0.9, max_completion_length=256)
    assert GRPODynamicsCallback(full_analysis=True)._monitor(args).full_analysis
    assert not GRPODynamicsCallback()._monitor(args).full_analysis
    with pytest.raises(InputError, match="full_analysis"):
        GRPODynamicsCallback(full_analysis=1)


# ---------------------------------------------------------------- 3. --until and the Monitor


def test_diagnose_until_is_the_warning_of_a_monitor_that_diagnoses_at_that_step():
    """`diagnose --until 25` on the e8 run drops the warning of step 19 (the diagnosis at 25
    flags the collapse); a monitor that diagnoses at 25 drops it too, one that diagnoses every
    50 (first diagnosis at 50) holds it; the guide and the Monitor say which."""
    import grpodyn
    from grpodyn.empirical.diagnostics.early_warning import prefix

    run = grpodyn.load_run(E8)
    until = grpodyn.diagnose(prefix(run, 25.0), group_size=8).early_warning
    assert until is None
    every5 = _feed(grpodyn.Monitor(group_size=8, diagnose_every=5), run, until=25)
    assert every5[25.0].diagnosed_at == 25.0 and every5[25.0].early_warning is None
    default = _feed(grpodyn.Monitor(group_size=8, diagnose_every=50), run, until=25)
    assert default[25.0].diagnosed_at is None and default[25.0].early_warning["step"] == 19.0
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    assert "a monitor which diagnoses at STEP" in guide
    assert "supposes a diagnosis at STEP" in guide
    assert "diagnoses at STEP" in " ".join(grpodyn.Monitor.__doc__.split())


def test_a_monitor_that_diagnoses_holds_the_warning_diagnose_until_reports():
    """At its diagnoses, every 10 updates, the monitor fed the lzhihan run holds the warning
    of ``diagnose(prefix(run, step))``, signals included (it missed clipped_rise at 600)."""
    import grpodyn
    from grpodyn.empirical.diagnostics.early_warning import prefix

    run = grpodyn.load_run(LZHIHAN)
    states = _feed(grpodyn.Monitor(diagnose_every=10), run)
    diagnosed = [s for s, state in states.items() if state.diagnosed_at == s]
    assert 600.0 in diagnosed
    for step in diagnosed:
        expected = grpodyn.diagnose(prefix(run, step)).early_warning
        held = states[step].early_warning
        assert (held is None) == (expected is None)
        if held is not None:
            assert (held["step"], held["signals"]) == (expected["step"], expected["signals"])


# ---------------------------------------------------------------- 4. canonical names


def test_every_canonical_name_is_an_alias_of_itself():
    from grpodyn import Monitor
    from grpodyn.empirical.logs.aliases import CANONICAL, METRIC_ALIASES, resolve

    for name in CANONICAL:
        assert name in METRIC_ALIASES[name], name
        assert resolve(name, {name}) == name, name
    monitor = Monitor(diagnose_every=0)
    for step in range(1, 4):
        monitor.update(step, {name: 0.1 * step for name in CANONICAL})
    for name in CANONICAL[1:]:
        assert monitor.metrics[name] == pytest.approx([0.1, 0.2, 0.3]), name


def test_a_run_with_every_canonical_metric_survives_the_round_trip_through_pandas():
    pytest.importorskip("pandas")
    from grpodyn.empirical.logs.aliases import CANONICAL
    from grpodyn.empirical.logs.loaders import Run

    steps = np.arange(1.0, 21.0)
    metrics = {name: 0.01 * steps + i for i, name in enumerate(CANONICAL[1:])}
    run = Run(source="<test>", format="test", steps=steps, reward=0.5 + 0.01 * steps,
              metrics=metrics)
    back = Run.from_pandas(run.to_pandas())
    assert sorted(back.metrics) == sorted(metrics)
    for name, values in metrics.items():
        np.testing.assert_allclose(back.metrics[name], values, err_msg=name)


# ---------------------------------------------------------------- 5. skipped rewards


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), np.float32("nan")])
def test_a_non_finite_reward_is_skipped_with_a_warning_and_a_note(bad):
    from grpodyn import Monitor
    from grpodyn.empirical.monitor import GRPODynamicsWarning

    monitor = Monitor(diagnose_every=0)
    with pytest.warns(GRPODynamicsWarning, match=r"at step 3 skipped: not finite") as caught:
        for step in range(1, 41):
            state = monitor.update(step, {"reward": bad if step % 4 == 3 else 0.1 + 0.01 * step})
    assert sum("skipped" in str(w.message) for w in caught) == 1
    assert state.points == 30 and 3 not in monitor.steps
    assert len(state.notes) == 1 and state.notes[0].startswith("10 reward(s) not finite")
    with pytest.warns(GRPODynamicsWarning, match="beyond"):
        state = monitor.update(41, {"reward": 1e13})
    assert len(state.notes) == 2 and "beyond" in state.notes[1]
    json.dumps(state.to_dict(), allow_nan=False)


# ---------------------------------------------------------------- 6. reprs


def test_the_repr_of_a_monitor_state_is_one_short_line_with_rounded_numbers():
    import grpodyn

    run = grpodyn.load_run(E8)
    monitor = grpodyn.Monitor(group_size=8, diagnose_every=20, min_points=10)
    state = _feed(monitor, run)[40.0]
    text = repr(state)
    assert "\n" not in text and len(text) < 250
    assert not re.search(r"\d{6,}", text) and "caveat" not in text  # 4 digits
    assert text.startswith("MonitorState(step=40, points=40, plateau=not_determined (<= ")
    assert "flags=['advantage_degeneracy'" in text
    assert "not diagnosed yet" in repr(grpodyn.Monitor().state)


# ---------------------------------------------------------------- 7. argument errors


@pytest.mark.parametrize("options,needle", [
    ({"horizon": float("nan")}, "horizon must be finite"),
    ({"horizon": float("inf")}, "horizon must be finite"),
    ({"until": float("nan")}, "until must be finite"),
    ({"train_fraction": float("nan")}, "train_fraction must be finite"),
    ({"horizon": "900"}, "horizon must be a number"),
])
def test_analyse_run_names_a_bad_cut_or_horizon(options, needle):
    import grpodyn

    with pytest.raises(InputError, match=needle):
        grpodyn.analyse_run(grpodyn.load_run(LZHIHAN), diagnose_run=False, **options)


def test_analyse_run_reads_one_model_name_as_one_model():
    import grpodyn

    analysis = grpodyn.analyse_run(grpodyn.load_run(LZHIHAN), models="exponential",
                                   diagnose_run=False, stack=False)
    assert set(analysis.fits) == {"exponential"}


def test_advise_log_refuses_a_sweep_that_is_not_a_fit_naming_the_argument():
    import grpodyn

    with pytest.raises(InputError, match=r"^sweep: expected a SweepFit .*'runs/sweep.json'"):
        grpodyn.advise_log(grpodyn.load_run(LZHIHAN), sweep="runs/sweep.json")


# ---------------------------------------------------------------- 8. comparison


def test_runs_and_analyses_compare_by_identity():
    import grpodyn

    a, b = grpodyn.load_run(LZHIHAN), grpodyn.load_run(LZHIHAN)
    assert a == a and a != b and b not in [a]
    first = grpodyn.analyse_run(a, diagnose_run=False, stack=False)
    second = grpodyn.analyse_run(b, diagnose_run=False, stack=False)
    assert first == first and first != second
    assert "Compared by identity" in type(a).__doc__ and "Compared by identity" in \
        type(first).__doc__


# ---------------------------------------------------------------- 9. Python names in messages


def test_messages_name_the_python_argument_beside_the_flag():
    import grpodyn
    from grpodyn.empirical.logs.common import LogFormatError

    with pytest.raises(LogFormatError, match=r"reward_key=, --reward-key"):
        grpodyn.load_run(LZHIHAN, reward_key="nope")
    with pytest.raises(LogFormatError, match=r"run='x' \(--run\) given"):
        grpodyn.load_run(LZHIHAN, run="x")
    run = grpodyn.load_run(GARG)
    assert run.warnings[0].endswith("choose another with run= (--run)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = grpodyn.analyse_run(run, stack=False, diagnose_run=False)
    assert "momentum unknown: give momentum= (--momentum)" in " ".join(analysis.warnings)
    assert "momentum= (--momentum)" in analysis.dynamics["regime"]["reason"]


def test_the_python_forecast_dict_carries_the_early_warning_and_bound_as_the_command():
    """analyse_run's forecast_dict holds what ``grpodyn forecast --json`` holds from it: the
    early warning at the cut (its note first among the warnings) and the plateau's bound."""
    import contextlib
    import io
    import json
    from pathlib import Path

    from grpodyn.cli import main
    from grpodyn.empirical.logs.loaders import load_run
    from grpodyn.empirical.logs.run_analysis import analyse_run

    log = str(Path(__file__).parent / "data" / "real_logs" / (
        "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_"
        "sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl"))
    ours = analyse_run(load_run(log), train_fraction=0.5, fit_on_training_part=True,
                       diagnose_run=False).forecast_dict()
    warning = ours["early_warning"]  # the shape diagnose, compare and the Monitor give
    assert set(warning) == {"step", "signals", "evidence", "remedy"}
    assert warning["step"] == 19.0 and warning["signals"] == ["kl_rise", "length_departure"]
    assert set(warning["evidence"]) == set(warning["signals"])
    assert ours["warnings"][0].startswith("the early warning fired at step 19")
    assert "bound" in ours["plateau"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["forecast", log, "--train-fraction", "0.5", "--json"]) == 0
    cli = json.loads(buffer.getvalue())
    assert cli["early_warning"] == ours["early_warning"]
    assert cli["warnings"][0] == ours["warnings"][0]
    assert cli["plateau"].keys() == ours["plateau"].keys()


def test_the_hyperparameters_survive_the_round_trip_through_pandas():
    """Run.to_pandas keeps the run's hyperparameters (with their sources) for from_pandas."""
    pytest.importorskip("pandas")
    from pathlib import Path

    from grpodyn.empirical.logs.loaders import Run, load_run

    log = Path(__file__).parent / "data" / "real_logs" / (
        "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_grpo_off_policy_"
        "sweep_runs_broad_e8_tb256_metrics.excerpt.jsonl")
    run = load_run(log)
    back = Run.from_pandas(run.to_pandas())
    assert back.meta.to_dict() == run.meta.to_dict()
    assert back.meta.value("lr") == 4e-05 and back.meta.value("group_size") == 8
    frame = run.to_pandas()
    frame.attrs["grpodyn_meta"] = {"lr": {"value": 1.0, "source": "nowhere"}}
    with pytest.raises(ValueError, match="grpodyn_meta"):
        Run.from_pandas(frame)
