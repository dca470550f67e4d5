"""Rules for NumPy's scans and differences: ``cumsum``, ``cumprod``, ``nancumsum``,
``nancumprod``, ``cumulative_sum``, ``cumulative_prod``, ``diff`` (``n``, ``axis``,
``prepend``/``append``), ``ediff1d``, ``trapezoid`` (w.r.t. ``y``, ``x`` and ``dx``)
and ``gradient`` (w.r.t. ``f`` and scalar spacings; coordinate arrays:
``not_implemented``).

Conventions: those of ``reductions.py`` for ``axis``, ``dtype``, ``out=``; ``cumprod``
never divides by ``x`` where it is zero (exact with one zero, several, or none);
``nan*`` scans give NaN elements a zero cotangent.

Examples:
    >>> import numpy as np
    >>> from chainrules import frule, NoTangent
    >>> frule((NoTangent(), np.ones(3)), np.cumsum, np.array([1.0, 2.0, 3.0]))
    (array([1., 3., 6.]), array([1., 2., 3.]))
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, Tangent, Thunk, ZeroTangent, frule, not_implemented, rrule
from chainrules.rules import _kit as kit

from . import _reduce_kernel as kernel

# ----------------------------------------------------------------------- cumsum, cumprod


def _scan_params(x: np.ndarray, axis: Any) -> tuple[np.ndarray, int]:
    """The array the scan runs over (flattened for axis=None) and its scan axis."""
    if axis is None:
        return x.reshape(-1), 0
    return x, int(axis) % max(x.ndim, 1)


def _reverse_cumsum(g: np.ndarray, ax: int) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(g, ax), axis=ax), ax)


def _first_zeros(xm: np.ndarray) -> tuple:
    """Along the last axis: the index ``z`` of each slice's first zero (n if none), the
    positions, the mask of those before ``z``, and ``x`` with 1 from ``z`` on."""
    n = xm.shape[-1]
    is_zero = xm == 0
    z = np.where(is_zero.any(-1), np.argmax(is_zero, axis=-1), n)[..., None]
    idx = np.arange(n)
    before = idx < z
    return z, idx, before, np.where(before, xm, 1)


def _cumprod_pullback_core(x: np.ndarray, y: np.ndarray, g: np.ndarray, ax: int) -> np.ndarray:
    """x_bar of y = cumprod(x) along ``ax`` for the cotangent ``g``; exact with zeros.

    Before a slice's first zero z, x_bar_i = sum_{k>=i} g_k conj(y_k / x_i); at z it is
    sum_{k>=z} g_k conj(prod_{j<=k, j!=z} x_j); after z it is 0."""
    xm, ym, gm = (np.moveaxis(v, ax, -1) for v in (x, y, g))
    if xm.shape[-1] == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, g))
    z, idx, before, safe = _first_zeros(xm)
    out = np.where(before, _reverse_cumsum(gm * np.conj(ym), -1) / np.conj(safe), 0)
    at = idx == z
    if at.any():
        if _traced(x, g):
            out = np.sum(gm[..., None, :] * np.conj(_cumprod_terms(xm)), axis=-1)
            return np.moveaxis(out, -1, ax)
        x1 = np.where(at, 1, xm)
        y1 = np.cumprod(x1, axis=-1)
        tail = np.sum(np.where(idx >= z, gm * np.conj(y1), 0), axis=-1, keepdims=True)
        out = np.where(at, tail, out)
    return np.moveaxis(out, -1, ax)


def _traced(*values: Any) -> bool:
    """Whether any value is an AD's traced value (this rule run for a higher derivative)."""
    return any(type(v) is not np.ndarray and not isinstance(v, (float, int, np.generic))
               for v in values)


