"""Reverse mode: the trace that records a tape, and the backward pass over it.

Each operation on tracers of a `ReverseTrace` runs the rrule of the callable and
records ``(pullback, parents)`` on the tape (a ``scalar_rule`` records its partials
instead); the backward pass walks the tape once, newest first, accumulating the
cotangent of every entry.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import (
    AbstractTangent,
    InplaceableThunk,
    NoTangent,
    NotImplementedTangent,
    OutArgumentError,
    ProjectTo,
    RuleConfig,
    Thunk,
    ZeroTangent,
    cached_lookup,
    iadd,
    is_foreign_type,
    namespace_of,
    rrule,
    unthunk,
)

from . import _native
from ._arraylib import check_opaque, is_graph_type
from ._closures import _captures_outer_only, _captures_tracers, _detach_closure
from ._dispatch import (
    _PULLBACK_OWNER,
    _RULE_CRASHES,
    _crash_error,
    _not_twice_differentiable,
    _run_mixed,
    _run_pullback_traced,
    _traceable,
    _weakrefable,
    call,
    project_traced,
)
from ._errors import (
    ADError,
    ClosureTangentError,
    ControlFlowError,
    MutationError,
    TracerConversionError,
    UntrackedOutputError,
    func_name,
)
from ._inplace import WritePullback
from ._memory import MIN_BYTES, SLIM, slim
from ._reverse_facts import (
    _INDEX,
    _INDEX_RULE,
    _MISS,
    _fast_fill,
    _fast_get,
    _PlainRule,
    _scalar_partials,
    _scalar_rule_fns,
)
from ._tracer import (
    _EMPTY,
    _NO_RULE,
    EndedTrace,
    Tracer,
    _boxable,
    deep_primal,
    mark_input,
    new_level,
)
from ._tree import (
    _cotangent_structure,
    _deep_struct_primal,
    _find_tracers,
    _get_path,
    _is_constant_like,
    _is_struct,
    _leaves,
    _replace_leaves,
    _top_trace_deep,
)

__all__ = ["FreshInplaceableThunk", "ReverseTrace"]

_rr_lookup = cached_lookup(rrule)
_getitem = operator.getitem
_ndarray = np.ndarray
_FunctionType = type(lambda: None)
_ZERO = ZeroTangent()
_NO = NoTangent()


class FreshInplaceableThunk(InplaceableThunk):
    """An ``InplaceableThunk`` whose value is a newly allocated array (the AD may own it).

    ``index`` and ``value`` say what it adds where (``acc[index] += value``), so the
    AD can accumulate it without calling ``add_fn`` (see ``_ad_rules``).
    """

    __slots__ = ("index", "value")

class _MultiOut:
    """Tape entry of an operation with several differentiable outputs."""

    __slots__ = ("leaves", "parents", "pullback", "y")

    def __init__(self, pullback: Callable, parents: list, y: Any) -> None:
        self.pullback = pullback
        self.parents = parents
        self.y = y
        self.leaves: list[tuple[tuple, int]] = []


class _ScalarNode:
    """Tape entry of a ``scalar_rule`` call on values of an outer trace (a higher-order
    derivative): its partials' own code is traced in the backward pass.

    A call on plain values is recorded as the tuple ``(part, args, y, parents)`` instead
    (cheaper to make), whose cotangents `_scalar_backward` computes."""

    __slots__ = ("args", "parents", "part", "y")

    def __init__(self, part: Any, args: tuple, y: Any, parents: list) -> None:
        self.part = part
        self.args = args
        self.y = y
        self.parents = parents


def _scalar_backward(entry: tuple, b: Any, bars: list, owned: bytearray, tape: list) -> None:
    """The cotangents of a scalar node ``(part, args, y, parents)`` for a plain ``b``: for
    each traced argument, ``conj(partial) * b``."""
    part, args, y, parents = entry
    fn = part.fn
    if part.uses_xp or part.uses_wrt:
        kw: dict = {"y": y} if part.uses_output else {}
        if part.uses_xp:  # partials written against xp (the array-API rules)
            # NumPy's namespace for one array argument (namespace_of's answer, at a
            # tenth of its cost)
            kw["xp"] = (np if len(args) == 1 and type(args[0]) is _ndarray
                        else namespace_of(args))
        if part.uses_wrt:
            kw["wrt"] = _wrt(part, parents)
        p = fn(*args, **kw)
    elif part.uses_output:
        p = fn(*args, y=y)
    else:
        p = fn(*args)
    ps = p if part.nargs > 1 else (p,)
    tb = type(b)
    # 1.0 * b is b itself (same values, dtype and shape) for a real b: no new array
    # (a complex b is excluded: (1+0j) * b turns an infinite part into nan)
    unit_ok = tb is float or (tb is _ndarray and b.ndim and b.dtype.kind == "f")
    for par in parents:
        pos = par[0] - 1
        p = ps[pos]
        x = args[pos]
        tp = type(p)
        if unit_ok and tp is float and p == 1.0:
            g = b
        else:
            if tp is _ndarray:
                if p.dtype.kind == "c":
                    p = p.conj()
            elif tp is complex or isinstance(p, np.complexfloating):
                p = p.conjugate()
            g = p * b
        tx = type(x)
        if tx is not type(g) or (tx is _ndarray and (
                g.shape != x.shape or (g.dtype is not x.dtype and g.dtype != x.dtype))):
            g = _project_plain(x, g)
        j = par[1]
        if bars[j] is None and type(tape[j]) is not _Leaf:
            bars[j] = g  # the first cotangent of j (not owned: never written into)
        else:
            _accumulate(bars, owned, j, g, tape)


def _wrt(part: Any, parents: list) -> tuple:
    """The ``wrt`` of a scalar node's partials: True for each traced argument."""
    wrt = [False] * part.nargs
    for par in parents:
        wrt[par[0] - 1] = True
    return tuple(wrt)


