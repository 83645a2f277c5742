"""One home for the forecasters: the :class:`Forecaster` protocol and its registry.

A forecaster has a ``name`` and a ``forecast(steps, reward, *, n_train, future_steps, level,
bounds, momentum, learning_rate)`` method returning a
:class:`numerics.forecast_result.Forecast` of the steps after the first ``n_train`` points
(docs/theory.md section 6 for the ensemble's noise model). Adding one is a module defining it
and one :func:`register` line below. A registration names the forecaster's module and
attribute, loaded on first lookup, so that listing the names (the CLI's ``--forecaster``
choices) imports nothing numeric.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Protocol

from grpodyn.ground import InputError

if TYPE_CHECKING:
    import numpy as np

    from .forecast_result import Forecast

__all__ = ["Forecaster", "CurveForecaster", "FORECASTERS", "register", "unregister",
           "get_forecaster"]


class Forecaster(Protocol):
    """What a forecaster offers: a name and a forecast of the steps after a cut."""

    name: str

    def forecast(self, steps: np.ndarray, reward: np.ndarray, *, n_train: int,
                 future_steps: np.ndarray, level: float = 0.9,
                 bounds: tuple[float, float] | None = None, momentum: float | None = None,
                 learning_rate: tuple[np.ndarray, np.ndarray] | None = None) -> Forecast:
        """Forecast ``future_steps`` from the first ``n_train`` points of (steps, reward).

        Parameters
        ----------
        steps, reward : numpy.ndarray
            The run (only the first ``n_train`` points are read).
        n_train : int
            Training points.
        future_steps : numpy.ndarray
            Steps to forecast, after ``steps[n_train - 1]``.
        level : float
            Central probability of the band.
        bounds : (lo, hi), optional
            The reward range.
        momentum : float, optional
            The optimiser's momentum, for forecasters that use it.
        learning_rate : (steps, lr), optional
            The learning-rate schedule over the training and forecast steps, for forecasters
            that use it.

        Returns
        -------
        Forecast
        """
        ...


class CurveForecaster:
    """A forecaster that reads the reward curve alone, through one function.

    A subclass sets ``name`` and ``function = staticmethod(f)``, where
    ``f(steps, reward, *, n_train, future_steps, level, bounds)`` returns the
    :class:`~numerics.forecast_result.Forecast`; ``momentum`` and ``learning_rate`` are taken
    for the :class:`Forecaster` protocol and not used.
    """

    name: str
    function: Callable[..., Forecast]

    def forecast(self, steps: np.ndarray, reward: np.ndarray, *, n_train: int,
                 future_steps: np.ndarray, level: float = 0.9,
                 bounds: tuple[float, float] | None = None, momentum: float | None = None,
                 learning_rate: tuple[np.ndarray, np.ndarray] | None = None) -> Forecast:
        """Forecast ``future_steps`` from the first ``n_train`` points, as :class:`Forecaster`."""
        return self.function(steps, reward, n_train=n_train, future_steps=future_steps,
                             level=level, bounds=bounds)


class _Registry(Mapping[str, "Forecaster"]):
    """Forecasters by name; an entry given as ``"module:attribute"`` is loaded on first use."""

    def __init__(self) -> None:
        self._entries: dict[str, Forecaster | str] = {}

    def __getitem__(self, name: str) -> Forecaster:
        entry = self._entries[name]
        if isinstance(entry, str):
            module, attribute = entry.split(":")
            entry = getattr(importlib.import_module(module), attribute)
            if isinstance(entry, type):
                entry = entry()
            self._entries[name] = entry
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, name: str, forecaster: Forecaster | str) -> None:
        self._entries[name] = forecaster

    def remove(self, name: str) -> None:
        del self._entries[name]


#: The forecasters by name: ``analyse_run(forecaster=...)`` and ``grpodyn forecast
#: --forecaster`` serve every one of them.
FORECASTERS = _Registry()


def register(forecaster: Forecaster | str, *, name: str | None = None) -> None:
    """Register a forecaster under its name.

    Parameters
    ----------
    forecaster : Forecaster or str
        The forecaster, or ``"module:attribute"`` naming it (a class is instantiated), loaded
        on first lookup; ``name`` is then required.
    name : str, optional
        The name (default ``forecaster.name``).
    """
    key = name if name is not None else getattr(forecaster, "name", None)
    if not isinstance(key, str) or not key:
        raise InputError(f"forecaster: {forecaster!r} has no name")
    FORECASTERS.add(key, forecaster)


def unregister(name: str) -> None:
    """Remove the forecaster ``name`` from the registry."""
    get_forecaster(name)
    FORECASTERS.remove(name)


def get_forecaster(name: str) -> Forecaster:
    """Return the forecaster registered as ``name``; a one-line error naming the choices."""
    if name not in FORECASTERS:
        raise InputError(f"forecaster: {name!r} is none of {', '.join(FORECASTERS)}")
    return FORECASTERS[name]


register("grpodyn.numerics.forecast:EnsembleForecaster", name="ensemble")
register("grpodyn.numerics.learned_prior:LearnedPriorForecaster", name="learned_prior")
register("grpodyn.numerics.forecast_adaptive:AdaptiveForecaster", name="adaptive")
register("grpodyn.numerics.forecast_calibrated:CalibratedPriorForecaster", name="calibrated_prior")