def _cumprod_terms(xm: np.ndarray) -> np.ndarray:
    """``E[..., i, k] = prod_{j <= k, j != i} x_j`` for ``k >= i``, else 0 (last axis).

    The masked O(n) formulas with zeros are exact in value but not in derivative (a
    product past a zero is 0 whatever the other factors, its derivative w.r.t. the zero
    is not): run on traced values, the rules use these O(n^2) terms instead.
    """
    n = xm.shape[-1]
    eye = np.eye(n, dtype=bool)
    terms = np.cumprod(np.where(eye, 1, xm[..., None, :]), axis=-1)
    return np.where(np.triu(np.ones((n, n), dtype=bool)), terms, 0)


def _cumprod_pushforward_core(x: np.ndarray, y: np.ndarray, x_dot: np.ndarray,
                              ax: int) -> np.ndarray:
    xm, ym, dm = (np.moveaxis(v, ax, -1) for v in (x, y, x_dot))
    if xm.shape[-1] == 0:
        return np.zeros(y.shape, dtype=np.result_type(y, x_dot))
    z, idx, before, safe = _first_zeros(xm)
    out = ym * np.cumsum(np.where(before, dm / safe, 0), axis=-1)
    at = idx == z
    if at.any() and _traced(x, x_dot):
        out = np.sum(dm[..., :, None] * _cumprod_terms(xm), axis=-2)
        return np.moveaxis(out, -1, ax)
    if at.any():
        y1 = np.cumprod(np.where(at, 1, xm), axis=-1)
        dz = np.sum(np.where(at, dm, 0), axis=-1, keepdims=True)
        out = out + np.where(idx >= z, y1 * dz, 0)
    return np.moveaxis(out, -1, ax)


def _scan_rules(f: Any, name: str, is_prod: bool, cumulative: bool, nan: bool = False) -> None:
    """cumsum/cumprod (``cumulative=False``), cumulative_sum/cumulative_prod, or the
    nan* variants (NaNs count as 0 for sums and 1 for products; their cotangent is 0)."""
    sig = inspect.signature(f)

    def _prepare(a: Any, p: dict) -> tuple:
        x = np.asarray(a)
        if cumulative:
            include = bool(p["include_initial"])
            xs, ax = (x, int(p["axis"]) % x.ndim) if p["axis"] is not None else (
                x.reshape(-1) if x.ndim == 1 else x, 0)
        else:
            include = False
            xs, ax = _scan_params(x, p["axis"])
        missing = np.isnan(xs) if nan else None
        if nan:
            xs = np.where(missing, 1 if is_prod else 0, xs)
        return x, xs, ax, include, missing

    def scan_rrule(a, *args, **kwargs):
        p = kernel.bind(sig, (a, *args), kwargs)
        kernel.refuse(f, p)
        y = f(a, *args, **kwargs)
        x, xs, ax, include, missing = _prepare(a, p)
        ys = np.cumprod(xs, axis=ax) if is_prod else None
        project_a = kit.array_projector(a)
        nargs = len(args)

        def scan_pullback(y_bar):
            y_bar = kit.nonzero_array(y_bar)
            if y_bar is None:
                return kernel.zero_pullback_result(nargs)
            g = y_bar
            if include:
                g = np.take(g, np.arange(1, g.shape[ax]), axis=ax)
            if is_prod:
                a_bar = _cumprod_pullback_core(xs, ys, g, ax)
            else:
                a_bar = _reverse_cumsum(g, ax)
            if missing is not None:
                a_bar = np.where(missing, 0, a_bar)
            return (NoTangent(), project_a(a_bar.reshape(x.shape)), *kernel.rest_bars(args))

        return y, scan_pullback

    def scan_frule(dargs, a, *args, **kwargs):
        p = kernel.bind(sig, (a, *args), kwargs)
        kernel.refuse(f, p)
        y = f(a, *args, **kwargs)
        a_dot = kit.dense_tangent(dargs[1], a, zeros=False)
        if a_dot is None or kernel.no_tangent_output(y):
            return y, ZeroTangent()
        _, xs, ax, include, missing = _prepare(a, p)
        d = np.asarray(a_dot).reshape(xs.shape)
        if missing is not None:
            d = np.where(missing, 0, d)
        if is_prod:
            y_dot = _cumprod_pushforward_core(xs, np.cumprod(xs, axis=ax), d, ax)
        else:
            y_dot = np.cumsum(d, axis=ax)
        if include:
            shape = list(y_dot.shape)
            shape[ax] = 1  # (from the shape: y_dot is empty when x was)
            y_dot = np.concatenate([np.zeros(shape, dtype=y_dot.dtype), y_dot], axis=ax)
        return y, kit.fit_output(y_dot, y)

    kit.define_rules(f, frule_fn=scan_frule, rrule_fn=scan_rrule, name=name)


