"""Scale-out: the same results in this process, in a local process pool and on Dask."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.empirical.bandit import lab
from grpodyn.empirical.bandit.simulation import simulate_bandit
from grpodyn.numerics.executor import describe_executor, run_tasks


def _tasks() -> list:
    config = lab.DEFAULT_CONFIG
    return [partial(simulate_bandit, config, steps=30, seeds=4, seed=seed) for seed in range(5)]


def _same_runs(a, b) -> None:
    assert len(a) == len(b)
    for left, right in zip(a, b, strict=True):
        np.testing.assert_array_equal(left.x, right.x)
        for key in left.metrics:
            np.testing.assert_array_equal(left.metrics[key], right.metrics[key])


def test_process_pool_gives_the_serial_results_in_task_order():
    serial = run_tasks(_tasks(), executor="serial")
    pooled = run_tasks(_tasks(), executor="process", costs=[1, 5, 2, 4, 3], progress=False)
    _same_runs(serial, pooled)
    assert [r.x[0, 0] for r in serial] == [lab.DEFAULT_CONFIG.x_ref] * 5


def test_threshold_lags_are_independent_of_the_executor():
    plan = lab.plan_threshold_experiment("refresh", momentum=0.5, lags=[3, 9], seeds=4,
                                         cycles=20)
    serial = lab.threshold_experiments([plan], executor="serial")[0]
    pooled = lab.threshold_experiments([plan], executor="process", progress=False)[0]
    assert serial == pooled


def test_executor_choice_and_refusals():
    assert describe_executor("serial", 10) == "serial"
    assert describe_executor("auto", 1) == "serial"
    assert describe_executor("tcp://127.0.0.1:8786", 3) == "dask"
    with pytest.raises(ValueError, match="executor"):
        run_tasks(_tasks(), executor="threads")
    with pytest.raises(ValueError, match="costs"):
        run_tasks(_tasks(), executor="serial", costs=[1.0])


def test_dask_local_cluster_gives_the_serial_results():
    distributed = pytest.importorskip("distributed")
    # in-process workers (threads): the scheduler, keys and gathering are Dask's own, and the
    # process-pool test above already pickles the same tasks
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            _same_runs(run_tasks(_tasks(), executor="serial"),
                       run_tasks(_tasks(), executor=client, costs=[5, 4, 3, 2, 1]))
            plan = lab.plan_threshold_experiment("staleness", momentum=0.0, lags=[2, 6],
                                                 seeds=4, cycles=20)
            assert lab.threshold_experiments([plan], executor=cluster.scheduler_address)[0] \
                == lab.threshold_experiments([plan], executor="serial")[0]


def test_bandit_cli_same_json_serial_and_pooled(capsys):
    argv = ["bandit", "--experiment", "refresh", "--momenta", "0.9", "--json"]
    assert main([*argv, "--serial"]) == 0
    serial = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    pooled = json.loads(capsys.readouterr().out)
    assert serial == pooled
    result = serial["refresh"][0]
    assert abs(result["observed"] - result["predicted"]) <= 1


@pytest.mark.parametrize("argv,needle", [
    (["--scheduler", "nowhere"], "--scheduler"),
    (["--scheduler", "tcp://127.0.0.1:1", "--serial"], "at most one"),
])
def test_bad_executor_options_are_refused(argv, needle, capsys):
    assert main(["bandit", "--experiment", "refresh", *argv, "--json"]) == 2
    assert needle in capsys.readouterr().err
