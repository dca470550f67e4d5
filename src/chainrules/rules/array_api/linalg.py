"""Rules for the linear-algebra functions of the array API standard: the contractions.

``matmul``, ``tensordot``, ``vecdot``, ``matrix_transpose`` (main namespace and
``linalg``), and from the ``linalg`` extension ``outer``, ``trace``, ``diagonal``,
``cross``, ``vector_norm``, ``matrix_norm`` (every ``ord``) and ``matrix_power``; the
decompositions are in ``decompositions.py``. Written once against ``xp``. Complex
numbers follow DESIGN §2: the pullback of a bilinear map multiplies by the conjugate of
the other factor; ``vecdot`` conjugates its first argument, as the standard says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, array_namespace
from chainrules.rules import _kit as kit
from chainrules.rules.array_api import _adjoints as adjoints
from chainrules.rules.array_api._common import conj, is_complex, mH
from chainrules.rules.array_api.decompositions import finite_svd
from chainrules.rules.array_api.manipulation import linear_rules

__all__ = ["register"]


def bilinear_rules(f: Any, name: str, adjoint_fn: Callable[..., tuple], nargs: int = 2) -> None:
    """Rules for ``f(x1, x2, **kw)``, bilinear in ``(x1, x2)``: the pushforward is
    ``f(x1_dot, x2) + f(x1, x2_dot)``; ``adjoint_fn(xp, g, x1, x2, i, **kw)`` gives the
    cotangent of argument ``i`` before projection (each in a Thunk)."""

    def bilinear_rrule(x1: Any, x2: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x1, x2, *rest, **kw)
        projectors = (ProjectTo(x1), ProjectTo(x2))
        extra = (NoTangent(),) * len(rest)

        @kit.zero_guard(lambda: (NoTangent(), *(p(ZeroTangent()) for p in projectors), *extra))
        def bilinear_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(x1, x2)

            def cotangent(i: int) -> Callable[[], Any]:
                def bilinear_cotangent() -> Any:
                    return projectors[i](adjoint_fn(xp, y_bar, x1, x2, i, *rest, **kw))

                return bilinear_cotangent

            return NoTangent(), Thunk(cotangent(0)), Thunk(cotangent(1)), *extra

        return y, bilinear_pullback

    def bilinear_frule(dargs: tuple, x1: Any, x2: Any, *rest: Any, **kw: Any) -> Any:
        y = f(x1, x2, *rest, **kw)
        x1_dot, x2_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
        y_dot: Any = ZeroTangent()
        if x1_dot is not None:
            y_dot = f(x1_dot, x2, *rest, **kw)
        if x2_dot is not None:
            term = f(x1, x2_dot, *rest, **kw)
            y_dot = term if isinstance(y_dot, ZeroTangent) else y_dot + term
        return y, y_dot

    kit.define_rules(f, object, object, ..., frule_fn=bilinear_frule, rrule_fn=bilinear_rrule,
                     name=name)


# ---------------------------------------------------------------------------- matmul


def _matmul_adjoints(xp: Any, g: Any, x1: Any, x2: Any, i: int) -> Any:
    # 1-D operands act as a row (x1) or a column (x2): promote, then drop the added axis
    a = xp.expand_dims(x1, axis=0) if x1.ndim == 1 else x1
    b = xp.expand_dims(x2, axis=-1) if x2.ndim == 1 else x2
    if x1.ndim == 1:
        g = xp.expand_dims(g, axis=g.ndim if x2.ndim == 1 else g.ndim - 1)
    if x2.ndim == 1:
        g = xp.expand_dims(g, axis=g.ndim)
    if i == 0:
        bar = adjoints.sum_to(xp, xp.matmul(g, mH(xp, b)), tuple(a.shape))
        return xp.reshape(bar, tuple(x1.shape))
    bar = adjoints.sum_to(xp, xp.matmul(mH(xp, a), g), tuple(b.shape))
    return xp.reshape(bar, tuple(x2.shape))


def _tensordot_axes(x1: Any, x2: Any, axes: Any) -> tuple:
    if isinstance(axes, int):
        return list(range(x1.ndim - axes, x1.ndim)), list(range(axes))
    a1, a2 = axes
    return [a % x1.ndim for a in a1], [a % x2.ndim for a in a2]


def _inverse(perm: list) -> tuple:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def _tensordot_adjoints(xp: Any, g: Any, x1: Any, x2: Any, i: int, *rest: Any,
                        **kw: Any) -> Any:
    axes = rest[0] if rest else kw.get("axes", 2)
    a1, a2 = _tensordot_axes(x1, x2, axes)
    f1 = [d for d in range(x1.ndim) if d not in a1]
    f2 = [d for d in range(x2.ndim) if d not in a2]
    if i == 0:
        # dims of the result, named by x1's dims: f1, then x1's partners of sorted(a2)
        bar = xp.tensordot(g, conj(xp, x2), axes=(list(range(len(f1), len(f1) + len(f2))), f2))
        order = f1 + [a1[a2.index(d)] for d in sorted(a2)]
        return xp.permute_dims(bar, _inverse(order))
    bar = xp.tensordot(conj(xp, x1), g, axes=(f1, list(range(len(f1)))))
    order = [a2[a1.index(d)] for d in sorted(a1)] + f2
    return xp.permute_dims(bar, _inverse(order))


def _vecdot_adjoints(xp: Any, g: Any, x1: Any, x2: Any, i: int, *rest: Any,
                     **kw: Any) -> Any:
    # y = sum(conj(x1) * x2): x1_bar = x2 conj(g), x2_bar = x1 g
    axis = kw.get("axis", -1)
    g = xp.expand_dims(g, axis=axis)
    return x2 * conj(xp, g) if i == 0 else x1 * g


def _outer_adjoints(xp: Any, g: Any, x1: Any, x2: Any, i: int) -> Any:
    return xp.matmul(g, conj(xp, x2)) if i == 0 else xp.matmul(conj(xp, x1), g)


def _cross_adjoints(xp: Any, g: Any, x1: Any, x2: Any, i: int, **kw: Any) -> Any:
    # <g, a x b> = <b x g, a> = <g x a, b> (real); conjugates as for any bilinear map
    axis = kw.get("axis", -1)
    cross = array_namespace(g).linalg.cross
    if i == 0:
        return cross(conj(xp, x2), g, axis=axis)
    return cross(g, conj(xp, x1), axis=axis)


# ------------------------------------------------------------------ linear, one argument


def _trace_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    offset = kw.get("offset", 0)
    n, m = x.shape[-2], x.shape[-1]
    eye = xp.eye(n, m, k=offset, dtype=g.dtype)
    return xp.expand_dims(xp.expand_dims(g, axis=-1), axis=-1) * eye


def _diagonal_adjoint(xp: Any, g: Any, x: Any, *args: Any, **kw: Any) -> Any:
    # the k-th diagonal entry sits at row k (offset >= 0) or column k (offset < 0)
    offset = kw.get("offset", 0)
    n, m = x.shape[-2], x.shape[-1]
    eye = xp.eye(n, m, k=offset, dtype=g.dtype)
    full = n if offset >= 0 else m
    pad = full - g.shape[-1]
    if pad:
        g = xp.concat([g, xp.zeros((*g.shape[:-1], pad), dtype=g.dtype)], axis=-1)
    return eye * (xp.expand_dims(g, axis=-1) if offset >= 0 else xp.expand_dims(g, axis=-2))


# ------------------------------------------------------------------------------- norms


def _unit(xp: Any, x: Any) -> Any:
    """``x / |x|``, 0 where ``x == 0``: the derivative of ``|x|`` (a subgradient at 0)."""
    ax = xp.abs(x)
    unit = x / xp.where(ax == 0, xp.ones_like(ax), ax) if is_complex(xp, x) else xp.sign(x)
    return xp.where(ax == 0, xp.zeros_like(unit), unit)


def _ties(xp: Any, v: Any, largest: bool, axis: int) -> Any:
    """1/k on each of the k entries of ``v`` equal to its max (min) along ``axis``, else 0:
    the subgradient JAX and PyTorch give a max/min at a tie."""
    best = (xp.max if largest else xp.min)(v, axis=axis, keepdims=True)
    hit = xp.astype(v == best, v.dtype)
    return hit / xp.sum(hit, axis=axis, keepdims=True)


def _matrix_norm_direction(xp: Any, x: Any, p: Any) -> Any:
    """``D`` with ``d||x||_p = Re sum(conj(D) dx)`` over the last two axes, for the matrix
    norms ``'fro'``, ``'nuc'``, ``2``, ``-2``, ``1``, ``-1``, ``inf`` and ``-inf`` (the
    conventions of JAX and PyTorch: ``U V^H`` for ``'nuc'``, ties of the largest (smallest)
    singular value or column/row sum split equally, ``|x|``'s derivative 0 at 0)."""
    if p == "fro":
        y = xp.linalg.matrix_norm(x, keepdims=True)
        return x / xp.where(y == 0, xp.ones_like(y), y)
    if p in ("nuc", 2, -2):
        u, s, vh = finite_svd(xp, x)
        w = xp.ones_like(s) if p == "nuc" else _ties(xp, s, p == 2, -1)
        return xp.matmul(u * xp.astype(w[..., None, :], u.dtype), vh)
    # 1 / -1: max / min over the columns' sums of |x|; inf / -inf: over the rows'
    over_columns = p in (1, -1)
    sums = xp.sum(xp.abs(x), axis=-2 if over_columns else -1, keepdims=True)
    w = _ties(xp, sums, p in (1, float("inf")), -1 if over_columns else -2)
    return _unit(xp, x) * xp.astype(w, x.dtype)


def _norm_rules(f: Any, name: str, matrix: bool) -> None:
    """``vector_norm`` (any ``ord``; 0 has derivative zero; inf and -inf split ties
    equally): ``d||x||_p = sum(|x|^(p-1) sign(x) dx) / ||x||^(p-1)``, 0 at ``x == 0``;
    ``matrix_norm`` for every ``ord`` (`_matrix_norm_direction`)."""

    def norm_parts(x: Any, kw: dict) -> tuple:
        if matrix:
            return (x.ndim - 2, x.ndim - 1), kw.get("ord", "fro"), kw.get("keepdims", False)
        axis = kw.get("axis")
        axes = tuple(range(x.ndim)) if axis is None else (
            (axis,) if isinstance(axis, int) else tuple(axis))
        return tuple(a % x.ndim for a in axes), kw.get("ord", 2), kw.get("keepdims", False)

    def direction(xp: Any, x: Any, y: Any, kw: dict) -> Any:
        axes, p, keepdims = norm_parts(x, kw)
        if math.prod(x.shape) == 0 or p == 0:  # nothing to move / locally constant
            return xp.zeros_like(x)
        if matrix:
            return _matrix_norm_direction(xp, x, p)
        yk = y
        if not keepdims:
            for a in sorted(axes):
                yk = xp.expand_dims(yk, axis=a)
        ax = xp.abs(x)
        unit = _unit(xp, x)
        if p == float("inf") or p == -float("inf"):
            hit = xp.astype(ax == yk, ax.dtype)
            return unit * hit / xp.sum(hit, axis=axes, keepdims=True)
        safe_y = xp.where(yk == 0, xp.ones_like(yk), yk)
        w = (ax / safe_y) ** (p - 1)
        return unit * w

    def norm_rrule(x: Any, **kw: Any) -> Any:
        y = f(x, **kw)
        project_x = ProjectTo(x)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent())))
        def norm_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(x)
            axes, _, keepdims = norm_parts(x, kw)
            g = xp.real(y_bar) if is_complex(xp, y_bar) else y_bar
            if not keepdims:
                for a in sorted(axes):
                    g = xp.expand_dims(g, axis=a)
            return NoTangent(), project_x(direction(xp, x, y, kw) * g)

        return y, norm_pullback

    def norm_frule(dargs: tuple, x: Any, **kw: Any) -> Any:
        y = f(x, **kw)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None:
            return y, ZeroTangent()
        xp = array_namespace(x)
        axes, _, keepdims = norm_parts(x, kw)
        d = direction(xp, x, y, kw)
        prod = xp.real(conj(xp, d) * x_dot) if is_complex(xp, d, x_dot) else d * x_dot
        return y, xp.sum(prod, axis=axes, keepdims=keepdims)

    kit.define_rules(f, object, frule_fn=norm_frule, rrule_fn=norm_rrule, name=name)