_scan_rules(np.cumsum, "cumsum", is_prod=False, cumulative=False)
_scan_rules(np.cumprod, "cumprod", is_prod=True, cumulative=False)
if hasattr(np, "cumulative_sum"):
    _scan_rules(np.cumulative_sum, "cumulative_sum", is_prod=False, cumulative=True)
    _scan_rules(np.cumulative_prod, "cumulative_prod", is_prod=True, cumulative=True)
_scan_rules(np.nancumsum, "nancumsum", is_prod=False, cumulative=False, nan=True)
_scan_rules(np.nancumprod, "nancumprod", is_prod=True, cumulative=False, nan=True)


# ---------------------------------------------------------------------------------- diff

_DIFF_SIG = inspect.signature(np.diff)


def _diff_parts(a: Any, p: dict) -> tuple:
    """(ax, pieces): the difference axis and the arrays joined along it, broadcast as
    NumPy does (prepend, a, append)."""
    x = np.asarray(a)
    ax = int(p["axis"]) % max(x.ndim, 1)
    pieces = []
    for key in ("prepend", "append"):
        v = p[key]
        if kernel.is_given(v):
            v = np.asarray(v)
            if v.ndim == 0:
                shape = list(x.shape)
                shape[ax] = 1
                v = np.broadcast_to(v, tuple(shape))
            pieces.append((key, v))
    return x, ax, pieces


def _diff_adjoint(g: np.ndarray, ax: int, n: int) -> np.ndarray:
    """The adjoint of ``np.diff(., n, axis=ax)``."""
    for _ in range(n):
        # (from the shape, not np.take(g, [0]): g is empty when the output was)
        shape = list(np.shape(g))
        shape[ax] = 1
        zero = np.zeros(shape, dtype=g.dtype)
        g = np.concatenate([zero, g], axis=ax) - np.concatenate([g, zero], axis=ax)
    return g


@rrule.register(np.diff)
def diff_rrule(a, *args, **kwargs):
    p = kernel.bind(_DIFF_SIG, (a, *args), kwargs)
    y = np.diff(a, *args, **kwargs)
    x, ax, pieces = _diff_parts(a, p)
    n = int(p["n"])
    sizes = {k: v.shape[ax] for k, v in pieces}
    positional = ["a", "n", "axis", "prepend", "append"][1: 1 + len(args)]
    projectors = {k: kit.array_projector(p[k]) for k in ("prepend", "append") if k in positional}
    project_a = kit.array_projector(a)
    nargs = len(args)

    def diff_pullback(y_bar):
        y_bar = kit.nonzero_array(y_bar)
        if y_bar is None:
            return kernel.zero_pullback_result(nargs)
        g = _diff_adjoint(y_bar, ax, n) if n else y_bar
        start = sizes.get("prepend", 0)
        stop = start + x.shape[ax]
        a_bar = project_a(np.take(g, np.arange(start, stop), axis=ax))
        rest = []
        for k in positional:
            if k == "prepend" and k in projectors:
                part = np.take(g, np.arange(0, start), axis=ax)
                rest.append(projectors[k](kernel.sum_to(part, np.shape(p[k]))))
            elif k == "append" and k in projectors:
                part = np.take(g, np.arange(stop, g.shape[ax]), axis=ax)
                rest.append(projectors[k](kernel.sum_to(part, np.shape(p[k]))))
            else:
                rest.append(NoTangent())
        return (NoTangent(), a_bar, *rest)

    return y, diff_pullback


