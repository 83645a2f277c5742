"""Fitting many logs: the same fits in this process, a local process pool and on Dask."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.ground import InputError
from grpodyn.numerics.fit import fit_curve
from grpodyn.numerics.fit_many import fit_many


def _series(count: int = 7) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for seed in range(count):
        rng = np.random.default_rng(seed)
        t = np.arange(120.0 + 10 * seed)
        tau = rng.uniform(10, 80)
        out.append((t, 0.2 + 0.5 * (1 - np.exp(-t / tau)) + 0.03 * rng.standard_normal(t.size)))
    return out


def _same(left, right) -> None:
    assert len(left) == len(right)
    for a, b in zip(left, right, strict=True):
        assert a.model.name == b.model.name and a.model.starts == b.model.starts
        np.testing.assert_array_equal(a.theta, b.theta)
        assert (a.rss, a.r2, a.aic, a.bic) == (b.rss, b.r2, b.aic, b.bic)
        np.testing.assert_array_equal(a.covariance, b.covariance)


@pytest.mark.parametrize("name, options", [("exponential", {}),
                                           ("inertial", {"momentum": 0.9}),
                                           ("exponential", {"plateau_bounds": (0, 0.6)})])
def test_serial_and_process_pool_give_the_single_fits(name, options):
    series = _series()
    single = [fit_curve(name, t, y, **options) for t, y in series]
    _same(single, fit_many(name, series, executor="serial", **options))
    _same(single, fit_many(name, series, chunk=4, progress=False, **options))  # auto: a pool
    pooled = fit_many(name, series, executor="process", chunk=3, progress=False, **options)
    _same(single, pooled)
    assert [f.at_bounds for f in single] == [f.at_bounds for f in pooled]


def test_dask_local_cluster_gives_the_single_fits():
    distributed = pytest.importorskip("distributed")
    series = _series(5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        on_dask = fit_many("exponential", series, executor=cluster.scheduler_address, chunk=2,
                           progress=False)
    _same([fit_curve("exponential", t, y) for t, y in series], on_dask)


def test_a_bad_series_is_named_and_bad_options_refused():
    series = _series(3)
    series[1] = (series[1][0], np.full(series[1][0].size, 0.5))
    with pytest.raises(InputError, match="series 1: the reward is constant"):
        fit_many("exponential", series, executor="serial")
    with pytest.raises(InputError, match="series 1: the reward is constant"):
        fit_many("exponential", series, executor="process", chunk=1, progress=False)
    with pytest.raises(InputError, match="chunk must be a positive integer"):
        fit_many("exponential", series, chunk=0)
    with pytest.raises(InputError, match="learning_rate"):
        fit_many("exponential_lr", series, learning_rate=np.ones(3))


def test_fit_at_rebuilds_a_fit_from_its_parameters():
    from grpodyn.numerics.fit import fit_at

    t, y = _series(1)[0]
    fit = fit_curve("inertial", t + 5, y, momentum=0.9)
    _same([fit], [fit_at("inertial", t + 5, y, fit.theta, momentum=0.9)])
    with pytest.raises(InputError, match="theta has shape"):
        fit_at("exponential", t, y, fit.theta[:2])
