"""Jacobians (forward or reverse, one directional derivative per input or output entry)
and Hessians (forward over reverse), built on `jvp` and `vjp`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import ZeroTangent, is_foreign_array

from ._api import _CONFIG, _argnums_tuple, _check_float_inputs, _jvp, _vjp, grad
from ._errors import InputTypeError
from ._jacobian_xp import foreign_jacobian
from ._tracer import Tracer, deep_primal
from ._tree import _any, _is_leaf_differentiable

__all__ = ["hessian", "jacobian"]


def jacobian(f: Callable, argnums: int = 0, mode: str = "auto") -> Callable:
    """The Jacobian of ``f`` with respect to argument ``argnums`` (a number or array).

    The result has shape ``y.shape + x.shape``; for a function returning a tuple or
    list of arrays, a tuple with one such Jacobian per output. ``mode="auto"`` uses forward mode
    (one ``jvp`` per input entry) when the input has no more entries than the
    output, reverse mode (one pullback per output entry, on one recorded trace)
    otherwise; ``"forward"`` and ``"reverse"`` force one. Complex inputs or outputs
    are refused (the Jacobian of a map on ℝ² is not a complex matrix in general).

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import jacobian
        >>> jacobian(lambda x: x * x)(np.array([1.0, 2.0]))
        array([[2., 0.],
               [0., 4.]])
    """
    if mode not in ("auto", "forward", "reverse"):
        raise InputTypeError("jacobian(mode=...)", "'auto', 'forward' or 'reverse'",
                             repr(mode), "pick one of the three modes")

    def jacobian_f(*args: Any, **kwargs: Any) -> Any:
        (i,) = _argnums_tuple(argnums, len(args), "jacobian")
        x = args[i]
        # x may be a tracer (a Jacobian of a Jacobian): shapes and seeds come from its
        # primal, and the columns are assembled with operations the AD follows
        xp = deep_primal(x)
        _check_float_inputs("jacobian", f, args, (i,))
        if is_foreign_array(x):
            if type(x) is Tracer:
                raise InputTypeError(
                    f"jacobian argument {i}", "an array of a library, or a NumPy array",
                    "a traced array of another library (a Jacobian of a Jacobian)",
                    "nest jvp and vjp directly, or use NumPy arrays")
            return foreign_jacobian(
                f, args, kwargs, i, mode, lambda: _vjp(_CONFIG, f, args, kwargs, (i,)),
                lambda tangents: _jvp(_CONFIG, f, args, tangents, kwargs))
        if not _is_leaf_differentiable(x) or np.iscomplexobj(x):
            got = (f"ndarray(shape={x.shape}, dtype={x.dtype})" if isinstance(x, np.ndarray)
                   else type(x).__qualname__)
            fix = ("for a complex input use jvp (the holomorphic derivative along a "
                   "direction) or vjp, or split it into real and imaginary parts"
                   if np.iscomplexobj(x) else
                   "convert integer arrays to float and flatten structured inputs into one "
                   "array first")
            raise InputTypeError(f"jacobian argument {i}", "a real number or real (float) array",
                                 got, fix)
        x_arr = np.asarray(xp, dtype=float if type(xp) in (int, float) else None)
        n = x_arr.size
        use_forward = mode == "forward"
        y: Any = None
        if mode == "auto":
            y, pullback = _vjp(_CONFIG, f, args, kwargs, (i,))
            use_forward = n <= sum(np.size(o) for o in _jacobian_outputs(y))
        if use_forward:
            columns: list[list] = []
            for k in range(n):
                e = np.zeros(x_arr.shape, dtype=x_arr.dtype)
                e.reshape(-1)[k] = 1.0
                tangent = e if isinstance(xp, np.ndarray) else type(xp)(1.0) if type(xp) is \
                    not int else 1.0
                tangents = [ZeroTangent()] * len(args)
                tangents[i] = tangent
                y, y_dot = _jvp(_CONFIG, f, args, tuple(tangents), kwargs)
                dots = _jacobian_outputs(y_dot) if type(y) in (tuple, list) else [y_dot]
                columns.append([_jacobian_entry(d) for d in dots])
            outs = _jacobian_outputs(y)
            jacs = []
            for j, out in enumerate(outs):
                y_arr = np.asarray(deep_primal(out))
                _check_real_output(y_arr)
                cols = [c[j] for c in columns]
                jac = np.stack(cols, axis=-1) if cols else np.zeros((*y_arr.shape, 0))
                jacs.append(_in_dtype(jac.reshape(y_arr.shape + x_arr.shape), y_arr, x_arr))
            return type(y)(jacs) if type(y) in (tuple, list) else jacs[0]
        if y is None:
            y, pullback = _vjp(_CONFIG, f, args, kwargs, (i,))
        outs = _jacobian_outputs(y)
        jacs = []
        for j, out in enumerate(outs):
            y_arr = np.asarray(deep_primal(out))
            _check_real_output(y_arr)
            rows = []
            for k in range(y_arr.size):
                e = np.zeros(y_arr.shape, dtype=y_arr.dtype)
                e.reshape(-1)[k] = 1.0
                seed = e if isinstance(out, np.ndarray) else _any(type(y_arr[()]))(1.0)
                if type(y) in (tuple, list):
                    seed = type(y)(seed if m == j else ZeroTangent() for m in range(len(y)))
                rows.append(_jacobian_entry(pullback(seed)[0]))
            jac = np.stack(rows) if rows else np.zeros((0, *x_arr.shape))
            jacs.append(_in_dtype(jac.reshape(y_arr.shape + x_arr.shape), y_arr, x_arr))
        return type(y)(jacs) if type(y) in (tuple, list) else jacs[0]

    return jacobian_f


def _in_dtype(jac: Any, y: np.ndarray, x: np.ndarray) -> Any:
    """The Jacobian of a floating ``y`` w.r.t. floating ``x`` in their common dtype
    (``float32`` for ``float32`` in and out, as the gradient is), whatever wider type
    the rules computed the columns in; the same in forward and reverse mode."""
    if type(jac) is np.ndarray and y.dtype.kind == "f" and x.dtype.kind == "f":
        dtype = np.result_type(y.dtype, x.dtype)
        if jac.dtype != dtype:
            return jac.astype(dtype)
    return jac


def _jacobian_entry(d: Any) -> Any:
    """One column (row) of a Jacobian as an array; a traced one stays traced."""
    return d if type(d) is Tracer else np.asarray(d)


def _jacobian_outputs(y: Any) -> list:
    """The outputs of a function given to ``jacobian``: one array or number, or a flat
    tuple or list of them (one Jacobian each, like ``jax.jacfwd``)."""
    outs = list(y) if type(y) in (tuple, list) else [y]
    for o in outs:
        if not isinstance(o, np.ndarray | float | int | complex | np.number) or \
                isinstance(o, bool | np.bool_):
            raise InputTypeError(
                "jacobian output", "a number or array, or a flat tuple or list of them",
                f"{type(y).__name__} holding {type(o).__name__}" if o is not y
                else type(o).__name__,
                "return one array (np.concatenate the outputs) or a tuple of arrays; use "
                "vjp for structured outputs")
    return outs


def _check_real_output(y: np.ndarray) -> None:
    if y.dtype.kind not in "fiu":
        raise InputTypeError("jacobian output", "a real number or real array",
                             f"dtype {y.dtype}", "split complex outputs into real and "
                             "imaginary parts")


def hessian(f: Callable, argnums: int = 0) -> Callable:
    """The Hessian of a real-scalar-valued ``f``, by forward-over-reverse.

    Forward mode (one ``jvp`` per input entry) of the reverse-mode gradient; shape
    ``x.shape + x.shape``.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import hessian
        >>> hessian(lambda x: (x[0] ** 2) * x[1])(np.array([1.0, 3.0]))
        array([[6., 2.],
               [2., 0.]])
    """
    jac = jacobian(grad(f, argnums), argnums, mode="forward")

    @functools.wraps(f)
    def hessian_f(*args: Any, **kwargs: Any) -> Any:
        (i,) = _argnums_tuple(argnums, len(args), "hessian")
        _check_float_inputs("hessian", f, args, (i,))
        return jac(*args, **kwargs)

    return hessian_f
