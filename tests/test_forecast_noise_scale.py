"""The local-level fit is free of the reward's unit (its level starts diffuse)."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.numerics.forecast_noise import fit_random_walk


@pytest.mark.parametrize("factor", [1e-9, 1e-3, 1e3, 1e9])
def test_the_local_level_scales_with_the_reward(factor: float) -> None:
    rng = np.random.default_rng(0)
    t = np.arange(200.0)
    y = 0.3 + 0.002 * t + 0.05 * rng.standard_normal(200)
    noise, level, squares = fit_random_walk(t, y)
    scaled, level_c, squares_c = fit_random_walk(t, y * factor)
    assert level_c == pytest.approx(level * factor, rel=1e-9)
    assert squares_c == pytest.approx(squares * factor**2, rel=1e-9)
    assert scaled.white_var == pytest.approx(noise.white_var * factor**2, rel=1e-9)
    assert scaled.drift_var == pytest.approx(noise.drift_var * factor**2, rel=1e-9)
