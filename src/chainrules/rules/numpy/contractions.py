"""Rules for NumPy contractions: products of arrays that sum over shared axes.

Covered (frule and rrule): ``einsum`` (string and sublist forms, implicit output,
ellipsis, repeated indices (diagonals, traces), outer products; ``optimize=`` is
passed through), ``dot``, ``vdot``, ``inner``, ``outer``, ``tensordot`` (int and
pair ``axes``), ``matmul`` (1-d and batched/broadcast operands), ``vecdot``,
``matvec``, ``vecmat``, ``kron``, ``trace`` (``offset``, ``axis1``, ``axis2``),
``cross`` (3-vectors; ``axisa``/``axisb``/``axisc``/``axis``). (``convolve``,
``correlate`` and ``interp`` are in ``sequences.py``, ``polyval`` in ``polynomial.py``.)

The rule functions are public (``matmul_frule``, ``matmul_rrule``, ``outer_*``,
``vecdot_*``, ``tensordot_*``, ``trace_*``, ``cross_*``, ``dot_*``, ``vdot_*``,
``inner_*``, ``kron_*``, ``einsum_*``...) so that other names of the same functions can
be given the same rules. Each calls the NumPy function it was written for.

Conventions:

- Complex inputs (DESIGN §2): the pullback of a linear map is its adjoint, e.g. for
  ``y = A @ x``: ``A_bar = y_bar @ x^H``, ``x_bar = A^H @ y_bar``. Functions that
  conjugate an argument themselves (``vdot``, ``vecdot`` and ``vecmat`` conjugate
  their first) are antilinear in it: its cotangent is the
  conjugate of the one of the unconjugated product.
- Every einsum-like product is handled by one engine: the cotangent of operand k
  is the einsum of the other (conjugated) operands with ``y_bar``; indices only
  operand k carries are broadcast back, repeated indices (``"ii"``) put the
  cotangent on the diagonal, size-1 broadcast dimensions are summed.
- ``out=`` is refused with `OutArgumentError`; gufunc ``axes=``/
  ``axis=`` keywords of ``matmul``/``vecdot``/``matvec``/``vecmat`` raise
  ``NotImplementedError``. Integer, bool and index arguments get ``NoTangent()``.

Examples:
    >>> import numpy as np
    >>> from chainrules import rrule, unthunk
    >>> A, x = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, -1.0])
    >>> y, matmul_pullback = rrule(np.matmul, A, x)
    >>> _, A_bar, x_bar = matmul_pullback(np.array([1.0, 0.0]))
    >>> unthunk(A_bar), unthunk(x_bar)     # y_bar x^H and A^H y_bar
    (array([[ 1., -1.],
           [ 0.,  0.]]), array([1., 2.]))
    >>> y, vdot_pullback = rrule(np.vdot, np.array([1j]), np.array([2.0 + 0j]))
    >>> y, unthunk(vdot_pullback(1.0)[1])  # vdot conjugates its first argument
    (np.complex128(-2j), array([2.+0.j]))
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from chainrules.core import NoTangent, OutArgumentError, Thunk, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules.numpy import _einsum as einsum_kernel
from chainrules.rules.numpy import _linear as linear

__all__ = [
    "cross_frule",
    "cross_rrule",
    "dot_frule",
    "dot_rrule",
    "einsum_frule",
    "einsum_rrule",
    "inner_frule",
    "inner_rrule",
    "kron_frule",
    "kron_rrule",
    "matmul_frule",
    "matmul_rrule",
    "matvec_frule",
    "matvec_rrule",
    "outer_frule",
    "outer_rrule",
    "tensordot_frule",
    "tensordot_rrule",
    "trace_frule",
    "trace_rrule",
    "vdot_frule",
    "vdot_rrule",
    "vecdot_frule",
    "vecdot_rrule",
    "vecmat_frule",
    "vecmat_rrule",
]

# ---------------------------------------------------------------------------- einsum


def _einsum_operands(operands: tuple) -> tuple:
    """``(subscripts, operands, their positions among the arguments)`` of both forms."""
    if isinstance(operands[0], str):
        return operands[0], list(operands[1:]), list(range(1, len(operands)))
    return einsum_kernel.sublist_to_subscripts(operands)


@rrule.register(np.einsum)
def einsum_rrule(*operands, **kwargs):
    kit.refuse_out(np.einsum, kwargs)
    y = np.einsum(*operands, **kwargs)
    subs, ops, positions = _einsum_operands(operands)
    arrays = einsum_kernel.as_arrays(*ops)
    terms, out = einsum_kernel.parse_einsum(subs, [a.shape for a in arrays])
    c = einsum_kernel.Contraction(
        terms, out, arrays, optimize=einsum_kernel.optimize_option(kwargs)
    )
    projectors = [kit.array_projector(a) if kit.is_differentiable(a) else None for a in ops]
    has_tangent = kit.is_differentiable(y)
    n = len(operands)

    zero_bars: list = [NoTangent()] * n
    for pos, p in zip(positions, projectors):
        zero_bars[pos] = NoTangent() if p is None else ZeroTangent()
    zeros = (NoTangent(), *zero_bars)

    @kit.zero_guard(zeros)
    def einsum_pullback(y_bar):
        if not has_tangent:
            return zeros
        bars: list = [NoTangent()] * n
        for pos, bar in zip(
            positions, einsum_kernel.contraction_cotangents(c, np.asarray(y_bar), ops, projectors)
        ):
            bars[pos] = bar
        return (NoTangent(), *bars)

    return y, einsum_pullback


@frule.register(np.einsum)
def einsum_frule(dargs, *operands, **kwargs):
    kit.refuse_out(np.einsum, kwargs)
    y = np.einsum(*operands, **kwargs)
    subs, ops, positions = _einsum_operands(operands)
    dots = [kit.dense_tangent(dargs[1 + pos], a, zeros=False) if kit.is_differentiable(a) else None
            for pos, a in zip(positions, ops)]
    if all(d is None for d in dots) or not kit.is_differentiable(y):
        return y, ZeroTangent()
    arrays = einsum_kernel.as_arrays(*ops)
    terms, out = einsum_kernel.parse_einsum(subs, [a.shape for a in arrays])
    c = einsum_kernel.Contraction(
        terms, out, arrays, optimize=einsum_kernel.optimize_option(kwargs)
    )
    dots = [None if d is None else np.reshape(d, a.shape) for d, a in zip(dots, arrays)]
    return y, kit.fit_output(c.pushforward(dots), y)


# ----------------------------------------------------------- dot, inner, outer, vdot


def _dot_terms(na: int, nb: int) -> tuple[str, str, str]:
    """Index letters of np.dot(a, b) for operands of ``na`` and ``nb`` dimensions."""
    if na == 0 or nb == 0:
        ta, tb = einsum_kernel.LETTERS[:na], einsum_kernel.LETTERS[na:na + nb]
        return ta, tb, ta + tb
    ta = einsum_kernel.LETTERS[:na - 1] + "z"
    if nb == 1:
        return ta, "z", ta[:-1]
    rest = einsum_kernel.LETTERS[na - 1:na - 1 + nb - 1]
    tb = rest[:-1] + "z" + rest[-1]
    return ta, tb, ta[:-1] + rest


def _dot_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    ta, tb, out = _dot_terms(a.ndim, b.ndim)
    if 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2:
        return _MatmulContraction([ta, tb], out, [a, b]), 2  # dot is matmul here
    return einsum_kernel.Contraction([ta, tb], out, [a, b]), 2


dot_frule, dot_rrule = einsum_kernel.contraction_rules(np.dot, "dot", _dot_plan, out_position=2)


def _inner_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    if a.ndim == 0 or b.ndim == 0:
        ta, tb, out = _dot_terms(a.ndim, b.ndim)
    else:
        ta = einsum_kernel.LETTERS[:a.ndim - 1] + "z"
        tb = einsum_kernel.LETTERS[a.ndim - 1:a.ndim - 1 + b.ndim - 1] + "z"
        out = ta[:-1] + tb[:-1]
    return einsum_kernel.Contraction([ta, tb], out, [a, b]), 2


inner_frule, inner_rrule = einsum_kernel.contraction_rules(np.inner, "inner", _inner_plan)


def _outer_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    return einsum_kernel.Contraction(["i", "j"], "ij", [a.reshape(-1), b.reshape(-1)]), 2


outer_frule, outer_rrule = einsum_kernel.contraction_rules(
    np.outer, "outer", _outer_plan, out_position=2
)


def _vdot_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    return einsum_kernel.Contraction(
        ["i", "i"], "", [a.reshape(-1), b.reshape(-1)], conj=(True, False)
    ), 2


vdot_frule, vdot_rrule = einsum_kernel.contraction_rules(np.vdot, "vdot", _vdot_plan)


# ------------------------------------------------------------------------- tensordot

_TENSORDOT_SIG = inspect.signature(np.tensordot)


def _tensordot_plan(args: tuple, kwargs: dict) -> tuple:
    p = _TENSORDOT_SIG.bind(*args, **kwargs)
    p.apply_defaults()
    a, b = einsum_kernel.as_arrays(p.arguments["a"], p.arguments["b"])
    axes = p.arguments["axes"]
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ia, ib = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        ia, ib = axes
        ia = [ia] if isinstance(ia, (int, np.integer)) else list(ia)
        ib = [ib] if isinstance(ib, (int, np.integer)) else list(ib)
    ia = [int(i) % a.ndim for i in ia]
    ib = [int(i) % b.ndim for i in ib]
    ta = list(einsum_kernel.LETTERS[:a.ndim])
    tb = list(einsum_kernel.LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(ia, ib):
        tb[j] = ta[i]
    out = [ta[i] for i in range(a.ndim) if i not in ia] + [
        tb[j] for j in range(b.ndim) if j not in ib]
    return einsum_kernel.Contraction(["".join(ta), "".join(tb)], "".join(out), [a, b]), 2


tensordot_frule, tensordot_rrule = einsum_kernel.contraction_rules(np.tensordot, "tensordot",
                                                                   _tensordot_plan)


# -------------------------------------------------------- matmul, vecdot, matvec, vecmat


def _batched(cores: list[str], arrays: list[np.ndarray], out_core: str) -> tuple:
    """Terms for gufunc-style operands: batch letters right-aligned and shared."""
    nb = max(a.ndim - len(c) for a, c in zip(arrays, cores))
    batch = "".join(c for c in einsum_kernel.LETTERS if c not in "ijkz")[:nb]
    terms = [batch[nb - (a.ndim - len(c)):] + c for a, c in zip(arrays, cores)]
    return terms, batch + out_core


class _MatmulContraction(einsum_kernel.Contraction):
    """matmul's derivatives by matmul itself (faster than the einsum engine):
    A_bar = y_bar @ B^H and B_bar = A^H @ y_bar, with 1-d operands promoted to
    matrices and broadcast batch dimensions summed away."""

    def cotangent(self, k: int, y_bar: np.ndarray) -> np.ndarray:
        a, b = self.ops
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
        g = np.reshape(y_bar, (*batch, a2.shape[-2], b2.shape[-1]))  # 1-d: size-1 dims back
        if k == 0:
            out = linear.unbroadcast(np.matmul(g, np.conj(np.swapaxes(b2, -1, -2))), a2.shape)
            return out.reshape(a.shape)
        out = linear.unbroadcast(np.matmul(np.conj(np.swapaxes(a2, -1, -2)), g), b2.shape)
        return out.reshape(b.shape)

    def pushforward(self, dots: list) -> Any:
        a, b = self.ops
        y_dot: Any = None
        if dots[0] is not None:
            y_dot = np.matmul(dots[0], b)
        if dots[1] is not None:
            term = np.matmul(a, dots[1])
            y_dot = term if y_dot is None else y_dot + term
        return y_dot


def _matmul_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    ca = "k" if a.ndim == 1 else "ik"
    cb = "k" if b.ndim == 1 else "kj"
    out_core = ("i" if a.ndim > 1 else "") + ("j" if b.ndim > 1 else "")
    terms, out = _batched([ca, cb], [a, b], out_core)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: input operand does not have enough dimensions")
    return _MatmulContraction(terms, out, [a, b]), 2


matmul_frule, matmul_rrule = einsum_kernel.contraction_rules(
    np.matmul, "matmul", _matmul_plan, refuse=einsum_kernel.refuse_gufunc_axes, out_position=2)


def _vecdot_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    terms, out = _batched(["k", "k"], [a, b], "")
    return einsum_kernel.Contraction(terms, out, [a, b], conj=(True, False)), 2


def _matvec_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    terms, out = _batched(["ik", "k"], [a, b], "i")
    return einsum_kernel.Contraction(terms, out, [a, b]), 2


def _vecmat_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    terms, out = _batched(["k", "kj"], [a, b], "j")
    return einsum_kernel.Contraction(terms, out, [a, b], conj=(True, False)), 2


if hasattr(np, "vecdot"):
    vecdot_frule, vecdot_rrule = einsum_kernel.contraction_rules(
        np.vecdot, "vecdot", _vecdot_plan, refuse=einsum_kernel.refuse_gufunc_axes, out_position=2)
if hasattr(np, "matvec"):
    matvec_frule, matvec_rrule = einsum_kernel.contraction_rules(
        np.matvec, "matvec", _matvec_plan, refuse=einsum_kernel.refuse_gufunc_axes, out_position=2)
    vecmat_frule, vecmat_rrule = einsum_kernel.contraction_rules(
        np.vecmat, "vecmat", _vecmat_plan, refuse=einsum_kernel.refuse_gufunc_axes, out_position=2)


# ------------------------------------------------------------------------------ kron


class _KronContraction(einsum_kernel.Contraction):
    """kron(a, b) as an interleaved outer product, reshaped to the output's shape."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        nd = max(a.ndim, b.ndim, 1)
        a2 = a.reshape((1,) * (nd - a.ndim) + a.shape)
        b2 = b.reshape((1,) * (nd - b.ndim) + b.shape)
        ta, tb = einsum_kernel.LETTERS[:nd], einsum_kernel.LETTERS[nd:2 * nd]
        super().__init__([ta, tb], "".join(p + q for p, q in zip(ta, tb)), [a2, b2])
        self.inter_shape = tuple(s for pair in zip(a2.shape, b2.shape) for s in pair)

    def cotangent(self, k: int, y_bar: np.ndarray) -> np.ndarray:
        return super().cotangent(k, y_bar.reshape(self.inter_shape))


