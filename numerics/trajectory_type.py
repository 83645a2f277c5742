"""One result type for every predicted or simulated path: :class:`Trajectory`.

The closed form of the continuum oscillator (:func:`grpodyn.numerics.trajectory.reward_trajectory`,
docs/theory.md section 2), the mean-field map with its band (:meth:`MeanFieldMap.trajectory`,
sections 4 and 6), the simulated map (:func:`grpodyn.numerics.simulate.simulate_map`) and the
path of :func:`grpodyn.numerics.predict.predict` all return a :class:`Trajectory`: steps, the
reward (or the displacement e = r - r*), an optional band and the regime, with ``plot``,
``to_dict``, ``to_pandas`` and a compact ``repr``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields
from html import escape
from typing import Any, TypeVar

import numpy as np

from grpodyn.ground import InputError, axes_or_new, json_number

__all__ = ["QUANTITIES", "Trajectory"]

#: What ``values`` holds: the reward r_n, or the displacement e_n = r_n - r* from the plateau.
QUANTITIES = ("reward", "displacement")

_T = TypeVar("_T", bound="Trajectory")


@dataclass(frozen=True, repr=False, eq=False)
class Trajectory:
    """A path of the reward (or of its displacement from the plateau) over optimizer steps.

    Parameters
    ----------
    steps : numpy.ndarray
        Times [steps], counted from the start of the path.
    values : numpy.ndarray
        The reward [reward] or the displacement r - r* [reward] at each step (``quantity``);
        for simulated paths, their mean.
    quantity : str
        ``"reward"`` or ``"displacement"``.
    lower, upper : numpy.ndarray or None
        Band of single runs around ``values`` (None: no band).
    level : float or None
        Probability mass of the band, in (0, 1).
    regime : str or None
        Regime of the dynamics that produced the path (``stability.REGIMES``), where known.
    unstable : bool
        Whether those dynamics grow without bound (effective damping not positive, or a pole
        outside the unit circle): the values then run to +-inf.
    samples : numpy.ndarray or None
        Simulated single paths, shape (paths, len(steps)), where the path was simulated.
    """

    steps: np.ndarray
    values: np.ndarray
    quantity: str = "reward"
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    level: float | None = None
    regime: str | None = None
    unstable: bool = False
    samples: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.quantity not in QUANTITIES:
            raise InputError(f"quantity must be one of {', '.join(QUANTITIES)}, got "
                             f"{self.quantity!r}")
        if (self.lower is None) != (self.upper is None):
            raise InputError("a trajectory's band needs both lower and upper")
        n = np.shape(self.steps)
        for name in ("values", "lower", "upper"):
            value = getattr(self, name)
            if value is not None and np.shape(value) != n:
                raise InputError(f"a trajectory's {name} must have one value per step: shape "
                                 f"{np.shape(value)} against steps {n}")
        if self.samples is not None and np.shape(self.samples)[1:] != n:
            raise InputError(f"a trajectory's samples must have one column per step: shape "
                             f"{np.shape(self.samples)} against steps {n}")

    @classmethod
    def build(cls: type[_T], **values: Any) -> _T:
        """Return an instance of ``cls`` from the fields of :class:`Trajectory` and its own.

        The constructor of the older names (``TrajectoryResult``, ``TrajectoryBand``,
        ``MapSimulationResult``) keeps their former signature and warns; the library builds
        them here, without the warning.

        Parameters
        ----------
        **values
            Every field of ``cls`` that has no default, and any that do.

        Returns
        -------
        Trajectory
            The instance, of type ``cls``.
        """
        own = {f.name for f in fields(Trajectory)}
        out = cls.__new__(cls)
        Trajectory.__init__(out, **{k: v for k, v in values.items() if k in own})
        for key, value in values.items():
            if key not in own:
                object.__setattr__(out, key, value)
        return out

    @property
    def diverged(self) -> bool:
        """Whether the path left every finite bound (a value is inf or NaN)."""
        return self._left_bounds()

    def _left_bounds(self) -> bool:
        """Return whether a value is inf or NaN."""
        return bool(not np.all(np.isfinite(self.values)))

    @property
    def band(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The band (lower, upper), or None."""
        return None if self.lower is None else (self.lower, self.upper)

    def __len__(self) -> int:
        return int(np.size(self.steps))

    def __repr__(self) -> str:
        n = len(self)
        if n == 0:
            return f"Trajectory({self.quantity}, no steps)"
        span = f"{n} steps {_short(self.steps[0])}..{_short(self.steps[-1])}"
        parts = [self.quantity, span, f"{_short(self.values[0])} -> {_short(self.values[-1])}"]
        if self.level is not None and self.lower is not None:
            parts.append(f"band {100 * self.level:.0f}%")
        if self.regime is not None and not (self.regime == "unstable" and self.unstable):
            parts.append(self.regime)
        if self.samples is not None:
            parts.append(f"{self.samples.shape[0]} paths")
        if self.unstable or self._left_bounds():
            parts.append("diverged" if self._left_bounds() else "unstable")
        return f"Trajectory({', '.join(parts)})"

    def _repr_html_(self) -> str:
        """Return a summary table (Jupyter's rich display)."""
        rows = [("quantity", self.quantity), ("steps", f"{len(self)}"),
                ("start", _short(self.values[0]) if len(self) else ""),
                ("end", _short(self.values[-1]) if len(self) else "")]
        if self.lower is not None:
            level = "" if self.level is None else f" ({100 * self.level:.0f}%)"
            rows.append((f"band at the end{level}",
                         f"{_short(self.lower[-1])} .. {_short(self.upper[-1])}"))
        if self.regime is not None:
            rows.append(("regime", self.regime))
        rows.append(("diverged", "yes" if self._left_bounds() else "no"))
        body = "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in rows)
        return f"<table><tr><th colspan='2'>Trajectory</th></tr>{body}</table>"

    def to_dict(self) -> dict[str, Any]:
        """Return the path as plain JSON values (non-finite numbers as None).

        Returns
        -------
        dict of str to Any
            ``steps``, ``quantity``, ``values``, ``diverged``, ``unstable``, and ``lower``,
            ``upper``, ``level`` with a band, ``regime`` where known.
        """
        out: dict[str, Any] = {"steps": [json_number(v) for v in self.steps],
                               "quantity": self.quantity,
                               "values": [json_number(v) for v in self.values],
                               "diverged": self._left_bounds(),
                               "unstable": bool(self.unstable)}
        if self.lower is not None:
            out["lower"] = [json_number(v) for v in self.lower]
            out["upper"] = [json_number(v) for v in self.upper]
            out["level"] = None if self.level is None else float(self.level)
        if self.regime is not None:
            out["regime"] = self.regime
        return out

    def to_pandas(self) -> Any:
        """Return the path as a ``pandas.DataFrame`` indexed by step.

        Returns
        -------
        pandas.DataFrame
            Column ``quantity`` (``reward`` or ``displacement``), and ``lower``, ``upper`` with a
            band.

        Raises
        ------
        ImportError
            When pandas is not installed (``pip install pandas``).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Trajectory.to_pandas needs pandas: pip install pandas") from None
        columns = {self.quantity: np.asarray(self.values)}
        if self.lower is not None:
            columns.update(lower=np.asarray(self.lower), upper=np.asarray(self.upper))
        return pd.DataFrame(columns, index=pd.Index(np.asarray(self.steps), name="step"))

    def plot(self, ax: Any = None, *, label: str | None = None, color: str | None = None) -> Any:
        """Plot the path and its band (matplotlib).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure's axes when None.
        label : str, optional
            Legend label of the path (the quantity by default).
        color : str, optional
            Colour of the path and its band.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        ax = axes_or_new(ax)
        (line,) = ax.plot(self.steps, self.values, color=color, label=label or self.quantity)
        if self.lower is not None:
            level = "" if self.level is None else f"{100 * self.level:.0f}% "
            ax.fill_between(self.steps, self.lower, self.upper, color=line.get_color(),
                            alpha=0.2, label=f"{level}band")
        ax.set_xlabel("step")
        ax.set_ylabel(self.quantity if self.quantity == "reward" else "displacement r - r*")
        ax.legend(frameon=False)
        return ax


def _short(value: float) -> str:
    """Return a number in 4 significant digits."""
    return f"{float(value):.4g}"


def deprecated(old: str, new: str) -> None:
    """Warn that the constructor ``old`` is deprecated in favour of ``new``.

    Parameters
    ----------
    old, new : str
        The deprecated name and what to use instead.
    """
    warnings.warn(f"{old}(...) is deprecated and will be removed in the next release; "
                  f"use {new}", DeprecationWarning, stacklevel=3)
