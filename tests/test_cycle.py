"""A sustained oscillation of the reward: found where it is, not elsewhere, and read net of."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.cycle import POINTS, sustained_cycle
from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.logs.loaders import Run
from grpodyn.numerics.noise import estimate_noise

T = np.arange(1.0, 501)


def _cycle(r: np.ndarray, t: np.ndarray = T):
    return sustained_cycle(t, r, estimate_noise(r).sigma)


@pytest.mark.parametrize("period", [12.0, 40.0, 100.0, 150.0])
def test_a_sinusoid_is_found_with_its_period_and_amplitude(period: float) -> None:
    rng = np.random.default_rng(int(period))
    r = 0.5 + 0.1 * np.sin(2 * np.pi * T / period + 1.0) + rng.normal(0, 0.03, T.size)
    found = _cycle(r)
    assert found is not None
    assert found.period == pytest.approx(period, rel=0.01)
    assert found.amplitude == pytest.approx(0.1, rel=0.1)
    assert found.cycles == pytest.approx(499 / period, rel=0.01)
    # what is left of the reward net of the wave is the noise
    assert np.std(r - found.wave) == pytest.approx(0.03, rel=0.15)


def test_the_period_is_in_steps() -> None:
    rng = np.random.default_rng(3)
    r = 0.5 + 0.1 * np.sin(2 * np.pi * np.arange(500) / 25) + rng.normal(0, 0.03, 500)
    assert _cycle(r, 10.0 * T).period == pytest.approx(10 * _cycle(r).period, rel=1e-6)


@pytest.mark.parametrize("pole", [0.8, 0.9, 0.97, 0.99])
def test_red_noise_is_no_cycle(pole: float) -> None:
    rng = np.random.default_rng(int(100 * pole))
    for _ in range(10):
        x, kicks = np.zeros(T.size), rng.normal(0, 0.02, T.size)
        for i in range(1, T.size):
            x[i] = pole * x[i - 1] + kicks[i]
        assert _cycle(0.5 + x + rng.normal(0, 0.03, T.size)) is None


@pytest.mark.parametrize("shape", ["step", "sigmoid", "rise", "damped", "white"])
def test_a_shape_without_a_cycle_is_none(shape: str) -> None:
    rng = np.random.default_rng(len(shape))
    level = {"step": np.where(T < 300, 0.6, 0.1),
             "sigmoid": 0.2 + 0.5 / (1 + np.exp(-(T - 250) / 20)),
             "rise": 0.2 + 0.5 * (1 - np.exp(-T / 80)),
             "damped": 0.5 + 0.3 * np.exp(-T / 100) * np.sin(2 * np.pi * T / 60),
             "white": np.full(T.size, 0.5)}[shape]
    assert _cycle(level + rng.normal(0, 0.03, T.size)) is None


def test_too_few_points_read_no_cycle() -> None:
    t = np.arange(1.0, POINTS)
    r = 0.5 + 0.2 * np.sin(2 * np.pi * t / 20)
    assert _cycle(r + np.random.default_rng(0).normal(0, 0.03, t.size), t) is None


@pytest.mark.parametrize("phase", [0.0, 1.5, 3.0, 4.5])
def test_a_cycle_without_trend_is_not_learning_at_every_phase(phase: float) -> None:
    """The state does not turn with the phase, and the evidence names the cycle."""
    rng = np.random.default_rng(4)
    r = 0.5 + 0.2 * np.sin(2 * np.pi * T / 100 + phase) + rng.normal(0, 0.03, T.size)
    found = diagnose(Run("cycle", "test", T, r, {}))
    assert found.state == "not_learning"
    assert found.state_evidence.startswith("the reward oscillates with a period of ")
    period = float(found.state_evidence.split("a period of ")[1].split(" steps")[0])
    assert period == pytest.approx(100, rel=0.01)
    verdict = found.modes["dynamical_instability"]
    assert verdict.flag and "a limit cycle" in verdict.evidence
    assert "no oscillation" not in verdict.evidence


def test_a_rise_under_a_cycle_is_learning() -> None:
    rng = np.random.default_rng(5)
    r = 0.2 + 0.0008 * T + 0.1 * np.sin(2 * np.pi * T / 50) + rng.normal(0, 0.03, T.size)
    found = diagnose(Run("cycle", "test", T, r, {}))
    assert found.state == "learning" and "net of the cycle" in found.state_evidence


def test_a_cycle_within_the_noise_is_none() -> None:
    """A third of the noise s.d., as the prompts recurring with the epoch leave: no limit cycle."""
    rng = np.random.default_rng(6)
    r = 0.3 + 0.027 * np.sin(2 * np.pi * T / 10) + rng.normal(0, 0.08, T.size)
    assert _cycle(r) is None
