"""Jacobians (and so Hessians) with respect to another library's array (array_api_strict,
JAX, PyTorch, dask): basis vectors and the assembled matrix in that library, never NumPy."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from chainrules.core import ZeroTangent, unthunk

from ._arraylib import foreign_namespace
from ._errors import InputTypeError

__all__ = ["foreign_jacobian"]


def _basis(xp: Any, shape: tuple, dtype: Any, k: int) -> Any:
    n = math.prod(shape)
    return xp.reshape(xp.eye(n, dtype=dtype)[k, ...], shape)


def foreign_jacobian(f: Callable, args: tuple, kwargs: dict, i: int, mode: str,
                     vjp_: Callable, jvp_: Callable) -> Any:
    """The Jacobian of ``f`` w.r.t. foreign array ``args[i]``: shape ``y.shape + x.shape``,
    in ``x``'s library; forward mode (one ``jvp`` per input entry) when asked or when the
    input has no more entries than the output, else reverse (one pullback per output
    entry). ``vjp_(args, kwargs)`` and ``jvp_(tangents)`` are the transformations."""
    x = args[i]
    xp = foreign_namespace(x)
    if not xp.isdtype(x.dtype, "real floating"):
        raise InputTypeError(f"jacobian argument {i}", "a real floating array",
                             f"dtype {x.dtype}", "convert it with xp.astype(x, xp.float64)")
    shape = tuple(x.shape)
    n = math.prod(shape)
    y, pullback = vjp_()
    if type(y) in (tuple, list) or not hasattr(y, "shape"):
        raise InputTypeError("jacobian output", f"one array of {xp.__name__}",
                             type(y).__name__, "return one array (concatenate the outputs)")
    y_shape = tuple(y.shape)
    m = math.prod(y_shape)
    if mode == "forward" or (mode == "auto" and n <= m):
        columns = []
        for k in range(n):
            tangents = [ZeroTangent()] * len(args)
            tangents[i] = _basis(xp, shape, x.dtype, k)
            columns.append(xp.reshape(xp.asarray(unthunk(jvp_(tuple(tangents))[1])), (m,)))
        jac = xp.stack(columns, axis=-1) if columns else xp.zeros((m, 0), dtype=x.dtype)
    else:
        rows = [xp.reshape(unthunk(pullback(_basis(xp, y_shape, y.dtype, k))[0]), (n,))
                for k in range(m)]
        jac = xp.stack(rows, axis=0) if rows else xp.zeros((0, n), dtype=x.dtype)
    return xp.reshape(jac, (*y_shape, *shape))
