"""The learned-prior forecaster: its prior, its summary, its shipped weights and their training."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from grpodyn.ground import InputError
from grpodyn.numerics.learned_prior import (
    FAMILIES,
    FARTHEST_BOUND,
    QUANTILE_LEVELS,
    WEIGHTS_PATH,
    curve_features,
    learned_prior_forecast,
    load_learned_prior,
    sample_prior_curves,
)


def _relaxing(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t = np.arange(1.0, n + 1)
    return t, 0.7 - 0.5 * np.exp(-t / 40) + 0.04 * rng.standard_normal(n)


def test_prior_is_reproducible_and_bounded_where_declared():
    first = sample_prior_curves(np.random.default_rng(3), 40)
    second = sample_prior_curves(np.random.default_rng(3), 40)
    assert all(np.array_equal(a.reward, b.reward) for a, b in zip(first, second, strict=True))
    for curve in first:
        assert 12 <= curve.reward.size <= 2000
        if curve.bounds is not None:
            assert curve.reward.min() >= 0 and curve.reward.max() <= 1
    assert {c.bounds is None for c in first} == {True, False}


def test_prior_hyperparameters_choose_the_families_and_tie_the_noise_to_the_path():
    """One-hot shares draw one family; the signal-to-noise hyperprior sets range / noise."""
    for family in ("flat", "logistic"):
        shares = tuple(float(f == family) for f in FAMILIES)
        assert {c.family for c in sample_prior_curves(np.random.default_rng(5), 30,
                                                      shares=shares)} == {family}
    shares = tuple(float(f == "exponential") for f in FAMILIES)
    medians = []
    for mu in (0.5, 1.5, 2.5, 3.5):
        moves = []
        for curve in sample_prior_curves(np.random.default_rng(6), 300, shares=shares,
                                         signal_to_noise=(mu, 0.1)):
            y, k = curve.reward, max(2, curve.reward.size // 10)
            moves.append(abs(y[-k:].mean() - y[:k].mean()) / (np.std(np.diff(y)) / np.sqrt(2)))
        medians.append(np.median(moves))
    # the move in white-noise units grows with the hyperprior's mean log ratio (e^3 = 20x here)
    assert np.all(np.diff(medians) > 0) and medians[-1] > 5 * medians[0]


def test_features_are_invariant_to_the_reward_units():
    t, y = _relaxing()
    a, loc_a, scale_a = curve_features(t[:40], y[:40], t[40:], None)
    b, loc_b, scale_b = curve_features(t[:40], 3.0 + 10.0 * y[:40], t[40:], None)
    assert np.allclose(a, b)
    assert loc_b == pytest.approx(3.0 + 10.0 * loc_a) and scale_b == pytest.approx(10 * scale_a)


def test_bad_inputs_get_clear_errors():
    model = load_learned_prior()
    t, y = _relaxing()
    with pytest.raises(InputError, match="no step-to-step noise"):
        model.quantiles(t[:20], np.full(20, 0.5), t[20:])
    with pytest.raises(InputError, match="at least 8"):
        model.quantiles(t[:5], y[:5], t[5:])
    with pytest.raises(InputError, match="after the training part"):
        model.quantiles(t[:40], y[:40], t[30:])
    with pytest.raises(InputError, match="level"):
        model.band(t[:40], y[:40], t[40:], level=0.99)
    with pytest.raises(InputError, match="reward"):
        model.quantiles(t[:40], np.r_[y[:39], np.nan], t[40:])


def test_quantiles_are_ordered_and_inside_the_declared_range():
    model = load_learned_prior()
    t, y = _relaxing()
    q = model.quantiles(t[:36], y[:36], t[36:], bounds=(0.0, 1.0))
    assert q.shape == (84, len(QUANTILE_LEVELS))
    assert np.all(np.diff(q, axis=1) >= 0)
    assert q.min() >= 0 and q.max() <= 1
    median, low, high = model.band(t[:36], y[:36], t[36:], level=0.9, bounds=(0.0, 1.0))
    assert np.all((low <= median) & (median <= high))


def test_band_covers_curves_of_its_own_prior():
    """On prior curves of a seed never trained on, the 90 % band covers 0.85-0.95 pooled."""
    model = load_learned_prior()
    rng = np.random.default_rng(987654)
    inside = total = 0
    for curve in sample_prior_curves(rng, 200):
        n = curve.reward.size
        n_train = int(0.4 * n)
        if n_train < 8 or np.std(np.diff(curve.reward[:n_train])) == 0:
            continue
        t = np.arange(1.0, n + 1)
        _, low, high = model.band(t[:n_train], curve.reward[:n_train], t[n_train:], level=0.9,
                                  bounds=curve.bounds)
        held = curve.reward[n_train:]
        inside += int(np.sum((held >= low) & (held <= high)))
        total += held.size
    assert 0.85 <= inside / total <= 0.95


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch (extra) absent")
def test_numpy_forward_pass_reproduces_the_trained_network(tmp_path):
    """The validation loss torch reports is the loss of the numpy forward pass on those rows."""
    from grpodyn.empirical.learned_prior_training import main, training_set

    out = tmp_path / "weights.npz"
    assert main(["--curves", "400", "--epochs", "1", "--seed", "5", "--out", str(out)]) == 0
    model = load_learned_prior(out)
    features, targets = training_set(5, 400)
    n_val = targets.size // 20
    q = model.noise_unit_quantiles(features[:n_val])
    error = targets[:n_val, None] - q
    levels = np.asarray(QUANTILE_LEVELS)
    loss = np.mean(np.maximum(levels * error, (levels - 1) * error))
    assert loss == pytest.approx(model.info["validation_pinball"], rel=1e-4)


def test_noiseless_parts_bad_steps_and_far_horizons_are_named():
    """A ramp without noise is refused; unordered steps and bad bounds named; far steps held."""
    model = load_learned_prior()
    t, y = _relaxing()
    with pytest.raises(InputError, match="no step-to-step noise"):
        model.quantiles(t[:40], 0.002 * t[:40], t[40:])
    with pytest.raises(InputError, match="increase"):
        model.quantiles(t[:40][::-1], y[:40], t[40:] + 100)
    with pytest.raises(InputError, match="bounds"):
        model.quantiles(t[:40], y[:40], t[40:], bounds=(1.0, 0.0))
    with pytest.raises(InputError, match="future_steps"):
        model.quantiles(t[:40], y[:40], np.array([50.0, np.nan]))
    with pytest.raises(InputError, match="n_train"):
        learned_prior_forecast(t, y, n_train=500, future_steps=t[40:] + 500)
    far = learned_prior_forecast(t, y, n_train=40, future_steps=np.array([300.0, 3000.0]))
    assert far.point[0] == far.point[1]  # both beyond 5 spans: held at 5
    assert any("spans past the cut" in w for w in far.warnings)
    near = learned_prior_forecast(t, y, n_train=40, future_steps=t[40:])
    assert not near.warnings


def test_weights_for_other_levels_are_refused(tmp_path):
    """A weights file whose levels differ from the module's is refused by name."""
    import json

    with np.load(WEIGHTS_PATH) as data:
        arrays = {k: data[k] for k in data.files}
    info = json.loads(str(arrays.pop("info")))
    info["levels"] = [0.1, 0.5, 0.9]
    path = tmp_path / "other.npz"
    np.savez(path, info=json.dumps(info), **arrays)
    with pytest.raises(InputError, match="quantile levels"):
        load_learned_prior(path)
    np.savez(tmp_path / "junk.npz", a=np.zeros(3))
    with pytest.raises(InputError, match="not learned-prior weights"):
        load_learned_prior(tmp_path / "junk.npz")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch (extra) absent")
