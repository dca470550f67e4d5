"""Rules for NumPy's constructors from values: ``linspace`` (w.r.t. ``start`` and
``stop``, ``retstep=``), ``logspace`` (w.r.t. ``start``, ``stop``, ``base``),
``geomspace``, ``arange`` (w.r.t. ``start`` and ``step``; ``stop`` only sets the
length), ``full`` and ``full_like`` (w.r.t. the fill value). Constant constructors
(``zeros``, ``ones_like``, ``eye``...) are declared non-differentiable in
``reductions.py``.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from chainrules.core import NoTangent, Tangent, ZeroTangent, frule, rrule, unthunk
from chainrules.rules import _kit as kit

from . import _reduce_kernel as kernel

# ------------------------------------------------------------------------------ linspace

_LINSPACE_SIG = inspect.signature(np.linspace)


def _linspace_weights(p: dict) -> tuple[np.ndarray, float]:
    """Per-sample weights of ``stop`` (those of ``start`` are 1 minus them) and 1/div."""
    num = int(p["num"])
    div = (num - 1) if p["endpoint"] else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    return t, (1.0 / div if div > 0 else math.nan)


def _linspace_along(v: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """Place the 1-d sample weights ``v`` along ``axis`` of an ``ndim`` output."""
    shape = [1] * ndim
    shape[axis] = len(v)
    return v.reshape(shape)


@rrule.register(np.linspace)
def linspace_rrule(start, stop, *args, **kwargs):
    p = kernel.bind(_LINSPACE_SIG, (start, stop, *args), kwargs)
    y = np.linspace(start, stop, *args, **kwargs)
    retstep = bool(p["retstep"])
    samples = y[0] if retstep else y
    ndim = samples.ndim
    axis = int(p["axis"]) % ndim
    t, inv_div = _linspace_weights(p)
    project_start, project_stop = kit.array_projector(start), kit.array_projector(stop)
    nargs = len(args)
    no_tangent = kernel.no_tangent_output(samples)

    def linspace_pullback(y_bar):
        y_bar = unthunk(y_bar)
        step_bar = None
        if retstep and not isinstance(y_bar, (ZeroTangent, NoTangent)):
            parts = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
            y_bar, step_bar = parts[0], kit.nonzero_array(parts[1])
        y_bar = kit.nonzero_array(y_bar)
        if no_tangent or (y_bar is None and step_bar is None):
            return (NoTangent(), project_start(ZeroTangent()), project_stop(ZeroTangent()),
                    *kernel.rest_bars(args))
        tw = _linspace_along(t, ndim, axis)
        start_bar = 0 if y_bar is None else np.sum(y_bar * (1 - tw), axis=axis)
        stop_bar = 0 if y_bar is None else np.sum(y_bar * tw, axis=axis)
        if step_bar is not None:
            start_bar = start_bar - step_bar * inv_div
            stop_bar = stop_bar + step_bar * inv_div
        return (NoTangent(), project_start(kernel.sum_to(np.asarray(start_bar), np.shape(start))),
                project_stop(kernel.sum_to(np.asarray(stop_bar), np.shape(stop))),
                *(NoTangent(),) * nargs)

    return y, linspace_pullback


@frule.register(np.linspace)
def linspace_frule(dargs, start, stop, *args, **kwargs):
    p = kernel.bind(_LINSPACE_SIG, (start, stop, *args), kwargs)
    y = np.linspace(start, stop, *args, **kwargs)
    retstep = bool(p["retstep"])
    samples = y[0] if retstep else y
    start_dot = kit.dense_tangent(dargs[1], start, zeros=False)
    stop_dot = kit.dense_tangent(dargs[2], stop, zeros=False)
    if (start_dot is None and stop_dot is None) or kernel.no_tangent_output(samples):
        return y, ZeroTangent()
    start_dot = 0 if start_dot is None else start_dot
    stop_dot = 0 if stop_dot is None else stop_dot
    t, inv_div = _linspace_weights(p)
    ndim = samples.ndim
    axis = int(p["axis"]) % ndim
    tw = _linspace_along(t, ndim, axis)
    bshape = samples.shape[:axis] + samples.shape[axis + 1:]
    s0 = np.expand_dims(np.broadcast_to(start_dot, bshape), axis)
    s1 = np.expand_dims(np.broadcast_to(stop_dot, bshape), axis)
    y_dot = kit.fit_output(s0 * (1 - tw) + s1 * tw, samples)
    if not retstep:
        return y, y_dot
    return y, Tangent[tuple](
        y_dot, kit.fit_output((np.asarray(stop_dot) - start_dot) * inv_div, y[1])
    )


# -------------------------------------------------------------------------------- arange


def _is_integer(v: Any) -> bool:
    return isinstance(v, (int, np.integer, bool, np.bool_))


@rrule.register(np.arange)
def arange_rrule(*args, **kwargs):
    y = np.arange(*args, **kwargs)
    nargs = len(args)
    # arange(stop) / arange(start, stop) / arange(start, stop, step): y_k = start + k*step;
    # stop (and an int anywhere) only sets the length, a zero derivative almost everywhere.
    roles = ["stop"] if nargs == 1 else ["start", "stop", "step"][:nargs]
    projectors = [kit.array_projector(v) for v in args]
    no_tangent = kernel.no_tangent_output(y)

    def arange_pullback(y_bar):
        y_bar = kit.nonzero_array(y_bar)
        bars = []
        for role, v, project in zip(roles, args, projectors):
            if _is_integer(v) or (not np.isscalar(v) and np.asarray(v).dtype.kind in "iub"):
                bars.append(NoTangent())
            elif y_bar is None or no_tangent or role == "stop":
                bars.append(project(ZeroTangent()))
            elif role == "start":
                bars.append(project(np.sum(y_bar)))
            else:
                bars.append(project(np.sum(y_bar * np.arange(y_bar.size))))
        return (NoTangent(), *bars)

    return y, arange_pullback


@frule.register(np.arange)
def arange_frule(dargs, *args, **kwargs):
    y = np.arange(*args, **kwargs)
    if len(args) < 2 or kernel.no_tangent_output(y):
        return y, ZeroTangent()
    start_dot = kit.dense_tangent(dargs[1], args[0], zeros=False)
    step_dot = kit.dense_tangent(dargs[3], args[2], zeros=False) if len(args) > 2 else None
    if start_dot is None and step_dot is None:
        return y, ZeroTangent()
    y_dot = np.zeros(y.shape, dtype=y.dtype)
    if start_dot is not None:
        y_dot = y_dot + start_dot
    if step_dot is not None:
        y_dot = y_dot + step_dot * np.arange(y.size)
    return y, kit.fit_output(y_dot, y)


# -------------------------------------------------------------------- logspace, geomspace


def _along(v: Any, y: np.ndarray, axis: int) -> np.ndarray:
    """A start/stop/base argument broadcast against the output, with the sample axis."""
    bshape = y.shape[:axis] + y.shape[axis + 1:]
    return np.expand_dims(np.broadcast_to(v, bshape), axis)


def _logspace_partials(p: dict, y: np.ndarray, axis: int) -> dict:
    """d y / d start, stop, base (full output shape) of y = base ** linspace(start, stop)."""
    t = _linspace_along(_linspace_weights(p)[0], y.ndim, axis)
    base = _along(p["base"], y, axis)
    exponent = _along(p["start"], y, axis) * (1 - t) + _along(p["stop"], y, axis) * t
    dy_de = y * np.log(base)
    return {"start": dy_de * (1 - t), "stop": dy_de * t, "base": exponent * y / base}


def _geomspace_partials(p: dict, y: np.ndarray, axis: int) -> dict:
    """d y / d start, stop of y_k = start^(1 - t_k) stop^t_k."""
    t = _linspace_along(_linspace_weights(p)[0], y.ndim, axis)
    start, stop = _along(p["start"], y, axis), _along(p["stop"], y, axis)
    return {"start": (1 - t) * y / start, "stop": t * y / stop}


def _spaced_rules(f: Any, name: str, partials: Any, names: list) -> None:
    """Rules for logspace/geomspace given their partial derivatives (holomorphic)."""
    sig = inspect.signature(f)

    def setup(args: tuple, kwargs: dict) -> tuple:
        p = kernel.bind(sig, args, kwargs)
        y = f(*args, **kwargs)
        axis = int(p["axis"]) % max(np.ndim(y), 1)
        return p, y, axis

    def spaced_rrule(*args, **kwargs):
        p, y, axis = setup(args, kwargs)
        positional = names[: len(args)]
        no_tangent = kernel.no_tangent_output(y)
        projectors = {k: kit.array_projector(p[k]) for k in positional
                      if k in ("start", "stop", "base")}

        def spaced_pullback(y_bar):
            y_bar = kit.nonzero_array(y_bar)
            ds = None if (y_bar is None or no_tangent) else partials(p, y, axis)
            bars = []
            for k in positional:
                if k not in projectors:
                    bars.append(NoTangent())
                elif ds is None:
                    bars.append(projectors[k](ZeroTangent()))
                else:
                    g = np.sum(np.conj(ds[k]) * y_bar, axis=axis)
                    bars.append(projectors[k](kernel.sum_to(g, np.shape(p[k]))))
            return (NoTangent(), *bars)

        return y, spaced_pullback

    def spaced_frule(dargs, *args, **kwargs):
        p, y, axis = setup(args, kwargs)
        if kernel.no_tangent_output(y):
            return y, ZeroTangent()
        bshape = y.shape[:axis] + y.shape[axis + 1:]
        ds = None
        y_dot: Any = None
        for k, t in zip(names, dargs[1:]):
            if k not in ("start", "stop", "base"):
                continue
            t = kit.dense_tangent(t, p[k], zeros=False)
            if t is None:
                continue
            ds = partials(p, y, axis) if ds is None else ds
            term = ds[k] * np.expand_dims(np.broadcast_to(t, bshape), axis)
            y_dot = term if y_dot is None else y_dot + term
        if y_dot is None:
            return y, ZeroTangent()
        return y, kit.fit_output(y_dot, y)

    kit.define_rules(f, frule_fn=spaced_frule, rrule_fn=spaced_rrule, name=name)


_spaced_rules(np.logspace, "logspace", _logspace_partials,
              ["start", "stop", "num", "endpoint", "base", "dtype", "axis"])
_spaced_rules(np.geomspace, "geomspace", _geomspace_partials,
              ["start", "stop", "num", "endpoint", "dtype", "axis"])


# ------------------------------------------------------------------------ full, full_like


def _fill_rules(f: Any, name: str) -> None:
    """full(shape, fill_value, ...) / full_like(a, fill_value, ...): linear in the fill
    value (broadcast to the output); the shape and ``a`` get NoTangent()."""

    def fill_rrule(first, fill_value, *args, **kwargs):
        y = f(first, fill_value, *args, **kwargs)
        project_fill = kit.array_projector(fill_value)
        no_tangent = kernel.no_tangent_output(y)
        fill_shape = np.shape(fill_value)

        def fill_pullback(y_bar):
            y_bar = kit.nonzero_array(y_bar)
            if y_bar is None or no_tangent:
                fill_bar = project_fill(ZeroTangent())
            else:
                fill_bar = project_fill(kernel.sum_to(y_bar, fill_shape))
            return (NoTangent(), NoTangent(), fill_bar, *kernel.rest_bars(args))

        return y, fill_pullback

    def fill_frule(dargs, first, fill_value, *args, **kwargs):
        y = f(first, fill_value, *args, **kwargs)
        fill_dot = kit.dense_tangent(dargs[2], fill_value, zeros=False)
        if fill_dot is None or kernel.no_tangent_output(y):
            return y, ZeroTangent()
        return y, kit.fit_output(np.broadcast_to(fill_dot, y.shape), y)

    kit.define_rules(f, frule_fn=fill_frule, rrule_fn=fill_rrule, name=name)


_fill_rules(np.full, "full")
_fill_rules(np.full_like, "full_like")

