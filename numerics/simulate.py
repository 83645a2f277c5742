"""Simulation of the mean-field map, deterministic or with noise, many paths at once.

    e_{n+1} = (1 + beta) e_n - beta e_{n-1} - k e_{n-l(n)} + xi_n,   xi_n ~ N(0, s^2)

with l(n) = 0 on-policy, d for a fixed staleness, n mod K for a refresh interval K with
sample-and-hold (docs/theory.md section 1). The momentum buffer starts at zero: e_{-1} = e_0. Values
before the start are held at e_0.
"""

from __future__ import annotations

import numpy as np

from grpodyn.ground import InputError, check_finite, check_int, check_momentum, check_positive

from .trajectory_type import Trajectory, deprecated

__all__ = ["simulate_map", "simulate_sde", "MapSimulationResult"]


#: The settings a :class:`MapSimulationResult` keeps beside its paths.
_SETTINGS = ("momentum", "stiffness", "refresh", "staleness", "noise")


class MapSimulationResult(Trajectory):
    """Simulated paths of the displacement e_n as a :class:`Trajectory`, and the settings used.

    ``values`` is the mean path and ``samples`` (also ``e``) the paths, shape
    (paths, steps + 1); ``quantity`` is ``"displacement"``. Constructing it directly, with the
    older signature ``(e, momentum, stiffness, refresh, staleness, noise)``, is deprecated.
    """

    momentum: float
    stiffness: float
    refresh: int
    staleness: int
    noise: float

    def __init__(self, e: np.ndarray, momentum: float, stiffness: float, refresh: int,
                 staleness: int, noise: float) -> None:
        deprecated("MapSimulationResult", "simulate_map(...) or a Trajectory with samples")
        with np.errstate(invalid="ignore", over="ignore"):
            mean = e.mean(axis=0)
        super().__init__(steps=np.arange(e.shape[1]), values=mean, quantity="displacement",
                         samples=e)
        settings = (momentum, stiffness, refresh, staleness, noise)
        for name, value in zip(_SETTINGS, settings, strict=True):
            object.__setattr__(self, name, value)

    @classmethod
    def of_paths(cls, e: np.ndarray, *, momentum: float, stiffness: float, refresh: int,
                 staleness: int, noise: float) -> MapSimulationResult:
        """Return the result for the paths ``e`` (paths, steps + 1) of the map's settings.

        Parameters
        ----------
        e : numpy.ndarray
            Displacements [reward], shape (paths, steps + 1).
        momentum, stiffness, refresh, staleness, noise
            The settings of :func:`simulate_map`.

        Returns
        -------
        MapSimulationResult
            The mean path as ``values``, the paths as ``samples``.
        """
        with np.errstate(invalid="ignore", over="ignore"):
            mean = e.mean(axis=0)
        return cls.build(steps=np.arange(e.shape[1]), values=mean, quantity="displacement",
                         samples=e, momentum=momentum, stiffness=stiffness, refresh=refresh,
                         staleness=staleness, noise=noise)

    @property
    def e(self) -> np.ndarray:
        """Paths of the displacement, shape (paths, steps + 1): the same array as ``samples``."""
        return self.samples

    @property
    def mean(self) -> np.ndarray:
        """Mean path over the simulated paths: the same array as ``values``."""
        return self.values

    @property
    def diverged(self) -> np.ndarray:
        """Per path: True when the path left every finite bound (overflowed)."""
        return ~np.isfinite(self.samples).all(axis=1)


