"""The einsum engine: the derivatives of every product that sums over shared axes
(``einsum``, ``dot``, ``tensordot``, ``matmul``, ``kron``...), and the rule builder the
contraction rules share (not a rule module: ``_`` names are skipped).

The cotangent of operand k is the einsum of the other (conjugated) operands with
``y_bar``; indices only operand k carries are broadcast back, repeated indices (``"ii"``)
put the cotangent on the diagonal, size-1 broadcast dimensions are summed.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from chainrules.core import NoTangent, Thunk, ZeroTangent
from chainrules.rules import _kit as kit
from chainrules.rules.numpy._linear import scatter

__all__ = [
    "LETTERS",
    "Contraction",
    "as_arrays",
    "bilinear_frule",
    "contraction_cotangents",
    "contraction_rules",
    "optimize_option",
    "parse_einsum",
    "refuse_gufunc_axes",
    "sublist_to_subscripts",
]

LETTERS = string.ascii_letters


def optimize_option(kwargs: dict) -> Any:
    """einsum's ``optimize=`` for the derivative contractions: a path computed for the
    primal's operands does not fit theirs, so an explicit path becomes True."""
    opt = kwargs.get("optimize", False)
    return opt if isinstance(opt, (bool, str)) else True


def refuse_gufunc_axes(f: Any, kwargs: dict, args: tuple = (),
                       out_position: int | None = None) -> None:
    """Refuse ``out=`` and the gufunc keywords ``axes=``, ``axis=``, ``where=``."""
    kit.refuse_out(f, kwargs, args, out_position)
    for key in ("axes", "axis"):
        if kwargs.get(key) is not None:
            raise NotImplementedError(
                f"the rule for numpy.{f.__name__} does not support {key}=; move the core "
                f"axes last with np.moveaxis (which has rules) and call it without {key}="
            )
    if kwargs.get("where", True) is not True:
        raise NotImplementedError(f"the rule for numpy.{f.__name__} does not support where=")


def parse_einsum(subscripts: str, shapes: list[tuple]) -> tuple[list[str], str]:
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
    free = [c for c in LETTERS if c not in used]
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


