"""Reward-curve models: the inertial closed form, the empirical law and baselines.

Models (time t counted from the first logged step), each r(t) = r* + (r0 - r*) U(t; phi):

- ``inertial``: the closed form of docs/theory.md section 2 with v0 = 0,
  r(t) = r* + (r0 - r*) E(t; zeta, omega0); with the optimiser's momentum known, mass and damping
  are fixed and only r0, r*, stiffness are free.
- ``exponential``: the empirical law r* - (r* - r0) exp(-t/tau) (derivation ``saturation_law``).
- ``sigmoid``: a logistic baseline between two plateaus.
- ``exponential_lr``: the overdamped law on the learning-rate clock, r* + (r0 - r*)
  exp(-A(t)/A_tau) with A(t) the cumulative learning rate: the warmup-aware variant (a linear
  warmup gives the Gaussian start of derivation ``warmup_trajectory``).
- ``power``: a saturating power law r* + (r0 - r*) / (1 + (t/t_mid)^b), the sigmoid in log time
  of the compute-performance law of RL scaling studies (ScaleRL, 2025): a slow-growth model whose
  approach to the plateau is algebraic, not exponential.

Each model carries its fit's box and starting points (:meth:`CurveModel.guess`); the fit itself
is :func:`grpodyn.numerics.fit.fit_curve`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import product

import numpy as np

from grpodyn.ground import InputError, check_momentum

from .compiled import compiled, signature, symbol_info
from .trajectory import closed_form

__all__ = ["CurveModel", "EXTRA_MODELS", "MODELS", "MODEL_NAMES", "cumulative_lr", "curve_model",
           "model_jacobian", "raw_names"]

MODEL_NAMES = ("inertial", "exponential", "sigmoid", "exponential_lr")
#: Models fitted on request only (not part of ``fit --model all``).
EXTRA_MODELS = ("power",)


@dataclass(frozen=True)
class CurveModel:
    """A reward-curve model r(t) = r* + (r0 - r*) U(t; phi).

    Every model here is linear in (r0, r*), so those two are solved exactly for each shape
    parameter vector phi (variable projection); bounds and starting points concern phi only.
    Build one from a registered derivation with :meth:`from_derivation` and scale its box and
    starting points to a series with :meth:`guess`.

    Attributes
    ----------
    name : str
        Model name (a key of ``MODELS`` for the built-in ones).
    shape_params : tuple of str
        Names of phi.
    shape : callable
        ``U(t, *phi)``, the unit curve: U = 1 at the start level r0, U = 0 on the plateau r*.
    lower, upper : tuple of float
        The fit's box for phi (within ``domain``).
    starts : tuple of tuple of float
        Starting points of the multi-start fit (empty before :meth:`guess`).
    fixed : dict of str to float
        Constants the model was built with (e.g. the optimiser's momentum).
    derivation : str or None
        The registered derivation the model was built from, None for an explicit model.
    shape_jac : callable or None
        ``dU/dphi(t, *phi)`` as an (n, len(phi)) array (analytic, from the registry's
        ``<derivation>_d_<param>``); finite differences when None.
    domain : tuple of (float, float)
        Where each phi is defined, from its symbol's assumptions (positive: (0, inf)).
    abscissa : callable or None
        Map from t to the law's time argument (the learning-rate clock of ``exponential_lr``).
    """

    name: str
    shape_params: tuple[str, ...]
    shape: Callable[..., np.ndarray]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    starts: tuple[tuple[float, ...], ...] = ()
    fixed: dict[str, float] = field(default_factory=dict)
    derivation: str | None = None
    shape_jac: Callable[..., np.ndarray] | None = None
    domain: tuple[tuple[float, float], ...] = ()
    abscissa: Callable[[np.ndarray], np.ndarray] | None = None

    def __repr__(self) -> str:
        """One line: the name, phi, its box, where it comes from and its constants."""
        box = ", ".join(f"{p} in [{lo:.3g}, {hi:.3g}]"
                        for p, lo, hi in zip(self.shape_params, self.lower, self.upper,
                                             strict=True))
        origin = f"derivation {self.derivation!r}" if self.derivation else "explicit"
        fixed = "".join(f", {k}={v:g}" for k, v in self.fixed.items())
        return (f"CurveModel({self.name!r}: {box}; {origin}, {len(self.starts)} starts"
                f"{fixed})")

    @classmethod
    def from_derivation(cls, derivation: str, *, name: str | None = None,
                        rename: dict[str, str] | None = None,
                        abscissa: Callable[[np.ndarray], np.ndarray] | None = None
                        ) -> CurveModel:
        """Build the model of a registered law ``f(t, r0, r_star, *phi)`` (no sympy).

        Parameters
        ----------
        derivation
            Name of a derivation whose arguments start with ``t, r0, r_star`` and which is
            affine in (r0, r*) as r* + (r0 - r*) U(t; phi) (``saturation_law``, ``sigmoid_law``,
            ``power_law``).
        name
            Model name; the derivation's name by default.
        rename
            Public names of some shape parameters (e.g. ``{"tau": "lr_time"}``).
        abscissa
            Map from t to the law's time argument (e.g. the learning-rate clock). A model with an
            abscissa has no analytic Jacobian: the forecaster swaps its shape to extend the clock.

        Returns
        -------
        CurveModel
            Parameter names from the derivation's arguments, ``domain`` (and a box equal to it)
            from the symbols' assumptions, and ``shape_jac`` from the registered
            ``<derivation>_d_<param>`` derivations when they all exist; no starting points yet
            (:meth:`guess`).

        Raises
        ------
        InputError
            If the derivation is unknown or its arguments are not ``t, r0, r_star, ...``.
        """
        try:
            args = signature(derivation)
        except KeyError:
            raise InputError(f"no derivation named {derivation!r}") from None
        if args[:3] != ("t", "r0", "r_star") or len(args) < 4:
            raise InputError(f"derivation {derivation!r} has arguments {args}: a fit model needs "
                             "(t, r0, r_star, shape parameters...)")
        phi = args[3:]
        law = compiled(derivation)
        x_of = abscissa if abscissa is not None else (lambda t: t)

        def shape(t: np.ndarray, *values: float) -> np.ndarray:
            with np.errstate(over="ignore"):  # exp overflow: the logistic's tail, U = 0
                return law(x_of(t), 1.0, 0.0, *values)

        shape_jac = None
        columns_exist = all(f"{derivation}_d_{p}" in _registered() for p in phi)
        if abscissa is None and columns_exist:
            columns = tuple(compiled(f"{derivation}_d_{p}") for p in phi)

            def shape_jac(t: np.ndarray, *values: float) -> np.ndarray:
                out = np.empty((t.size, len(columns)))
                with np.errstate(all="ignore"):
                    for j, column in enumerate(columns):
                        try:
                            out[:, j] = column(t, 1.0, 0.0, *values)
                        except ValueError:  # a column defined only for t > 0 (power law's
                            # d/d exponent): central differences of U at t = 0
                            inside = t > 0
                            out[inside, j] = column(t[inside], 1.0, 0.0, *values)
                            out[~inside, j] = _difference(shape, t[~inside], values, j)
                return out

        domain = tuple(_assumed_range(p) for p in phi)
        names = tuple((rename or {}).get(p, p) for p in phi)
        return cls(name or derivation, names, shape, tuple(lo for lo, _ in domain),
                   tuple(hi for _, hi in domain), derivation=derivation, shape_jac=shape_jac,
                   domain=domain, abscissa=abscissa)

    def guess(self, t: np.ndarray, y: np.ndarray) -> CurveModel:
        """Return this model with a box and starting points scaled to the series (t, y).

        The built-in models keep their own rule (``_GUESSES``); a model of a new law gets a
        rule from its parameters' units: times (unit steps) range over 1e-3 .. 100 spans and
        start at the relaxation guess, a tenth of the span and the span; other parameters start
        at 1 within 1e-3 .. 1e3 (or -1e3 .. 1e3 when they may be negative).

        Parameters
        ----------
        t, y : numpy.ndarray
            Times from the first logged point [steps] and rewards.

        Returns
        -------
        CurveModel
            A copy with ``lower``, ``upper`` and ``starts`` set, all within ``domain``.
        """
        rule = _GUESSES.get(self.name, _unit_guess)
        lower, upper, starts = rule(self, t, y)
        if self.domain:
            lower = tuple(max(lo, d_lo) for lo, (d_lo, _) in zip(lower, self.domain, strict=True))
            upper = tuple(min(hi, d_hi) for hi, (_, d_hi) in zip(upper, self.domain, strict=True))
        return replace(self, lower=tuple(lower), upper=tuple(upper), starts=tuple(starts))

    @property
    def params(self) -> tuple[str, ...]:
        """All parameter names: r0, r_star and the shape parameters."""
        return ("r0", "r_star", *self.shape_params)

    def __call__(self, t: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Evaluate r(t) for the parameter vector theta = (r0, r*, *phi)."""
        r0, r_star, *phi = theta
        return r_star + (r0 - r_star) * self.shape(t, *phi)


def _difference(shape: Callable[..., np.ndarray], t: np.ndarray, values: tuple[float, ...],
                j: int) -> np.ndarray:
    """Return dU/dphi_j at t by central differences (relative step 1e-6)."""
    h = 1e-6 * max(abs(values[j]), 1e-3)
    up, down = list(values), list(values)
    up[j] += h
    down[j] -= h
    return (shape(t, *up) - shape(t, *down)) / (2 * h)


@cache
def _registered() -> frozenset[str]:
    """Names of every compiled derivation."""
    from .compiled import registered_names

    return registered_names()


def _assumed_range(parameter: str) -> tuple[float, float]:
    """Return the interval a parameter's declared assumptions allow (positive: (0, inf))."""
    _, _, assumptions = symbol_info(parameter)
    if "positive" in assumptions or "nonnegative" in assumptions:
        return 0.0, np.inf
    if "negative" in assumptions or "nonpositive" in assumptions:
        return -np.inf, 0.0
    return -np.inf, np.inf


def _inertial_unit(t: np.ndarray, zeta: float, omega0: float) -> np.ndarray:
    """Evaluate the closed-form e(t) from (1, 0), valid in every regime.

    No input validation: the fit's bounds keep the arguments valid.
    """
    return closed_form(t, 1.0, 0.0, zeta, omega0)


#: 1 - 1/e: the share of the way an exponential relaxation covers in one relaxation time.
_SIXTY_THREE_PERCENT = 1 - np.exp(-1)


def _relaxation_guess(t: np.ndarray, y: np.ndarray) -> float:
    """Time for a moving average of y to cover 63% of the way from its head to its tail."""
    window = max(1, y.size // 20)
    sums = np.empty(y.size + 1)
    sums[0] = 0.0
    np.cumsum(y, out=sums[1:])  # the running sums from 0
    smooth = (sums[window:] - sums[:-window]) / window  # moving average, O(n) in any window
    head, tail = smooth[0], smooth[-1]
    if head == tail:
        return float(max(t[-1] - t[0], 1.0)) / 3
    crossed = (smooth - head) / (tail - head) >= _SIXTY_THREE_PERCENT
    first = int(crossed.argmax())  # the first crossing, if any
    index = min(first + window // 2, t.size - 1) if crossed[first] else t.size - 1
    return float(max(t[index] - t[0], (t[-1] - t[0]) / 100, 1e-3))


_Box = tuple[tuple[float, ...], tuple[float, ...], tuple[tuple[float, ...], ...]]


def _span(t: np.ndarray) -> float:
    return float(max(t[-1] - t[0], 1.0))


def _exponential_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    span = _span(t)
    taus = (_relaxation_guess(t, y), span / 10, span)
    return (1e-3,), (100 * span,), tuple((tau,) for tau in taus)


def _sigmoid_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    span = _span(t)
    return ((0.0, 1e-3), (2 * span, 10 * span),
            tuple((mid, w) for mid in (span / 5, span / 2) for w in (span / 20, span / 5)))


def _power_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    span = _span(t)
    mids = (_relaxation_guess(t, y), span)
    return ((span / 100, 0.2), (100 * span, 5.0),
            tuple((mid, b) for mid in mids for b in (0.7, 1.5)))


def _clock_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    total = float(max(model.abscissa(t[-1:])[0], 1e-300))
    return (total * 1e-4,), (total * 100,), tuple((total * f,) for f in (0.1, 0.3, 1.0))


def _unit_guess(model: CurveModel, t: np.ndarray, y: np.ndarray) -> _Box:
    """Box and starts of a model without its own rule, from its parameters' units."""
    span = _span(t)
    lower, upper, grids = [], [], []
    for raw, (lo, _) in zip(raw_names(model), model.domain or [(-np.inf, np.inf)] *
                            len(model.shape_params), strict=True):
        if symbol_info(raw)[0] == "steps":
            lower.append(1e-3)
            upper.append(100 * span)
            grids.append((_relaxation_guess(t, y), span / 10, span))
        else:
            lower.append(1e-3 if lo >= 0 else -1e3)
            upper.append(1e3)
            grids.append((1.0,))
    return tuple(lower), tuple(upper), tuple(product(*grids))


def raw_names(model: CurveModel) -> tuple[str, ...]:
    """Return the derivation's names of the shape parameters (before any renaming)."""
    if model.derivation is None:
        return model.shape_params
    return signature(model.derivation)[3:]


#: Built-in models with their own starting rule (kept from the hand-tuned fits: the fitted
#: values of the shipped logs do not change); a new law falls back on ``_unit_guess``.
_GUESSES: dict[str, Callable[[CurveModel, np.ndarray, np.ndarray], _Box]] = {
    "exponential": _exponential_guess, "sigmoid": _sigmoid_guess, "power": _power_guess,
    "exponential_lr": _clock_guess,
}

#: model name -> (derivation, shape parameters renamed): the models built from the registry.
#: ``inertial`` stays explicit: it is the closed form of ``numerics.trajectory`` valid in every
#: regime, where each generated trajectory covers one regime and refuses the others.
MODELS: dict[str, tuple[str, dict[str, str]]] = {
    "exponential": ("saturation_law", {}),
    "sigmoid": ("sigmoid_law", {}),
    "power": ("power_law", {}),
    "exponential_lr": ("saturation_law", {"tau": "lr_time"}),
}


def cumulative_lr(t: np.ndarray, learning_rate: np.ndarray | None) -> np.ndarray:
    """Cumulative learning rate A(t) from t[0] by the trapezoid rule, checked.

    The clock of ``exponential_lr`` (docs/theory.md section 9), and of the schedule's mean that
    turns its time constant into steps.
    """
    if learning_rate is None:
        raise InputError("exponential_lr needs the learning rate of every point")
    lr = np.asarray(learning_rate, dtype=float)
    if lr.shape != t.shape or not np.all(np.isfinite(lr)) or np.any(lr < 0):
        raise InputError("learning rate must be finite, non-negative, one per point")
    return np.concatenate([[0.0], np.cumsum(0.5 * (lr[1:] + lr[:-1]) * np.diff(t))])


def _inertial_model(t: np.ndarray, y: np.ndarray, momentum: float | None) -> CurveModel:
    """Build the explicit inertial model (closed form, every regime), scaled to the series."""
    span = _span(t)
    guess = _relaxation_guess(t, y)
    taus = (guess, span / 10, span)
    if momentum is not None:
        beta = float(check_momentum(momentum, scalar=True))
        zeta_of, omega_of = compiled("damping_ratio"), compiled("natural_frequency")

        def fixed_mass(t: np.ndarray, stiffness: float) -> np.ndarray:
            return _inertial_unit(t, zeta_of(beta, stiffness), omega_of(beta, stiffness))
        c = 1 - beta
        return CurveModel("inertial", ("stiffness",), fixed_mass, (1e-9,), (2 * (1 + beta),),
                          tuple((c / tau,) for tau in taus), fixed={"momentum": beta},
                          domain=((0.0, np.inf),))
    return CurveModel("inertial", ("zeta", "omega0"), _inertial_unit, (0.05, 1e-5), (1e3, 10.0),
                      ((0.7, 1.4 / guess), (1.5, 3.0 / guess), (5.0, 10.0 / guess),
                       (1.5, 30.0 / span)), domain=((0.0, np.inf), (0.0, np.inf)))


@cache
def _registry_model(name: str) -> CurveModel:
    """Return the model ``name`` of ``MODELS`` on the step clock, built once (before guess).

    Built from the generated module (:meth:`CurveModel.from_derivation`), which does not
    change while the process runs; a fit scales a copy of it (:meth:`CurveModel.guess`).
    """
    derivation, rename = MODELS[name]
    return CurveModel.from_derivation(derivation, name=name, rename=rename)


def curve_model(name: str, t: np.ndarray, y: np.ndarray, *, momentum: float | None = None,
                learning_rate: np.ndarray | None = None) -> CurveModel:
    """Return the model ``name`` with bounds and starting points scaled to the data.

    Parameters
    ----------
    name
        One of ``MODEL_NAMES`` or ``EXTRA_MODELS``.
    t, y
        Times (steps from the first logged point) and rewards.
    momentum
        Optimiser momentum: fixes mass and damping of the ``inertial`` model.
    learning_rate
        Learning rate at each t: required by ``exponential_lr``.

    Returns
    -------
    CurveModel
        Built from its derivation (``MODELS``) and :meth:`CurveModel.guess`, or the explicit
        inertial model.
    """
    if name == "inertial":
        return _inertial_model(t, y, momentum)
    if name not in MODELS:
        raise InputError(f"unknown model {name!r}; choose from "
                         f"{', '.join(MODEL_NAMES + EXTRA_MODELS)}")
    if name != "exponential_lr":
        return _registry_model(name).guess(t, y)
    derivation, rename = MODELS[name]
    clock = cumulative_lr(t, learning_rate)

    def on_clock(t_eval: np.ndarray) -> np.ndarray:
        return np.interp(t_eval, t, clock)
    return CurveModel.from_derivation(derivation, name=name, rename=rename,
                                      abscissa=on_clock).guess(t, y)


def model_jacobian(model: CurveModel, t: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Return the Jacobian of the model in its parameters (r0, r*, *phi).

    Columns U, 1 - U and (r0 - r*) dU/dphi: analytic when the model has ``shape_jac``, else
    central finite differences (docs/theory.md section 3, the saturation law's form).

    Parameters
    ----------
    model : CurveModel
        The reward-curve model.
    t : numpy.ndarray
        Steps (or the learning-rate clock) where it is evaluated.
    theta : numpy.ndarray
        Parameters (r0, r*, *phi).

    Returns
    -------
    numpy.ndarray
        Shape (len(t), len(theta)), in reward units per parameter unit.
    """
    if model.shape_jac is not None:
        u = model.shape(t, *theta[2:])
        jac = np.empty((t.size, theta.size))
        jac[:, 0] = u
        jac[:, 1] = 1.0 - u
        jac[:, 2:] = (theta[0] - theta[1]) * model.shape_jac(t, *theta[2:])
        return jac
    jac = np.empty((t.size, theta.size))
    box = [(-np.inf, np.inf)] * 2 + list(zip(model.lower, model.upper, strict=True))
    for j in range(theta.size):
        h = 1e-6 * max(abs(theta[j]), 1e-3)
        up, down = theta.copy(), theta.copy()
        lo, hi = box[j]
        if theta[j] - h < lo <= theta[j]:  # on or near a bound: one-sided, inside the box (a
            up[j] += h  # step out of it may leave the model's domain: stiffness 0)
            jac[:, j] = (model(t, up) - model(t, theta)) / (up[j] - theta[j])
        elif theta[j] <= hi < theta[j] + h:
            down[j] -= h
            jac[:, j] = (model(t, theta) - model(t, down)) / (theta[j] - down[j])
        else:
            up[j] += h
            down[j] -= h
            jac[:, j] = (model(t, up) - model(t, down)) / (2 * h)
    return jac
