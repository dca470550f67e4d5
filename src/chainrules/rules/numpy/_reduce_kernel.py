"""The machinery shared by the NumPy reduction, statistics, scan and creation rule modules:
binding a call's arguments, refusing ``out=``/``where=``, reduced axes, and
:func:`reduction_rule`, which turns a reduction into its weights.

Not a rule module (the loader skips ``_`` names).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import NoTangent, OutArgumentError, ZeroTangent, unthunk
from chainrules.rules import _kit as kit

__all__ = [
    "WhereArgumentError",
    "axes_of",
    "bind",
    "count_of",
    "expand",
    "is_given",
    "keepdims_of",
    "no_tangent_output",
    "prod_others",
    "reduction_rule",
    "refuse",
    "rest_bars",
    "spread",
    "sum_to",
    "to_end",
    "zero_pullback_result",
]


class WhereArgumentError(OutArgumentError):
    """A reduction rule was called with ``where=``, which its rule does not support.

    A subclass of `OutArgumentError` (both hide elements of the
    computation from differentiation); ``function`` is the NumPy function.

    Examples:
        >>> import numpy as np
        >>> from chainrules import rrule
        >>> from chainrules.rules.numpy.reductions import WhereArgumentError
        >>> try:
        ...     rrule(np.sum, np.ones(3), where=np.array([True, False, True]))
        ... except WhereArgumentError as e:
        ...     print(e)
        the rule for numpy.sum does not support where= (only where=True): ...
    """

    def __init__(self, function: Any) -> None:
        super().__init__(function)
        self.args = (
            f"the rule for {kit.qualified_name(function)} does not support where= "
            f"(only where=True): "
            f"masked-out elements would need their own convention. Select the elements first "
            f"(e.g. {kit.qualified_name(function)}(x[mask])) or multiply by the mask.",
        )



# ----------------------------------------------------------------------------- helpers


_SIG_DEFAULTS: dict = {}
_NO = NoTangent()
_ZERO = ZeroTangent()
_NO_ZERO = (_NO, _ZERO)


def bind(sig: inspect.Signature, args: tuple, kwargs: dict) -> dict:
    """The call's arguments by name, defaults filled in (as ``Signature.bind``)."""
    cached = _SIG_DEFAULTS.get(id(sig))  # Signature.__hash__ is slow; ours live forever
    if cached is None:
        params = list(sig.parameters.values())
        defaults = {p.name: p.default for p in params if p.default is not p.empty}
        cached = _SIG_DEFAULTS[id(sig)] = (params[0].name, defaults, sig)
    first, defaults, _ = cached
    if len(args) == 1 and all(k in defaults for k in kwargs):
        # fast path (binding costs microseconds): the array, then keywords only
        out = dict(defaults)
        out[first] = args[0]
        out.update(kwargs)
        return out
    if "initial" in list(sig.parameters)[1:len(args)]:
        # a positional value would be an argument to differentiate; as a keyword it is a
        # constant (keywords are never differentiated)
        raise NotImplementedError(
            "the reduction rules do not differentiate w.r.t. `initial`: pass it as a "
            "keyword, initial=..., where it is treated as a constant"
        )
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def is_given(v: Any) -> bool:
    """Whether an optional NumPy argument was given (NumPy marks absent ones ``<no value>``)."""
    return v is not None and not (type(v).__name__ == "_NoValueType")


def refuse(f: Any, p: dict) -> None:
    if p.get("out") is not None:
        raise OutArgumentError(f)
    where = p.get("where", True)
    if is_given(where) and not (isinstance(where, (bool, np.bool_)) and where):
        raise WhereArgumentError(f)


def no_tangent_output(y: Any) -> bool:
    kind = getattr(np.asarray(y).dtype, "kind", "f")
    return kind not in "fc"


def axes_of(axis: Any, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % ndim if ndim else 0 for a in axis))
    return (int(axis) % ndim if ndim else 0,)