@frule.register(np.diff)
def diff_frule(dargs, a, *args, **kwargs):
    p = kernel.bind(_DIFF_SIG, (a, *args), kwargs)
    y = np.diff(a, *args, **kwargs)
    x, ax, pieces = _diff_parts(a, p)
    positional = ["a", "n", "axis", "prepend", "append"][: 1 + len(args)]
    tangents = dict(zip(positional, dargs[1:]))
    a_dot = kit.dense_tangent(tangents["a"], a, zeros=False)
    parts = []
    any_tangent = a_dot is not None
    zero = np.zeros(x.shape, dtype=y.dtype)
    for key in ("prepend", None, "append"):
        if key is None:
            parts.append(zero if a_dot is None else np.broadcast_to(a_dot, x.shape))
            continue
        for k, v in pieces:
            if k != key:
                continue
            t = kit.dense_tangent(tangents[k], p[k], zeros=False) if k in tangents else None
            if t is None:
                parts.append(np.zeros(v.shape, dtype=y.dtype))
            else:
                any_tangent = True
                parts.append(np.broadcast_to(t, v.shape))
    if not any_tangent:
        return y, ZeroTangent()
    return y, kit.fit_output(np.diff(np.concatenate(parts, axis=ax), int(p["n"]), axis=ax), y)


# ------------------------------------------------------------------------------ ediff1d

_EDIFF1D_SIG = inspect.signature(np.ediff1d)


@rrule.register(np.ediff1d)
def ediff1d_rrule(ary, *args, **kwargs):
    p = kernel.bind(_EDIFF1D_SIG, (ary, *args), kwargs)
    y = np.ediff1d(ary, *args, **kwargs)
    x = np.asarray(ary)
    # positional order: ary, to_end, to_begin
    positional = ["to_end", "to_begin"][: len(args)]
    n_begin = 0 if p["to_begin"] is None else np.size(p["to_begin"])
    n_mid = max(x.size - 1, 0)
    projectors = {k: kit.array_projector(p[k]) for k in positional if p[k] is not None}
    project_a = kit.array_projector(ary)
    nargs = len(args)

    def ediff1d_pullback(y_bar):
        y_bar = kit.nonzero_array(y_bar)
        if y_bar is None:
            return kernel.zero_pullback_result(nargs)
        mid = y_bar[n_begin:n_begin + n_mid]
        a_bar = _diff_adjoint(mid, 0, 1) if x.size else np.zeros(0, dtype=y_bar.dtype)
        rest = []
        for k in positional:
            if k not in projectors:
                rest.append(NoTangent())
            elif k == "to_begin":
                rest.append(projectors[k](y_bar[:n_begin].reshape(np.shape(p[k]))))
            else:
                rest.append(projectors[k](y_bar[n_begin + n_mid:].reshape(np.shape(p[k]))))
        return (NoTangent(), project_a(a_bar.reshape(x.shape)), *rest)

    return y, ediff1d_pullback


@frule.register(np.ediff1d)
def ediff1d_frule(dargs, ary, *args, **kwargs):
    p = kernel.bind(_EDIFF1D_SIG, (ary, *args), kwargs)
    y = np.ediff1d(ary, *args, **kwargs)
    positional = ["to_end", "to_begin"][: len(args)]
    tangents = dict(zip(positional, dargs[2:]))
    a_dot = kit.dense_tangent(dargs[1], ary, zeros=False)
    parts = []
    any_tangent = a_dot is not None
    for key in ("to_begin", None, "to_end"):
        if key is None:
            mid = np.diff(np.ravel(a_dot)) if a_dot is not None else np.zeros(
                max(np.size(ary) - 1, 0))
            parts.append(mid)
        elif p[key] is not None:
            t = kit.dense_tangent(tangents[key], p[key], zeros=False) if key in tangents else None
            any_tangent = any_tangent or t is not None
            parts.append(np.zeros(np.size(p[key])) if t is None else np.ravel(t))
    if not any_tangent:
        return y, ZeroTangent()
    return y, kit.fit_output(np.concatenate(parts), y)