def sublist_to_subscripts(operands: tuple) -> tuple[str, list, list[int]]:
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) -> ("ab,bc->ac", [a, b], positions of a, b)."""

    def letters(sub: Any) -> str:
        return "".join("..." if s is Ellipsis else LETTERS[int(s)] for s in sub)

    n = len(operands)
    pairs = n // 2
    ops = [operands[2 * i] for i in range(pairs)]
    subs = ",".join(letters(operands[2 * i + 1]) for i in range(pairs))
    if n % 2:
        subs += "->" + letters(operands[-1])
    return subs, ops, [2 * i for i in range(pairs)]


class Contraction:
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

    def _empty(self, *more: Any) -> bool:
        """Whether an operand (or one of ``more``) has no elements."""
        return any(np.size(v) == 0 for v in (*self.ops, *more))

    def _c(self, k: int, v: Any) -> Any:
        return np.conj(v) if self.conj[k] else v

    def cotangent(self, k: int, y_bar: np.ndarray) -> np.ndarray:
        """The cotangent of operand k (in the operand's shape)."""
        t = self.terms[k]
        x = self.ops[k]
        if self._empty(y_bar):
            # a sum over an empty index, or an empty operand: zero, said explicitly
            # (NumPy's einsum of empty operands may hand back uninitialised memory)
            return np.zeros(x.shape, dtype=np.result_type(x, y_bar))
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
            # g onto the diagonal of a repeated index: summed into the diagonal's flat
            # positions by np.bincount (not written into a view of zeros: run on values of
            # an outer trace, for a second derivative, this stays differentiable)
            where = np.einsum(t + "->" + uniq, np.arange(x.size).reshape(x.shape))
            g = scatter(g, where, x.size).reshape(x.shape).astype(np.result_type(g, x),
                                                                  copy=False)
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
            if self._empty():
                term = np.zeros(term.shape, dtype=term.dtype)
            y_dot = term if y_dot is None else y_dot + term
        return y_dot


def contraction_cotangents(c: Contraction, y_bar: Any, originals: list,
                               projectors: list) -> list:
    """Thunked cotangents of each original argument (reshaped from its operand)."""
    bars: list = []
    for k, (orig, project) in enumerate(zip(originals, projectors)):
        if not kit.is_differentiable(orig):
            bars.append(NoTangent())
            continue
        shape = np.shape(orig)

        def operand_bar(k: int = k, shape: tuple = shape, project: Any = project) -> Any:
            return project(c.cotangent(k, y_bar).reshape(shape))

        bars.append(Thunk(operand_bar))
    return bars


def contraction_rules(f: Any, name: str, plan: Any, refuse: Any = kit.refuse_out,
                      out_position: int | None = None) -> tuple:
    """Register rules for ``f(a, b, ...)`` given ``plan(args, kwargs) -> (contraction,
    number of differentiable leading args)``; other positional args get NoTangent().
    ``out_position``: where ``f`` takes ``out`` positionally (refused there too).
    Returns the ``(frule, rrule)`` pair, for registering on other names of ``f``."""

    def contraction_rrule(*args, **kwargs):
        if (delegated := kit.foreign_rule(kit.core.rrule, f, args, kwargs)) is not False:
            return delegated  # dask / torch / JAX operands: their namespace's rule
        refuse(f, kwargs, args, out_position)
        y = f(*args, **kwargs)
        c, nops = plan(args, kwargs)
        originals = list(args[:nops])
        projectors = [
            kit.array_projector(a) if kit.is_differentiable(a) else None for a in originals
        ]
        rest = (NoTangent(),) * (len(args) - nops)
        has_tangent = kit.is_differentiable(y)
        zeros = (NoTangent(), *(NoTangent() if p is None else ZeroTangent() for p in projectors),
                 *rest)

        @kit.zero_guard(zeros)
        def contraction_pullback(y_bar):
            if not has_tangent:
                return zeros
            return (NoTangent(),
                    *contraction_cotangents(c, np.asarray(y_bar), originals, projectors), *rest)

        return y, contraction_pullback

    def contraction_frule(dargs, *args, **kwargs):
        if (delegated := kit.foreign_rule(kit.core.frule, f, args, kwargs, dargs)) is not False:
            return delegated
        refuse(f, kwargs, args, out_position)
        y = f(*args, **kwargs)
        c, nops = plan(args, kwargs)
        dots = [kit.dense_tangent(d, a, zeros=False) if kit.is_differentiable(a) else None
                for d, a in zip(dargs[1:1 + nops], args)]
        if all(d is None for d in dots) or not kit.is_differentiable(y):
            return y, ZeroTangent()
        dots = [None if d is None else np.reshape(d, op.shape) for d, op in zip(dots, c.ops)]
        return y, kit.fit_output(np.reshape(c.pushforward(dots), np.shape(y)), y)

    kit.define_rules(f, frule_fn=contraction_frule, rrule_fn=contraction_rrule, name=name)
    return contraction_frule, contraction_rrule


def bilinear_frule(f: Any, dargs: tuple, a: Any, b: Any, *args: Any, **kwargs: Any) -> tuple:
    """``(y, y_dot)`` of ``y = f(a, b, *args, **kwargs)`` bilinear in ``(a, b)``:
    ``y_dot = f(a_dot, b) + f(a, b_dot)``, the terms of zero tangents left out."""
    y = f(a, b, *args, **kwargs)
    a_dot = kit.dense_tangent(dargs[1], a, zeros=False)
    b_dot = kit.dense_tangent(dargs[2], b, zeros=False)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    y_dot: Any = 0
    if a_dot is not None:
        y_dot = y_dot + f(a_dot, b, *args, **kwargs)
    if b_dot is not None:
        y_dot = y_dot + f(a, b_dot, *args, **kwargs)
    return y, kit.fit_output(y_dot, y)


def as_arrays(*xs: Any) -> list[np.ndarray]:
    """The arguments as NumPy arrays."""
    return [np.asarray(x) for x in xs]