def _index_backward(entry: tuple, b: Any, bars: list, owned: bytearray, tape: list) -> bool:
    """Add the cotangent ``b`` of ``x[i]`` into ``x``'s at ``i`` (``entry = (x, i, j)``,
    ``j`` the tape index of ``x``), as `_accumulate` adds the rule's
    FreshInplaceableThunk; False (nothing done) for a cotangent that is not a plain
    number or array, or a parent that is not a plain entry."""
    x, i, j = entry
    tb = type(b)
    if tb is Tracer:  # (first: a tracer passes isinstance tests for its primal's type)
        return False
    if tb is not float and tb is not _ndarray and not isinstance(b, _PLAIN_NUMBERS):
        return False
    cur = bars[j]
    if type(tape[j]) is _Leaf or (cur is not None and not owned[j]):
        return False
    if x.dtype.kind == "f" and (tb is _ndarray or tb is complex
                                or isinstance(b, np.complexfloating)):
        b = np.real(b)  # project onto the real array's tangent space
    if cur is None:
        acc = np.zeros(x.shape, dtype=x.dtype)
        acc[i] = b
        bars[j] = acc
        owned[j] = 1
    else:
        cur[i] += b
    return True


_PLAIN_NUMBERS = (float, complex, np.floating, np.complexfloating)


def _scalar_backward_traced(part: Any, args: tuple, y: Any, parents: list, b: Any,
                            bars: list, owned: bytearray, tape: list) -> None:
    """The cotangents of a scalar node on values of an outer trace (``b`` or the
    arguments): the partials' own code is traced."""
    ps = _partials(part, y, args, True, parents)
    for par in parents:
        pos = par[0] - 1
        p = ps[pos]
        x = args[pos]
        if np.iscomplexobj(deep_primal(p)):
            p = call(np.conj, p)
        g = p * b
        if type(x) is Tracer or type(g) is Tracer:
            g = project_traced(ProjectTo(deep_primal(x)), g)
        else:
            g = _project_plain(x, g)
        _accumulate(bars, owned, par[1], g, tape)