def simulate_map(*, momentum: float, stiffness: float, e0: float = 1.0, steps: int,
                 refresh: int = 1, staleness: int = 0, noise: float = 0.0, paths: int = 1,
                 seed: int | None = 0) -> MapSimulationResult:
    """Iterate the mean-field map.

    Parameters
    ----------
    momentum : float
        beta in [0, 1).
    stiffness : float
        k = a kappa [1/step^2], > 0.
    e0 : float
        Initial displacement r0 - r* [reward].
    steps : int
        Number of optimizer steps.
    refresh, staleness : int
        Refresh interval K >= 1 (sample-and-hold) or fixed staleness d >= 0; not both.
    noise : float
        Per-step noise variance s^2 [reward^2]; 0 for the deterministic map.
    paths : int
        Independent paths simulated at once.
    seed : int or None
        Seed of the noise generator.

    Returns
    -------
    MapSimulationResult
        A :class:`~grpodyn.numerics.trajectory_type.Trajectory` of the displacement: the mean
        path as ``values``, the paths (paths, steps + 1) as ``samples`` (also ``e``).
    """
    beta = float(check_momentum(momentum, scalar=True))
    k = float(check_positive("stiffness", stiffness, scalar=True))
    e0 = float(check_finite("e0", e0, scalar=True))
    steps = check_int("steps", steps, minimum=1)
    refresh = check_int("refresh", refresh, minimum=1)
    staleness = check_int("staleness", staleness, minimum=0)
    noise = float(check_positive("noise", noise, allow_zero=True, scalar=True))
    paths = check_int("paths", paths, minimum=1)
    if refresh > 1 and staleness > 0:
        raise InputError("give either refresh or staleness, not both")
    rng = np.random.default_rng(seed)
    e = np.empty((paths, steps + 1))
    e[:, 0] = e0
    previous = e[:, 0].copy()
    sd = np.sqrt(noise)
    with np.errstate(over="ignore", invalid="ignore"):
        for n in range(steps):
            if refresh > 1:
                lagged = e[:, n - n % refresh]
            else:
                lagged = e[:, max(n - staleness, 0)]
            step = (1.0 + beta) * e[:, n] - beta * previous - k * lagged
            if noise > 0:
                step = step + sd * rng.standard_normal(paths)
            previous = e[:, n]
            e[:, n + 1] = step
    return MapSimulationResult.of_paths(e, momentum=beta, stiffness=k, refresh=refresh,
                                        staleness=staleness, noise=noise)


def simulate_sde(*, momentum: float, stiffness: float, e0: float = 1.0, v0: float = 0.0,
                 steps: int, noise: float = 0.0, paths: int = 1, seed: int | None = 0
                 ) -> np.ndarray:
    """Exact samples at integer times of the continuum oscillator with white forcing.

    ``m e'' + c e' + k e = xi`` with m = (1+beta)/2, c = 1-beta and xi white of intensity
    s^2 = ``noise`` per step; the linear SDE is discretised exactly (matrix exponential and Van
    Loan's integral of the diffusion), so the sample mean is exactly the closed-form trajectory.

    Returns
    -------
    numpy.ndarray
        e at t = 0, 1, ..., steps, shape (paths, steps + 1).
    """
    from scipy.linalg import expm

    beta = float(check_momentum(momentum, scalar=True))
    k = float(check_positive("stiffness", stiffness, scalar=True))
    steps = check_int("steps", steps, minimum=1)
    paths = check_int("paths", paths, minimum=1)
    s2 = float(check_positive("noise", noise, allow_zero=True, scalar=True))
    m, c = (1 + beta) / 2, 1 - beta
    drift = np.array([[0.0, 1.0], [-k / m, -c / m]])
    diffusion = np.array([[0.0, 0.0], [0.0, s2 / m**2]])
    van_loan = expm(np.block([[-drift, diffusion], [np.zeros((2, 2)), drift.T]]))
    transition = van_loan[2:, 2:].T
    covariance = transition @ van_loan[:2, 2:]
    covariance = (covariance + covariance.T) / 2
    root = np.linalg.cholesky(covariance + 1e-300 * np.eye(2)) if s2 > 0 else np.zeros((2, 2))
    rng = np.random.default_rng(seed)
    state = np.tile([float(e0), float(v0)], (paths, 1))
    out = np.empty((paths, steps + 1))
    out[:, 0] = state[:, 0]
    for n in range(steps):
        state = state @ transition.T
        if s2 > 0:
            state = state + rng.standard_normal((paths, 2)) @ root.T
        out[:, n + 1] = state[:, 0]
    return out
