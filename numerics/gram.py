"""Normal matrices of tall Jacobians: products and inverses for the curve fits.

The fits of :mod:`grpodyn.numerics.fit` (docs/theory.md section 3) and their covariances (section 6)
reduce n x p Jacobians (n up to 1e5 points, p at most 4 parameters) to p x p normal matrices.
These helpers form those products without waking a BLAS thread pool for long ones and invert
the normal matrix after Jacobi scaling, so the parameters' units do not decide which directions
count as undetermined.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["dot", "gram", "gram_inverse", "inverse_2x2", "times"]

#: Rows from which the fit's long reductions avoid BLAS: OpenBLAS runs dot products and
#: matrix-vector products on its thread pool above ~1e4 entries, and waking the pool costs
#: milliseconds per call on a busy machine; below, BLAS runs on one thread and is the fastest.
_NO_BLAS_ROWS = 8192


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """Return a . b; numpy's own single-threaded loop (no BLAS) for long vectors."""
    if a.shape[0] < _NO_BLAS_ROWS:
        return float(a @ b)
    return float(np.einsum("i,i->", a, b))


def gram(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a^T b for tall a, b (n x p, n x q; p, q small); no BLAS for long ones (see dot)."""
    if a.shape[0] < _NO_BLAS_ROWS:
        return a.T @ b
    return np.einsum("ij,ik->jk", a, b)


def times(a: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Return a m for a tall a (n x p) and a small m (p x q); no BLAS for long ones."""
    if a.shape[0] < _NO_BLAS_ROWS:
        return a @ m
    return np.einsum("ij,jk->ik", a, m)


#: Least determinant of the unit-diagonal (Jacobi-scaled) normal matrix for which
#: :func:`gram_inverse` inverts a 3 x 3 one by cofactors: its condition number is then below
#: 27 / 1e-6, and the cofactor inverse as accurate as the SVD's; below, the SVD.
_COFACTOR_DETERMINANT = 1e-6
#: A diagonal entry at or under the least normal float carries no information: scale 1.
_TINY = float(np.finfo(float).tiny)


def gram_inverse(info: np.ndarray) -> np.ndarray:
    """Inverse of a normal matrix J^T J, its pseudo-inverse where the data leave it singular.

    The matrix is first scaled to a unit diagonal, S = D^-1 (J^T J) D^-1 with D = sqrt(diag)
    (a diagonal entry at or under the least normal float, zero included: scale 1, and the
    cofactors are not used), and the result is D^-1 S^+ D^-1: the parameters' units do
    not decide which directions count as undetermined (without the scaling, an exponential
    law with tau ~ 1e4 steps gave J^T J a condition number above 1e15 from units alone, and
    ``pinv``'s cutoff dropped a determined direction: a standard error of tau of 3e-6 relative
    where it is 60 times tau). For p = 3 (the exponential law, the inertial form with its
    momentum known) S is inverted by cofactors in Python floats when its determinant exceeds
    ``_COFACTOR_DETERMINANT`` (well conditioned: S^+ = S^-1 there; the LAPACK call costs more
    than the arithmetic); otherwise by ``np.linalg.pinv`` (SVD, cutoff 1e-15 relative).

    Parameters
    ----------
    info : numpy.ndarray
        Symmetric positive semi-definite (p, p) matrix, in squared reward per squared
        parameter units.

    Returns
    -------
    numpy.ndarray
        Its inverse (or pseudo-inverse), shape (p, p), in squared parameter units per squared
        reward.
    """
    if info.shape == (3, 3):
        (a, b, c), (_, e, f), (_, _, i) = info.tolist()
        if min(a, e, i) > _TINY and math.isfinite(a + b + c + e + f + i):
            da, de, di = math.sqrt(a), math.sqrt(e), math.sqrt(i)
            b, c, f = b / (da * de), c / (da * di), f / (de * di)  # unit diagonal
            m00, m01, m02 = 1.0 - f * f, c * f - b, b * f - c  # cofactors
            m11, m12, m22 = 1.0 - c * c, b * c - f, 1.0 - b * b
            det = m00 + b * m01 + c * m02
            if det > _COFACTOR_DETERMINANT:
                return np.array([[m00 / (det * a), m01 / (det * da * de), m02 / (det * da * di)],
                                 [m01 / (det * da * de), m11 / (det * e), m12 / (det * de * di)],
                                 [m02 / (det * da * di), m12 / (det * de * di), m22 / (det * i)]])
    scale = np.sqrt(np.abs(np.diag(info)))
    # a diagonal under the least normal float carries no information: left unscaled (the SVD's
    # cutoff drops it) rather than scaled into an overflow
    scale[~(scale ** 2 > _TINY)] = 1.0
    outer = np.outer(scale, scale)
    return np.linalg.pinv(info / outer) / outer


def inverse_2x2(matrix: np.ndarray) -> np.ndarray:
    """Inverse of a 2 x 2 matrix in closed form (no LAPACK call for a tiny system)."""
    (a, b), (c, d) = matrix.tolist()
    det = a * d - b * c
    return np.array([[d / det, -b / det], [-c / det, a / det]])
