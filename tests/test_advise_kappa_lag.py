"""``grpodyn advise --kappa`` with a lag: every number is the lagged map's.

With a refresh interval K or a staleness d the advice quoted the on-policy relaxation time
(18.98 steps at beta = 0.9, where ``grpodyn predict`` at the advised lr gives 47.74 for K = 8)
and, for ``--target critical``, the on-policy critical stiffness, at which the lagged map
oscillates and overshoots.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from grpodyn.cli import main
from grpodyn.numerics.mean_field_map import MeanFieldMap
from grpodyn.numerics.predict import predict
from grpodyn.numerics.simulate import simulate_map

LAGS = [({"refresh": 8}, ["--refresh", "8"]), ({"staleness": 2}, ["--staleness", "2"])]
TARGETS = [[], ["--target", "critical"], ["--target", "margin", "--margin", "0.5"]]


def _advise(argv: list[str], capsys: pytest.CaptureFixture) -> dict:
    assert main(["advise", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("lag", "flags"), LAGS)
@pytest.mark.parametrize("target", TARGETS)
def test_relaxation_and_regime_are_predicts_at_the_advised_lr(lag, flags, target, capsys):
    out = _advise(["--kappa", "0.5", "--momentum", "0.9", *target, *flags], capsys)
    prediction = predict(lr=out["lr"], momentum=0.9, kappa=0.5, **lag)
    assert out["relaxation_steps"] == pytest.approx(prediction.decay_time, rel=1e-6)
    assert out["regime"] == prediction.regime
    assert any("lagged map" in line for line in out["reasoning"])


def test_the_guide_example_quotes_the_lagged_decay_time(capsys):
    out = _advise(["--kappa", "0.5", "--momentum", "0.9", "--target", "margin", "--margin",
                   "0.5", "--refresh", "8"], capsys)
    assert out["relaxation_steps"] == pytest.approx(47.7404, rel=1e-5)


@pytest.mark.parametrize(("lag", "flags"), LAGS)
@pytest.mark.parametrize("momentum", ["0.5", "0.9", "0.99"])
def test_critical_target_with_a_lag_does_not_overshoot(lag, flags, momentum, capsys):
    """The lagged map from rest stays on its side of the plateau at the advised stiffness,
    and a stiffness 0.1% higher oscillates: the advice is the lagged map's boundary."""
    code = main(["advise", "--kappa", "1", "--momentum", momentum, "--target", "critical",
                 *flags, "--json"])
    captured = capsys.readouterr()
    if code == 2:  # a refusal is one line, not a contradiction
        assert not captured.out and len(captured.err.strip().splitlines()) == 1
        return
    assert code == 0
    out = json.loads(captured.out)
    beta, k = float(momentum), out["stiffness"]
    path = simulate_map(momentum=beta, stiffness=k, e0=1.0, steps=3000, **lag).e[0]
    assert path.min() >= -1e-12
    band = MeanFieldMap(lr=out["lr"], kappa=1.0, momentum=beta, **lag).trajectory(
        r0=0.0, plateau=1.0, steps=3000)
    assert np.max(band.values) <= 1.0 + 1e-12
    assert out["regime"] == "overdamped"
    assert predict(lr=1.001 * out["lr"], momentum=beta, kappa=1.0, **lag).regime == "oscillatory"


def test_the_reported_overshooting_example_no_longer_overshoots(capsys):
    out = _advise(["--kappa", "1", "--target", "critical", "--refresh", "8"], capsys)
    path = MeanFieldMap(lr=out["lr"], kappa=1.0, momentum=0.9, refresh=8).trajectory(
        r0=0.0, plateau=1.0, steps=2000)
    assert np.max(path.values) <= 1.0 + 1e-12
    assert out["regime"] != "oscillatory"


@pytest.mark.parametrize(("lag", "flags"), LAGS)
def test_settling_target_with_a_lag_is_refused(lag, flags, capsys):
    """The on-policy k_s overshoots past the band with a lag (0.22 at K = 8, beta = 0.9)."""
    assert main(["advise", "--kappa", "1", "--momentum", "0.9", "--target", "settling",
                 *flags]) == 2
    captured = capsys.readouterr()
    assert not captured.out and "settling" in captured.err
    assert len(captured.err.strip().splitlines()) == 1