def _kron_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = einsum_kernel.as_arrays(*args[:2])
    return _KronContraction(a, b), 2


kron_frule, kron_rrule = einsum_kernel.contraction_rules(np.kron, "kron", _kron_plan)


# ----------------------------------------------------------------------------- trace

_TRACE_SIG = inspect.signature(np.trace)


def _trace_params(a: Any, args: tuple, kwargs: dict) -> tuple:
    p = _TRACE_SIG.bind(a, *args, **kwargs)
    p.apply_defaults()
    q = p.arguments
    if q["out"] is not None:
        raise OutArgumentError(np.trace)
    return int(q["offset"]), int(q["axis1"]), int(q["axis2"])


@rrule.register(np.trace)
def trace_rrule(a, *args, **kwargs):
    offset, axis1, axis2 = _trace_params(a, args, kwargs)
    y = np.trace(a, *args, **kwargs)
    x = np.asarray(a)
    project_a = kit.array_projector(a)
    nargs = len(args)

    @kit.zero_guard((NoTangent(), ZeroTangent(), *(NoTangent(),) * nargs))
    def trace_pullback(y_bar):
        y_bar = np.asarray(y_bar)
        n1, n2 = x.shape[axis1], x.shape[axis2]
        mask = np.eye(n1, n2, k=offset, dtype=x.dtype if x.dtype.kind in "fc" else float)
        # a product, not an assignment into zeros: run again on an AD's traced
        # cotangent (a second derivative), it stays differentiable
        a_bar = np.moveaxis(y_bar[..., None, None] * mask, (-2, -1), (axis1, axis2))
        return (NoTangent(), project_a(a_bar), *(NoTangent(),) * nargs)

    return y, trace_pullback


