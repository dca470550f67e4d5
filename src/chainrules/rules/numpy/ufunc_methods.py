"""Rules for the ``reduce`` and ``accumulate`` methods of ``np.add``, ``np.multiply``,
``np.maximum`` and ``np.minimum`` (the elementwise ufuncs themselves are in ``ufuncs.py``).

Conventions: ``initial``, ``axis`` and ``dtype`` are never differentiated (positional
ones get ``NoTangent()``); ``out=`` and ``where=`` are refused with `OutArgumentError`;
``multiply.reduce`` and ``multiply.accumulate`` are exact with zeros in the input
(exclusive products and a scan, never ``y / x``); ``maximum``/``minimum`` split the
cotangent equally among all the tied maximisers (an ``initial`` value counts as one of
them and absorbs its share).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from chainrules.core import NoTangent, OutArgumentError, Tangent
from chainrules.rules import _kit as kit

_REDUCE_PARAMS = ("axis", "dtype", "out", "keepdims", "initial", "where")
_ACCUMULATE_PARAMS = ("axis", "dtype", "out")


def _bind(f: Any, names: tuple, args: tuple, kwargs: dict) -> dict:
    """The keyword view of a reduce/accumulate call; refuses ``out=`` and ``where=``."""
    if len(args) > len(names):
        raise TypeError(
            f"{kit.qualified_name(f)} takes at most {len(names) + 1} positional arguments"
        )
    params = dict(zip(names, args))
    params.update(kwargs)
    if params.get("out") is not None:
        raise OutArgumentError(f)
    if params.get("where", True) is not True:
        raise OutArgumentError(f, "where")
    return params


def _reduce_axes(params: dict, ndim: int) -> tuple:
    axis = params.get("axis", 0)
    if axis is None:
        return tuple(range(ndim))
    return normalize_axis_tuple(axis, ndim)


def _expand(v: Any, axes: tuple, keepdims: bool) -> Any:
    """A reduced array with the reduced axes back as size-1 dimensions."""
    v = np.asarray(v)
    return v if keepdims else np.expand_dims(v, axes)


def _to_back(x: np.ndarray, axes: tuple) -> np.ndarray:
    """``x`` with the ``axes`` moved to the end and flattened into one."""
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    rest = moved.shape[: x.ndim - len(axes)]
    return moved.reshape(*rest, -1)


def _from_back(v: np.ndarray, axes: tuple, shape: tuple) -> np.ndarray:
    """Undo `_to_back`."""
    ndim = len(shape)
    back = tuple(range(ndim - len(axes), ndim))
    rest = [n for i, n in enumerate(shape) if i not in axes]
    moved_shape = (*rest, *(shape[i] for i in axes))
    return np.moveaxis(v.reshape(moved_shape), back, axes)


def _method_rules(method: Any, names: tuple, pushforward: Callable[..., Any],
                  pullback: Callable[..., Any], name: str) -> None:
    """Rules of a ufunc method, linear in ``x``: ``pushforward(x, y, x_dot, params)`` and
    its adjoint ``pullback(x, y, y_bar, params)`` (``x`` as an array)."""

    def method_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        params = _bind(method, names, args, kwargs)
        y = method(x, *args, **kwargs)
        project_x = kit.array_projector(x)
        rest = (NoTangent(),) * len(args)
        zeros = (NoTangent(), kit.zero_for(x), *rest)

        @kit.zero_guard(zeros)
        def method_pullback(y_bar: Any) -> tuple:
            if not kit.is_differentiable(x) or not kit.is_differentiable(y):
                return zeros
            return NoTangent(), project_x(pullback(np.asarray(x), y, y_bar, params)), *rest

        return y, method_pullback

    def method_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        params = _bind(method, names, args, kwargs)
        y = method(x, *args, **kwargs)
        if not kit.is_differentiable(y):
            return y, NoTangent()
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None or not kit.is_differentiable(x):
            return y, kit.zero_for(y)
        x_dot = kit.dense_tangent(x_dot, x) if isinstance(x_dot, Tangent) else x_dot
        return y, kit.fit_output(pushforward(np.asarray(x), y, x_dot, params), y)

    kit.define_rules(method, object, ..., frule_fn=method_frule, rrule_fn=method_rrule, name=name)


def _register_reduce(ufunc: np.ufunc, weights: Callable[..., Any]) -> None:
    """Rules for ``ufunc.reduce`` from ``weights(x, y_kept, axes, params)``: the array of
    partial derivatives of each output element with respect to each input element
    (``y_kept``: the output with the reduced axes kept; None: all ones)."""

    def parts(x: np.ndarray, y: Any, params: dict) -> tuple:
        axes = _reduce_axes(params, x.ndim)
        keep = bool(params.get("keepdims", False))
        return axes, keep, weights(x, _expand(y, axes, keep), axes, params)

    def reduce_pushforward(x: np.ndarray, y: Any, x_dot: Any, params: dict) -> Any:
        axes, keep, w = parts(x, y, params)
        terms = x_dot if w is None else w * x_dot
        return np.reshape(np.sum(terms, axis=axes, keepdims=keep), np.shape(y))

    def reduce_pullback(x: np.ndarray, y: Any, y_bar: Any, params: dict) -> Any:
        axes, keep, w = parts(x, y, params)
        y_bar_kept = _expand(y_bar, axes, keep)
        if w is None:
            return np.broadcast_to(y_bar_kept, x.shape).copy()
        return kit.conj(w) * y_bar_kept

    _method_rules(ufunc.reduce, _REDUCE_PARAMS, reduce_pushforward, reduce_pullback,
                  f"{ufunc.__name__}_reduce")


def _add_reduce_weights(x: np.ndarray, y: Any, axes: tuple, params: dict) -> None:
    return None  # all ones


def _exclusive_products(x: np.ndarray, axes: tuple) -> np.ndarray:
    """For each element, the product of the others along ``axes``: exact with zeros."""
    if x.size == 0:
        return np.ones_like(x)
    xb = _to_back(x, axes)
    ones = np.ones((*xb.shape[:-1], 1), dtype=xb.dtype)
    left = np.cumprod(np.concatenate([ones, xb[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, xb[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return _from_back(left * right, axes, x.shape)


def _multiply_reduce_weights(x: np.ndarray, y: Any, axes: tuple, params: dict) -> Any:
    w = _exclusive_products(x, axes)
    initial = params.get("initial", np._NoValue)
    if initial is not np._NoValue:
        w = w * initial
    return w


def _selection_weights(x: np.ndarray, y: Any, axes: tuple, params: dict) -> Any:
    """Equal shares for the elements equal to the extremum (NaN matches a NaN output)."""
    y = np.asarray(y)
    hit = _matches(x, y)
    count = np.sum(hit, axis=axes, keepdims=True)
    initial = params.get("initial", np._NoValue)
    if initial is not np._NoValue:
        count = count + _matches(np.asarray(initial), y)
    return hit / np.maximum(count, 1)


def _matches(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    eq = a == b
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        eq = eq | (np.isnan(a) & np.isnan(b))
    return eq


_register_reduce(np.add, _add_reduce_weights)
_register_reduce(np.multiply, _multiply_reduce_weights)
_register_reduce(np.maximum, _selection_weights)
_register_reduce(np.minimum, _selection_weights)


def _scan_forward(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``t[k] = a[k] + b[k] * t[k-1]`` along the last axis (``t[0] = a[0]``)."""
    shape: tuple[int, ...] = np.broadcast_shapes(a.shape, b.shape)
    dtype = np.result_type(a, b)
    if shape[-1] == 0:
        return np.empty(shape, dtype=dtype)
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    # the columns stacked at the end, not written into an array: run on values of an
    # outer trace (a second derivative) this stays differentiable
    cols = [a[..., 0]]
    for k in range(1, shape[-1]):
        cols.append(a[..., k] + b[..., k] * cols[-1])
    return np.stack(cols, axis=-1).astype(dtype, copy=False)