def _matrix_power_rules(f: Any) -> None:
    """``matrix_power(x, n)``: ``sum_k b^k db b^(m-1-k)`` with ``b, m = x, n`` for ``n >= 0``
    and ``b, m = inv(x), -n`` (``d inv(x) = -inv(x) dx inv(x)``) for ``n < 0``."""

    def powers(xp: Any, x: Any, n: int) -> list:
        out = [xp.broadcast_to(xp.eye(x.shape[-1], dtype=x.dtype), tuple(x.shape))]
        for _ in range(n - 1):
            out.append(xp.matmul(out[-1], x))
        return out

    def base(xp: Any, x: Any, n: int) -> tuple:
        return (xp.linalg.inv(x), -n) if n < 0 else (x, n)

    def matrix_power_rrule(x: Any, n: int) -> Any:
        y = f(x, n)
        project_x = ProjectTo(x)

        @kit.zero_guard(lambda: (NoTangent(), project_x(ZeroTangent()), NoTangent()))
        def matrix_power_pullback(y_bar: Any) -> tuple:
            if n == 0:
                return NoTangent(), project_x(ZeroTangent()), NoTangent()
            xp = array_namespace(x)
            b, m = base(xp, x, n)
            ps = powers(xp, b, m)
            b_bar = sum(xp.matmul(xp.matmul(mH(xp, ps[k]), y_bar), mH(xp, ps[m - 1 - k]))
                        for k in range(m))
            if n < 0:
                b_bar = -xp.matmul(xp.matmul(mH(xp, b), b_bar), mH(xp, b))
            return NoTangent(), project_x(b_bar), NoTangent()

        return y, matrix_power_pullback

    def matrix_power_frule(dargs: tuple, x: Any, n: int) -> Any:
        y = f(x, n)
        x_dot = kit.nonzero(dargs[1])
        if x_dot is None or n == 0:
            return y, ZeroTangent()
        xp = array_namespace(x)
        b, m = base(xp, x, n)
        b_dot = x_dot if n >= 0 else -xp.matmul(xp.matmul(b, x_dot), b)
        ps = powers(xp, b, m)
        return y, sum(xp.matmul(xp.matmul(ps[k], b_dot), ps[m - 1 - k]) for k in range(m))

    kit.define_rules(f, object, object, frule_fn=matrix_power_frule, rrule_fn=matrix_power_rrule)


