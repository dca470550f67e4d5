"""Helpers shared by the array-API rule modules (not a rule module: ``_`` names are skipped)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import (
    NoTangent,
    NotImplementedTangent,
    ProjectTo,
    Tangent,
    ZeroTangent,
    array_namespace,
    frule,
    rrule,
    unthunk,
)

_ZERO_LIKE = (ZeroTangent, NoTangent)
_NUMBERS = (bool, int, float, complex)


def is_numpy(xp: Any) -> bool:
    """Whether ``xp`` is NumPy's namespace (NumPy itself or array-api-compat's wrapper)."""
    return xp is np or getattr(xp, "__name__", "") == "array_api_compat.numpy"


def as_arrays(xp: Any, *values: Any) -> tuple:
    """``values`` as arrays of ``xp``; a Python number takes the dtype of the first array
    among them (the array API forbids mixing float32 and float64 arrays)."""
    if is_numpy(xp):
        return tuple(np.asarray(v) for v in values)
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


def dense(t: Any) -> Any:
    """A tangent or cotangent as a value, or None for a zero one."""
    t = unthunk(t)
    if isinstance(t, _ZERO_LIKE):
        return None
    return t


def linear_unary(f: Any, name: str, pushforward: Callable[..., Any],
                 pullback: Callable[..., Any]) -> None:
    """Register the frule and rrule of a one-argument function that is (real-)linear in
    its tangent: ``y_dot = pushforward(xp, x, y, x_dot)``, ``x_bar = pullback(xp, x, y,
    y_bar)`` before projection. Integer and bool inputs get ``NoTangent()``."""

    def unary_rrule(x: Any) -> Any:
        y = f(x)
        project_x = ProjectTo(x)

        def unary_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if isinstance(y_bar, NotImplementedTangent):
                return NoTangent(), y_bar
            if isinstance(y_bar, _ZERO_LIKE):
                return NoTangent(), project_x(ZeroTangent())
            xp = _namespace(x, y_bar)
            return NoTangent(), project_x(pullback(xp, x, y, y_bar))

        unary_pullback.__qualname__ = f"{name}_pullback"
        return y, unary_pullback

    def unary_frule(dargs: tuple, x: Any) -> Any:
        y = f(x)
        xp = _namespace(x)
        if not is_inexact(xp, x):
            return y, NoTangent()
        x_dot = unthunk(dargs[1])
        if isinstance(x_dot, NotImplementedTangent):
            return y, x_dot
        if isinstance(x_dot, _ZERO_LIKE):
            return y, ZeroTangent()
        return y, pushforward(xp, x, y, x_dot)

    unary_rrule.__qualname__ = f"{name}_rrule"
    unary_frule.__qualname__ = f"{name}_frule"
    rrule.register(f, object)(unary_rrule)
    frule.register(f, object)(unary_frule)


def _namespace(*values: Any) -> Any:
    return array_namespace(*(v for v in values if not isinstance(v, Tangent)))
