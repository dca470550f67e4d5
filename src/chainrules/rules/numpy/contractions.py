"""Rules for NumPy contractions: products of arrays that sum over shared axes.

Covered (frule and rrule): ``einsum`` (string and sublist forms, implicit output,
ellipsis, repeated indices (diagonals, traces), outer products; ``optimize=`` is
passed through), ``dot``, ``vdot``, ``inner``, ``outer``, ``tensordot`` (int and
pair ``axes``), ``matmul`` (1-d and batched/broadcast operands), ``vecdot``,
``matvec``, ``vecmat``, ``kron``, ``trace`` (``offset``, ``axis1``, ``axis2``),
``cross`` (3-vectors; ``axisa``/``axisb``/``axisc``/``axis``), ``convolve`` and
``correlate`` (modes full/same/valid), ``interp`` (w.r.t. ``x``, ``xp``, ``fp``, and
``left``/``right`` when passed positionally; ``period`` gets ``NoTangent()``) and
``polyval`` (w.r.t. ``p`` and ``x``).

Conventions:

- Complex inputs (DESIGN §2): the pullback of a linear map is its adjoint, e.g. for
  ``y = A @ x``: ``A_bar = y_bar @ x^H``, ``x_bar = A^H @ y_bar``. Functions that
  conjugate an argument themselves (``vdot``, ``vecdot`` and ``vecmat`` conjugate
  their first, ``correlate`` its second) are antilinear in it: its cotangent is the
  conjugate of the one of the unconjugated product.
- Every einsum-like product is handled by one engine: the cotangent of operand k
  is the einsum of the other (conjugated) operands with ``y_bar``; indices only
  operand k carries are broadcast back, repeated indices (``"ii"``) put the
  cotangent on the diagonal, size-1 broadcast dimensions are summed.
- ``interp``: at a knot, the derivatives w.r.t. ``x`` and ``xp`` are those of the
  segment to its right (of the last segment at ``xp[-1]``); outside
  ``[xp[0], xp[-1]]`` the value is ``left``/``right``/an end value, so the derivative
  w.r.t. ``x`` and ``xp`` is 0 there. ``period`` gets ``NoTangent()`` (moving the
  period moves the wrapped query points discontinuously).
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
import string
from typing import Any

import numpy as np

from chainrules.core import (
    NoTangent,
    OutArgumentError,
    Thunk,
    ZeroTangent,
    array_namespace,
    frule,
    is_foreign_array,
    rrule,
)

from ._common import _cotangent, _dense, _like, _projector

__all__: list[str] = []

_LETTERS = string.ascii_letters


# ----------------------------------------------------------------------------- helpers


def _differentiable(x: Any) -> bool:
    """Whether ``x`` carries a tangent (float or complex values)."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (float, complex, int)):
        return True
    if is_foreign_array(x):
        return array_namespace(x).isdtype(x.dtype, ("real floating", "complex floating"))
    try:
        return np.asarray(x).dtype.kind in "fc"
    except (TypeError, ValueError):
        return False


def _output_has_tangent(y: Any) -> bool:
    return np.asarray(y).dtype.kind in "fc"


def _refuse_out(f: Any, kwargs: dict, args: tuple = (), out_position: int | None = None) -> None:
    if kwargs.get("out") is not None:
        raise OutArgumentError(f)
    if out_position is not None and len(args) > out_position and args[out_position] is not None:
        raise OutArgumentError(f)


def _optimize(kwargs: dict) -> Any:
    """einsum's ``optimize=`` for the derivative contractions: a path computed for the
    primal's operands does not fit theirs, so an explicit path becomes True."""
    opt = kwargs.get("optimize", False)
    return opt if isinstance(opt, (bool, str)) else True


def _refuse_gufunc_axes(f: Any, kwargs: dict, args: tuple = (),
                        out_position: int | None = None) -> None:
    _refuse_out(f, kwargs, args, out_position)
    for key in ("axes", "axis"):
        if kwargs.get(key) is not None:
            raise NotImplementedError(
                f"the rule for numpy.{f.__name__} does not support {key}=; move the core "
                f"axes last with np.moveaxis (which has rules) and call it without {key}="
            )
    if kwargs.get("where", True) is not True:
        raise NotImplementedError(f"the rule for numpy.{f.__name__} does not support where=")


