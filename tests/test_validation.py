"""Every public function and CLI option refuses bad input with a message naming it; the
numerical edge cases (critical damping, zero stiffness, extreme horizons, unstable regimes,
single-point and constant logs) give right numbers or clear errors, never NaN or a traceback."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.ground import InputError
from grpodyn.numerics import fit, fluctuations, predict, simulate, stability, trajectory
from grpodyn.numerics.advise import advise
from grpodyn.numerics.bandit import bandit_theory
from grpodyn.numerics.forecast import forecast_curve

nan, inf = float("nan"), float("inf")
GOOD = {"momentum": 0.5, "stiffness": 0.1}

BAD_CALLS = [
    (lambda: predict.predict(lr=0.01, momentum=1.0, kappa=1.0), "momentum"),
    (lambda: predict.predict(lr=0.01, momentum=-0.1, kappa=1.0), "momentum"),
    (lambda: predict.predict(lr=-0.01, momentum=0.5, kappa=1.0), "lr"),
    (lambda: predict.predict(lr=nan, momentum=0.5, kappa=1.0), "lr"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=0.0), "kappa"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=inf), "kappa"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=1.0, refresh=0), "refresh"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=1.0, refresh=2.5), "refresh"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=1.0, staleness=-1), "staleness"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=1.0, noise=-1.0), "noise"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=1.0, group_size=1, r0=0.2,
                             r_star=0.9), "group_size"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=1.0, steps=10), "r0"),
    (lambda: predict.predict(lr=0.01, momentum=0.5, kappa=1.0, r0=0.2), "steps"),
    (lambda: trajectory.trajectory(np.arange(3.0), e0=1, v0=0, zeta=-1, omega0=0.1), "zeta"),
    (lambda: trajectory.trajectory(np.array([0, nan]), e0=1, v0=0, zeta=1, omega0=0.1), "t"),
    (lambda: trajectory.trajectory(np.arange(3.0), e0=1, v0=0, zeta=1, omega0=0.0), "omega0"),
    (lambda: trajectory.reward_trajectory(np.arange(3.0), r0=0.2, plateau=nan, **GOOD),
     "plateau"),
    (lambda: stability.regime(momentum=-0.1, stiffness=0.1), "momentum"),
    (lambda: stability.regime(momentum=0.1, stiffness=nan), "stiffness"),
    (lambda: stability.staleness_max(momentum=0.5, stiffness=-0.1), "stiffness"),
    (lambda: stability.first_unstable_refresh(momentum=1.5, stiffness=0.1), "momentum"),
    (lambda: stability.mixed_refresh_radius(momentum=0.5, stiffness_current=0.0,
                                            stiffness_lagged=0.1, refresh=0), "refresh"),
    (lambda: fluctuations.stationary_variance(noise=-1.0, **GOOD), "noise"),
    (lambda: fluctuations.autocorrelation(np.array([-1]), **GOOD), "lags"),
    (lambda: simulate.simulate_map(e0=0.1, steps=0, **GOOD), "steps"),
    (lambda: simulate.simulate_map(e0=0.1, steps=10, paths=0, **GOOD), "paths"),
    (lambda: fit.fit_curve("exponential", np.array([1.0]), np.array([0.5])), "points"),
    (lambda: fit.fit_curve("foo", np.arange(50.0), np.linspace(0, 1, 50)), "model"),
    (lambda: fit.fit_curve("exponential", np.arange(50.0), np.linspace(0, 1, 40)), "length"),
    (lambda: fit.fit_curve("exponential", np.arange(5.0), np.array([0.1, nan, 0.3, 0.4, 0.5])),
     "reward"),
    (lambda: fit.fit_curve("inertial", np.arange(50.0), np.linspace(0, 1, 50), momentum=1.0),
     "momentum"),
    (lambda: forecast_curve(np.arange(50.0), np.linspace(0, 1, 50), n_train=30,
                            future_steps=[60.0], level=1.5), "level"),
    (lambda: fit.estimate_noise(np.array([0.1, 0.2])), "3 points"),
    (lambda: advise(kappa=-1.0, momentum=0.5), "kappa"),
    (lambda: advise(kappa=1.0, momentum=0.5, margin=1.5), "margin"),
    (lambda: advise(kappa=1.0, momentum=0.5, target="slowest"), "target"),
    (lambda: advise(kappa=1.0, momentum=0.5, refresh=2, staleness=2), "refresh"),
    (lambda: bandit_theory(group_size=1, kl=0.0), "group_size"),
    (lambda: bandit_theory(group_size=4, kl=-0.1), "kl"),
    (lambda: bandit_theory(group_size=4, kl=0.0, estimator="ppo"), "estimator"),
]


@pytest.mark.parametrize("call,needle", BAD_CALLS, ids=[n for _, n in BAD_CALLS])
def test_public_functions_name_the_bad_input(call, needle):
    with pytest.raises(InputError) as info:
        call()
    assert needle in str(info.value)


BAD_ARGV = [
    (["predict", "--lr", "-1", "--momentum", "0.5", "--kappa", "1"], "lr"),
    (["predict", "--lr", "abc", "--momentum", "0.5", "--kappa", "1"], "lr"),
    (["predict", "--lr", "0.1", "--momentum", "0.5", "--kappa", "1", "--staleness", "-2"],
     "staleness"),
    (["predict", "--lr", "0.1", "--momentum", "0.5", "--kappa", "1", "--noise", "-1"], "noise"),
    (["predict", "--lr", "0.1", "--momentum", "0.5", "--kappa", "1", "--steps", "0", "--r0",
      "0.1", "--r-star", "0.9"], "steps"),
    (["fit", "/no/such/log.json"], "no such file"),
    (["fit", "LOG", "--train-fraction", "0"], "--train-fraction"),
    (["fit", "LOG", "--momentum", "1.2"], "momentum"),
    (["fit", "LOG", "--model", "cubic"], "invalid choice"),
    (["bandit", "--kl", "-1"], "kl"),
    (["bandit", "--momenta", "0.5", "1.0"], "momentum"),
    (["export", "--lang", "cobol", "--out", "x"], "invalid choice"),
    (["advise", "--kappa", "0", "--momentum", "0.9"], "kappa"),
    (["advise", "--kappa", "1", "--momentum", "0.9", "--margin", "2"], "margin"),
    (["diagnose", "LOG", "--group-size", "1"], "group_size"),
    (["report", "/no/such/log.csv", "--out", "OUT"], "no such file"),
]


@pytest.mark.parametrize("argv,needle", BAD_ARGV, ids=[" ".join(a[:2]) + ":" + n
                                                       for a, n in BAD_ARGV])
def test_cli_options_name_the_bad_input(argv, needle, tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_text("step,reward\n" + "\n".join(f"{i},{1 - 0.8 * math.exp(-i / 20)}"
                                               for i in range(60)))
    argv = [str(log) if a == "LOG" else str(tmp_path / "out") if a == "OUT" else a
            for a in argv]
    assert main([*argv, "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "Traceback" not in err[0]


def test_critical_damping_is_continuous():
    """zeta = 1 exactly and 1 +- 1e-12 give the same trajectory to round-off."""
    t = np.linspace(0, 200, 401)
    at = trajectory.trajectory(t, e0=0.5, v0=0.01, zeta=1.0, omega0=0.05)
    for zeta in (1 - 1e-12, 1 + 1e-12, 1 - 1e-6, 1 + 1e-6):
        near = trajectory.trajectory(t, e0=0.5, v0=0.01, zeta=zeta, omega0=0.05)
        assert np.all(np.isfinite(near))
        assert np.max(np.abs(near - at)) < 1e-5
    assert stability.regime(momentum=0.5, stiffness=float(
        __import__("grpodyn.numerics.compiled", fromlist=["compiled"])
        .compiled("critical_stiffness_discrete")(0.5))) == "critical"


def test_zero_stiffness_is_refused_and_tiny_stiffness_is_finite():
    with pytest.raises(InputError, match="stiffness"):
        stability.regime(momentum=0.5, stiffness=0.0)
    assert stability.regime(momentum=0.5, stiffness=1e-300) == "overdamped"
    assert math.isfinite(fluctuations.stationary_variance(momentum=0.5, stiffness=1e-12,
                                                          noise=1e-4))


@pytest.mark.parametrize("horizon", [1e-12, 1e6, 1e12, 1e300])
def test_extreme_horizons_stay_finite(horizon):
    t = np.array([0.0, horizon])
    for zeta in (0.3, 1.0, 5.0, 1e6):
        e = trajectory.trajectory(t, e0=0.5, v0=0.0, zeta=zeta, omega0=0.01)
        assert np.all(np.isfinite(e)) and abs(e[1]) <= 0.5 + 1e-12


def test_unstable_regime_is_reported_not_nan():
    assert stability.regime(momentum=0.5, stiffness=10.0) == "unstable"
    assert fluctuations.stationary_variance(momentum=0.5, stiffness=10.0, noise=1e-4) == inf
    # the continuum trajectory is unstable when the lag makes the damping negative
    result = trajectory.reward_trajectory(np.arange(0.0, 5000.0, 50.0), r0=0.2, plateau=0.9,
                                          momentum=0.5, stiffness=0.1, mean_lag=10.0)
    assert result.unstable and not np.isnan(result.values).any()
    assert np.isinf(result.values[-1])


@pytest.mark.parametrize("content,needle", [
    ("step,reward\n1,0.5\n", "at least 5 points"),
    ("step,reward\n" + "".join(f"{i},0.5\n" for i in range(40)), "constant"),
])
def test_single_point_and_constant_logs(tmp_path, capsys, content, needle):
    log = tmp_path / "log.csv"
    log.write_text(content)
    assert main(["fit", str(log), "--json"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_cli_json_output_has_no_nan_tokens(tmp_path, capsys):
    """JSON from the CLI is strict JSON: non-finite numbers become null, never NaN tokens."""
    assert main(["predict", "--lr", "1", "--momentum", "0.5", "--kappa", "10", "--noise",
                 "1e-4", "--json"]) == 0
    text = capsys.readouterr().out
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))


def test_cli_stops_quietly_when_the_reader_closes_the_pipe():
    """``grpodyn predict ... | head -1``: the closed pipe ends the command, no traceback."""
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-c", "from grpodyn.console import console_main; console_main()",
         "predict", "--kappa", "1", "--lr", "0.1", "--momentum", "0.9"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # no reader left: every write of the command meets a broken pipe
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
