"""Rules for ``numpy.linalg``: solves, factorizations, decompositions, norms.

Covered (frule and rrule each): ``inv``, ``pinv``, ``solve``, ``lstsq``, ``det``,
``slogdet``, ``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``,
``eig``, ``eigvals``, ``matrix_power``, ``norm``, ``vector_norm``, ``matrix_norm``,
``cond``, ``multi_dot``, ``tensorsolve``, ``tensorinv``, ``trace``, ``diagonal``,
``outer``, ``cross``, ``matmul``, ``vecdot``, ``matrix_transpose``, ``tensordot``;
``matrix_rank`` is non-differentiable. Stacked (batched) matrices are supported
wherever NumPy accepts them.

Modules: this one holds the array-API spellings of NumPy's contractions (``trace``,
``diagonal``, ``outer``, ``cross``, ``matmul``, ``vecdot``, ``matrix_transpose``,
``tensordot``), whose rules are those of ``numpy.trace``, ``numpy.matmul``, …
(``rules/numpy/contractions.py`` and ``shape.py``) looked up when called;
``linalg_solve`` the solves, inverses and determinants; ``linalg_decomp`` the
factorizations (``cholesky``, ``qr``, ``svd``, ``eigh``, ``eig``); ``linalg_norms`` the
norms and ``cond``. Their derivations, shared with ``scipy.linalg``'s rules, live in
``rules/_linalg_kernel.py`` and ``rules/_linalg_derivatives.py``.

Conventions:

- Complex: the cotangent of a real loss ``L`` w.r.t. ``Z`` is
  ``dL/dRe Z + i dL/dIm Z``; the pullback of a linear map is its adjoint under
  ``<X, Y> = Re sum(conj(X) * Y)``.
- Functions that read one triangle (``eigh``/``eigvalsh`` with ``UPLO``,
  ``cholesky``, ``pinv(hermitian=True)``) are differentiated as functions of
  that triangle: the other triangle gets a zero cotangent, and the imaginary
  part of the diagonal (ignored by LAPACK) too.
- ``solve``, ``det``, ``slogdet`` factor the matrix once (LU via SciPy for a
  single matrix when SciPy is installed) and reuse the factors in the
  pullback (adjoint solves cost O(n^2) per right-hand side).
- Degenerate spectra: ``eigh``, ``eig`` and ``svd`` use the matrix
  ``F[i, j] = 1 / (lambda_j - lambda_i)`` (``1 / (s_j^2 - s_i^2)`` for ``svd``);
  pairs closer than ``n * eps * max|lambda|`` get ``F = 0``. The eigenvalue
  (singular value) parts are always finite and exact; the eigenvector parts
  are then those of a loss invariant under rotations inside each degenerate
  eigenspace (the only case where they exist).
- Gauge of eigen- and singular vectors: real vectors are differentiated with
  their sign held fixed (the derivative of NumPy's own output). Complex
  ``eigh``/``svd`` vectors have a free phase per vector that LAPACK fixes in
  no documented way: the frule picks ``Im diag(U^H dU) = 0`` (eigh) and splits
  the phase evenly between ``u_i`` and ``v_i`` (svd); pullbacks are exact for
  every loss invariant under those phases. ``eig`` follows NumPy's
  documented gauge exactly (unit 2-norm, largest component real).
- ``svd(full_matrices=True)`` of a non-square matrix: the extra columns of
  ``U`` (rows of ``Vh``) are not determined by the matrix; the pullback takes
  their cotangent as zero (PyTorch's convention), the pushforward is
  ``not_implemented`` (as in JAX and PyTorch).
  ``svd(hermitian=True)`` is ``not_implemented``.
- ``qr``: ``mode="reduced"``, ``"r"`` and ``"complete"`` for any shape;
  ``"raw"`` is ``not_implemented``. Needs full rank. ``"complete"`` with
  ``m > n``: the last ``m - n`` columns of ``Q`` are not a function of the
  matrix alone, but LAPACK's Householder completion is, and the rules give its
  derivative (JAX's convention, arXiv:2409.13374; PyTorch refuses), which
  matches finite differences of ``np.linalg.qr`` itself.
- ``lstsq``, ``pinv``: rank assumed constant near the input (full rank in the
  tests); ``lstsq`` differentiates ``x``, ``residuals`` and ``s``.
- ``svd``/``svdvals``/``cond`` need nonzero singular values where they divide
  by them (the vectors' derivatives, ``cond``); ``det`` of an exactly
  singular matrix: the adjugate (finite, JAX's value); ``slogdet``: sign 0 and
  logabsdet -inf, and NaN derivatives (``log|det|``'s gradient tends to
  ``+inf adj(A)^H`` on one side and ``-inf adj(A)^H`` on the other; JAX and
  PyTorch give NaN or +-inf with signs from LAPACK's zero pivot).
- ``norm``: ``ord`` 0 has derivative zero; at ties (``inf`` norms, matrix
  1/inf norms) the subgradient is averaged over the tied entries.

Example: the pullback of ``det`` reuses the forward LU factors.

>>> import numpy as np
>>> from chainrules import rrule
>>> y, det_pullback = rrule(np.linalg.det, np.array([[2.0, 1.0], [0.0, 3.0]]))
>>> float(y)
6.0
>>> det_pullback(1.0)[1]  # det(A) * inv(A).T
array([[ 3.,  0.],
       [-1.,  2.]])
"""