# ---------------------------------------------------------------------------- trapezoid

_TRAPEZOID_SIG = inspect.signature(np.trapezoid) if hasattr(np, "trapezoid") else None


def _trapezoid_parts(y: Any, x: Any, dx: Any, axis: int) -> tuple:
    """(values moved to the last axis, spacings broadcast to them (n - 1 entries))."""
    v = np.moveaxis(np.asarray(y), axis, -1)
    if x is None:
        d = np.full(v.shape[-1] - 1 if v.shape[-1] else 0, dx)
    else:
        xa = np.asarray(x)
        d = np.diff(xa) if xa.ndim == 1 else np.moveaxis(np.diff(xa, axis=axis), axis, -1)
    return v, d


if _TRAPEZOID_SIG is not None:

    @rrule.register(np.trapezoid)
    def trapezoid_rrule(y, *args, **kwargs):
        p = kernel.bind(_TRAPEZOID_SIG, (y, *args), kwargs)
        out = np.trapezoid(y, *args, **kwargs)
        axis = int(p["axis"])
        v, d = _trapezoid_parts(y, p["x"], p["dx"], axis)
        x = p["x"]
        names = ["x", "dx", "axis"][: len(args)]
        project_y = kit.array_projector(y)
        project_x = kit.array_projector(x) if "x" in names and x is not None else None
        project_dx = kit.array_projector(p["dx"]) if "dx" in names and x is None else None
        nargs = len(args)

        def trapezoid_pullback(out_bar):
            g = kit.nonzero_array(out_bar)
            if g is None:
                return kernel.zero_pullback_result(nargs)
            g = np.asarray(g)[..., None]  # the integrated (last) axis
            avg = (v[..., 1:] + v[..., :-1]) / 2

            def y_bar_thunk():
                dd = np.conj(np.broadcast_to(d, np.broadcast_shapes(
                    np.shape(d), (*v.shape[:-1], max(v.shape[-1] - 1, 0)))))
                pad = np.zeros((*dd.shape[:-1], 1))
                weights = (np.concatenate([dd, pad], -1) + np.concatenate([pad, dd], -1)) / 2
                return project_y(np.moveaxis(weights * g, -1, axis))

            bars: list = [NoTangent(), Thunk(y_bar_thunk), *(NoTangent(),) * nargs]
            if project_x is not None:

                def x_bar_thunk():
                    d_bar = np.conj(avg) * g
                    pad = np.zeros((*d_bar.shape[:-1], 1))
                    full = np.concatenate([pad, d_bar], -1) - np.concatenate([d_bar, pad], -1)
                    if np.ndim(x) == 1:
                        return project_x(np.sum(full.reshape(-1, full.shape[-1]), axis=0))
                    return project_x(kernel.sum_to(np.moveaxis(full, -1, axis), np.shape(x)))

                bars[2] = Thunk(x_bar_thunk)
            if project_dx is not None:
                bars[3] = Thunk(lambda: project_dx(np.sum(np.conj(
                    np.sum(avg, axis=-1)) * g[..., 0])))
            elif "dx" in names and _differentiable_scalar(p["dx"]):
                bars[3] = ZeroTangent()  # dx is unused when x is given
            return tuple(bars)

        return out, trapezoid_pullback

    @frule.register(np.trapezoid)
    def trapezoid_frule(dargs, y, *args, **kwargs):
        p = kernel.bind(_TRAPEZOID_SIG, (y, *args), kwargs)
        out = np.trapezoid(y, *args, **kwargs)
        axis = int(p["axis"])
        names = ["x", "dx", "axis"][: len(args)]
        tangents = dict(zip(names, dargs[2:]))
        y_dot = kit.dense_tangent(dargs[1], y, zeros=False)
        x_dot = (kit.dense_tangent(tangents["x"], p["x"], zeros=False)
                 if "x" in tangents and p["x"] is not None else None)
        dx_dot = (kit.dense_tangent(tangents["dx"], p["dx"], zeros=False)
                  if "dx" in tangents and p["x"] is None else None)
        if y_dot is None and x_dot is None and dx_dot is None:
            return out, ZeroTangent()
        total: Any = 0
        if y_dot is not None:
            total = total + np.trapezoid(y_dot, p["x"], p["dx"], axis)
        if x_dot is not None:
            # along the x tangent: sum((y_{k+1} + y_k) / 2 * diff(x_dot))
            total = total + _trapezoid_dx(y, x_dot, axis)
        if dx_dot is not None:
            total = total + np.trapezoid(y, None, 1.0, axis) * dx_dot
        return out, kit.fit_output(total, out)