def _project_plain(x: Any, g: Any) -> Any:
    tx = type(x)
    tg = type(g)
    if tg is _ndarray and tx is not _ndarray and g.ndim:
        g = g.sum()  # a scalar broadcast against an array: sum the broadcast away
        tg = type(g)
    if tx is float:
        return g if tg is float else ProjectTo(x)(g)
    if tx is _ndarray:
        if tg is _ndarray and g.shape == x.shape and g.dtype == x.dtype:
            return g
        return ProjectTo(x)(g)
    if tx is tg and tx is not complex:
        return g
    return ProjectTo(x)(g)


def _partials(part: Any, y: Any, args: tuple, traced: bool, parents: list) -> tuple:
    wrt = _wrt(part, parents) if part.uses_wrt else None
    if not traced:
        return part(y, args, wrt)[0]
    fn = _traceable(part.fn)
    kw: dict = {"y": y} if part.uses_output else {}
    if part.uses_xp:
        kw["xp"] = namespace_of(tuple(deep_primal(a) for a in args))
    if wrt is not None:
        kw["wrt"] = wrt
    p = call(fn, *args, **kw)
    return p if part.nargs > 1 else (p,)


class _Leaf:
    """Tape entry of one output of a `_MultiOut`."""

    __slots__ = ("node",)

    def __init__(self, node: int) -> None:
        self.node = node


_INPUT = (None, ())

