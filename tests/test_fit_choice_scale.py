"""The fit does not depend on the reward's unit.

Scaling the reward by any factor c in [1e-9, 1e9] scales the plateau, r0, the noise and their
intervals by c and leaves tau, the weights and every status unchanged. Two absolute tolerances
broke it: ``least_squares``' gradient tolerance in the boxed fits (a reward in units of 1e-6
stopped at its starting point, and the stack's weights flipped to the power law), and the
round-off allowed on the reward range's edge (1e-9 of the range: a plateau of 8.8e-10 inside
[0, 1] was read as lying on the range's edge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grpodyn.analysis import fit_run
from grpodyn.empirical.logs.loaders import load_run
from grpodyn.numerics.fit import fit_curve

SCALES = (1e-9, 1e-6, 1e-3, 1e3, 1e6, 1e9)
STEPS = np.arange(100.0)
#: A clean saturating curve in [0, 1]: plateau 0.8, tau 29 steps, noise 0.02.
REWARD = (0.8 - 0.6 * np.exp(-STEPS / 29)
          + np.random.default_rng(7).normal(0.0, 0.02, STEPS.size))


def _scaled_fit(name: str, c: float) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Fit ``name`` to the curve in units of 1/c, its range [0, c]; levels back in units of 1."""
    fit = fit_curve(name, STEPS, REWARD * c, plateau_bounds=(0.0, c))
    theta = fit.theta.copy()
    errors = np.array(list(fit.stderr.values()))
    theta[:2] /= c
    errors[:2] /= c
    return theta, errors, fit.params_at_bounds


@pytest.mark.parametrize("name", ["power", "sigmoid", "inertial"])
def test_a_boxed_fit_is_the_same_fit_in_any_unit(name):
    """The boxed fits (trust region) reach the same optimum whatever the reward's unit."""
    theta, errors, at = _scaled_fit(name, 1.0)
    for c in SCALES:
        scaled = _scaled_fit(name, c)
        assert scaled[0] == pytest.approx(theta, rel=1e-5), c
        assert scaled[1] == pytest.approx(errors, rel=1e-4), c
        assert scaled[2] == at, c


def test_a_plateau_far_inside_the_range_is_not_on_its_edge():
    """Rewards of order 1e-9 in the range [0, 1]: the fitted levels lie on no edge of it."""
    fit = fit_curve("exponential", STEPS, REWARD * 1e-9, plateau_bounds=(0.0, 1.0))
    assert fit.params["r_star"] == pytest.approx(8.03e-10, rel=1e-2)
    assert fit.at_bounds == () and fit.params_at_bounds == ()


def _fit_log(folder: Path, reward: np.ndarray, c: float,
             reward_range: tuple[float, float] | None) -> dict[str, Any]:
    path = folder / f"scaled_{c:g}.csv"
    np.savetxt(path, np.column_stack([STEPS, reward * c]), delimiter=",",
               header="step,reward", comments="", fmt=["%d", "%.17g"])
    return fit_run(load_run(path), reward_range=reward_range)


def _assert_scaled(result: dict[str, Any], unit: dict[str, Any], c: float) -> None:
    """``result`` is ``unit`` with every reward level times c, all else the same."""
    def levels(entry: dict[str, Any], keys: tuple[str, ...], unit_of: float
               ) -> list[float | None]:
        return [None if entry.get(k) is None else entry[k] / unit_of for k in keys]

    plateau, expected = result["plateau"], unit["plateau"]
    assert plateau["status"] == expected["status"], c
    keys = ("value", "lower", "upper")
    assert levels(plateau, keys, c) == pytest.approx(levels(expected, keys, 1.0),
                                                   rel=1e-5), c
    assert result["weights"] == pytest.approx(unit["weights"], abs=1e-4), c
    tau, tau_unit = result["dynamics"]["tau"], unit["dynamics"]["tau"]
    assert tau["status"] == tau_unit["status"], c
    assert tau.get("value") == pytest.approx(tau_unit.get("value"), rel=1e-5), c
    assert result["noise"]["sigma"] / c == pytest.approx(unit["noise"]["sigma"], rel=1e-9), c
    for name, entry in unit["models"].items():
        fitted = result["models"][name]
        assert fitted["at_bounds"] == entry["at_bounds"], (c, name)
        assert fitted["singular"] == entry["singular"], (c, name)
        for part, rel in (("params", 1e-5), ("stderr", 1e-4)):
            assert levels(fitted[part], ("r0", "r_star"), c) == pytest.approx(
                levels(entry[part], ("r0", "r_star"), 1.0), rel=rel), (c, name, part)


def test_the_fit_of_a_log_scales_with_a_declared_range(tmp_path):
    """The range declared in the reward's unit, [0, c]: everything scales with c."""
    unit = _fit_log(tmp_path, REWARD, 1.0, (0.0, 1.0))
    assert unit["plateau"]["status"] == "determined"
    for c in SCALES:
        _assert_scaled(_fit_log(tmp_path, REWARD, c, (0.0, c)), unit, c)


def test_the_fit_of_a_log_scales_without_a_range(tmp_path):
    """A reward outside [0, 1] at every scale (its range unknown): everything scales with c."""
    shifted = REWARD - 0.5
    unit = _fit_log(tmp_path, shifted, 1.0, None)
    assert unit["reward_range"] is None
    for c in SCALES:
        _assert_scaled(_fit_log(tmp_path, shifted, c, None), unit, c)


@pytest.mark.parametrize("c", [1e-2, 1e-4, 1e-6, 1e-9])
def test_a_smaller_unit_inside_the_inferred_range_changes_nothing_but_the_levels(tmp_path, c):
    """Rewards in [0, 1] at every scale below 1 (the range inferred, [0, 1]): no weight flips
    to the power law, no plateau on the range's edge."""
    unit = _fit_log(tmp_path, REWARD, 1.0, None)
    result = _fit_log(tmp_path, REWARD, c, None)
    assert result["reward_range"] == unit["reward_range"] == [0.0, 1.0]
    _assert_scaled(result, unit, c)