def _differentiable_scalar(v: Any) -> bool:
    return isinstance(v, (float, complex, np.floating, np.complexfloating))


def _trapezoid_dx(y: Any, x_dot: Any, axis: int) -> Any:
    v, d_dot = _trapezoid_parts(y, x_dot, 1.0, axis)
    return np.sum((v[..., 1:] + v[..., :-1]) / 2 * d_dot, axis=-1)




# ---------------------------------------------------------------------------- gradient


def _gradient_axes(ndim: int, axis: Any) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) % ndim for a in axis)
    return (int(axis) % ndim,)


def _gradient_stencils(shape: tuple, varargs: tuple, axes: tuple, edge_order: int) -> list:
    """Per differentiated axis, ``P[k][i]``: the weight row ``i`` of NumPy's stencil
    gives the neighbour ``j`` with ``j % 3 == k`` (every row reads at most 3 neighbours
    with distinct residues), found by applying ``np.gradient`` to 3 probes."""
    # the stencils depend on the differentiated axes only: the others probed at length 1
    # (an empty one has no row to read them from)
    shape = tuple(s if d in axes else 1 for d, s in enumerate(shape))
    out = []
    for n_out, a in enumerate(axes):
        n = shape[a]
        idx = np.arange(n).reshape([n if d == a else 1 for d in range(len(shape))])
        rows = []
        for k in range(3):
            probe = np.broadcast_to((idx % 3 == k).astype(float), shape)
            res = np.gradient(probe, *varargs, axis=axes, edge_order=edge_order)
            res = res[n_out] if len(axes) > 1 else res
            rows.append(np.moveaxis(res, a, -1)[(0,) * (len(shape) - 1)])
        out.append(np.stack(rows))
    return out