_BILINEAR = {
    "matmul": _matmul_adjoints,
    "tensordot": _tensordot_adjoints,
    "vecdot": _vecdot_adjoints,
}


def register(xp: Any, fresh: Callable[[Any], bool]) -> list[str]:
    """Register the contraction rules on ``xp`` and ``xp.linalg`` functions ``fresh`` accepts."""
    done = []
    linalg = getattr(xp, "linalg", None)
    spaces = [("", xp)] + ([("linalg.", linalg)] if linalg is not None else [])
    for prefix, space in spaces:
        for name, adjoint_fn in _BILINEAR.items():
            f = getattr(space, name, None)
            if f is not None and fresh(f):
                bilinear_rules(f, name, adjoint_fn)
                done.append(prefix + name)
        f = getattr(space, "matrix_transpose", None)
        if prefix and f is not None and fresh(f):
            linear_rules(f, "matrix_transpose", adjoints.matrix_transpose_adjoint)
            done.append(prefix + "matrix_transpose")
    if linalg is None:
        return done
    for name, adjoint_fn in (("outer", _outer_adjoints), ("cross", _cross_adjoints)):
        f = getattr(linalg, name, None)
        if f is not None and fresh(f):
            bilinear_rules(f, name, adjoint_fn)
            done.append("linalg." + name)
    for name, adjoint in (("trace", _trace_adjoint), ("diagonal", _diagonal_adjoint)):
        f = getattr(linalg, name, None)
        if f is not None and fresh(f):
            linear_rules(f, name, adjoint)
            done.append("linalg." + name)
    for name, fro in (("vector_norm", False), ("matrix_norm", True)):
        f = getattr(linalg, name, None)
        if f is not None and fresh(f):
            _norm_rules(f, name, fro)
            done.append("linalg." + name)
    f = getattr(linalg, "matrix_power", None)
    if f is not None and fresh(f):
        _matrix_power_rules(f)
        done.append("linalg.matrix_power")
    f = getattr(linalg, "matrix_rank", None)
    if f is not None and fresh(f):
        core.non_differentiable(f)
        done.append("linalg.matrix_rank")
    return done