class ReverseTrace:
    """One level of reverse-mode differentiation: a tape of ``(pullback, parents)``.

    ``parents`` lists ``(position, index)`` pairs: the cotangent at ``position`` of
    the pullback's result belongs to the tape entry ``index``; a third element, a
    path, picks it out of a structured cotangent.
    """

    __slots__ = ("config", "ctype", "level", "tape")
    mode = "rrule"  # the rule kind it applies (for messages)
    ended = False  # see `end`

    def __init__(self, config: RuleConfig) -> None:
        self.level = new_level()
        self.tape: list[Any] = []
        self.config = config
        self.ctype = type(config)

    def end(self) -> None:
        """Mark the trace ended: any later operation on its tracers raises
        `DeadTracerError` (the class swap costs the live traces nothing); the tape still
        serves the pullback."""
        if type(self) is ReverseTrace:
            self.__class__ = _EndedReverseTrace

    def decided(self, leaf: Any, calls: tuple, where: str) -> Tracer:
        """A tracer of ``leaf``, a value decided by branching on traced values (see
        ``_closures._watched``), whose cotangent raises `ControlFlowError`."""

        def decided_pullback(y_bar: Any) -> tuple:
            raise ControlFlowError(calls, where)

        idx = len(self.tape)
        self.tape.append((decided_pullback, []))
        return Tracer(leaf, self, idx)

    def binop(self, f: Any, a: Any, b: Any) -> Any:
        """``process`` for an operator on two arguments, with the common cases inlined
        (a tracer of this trace or a plain float/int/array on each side)."""
        ta = type(a)
        if ta is Tracer:
            if a._trace is not self or type(a.primal) is Tracer:
                return self.process(f, (a, b), _EMPTY)
            pa = a.primal
            parents = [(1, a.aux)]
        elif ta is float or ta is int or ta is _ndarray:
            pa = a
            parents = []
        else:
            return self.process(f, (a, b), _EMPTY)
        tb = type(b)
        if tb is Tracer:
            if b._trace is not self or type(b.primal) is Tracer:
                return self.process(f, (a, b), _EMPTY)
            pb = b.primal
            parents.append((2, b.aux))
        elif tb is float or tb is int or tb is _ndarray:
            pb = b
        else:
            return self.process(f, (a, b), _EMPTY)
        key = (f, type(pa), type(pb), self.ctype)
        part = _fast_get(key, _MISS)
        if part is _MISS:
            part = _fast_fill(key, f, key[1:3], self.config)
        if part is _NO_RULE:
            return _NO_RULE
        if type(part) is _PlainRule:  # an ordinary rrule: its pullback recorded
            res = part.rule(pa, pb)
            if res is None:
                return _NO_RULE
            return self._record_rule(f, res, parents)
        if part is None:
            return self.process(f, (a, b), _EMPTY)
        y = f(pa, pb)
        ty = type(y)
        if (ty is _ndarray and y.dtype.kind not in "fc") or (
                ty is not float and ty is not _ndarray and not _boxable(y)):
            return y
        tape = self.tape
        idx = len(tape)
        args, ys = (slim(part, (pa, pb), y, parents) if part in SLIM and ty is _ndarray
                    and y.nbytes >= MIN_BYTES else ((pa, pb), y))
        tape.append((part, args, ys, parents))
        return Tracer(y, self, idx)

    def new_input(self, x: Any) -> Tracer:
        idx = len(self.tape)
        self.tape.append(_INPUT)
        return mark_input(Tracer(x, self, idx))

    def process(self, f: Any, args: tuple, kwargs: dict, soft: bool = False) -> Any:
        """Apply the rrule of ``f`` to ``args``; ``_NO_RULE`` when there is none."""
        if len(args) == 1 and not kwargs:
            # one tracer of this trace holding a plain value, and a scalar_rule for it
            # (np.sin(x)): what the general path below does, without its bookkeeping
            a = args[0]
            if type(a) is Tracer and a._trace is self:
                p = a.primal
                tp = type(p)
                if tp is not Tracer:
                    key = (f, tp, self.ctype)
                    try:
                        part = _fast_get(key, _MISS)
                    except TypeError:  # an unhashable callable: the general path
                        part = None
                    if part is _MISS:
                        part = _fast_fill(key, f, (tp,), self.config)
                    if part is _NO_RULE:
                        return _NO_RULE
                    if type(part) is _PlainRule:
                        res = part.rule(p)
                        if res is None:
                            return _NO_RULE
                        return self._record_rule(f, res, [(1, a.aux)])
                    if part is not None:
                        y = f(p)
                        ty = type(y)
                        if ty is _ndarray:
                            if y.dtype.kind not in "fc":
                                return y
                        elif ty is not float and not _boxable(y):
                            return y
                        tape = self.tape
                        idx = len(tape)
                        parents = [(1, a.aux)]
                        args, ys = (slim(part, (p,), y, parents) if part in SLIM
                                    and ty is _ndarray and y.nbytes >= MIN_BYTES
                                    else ((p,), y))
                        tape.append((part, args, ys, parents))
                        return Tracer(y, self, idx)
        elif f is _getitem and len(args) == 2 and type(args[1]) is int and not kwargs:
            # x[i] of a float array (a loop over its elements): an index node, whose
            # cotangent is added into x's accumulator in place (as the rule's
            # FreshInplaceableThunk would be), without the rule's closures
            a = args[0]
            if type(a) is Tracer and a._trace is self and type(a.primal) is _ndarray:
                key = (f, _ndarray, int, self.ctype)
                kind = _fast_get(key, _MISS)
                if kind is _MISS:
                    kind = _fast_fill(key, f, (_ndarray, int), self.config)
                if kind is _INDEX:
                    p = a.primal
                    i = args[1]
                    y = p[i]
                    if p.dtype.kind not in "fc":
                        return y
                    tape = self.tape
                    idx = len(tape)
                    tape.append((p, i, a.aux))
                    return Tracer(y, self, idx)
        primals = list(args)
        parents: list = []
        mixed = False
        simple = True  # no structure or closure among the arguments
        for i, a in enumerate(args):
            ta = type(a)
            if ta is Tracer:
                if a._trace is self:
                    p = a.primal
                    primals[i] = p
                    parents.append((i + 1, a.aux))
                    if type(p) is Tracer:
                        mixed = True
                else:
                    mixed = True
            elif ta is float or ta is _ndarray or ta is int:
                pass
            elif is_graph_type(ta):  # a dask array: refused if its graph hides a tracer
                check_opaque(a, f"argument {i} of {func_name(f)}")
            elif _is_struct(a):
                simple = False
                found: list = []
                primals[i] = _find_tracers(a, self, (), found)
                for path, idx in found:
                    parents.append((i + 1, idx, path))
                if _top_trace_deep(primals[i], None) is not None:
                    mixed = True
            elif ta is _FunctionType and a.__closure__ is not None:
                simple = False
                found = []
                primals[i] = _detach_closure(a, self, found)
                for path, idx in found:
                    parents.append((i + 1, idx, path, a))
        if mixed:
            types_ = tuple(type(_deep_struct_primal(p)) for p in primals)
        elif len(primals) == 2:
            types_ = (type(primals[0]), type(primals[1]))
        elif len(primals) == 1:
            types_ = (type(primals[0]),)
        else:
            types_ = tuple(map(type, primals))
        if simple and not mixed:
            # plain values and tracers of this trace: the cached fact of the call
            key = (f, *types_, self.ctype)
            try:
                fact = _fast_get(key, _MISS)
            except TypeError:  # an unhashable callable or argument type
                fact = None
            if fact is _MISS:
                fact = _fast_fill(key, f, types_, self.config)
            if fact is _NO_RULE:
                return _NO_RULE
            if type(fact) is _PlainRule:
                res = fact.rule(*primals, **kwargs)
                if res is None:
                    return _NO_RULE
                return self._record_rule(f, res, parents)
        hit = _rr_lookup(f, types_, self.config)
        if hit is None:
            return _NO_RULE
        rule, takes_config, takes_instance = hit
        if takes_instance and _top_trace_deep(f, None) is not None:
            found = []
            fp = _find_tracers(f, self, (), found)
            if found or _top_trace_deep(fp, None) is not None:
                # A callable object holding traced fields: trace into its __call__ so
                # the fields' derivatives are followed.
                return _NO_RULE
        if takes_config and (_captures_tracers(primals) or (
                takes_instance and _captures_tracers(list(getattr(f, "__dict__", {}).values())))):
            # (a function argument closing over an outer trace's values: traced into,
            # unless the rule is written to run on them, its code traced)
            if takes_instance or not (getattr(rule, "closures_of_outer_traces", False)
                                      and _captures_outer_only(primals, self)):
                return _NO_RULE
            mixed = True
        call_args = tuple(primals)
        if takes_instance:
            call_args = (f, *call_args)
        if takes_config:
            call_args = (self.config, *call_args)
        part = _scalar_rule_fns.get(rule, _NO_RULE)
        if part is _NO_RULE:
            part = _scalar_partials(f, rule)
        if part is not None and not kwargs and part.nout == 1 and not any(
                map(is_foreign_type, types_)):  # (not on foreign arrays: see above)
            # A scalar_rule: record the partials instead of a pullback closure (its
            # derivatives_given_output; no projector objects for scalar chains).
            y = call(f, *call_args) if mixed else f(*call_args)
            ty = type(y)
            if ty is not float and ty is not _ndarray and not _boxable(y):
                return y
            if ty is _ndarray and y.dtype.kind not in "fc":
                return y
            idx = len(self.tape)
            if mixed:
                self.tape.append(_ScalarNode(part, call_args, y, parents))
            else:
                args, ys = (slim(part, call_args, y, parents) if part in SLIM
                            and ty is _ndarray and y.nbytes >= MIN_BYTES
                            else (call_args, y))
                self.tape.append((part, args, ys, parents))
            return Tracer(y, self, idx)
        if mixed:
            res = _run_mixed(rule, f, call_args, kwargs)
        else:
            res = rule(*call_args, **kwargs)
        if res is None:
            return _NO_RULE
        return self._record_rule(f, res, parents)

    def _record_rule(self, f: Any, res: tuple, parents: list) -> Any:
        """Record ``(y, pullback) = res``, a rule's answer for ``f``; the traced output."""
        y, pullback = res
        if type(y) is Tracer and y._trace is self:
            return y  # the rule returned one of its inputs unchanged (identity-like)
        tape = self.tape
        if _boxable(y):
            idx = len(tape)
            tape.append((pullback, parents))
            return Tracer(y, self, idx)
        paths: list = []
        _leaves(y, (), paths)
        if not paths:
            if not _is_constant_like(y):
                raise UntrackedOutputError(f, f"a {type(y).__name__}")
            return y
        node = _MultiOut(pullback, parents, y)
        nidx = len(tape)
        tape.append(node)

        def make(path: tuple, leaf: Any) -> Tracer:
            idx = len(tape)
            tape.append(_Leaf(nidx))
            node.leaves.append((path, idx))
            return Tracer(leaf, self, idx)

        return _replace_leaves(y, (), make)

    def backward(self, seeds: list[tuple[int, Any]], start: int = 0,
                 free: bool = False) -> list:
        """Run the tape backwards from ``seeds`` (``(index, cotangent)``); return the bars
        of the inputs (the others are dropped once pulled back, so that the backward
        pass holds only the cotangents still to be pulled back). ``free``: the tape is
        used once; each entry (its pullback, its values) is dropped once it has run."""
        tape = self.tape
        n = len(tape)
        bars: list = [None] * n
        owned = bytearray(n)
        for idx, s in seeds:
            _accumulate(bars, owned, idx, s, tape)
        del seeds
        if _native.ON[0]:  # the loop in C (_tape.c), with `_step` for every other entry
            _native.backward(self._step, bars, owned, tape, start, free)
            return bars
        step = self._step
        for i in range(n - 1, start - 1, -1):
            b = bars[i]
            if b is None:
                continue
            entry = tape[i]
            te = type(entry)
            if entry is _INPUT or te is _Leaf:
                continue  # (an input's cotangent is the answer; a leaf's, its node's)
            if te is tuple and len(entry) == 4 and (type(b) is _ndarray or type(b) is float):
                _scalar_backward(entry, b, bars, owned, tape)  # a scalar_rule's call
            elif te is tuple and len(entry) == 3 and _index_backward(entry, b, bars, owned,
                                                                       tape):
                pass  # x[i]'s cotangent added in place
            else:
                step(entry, b, bars, owned, tape)
            bars[i] = None
            if free:
                tape[i] = None
            del b, entry
        return bars

    def _step(self, entry: Any, b: Any, bars: list, owned: bytearray, tape: list) -> None:
        """The backward pass at one tape entry with the cotangent ``b`` (not None): its
        parents' cotangents accumulated."""
        te = type(entry)
        if (te is tuple and len(entry) == 4) or te is _ScalarNode:  # a scalar_rule's
            tb = type(b)
            if te is tuple and (tb is _ndarray or tb is float):
                _scalar_backward(entry, b, bars, owned, tape)
                return
            parents = entry[3] if te is tuple else entry.parents
            if isinstance(b, AbstractTangent):
                b = _pulled_back(b, parents, bars, owned, tape)
                if b is _DONE:
                    return
            if te is tuple and type(b) is not Tracer:
                _scalar_backward(entry, b, bars, owned, tape)
            elif te is tuple:
                _scalar_backward_traced(entry[0], entry[1], entry[2], parents, b, bars,
                                        owned, tape)
            else:
                _scalar_backward_traced(entry.part, entry.args, entry.y, parents, b,
                                        bars, owned, tape)
            return
        if te is tuple:
            if len(entry) == 3:  # x[i] (an index node)
                if _index_backward(entry, b, bars, owned, tape):
                    return
                # a cotangent it does not take in place: the rule's pullback
                pullback = _INDEX_RULE[0](self.config, entry[0], entry[1])[1]
                parents = [(1, entry[2])]
            else:
                pullback, parents = entry
                if pullback is None:
                    return
        elif te is _MultiOut:
            pullback, parents = entry.pullback, entry.parents
            b = _assemble(entry, bars)
        else:
            return
        if isinstance(b, AbstractTangent):
            b = _pulled_back(b, parents, bars, owned, tape)
            if b is _DONE:
                return
        if type(pullback) is WritePullback and type(b) is _ndarray:
            _write_backward(pullback, b, bars, owned, tape, parents)
            return
        if type(b) is Tracer:
            # a cotangent of an outer trace: trace the pullback's own code
            grads = _run_pullback_traced(pullback, b)
        else:
            try:
                grads = pullback(b)
            except (ADError, OutArgumentError) as e:
                owner = (_PULLBACK_OWNER.get(pullback) if _weakrefable(pullback)
                         else None)  # a built-in pullback over values of an outer trace
                if owner is None:
                    raise
                raise _not_twice_differentiable(
                    e, f"the built-in rule for {owner}") from e
            except _RULE_CRASHES as e:
                owner = (_PULLBACK_OWNER.get(pullback) if _weakrefable(pullback)
                         else None)
                if owner is None:
                    raise
                raise _crash_error(e, pullback, f"the built-in rule for {owner}") from e
        for par in parents:
            g = grads[par[0]]
            if len(par) >= 3:
                if len(par) == 4 and type(g) is NoTangent:
                    raise ClosureTangentError(pullback, par[3], par[2][0])
                g = _get_path(g, par[2])
            _accumulate(bars, owned, par[1], g, tape)