@frule.register(np.trace)
def trace_frule(dargs, a, *args, **kwargs):
    _trace_params(a, args, kwargs)
    y = np.trace(a, *args, **kwargs)
    a_dot = kit.dense_tangent(dargs[1], a, zeros=False)
    if a_dot is None or not kit.is_differentiable(y):
        return y, ZeroTangent()
    return y, kit.fit_output(np.trace(a_dot, *args, **kwargs), y)


# ----------------------------------------------------------------------------- cross

_CROSS_SIG = inspect.signature(np.cross)


def _cross_axes(a: Any, b: Any, args: tuple, kwargs: dict) -> tuple:
    p = _CROSS_SIG.bind(a, b, *args, **kwargs)
    p.apply_defaults()
    q = p.arguments
    axisa, axisb, axisc = q["axisa"], q["axisb"], q["axisc"]
    if q["axis"] is not None:
        axisa = axisb = axisc = q["axis"]
    x, w = np.asarray(a), np.asarray(b)
    if x.shape[axisa] != 3 or w.shape[axisb] != 3:
        raise NotImplementedError(
            "the rule for numpy.cross supports 3-vectors only (NumPy deprecates 2-vectors); "
            "pad 2-vectors with a zero third component"
        )
    return x, w, int(axisa), int(axisb), int(axisc)


