"""Conjugate, real and imaginary parts of any tangent: natural ones (Python numbers,
arrays of any namespace) directly, the tangent types through their own methods."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._xp import array_namespace, is_foreign_array
from .abstract import AbstractTangent, _any

__all__ = ["conj_array"]


def _conj(x: Any) -> Any:
    if isinstance(x, AbstractTangent):
        return _any(x).conj()
    if isinstance(x, (float, int)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return np.conj(x)
    if is_foreign_array(x):
        return conj_array(x)
    return x.conjugate()


def conj_array(x: Any) -> Any:
    """The complex conjugate of an array of any namespace (the array itself when real)."""
    xp = array_namespace(x)
    return xp.conj(x) if xp.isdtype(x.dtype, "complex floating") else x


def _real(x: Any) -> Any:
    if isinstance(x, AbstractTangent):
        return _any(x).real
    if isinstance(x, (np.ndarray, np.generic)):
        return np.real(x)
    if is_foreign_array(x):
        xp = array_namespace(x)
        return xp.real(x) if xp.isdtype(x.dtype, "complex floating") else x
    return x.real


def _imag(x: Any) -> Any:
    if isinstance(x, AbstractTangent):
        return _any(x).imag
    if isinstance(x, (np.ndarray, np.generic)):
        return np.imag(x)
    if is_foreign_array(x):
        xp = array_namespace(x)
        return xp.imag(x) if xp.isdtype(x.dtype, "complex floating") else xp.zeros_like(x)
    return x.imag