_DONE = object()


def _write_backward(pullback: WritePullback, b: np.ndarray, bars: list, owned: bytearray,
                    tape: list, parents: list) -> None:
    """The backward pass at a write ``y = x.at[key].set(v)`` (``_inplace``): the cotangent
    of ``y`` becomes ``x``'s with the written region zeroed, in place when the AD owns it
    (so a loop of n scalar writes costs O(n) in all, not n copies of the array)."""
    i = pullback.index
    key = pullback.key
    if i is None or not owned[i] or bars[i] is not b or not b.flags.writeable:
        b = b.copy()
    v_bar = pullback.value_bar(np.array(b[key]))
    b[key] = 0.0
    for par in parents:
        j = par[1]
        if par[0] != 1:
            _accumulate(bars, owned, j, v_bar, tape)
        elif bars[j] is None and type(tape[j]) is not _Leaf:
            bars[j] = b
            owned[j] = 1
        else:
            _accumulate(bars, owned, j, b, tape)


def _pulled_back(b: AbstractTangent, parents: list, bars: list, owned: bytearray,
                 tape: list) -> Any:
    """The value of a tangent-type cotangent ``b`` to pull back, or ``_DONE`` where there
    is nothing to pull back: a zero, or ``NotImplementedTangent`` (passed on to every
    parent as it is)."""
    if type(b) is ZeroTangent or type(b) is NoTangent:
        return _DONE
    if type(b) is NotImplementedTangent:
        for par in parents:
            _accumulate(bars, owned, par[1], b, tape)
        return _DONE
    return unthunk(b)


