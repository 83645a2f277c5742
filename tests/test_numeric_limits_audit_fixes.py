"""Inputs at the edge of the floats and of the machine: each is computed or refused by name.

Group sizes past the largest exact binomial coefficient, stiffnesses and momenta that leave no
digits, lags and path lengths that would run for minutes or exhaust memory, bandit settings the
simulation cannot hold, and advise options that were accepted and then ignored.
"""

from __future__ import annotations

import json
import math
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.ground import InputError, check_momentum
from grpodyn.ground.checks import GROUP_SIZE_MAX
from grpodyn.numerics.advise import advise
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.mean_field_map import MeanFieldMap
from grpodyn.numerics.prompt_pool import (
    EXACT_BINOMIAL_MAX,
    drift_loss,
    fit_prompt_pool_extremes,
    group_range_chance,
    read_group_extremes,
    successes_pmf,
)

TINY = (Path(__file__).parents[1] / "studies" / "tiny_grids" / "data" / "tiny_grid"
        / "adam_lr0.0003_G4_B8_seed0.json")


def _error(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    """Run ``argv``: exit 2, one stderr line without a traceback, nothing on stdout."""
    assert main(argv) == 2, argv
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _json(argv: list[str], capsys: pytest.CaptureFixture) -> dict:
    """Run ``argv`` with --json: exit 0 and one strict JSON object on stdout."""
    assert main([*argv, "--json"]) == 0, argv
    return json.loads(capsys.readouterr().out, parse_constant=pytest.fail)


def _log_with_group_size(tmp_path: Path, group_size: int) -> str:
    """The tiny TRL log with ``grpodyn_hparams.group_size`` set to ``group_size``."""
    state = json.loads(TINY.read_text())
    state["grpodyn_hparams"]["group_size"] = group_size
    path = tmp_path / f"G{group_size}.json"
    path.write_text(json.dumps(state))
    return str(path)


# -- group sizes: the Beta-binomial law in O(G), exact where the coefficients are floats --------

@pytest.mark.parametrize("group_size", [2, 3, 8, 17, 64])
@pytest.mark.parametrize("a,b", [(0.05, 0.95), (2.5, 47.5), (5e3, 5e3)])
def test_successes_pmf_is_the_generated_derivation_to_the_last_bit(group_size, a, b):
    counts = np.arange(group_size + 1)
    expected = compiled("prompt_pool_successes_pmf")(counts, group_size, a, b)
    assert np.array_equal(successes_pmf(group_size, a, b), expected)


@pytest.mark.parametrize("group_size", [EXACT_BINOMIAL_MAX + 1, 2048, GROUP_SIZE_MAX])
def test_successes_pmf_stays_a_law_beyond_the_exact_binomial(group_size):
    from scipy.stats import betabinom

    pmf = successes_pmf(group_size, 1.5, 3.5)
    assert pmf.shape == (group_size + 1,) and np.all(np.isfinite(pmf)) and np.all(pmf >= 0)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(pmf[1:50], betabinom.pmf(np.arange(1, 50), group_size, 1.5, 3.5),
                               rtol=1e-9)


def test_drift_loss_and_range_chance_hold_past_the_float_binomial():
    """G = 2048 raised OverflowError (math.comb into a float); the loss falls toward 0 in G."""
    losses = [drift_loss(0.3, 3.0, g) for g in (64, 1029, 1030, 2048)]
    assert all(0 <= v <= 1 for v in losses) and losses == sorted(losses, reverse=True)
    chance = group_range_chance(np.array([1, 10]), np.array([2047, 5]), group_size=2048,
                                mean=0.3, phi=3.0)
    assert 0 < chance[1] < 0.01 and chance[0] == pytest.approx(1.0)  # every count


def test_group_size_beyond_the_cap_is_refused_by_the_numerics():
    with pytest.raises(InputError, match=f"group_size must be <= {GROUP_SIZE_MAX}"):
        drift_loss(0.3, 3.0, GROUP_SIZE_MAX + 1)


def test_extremes_fit_at_a_large_group_needs_no_group_squared_memory():
    """verl's advantage extremes at G = 16384: a G x G table and a steps x G gap matrix (2 GiB
    and 0.5 GiB) were allocated; the fit now holds O(G + steps)."""
    g, steps, batch = 16384, 2000, 16
    rng = np.random.default_rng(3)
    successes = rng.binomial(g, rng.beta(1.5, 1.5, (steps, batch)))
    spread = (successes > 0) & (successes < g)
    lo, hi = np.where(spread, successes, g).min(1), np.where(spread, successes, 0).max(1)
    counts = np.arange(1, g)
    top = compiled("grpo_top_advantage")(counts, g, 1e-6)[lo - 1]
    bottom = compiled("grpo_bottom_advantage")(counts, g, 1e-6)[hi - 1]
    tracemalloc.start()
    try:
        s_lo, s_hi, read = read_group_extremes(top, bottom, group_size=g)
        pool = fit_prompt_pool_extremes(successes.mean(1) / g, top, bottom, group_size=g,
                                        batch=batch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read.all() and np.array_equal(s_lo, lo) and np.array_equal(s_hi, hi)
    assert pool.status == "estimated" and pool.low < 3.0 < pool.high  # phi = a + b
    assert peak < 100 * 2**20


def test_diagnose_reads_a_log_of_a_large_group(tmp_path, capsys):
    """diagnose, report, compare and advise exited 1 with OverflowError on G = 2048."""
    log = _log_with_group_size(tmp_path, 2048)
    result = _json(["diagnose", log], capsys)
    assert result["group_size"]["value"] == 2048
    assert main(["report", log, "--json"]) == 0
    capsys.readouterr()
    assert main(["advise", "--log", log, "--json"]) == 0
    capsys.readouterr()


def test_group_size_beyond_the_cap_is_refused_naming_where_it_came_from(tmp_path, capsys):
    """--group-size 100000 asked for a 74.5 GiB array; a log's own G now names the log."""
    line = _error(["diagnose", str(TINY), "--group-size", str(GROUP_SIZE_MAX + 1)], capsys)
    assert "--group-size" in line and str(GROUP_SIZE_MAX) in line
    log = _log_with_group_size(tmp_path, 100_000)
    line = _error(["diagnose", log], capsys)
    assert log in line and "100000" in line and str(GROUP_SIZE_MAX) in line


def test_group_size_past_the_float_binomial_is_diagnosed(capsys):
    assert _json(["diagnose", str(TINY), "--group-size", "1100"], capsys)["group_size"][
        "value"] == 1100


# -- stiffness and momentum at the edge of the floats -------------------------------------------

@pytest.mark.parametrize("lr,kappa", [("1e-300", "1e-20"), ("1e300", "1e300")])
def test_predict_refuses_a_stiffness_outside_the_normal_floats(lr, kappa, capsys):
    """A subnormal lr kappa printed half a JSON object, then a traceback on tau = inf."""
    line = _error(["predict", "--lr", lr, "--momentum", "0.9", "--kappa", kappa, "--json"],
                  capsys)
    assert "lr" in line and "kappa" in line and "stiffness" in line


def test_a_subnormal_lr_is_refused_as_the_option_given(capsys):
    """An lr of 1e-320 itself is refused where it is read, naming --lr."""
    line = _error(["predict", "--lr", "1e-320", "--momentum", "0.9", "--kappa", "1", "--json"],
                  capsys)
    assert "argument --lr: '1e-320' is below" in line


def test_predict_json_is_strict_at_a_tiny_normal_stiffness(capsys):
    result = _json(["predict", "--lr", "1e-300", "--momentum", "0.9", "--kappa", "1"], capsys)
    assert result["regime"] == "overdamped" and math.isfinite(result["tau"])


def test_advise_refuses_a_kappa_whose_lr_overflows(capsys):
    """advise --kappa 1e-320 answered "lr": null with exit 0."""
    # the command line refuses a subnormal kappa where it reads it; the API, at the overflow
    assert "argument --kappa: '1e-320' is below" in _error(
        ["advise", "--kappa", "1e-320", "--json"], capsys)
    with pytest.raises(InputError, match="kappa"):
        advise(kappa=1e-320, momentum=0.9)


@pytest.mark.parametrize("command", [
    ["predict", "--lr", "0.01", "--kappa", "1"],
    ["advise", "--kappa", "1"],
])
def test_momentum_whose_complement_has_no_digits_is_refused(command, capsys):
    """0.999999999 divided by zero in the refresh condition, or named the stiffness."""
    line = _error([*command, "--momentum", "0.999999999"], capsys)
    assert "--momentum" in line and "0.999" in line


def test_momentum_bound_is_the_precision_of_the_stability_formulas():
    assert float(check_momentum(0.999)) == 0.999
    with pytest.raises(InputError, match="at most 0.999"):
        check_momentum(0.9995)
    # Adam's beta2 enters no stability formula: any value below 1
    assert MeanFieldMap(lr=0.01, kappa=1.0, optimizer="adam", beta2=0.99999).regime


def test_refresh_search_finds_the_threshold_below_four_over_k(capsys):
    """At beta = 0.999 and critical damping the first unstable K (~ 10 / (1 - beta)) lies far
    below 4 / k; the search began at 4 / k > the cap and said every K was stable."""
    result = _json(["advise", "--kappa", "1", "--momentum", "0.999"], capsys)
    assert 9_000 < result["refresh_max"] < 11_000


# -- lags and path lengths that would run for minutes ---------------------------------------------

@pytest.mark.parametrize("argv,flag,cap", [
    (["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", "--staleness",
      "1000000"], "--staleness", "200"),
    (["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", "--staleness", "800"],
     "--staleness", "200"),
    (["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", "--refresh", "20000"],
     "--refresh", "10,000"),
    (["advise", "--kappa", "1", "--staleness", "5000"], "--staleness", "200"),
    (["advise", "--kappa", "1", "--refresh", "100000"], "--refresh", "10,000"),
    (["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", "--r0", "0.1",
      "--plateau", "0.9", "--steps", "99999999999999999999"], "--steps", "100,000"),
    (["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", "--r0", "0.1",
      "--plateau", "0.9", "--steps", "100000000"], "--steps", "100,000"),
])
def test_sizes_beyond_their_cap_are_refused_at_once(argv, flag, cap, capsys):
    start = time.perf_counter()
    line = _error(argv, capsys)
    assert flag in line and cap in line and time.perf_counter() - start < 5


def test_sizes_at_their_cap_are_computed(capsys):
    result = _json(["predict", "--lr", "0.01", "--momentum", "0.9", "--kappa", "1", "--refresh",
                    "10000", "--r0", "0.1", "--plateau", "0.9", "--steps", "100000"], capsys)
    assert len(result["trajectory"]) == 100_001 and result["lag"] == "refresh K = 10000"


# -- the bandit lab ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv,flag", [
    (["bandit", "--experiment", "stiffness", "--kl", "1e300", "--serial"], "--kl"),
    (["bandit", "--experiment", "stiffness", "--kl", "1e-12", "--serial"], "--kl"),
    (["bandit", "--experiment", "stiffness", "--kl", "0", "--serial"], "--kl"),
    (["bandit", "--experiment", "refresh", "--momenta", "0.5", "0.9999"], "--momenta"),
    (["bandit", "--write-log", "OUT", "--steps", "10000000000"], "--steps"),
    (["bandit", "--write-log", "OUT", "--momentum", "0.9999"], "--momentum"),
    (["bandit", "--write-log", ""], "--write-log: an empty path"),
    (["bandit", "--write-log", "", "--steps", "5"], "--write-log: an empty path"),
])
def test_bandit_numbers_the_simulation_cannot_hold_are_refused(argv, flag, tmp_path, capsys):
    """--kl 1e300 overflowed; an empty --write-log ran the experiments or blamed --steps."""
    argv = [str(tmp_path / "out.json") if a == "OUT" else a for a in argv]
    assert flag in _error(argv, capsys)
    assert not (tmp_path / "out.json").exists()