def test_training_refuses_bad_arguments_before_training(tmp_path, capsys):
    """Too few curves, no epochs, a missing output folder or a bad hyperprior stop at once."""
    from grpodyn.empirical.learned_prior_training import main

    for argv, word in ((["--curves", "2"], "--curves"), (["--epochs", "0"], "--epochs"),
                       (["--out", str(tmp_path / "missing" / "w.npz")], "does not exist"),
                       (["--signal-to-noise", "1.5"], "--signal-to-noise"),
                       (["--signal-to-noise", "1.5,-1"], "--signal-to-noise"),
                       (["--signal-to-noise", "a,b"], "--signal-to-noise")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and word in capsys.readouterr().err


def test_a_bound_beyond_the_training_curves_is_read_at_its_farthest():
    """A rise of noise 0.03 declared in [-20, 20] (both bounds ~600 noise units away, beyond the
    200 of any curve the network learned from) reads as no bound; one far bound is read at 200."""
    rng = np.random.default_rng(4)
    t = np.arange(1.0, 41.0)
    y = 0.8 - 0.6 * np.exp(-t / 15) + 0.03 * rng.standard_normal(t.size)
    future = np.arange(41.0, 81.0)
    unbounded, _, _ = curve_features(t, y, future, None)
    assert np.array_equal(curve_features(t, y, future, (-20.0, 20.0))[0], unbounded)
    near, loc, scale = curve_features(t, y, future, (0.0, 20.0))
    assert (20.0 - loc) / scale > FARTHEST_BOUND > loc / scale
    assert not np.array_equal(near, unbounded)
    assert np.array_equal(near, curve_features(t, y, future, (0.0, 1e6))[0])