def _sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast result ``g`` back to ``shape``."""
    g = np.asarray(g)
    if g.shape == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    out = np.sum(g, axis=axes, keepdims=True) if axes else g
    return out.reshape(shape)


# ---------------------------------------------------------------------- einsum engine


def _parse_einsum(subscripts: str, shapes: list[tuple]) -> tuple[list[str], str]:
    """Explicit index letters for each operand and the output: ellipses become letters
    (right-aligned, shared), an implicit output is filled in as NumPy does."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
    else:
        lhs, out = subscripts, None
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(
            f"einsum: {len(terms)} operand subscripts for {len(shapes)} operands"
        )
    used = set(lhs.replace(".", "")) | set((out or "").replace(".", ""))
    free = [c for c in _LETTERS if c not in used]
    ranks = [len(s) - (len(t) - 3) for t, s in zip(terms, shapes) if "..." in t]
    n_ell = max(ranks, default=0)
    ell = "".join(free[:n_ell])
    explicit = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            r = len(s) - (len(t) - 3)
            t = t.replace("...", ell[n_ell - r:] if r else "")
        explicit.append(t)
    if out is None:
        counts: dict[str, int] = {}
        for t in terms:
            for c in t.replace(".", ""):
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1))
    else:
        out = out.replace("...", ell)
    return explicit, out