def _to_arg_layout(g: np.ndarray, axis: int, like: np.ndarray) -> np.ndarray:
    """Move the vector axis of a broadcast cotangent to ``axis`` of ``like``; sum the rest."""
    pos = (axis % like.ndim) - like.ndim  # counted from the end: extra dims are leading
    return linear.unbroadcast(np.moveaxis(g, -1, pos), like.shape)


@rrule.register(np.cross)
def cross_rrule(a, b, *args, **kwargs):
    x, w, axisa, axisb, axisc = _cross_axes(a, b, args, kwargs)
    y = np.cross(a, b, *args, **kwargs)
    project_a, project_b = kit.array_projector(a), kit.array_projector(b)
    nargs = len(args)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent(), *(NoTangent(),) * nargs))
    def cross_pullback(y_bar):
        c_bar = np.moveaxis(np.asarray(y_bar), axisc % y.ndim, -1)
        xa, wb = np.moveaxis(x, axisa, -1), np.moveaxis(w, axisb, -1)
        a_bar = Thunk(lambda: project_a(_to_arg_layout(np.cross(np.conj(wb), c_bar), axisa, x)))
        b_bar = Thunk(lambda: project_b(_to_arg_layout(np.cross(c_bar, np.conj(xa)), axisb, w)))
        return (NoTangent(), a_bar, b_bar, *(NoTangent(),) * nargs)

    return y, cross_pullback


@frule.register(np.cross)
def cross_frule(dargs, a, b, *args, **kwargs):
    _cross_axes(a, b, args, kwargs)
    return einsum_kernel.bilinear_frule(np.cross, dargs, a, b, *args, **kwargs)


