"""Rules for ``scipy.sparse`` matrices and arrays.

The tangent of a sparse matrix is a sparse matrix with the *same sparsity pattern*
(the Python counterpart of Julia's structured ``Diagonal`` case): only the stored
entries can be perturbed. Cotangents are computed at the stored entries directly,
never as a dense ``m x n`` product, and built in the primal's format.

Covered:

- ``A @ X`` and ``X @ A`` (``operator.matmul``) with ``A`` sparse and ``X`` a dense
  vector or matrix;
- ``A.sum()`` and ``A.sum(axis=0 | 1)`` (the ``sum`` method of every format);
- the constructors of the csr, csc and coo formats (matrix and array classes) from
  data arrays, ``cls((data, indices, indptr), shape=...)`` and
  ``cls((data, (row, col)), shape=...)``: the cotangent of ``data``.

Sparse-times-sparse products are not covered.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import scipy.sparse as sp

from chainrules.core import NoTangent, ProjectTo, Tangent, Thunk, ZeroTangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

_SPARSE_BASE = sp.csr_matrix.__mro__[[c.__name__ for c in sp.csr_matrix.__mro__].index(
    "_spbase")]
_CONSTRUCTORS = (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix,
                 sp.csr_array, sp.csc_array, sp.coo_array)


def _pattern(A: Any) -> tuple[np.ndarray, np.ndarray]:
    coo = A.tocoo()
    return coo.row, coo.col


def _to_array(t: Any) -> np.ndarray:
    """A (non-zero) tangent as a dense array, a sparse one included."""
    t = unthunk(t)
    return np.asarray(t.toarray() if sp.issparse(t) else t)


def _product_tangent(dargs: tuple, left: Any, right: Any) -> Any:
    """The pushforward of ``left @ right`` (one of them sparse): the product rule."""
    _, left_dot, right_dot = (kit.nonzero(d) for d in dargs)
    terms = [np.asarray(t) for t in (None if left_dot is None else left_dot @ right,
                                     None if right_dot is None else left @ right_dot)
             if t is not None]
    return sum(terms[1:], terms[0]) if terms else ZeroTangent()


def _with_values(A: Any, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> Any:
    """A sparse matrix of A's class, format and shape with ``values`` at (rows, cols)."""
    make = sp.coo_array if isinstance(A, sp.sparray) else sp.coo_matrix
    return make((values, (rows, cols)), shape=A.shape).asformat(A.format)


# --- products ------------------------------------------------------------------------------


def _sparse_bar(A: Any, rows: np.ndarray, cols: np.ndarray, left: np.ndarray,
                right: np.ndarray) -> Any:
    """Entries of left @ right^H at A's pattern: sum_k left[i, k] conj(right[j, k])."""
    left2 = left.reshape(left.shape[0], -1)
    right2 = right.reshape(right.shape[0], -1)
    values = np.einsum("ik,ik->i", left2[rows], right2[cols].conj())
    if A.dtype.kind == "f":
        values = values.real
    return _with_values(A, rows, cols, values.astype(A.dtype, copy=False))


@rrule.register(operator.matmul)
def sparse_matmul_rrule(A: _SPARSE_BASE, X: np.ndarray):
    y = A @ X
    rows, cols = _pattern(A)
    project_X = ProjectTo(X)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
    def sparse_matmul_pullback(y_bar):
        y_bar = _to_array(y_bar)
        A_bar = Thunk(lambda: _sparse_bar(A, rows, cols, y_bar, X))
        X_bar = Thunk(lambda: project_X(A.conj().T @ y_bar))
        return NoTangent(), A_bar, X_bar

    return y, sparse_matmul_pullback


@frule.register(operator.matmul)
def sparse_matmul_frule(dargs, A: _SPARSE_BASE, X: np.ndarray):
    return A @ X, _product_tangent(dargs, A, X)


@rrule.register(operator.matmul)
def matmul_sparse_rrule(X: np.ndarray, A: _SPARSE_BASE):
    y = X @ A
    rows, cols = _pattern(A)
    project_X = ProjectTo(X)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
    def matmul_sparse_pullback(y_bar):
        y_bar = _to_array(y_bar)
        # y = X A: A_bar = X^H y_bar at the pattern, X_bar = y_bar A^H. With
        # _sparse_bar's sum_k left[i, k] conj(right[j, k]): left = X^H, right = y_bar^H.
        A_bar = Thunk(lambda: _sparse_bar(A, rows, cols, np.atleast_2d(X).conj().T,
                                          np.atleast_2d(y_bar).conj().T))
        X_bar = Thunk(lambda: project_X(np.asarray((A.conj() @ y_bar.T).T)))
        return NoTangent(), X_bar, A_bar

    return y, matmul_sparse_pullback