def _scan_backward(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``s[k] = a[k] + b[k+1] * s[k+1]`` along the last axis (``s[-1] = a[-1]``)."""
    return _scan_forward(a[..., ::-1], np.concatenate(
        [np.zeros_like(b[..., :1]), b[..., :0:-1]], axis=-1))[..., ::-1]


def _accumulate_axis(params: dict, ndim: int) -> int:
    return normalize_axis_tuple(params.get("axis", 0), max(ndim, 1))[0]


def _register_accumulate(ufunc: np.ufunc, pullback: Callable[..., Any],
                         pushforward: Callable[..., Any]) -> None:
    """Rules for ``ufunc.accumulate``; ``pullback(x, y, y_bar)`` and
    ``pushforward(x, y, x_dot)`` work along the last axis."""

    def along_axis(fn: Callable[..., Any]) -> Callable[..., Any]:
        def moved(x: np.ndarray, y: Any, t: Any, params: dict) -> Any:
            axis = _accumulate_axis(params, x.ndim)
            with np.errstate(all="ignore"):
                return np.moveaxis(fn(
                    np.moveaxis(x, axis, -1), np.moveaxis(np.asarray(y), axis, -1),
                    np.moveaxis(np.broadcast_to(t, x.shape), axis, -1)), -1, axis)

        return moved

    _method_rules(ufunc.accumulate, _ACCUMULATE_PARAMS, along_axis(pushforward),
                  along_axis(pullback), f"{ufunc.__name__}_accumulate")


def _add_accumulate_pullback(x: np.ndarray, y: np.ndarray, y_bar: np.ndarray) -> np.ndarray:
    return np.cumsum(y_bar[..., ::-1], axis=-1)[..., ::-1]


def _add_accumulate_pushforward(x: np.ndarray, y: np.ndarray, x_dot: np.ndarray) -> Any:
    return np.cumsum(x_dot, axis=-1)


def _shifted_products(y: np.ndarray) -> np.ndarray:
    """``y[k-1]`` (1 for ``k = 0``): the product of the elements before ``k``."""
    return np.concatenate([np.ones_like(y[..., :1]), y[..., :-1]], axis=-1)


def _safe_to_divide(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.all(x != 0) and np.all(np.isfinite(y)) and np.all(y != 0))


def _multiply_accumulate_pullback(x: np.ndarray, y: np.ndarray, y_bar: np.ndarray) -> Any:
    # x_bar[i] = sum_{k>=i} conj(dy[k]/dx[i]) y_bar[k], dy[k]/dx[i] = y[i-1] * x[i+1..k]
    if _safe_to_divide(x, y):
        return np.cumsum((np.conj(y) * y_bar)[..., ::-1], axis=-1)[..., ::-1] / np.conj(x)
    s = _scan_backward(np.asarray(y_bar, dtype=np.result_type(y_bar, x)), np.conj(x))
    return np.conj(_shifted_products(y)) * s


def _multiply_accumulate_pushforward(x: np.ndarray, y: np.ndarray, x_dot: np.ndarray) -> Any:
    # y_dot[k] = y_dot[k-1] * x[k] + y[k-1] * x_dot[k]
    if _safe_to_divide(x, y):
        return y * np.cumsum(x_dot / x, axis=-1)
    return _scan_forward(_shifted_products(y) * x_dot, x)


def _run_structure(x: np.ndarray, y: np.ndarray) -> tuple:
    """For a running extremum: ``hit[k]`` (x[k] attains y[k]), ``same[k]`` (y[k] ==
    y[k-1]: still the same run) and ``count[k]`` (the tied maximisers behind y[k])."""
    hit = _matches(x, y)
    same = np.concatenate([np.zeros_like(hit[..., :1]), _matches(y[..., 1:], y[..., :-1])],
                          axis=-1)
    count = _scan_forward(hit.astype(np.int64), same.astype(np.int64))
    return hit, same, count


def _extremum_accumulate_pullback(x: np.ndarray, y: np.ndarray, y_bar: np.ndarray) -> Any:
    hit, same, count = _run_structure(x, y)
    shares = _scan_backward(y_bar / np.maximum(count, 1), same)
    return np.where(hit, shares, 0)


def _extremum_accumulate_pushforward(x: np.ndarray, y: np.ndarray, x_dot: np.ndarray) -> Any:
    hit, same, count = _run_structure(x, y)
    return _scan_forward(np.where(hit, x_dot, 0), same) / np.maximum(count, 1)


_register_accumulate(np.add, _add_accumulate_pullback, _add_accumulate_pushforward)
_register_accumulate(np.multiply, _multiply_accumulate_pullback,
                     _multiply_accumulate_pushforward)
_register_accumulate(np.maximum, _extremum_accumulate_pullback,
                     _extremum_accumulate_pushforward)
_register_accumulate(np.minimum, _extremum_accumulate_pullback,
                     _extremum_accumulate_pushforward)