from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import frule, non_differentiable, rrule, unthunk
from chainrules.rules import _kit as kit

__all__: list[str] = []

non_differentiable(np.linalg.matrix_rank)


def _alias(f: Any, g: Any, keywords: Callable[..., dict] | None = None) -> None:
    """Rules for ``f(x1, ..., **kw)`` equal to ``g(x1, ..., **keywords(**kw))``: the same
    positional arguments, so ``g``'s rules (and cotangent tuples) serve as they are."""

    def translate(kwargs: dict) -> dict:
        return keywords(**kwargs) if keywords is not None else kwargs

    def alias_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
        return kit.delegate(frule, g, (dargs,), args, translate(kwargs))

    def alias_rrule(*args: Any, **kwargs: Any) -> Any:
        return kit.delegate(rrule, g, (), args, translate(kwargs))

    kit.define_rules(f, frule_fn=alias_frule, rrule_fn=alias_rrule, name=f.__name__)


def _trace_axes(offset: int = 0, dtype: Any = None) -> dict:
    return {"offset": offset, "axis1": -2, "axis2": -1, "dtype": dtype}


def _diagonal_axes(offset: int = 0) -> dict:
    return {"offset": offset, "axis1": -2, "axis2": -1}


def _tensordot_axes(axes: Any = 2) -> dict:
    return {"axes": axes}


def _cross_axis(axis: int = -1) -> dict:
    return {"axis": axis}


_alias(np.linalg.matmul, np.matmul)
_alias(np.linalg.matrix_transpose, np.matrix_transpose)
_alias(np.linalg.trace, np.trace, _trace_axes)
_alias(np.linalg.diagonal, np.diagonal, _diagonal_axes)
_alias(np.linalg.tensordot, np.tensordot, _tensordot_axes)
_alias(np.linalg.cross, np.cross, _cross_axis)


# ---------------------------------------------------------------------- outer, vecdot


def _vectors(x1: Any, x2: Any) -> None:
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        np.linalg.outer(x1, x2)  # NumPy's own error: np.outer would flatten them


def outer_frule(dargs: tuple, x1: Any, x2: Any) -> Any:
    _vectors(x1, x2)
    return kit.delegate(frule, np.outer, (dargs,), (x1, x2), {})


def outer_rrule(x1: Any, x2: Any) -> Any:
    _vectors(x1, x2)
    return kit.delegate(rrule, np.outer, (), (x1, x2), {})


kit.define_rules(np.linalg.outer, frule_fn=outer_frule, rrule_fn=outer_rrule, name="outer")


def _last(x: Any, axis: int) -> Any:
    return x if axis == -1 else np.moveaxis(np.asarray(x), axis, -1)


def vecdot_frule(dargs: tuple, x1: Any, x2: Any, *, axis: int = -1) -> Any:
    # np.vecdot's rule reads the vectors from the last axis: move them there
    dots = tuple(d if kit.is_zero(unthunk(d)) else _last(unthunk(d), axis) for d in dargs[1:])
    return kit.delegate(frule, np.vecdot, ((dargs[0], *dots),), (_last(x1, axis), _last(x2, axis)),
                        {})


def vecdot_rrule(x1: Any, x2: Any, *, axis: int = -1) -> Any:
    y, pullback = kit.delegate(rrule, np.vecdot, (), (_last(x1, axis), _last(x2, axis)), {})
    if axis == -1:
        return y, pullback
    project_x1, project_x2 = kit.array_projector(x1), kit.array_projector(x2)

    def vecdot_pullback(y_bar: Any) -> tuple:
        f_bar, x1_bar, x2_bar = (unthunk(t) for t in pullback(y_bar))
        return (f_bar,
                x1_bar if kit.is_zero(x1_bar) else project_x1(np.moveaxis(x1_bar, -1, axis)),
                x2_bar if kit.is_zero(x2_bar) else project_x2(np.moveaxis(x2_bar, -1, axis)))

    return y, vecdot_pullback


kit.define_rules(np.linalg.vecdot, frule_fn=vecdot_frule, rrule_fn=vecdot_rrule, name="vecdot")
