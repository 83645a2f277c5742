"""The variable projection of a reward-curve fit: (r0, r*) solved exactly for each shape.

Every model of :mod:`grpodyn.numerics.curve_models` is r(t) = r* + (r0 - r*) U(t; phi): linear
in (r0, r*). For a shape vector phi the best (r0, r*) is a straight-line least squares in U,
solved in closed form (under a plateau range: a convex quadratic in two unknowns on a box), so
the optimiser sees only phi (Golub and Pereyra 1973; docs/theory.md section 3, the saturation law's
form). :class:`VariableProjection` holds one series and model and gives the optimisers of
:mod:`grpodyn.numerics.solver` the projected residual, cost and their derivatives.
"""

from __future__ import annotations

import numpy as np

from .compiled import compiled
from .curve_models import CurveModel, raw_names
from .gram import dot, gram, inverse_2x2, times

__all__ = ["VariableProjection", "boxed_line"]


def boxed_line(u: np.ndarray, y: np.ndarray, r_star: float, slope: float,
               bounds: tuple[float, float]) -> tuple[float, float]:
    """Least squares of y ~ r* + s u with r* and r0 = r* + s both in [lo, hi].

    The objective is a convex quadratic in (r*, s); if the free optimum leaves the box, the
    constrained optimum lies on an edge: each edge is a one-dimensional least squares, clipped.

    Parameters
    ----------
    u, y : numpy.ndarray
        The unit shape U(t; phi) and the rewards.
    r_star, slope : float
        The free optimum (r*, r0 - r*).
    bounds : tuple of float
        The plateau range (lo, hi), reward units.

    Returns
    -------
    tuple of float
        (r*, r0 - r*) within the range.
    """
    lo, hi = bounds
    if lo <= r_star <= hi and lo <= r_star + slope <= hi:
        return r_star, slope
    best, best_cost = (r_star, slope), np.inf
    candidates = []
    uu = dot(u, u)
    for edge in (lo, hi):  # r* fixed on an edge: y - edge ~ s u
        s_free = dot(u, y - edge) / uu if uu > 0 else 0.0
        candidates.append((edge, min(max(s_free, lo - edge), hi - edge)))
    one_minus = 1.0 - u
    om = dot(one_minus, one_minus)
    for edge in (lo, hi):  # r0 fixed on an edge: y - edge u ~ r* (1 - u)
        r_free = dot(one_minus, y - edge * u) / om if om > 0 else float(y.mean())
        r_fixed = min(max(r_free, lo), hi)
        candidates.append((r_fixed, edge - r_fixed))
    for r_c, s_c in candidates:
        cost = float(np.sum((y - r_c - s_c * u) ** 2))
        if cost < best_cost:
            best, best_cost = (r_c, s_c), cost
    return best


