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