@frule.register(operator.matmul)
def matmul_sparse_frule(dargs, X: np.ndarray, A: _SPARSE_BASE):
    return X @ A, _product_tangent(dargs, X, A)


# --- sum -----------------------------------------------------------------------------------

_SUM_METHODS = {cls.sum for cls in _CONSTRUCTORS}


def _sum_options(args: tuple, kwargs: dict) -> tuple:
    if len(args) > 3:
        raise TypeError("sum takes at most 3 arguments after the matrix (axis, dtype, out)")
    options = dict(zip(("axis", "dtype", "out"), args), **kwargs)
    kit.refuse_out(sp.csr_matrix.sum, options)
    return options.get("axis"), options.get("dtype")


def _sum_rrule(A, *args, **kwargs):
    axis, dtype = _sum_options(args, kwargs)
    y = A.sum(axis=axis, dtype=dtype)
    n_rest = len(args)
    rows, cols = _pattern(A)
    shape = A.shape

    rest = (NoTangent(),) * n_rest  # axis, dtype: not differentiable

    @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
    def sparse_sum_pullback(y_bar):
        g = np.asarray(y_bar)
        if axis is None:
            values = np.full(rows.shape, g.reshape(()))
        elif axis in (0, -2):
            values = g.reshape(shape[1])[cols]
        else:
            values = g.reshape(shape[0])[rows]
        if A.dtype.kind == "f":
            values = values.real
        return (NoTangent(), _with_values(A, rows, cols, values.astype(A.dtype, copy=False)),
                *rest)

    return y, sparse_sum_pullback


def _sum_frule(dargs, A, *args, **kwargs):
    axis, dtype = _sum_options(args, kwargs)
    A_dot = kit.nonzero(dargs[1])
    y = A.sum(axis=axis, dtype=dtype)
    if A_dot is None:
        return y, ZeroTangent()
    return y, A_dot.sum(axis=axis, dtype=dtype)


for _method in _SUM_METHODS:
    rrule.register(_method)(_sum_rrule)
    frule.register(_method)(_sum_frule)


# --- constructors from data arrays ----------------------------------------------------------


def _data_positions(cls: type, arg: tuple, shape: Any) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of each entry of ``data`` in ``cls((data, ...), shape)``."""
    rest = arg[1:]
    if len(rest) == 1:  # (data, (row, col))
        row, col = rest[0]
        return np.asarray(row), np.asarray(col)
    indices, indptr = (np.asarray(a) for a in rest)
    major = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    if cls.__name__.startswith("csc"):
        return indices, major
    return major, indices


def _is_data_form(arg: Any) -> bool:
    return isinstance(arg, tuple) and len(arg) in (2, 3)


def _make_constructor_rules(cls: type) -> None:
    def constructor_rrule(arg, *args, **kwargs):
        y = cls(arg, *args, **kwargs)
        rest = tuple(NoTangent() for _ in args)
        if not _is_data_form(arg):
            @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
            def dense_pullback(y_bar):
                return (NoTangent(), ProjectTo(arg)(_to_array(y_bar)), *rest)

            return y, dense_pullback
        rows, cols = _data_positions(cls, arg, y.shape)
        project_data = ProjectTo(arg[0])
        n_index = len(arg) - 1

        @kit.zero_guard((NoTangent(), ZeroTangent(), *rest))
        def constructor_pullback(y_bar):
            dense = _to_array(y_bar)
            data_bar = project_data(dense[rows, cols])
            index_bars = (NoTangent(),) * n_index
            return (NoTangent(), Tangent[tuple](data_bar, *index_bars), *rest)

        return y, constructor_pullback

    def constructor_frule(dargs, arg, *args, **kwargs):
        y = cls(arg, *args, **kwargs)
        arg_dot = kit.nonzero(dargs[1])
        if arg_dot is None:
            return y, ZeroTangent()
        if not _is_data_form(arg):
            return y, cls(_to_array(arg_dot), *args, **kwargs)
        data_dot = kit.nonzero(arg_dot[0])
        if data_dot is None:
            return y, ZeroTangent()
        return y, cls((np.asarray(data_dot), *arg[1:]), *args, **kwargs)

    kit.define_rules(cls, object, ..., frule_fn=constructor_frule, rrule_fn=constructor_rrule)


for _cls in _CONSTRUCTORS:
    _make_constructor_rules(_cls)