def _gradient_adjoint(y_bar: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The transpose of one axis' stencil applied to ``y_bar`` (axis last).

    Built from products with constant weights and concatenations, never by writing
    into an array: run on traced values (a Hessian) it stays differentiable.
    """
    n = y_bar.shape[-1]
    dtype = np.result_type(y_bar, p)
    # (the stencil weights are traced too when the spacing is differentiated)
    first = [p[j % 3, 0] for j in range(0, min(3, n))]
    last = [p[j % 3, n - 1] for j in range(max(n - 3, 0), n)]
    w_first = np.concatenate([np.stack(first), np.zeros(n - len(first), p.dtype)])
    w_last = np.concatenate([np.zeros(n - len(last), p.dtype), np.stack(last)])
    f_bar = y_bar[..., :1] * w_first + y_bar[..., -1:] * w_last
    if n >= 3:
        mid = np.arange(1, n - 1)
        inner = y_bar[..., 1:-1]
        batch = y_bar.shape[:-1]
        for shift in (-1, 0, 1):
            # row i (interior) reads neighbour i + shift with weight p[(i+shift) % 3, i]
            part = p[(mid + shift) % 3, mid] * inner
            f_bar = f_bar + np.concatenate([np.zeros((*batch, 1 + shift), dtype), part,
                                            np.zeros((*batch, 1 - shift), dtype)], axis=-1)
    return f_bar


def _gradient_spacing_bars(varargs: tuple, outs: list, bars: list, axes: tuple) -> list:
    """Cotangents of the spacings: a float ``h`` scales its axes' outputs by ``1/h``;
    ints get NoTangent; coordinate arrays are not implemented."""
    result = []
    for v_i, h in enumerate(varargs):
        if isinstance(h, (bool, np.bool_, int, np.integer)):
            result.append(NoTangent())
        elif np.ndim(h) > 0:
            result.append(not_implemented(
                "numpy.gradient: derivative w.r.t. coordinate arrays (spacing varargs)"))
        else:
            uses = range(len(axes)) if len(varargs) == 1 else (v_i,)
            total = sum(np.sum(np.real(np.conj(bars[u]) * outs[u])) for u in uses
                        if bars[u] is not None)
            result.append(core.ProjectTo(h)(-total / h))
    return result


@rrule.register(np.gradient)
def gradient_rrule(f, *varargs, axis=None, edge_order=1):
    y = np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    x = np.asarray(f)
    axes = _gradient_axes(x.ndim, axis)
    outs = list(y) if isinstance(y, (tuple, list)) else [y]
    project_f = kit.array_projector(f)
    stencils = None

    def gradient_pullback(y_bar):
        nonlocal stencils
        y_bar = core.unthunk(y_bar)
        if isinstance(y_bar, (ZeroTangent, NoTangent)):
            return (NoTangent(), ZeroTangent(), *(NoTangent(),) * len(varargs))
        parts = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
        bars = [kit.nonzero_array(b) for b in (parts if len(outs) > 1 else [parts])]
        if stencils is None:
            stencils = _gradient_stencils(x.shape, varargs, axes, edge_order)
        f_bar = 0
        for u, a in enumerate(axes):
            if bars[u] is not None:
                g = _gradient_adjoint(np.moveaxis(np.broadcast_to(bars[u], x.shape), a, -1),
                                      stencils[u])
                f_bar = f_bar + np.moveaxis(g, -1, a)
        f_bar = ZeroTangent() if np.ndim(f_bar) == 0 else project_f(f_bar)
        return (NoTangent(), f_bar, *_gradient_spacing_bars(varargs, outs, bars, axes))

    return y, gradient_pullback


@frule.register(np.gradient)
def gradient_frule(dargs, f, *varargs, axis=None, edge_order=1):
    y = np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    outs = list(y) if isinstance(y, (tuple, list)) else [y]
    axes = _gradient_axes(np.ndim(f), axis)
    f_dot = kit.dense_tangent(dargs[1], f, zeros=False)
    dots = [0] * len(outs)
    if f_dot is not None:
        g = np.gradient(f_dot, *varargs, axis=axis, edge_order=edge_order)
        dots = list(g) if isinstance(g, (tuple, list)) else [g]
    for v_i, h in enumerate(varargs):
        h_dot = core.unthunk(dargs[2 + v_i])
        if isinstance(h_dot, (ZeroTangent, NoTangent)) or isinstance(
                h, (bool, np.bool_, int, np.integer)):
            continue
        if np.ndim(h) > 0:
            return y, not_implemented(
                "numpy.gradient: derivative w.r.t. coordinate arrays (spacing varargs)")
        uses = range(len(axes)) if len(varargs) == 1 else (v_i,)
        for u in uses:
            dots[u] = dots[u] - outs[u] * (h_dot / h)
    if all(isinstance(d, int) for d in dots):
        return y, ZeroTangent()
    dots = [kit.fit_output(np.broadcast_to(d, np.shape(o)), o) for d, o in zip(dots, outs)]
    return y, (Tangent[type(y)](*dots) if len(outs) > 1 else dots[0])
