"""Rules for the structured-matrix constructors of ``scipy.linalg``: ``toeplitz``,
``circulant``, ``hankel`` and ``companion``.

``toeplitz``, ``circulant`` and ``hankel`` only place their inputs' entries (or zeros) in
the output, so the frule applies the function to the tangents and the pullback sums the
output cotangent back onto the entry each output element came from, found once by calling
the function on index arrays. ``toeplitz(c)`` of a complex ``c`` puts ``conj(c)`` in the
first row: that part of the cotangent is conjugated back. Stacked inputs (SciPy >= 1.17
treats leading dimensions as a batch) work the same way. ``companion(a)`` has first row
``-a[1:] / a[0]``.

>>> import numpy as np
>>> import scipy.linalg as sla
>>> from chainrules import rrule
>>> y, toeplitz_pullback = rrule(sla.toeplitz, np.array([1.0, 2.0]), np.array([9.0, 3.0]))
>>> toeplitz_pullback(np.ones((2, 2)))[1:]  # r[0] is not used: c[0] is the diagonal
(array([2., 1.]), array([0., 1.]))
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit


def _source_map(f: Any, arrays: list, conj_second: bool) -> tuple:
    """``f`` on 1-based index arrays: each output element's source (0: a constant zero)."""
    sizes = [np.size(x) for x in arrays]
    offsets = np.cumsum([1, *sizes])
    idx = [np.arange(o, o + n).reshape(np.shape(x)) for o, n, x in zip(offsets, sizes, arrays)]
    if conj_second:  # toeplitz(c) reads conj(c) as its first row
        idx.append(idx[0] + sizes[0])
        sizes.append(sizes[0])
        offsets = np.cumsum([1, *sizes])
    return np.asarray(f(*idx)), offsets, sizes


def _conj_row(f: Any, arrays: list) -> bool:
    return f is sla.toeplitz and len(arrays) == 1


def _gather_rules(f: Any) -> None:
    name = f.__name__

    def gather_frule(dargs: tuple, *arrays: Any) -> Any:
        y = f(*arrays)
        dots = [kit.nonzero(d) for d in dargs[1:]]
        if all(d is None for d in dots):
            return y, ZeroTangent()
        dots = [np.zeros(np.shape(x), dtype=y.dtype) if d is None else np.asarray(d)
                for d, x in zip(dots, arrays)]
        return y, ProjectTo(y)(f(*dots))

    def gather_rrule(*arrays: Any) -> Any:
        y = f(*arrays)
        projectors = [ProjectTo(x) for x in arrays]
        conj_second = _conj_row(f, list(arrays))

        @kit.zero_guard(lambda: (NoTangent(), *(ZeroTangent() for _ in arrays)))
        def gather_pullback(y_bar: Any) -> tuple:
            source, offsets, sizes = _source_map(f, list(arrays), conj_second)
            y_bar = np.broadcast_to(np.asarray(y_bar), source.shape)
            acc = np.zeros(offsets[-1], dtype=np.result_type(y_bar, *arrays))
            np.add.at(acc, source.ravel(), y_bar.ravel())
            parts = [acc[o:o + n] for o, n in zip(offsets, sizes)]
            if conj_second:
                parts = [parts[0] + np.conj(parts[1])]
            return NoTangent(), *(project(part.reshape(np.shape(x))) for project, part, x in
                                  zip(projectors, parts, arrays))

        gather_pullback.__qualname__ = f"{name}_pullback"
        return y, gather_pullback

    kit.define_rules(f, frule_fn=gather_frule, rrule_fn=gather_rrule)


for _f in (sla.toeplitz, sla.circulant, sla.hankel):
    _gather_rules(_f)


@frule.register(sla.companion)
def companion_frule(dargs, a):
    y = sla.companion(a)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return y, ZeroTangent()
    a, a_dot = np.asarray(a), np.asarray(a_dot)
    a0, a0_dot = a[..., :1], a_dot[..., :1]
    row = -a_dot[..., 1:] / a0 + a[..., 1:] * a0_dot / (a0 * a0)
    # the first row above zeros, stacked (not written into an array: run on values of an
    # outer trace, for a second derivative, this stays differentiable)
    below = np.zeros((*y.shape[:-2], y.shape[-2] - 1, y.shape[-1]), dtype=y.dtype)
    return y, np.concatenate([row[..., None, :], below], axis=-2).astype(y.dtype,
                                                                         copy=False)


@rrule.register(sla.companion)
def companion_rrule(a):
    y = sla.companion(a)
    project_a = ProjectTo(a)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def companion_pullback(y_bar):
        a_arr = np.asarray(a)
        g = np.asarray(y_bar)[..., 0, :]  # only the first row depends on a
        a0 = np.conj(a_arr[..., :1])
        first = np.sum(np.conj(a_arr[..., 1:]) * g, axis=-1, keepdims=True) / (a0 * a0)
        a_bar = np.concatenate([first, -g / a0], axis=-1)  # (stacked, not written)
        return NoTangent(), project_a(a_bar.astype(np.result_type(a_arr, g), copy=False))

    return y, companion_pullback
