"""``predict(steps=N)`` and ``MeanFieldMap.trajectory(steps=N)`` give the same path."""

import numpy as np
import pytest

from grpodyn.numerics.mean_field_map import MeanFieldMap
from grpodyn.numerics.predict import predict


def test_predict_and_the_maps_trajectory_give_the_same_n_plus_one_points():
    # N steps after the start: the path at steps 0..N, the start r0 first, in both entries
    path = predict(lr=0.01, momentum=0.9, kappa=1.0, r0=0.2, plateau=0.8, steps=200).path
    band = MeanFieldMap(lr=0.01, kappa=1.0, momentum=0.9).trajectory(r0=0.2, plateau=0.8,
                                                                     steps=200)
    assert len(path.values) == 201 and path.steps[-1] == 200
    assert np.array_equal(path.steps, band.steps)
    assert np.allclose(path.values, band.values) and path.values[0] == pytest.approx(0.2)
