"""benchmarks/transfer_pool.py: pooling held-out transfer scores and the copy test's interval."""

import json
import runpy
from pathlib import Path

import numpy as np
import pytest

POOL = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks"
                          / "transfer_pool.py"))


def test_wilson_interval_matches_the_closed_form_and_covers():
    """Known values (7 of 7: lower 0.646; 0 of 10: upper 0.278) and 95% coverage by simulation."""
    wilson = POOL["wilson_interval"]
    assert wilson(7, 7) == pytest.approx((0.6457, 1.0), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    low, high = wilson(4.83, 7)  # a fractional count (a tie scored as a share) is accepted
    assert low < 4.83 / 7 < high
    rng = np.random.default_rng(1)
    share, n = 0.75, 14
    counts = rng.binomial(n, share, size=4000)
    covered = np.mean([lo <= share <= hi for lo, hi in (wilson(k, n) for k in counts)])
    assert 0.90 <= covered <= 0.99  # Wilson's interval is near nominal at n = 14


def _score(tmp_path: Path, name: str, beats: list[float], seeds: list[int]) -> Path:
    held = [{"r2_ratio": 0.9 + 0.01 * i, "coverage": 0.9, "beats_nearest_copy": b}
            for i, b in enumerate(beats)]
    pairs = {"0,1": 1.0, "0,2": 0.5} if len(seeds) > 2 else {}
    data = {"seeds": seeds, "method_changed_since_frozen": [],
            "optimizers": {"sgd": {"held_out": held,
                                   "summary": {"beats_nearest_copy_by_seed_pair": pairs}}}}
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_pool_counts_every_held_out_setting_of_every_file(tmp_path, capsys):
    a = _score(tmp_path, "a.json", [1.0, 0.0, 5 / 6], [5, 6])
    b = _score(tmp_path, "b.json", [1.0, 1.0], [0, 1, 2])
    assert POOL["main"]([str(a), str(b), "--out", str(tmp_path / "pool.json")]) == 0
    result = json.loads(capsys.readouterr().out)
    pooled = result["pooled"]["sgd"]
    assert pooled["held_out_settings"] == 5
    assert pooled["beats_nearest_copy"] == pytest.approx(1 + 5 / 6 + 2)
    assert pooled["median_r2_ratio"] == pytest.approx(0.91)
    assert result["files"][str(b)]["sgd"]["seed_pairs"]["min"] == 0.5
    assert json.loads((tmp_path / "pool.json").read_text()) == result


def test_pool_rejects_a_file_that_is_not_a_score(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    assert POOL["main"]([str(bad)]) == 2
    assert "bad.json" in capsys.readouterr().err
    public = tmp_path / "public.json"
    public.write_text(json.dumps({"optimizers": {}, "public": {}}))
    assert POOL["main"]([str(public)]) == 2
    assert "no held-out scores" in capsys.readouterr().err


def test_copy_test_on_every_pair_of_held_out_seeds():
    """benchmarks/transfer.py's pair scores: each pair's two-seed mean against the copies."""
    bench = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks"
                                / "transfer.py"))
    steps = np.arange(50)
    truth = 0.3 + 0.002 * steps
    # seeds 3 and 4 sit on the transfer's curve; seed 5 runs far above it, onto the copy
    held = [bench["SweepRun"](f"run{s}", steps, truth + offset, {"seed": s})
            for s, offset in ((3, 0.0), (4, 0.0), (5, 0.2))]
    predictions = [{"mean": list(truth)} for _ in held]
    copies = [truth + 0.15, truth - 0.5]  # two tied copies
    pairs = bench["_pair_scores"](held, predictions, steps, copies)
    assert pairs == {"3,4": 1.0, "3,5": 0.5, "4,5": 0.5}


def test_pool_reads_every_sweep_and_pools_them_all(tmp_path, capsys):
    """A score of every sweep (keyed by title) pools per sweep and over all of them."""
    def held(beats_src: float, outside: int) -> dict:
        return {"r2_ratio": 0.8, "coverage": 0.9, "beats_nearest_copy": 1.0,
                "beats_copy_sources": beats_src, "mean_outside_range": outside}
    data = {"sweeps": {"grid / adam": {"held_out": [held(1.0, 0), held(0.0, 0)]},
                       "public S4": {"held_out": [held(1.0, 2)]},
                       "public broken": {"status": "not loaded: missing"}}}
    path = tmp_path / "sweeps.json"
    path.write_text(json.dumps(data))
    assert POOL["main"]([str(path)]) == 0
    pooled = json.loads(capsys.readouterr().out)["pooled"]
    assert set(pooled) == {"grid / adam", "public S4", "all"}
    assert pooled["all"]["held_out_settings"] == 3
    assert pooled["all"]["beats_copy_sources_fraction"] == pytest.approx(2 / 3)
    assert pooled["all"]["means_outside_range"] == 2


def test_a_fallback_is_a_tie_not_a_win_and_kinds_are_pooled_apart():
    """A setting whose mean fell back to the nearest source counts as lost in the strict share."""
    base = {"r2_ratio": 1.2, "r2_ratio_unconditioned": 0.9, "coverage": 0.9,
            "beats_copy_sources": 1.0, "mean_outside_range": 0, "r2_transfer": 0.5,
            "r2_own_fit": 0.4, "beats_smoothed_copy_unconditioned": 1.0}
    held = [{**base, "kind": "G", "fallback": True, "beats_nearest_copy": 1.0},
            {**base, "kind": "G", "fallback": False, "beats_nearest_copy": 1.0},
            {**base, "kind": "lr", "fallback": False, "beats_nearest_copy": 0.0,
             "beats_smoothed_copy_unconditioned": 0.0}]
    out = POOL["pooled"](held)
    assert out["beats_nearest_copy_fraction"] == pytest.approx(2 / 3)
    assert out["beats_nearest_copy_fraction_fallback_as_loss"] == pytest.approx(1 / 3)
    assert out["fallback_settings"] == 1
    assert out["beats_smoothed_copy_unconditioned_fraction"] == pytest.approx(2 / 3)
    assert out["median_r2_ratio_unconditioned"] == pytest.approx(0.9)


def test_pool_by_kind(tmp_path, capsys):
    held = [{"r2_ratio": 0.9, "coverage": 0.9, "beats_nearest_copy": b, "kind": k}
            for b, k in ((1.0, "G"), (0.0, "G"), (1.0, "B"))]
    path = tmp_path / "score.json"
    path.write_text(json.dumps({"optimizers": {"sgd": {"held_out": held}}}))
    assert POOL["main"]([str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pooled_by_kind"]["G"]["beats_nearest_copy_fraction"] == pytest.approx(0.5)
    assert out["pooled_by_kind"]["B"]["held_out_settings"] == 1
