"""Helpers shared by the NumPy rule modules (not a rule module: the loader skips ``_`` names)."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import NoTangent, ProjectTo, Tangent, ZeroTangent, unthunk


def _cotangent(y_bar: Any) -> Any:
    """The cotangent as an array, or None for a zero cotangent."""
    y_bar = unthunk(y_bar)
    if isinstance(y_bar, (ZeroTangent, NoTangent)):
        return None
    return np.asarray(y_bar)


def _dense(t: Any, like: Any) -> Any:
    """An input tangent as an array of ``like``'s shape, or None for a zero tangent
    (a list's or tuple's ``Tangent`` becomes an array too)."""
    t = unthunk(t)
    if isinstance(t, (ZeroTangent, NoTangent)):
        return None
    if isinstance(t, Tangent):
        return _dense_items(t.backing, like)
    return np.asarray(t)


def _dense_items(items: Any, like: Any) -> np.ndarray:
    out = []
    for t, x in zip(items, like):
        t = unthunk(t)
        if isinstance(t, Tangent):
            out.append(_dense_items(t.backing, x))
        elif isinstance(t, (ZeroTangent, NoTangent)):
            out.append(np.zeros(np.shape(x)))
        else:
            out.append(t)
    return np.asarray(out)


def _projector(x: Any) -> Any:
    """ProjectTo(x), accepting an array cotangent for a list or tuple ``x`` too."""
    project = ProjectTo(x)
    if isinstance(x, (list, tuple)):

        def project_sequence(dx: Any) -> Any:
            return project(np.asarray(dx).tolist())

        return project_sequence
    return project


def _like(y_dot: Any, y: Any) -> Any:
    """The pushforward in the type and dtype of the output ``y``.

    Written with array operations only (never ``y.dtype.type(t)`` or ``float(t)`` of an
    array), so that a pushforward whose tangent is itself being differentiated (forward
    over forward, a Hessian) stays a value the AD can follow.
    """
    if isinstance(y, np.ndarray):
        y_dot = np.asarray(y_dot)
        if y.dtype.kind in "fc" and y_dot.dtype != y.dtype:
            if y.dtype.kind == "f" and y_dot.dtype.kind == "c":
                y_dot = np.real(y_dot)
            y_dot = y_dot.astype(y.dtype)
        if y_dot.shape != y.shape:
            y_dot = np.broadcast_to(y_dot, y.shape).copy()
        return y_dot
    if isinstance(y, np.generic) and y.dtype.kind in "fc":
        return _scalar_like(y_dot, y)
    if isinstance(y, float):
        return float(np.real(np.asarray(y_dot).reshape(())[()]))
    if isinstance(y, complex):
        return complex(np.asarray(y_dot).reshape(())[()])
    return y_dot


def _scalar_like(y_dot: Any, y: np.generic) -> Any:
    """``y_dot`` as a NumPy scalar of ``y``'s dtype (complex kept for a real ``y`` only
    where the caller wants it: a real ``y`` drops the imaginary part)."""
    v = np.asarray(y_dot)
    if v.ndim:
        v = v.reshape(())
    if y.dtype.kind == "f" and v.dtype.kind == "c":
        v = np.real(v)
    if v.dtype != y.dtype:
        v = v.astype(y.dtype)
    return v[()]