def _assemble(node: _MultiOut, bars: list) -> Any:
    """The structured cotangent of a multi-output operation from its outputs' bars."""
    got = {path: bars[idx] for path, idx in node.leaves}

    def make(path: tuple, leaf: Any) -> Any:
        b = got.get(path)
        return _ZERO if b is None else unthunk(b)

    return _cotangent_structure(node.y, make, ())

def _accumulate(bars: list, owned: bytearray, j: int, g: Any, tape: list) -> None:
    if g is None:
        raise TypeError("a pullback returned None as a cotangent; return ZeroTangent() instead")
    tg = type(g)
    if tg is ZeroTangent or tg is NoTangent:
        return
    entry = tape[j]
    if type(entry) is _Leaf:
        # make sure the multi-output node is visited
        if bars[entry.node] is None:
            bars[entry.node] = True
    cur = bars[j]
    if tg is FreshInplaceableThunk and cur is not None and owned[j] and type(g.value) is not Tracer:
        cur[g.index] += g.value  # x[i]'s cotangent, added in place into the accumulator
        return
    if cur is None:
        if tg is FreshInplaceableThunk:
            bars[j] = g.unthunk()
            owned[j] = type(bars[j]) is _ndarray
        else:
            bars[j] = g
        return
    if isinstance(cur, Thunk):
        cur = unthunk(cur)
    if owned[j] and type(cur) is _ndarray:
        try:
            bars[j] = iadd(cur, g)
            return
        except (MutationError, TracerConversionError):
            # a cotangent of an outer trace (a higher-order derivative) cannot be added
            # into a plain array in place (NumPy refuses before writing): add out of place
            pass
    if tg is not float and isinstance(g, Thunk):
        g = unthunk(g)
    new = cur + g
    bars[j] = new
    owned[j] = type(new) is _ndarray and new is not cur and new is not g


class _EndedReverseTrace(EndedTrace, ReverseTrace):
    """A reverse trace whose differentiation returned: its tape still serves the pullback
    (``backward``), but it records nothing new."""

    __slots__ = ()
