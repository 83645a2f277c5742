"""The scripts that make the shipped data, at a few steps (slow: run with ``pytest -m slow``)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("label", ["healthy", "reward_hacking", "advantage_degeneracy",
                                   "policy_concentration", "dynamical_instability"])
def test_tiny_testbed_case(label):
    pytest.importorskip("trl")
    from grpodyn.empirical.tinylm.make_testbed import make_case

    case = make_case(label, 0, steps=16)
    assert case["label"] == label and case["log_history"]
    if label == "reward_hacking":
        assert all("eval/reward" in h for h in case["log_history"])


def test_probe_run_short():
    pytest.importorskip("trl")
    from grpodyn.empirical.tinylm.curvature_probe import probe_run

    out = probe_run(4, 0, steps=31, every=10, replicates=2, progress=False)
    assert len(out["points"]) == 3 and out["fitted"]["tau"] > 0


def test_make_tiny_run_short():
    pytest.importorskip("trl")
    from grpodyn.empirical.tinylm.make_runs import make_run

    run = make_run(4, 0, steps=8)
    assert len(run["log_history"]) == 8 and set(run["transfer"]) >= {"add", "multiply"}
