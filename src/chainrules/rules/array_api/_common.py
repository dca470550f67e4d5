"""Helpers shared by the array-API rule modules (not a rule module: ``_`` names are skipped)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, NotImplementedTangent, ProjectTo, Tangent, ZeroTangent
from chainrules.rules import _kit as kit

_NUMBERS = (bool, int, float, complex)


def is_numpy(xp: Any) -> bool:
    """Whether ``xp`` is NumPy's namespace (NumPy itself or array-api-compat's wrapper)."""
    return xp is np or getattr(xp, "__name__", "") == "array_api_compat.numpy"


def as_arrays(xp: Any, *values: Any) -> tuple:
    """``values`` as arrays of ``xp``; a Python number takes the dtype of the first array
    among them (the array API forbids mixing float32 and float64 arrays)."""
    if xp is np or is_numpy(xp):
        if len(values) == 1:  # the common case, without a generator (a partial's hot path)
            v = values[0]
            return (v if type(v) is np.ndarray else np.asarray(v),)
        return tuple(v if type(v) is np.ndarray else np.asarray(v) for v in values)
    like = next((v for v in values if not isinstance(v, _NUMBERS)), None)
    out = []
    for v in values:
        if isinstance(v, _NUMBERS):
            dtype = None
            if like is not None:
                try:
                    dtype = xp.result_type(like.dtype, v)
                except (TypeError, ValueError):
                    dtype = None
            v = xp.asarray(v, dtype=dtype)
        out.append(v)
    return tuple(out)


def is_complex(xp: Any, *values: Any) -> bool:
    for v in values:
        if isinstance(v, complex):
            return True
        dtype = getattr(v, "dtype", None)
        if dtype is not None and xp.isdtype(dtype, "complex floating"):
            return True
    return False


def is_inexact(xp: Any, x: Any) -> bool:
    """Whether ``x`` has a tangent: a float or complex array or a Python float/complex."""
    if isinstance(x, bool):
        return False
    if isinstance(x, _NUMBERS):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is not None and xp.isdtype(dtype, ("real floating", "complex floating"))


def conj(xp: Any, v: Any) -> Any:
    """The complex conjugate of ``v``; a real ``v`` as it is."""
    return xp.conj(v) if is_complex(xp, v) else v


def mH(xp: Any, v: Any) -> Any:
    """The conjugate transpose of a stack of matrices."""
    return conj(xp, xp.matrix_transpose(v))


def linear_unary(f: Any, name: str, pushforward: Callable[..., Any],
                 pullback: Callable[..., Any]) -> None:
    """Register the frule and rrule of a one-argument function that is (real-)linear in
    its tangent: ``y_dot = pushforward(xp, x, y, x_dot)``, ``x_bar = pullback(xp, x, y,
    y_bar)`` before projection. Integer and bool inputs get ``NoTangent()``."""

    def unary_rrule(x: Any) -> Any:
        y = f(x)
        project_x = ProjectTo(x)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent())))
        def unary_pullback(y_bar: Any) -> tuple:
            if isinstance(y_bar, NotImplementedTangent):
                return NoTangent(), y_bar
            xp = _namespace(x, y_bar)
            return NoTangent(), project_x(pullback(xp, x, y, y_bar))

        return y, unary_pullback

    def unary_frule(dargs: tuple, x: Any) -> Any:
        y = f(x)
        xp = _namespace(x)
        if not is_inexact(xp, x):
            return y, NoTangent()
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None:
            return y, ZeroTangent()
        if isinstance(x_dot, NotImplementedTangent):
            return y, x_dot
        return y, pushforward(xp, x, y, x_dot)

    kit.define_rules(f, object, frule_fn=unary_frule, rrule_fn=unary_rrule, name=name)


def _namespace(*values: Any) -> Any:
    return core.array_namespace(*(v for v in values if not isinstance(v, Tangent)))