def test_bandit_writes_a_run_without_the_penalty(tmp_path, capsys):
    out = tmp_path / "state.json"
    result = _json(["bandit", "--write-log", str(out), "--kl", "0", "--steps", "20"], capsys)
    assert result["steps"] == 20 and json.loads(out.read_text())["global_step"] == 20


# -- advise options that the chosen source left unused --------------------------------------------

@pytest.mark.parametrize("extra,needle", [
    (["--target", "settling"], "--target settling needs --kappa"),
    (["--sweep-hparams", "lr=0.1"], "--sweep-hparams needs --sweep"),
    (["--sweep", "LOG"], "the same file as --log"),
    (["--sweep", "./LOG"], "the same file as --log"),
])
def test_advise_refuses_options_it_would_ignore(extra, needle, capsys):
    # "./LOG": the same file spelled another way, found by its resolved path
    spelled = {"LOG": str(TINY), "./LOG": str(TINY.parent / ".." / TINY.parent.name / TINY.name)}
    extra = [spelled.get(a, a) for a in extra]
    assert needle in _error(["advise", "--log", str(TINY), *extra], capsys)


def test_advise_with_kappa_refuses_the_log_options(capsys):
    line = _error(["advise", "--kappa", "1", "--group-size", "8", "--batch", "4"], capsys)
    assert "--group-size, --batch need --log" in line


def test_a_negative_number_in_any_spelling_is_read_as_its_options_value(capsys):
    from grpodyn.cli import main
    from grpodyn.cli.options import join_range_values

    assert join_range_values(["predict", "--plateau", "-1e3", "--lr", "-inf"]) == [
        "predict", "--plateau=-1e3", "--lr=-inf"]
    assert join_range_values(["fit", "LOG", "--json", "--reward-range", "-20,20"]) == [
        "fit", "LOG", "--json", "--reward-range=-20,20"]
    assert main(["predict", "--lr", "-inf", "--momentum", "0.9", "--kappa", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("argument --lr: not a finite number: '-inf'")
