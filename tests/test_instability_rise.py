"""A rise is learning: the instability's slow-fluctuation and limit-cycle signatures leave it out.

The two signatures are read on the reward less its best non-decreasing curve
(``without_rise``): a steep sigmoid rise at little noise was read as slow fluctuations x20-x140
the noise's and, at a width of a few steps, as a limit cycle. A fall of the same shape, and an
oscillation around a rise, are not non-decreasing and must keep their flags.
"""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.empirical.diagnostics.diagnose import diagnose
from grpodyn.empirical.diagnostics.instability import without_rise
from grpodyn.empirical.logs.loaders import Run


def _run(reward: np.ndarray) -> Run:
    steps = np.arange(1, reward.size + 1, dtype=float)
    return Run(source="synthetic", format="synthetic", steps=steps, reward=reward, metrics={})


def _sigmoid(n: int, width: float, sign: float, noise: float, seed: int) -> np.ndarray:
    t = np.arange(n)
    centre = n * (0.3 if sign > 0 else 0.6)
    step = 0.6 / (1 + np.exp(-(t - centre) / width))
    base = 0.2 + step if sign > 0 else 0.8 - step
    return base + noise * np.random.default_rng(seed).standard_normal(n)


@pytest.mark.parametrize("n", [100, 200, 400])
@pytest.mark.parametrize("width", [3, 5, 10])
@pytest.mark.parametrize("noise", [0.005, 0.01])
def test_a_steep_quiet_rise_is_not_an_instability(n: int, width: int, noise: float) -> None:
    d = diagnose(_run(_sigmoid(n, width, +1, noise, seed=n + width)))
    assert not d.modes["dynamical_instability"].flag, d.modes["dynamical_instability"].evidence
    assert d.primary is None


@pytest.mark.parametrize("n", [100, 200, 400])
@pytest.mark.parametrize("width", [3, 5])
def test_a_sudden_quiet_fall_is_still_an_instability(n: int, width: int) -> None:
    d = diagnose(_run(_sigmoid(n, width, -1, 0.005, seed=n + width)))
    assert d.modes["dynamical_instability"].flag
    assert d.primary == "dynamical_instability"


@pytest.mark.parametrize("period", [8, 15])
def test_an_oscillation_around_a_rise_is_still_a_limit_cycle(period: int) -> None:
    t = np.arange(300)
    noise = 0.02 * np.random.default_rng(period).standard_normal(t.size)
    r = 0.3 + 0.4 * (1 - np.exp(-t / 50)) + 0.08 * np.sin(2 * np.pi * t / period) + noise
    verdict = diagnose(_run(r)).modes["dynamical_instability"]
    assert verdict.flag
    assert "limit cycle" in verdict.evidence


def test_without_rise_leaves_falls_whole_and_keeps_nan_in_place() -> None:
    fall = np.array([0.9, np.nan, 0.6, 0.3])
    left = without_rise(fall)
    assert np.isnan(left[1])
    assert np.allclose(left[[0, 2, 3]], [0.3, 0.0, -0.3])  # the fall less its level, whole
    assert np.allclose(without_rise(np.linspace(0.0, 1.0, 50) ** 3), 0.0)  # a rise: nothing