def _sublist_to_subscripts(operands: tuple) -> tuple[str, list, list[int]]:
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) -> ("ab,bc->ac", [a, b], positions of a, b)."""

    def letters(sub: Any) -> str:
        return "".join("..." if s is Ellipsis else _LETTERS[int(s)] for s in sub)

    n = len(operands)
    pairs = n // 2
    ops = [operands[2 * i] for i in range(pairs)]
    subs = ",".join(letters(operands[2 * i + 1]) for i in range(pairs))
    if n % 2:
        subs += "->" + letters(operands[-1])
    return subs, ops, [2 * i for i in range(pairs)]


class _Contraction:
    """A product ``einsum(terms -> out)`` of operands, operand k conjugated when
    ``conj[k]``; computes the derivatives of any of them."""

    def __init__(self, terms: list[str], out: str, ops: list[np.ndarray],
                 conj: tuple | None = None, optimize: Any = False) -> None:
        self.terms = terms
        self.out = out
        self.ops = ops
        self.conj = conj or (False,) * len(ops)
        self.optimize = optimize

    def subscripts(self, terms: list[str], out: str) -> str:
        return ",".join(terms) + "->" + out

    def _c(self, k: int, v: Any) -> Any:
        return np.conj(v) if self.conj[k] else v

    def cotangent(self, k: int, y_bar: np.ndarray) -> np.ndarray:
        """The cotangent of operand k (in the operand's shape)."""
        t = self.terms[k]
        x = self.ops[k]
        uniq = "".join(dict.fromkeys(t))
        others = [j for j in range(len(self.ops)) if j != k]
        avail = set(self.out).union(*(self.terms[j] for j in others))
        conn = "".join(c for c in uniq if c in avail)
        # derivative of the holomorphic product w.r.t. c_k = (conj) x_k: conjugate the rest
        arrays = [self.ops[j] if self.conj[j] else np.conj(self.ops[j]) for j in others]
        g = np.einsum(self.subscripts([self.terms[j] for j in others] + [self.out], conn),
                      *arrays, y_bar, optimize=self.optimize)
        size = {c: x.shape[t.index(c)] for c in uniq}
        sums = tuple(i for i, c in enumerate(conn) if size[c] == 1 and g.shape[i] != 1)
        if sums:
            g = np.sum(g, axis=sums, keepdims=True)
        private = tuple(i for i, c in enumerate(uniq) if c not in avail)
        if private:
            g = np.broadcast_to(np.expand_dims(g, private), tuple(size[c] for c in uniq))
        if uniq != t:
            full = np.zeros(x.shape, dtype=np.result_type(g, x))
            np.einsum(t + "->" + uniq, full)[...] = g  # a writeable view of the diagonal
            g = full
        elif np.may_share_memory(g, y_bar) or not g.flags.writeable:
            g = np.array(g)  # never hand out a view of y_bar (or a read-only broadcast)
        return np.conj(g) if self.conj[k] else g

    def pushforward(self, dots: list) -> Any:
        """The sum over operands of the product with operand k replaced by its tangent."""
        y_dot: Any = None
        subs = self.subscripts(self.terms, self.out)
        for k, d in enumerate(dots):
            if d is None:
                continue
            ops = [self._c(j, d if j == k else v) for j, v in enumerate(self.ops)]
            term = np.einsum(subs, *ops, optimize=self.optimize)
            y_dot = term if y_dot is None else y_dot + term
        return y_dot


def _contraction_pullback_bars(c: _Contraction, y_bar: Any, originals: list,
                               projectors: list) -> list:
    """Thunked cotangents of each original argument (reshaped from its operand)."""
    bars: list = []
    for k, (orig, project) in enumerate(zip(originals, projectors)):
        if not _differentiable(orig):
            bars.append(NoTangent())
            continue
        shape = np.shape(orig)

        def operand_bar(k: int = k, shape: tuple = shape, project: Any = project) -> Any:
            return project(c.cotangent(k, y_bar).reshape(shape))

        bars.append(Thunk(operand_bar))
    return bars


def _contraction_rules(f: Any, name: str, plan: Any, refuse: Any = _refuse_out,
                       out_position: int | None = None) -> None:
    """Register rules for ``f(a, b, ...)`` given ``plan(args, kwargs) -> (contraction,
    number of differentiable leading args)``; other positional args get NoTangent().
    ``out_position``: where ``f`` takes ``out`` positionally (refused there too)."""

    def contraction_rrule(*args, **kwargs):
        refuse(f, kwargs, args, out_position)
        y = f(*args, **kwargs)
        c, nops = plan(args, kwargs)
        originals = list(args[:nops])
        projectors = [_projector(a) if _differentiable(a) else None for a in originals]
        rest = (NoTangent(),) * (len(args) - nops)
        has_tangent = _output_has_tangent(y)

        def contraction_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            if y_bar is None or not has_tangent:
                return (NoTangent(), *(ZeroTangent() if p is not None else NoTangent()
                                       for p in projectors), *rest)
            return (NoTangent(), *_contraction_pullback_bars(c, y_bar, originals, projectors),
                    *rest)

        contraction_pullback.__name__ = contraction_pullback.__qualname__ = f"{name}_pullback"
        return y, contraction_pullback

    def contraction_frule(dargs, *args, **kwargs):
        refuse(f, kwargs, args, out_position)
        y = f(*args, **kwargs)
        c, nops = plan(args, kwargs)
        dots = [_dense(d, a) if _differentiable(a) else None
                for d, a in zip(dargs[1:1 + nops], args)]
        if all(d is None for d in dots) or not _output_has_tangent(y):
            return y, ZeroTangent()
        dots = [None if d is None else np.reshape(d, op.shape) for d, op in zip(dots, c.ops)]
        return y, _like(np.reshape(c.pushforward(dots), np.shape(y)), y)

    contraction_rrule.__name__ = contraction_rrule.__qualname__ = f"{name}_rrule"
    contraction_frule.__name__ = contraction_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(contraction_rrule)
    frule.register(f)(contraction_frule)


def _arrays(*xs: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in xs]


# ---------------------------------------------------------------------------- einsum


@rrule.register(np.einsum)
def einsum_rrule(*operands, **kwargs):
    _refuse_out(np.einsum, kwargs)
    y = np.einsum(*operands, **kwargs)
    if isinstance(operands[0], str):
        ops = list(operands[1:])
        subs, positions = operands[0], list(range(1, len(operands)))
    else:
        subs, ops, positions = _sublist_to_subscripts(operands)
    arrays = _arrays(*ops)
    terms, out = _parse_einsum(subs, [a.shape for a in arrays])
    c = _Contraction(terms, out, arrays, optimize=_optimize(kwargs))
    projectors = [_projector(a) if _differentiable(a) else None for a in ops]
    has_tangent = _output_has_tangent(y)
    n = len(operands)

    def einsum_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        bars: list = [NoTangent()] * n
        if y_bar is None or not has_tangent:
            for pos, p in zip(positions, projectors):
                bars[pos] = NoTangent() if p is None else ZeroTangent()
        else:
            for pos, bar in zip(positions,
                                _contraction_pullback_bars(c, y_bar, ops, projectors)):
                bars[pos] = bar
        return (NoTangent(), *bars)

    return y, einsum_pullback


@frule.register(np.einsum)
def einsum_frule(dargs, *operands, **kwargs):
    _refuse_out(np.einsum, kwargs)
    y = np.einsum(*operands, **kwargs)
    if isinstance(operands[0], str):
        ops = list(operands[1:])
        subs, positions = operands[0], list(range(1, len(operands)))
    else:
        subs, ops, positions = _sublist_to_subscripts(operands)
    dots = [_dense(dargs[1 + pos], a) if _differentiable(a) else None
            for pos, a in zip(positions, ops)]
    if all(d is None for d in dots) or not _output_has_tangent(y):
        return y, ZeroTangent()
    arrays = _arrays(*ops)
    terms, out = _parse_einsum(subs, [a.shape for a in arrays])
    c = _Contraction(terms, out, arrays, optimize=_optimize(kwargs))
    dots = [None if d is None else np.reshape(d, a.shape) for d, a in zip(dots, arrays)]
    return y, _like(c.pushforward(dots), y)


# ----------------------------------------------------------- dot, inner, outer, vdot


def _dot_terms(na: int, nb: int) -> tuple[str, str, str]:
    """Index letters of np.dot(a, b) for operands of ``na`` and ``nb`` dimensions."""
    if na == 0 or nb == 0:
        ta, tb = _LETTERS[:na], _LETTERS[na:na + nb]
        return ta, tb, ta + tb
    ta = _LETTERS[:na - 1] + "z"
    if nb == 1:
        return ta, "z", ta[:-1]
    rest = _LETTERS[na - 1:na - 1 + nb - 1]
    tb = rest[:-1] + "z" + rest[-1]
    return ta, tb, ta[:-1] + rest


def _dot_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = _arrays(*args[:2])
    ta, tb, out = _dot_terms(a.ndim, b.ndim)
    if 1 <= a.ndim <= 2 and 1 <= b.ndim <= 2:
        return _MatmulContraction([ta, tb], out, [a, b]), 2  # dot is matmul here
    return _Contraction([ta, tb], out, [a, b]), 2


_contraction_rules(np.dot, "dot", _dot_plan, out_position=2)


def _inner_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = _arrays(*args[:2])
    if a.ndim == 0 or b.ndim == 0:
        ta, tb, out = _dot_terms(a.ndim, b.ndim)
    else:
        ta = _LETTERS[:a.ndim - 1] + "z"
        tb = _LETTERS[a.ndim - 1:a.ndim - 1 + b.ndim - 1] + "z"
        out = ta[:-1] + tb[:-1]
    return _Contraction([ta, tb], out, [a, b]), 2


_contraction_rules(np.inner, "inner", _inner_plan)


def _outer_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = _arrays(*args[:2])
    return _Contraction(["i", "j"], "ij", [a.reshape(-1), b.reshape(-1)]), 2


_contraction_rules(np.outer, "outer", _outer_plan, out_position=2)


def _vdot_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = _arrays(*args[:2])
    return _Contraction(["i", "i"], "", [a.reshape(-1), b.reshape(-1)], conj=(True, False)), 2


_contraction_rules(np.vdot, "vdot", _vdot_plan)


# ------------------------------------------------------------------------- tensordot

_TENSORDOT_SIG = inspect.signature(np.tensordot)


def _tensordot_plan(args: tuple, kwargs: dict) -> tuple:
    p = _TENSORDOT_SIG.bind(*args, **kwargs)
    p.apply_defaults()
    a, b = _arrays(p.arguments["a"], p.arguments["b"])
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
    ta = list(_LETTERS[:a.ndim])
    tb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(ia, ib):
        tb[j] = ta[i]
    out = [ta[i] for i in range(a.ndim) if i not in ia] + [
        tb[j] for j in range(b.ndim) if j not in ib]
    return _Contraction(["".join(ta), "".join(tb)], "".join(out), [a, b]), 2


_contraction_rules(np.tensordot, "tensordot", _tensordot_plan)


# -------------------------------------------------------- matmul, vecdot, matvec, vecmat


def _batched(cores: list[str], arrays: list[np.ndarray], out_core: str) -> tuple:
    """Terms for gufunc-style operands: batch letters right-aligned and shared."""
    nb = max(a.ndim - len(c) for a, c in zip(arrays, cores))
    batch = "".join(c for c in _LETTERS if c not in "ijkz")[:nb]
    terms = [batch[nb - (a.ndim - len(c)):] + c for a, c in zip(arrays, cores)]
    return terms, batch + out_core


class _MatmulContraction(_Contraction):
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
            out = _sum_to(np.matmul(g, np.conj(np.swapaxes(b2, -1, -2))), a2.shape)
            return out.reshape(a.shape)
        out = _sum_to(np.matmul(np.conj(np.swapaxes(a2, -1, -2)), g), b2.shape)
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
    a, b = _arrays(*args[:2])
    ca = "k" if a.ndim == 1 else "ik"
    cb = "k" if b.ndim == 1 else "kj"
    out_core = ("i" if a.ndim > 1 else "") + ("j" if b.ndim > 1 else "")
    terms, out = _batched([ca, cb], [a, b], out_core)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: input operand does not have enough dimensions")
    return _MatmulContraction(terms, out, [a, b]), 2


_contraction_rules(np.matmul, "matmul", _matmul_plan, refuse=_refuse_gufunc_axes,
                       out_position=2)


def _vecdot_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = _arrays(*args[:2])
    terms, out = _batched(["k", "k"], [a, b], "")
    return _Contraction(terms, out, [a, b], conj=(True, False)), 2


def _matvec_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = _arrays(*args[:2])
    terms, out = _batched(["ik", "k"], [a, b], "i")
    return _Contraction(terms, out, [a, b]), 2


def _vecmat_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = _arrays(*args[:2])
    terms, out = _batched(["k", "kj"], [a, b], "j")
    return _Contraction(terms, out, [a, b], conj=(True, False)), 2


if hasattr(np, "vecdot"):
    _contraction_rules(np.vecdot, "vecdot", _vecdot_plan, refuse=_refuse_gufunc_axes,
                       out_position=2)
if hasattr(np, "matvec"):
    _contraction_rules(np.matvec, "matvec", _matvec_plan, refuse=_refuse_gufunc_axes,
                       out_position=2)
    _contraction_rules(np.vecmat, "vecmat", _vecmat_plan, refuse=_refuse_gufunc_axes,
                       out_position=2)


# ------------------------------------------------------------------------------ kron


class _KronContraction(_Contraction):
    """kron(a, b) as an interleaved outer product, reshaped to the output's shape."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        nd = max(a.ndim, b.ndim, 1)
        a2 = a.reshape((1,) * (nd - a.ndim) + a.shape)
        b2 = b.reshape((1,) * (nd - b.ndim) + b.shape)
        ta, tb = _LETTERS[:nd], _LETTERS[nd:2 * nd]
        super().__init__([ta, tb], "".join(p + q for p, q in zip(ta, tb)), [a2, b2])
        self.inter_shape = tuple(s for pair in zip(a2.shape, b2.shape) for s in pair)

    def cotangent(self, k: int, y_bar: np.ndarray) -> np.ndarray:
        return super().cotangent(k, y_bar.reshape(self.inter_shape))


def _kron_plan(args: tuple, kwargs: dict) -> tuple:
    a, b = _arrays(*args[:2])
    return _KronContraction(a, b), 2


_contraction_rules(np.kron, "kron", _kron_plan)


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
    project_a = _projector(a)
    nargs = len(args)

    def trace_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return (NoTangent(), ZeroTangent(), *(NoTangent(),) * nargs)
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
    a_dot = _dense(dargs[1], a)
    if a_dot is None or not _output_has_tangent(y):
        return y, ZeroTangent()
    return y, _like(np.trace(a_dot, *args, **kwargs), y)


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
    return _sum_to(np.moveaxis(g, -1, pos), like.shape)


@rrule.register(np.cross)
def cross_rrule(a, b, *args, **kwargs):
    x, w, axisa, axisb, axisc = _cross_axes(a, b, args, kwargs)
    y = np.cross(a, b, *args, **kwargs)
    project_a, project_b = _projector(a), _projector(b)
    nargs = len(args)

    def cross_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return (NoTangent(), ZeroTangent(), ZeroTangent(), *(NoTangent(),) * nargs)
        c_bar = np.moveaxis(y_bar, axisc % y.ndim, -1)
        xa, wb = np.moveaxis(x, axisa, -1), np.moveaxis(w, axisb, -1)
        a_bar = Thunk(lambda: project_a(_to_arg_layout(np.cross(np.conj(wb), c_bar), axisa, x)))
        b_bar = Thunk(lambda: project_b(_to_arg_layout(np.cross(c_bar, np.conj(xa)), axisb, w)))
        return (NoTangent(), a_bar, b_bar, *(NoTangent(),) * nargs)

    return y, cross_pullback


@frule.register(np.cross)
def cross_frule(dargs, a, b, *args, **kwargs):
    _cross_axes(a, b, args, kwargs)
    y = np.cross(a, b, *args, **kwargs)
    a_dot, b_dot = _dense(dargs[1], a), _dense(dargs[2], b)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    y_dot: Any = 0
    if a_dot is not None:
        y_dot = y_dot + np.cross(a_dot, b, *args, **kwargs)
    if b_dot is not None:
        y_dot = y_dot + np.cross(a, b_dot, *args, **kwargs)
    return y, _like(y_dot, y)


# ------------------------------------------------------------ convolve and correlate

_MODES = {0: "valid", 1: "same", 2: "full", "valid": "valid", "same": "same", "full": "full"}


def _window(mode: Any, m: int, n: int, correlate: bool) -> int:
    """Where NumPy's ``mode`` output starts within the full result."""
    mode = _MODES[mode]
    k = min(m, n)
    if mode == "full":
        return 0
    if mode == "valid":
        return k - 1
    if correlate and m < n:
        return k // 2
    return (k - 1) // 2


def _conv_rules(f: Any, name: str, correlate: bool, default_mode: str) -> None:
    sig = inspect.signature(f)

    def conv_rrule(a, v, *args, **kwargs):
        p = sig.bind(a, v, *args, **kwargs)
        p.apply_defaults()
        mode = p.arguments["mode"]
        y = f(a, v, *args, **kwargs)
        x = np.atleast_1d(np.asarray(a))
        w = np.atleast_1d(np.asarray(v))
        # correlate(a, v) is convolve(a, conj(v[::-1]))
        kernel = np.conj(w[::-1]) if correlate else w
        start = _window(mode, len(x), len(w), correlate)
        full_len = len(x) + len(w) - 1
        project_a, project_v = _projector(a), _projector(v)
        nargs = len(args)

        def conv_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            if y_bar is None:
                return (NoTangent(), ZeroTangent(), ZeroTangent(), *(NoTangent(),) * nargs)
            dtype = np.result_type(y_bar, x, w)
            # y_bar placed in the full-length result by concatenation, not by a write
            # into zeros: run on traced values (a Hessian) this stays differentiable
            full = np.concatenate([np.zeros(start, dtype), y_bar.astype(dtype),
                                   np.zeros(full_len - start - len(y_bar), dtype)])

            def a_bar_thunk():
                return project_a(np.correlate(full, kernel, "valid").reshape(np.shape(a)))

            def v_bar_thunk():
                k_bar = np.correlate(full, x, "valid")
                v_bar = np.conj(k_bar[::-1]) if correlate else k_bar
                return project_v(v_bar.reshape(np.shape(v)))

            return (NoTangent(), Thunk(a_bar_thunk), Thunk(v_bar_thunk),
                    *(NoTangent(),) * nargs)

        conv_pullback.__name__ = conv_pullback.__qualname__ = f"{name}_pullback"
        return y, conv_pullback

    def conv_frule(dargs, a, v, *args, **kwargs):
        y = f(a, v, *args, **kwargs)
        a_dot, v_dot = _dense(dargs[1], a), _dense(dargs[2], v)
        if a_dot is None and v_dot is None:
            return y, ZeroTangent()
        y_dot: Any = 0
        if a_dot is not None:
            y_dot = y_dot + f(a_dot, v, *args, **kwargs)
        if v_dot is not None:
            y_dot = y_dot + f(a, v_dot, *args, **kwargs)
        return y, _like(y_dot, y)

    conv_rrule.__name__ = conv_rrule.__qualname__ = f"{name}_rrule"
    conv_frule.__name__ = conv_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(conv_rrule)
    frule.register(f)(conv_frule)


_conv_rules(np.convolve, "convolve", correlate=False, default_mode="full")
_conv_rules(np.correlate, "correlate", correlate=True, default_mode="valid")


# ---------------------------------------------------------------------------- interp

_INTERP_SIG = inspect.signature(np.interp)


class _Interp:
    """Which samples each query point mixes, with which weights, and the slope."""

    def __init__(self, x: Any, xp: Any, fp: Any, left: Any, right: Any, period: Any) -> None:
        xq = np.asarray(x, dtype=np.float64)
        xp = np.asarray(xp, dtype=np.float64)
        fp = np.asarray(fp)
        index = np.arange(len(xp))
        if period is not None:
            period = abs(float(period))
            xq = xq % period
            xp = xp % period
            order = np.argsort(xp, kind="stable")
            xp = np.concatenate([xp[order][-1:] - period, xp[order], xp[order][:1] + period])
            index = np.concatenate([order[-1:], order, order[:1]])
            left = right = None
            self.below = self.above = np.zeros(xq.shape, dtype=bool)
        else:
            self.below = xq < xp[0]
            self.above = xq > xp[-1]
        inside = ~(self.below | self.above)
        if len(xp) == 1:
            j = np.zeros(xq.shape, dtype=np.intp)
            self.lo, self.hi = index[j], index[j]
            self.w_lo = np.where(inside, 1.0, 0.0)
            self.w_hi = np.zeros(xq.shape)
            self.slope = np.zeros(xq.shape, dtype=np.result_type(fp, np.float64))
            self.d_xp_lo = self.d_xp_hi = self.slope
        else:
            j = np.clip(np.searchsorted(xp, xq, side="right") - 1, 0, len(xp) - 2)
            dx = xp[j + 1] - xp[j]
            t = np.where(inside, (xq - xp[j]) / dx, 0.0)
            self.lo, self.hi = index[j], index[j + 1]
            self.w_lo = np.where(inside, 1 - t, 0.0)
            self.w_hi = np.where(inside, t, 0.0)
            self.slope = np.where(inside, (fp[index[j + 1]] - fp[index[j]]) / dx, 0)
            # y = fp_lo + slope (x - xp_lo): dy/dxp_lo = slope (t - 1), dy/dxp_hi = -slope t
            self.d_xp_lo = self.slope * (t - 1)
            self.d_xp_hi = -self.slope * t
        self.n = len(fp)
        self.left_is_fp = left is None
        self.right_is_fp = right is None

    def xp_bar(self, y_bar: np.ndarray) -> np.ndarray:
        out = np.zeros(self.n)
        np.add.at(out, self.lo.ravel(), np.real(np.conj(self.d_xp_lo) * y_bar).ravel())
        np.add.at(out, self.hi.ravel(), np.real(np.conj(self.d_xp_hi) * y_bar).ravel())
        return out

    def xp_pushforward(self, xp_dot: np.ndarray) -> np.ndarray:
        return self.d_xp_lo * xp_dot[self.lo] + self.d_xp_hi * xp_dot[self.hi]

    def fp_bar(self, y_bar: np.ndarray) -> np.ndarray:
        # an integer y_bar (the cotangent 1) must not truncate the interpolation weights
        out = np.zeros(self.n, dtype=np.result_type(y_bar.dtype, self.w_lo.dtype))
        np.add.at(out, self.lo.ravel(), (self.w_lo * y_bar).ravel())
        np.add.at(out, self.hi.ravel(), (self.w_hi * y_bar).ravel())
        if self.left_is_fp:
            out[0] += np.sum(y_bar[self.below])
        if self.right_is_fp:
            out[-1] += np.sum(y_bar[self.above])
        return out


@rrule.register(np.interp)
def interp_rrule(x, xp, fp, *args, **kwargs):
    p = _INTERP_SIG.bind(x, xp, fp, *args, **kwargs)
    p.apply_defaults()
    q = p.arguments
    y = np.interp(x, xp, fp, *args, **kwargs)
    geometry = _Interp(x, xp, fp, q["left"], q["right"], q["period"])
    project_x, project_xp, project_fp = _projector(x), _projector(xp), _projector(fp)
    extra = [_projector(v) if i < 2 and v is not None else None for i, v in enumerate(args)]
    nargs = len(args)

    def interp_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return (NoTangent(), project_x(ZeroTangent()), project_xp(ZeroTangent()),
                    project_fp(ZeroTangent()),
                    *(NoTangent() if e is None else ZeroTangent() for e in extra))
        y_bar = np.broadcast_to(y_bar, np.shape(geometry.below))
        x_bar = Thunk(lambda: project_x(np.real(np.conj(geometry.slope) * y_bar)))
        xp_bar = Thunk(lambda: project_xp(geometry.xp_bar(y_bar)))
        fp_bar = Thunk(lambda: project_fp(geometry.fp_bar(y_bar)))
        rest: list = [NoTangent()] * nargs
        for i, (project, mask) in enumerate(zip(extra, (geometry.below, geometry.above))):
            if project is not None and q["period"] is None:
                rest[i] = project(np.sum(y_bar[mask]))
            elif project is not None:
                rest[i] = project(ZeroTangent())
        return (NoTangent(), x_bar, xp_bar, fp_bar, *rest)

    return y, interp_pullback


@frule.register(np.interp)
def interp_frule(dargs, x, xp, fp, *args, **kwargs):
    p = _INTERP_SIG.bind(x, xp, fp, *args, **kwargs)
    p.apply_defaults()
    q = p.arguments
    y = np.interp(x, xp, fp, *args, **kwargs)
    geometry = _Interp(x, xp, fp, q["left"], q["right"], q["period"])
    x_dot, xp_dot, fp_dot = _dense(dargs[1], x), _dense(dargs[2], xp), _dense(dargs[3], fp)
    y_dot: Any = 0
    any_tangent = False
    if xp_dot is not None:
        y_dot = y_dot + geometry.xp_pushforward(np.asarray(xp_dot))
        any_tangent = True
    if x_dot is not None:
        y_dot = y_dot + geometry.slope * x_dot
        any_tangent = True
    if fp_dot is not None:
        fp_dot = np.asarray(fp_dot)
        y_dot = y_dot + (fp_dot[geometry.lo] * geometry.w_lo + fp_dot[geometry.hi] * geometry.w_hi)
        if geometry.left_is_fp:
            y_dot = y_dot + np.where(geometry.below, fp_dot[0], 0)
        if geometry.right_is_fp:
            y_dot = y_dot + np.where(geometry.above, fp_dot[-1], 0)
        any_tangent = True
    if q["period"] is None:
        for i, mask in enumerate((geometry.below, geometry.above)):
            if i < len(args) and args[i] is not None:
                d = _dense(dargs[4 + i], args[i])
                if d is not None:
                    y_dot = y_dot + np.where(mask, d, 0)
                    any_tangent = True
    if not any_tangent:
        return y, ZeroTangent()
    return y, _like(y_dot, y)


# --------------------------------------------------------------------------- polyval


def _powers(x: np.ndarray, n: int) -> np.ndarray:
    """x[..., None] ** [n-1, ..., 1, 0]."""
    return x[..., None] ** np.arange(n - 1, -1, -1)


@rrule.register(np.polyval)
def polyval_rrule(p, x):
    y = np.polyval(p, x)
    coefs, xs = np.asarray(p), np.asarray(x)
    if coefs.ndim != 1:
        raise NotImplementedError("the rule for numpy.polyval supports 1-d coefficients only")
    project_p, project_x = _projector(p), _projector(x)

    def polyval_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return (NoTangent(), ZeroTangent(), ZeroTangent())
        y_bar = np.broadcast_to(y_bar, np.shape(y))

        def p_bar_thunk():
            v = np.conj(_powers(xs, len(coefs))) * y_bar[..., None]
            # (reshape(-1, 0) of no coefficients is ambiguous to NumPy)
            return project_p(v.reshape(int(np.prod(v.shape[:-1])), len(coefs)).sum(axis=0))

        def x_bar_thunk():
            slope = np.polyval(np.polyder(coefs), xs) if len(coefs) > 1 else np.zeros(xs.shape)
            return project_x(np.conj(slope) * y_bar)

        return (NoTangent(), Thunk(p_bar_thunk), Thunk(x_bar_thunk))

    return y, polyval_pullback


@frule.register(np.polyval)
def polyval_frule(dargs, p, x):
    y = np.polyval(p, x)
    coefs, xs = np.asarray(p), np.asarray(x)
    if coefs.ndim != 1:
        raise NotImplementedError("the rule for numpy.polyval supports 1-d coefficients only")
    p_dot, x_dot = _dense(dargs[1], p), _dense(dargs[2], x)
    if p_dot is None and x_dot is None:
        return y, ZeroTangent()
    y_dot: Any = 0
    if p_dot is not None:
        y_dot = y_dot + np.polyval(p_dot, xs)
    if x_dot is not None and len(coefs) > 1:
        y_dot = y_dot + np.polyval(np.polyder(coefs), xs) * x_dot
    return y, _like(np.broadcast_to(y_dot, np.shape(y)), y)