def expand(y_bar: np.ndarray, shape: tuple, axes: tuple, keepdims: bool) -> np.ndarray:
    """Broadcast a reduced cotangent back over the reduced axes (read-only view)."""
    if not keepdims and axes and shape:
        y_bar = np.reshape(y_bar, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return np.broadcast_to(y_bar, shape)


def spread(y_bar: np.ndarray, shape: tuple, axes: tuple, keepdims: bool) -> np.ndarray:
    """`expand` as a fresh writeable array (callers may update cotangents in place)."""
    if y_bar.size == 1:
        if type(y_bar) is np.ndarray:
            # np.full's work (empty, then fill) without its Python wrapper
            out = np.empty(shape, dtype=y_bar.dtype)
            out.fill(y_bar.reshape(()))
            return out
        return np.full(shape, y_bar.reshape(()), dtype=y_bar.dtype)  # (traced: a rule)
    return np.array(expand(y_bar, shape, axes, keepdims))


def count_of(shape: tuple, axes: tuple) -> int:
    return math.prod(shape[a] for a in axes)


def keepdims_of(p: dict) -> bool:
    k = p.get("keepdims", False)
    return bool(k) if is_given(k) else False


def rest_bars(args: tuple) -> tuple:
    """NoTangent for each positional argument after the first (axis, dtype, ...)."""
    return (NoTangent(),) * len(args)


def zero_pullback_result(nargs: int) -> tuple:
    return (NoTangent(), ZeroTangent(), *(NoTangent(),) * nargs)


def to_end(x: np.ndarray, axes: tuple) -> tuple[np.ndarray, Any]:
    """View ``x`` as (kept..., n) with the reduced axes flattened last, and the inverse."""
    kept = [i for i in range(x.ndim) if i not in axes]
    perm = kept + list(axes)
    kept_shape = tuple(x.shape[i] for i in kept)
    red_shape = tuple(x.shape[i] for i in axes)
    xt = np.transpose(x, perm).reshape((*kept_shape, math.prod(red_shape)))
    inverse = np.argsort(perm)

    def back(a: np.ndarray) -> np.ndarray:
        return np.transpose(a.reshape(kept_shape + red_shape), inverse)

    return xt, back


def prod_others(x: np.ndarray, axes: tuple) -> np.ndarray:
    """For each element, the product of the other elements of its reduction slice.

    Without zeros (and when the product neither under- nor overflows) this is
    ``prod / x``; otherwise it is computed from exclusive products on both sides,
    with no division, so one zero or several are exact."""
    if x.size == 0:
        return np.zeros(x.shape, dtype=x.dtype)
    if np.all(x != 0):
        total = np.prod(x, axis=axes, keepdims=True)
        if np.all(np.isfinite(total)) and np.all(total != 0):
            return total / x
    xt, back = to_end(x, axes)
    n = xt.shape[-1]
    ones = np.ones((*xt.shape[:-1], 1), dtype=xt.dtype)
    left = np.concatenate([ones, np.cumprod(xt[..., : n - 1], axis=-1)], axis=-1)
    right = np.flip(
        np.concatenate([ones, np.cumprod(np.flip(xt[..., 1:], -1), axis=-1)], axis=-1), -1
    )
    return back(left * right)




def sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast result ``g`` back to ``shape``."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    out = np.sum(g, axis=axes, keepdims=True) if axes else g
    return out.reshape(shape)


def reduction_rule(f: Any, weights: Callable[..., Any], *, nan: bool = False,
                   real: bool = False, check: Callable[[Any, dict], None] | None = None,
                   call: Callable[[Any, dict], Any] | None = None,
                   whole: Callable[[np.ndarray], Any] | None = None) -> None:
    """Define the frule and rrule of a reduction ``f(a, axis=..., ...)`` from its weights.

    ``weights(x, y, p, axes, keepdims)`` gives the partial derivative of each output
    element with respect to each element of its slice, broadcastable to ``x``'s shape,
    or None for all ones (``x``: the input as an array, ``p``: the call's arguments by
    name). Then
    ``y_dot = sum(w * x_dot)`` over the reduced axes and ``x_bar = conj(w) * y_bar``
    spread back over them. ``axis``, ``keepdims``, ``dtype`` and a keyword ``initial``
    are handled here; ``out=`` and ``where=`` are refused; further positional
    arguments get ``NoTangent()``.

    ``nan``: NaN elements of ``x`` get zero (their tangents are ignored); ``real``: the
    output is real for complex ``x`` (``var``), so the derivative takes the real part;
    ``check(f, p)`` refuses unsupported arguments; ``call(a, p)`` computes the primal
    (default: ``f(a, *args, **kwargs)``); ``whole(a)`` computes ``f(a)`` of an ndarray
    ``a`` with no other argument, bit for bit, without ``f``'s Python wrapper (the
    common ``np.sum(x)`` of a loss).

    Examples:
        >>> import numpy as np
        >>> from chainrules import rrule
        >>> def total(a, axis=None, keepdims=False):
        ...     return np.sum(a, axis=axis, keepdims=keepdims)
        >>> reduction_rule(total, lambda x, y, p, axes, keepdims: None)
        >>> y, total_pullback = rrule(total, np.ones((2, 3)), axis=1)
        >>> total_pullback(np.array([1.0, 2.0]))[1]
        array([[1., 1., 1.],
               [2., 2., 2.]])
    """
    sig = inspect.signature(f)
    plain = check is None and call is None

    def setup(a: Any, args: tuple, kwargs: dict) -> tuple:
        if plain and not args and not kwargs and type(a) is np.ndarray:
            # f(x) of an array, nothing else given: the defaults pass `refuse`, and the
            # reduction is over every axis
            y = f(a) if whole is None else whole(a)
            return bind(sig, (a,), {}), y, a, tuple(range(a.ndim)), False
        p = bind(sig, (a, *args), kwargs)
        refuse(f, p)
        if check is not None:
            check(f, p)
        y = call(a, p) if call is not None else f(a, *args, **kwargs)
        x = np.asarray(a)
        return p, y, x, axes_of(p.get("axis"), x.ndim), keepdims_of(p)

    def terms(w: Any, x: np.ndarray, t: Any) -> Any:
        t = t if w is None else w * t
        return np.where(np.isnan(x), 0, t) if nan else t

    def reduction_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
        if type(a) is not np.ndarray and (
                delegated := kit.foreign_rule(kit.core.rrule, f, (a, *args), kwargs)) is not False:
            return delegated  # a dask array / tensor: its namespace's rule (kept lazy)
        p, y, x, axes, keepdims = setup(a, args, kwargs)
        project_a = kit.array_projector(a)
        rest = (_NO,) * len(args) if args else ()
        zeros = (_NO, _ZERO, *rest) if args else _NO_ZERO

        def reduction_pullback(y_bar: Any) -> tuple:
            # kit.zero_guard, written out: a decorator per call costs a microsecond
            y_bar = unthunk(y_bar)
            if isinstance(y_bar, kit.ZEROS):
                return zeros
            g = np.asarray(y_bar)
            if real:  # y is real: only the real part of y_bar acts on it
                g = np.real(g)
            w = weights(x, y, p, axes, keepdims)
            if w is None and not nan:  # a sum: the cotangent spread over the slice
                return NoTangent(), project_a(spread(g, x.shape, axes, keepdims)), *rest
            # one element (a full reduction): np.full beats a broadcast view's 5 µs
            g = (spread if g.size == 1 else expand)(g, x.shape, axes, keepdims)
            return NoTangent(), project_a(terms(None if w is None else kit.conj(w), x, g)), *rest

        return y, reduction_pullback

    def reduction_frule(dargs: tuple, a: Any, *args: Any, **kwargs: Any) -> Any:
        if type(a) is not np.ndarray and (delegated := kit.foreign_rule(
                kit.core.frule, f, (a, *args), kwargs, dargs)) is not False:
            return delegated
        p, y, x, axes, keepdims = setup(a, args, kwargs)
        a_dot = kit.dense_tangent(dargs[1], a, zeros=False)
        if a_dot is None or not kit.is_differentiable(y):
            return y, ZeroTangent()
        w = weights(x, y, p, axes, keepdims)
        y_dot = np.sum(terms(w, x, a_dot), axis=axes, keepdims=keepdims)
        return y, kit.fit_output(np.real(y_dot) if real else y_dot, y)

    kit.define_rules(f, frule_fn=reduction_frule, rrule_fn=reduction_rrule)