class VariableProjection:
    """The projected least-squares problem of one model on one prepared series.

    Parameters
    ----------
    model : CurveModel
        The model, with its box (:meth:`CurveModel.guess`).
    t, y : numpy.ndarray
        Steps from the first logged point and rewards.
    plateau_bounds : tuple of float or None
        The range (lo, hi) that r0 and r* must lie in, reward units.

    Notes
    -----
    The shape U at the latest phi and the residual at the latest phi are kept, so a Jacobian
    evaluated right after the residual (as the optimisers do) reuses them.
    """

    def __init__(self, model: CurveModel, t: np.ndarray, y: np.ndarray,
                 plateau_bounds: tuple[float, float] | None) -> None:
        self.model, self.t, self.y, self.plateau_bounds = model, t, y, plateau_bounds
        self.lower, self.upper = np.array(model.lower), np.array(model.upper)
        self.y_mean = float(y.sum() / y.size)  # y.mean()'s value, without its Python wrapper
        self.y_centred = y - self.y_mean
        self.y_square = dot(self.y_centred, self.y_centred)
        # the law itself where the shape is the law at (r0, r*) = (1, 0) (the same call, without
        # the shape's own errstate: the optimisation runs under errstate(all="ignore"))
        self.law = (compiled(model.derivation)
                    if model.derivation is not None and model.abscissa is None else None)
        # the registry's dU/dphi column itself (shape_jac's own call, without its (n, 1) wrapper)
        self.column = (compiled(f"{model.derivation}_d_{raw_names(model)[0]}")
                       if model.derivation is not None and model.abscissa is None
                       and model.shape_jac is not None and len(model.shape_params) == 1
                       else None)
        self._last_shape: dict[bytes, np.ndarray] = {}  # U at the latest phi
        self._latest: list = []  # (phi, du, spread, du . y_c) at the latest scalar phi
        self._last_residual: dict[bytes, np.ndarray] = {}  # the residual at the latest phi

    def plateau_and_start(self, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return (r0, r*) by linear least squares for this shape, and the fitted curve."""
        t, y, model = self.t, self.y, self.model
        u = self.law(t, 1.0, 0.0, *phi) if self.law is not None else model.shape(t, *phi)
        self._last_shape.clear()
        self._last_shape[phi.tobytes()] = u
        # y ~ r0 u + r* (1 - u) = r* + (r0 - r*) u: a straight line in u, solved in closed form
        u_mean = u.sum() / u.size  # u.mean()'s value
        du = u - u_mean
        spread = dot(du, du)
        if not spread > 1e-12 * max(1.0, u_mean * u_mean) * u.size:
            design = np.column_stack([u, 1.0 - u])  # flat shape: the minimum-norm solution
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            return coef, design @ coef
        slope = dot(du, self.y_centred) / spread
        r_star = self.y_mean - slope * u_mean
        if self.plateau_bounds is not None:
            r_star, slope = boxed_line(u, y, r_star, slope, self.plateau_bounds)
        return np.array([r_star + slope, r_star]), r_star + slope * u

    def residual(self, phi: np.ndarray) -> np.ndarray:
        """Return the projected residual (fitted curve minus rewards) at phi."""
        return self.plateau_and_start(phi)[1] - self.y

    def recorded_residual(self, phi: np.ndarray) -> np.ndarray:
        """Return the projected residual at phi, kept for a differenced Jacobian."""
        fun = self.plateau_and_start(phi)[1] - self.y
        self._last_residual.clear()
        self._last_residual[phi.tobytes()] = fun
        return fun

    def last_residual(self, phi: np.ndarray) -> np.ndarray | None:
        """Return the residual kept by :meth:`recorded_residual` at phi, None if another."""
        return self._last_residual.get(phi.tobytes())

    def cost(self, phi: np.ndarray) -> float:
        """Return half the projected residual sum of squares at phi."""
        fun = self.plateau_and_start(phi)[1] - self.y
        return 0.5 * dot(fun, fun)

    def jacobian(self, phi: np.ndarray) -> np.ndarray:
        """Return d(residual)/d phi of the variable projection (Golub and Pereyra 1973).

        With A = [u, 1 - u], c = (r0, r*) = A^+ y and residual rho = A c - y, the derivative in
        phi_j is P_perp D_j c - (A^+)^T D_j^T rho, D_j = dA/dphi_j = [du_j, -du_j]:
        exact, from the analytic dU/dphi of the registry. Shape (n, len(phi)).
        """
        t, y, model = self.t, self.y, self.model
        u = self._last_shape.get(phi.tobytes())
        if u is None:
            u = model.shape(t, *phi)
        dus = model.shape_jac(t, *phi)
        design = np.empty((t.size, 2))
        design[:, 0] = u
        design[:, 1] = 1.0 - u
        gram_inverse = inverse_2x2(gram(design, design))
        coef = gram_inverse @ gram(design, y[:, None])[:, 0]
        rho = u * coef[0] + (1.0 - u) * coef[1] - y
        moved = dus * (coef[0] - coef[1])  # D_j c for every j, as columns
        dots = gram(dus, rho[:, None])[:, 0]
        back = gram_inverse @ (gram(design, moved) + np.vstack([dots, -dots]))
        return moved - times(design, back)

    def differenced_jacobian(self, phi: np.ndarray) -> np.ndarray:
        """Return forward differences of the projected residual (step sqrt(eps), in the box).

        The residual at phi itself is the one the optimiser has just evaluated
        (:meth:`recorded_residual`). Shape (n, len(phi)).
        """
        base = self._last_residual.get(phi.tobytes())
        if base is None:
            base = self.plateau_and_start(phi)[1] - self.y
        jac = np.empty((self.t.size, phi.size))
        for j in range(phi.size):
            h = 1.4901161193847656e-08 * max(abs(phi[j]), 1e-8)
            if phi[j] + h > self.upper[j]:
                h = -h  # step back into the box
            moved = phi.copy()
            moved[j] += h
            jac[:, j] = (self.plateau_and_start(moved)[1] - self.y - base) / (moved[j] - phi[j])
        return jac

    def scalar_cost(self, phi: float) -> float:
        """Return half the projected RSS at one phi: (|y_c|^2 - (du . y_c)^2 / |du|^2) / 2.

        du = U - mean(U), y_c = y - mean(y): the line y ~ r* + (r0 - r*) U solved in closed
        form and its RSS from dot products, without the residual vector.
        """
        law, t = self.law, self.t
        u = law(t, 1.0, 0.0, phi) if law is not None else self.model.shape(t, phi)
        u_mean = u.sum() / u.size
        du = u - u_mean
        spread = dot(du, du)
        if not spread > 1e-12 * max(1.0, u_mean * u_mean) * u.size:
            self._latest.clear()  # flat shape: the minimum-norm line of plateau_and_start
            fun = self.plateau_and_start(np.array([phi]))[1] - self.y
            return 0.5 * dot(fun, fun)
        along = dot(du, self.y_centred)
        self._latest[:] = [phi, du, spread, along]
        return 0.5 * (self.y_square - along * along / spread)

    def scalar_derivatives(self, phi: float) -> tuple[float, float]:
        """Return (J . rho, J . J) of the variable projection at one phi, from dot products.

        The projected residual is rho = k du - y_c with k = (du . y_c) / |du|^2; with
        dd = dU/dphi - mean(dU/dphi) its derivative is J = k' du + k dd (Golub and Pereyra
        1973, exact), k' = (dd . y_c - 2 k du . dd) / |du|^2. Since k |du|^2 = du . y_c,
        J . rho = k (k du . dd - dd . y_c) and J . J = k'^2 |du|^2 + 2 k k' du . dd
        + k^2 |dd|^2. dU/dphi is the registry's analytic column.
        """
        latest = self._latest
        if not latest or latest[0] != phi:
            self.scalar_cost(phi)
            if not latest:
                return np.nan, np.nan  # flat shape: no derivative, the descent stops
        _, du, spread, along = latest
        try:
            dus = self.column(self.t, 1.0, 0.0, phi) if self.column is not None else None
        except ValueError:  # a column defined only for t > 0: shape_jac's differences at 0
            dus = None
        if dus is None:
            dus = self.model.shape_jac(self.t, phi)[:, 0]
        dd = dus - dus.sum() / dus.size
        cross, lift, square = dot(du, dd), dot(dd, self.y_centred), dot(dd, dd)
        k = along / spread
        k_prime = (lift - 2 * k * cross) / spread
        return (k * (k * cross - lift),
                k_prime * k_prime * spread + 2 * k * k_prime * cross + k * k * square)
