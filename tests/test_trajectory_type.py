"""The one trajectory result: every path-returning function gives a Trajectory with plot()."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from grpodyn.ground import InputError  # noqa: E402
from grpodyn.numerics.mean_field_map import MeanFieldMap, TrajectoryBand  # noqa: E402
from grpodyn.numerics.predict import predict  # noqa: E402
from grpodyn.numerics.simulate import MapSimulationResult, simulate_map  # noqa: E402
from grpodyn.numerics.trajectory import TrajectoryResult, reward_trajectory  # noqa: E402
from grpodyn.numerics.trajectory_type import Trajectory  # noqa: E402


def _all_four():
    system = MeanFieldMap(lr=0.01, kappa=1.0, momentum=0.9)
    return {
        "closed form": reward_trajectory(np.arange(50.0), r0=0.2, plateau=0.8, momentum=0.9,
                                         stiffness=0.01),
        "map band": system.trajectory(r0=0.2, plateau=0.8, steps=60, noise=1e-4, paths=200),
        "simulation": simulate_map(momentum=0.9, stiffness=0.01, steps=40, paths=5, noise=1e-4),
        "predict": predict(lr=0.01, momentum=0.9, kappa=1.0, r0=0.2, plateau=0.8,
                           steps=30).path,
    }


def test_every_path_is_one_type_with_plot_and_a_compact_repr():
    import matplotlib.pyplot as plt

    for name, path in _all_four().items():
        assert isinstance(path, Trajectory), name
        ax = path.plot()
        assert isinstance(ax, matplotlib.axes.Axes) and len(ax.lines) == 1, name
        assert ax.get_xlabel() == "step"
        text = repr(path)
        assert text.startswith("Trajectory(") and "\n" not in text and len(text) < 120, text
        assert "<table>" in path._repr_html_()
        plt.close(ax.figure)
    band = _all_four()["map band"]
    assert "band 90%" in repr(band) and "oscillatory" in repr(band)
    assert len(band.plot().collections) == 1  # the band is drawn


def test_to_dict_is_json_ready_and_marks_divergence():
    import json

    path = reward_trajectory(np.arange(0.0, 5000.0, 50.0), r0=0.2, plateau=0.9, momentum=0.5,
                             stiffness=0.1, mean_lag=10.0)
    out = path.to_dict()
    json.dumps(out, allow_nan=False)
    assert out["unstable"] and out["diverged"] and out["values"][-1] is None
    assert "diverged" in repr(path)
    band = MeanFieldMap(lr=0.01, kappa=1.0, momentum=0.9).trajectory(r0=0.2, plateau=0.8,
                                                                     steps=5)
    assert band.to_dict()["level"] == pytest.approx(0.9) and len(band.to_dict()["upper"]) == 6


def test_to_pandas_or_a_clear_message(request):
    path = Trajectory(steps=np.arange(3), values=np.array([0.1, 0.2, 0.3]),
                      lower=np.zeros(3), upper=np.ones(3), level=0.5)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pandas"):
            path.to_pandas()
    else:
        frame = path.to_pandas()
        assert list(frame.columns) == ["reward", "lower", "upper"]
        assert frame.index.name == "step" and frame["reward"].iloc[-1] == 0.3
    request.getfixturevalue("without_pandas")
    with pytest.raises(ImportError, match="to_pandas needs pandas: pip install pandas"):
        path.to_pandas()


def test_bad_quantity_or_half_a_band_is_refused():
    with pytest.raises(InputError, match="quantity"):
        Trajectory(steps=np.arange(2), values=np.zeros(2), quantity="loss")
    with pytest.raises(InputError, match="both lower and upper"):
        Trajectory(steps=np.arange(2), values=np.zeros(2), lower=np.zeros(2))


def test_old_names_keep_their_attributes_without_warning():
    paths = _all_four()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        closed, band, sim = paths["closed form"], paths["map band"], paths["simulation"]
        assert isinstance(closed, TrajectoryResult) and closed.t is closed.steps
        assert isinstance(band, TrajectoryBand) and band.mean is band.values
        assert not band.diverged and band.level == pytest.approx(0.9)
        assert isinstance(sim, MapSimulationResult) and sim.e is sim.samples
        assert sim.e.shape == (5, 41) and sim.diverged.shape == (5,)
        np.testing.assert_array_equal(sim.mean, sim.e.mean(axis=0))
        assert sim.momentum == 0.9 and sim.refresh == 1
        assert predict(lr=0.01, momentum=0.9, kappa=1.0, r0=0.2, plateau=0.8,
                       steps=30).trajectory[0] == pytest.approx(0.2)


def test_old_constructors_and_r_star_warn():
    steps = np.arange(4)
    with pytest.warns(DeprecationWarning, match="TrajectoryResult"):
        old = TrajectoryResult(steps, np.ones(4), False)
    assert old.t is steps and isinstance(old, Trajectory)
    with pytest.warns(DeprecationWarning, match="TrajectoryBand"):
        band = TrajectoryBand(steps, np.ones(4), np.zeros(4), np.ones(4), 0.9, False)
    assert band.mean[0] == 1.0 and band.level == 0.9
    with pytest.warns(DeprecationWarning, match="MapSimulationResult"):
        sim = MapSimulationResult(np.ones((2, 4)), 0.9, 0.01, 1, 0, 0.0)
    assert sim.quantity == "displacement" and sim.stiffness == 0.01
    with pytest.warns(DeprecationWarning, match="plateau"):
        via_alias = reward_trajectory(steps, r0=0.2, r_star=0.8, momentum=0.5, stiffness=0.1)
    new = reward_trajectory(steps, r0=0.2, plateau=0.8, momentum=0.5, stiffness=0.1)
    np.testing.assert_array_equal(via_alias.values, new.values)
    with pytest.raises(InputError, match="not both"), pytest.warns(DeprecationWarning):
        reward_trajectory(steps, r0=0.2, plateau=0.8, r_star=0.7, momentum=0.5, stiffness=0.1)
    with pytest.raises(InputError, match="plateau"):
        reward_trajectory(steps, r0=0.2, momentum=0.5, stiffness=0.1)
