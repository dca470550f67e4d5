"""Forward mode: the trace whose tracers carry their tangent (dual numbers).

Each operation on tracers of a `ForwardTrace` runs the frule of the callable on the
primals and the tangents; where only an rrule exists and the output is small, the
pushforward is assembled from pullbacks of the basis vectors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import (
    AbstractTangent,
    NoTangent,
    NotImplementedDerivativeError,
    NotImplementedTangent,
    RuleConfig,
    Tangent,
    Thunk,
    ZeroTangent,
    cached_lookup,
    derived_cache,
    frule,
    rrule,
    scalar_partials,
    unthunk,
)

from ._arraylib import check_opaque, is_graph_type
from ._closures import (
    _captures_outer_only,
    _captures_tracers,
    _closure_tangent,
    _detach_closure,
)
from ._dispatch import _run_mixed
from ._errors import ControlFlowError, NoRuleError, func_name
from ._tracer import (
    _EMPTY,
    _NO_RULE,
    EndedTrace,
    Tracer,
    _boxable,
    deep_primal,
    new_level,
)
from ._tree import (
    _deep_struct_primal,
    _find_tracers,
    _get_path,
    _is_struct,
    _leaves,
    _replace_leaves,
    _struct_tangent,
    _top_trace_deep,
)

__all__ = ["ForwardTrace"]

_fr_lookup = cached_lookup(frule)
_rr_lookup = cached_lookup(rrule)
_ndarray = np.ndarray
_ZERO = ZeroTangent()
_NO = NoTangent()
_FunctionType = type(lambda: None)

def _derive_scalar(f: Any, argtypes: tuple, config: Any, hit: Any) -> Any:
    """The partials of a one-output ``scalar_rule`` (what `ForwardTrace._scalar` needs to
    know of a call), or None (no rule, or another rule: the general path)."""
    if hit is None or hit[1] or hit[2]:
        return None
    part = scalar_partials(f, hit[0], forward=True)
    return part if part is not None and part.nout == 1 else None


# (f, argument types..., config type) -> `_derive_scalar`'s answer; emptied by registrations
_fast_get, _fast_fill = derived_cache(frule, _derive_scalar)
_MISS = object()


class ForwardTrace:
    """One level of forward-mode differentiation: tracers carry their tangent."""

    __slots__ = ("config", "ctype", "level")
    mode = "frule"  # the rule kind it applies (for messages)
    ended = False  # see `end`

    def __init__(self, config: RuleConfig) -> None:
        self.level = new_level()
        self.config = config
        self.ctype = type(config)

    def end(self) -> None:
        """Mark the trace ended: any later operation on its tracers raises
        `DeadTracerError`."""
        if type(self) is ForwardTrace:
            self.__class__ = _EndedForwardTrace

    def decided(self, leaf: Any, calls: tuple, where: str) -> Tracer:
        """A tracer of ``leaf``, a value decided by branching on traced values (see
        ``_closures._watched``), whose tangent is not implemented."""
        return Tracer(leaf, self, NotImplementedTangent(ControlFlowError(calls, where).args[0]))

    def binop(self, f: Any, a: Any, b: Any) -> Any:
        # a tracer of this trace (a real array or float, with a tangent of its kind) and
        # a plain float or int: the scalar_rule fast path, as for one argument
        ta, tb = type(a), type(b)
        if ta is Tracer and (tb is float or tb is int):
            out = self._one_traced(f, a, 0, b)
        elif tb is Tracer and (ta is float or ta is int):
            out = self._one_traced(f, b, 1, a)
        else:
            out = _NO_RULE
        return self.process(f, (a, b), _EMPTY) if out is _NO_RULE else out

    def _one_traced(self, f: Any, t: Tracer, pos: int, other: Any) -> Any:
        """`_scalar` for a binary operator whose argument ``pos`` is the tracer ``t``
        and whose other argument is a plain number."""
        if t._trace is not self:
            return _NO_RULE
        p = t.primal
        tp = type(p)
        if (tp is not _ndarray and tp is not float) or type(t.aux) is not tp:
            return _NO_RULE
        return self._scalar(f, p, t.aux, tp, (p, other) if pos == 0 else (other, p), pos)

    def process(self, f: Any, args: tuple, kwargs: dict, soft: bool = False) -> Any:
        if len(args) == 1 and not kwargs:
            # one tracer of this trace holding a real array or float with a tangent of
            # its own kind, and a scalar_rule for it (np.sin(x)): y_dot = f'(x) * x_dot,
            # what the general path's scalar frule computes, without its bookkeeping
            a = args[0]
            if type(a) is Tracer and a._trace is self:
                p = a.primal
                tp = type(p)
                if (tp is _ndarray or tp is float) and type(a.aux) is tp:
                    out = self._scalar(f, p, a.aux, tp)
                    if out is not _NO_RULE:
                        return out
        primals = list(args)
        dargs: list = [_NO]
        mixed = False
        missing = None
        for i, a in enumerate(args):
            ta = type(a)
            if ta is Tracer:
                if a._trace is self:
                    p = a.primal
                    primals[i] = p
                    d = a.aux
                    if type(d) is NotImplementedTangent:
                        # propagates: the result's tangent is not implemented either (the
                        # rule runs with a zero in its place, for the primal output)
                        missing = d
                        d = _ZERO
                    dargs.append(d)
                    if type(p) is Tracer or type(d) is Tracer:
                        # (a tangent of an outer trace: forward over forward; the
                        # rule's own code must then be traced too)
                        mixed = True
                else:
                    mixed = True
                    dargs.append(_ZERO)
            elif ta is float or ta is _ndarray or ta is int:
                dargs.append(_ZERO)
            elif is_graph_type(ta):  # a dask array: refused if its graph hides a tracer
                check_opaque(a, f"argument {i} of {func_name(f)}")
                dargs.append(_ZERO)
            elif _is_struct(a):
                found: list = []
                primals[i] = _find_tracers(a, self, (), found)
                dargs.append(_struct_tangent(primals[i], found) if found else _ZERO)
                if _top_trace_deep(primals[i], None) is not None or any(
                        type(t) is Tracer for _, t in found):
                    mixed = True
            elif ta is _FunctionType and a.__closure__ is not None:
                found = []
                primals[i] = _detach_closure(a, self, found)
                dargs.append(_closure_tangent(primals[i], found) if found else _ZERO)
            else:
                dargs.append(_ZERO)
        if mixed:
            types_ = tuple(type(_deep_struct_primal(p)) for p in primals)
        else:
            types_ = tuple(map(type, primals))
        hit = _fr_lookup(f, types_, self.config)
        if missing is not None:
            out = self._process_rule(hit, f, primals, dargs, types_, kwargs, mixed)
            if out is _NO_RULE:
                return out
            return _replace_leaves(out, (), lambda path, leaf: self._box(
                deep_primal(leaf) if type(leaf) is Tracer and leaf._trace is self
                else leaf, missing))
        return self._process_rule(hit, f, primals, dargs, types_, kwargs, mixed)

    def _scalar(self, f: Any, p: Any, d: Any, tp: type, primals: tuple | None = None,
                pos: int = 0) -> Any:
        """The fast path of `process` and `binop`: ``f(*primals)`` (default ``f(p)``)
        whose only traced argument, at ``pos``, is the real ``p`` with tangent ``d``;
        ``_NO_RULE`` where it does not apply (the general path then runs)."""
        if tp is _ndarray and (p.dtype.kind != "f" or d.dtype != p.dtype
                               or d.shape != p.shape):
            return _NO_RULE
        if primals is None:
            primals = (p,)
            key: tuple = (f, tp, self.ctype)
        else:
            key = (f, type(primals[0]), type(primals[1]), self.ctype)
        try:
            part = _fast_get(key, _MISS)
        except TypeError:  # an unhashable callable: the general path
            return _NO_RULE
        if part is _MISS:
            part = _fast_fill(key, f, key[1:-1], self.config)
        if part is None:
            return _NO_RULE
        y = f(*primals)
        if type(y) is not tp or (tp is _ndarray and y.shape != p.shape):
            return _NO_RULE  # (a broadcast against the other argument: the general path)
        wrt = tuple(i == pos for i in range(len(primals))) if part.uses_wrt else None
        y_dot = part(y, primals, wrt)[0][pos] * d
        if tp is _ndarray and (type(y_dot) is not _ndarray or y_dot.dtype != y.dtype
                               or y_dot.shape != y.shape):
            return _NO_RULE
        if tp is float and type(y_dot) is not float:
            return _NO_RULE
        return Tracer(y, self, y_dot)

    def _process_rule(self, hit: Any, f: Any, primals: list, dargs: list, types_: tuple,
                      kwargs: dict, mixed: bool) -> Any:
        if hit is None:
            return self._via_rrule(f, primals, dargs, types_, kwargs, mixed)
        rule, takes_config, takes_instance = hit
        if takes_instance and _top_trace_deep(f, None) is not None:
            return _NO_RULE
        if takes_config and _captures_tracers(primals):
            if not (getattr(rule, "closures_of_outer_traces", False)
                    and _captures_outer_only(primals, self)):
                return _NO_RULE
            mixed = True  # a rule written to run on them (its code traced)
        call_args = tuple(primals)
        if takes_instance:
            call_args = (f, *call_args)
        call_args = (tuple(dargs), *call_args)
        if takes_config:
            call_args = (self.config, *call_args)
        res = _run_mixed(rule, f, call_args, kwargs) if mixed else rule(*call_args, **kwargs)
        if res is None:
            return _NO_RULE
        y, y_dot = res
        return self._box(y, y_dot)

    def _box(self, y: Any, y_dot: Any) -> Any:
        if isinstance(y_dot, Thunk):
            y_dot = unthunk(y_dot)
        if _boxable(y):
            if type(y_dot) is ZeroTangent or type(y_dot) is NoTangent:
                return y
            return Tracer(y, self, y_dot)
        paths: list = []
        _leaves(y, (), paths)
        if not paths:
            return y

        def make(path: tuple, leaf: Any) -> Any:
            d = unthunk(_get_path(y_dot, path))
            if type(d) is ZeroTangent or type(d) is NoTangent:
                return leaf
            return Tracer(leaf, self, d)

        return _replace_leaves(y, (), make)

    def _via_rrule(self, f: Any, primals: list, dargs: list, types_: tuple, kwargs: dict,
                   mixed: bool) -> Any:
        """Forward mode from a reverse rule: ``y_dot = <J^T e_k, x_dot>`` per output entry.

        Exact (the pullback of a linear map at the same point), one pullback call per
        real output component; used for small outputs when only an rrule exists.
        """
        hit = _rr_lookup(f, types_, self.config)
        if hit is None:
            return _NO_RULE
        rule, takes_config, takes_instance = hit
        if takes_instance and not takes_config:
            return _NO_RULE
        if takes_config and (
                mixed or _captures_tracers(primals)
                or (takes_instance and _captures_tracers(list(getattr(f, "__dict__",
                                                                      {}).values())))
                or any(isinstance(d, Tangent) for d in dargs)):
            # (a higher-order rule whose function closes over traced values would see
            # them as constants, and structured tangents do not pair: trace instead)
            return _NO_RULE
        lead = ((self.config,) if takes_config else ()) + ((f,) if takes_instance else ())
        res = _run_mixed(rule, f, tuple(primals), kwargs) if mixed else \
            rule(*lead, *primals, **kwargs)
        if res is None:
            return _NO_RULE
        y, pullback = res
        yp = deep_primal(y)
        if not _boxable(yp):
            # a structured output (map's list): only a plain rule's is known constant
            return _NO_RULE if takes_config else y
        size = np.size(yp)
        if size > _MAX_RRULE_JVP:
            raise NoRuleError(f, "frule", types_,
                              f"only an rrule exists and the output has {size} entries; "
                              f"forward mode from an rrule is limited to {_MAX_RRULE_JVP}")
        is_complex = np.iscomplexobj(yp)
        if isinstance(yp, _ndarray):
            y_dot = np.zeros(yp.shape, dtype=yp.dtype)
            flat = y_dot.reshape(-1)
            for k in range(size):
                e = np.zeros(yp.shape, dtype=yp.dtype)
                e.reshape(-1)[k] = 1
                flat[k] = _pairing(pullback(e), dargs)
                if is_complex:
                    e.reshape(-1)[k] = 1j
                    flat[k] += 1j * _pairing(pullback(e), dargs)
        else:
            one = type(yp)(1)
            y_dot = _pairing(pullback(one), dargs)
            if is_complex:
                y_dot = y_dot + 1j * _pairing(pullback(type(yp)(1j)), dargs)
            y_dot = type(yp)(y_dot) if not mixed else y_dot
        return self._box(y, y_dot)


_MAX_RRULE_JVP = 64


class _EndedForwardTrace(EndedTrace, ForwardTrace):
    """A forward trace whose ``jvp`` returned."""

    __slots__ = ()


def _pairing(grads: tuple, dargs: list) -> Any:
    """Real inner product ``sum_i Re<grads[i], dargs[i]>`` (skipping zeros)."""
    total: Any = 0.0
    for g, d in zip(grads[1:], dargs[1:]):
        g = unthunk(g)
        if isinstance(g, AbstractTangent) or isinstance(d, AbstractTangent):
            if isinstance(g, (ZeroTangent, NoTangent)) or isinstance(d, (ZeroTangent,
                                                                           NoTangent)):
                continue
            raise NotImplementedDerivativeError(g, "pair a structured cotangent with") if \
                isinstance(g, NotImplementedTangent) else TypeError(
                "forward mode from an rrule supports natural tangents only")
        prod = np.conj(g) * d if np.iscomplexobj(g) else g * d
        s = prod.sum() if isinstance(prod, (_ndarray, Tracer)) else prod
        total = total + (s.real if np.iscomplexobj(deep_primal(s)) else s)
    return total
