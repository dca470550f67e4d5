"""Rules for NumPy reductions, scans, differences, statistics and array constructors.

Covered (frule and rrule): ``sum``, ``nansum``, ``prod``, ``nanprod``, ``mean``,
``nanmean``, ``var``, ``std``, ``nanvar``, ``nanstd``, ``max``/``amax``, ``min``/``amin``,
``nanmax``, ``nanmin``, ``ptp``, ``median``, ``nanmedian``, ``quantile`` and
``percentile`` (``method="linear"``; w.r.t. ``a`` and ``q``), ``average`` (w.r.t. ``a``
and ``weights``, ``returned=``), ``cumsum``, ``cumprod``, ``nancumsum``, ``nancumprod``,
``cumulative_sum``, ``cumulative_prod``, ``diff`` (``n``, ``axis``,
``prepend``/``append``), ``ediff1d``, ``trapezoid`` (w.r.t. ``y``, ``x`` and ``dx``),
``logspace`` (w.r.t. ``start``, ``stop``, ``base``), ``geomspace``, ``linspace``
(w.r.t. ``start`` and ``stop``, ``retstep=``), ``cov`` (w.r.t. ``m`` and ``y``; ``rowvar``,
``bias``, ``ddof``, ``fweights``, ``aweights``), ``corrcoef`` (w.r.t. ``x`` and ``y``),
``gradient`` (w.r.t. ``f`` and scalar spacings; coordinate arrays: ``not_implemented``),
``arange`` (w.r.t. ``start`` and ``step``; ``stop`` only sets the length), ``full``
and ``full_like`` (w.r.t. the fill value) and ``bincount`` (w.r.t. positional ``weights``).
Non-differentiable: index and count results (``argmax``, ``argmin``, ``argsort``,
``argwhere``, ``nonzero``, ``searchsorted``, ``digitize``, ``count_nonzero``...)
predicates (``any``, ``all``, ``isclose``, ``allclose``, ``array_equal``...), array
metadata (``shape``, ``ndim``, ``size``) and constant constructors (``zeros``, ``ones``,
``empty``, ``zeros_like``, ``ones_like``, ``empty_like``, ``eye``, ``identity``, ``tri``).

Conventions:

- ``axis`` (int, negative, tuple, None), ``keepdims``, ``dtype``, ``ddof`` /
  ``correction`` and ``initial`` (as a keyword: a constant) are supported; ``out=`` is refused with
  `OutArgumentError`, ``where=`` (other than True) with
  `WhereArgumentError`, ``var``/``std``'s ``mean=`` with ``NotImplementedError``.
  Positional arguments that are not arrays of values (``axis``, ``dtype``, ``n``,
  ``ddof``...) get ``NoTangent()``; keyword arguments are not differentiated.
- Complex inputs follow DESIGN §2: the pullback of a linear map is its adjoint,
  e.g. ``prod``'s pullback multiplies by ``conj`` of the product of the other
  elements; ``var``/``std`` of complex ``x`` are real (``mean |x - mean x|^2``) and
  their gradient is ``2 (x - mean x) y_bar / (N - ddof)``.
- ``prod``/``cumprod`` never divide by ``x`` where it is zero: exact with one zero,
  several zeros, or none (``prod`` uses exclusive products from both sides).
- ``max``/``min``/``nanmax``/``nanmin``/``ptp``: ties split the cotangent equally
  among the tied elements (a subgradient). An ``initial=`` value is a constant:
  if it wins, the elements get zero. Complex values are ordered as NumPy orders
  them (lexicographically); the selected element gets the cotangent.
- ``median``: the cotangent goes to the middle element, or half to each of the two
  middle elements of an even count, as ranked by a stable ``argsort`` (ties: the
  elements at those ranks).
- ``quantile``/``percentile``: the cotangent goes to the two order statistics that
  are interpolated; where ``q (n - 1)`` is an integer, the derivative w.r.t. ``q`` is
  the one from above (the slope to the next order statistic; 0 at ``q = 1``).
- ``std`` at a zero standard deviation is not differentiable (the rule gives
  ``inf``/``nan`` there, as ``sqrt`` does at 0).
- ``nan*`` functions: elements that are NaN get a zero cotangent.

Examples:
    >>> import numpy as np
    >>> from chainrules import frule, rrule, NoTangent
    >>> y, prod_pullback = rrule(np.prod, np.array([2.0, 0.0, 3.0]))
    >>> prod_pullback(1.0)[1]              # exact at a zero: no division by x
    array([0., 6., 0.])
    >>> y, max_pullback = rrule(np.max, np.array([[1.0, 4.0, 4.0]]), axis=1)
    >>> max_pullback(np.array([1.0]))[1]   # ties share the cotangent
    array([[0. , 0.5, 0.5]])
    >>> frule((NoTangent(), np.ones(3)), np.cumsum, np.array([1.0, 2.0, 3.0]))
    (array([1., 3., 6.]), array([1., 2., 3.]))
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from chainrules.core import (
    NoTangent,
    OutArgumentError,
    ProjectTo,
    Tangent,
    Thunk,
    ZeroTangent,
    frule,
    non_differentiable,
    not_implemented,
    rrule,
    unthunk,
)

from ._common import _cotangent, _dense, _like, _projector

__all__ = ["WhereArgumentError"]


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
            f"the rule for {func_name(function)} does not support where= (only where=True): "
            f"masked-out elements would need their own convention. Select the elements first "
            f"(e.g. {func_name(function)}(x[mask])) or multiply by the mask.",
        )


# ----------------------------------------------------------------------------- helpers


def func_name(f: Any) -> str:
    name = getattr(f, "__name__", None) or type(f).__name__
    return f"numpy.{name}" if getattr(f, "__module__", "").startswith("numpy") else name


def _signature(f: Any) -> inspect.Signature:
    return inspect.signature(f)


_SIG_DEFAULTS: dict = {}


def _bind(sig: inspect.Signature, args: tuple, kwargs: dict) -> dict:
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


def _given(v: Any) -> bool:
    """Whether an optional NumPy argument was given (NumPy marks absent ones ``<no value>``)."""
    return v is not None and not (type(v).__name__ == "_NoValueType")


def _refuse(f: Any, p: dict) -> None:
    if p.get("out") is not None:
        raise OutArgumentError(f)
    where = p.get("where", True)
    if _given(where) and not (isinstance(where, (bool, np.bool_)) and where):
        raise WhereArgumentError(f)


def _no_tangent_output(y: Any) -> bool:
    kind = getattr(np.asarray(y).dtype, "kind", "f")
    return kind not in "fc"


def _axes(axis: Any, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % ndim if ndim else 0 for a in axis))
    return (int(axis) % ndim if ndim else 0,)


def _expand(y_bar: np.ndarray, shape: tuple, axes: tuple, keepdims: bool) -> np.ndarray:
    """Broadcast a reduced cotangent back over the reduced axes (read-only view)."""
    if not keepdims and axes and shape:
        y_bar = np.reshape(y_bar, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    return np.broadcast_to(y_bar, shape)


def _spread(y_bar: np.ndarray, shape: tuple, axes: tuple, keepdims: bool) -> np.ndarray:
    """`_expand` as a fresh writeable array (callers may update cotangents in place)."""
    if y_bar.size == 1:
        return np.full(shape, y_bar.reshape(()), dtype=y_bar.dtype)
    return np.array(_expand(y_bar, shape, axes, keepdims))


def _count(shape: tuple, axes: tuple) -> int:
    return math.prod(shape[a] for a in axes)


def _keepdims(p: dict) -> bool:
    k = p.get("keepdims", False)
    return bool(k) if _given(k) else False


def _rest_bars(args: tuple) -> tuple:
    """NoTangent for each positional argument after the first (axis, dtype, ...)."""
    return (NoTangent(),) * len(args)


def _zero_pullback_result(nargs: int) -> tuple:
    return (NoTangent(), ZeroTangent(), *(NoTangent(),) * nargs)


def _to_end(x: np.ndarray, axes: tuple) -> tuple[np.ndarray, Any]:
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


def _prod_others(x: np.ndarray, axes: tuple) -> np.ndarray:
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
    xt, back = _to_end(x, axes)
    n = xt.shape[-1]
    ones = np.ones((*xt.shape[:-1], 1), dtype=xt.dtype)
    left = np.concatenate([ones, np.cumprod(xt[..., : n - 1], axis=-1)], axis=-1)
    right = np.flip(
        np.concatenate([ones, np.cumprod(np.flip(xt[..., 1:], -1), axis=-1)], axis=-1), -1
    )
    return back(left * right)


# ------------------------------------------------------------------------- sum, nansum

_SUM_SIG = _signature(np.sum)


@rrule.register(np.sum)
def sum_rrule(a, *args, **kwargs):
    p = _bind(_SUM_SIG, (a, *args), kwargs)
    _refuse(np.sum, p)
    y = np.sum(a, *args, **kwargs)
    x = np.asarray(a)
    shape, axes, keepdims = x.shape, _axes(p["axis"], x.ndim), _keepdims(p)
    project_a = _projector(a)
    nargs = len(args)

    def sum_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
        return (NoTangent(), project_a(_spread(y_bar, shape, axes, keepdims)),
                *_rest_bars(args))

    return y, sum_pullback


@frule.register(np.sum)
def sum_frule(dargs, a, *args, **kwargs):
    p = _bind(_SUM_SIG, (a, *args), kwargs)
    _refuse(np.sum, p)
    y = np.sum(a, *args, **kwargs)
    a_dot = _dense(dargs[1], a)
    if a_dot is None or _no_tangent_output(y):
        return y, ZeroTangent()
    keep = {"keepdims": True} if _keepdims(p) else {}
    return y, _like(np.sum(a_dot, axis=p["axis"], **keep), y)


_NANSUM_SIG = _signature(np.nansum)


@rrule.register(np.nansum)
def nansum_rrule(a, *args, **kwargs):
    p = _bind(_NANSUM_SIG, (a, *args), kwargs)
    _refuse(np.nansum, p)
    y = np.nansum(a, *args, **kwargs)
    x = np.asarray(a)
    shape, axes, keepdims = x.shape, _axes(p["axis"], x.ndim), _keepdims(p)
    finite = ~np.isnan(x)
    project_a = _projector(a)
    nargs = len(args)

    def nansum_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
        a_bar = np.where(finite, _expand(y_bar, shape, axes, keepdims), 0)
        return (NoTangent(), project_a(a_bar), *_rest_bars(args))

    return y, nansum_pullback


@frule.register(np.nansum)
def nansum_frule(dargs, a, *args, **kwargs):
    p = _bind(_NANSUM_SIG, (a, *args), kwargs)
    _refuse(np.nansum, p)
    y = np.nansum(a, *args, **kwargs)
    a_dot = _dense(dargs[1], a)
    if a_dot is None or _no_tangent_output(y):
        return y, ZeroTangent()
    a_dot = np.where(np.isnan(np.asarray(a)), 0, a_dot)
    keep = {"keepdims": True} if _keepdims(p) else {}
    return y, _like(np.sum(a_dot, axis=p["axis"], **keep), y)


# ------------------------------------------------------------------------ prod, nanprod


def _prod_rules(f: Any, name: str, nan: bool) -> None:
    sig = _signature(f)

    def prod_rrule(a, *args, **kwargs):
        p = _bind(sig, (a, *args), kwargs)
        _refuse(f, p)
        y = f(a, *args, **kwargs)
        x = np.asarray(a)
        shape, axes, keepdims = x.shape, _axes(p["axis"], x.ndim), _keepdims(p)
        initial = p.get("initial")
        project_a = _projector(a)
        nargs = len(args)

        def prod_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            if y_bar is None:
                return _zero_pullback_result(nargs)
            xs = np.where(np.isnan(x), 1, x) if nan else x
            others = _prod_others(xs, axes)
            if _given(initial):
                others = others * initial
            a_bar = np.conj(others) * _expand(y_bar, shape, axes, keepdims)
            if nan:
                a_bar = np.where(np.isnan(x), 0, a_bar)
            return (NoTangent(), project_a(a_bar), *_rest_bars(args))

        prod_pullback.__name__ = prod_pullback.__qualname__ = f"{name}_pullback"
        return y, prod_pullback

    def prod_frule(dargs, a, *args, **kwargs):
        p = _bind(sig, (a, *args), kwargs)
        _refuse(f, p)
        y = f(a, *args, **kwargs)
        a_dot = _dense(dargs[1], a)
        if a_dot is None or _no_tangent_output(y):
            return y, ZeroTangent()
        x = np.asarray(a)
        axes = _axes(p["axis"], x.ndim)
        xs = np.where(np.isnan(x), 1, x) if nan else x
        others = _prod_others(xs, axes)
        if _given(p.get("initial")):
            others = others * p["initial"]
        terms = others * a_dot
        if nan:
            terms = np.where(np.isnan(x), 0, terms)
        keep = {"keepdims": True} if _keepdims(p) else {}
        return y, _like(np.sum(terms, axis=p["axis"], **keep), y)

    prod_rrule.__name__ = prod_rrule.__qualname__ = f"{name}_rrule"
    prod_frule.__name__ = prod_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(prod_rrule)
    frule.register(f)(prod_frule)


_prod_rules(np.prod, "prod", nan=False)
_prod_rules(np.nanprod, "nanprod", nan=True)


# ------------------------------------------------------------------------ mean, nanmean

_MEAN_SIG = _signature(np.mean)


@rrule.register(np.mean)
def mean_rrule(a, *args, **kwargs):
    p = _bind(_MEAN_SIG, (a, *args), kwargs)
    _refuse(np.mean, p)
    y = np.mean(a, *args, **kwargs)
    x = np.asarray(a)
    shape, axes, keepdims = x.shape, _axes(p["axis"], x.ndim), _keepdims(p)
    n = _count(shape, axes)
    project_a = _projector(a)
    nargs = len(args)

    def mean_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
        return (NoTangent(), project_a(_spread(y_bar / n, shape, axes, keepdims)),
                *_rest_bars(args))

    return y, mean_pullback


@frule.register(np.mean)
def mean_frule(dargs, a, *args, **kwargs):
    p = _bind(_MEAN_SIG, (a, *args), kwargs)
    _refuse(np.mean, p)
    y = np.mean(a, *args, **kwargs)
    a_dot = _dense(dargs[1], a)
    if a_dot is None:
        return y, ZeroTangent()
    keep = {"keepdims": True} if _keepdims(p) else {}
    return y, _like(np.mean(a_dot, axis=p["axis"], **keep), y)


_NANMEAN_SIG = _signature(np.nanmean)


@rrule.register(np.nanmean)
def nanmean_rrule(a, *args, **kwargs):
    p = _bind(_NANMEAN_SIG, (a, *args), kwargs)
    _refuse(np.nanmean, p)
    y = np.nanmean(a, *args, **kwargs)
    x = np.asarray(a)
    shape, axes, keepdims = x.shape, _axes(p["axis"], x.ndim), _keepdims(p)
    finite = ~np.isnan(x)
    project_a = _projector(a)
    nargs = len(args)

    def nanmean_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
        count = np.sum(finite, axis=axes, keepdims=True)
        a_bar = np.where(finite, _expand(y_bar, shape, axes, keepdims) / count, 0)
        return (NoTangent(), project_a(a_bar), *_rest_bars(args))

    return y, nanmean_pullback


@frule.register(np.nanmean)
def nanmean_frule(dargs, a, *args, **kwargs):
    p = _bind(_NANMEAN_SIG, (a, *args), kwargs)
    _refuse(np.nanmean, p)
    y = np.nanmean(a, *args, **kwargs)
    a_dot = _dense(dargs[1], a)
    if a_dot is None:
        return y, ZeroTangent()
    x = np.asarray(a)
    axes = _axes(p["axis"], x.ndim)
    finite = ~np.isnan(x)
    count = np.sum(finite, axis=axes, keepdims=True)
    y_dot = np.sum(np.where(finite, a_dot, 0) / count, axis=axes, keepdims=_keepdims(p))
    return y, _like(y_dot, y)


# ----------------------------------------------------------------------------- var, std


def _var_setup(f: Any, sig: inspect.Signature, a: Any, args: tuple, kwargs: dict,
               nan: bool) -> tuple:
    p = _bind(sig, (a, *args), kwargs)
    _refuse(f, p)
    if _given(p.get("mean")):
        raise NotImplementedError(
            f"the rule for {func_name(f)} does not support mean=: a precomputed mean would "
            f"be treated as a constant. Call {func_name(f)} without mean=."
        )
    x = np.asarray(a)
    axes = _axes(p["axis"], x.ndim)
    ddof = p["ddof"]
    if _given(p.get("correction")):
        ddof = p["correction"]
    if nan:
        finite = ~np.isnan(x)
        denom = np.sum(finite, axis=axes, keepdims=True) - ddof
        centred = np.zeros(x.shape, x.dtype) if x.size == 0 else np.where(
            finite, x - np.nanmean(x, axis=axes, keepdims=True), 0)
    else:
        denom = _count(x.shape, axes) - ddof
        # (the mean of an empty slice warns; the primal has warned already)
        centred = np.zeros(x.shape, x.dtype) if x.size == 0 else \
            x - np.mean(x, axis=axes, keepdims=True)
    # No degrees of freedom (an empty slice, ddof >= N): the primal is nan or inf, and so
    # is its derivative; an empty input has an empty one.
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.divide(2.0, denom)
    return p, x, axes, scale, centred


def _over_twice_std(g: Any, y: Any) -> Any:
    """``g / (2 std)``, and 0 where the standard deviation is 0.

    There every entry equals the mean, so ``centred`` (which the result multiplies) is 0:
    for one element std is identically 0 (derivative 0), and elsewhere 0 is a
    subgradient of the (convex) std at its minimum, never the NaN of ``0 * inf``.
    """
    y = np.asarray(y)
    zero = y == 0
    return np.where(zero, 0, g / (2 * np.where(zero, 1, y)))


def _var_rules(f: Any, name: str, is_std: bool, nan: bool = False) -> None:
    sig = _signature(f)

    def var_rrule(a, *args, **kwargs):
        p, x, axes, scale, centred = _var_setup(f, sig, a, args, kwargs, nan)
        y = f(a, *args, **kwargs)
        keepdims = _keepdims(p)
        project_a = _projector(a)
        nargs = len(args)

        def var_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            if y_bar is None:
                return _zero_pullback_result(nargs)
            # y is real: only the real part of y_bar acts on it
            g = np.real(y_bar)
            if is_std:
                g = _over_twice_std(g, y)
            a_bar = scale * centred * _expand(g, x.shape, axes, keepdims)
            return (NoTangent(), project_a(a_bar), *_rest_bars(args))

        var_pullback.__name__ = var_pullback.__qualname__ = f"{name}_pullback"
        return y, var_pullback

    def var_frule(dargs, a, *args, **kwargs):
        p, _, axes, scale, centred = _var_setup(f, sig, a, args, kwargs, nan)
        y = f(a, *args, **kwargs)
        a_dot = _dense(dargs[1], a)
        if a_dot is None:
            return y, ZeroTangent()
        y_dot = np.sum(scale * np.real(np.conj(centred) * a_dot), axis=axes,
                       keepdims=_keepdims(p))
        if is_std:
            y_dot = _over_twice_std(y_dot, y)
        return y, _like(y_dot, y)

    var_rrule.__name__ = var_rrule.__qualname__ = f"{name}_rrule"
    var_frule.__name__ = var_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(var_rrule)
    frule.register(f)(var_frule)


_var_rules(np.var, "var", is_std=False)
_var_rules(np.std, "std", is_std=True)
_var_rules(np.nanvar, "nanvar", is_std=False, nan=True)
_var_rules(np.nanstd, "nanstd", is_std=True, nan=True)


# ------------------------------------------------------------ max, min, nanmax, nanmin


def _extremum_mask(x: np.ndarray, y: Any, axes: tuple, keepdims: bool) -> np.ndarray:
    """Where each element equals its slice's extremum, divided by the number of ties."""
    mask = x == _expand(np.asarray(y), x.shape, axes, keepdims)
    count = np.sum(mask, axis=axes, keepdims=True)
    return mask / np.maximum(count, 1)


def _extremum_rules(f: Any, name: str) -> None:
    sig = _signature(f)

    def extremum_rrule(a, *args, **kwargs):
        p = _bind(sig, (a, *args), kwargs)
        _refuse(f, p)
        y = f(a, *args, **kwargs)
        x = np.asarray(a)
        axes, keepdims = _axes(p["axis"], x.ndim), _keepdims(p)
        project_a = _projector(a)
        nargs = len(args)

        def extremum_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            if y_bar is None:
                return _zero_pullback_result(nargs)
            weights = _extremum_mask(x, y, axes, keepdims)
            a_bar = weights * _expand(y_bar, x.shape, axes, keepdims)
            return (NoTangent(), project_a(a_bar), *_rest_bars(args))

        extremum_pullback.__name__ = extremum_pullback.__qualname__ = f"{name}_pullback"
        return y, extremum_pullback

    def extremum_frule(dargs, a, *args, **kwargs):
        p = _bind(sig, (a, *args), kwargs)
        _refuse(f, p)
        y = f(a, *args, **kwargs)
        a_dot = _dense(dargs[1], a)
        if a_dot is None or _no_tangent_output(y):
            return y, ZeroTangent()
        x = np.asarray(a)
        axes, keepdims = _axes(p["axis"], x.ndim), _keepdims(p)
        weights = _extremum_mask(x, y, axes, keepdims)
        return y, _like(np.sum(weights * a_dot, axis=axes, keepdims=keepdims), y)

    extremum_rrule.__name__ = extremum_rrule.__qualname__ = f"{name}_rrule"
    extremum_frule.__name__ = extremum_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(extremum_rrule)
    frule.register(f)(extremum_frule)


for _fn, _name in ((np.max, "max"), (np.amax, "amax"), (np.min, "min"), (np.amin, "amin"),
                  (np.nanmax, "nanmax"), (np.nanmin, "nanmin")):
    _extremum_rules(_fn, _name)


_PTP_SIG = _signature(np.ptp)


def _ptp_weights(x: np.ndarray, p: dict) -> np.ndarray:
    axes, keepdims = _axes(p["axis"], x.ndim), _keepdims(p)
    hi = np.max(x, axis=p["axis"], keepdims=keepdims)
    lo = np.min(x, axis=p["axis"], keepdims=keepdims)
    return _extremum_mask(x, hi, axes, keepdims) - _extremum_mask(x, lo, axes, keepdims)


@rrule.register(np.ptp)
def ptp_rrule(a, *args, **kwargs):
    p = _bind(_PTP_SIG, (a, *args), kwargs)
    _refuse(np.ptp, p)
    y = np.ptp(a, *args, **kwargs)
    x = np.asarray(a)
    axes, keepdims = _axes(p["axis"], x.ndim), _keepdims(p)
    project_a = _projector(a)
    nargs = len(args)

    def ptp_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
        a_bar = _ptp_weights(x, p) * _expand(y_bar, x.shape, axes, keepdims)
        return (NoTangent(), project_a(a_bar), *_rest_bars(args))

    return y, ptp_pullback


@frule.register(np.ptp)
def ptp_frule(dargs, a, *args, **kwargs):
    p = _bind(_PTP_SIG, (a, *args), kwargs)
    _refuse(np.ptp, p)
    y = np.ptp(a, *args, **kwargs)
    a_dot = _dense(dargs[1], a)
    if a_dot is None or _no_tangent_output(y):
        return y, ZeroTangent()
    x = np.asarray(a)
    axes, keepdims = _axes(p["axis"], x.ndim), _keepdims(p)
    return y, _like(np.sum(_ptp_weights(x, p) * a_dot, axis=axes, keepdims=keepdims), y)


# -------------------------------------------------------------------------------- median

_MEDIAN_SIG = _signature(np.median)


def _median_weights(x: np.ndarray, axes: tuple) -> np.ndarray:
    """Weight 1 on the middle element of each slice (1/2 on each of two for even counts)."""
    xt, back = _to_end(x, axes)
    n = xt.shape[-1]
    order = np.argsort(xt, axis=-1, kind="stable")
    w = np.zeros(xt.shape)
    if n % 2:
        np.put_along_axis(w, order[..., n // 2: n // 2 + 1], 1.0, axis=-1)
    else:
        np.put_along_axis(w, order[..., n // 2 - 1: n // 2 + 1], 0.5, axis=-1)
    return back(w)


@rrule.register(np.median)
def median_rrule(a, *args, **kwargs):
    p = _bind(_MEDIAN_SIG, (a, *args), kwargs)
    _refuse(np.median, p)
    call = {k: v for k, v in p.items() if k in ("axis", "keepdims")}
    y = np.median(np.array(a), **call)  # a copy: overwrite_input must not touch `a`
    x = np.asarray(a)
    axes, keepdims = _axes(p["axis"], x.ndim), bool(p["keepdims"])
    project_a = _projector(a)
    nargs = len(args)

    def median_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
        a_bar = _median_weights(x, axes) * _expand(y_bar, x.shape, axes, keepdims)
        return (NoTangent(), project_a(a_bar), *_rest_bars(args))

    return y, median_pullback


@frule.register(np.median)
def median_frule(dargs, a, *args, **kwargs):
    p = _bind(_MEDIAN_SIG, (a, *args), kwargs)
    _refuse(np.median, p)
    call = {k: v for k, v in p.items() if k in ("axis", "keepdims")}
    y = np.median(np.array(a), **call)
    a_dot = _dense(dargs[1], a)
    if a_dot is None:
        return y, ZeroTangent()
    x = np.asarray(a)
    axes = _axes(p["axis"], x.ndim)
    y_dot = np.sum(_median_weights(x, axes) * a_dot, axis=axes, keepdims=bool(p["keepdims"]))
    return y, _like(y_dot, y)


_NANMEDIAN_SIG = _signature(np.nanmedian)


def _nanmedian_weights(x: np.ndarray, axes: tuple) -> np.ndarray:
    """As `_median_weights`, over the non-NaN elements of each slice (NaNs sort last)."""
    xt, back = _to_end(x, axes)
    order = np.argsort(xt, axis=-1, kind="stable")
    m = np.sum(~np.isnan(xt), axis=-1, keepdims=True)
    lo = np.maximum((m - 1) // 2, 0)
    hi = np.maximum(m // 2, 0)
    w = np.zeros(xt.shape)
    if xt.shape[-1]:
        np.put_along_axis(w, np.take_along_axis(order, lo, -1), 0.5, axis=-1)
        idx = np.take_along_axis(order, np.minimum(hi, xt.shape[-1] - 1), -1)
        np.put_along_axis(w, idx, np.take_along_axis(w, idx, -1) + 0.5, axis=-1)
        w = np.where(m > 0, w, 0.0)
    return back(w)


@rrule.register(np.nanmedian)
def nanmedian_rrule(a, *args, **kwargs):
    p = _bind(_NANMEDIAN_SIG, (a, *args), kwargs)
    _refuse(np.nanmedian, p)
    keepdims = _keepdims(p)
    y = np.nanmedian(np.array(a), axis=p["axis"], keepdims=keepdims)
    x = np.asarray(a)
    axes = _axes(p["axis"], x.ndim)
    project_a = _projector(a)
    nargs = len(args)

    def nanmedian_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
        a_bar = _nanmedian_weights(x, axes) * _expand(y_bar, x.shape, axes, keepdims)
        return (NoTangent(), project_a(a_bar), *_rest_bars(args))

    return y, nanmedian_pullback


@frule.register(np.nanmedian)
def nanmedian_frule(dargs, a, *args, **kwargs):
    p = _bind(_NANMEDIAN_SIG, (a, *args), kwargs)
    _refuse(np.nanmedian, p)
    keepdims = _keepdims(p)
    y = np.nanmedian(np.array(a), axis=p["axis"], keepdims=keepdims)
    a_dot = _dense(dargs[1], a)
    if a_dot is None:
        return y, ZeroTangent()
    x = np.asarray(a)
    axes = _axes(p["axis"], x.ndim)
    w = _nanmedian_weights(x, axes)
    y_dot = np.sum(np.where(w > 0, w * a_dot, 0), axis=axes, keepdims=keepdims)
    return y, _like(y_dot, y)


# ------------------------------------------------------------------- quantile, percentile


class _Quantile:
    """Order statistics that ``quantile(a, q, method="linear")`` interpolates between.

    For each q: the virtual index v = q (n - 1) between sorted positions f = floor(v)
    and c = min(f + 1, n - 1) with fraction t = v - f; y = (1 - t) x_(f) + t x_(c)."""

    def __init__(self, x: np.ndarray, q: Any, axes: tuple, keepdims: bool,
                 scale: float) -> None:
        self.x, self.axes, self.keepdims, self.scale = x, axes, keepdims, scale
        self.xt, self.back = _to_end(x, axes)
        n = self.xt.shape[-1]
        self.order = np.argsort(self.xt, axis=-1, kind="stable")
        self.q_shape = np.shape(q)
        v = np.clip(np.asarray(q, dtype=np.float64).reshape(-1) * scale, 0, 1) * (n - 1)
        self.f = np.floor(v).astype(np.intp)
        self.c = np.minimum(self.f + 1, n - 1)
        self.t = v - self.f
        self.n = n
        # y = quantile has shape q.shape + reduced shape (with kept ones for keepdims)
        self.red_shape = np.sum(np.zeros(x.shape), axis=axes, keepdims=keepdims).shape

    def _stat(self, arr: np.ndarray, pos: int) -> np.ndarray:
        idx = np.broadcast_to(np.intp(pos), self.xt.shape[:-1])[..., None]
        return np.take_along_axis(arr, np.take_along_axis(self.order, idx, -1), -1)[..., 0]

    def _out(self, per_q: list) -> np.ndarray:
        return np.stack([v.reshape(self.red_shape) for v in per_q]).reshape(
            self.q_shape + self.red_shape)

    def pushforward(self, x_dot: Any, q_dot: Any) -> np.ndarray:
        out = []
        qd = None if q_dot is None else np.asarray(q_dot, dtype=np.float64).reshape(-1)
        dt = None if x_dot is None else _to_end(np.broadcast_to(x_dot, self.x.shape),
                                                  self.axes)[0]
        for i, (f, c, t) in enumerate(zip(self.f, self.c, self.t)):
            v = np.zeros(self.xt.shape[:-1])
            if dt is not None:
                v = (1 - t) * self._stat(dt, f) + t * self._stat(dt, c)
            if qd is not None:
                v = v + qd[i] * self._slope(f, c)
            out.append(v)
        return self._out(out)

    def _slope(self, f: int, c: int) -> np.ndarray:
        """dy/dq: (n - 1) (x_(c) - x_(f)) times the q scale (1/100 for percentiles)."""
        return (self.n - 1) * self.scale * (self._stat(self.xt, c) - self._stat(self.xt, f))

    def x_bar(self, y_bar: np.ndarray) -> np.ndarray:
        g = np.broadcast_to(y_bar, self.q_shape + self.red_shape).reshape(
            (len(self.f), *self.xt.shape[:-1]))
        out = np.zeros(self.xt.shape)
        for gi, f, c, t in zip(g, self.f, self.c, self.t):
            for pos, w in ((f, 1 - t), (c, t)):
                idx = np.broadcast_to(np.intp(pos), self.xt.shape[:-1])[..., None]
                where = np.take_along_axis(self.order, idx, -1)
                cur = np.take_along_axis(out, where, -1)
                np.put_along_axis(out, where, cur + w * gi[..., None], -1)
        return self.back(out)

    def q_bar(self, y_bar: np.ndarray) -> np.ndarray:
        g = np.broadcast_to(y_bar, self.q_shape + self.red_shape).reshape(
            (len(self.f), *self.xt.shape[:-1]))
        return np.array([np.sum(gi * self._slope(f, c))
                         for gi, f, c in zip(g, self.f, self.c)]).reshape(self.q_shape)


def _quantile_rules(f: Any, name: str, scale: float) -> None:
    sig = _signature(f)

    def setup(a: Any, q: Any, args: tuple, kwargs: dict) -> tuple:
        p = _bind(sig, (a, q, *args), kwargs)
        _refuse(f, p)
        if p["method"] != "linear" or p.get("weights") is not None:
            raise NotImplementedError(
                f"the rule for {func_name(f)} supports method='linear' without weights only"
            )
        y = f(np.array(a), q, axis=p["axis"], keepdims=bool(p["keepdims"]))
        x = np.asarray(a)
        return y, _Quantile(x, q, _axes(p["axis"], x.ndim), bool(p["keepdims"]), scale)

    def quantile_rrule(a, q, *args, **kwargs):
        y, quant = setup(a, q, args, kwargs)
        project_a, project_q = _projector(a), _projector(q)

        def quantile_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            if y_bar is None:
                return (NoTangent(), project_a(ZeroTangent()), project_q(ZeroTangent()),
                        *_rest_bars(args))
            return (NoTangent(), Thunk(lambda: project_a(quant.x_bar(y_bar))),
                    Thunk(lambda: project_q(quant.q_bar(y_bar))), *_rest_bars(args))

        quantile_pullback.__name__ = quantile_pullback.__qualname__ = f"{name}_pullback"
        return y, quantile_pullback

    def quantile_frule(dargs, a, q, *args, **kwargs):
        y, quant = setup(a, q, args, kwargs)
        a_dot, q_dot = _dense(dargs[1], a), _dense(dargs[2], q)
        if a_dot is None and q_dot is None:
            return y, ZeroTangent()
        return y, _like(quant.pushforward(a_dot, q_dot), y)

    quantile_rrule.__name__ = quantile_rrule.__qualname__ = f"{name}_rrule"
    quantile_frule.__name__ = quantile_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(quantile_rrule)
    frule.register(f)(quantile_frule)


_quantile_rules(np.quantile, "quantile", 1.0)
_quantile_rules(np.percentile, "percentile", 0.01)


# ------------------------------------------------------------------------------- average

_AVERAGE_SIG = _signature(np.average)


def _average_parts(a: Any, p: dict) -> tuple:
    """(x, axes, keepdims, w_full, w_back, total): weights broadcast to ``x``'s shape,
    the map of a full-shape weight cotangent back to the weights, their sums."""
    x = np.asarray(a)
    axes, keepdims = _axes(p["axis"], x.ndim), _keepdims(p)
    w = p["weights"]
    if w is None:
        return x, axes, keepdims, None, None, None
    w = np.asarray(w)
    if w.shape != x.shape:
        # NumPy: 1-d weights along a single axis
        shaped = np.moveaxis(w.reshape((1,) * (x.ndim - 1) + w.shape), -1, axes[0])
    else:
        shaped = w
    w_full = np.broadcast_to(shaped, x.shape)

    def w_back(g: np.ndarray) -> np.ndarray:
        sums = tuple(i for i in range(x.ndim) if shaped.shape[i] == 1 and x.shape[i] != 1)
        g = np.sum(g, axis=sums, keepdims=True) if sums else g
        return g.reshape(w.shape)

    total = np.sum(w_full, axis=axes, keepdims=True)
    return x, axes, keepdims, w_full, w_back, total


def _reduce_out(g: np.ndarray, axes: tuple, keepdims: bool) -> np.ndarray:
    return np.sum(g, axis=axes, keepdims=keepdims)


@rrule.register(np.average)
def average_rrule(a, *args, **kwargs):
    p = _bind(_AVERAGE_SIG, (a, *args), kwargs)
    y = np.average(a, *args, **kwargs)
    x, axes, keepdims, w_full, w_back, total = _average_parts(a, p)
    returned = bool(p["returned"])
    avg = y[0] if returned else y
    project_a = _projector(a)
    project_w = _projector(p["weights"]) if len(args) >= 2 else None
    nargs = len(args)

    def average_pullback(y_bar):
        y_bar = unthunk(y_bar)
        if returned:
            if isinstance(y_bar, (ZeroTangent, NoTangent)):
                return _zero_pullback_result(nargs)
            parts = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
            avg_bar, total_bar = _cotangent(parts[0]), _cotangent(parts[1])
        else:
            avg_bar, total_bar = _cotangent(y_bar), None
        if avg_bar is None and total_bar is None:
            return _zero_pullback_result(nargs)
        avg_full = (_expand(avg_bar, x.shape, axes, keepdims)
                    if avg_bar is not None else None)
        if w_full is None:
            a_bar = (ZeroTangent() if avg_full is None
                     else project_a(avg_full / _count(x.shape, axes)))
            return (NoTangent(), a_bar, *_rest_bars(args))

        def a_bar_thunk():
            if avg_full is None:
                return ZeroTangent()
            return project_a(np.conj(w_full / total) * avg_full)

        def w_bar_thunk():
            g = 0
            if avg_full is not None:
                centred = x - _expand(np.asarray(avg), x.shape, axes, keepdims)
                g = np.conj(centred / total) * avg_full
            if total_bar is not None:
                g = g + _expand(total_bar, x.shape, axes, keepdims)
            return project_w(w_back(np.broadcast_to(g, x.shape)))

        bars = [NoTangent(), Thunk(a_bar_thunk), *_rest_bars(args)]
        if project_w is not None:
            bars[3] = Thunk(w_bar_thunk)
        return tuple(bars)

    return y, average_pullback


@frule.register(np.average)
def average_frule(dargs, a, *args, **kwargs):
    p = _bind(_AVERAGE_SIG, (a, *args), kwargs)
    y = np.average(a, *args, **kwargs)
    x, axes, keepdims, w_full, _, total = _average_parts(a, p)
    returned = bool(p["returned"])
    avg = y[0] if returned else y
    a_dot = _dense(dargs[1], a)
    w_dot = _dense(dargs[3], p["weights"]) if len(dargs) > 3 else None
    avg_dot: Any = 0
    total_dot: Any = 0
    if w_full is None:
        if a_dot is not None:
            avg_dot = np.mean(a_dot, axis=axes, keepdims=keepdims)
    else:
        if a_dot is not None:
            avg_dot = _reduce_out(w_full * a_dot / total, axes, keepdims)
        if w_dot is not None:
            w_dot_full = np.broadcast_to(
                np.asarray(w_dot).reshape(np.shape(w_dot))
                if np.shape(w_dot) == x.shape else
                np.moveaxis(np.asarray(w_dot).reshape((1,) * (x.ndim - 1) + np.shape(w_dot)),
                            -1, axes[0]),
                x.shape)
            centred = x - _expand(np.asarray(avg), x.shape, axes, keepdims)
            avg_dot = avg_dot + _reduce_out(w_dot_full * centred / total, axes, keepdims)
            total_dot = _reduce_out(w_dot_full, axes, keepdims)
    if a_dot is None and w_dot is None:
        return y, ZeroTangent()
    avg_dot = _like(avg_dot, avg)
    if not returned:
        return y, avg_dot
    total_dot = _like(total_dot, y[1]) if not isinstance(total_dot, int) else (
        _like(np.zeros(np.shape(y[1])), y[1]))
    return y, Tangent[tuple](avg_dot, total_dot)


# ----------------------------------------------------------------------- cumsum, cumprod


def _scan_params(x: np.ndarray, axis: Any) -> tuple[np.ndarray, int]:
    """The array the scan runs over (flattened for axis=None) and its scan axis."""
    if axis is None:
        return x.reshape(-1), 0
    return x, int(axis) % max(x.ndim, 1)


def _reverse_cumsum(g: np.ndarray, ax: int) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(g, ax), axis=ax), ax)


def _cumprod_pullback_core(x: np.ndarray, y: np.ndarray, g: np.ndarray, ax: int) -> np.ndarray:
    """x_bar of y = cumprod(x) along ``ax`` for the cotangent ``g``; exact with zeros.

    Before a slice's first zero z, x_bar_i = sum_{k>=i} g_k conj(y_k / x_i); at z it is
    sum_{k>=z} g_k conj(prod_{j<=k, j!=z} x_j); after z it is 0."""
    xm, ym, gm = (np.moveaxis(v, ax, -1) for v in (x, y, g))
    n = xm.shape[-1]
    if n == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, g))
    is_zero = xm == 0
    z = np.where(is_zero.any(-1), np.argmax(is_zero, axis=-1), n)[..., None]
    idx = np.arange(n)
    before = idx < z
    safe = np.where(before, xm, 1)
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
    n = xm.shape[-1]
    if n == 0:
        return np.zeros(y.shape, dtype=np.result_type(y, x_dot))
    is_zero = xm == 0
    z = np.where(is_zero.any(-1), np.argmax(is_zero, axis=-1), n)[..., None]
    idx = np.arange(n)
    before = idx < z
    safe = np.where(before, xm, 1)
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
    sig = _signature(f)

    def core(a: Any, p: dict) -> tuple:
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
        p = _bind(sig, (a, *args), kwargs)
        _refuse(f, p)
        y = f(a, *args, **kwargs)
        x, xs, ax, include, missing = core(a, p)
        ys = np.cumprod(xs, axis=ax) if is_prod else None
        project_a = _projector(a)
        nargs = len(args)

        def scan_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            if y_bar is None:
                return _zero_pullback_result(nargs)
            g = y_bar
            if include:
                g = np.take(g, np.arange(1, g.shape[ax]), axis=ax)
            if is_prod:
                a_bar = _cumprod_pullback_core(xs, ys, g, ax)
            else:
                a_bar = _reverse_cumsum(g, ax)
            if missing is not None:
                a_bar = np.where(missing, 0, a_bar)
            return (NoTangent(), project_a(a_bar.reshape(x.shape)), *_rest_bars(args))

        scan_pullback.__name__ = scan_pullback.__qualname__ = f"{name}_pullback"
        return y, scan_pullback

    def scan_frule(dargs, a, *args, **kwargs):
        p = _bind(sig, (a, *args), kwargs)
        _refuse(f, p)
        y = f(a, *args, **kwargs)
        a_dot = _dense(dargs[1], a)
        if a_dot is None or _no_tangent_output(y):
            return y, ZeroTangent()
        _, xs, ax, include, missing = core(a, p)
        d = np.asarray(a_dot).reshape(xs.shape)
        if missing is not None:
            d = np.where(missing, 0, d)
        if is_prod:
            y_dot = _cumprod_pushforward_core(xs, np.cumprod(xs, axis=ax), d, ax)
        else:
            y_dot = np.cumsum(d, axis=ax)
        if include:
            pad = np.zeros_like(np.take(y_dot, [0], axis=ax))
            y_dot = np.concatenate([pad, y_dot], axis=ax)
        return y, _like(y_dot, y)

    scan_rrule.__name__ = scan_rrule.__qualname__ = f"{name}_rrule"
    scan_frule.__name__ = scan_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(scan_rrule)
    frule.register(f)(scan_frule)


_scan_rules(np.cumsum, "cumsum", is_prod=False, cumulative=False)
_scan_rules(np.cumprod, "cumprod", is_prod=True, cumulative=False)
if hasattr(np, "cumulative_sum"):
    _scan_rules(np.cumulative_sum, "cumulative_sum", is_prod=False, cumulative=True)
    _scan_rules(np.cumulative_prod, "cumulative_prod", is_prod=True, cumulative=True)
_scan_rules(np.nancumsum, "nancumsum", is_prod=False, cumulative=False, nan=True)
_scan_rules(np.nancumprod, "nancumprod", is_prod=True, cumulative=False, nan=True)


# ---------------------------------------------------------------------------------- diff

_DIFF_SIG = _signature(np.diff)


def _diff_parts(a: Any, p: dict) -> tuple:
    """(ax, pieces): the difference axis and the arrays joined along it, broadcast as
    NumPy does (prepend, a, append)."""
    x = np.asarray(a)
    ax = int(p["axis"]) % max(x.ndim, 1)
    pieces = []
    for key in ("prepend", "append"):
        v = p[key]
        if _given(v):
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
    p = _bind(_DIFF_SIG, (a, *args), kwargs)
    y = np.diff(a, *args, **kwargs)
    x, ax, pieces = _diff_parts(a, p)
    n = int(p["n"])
    sizes = {k: v.shape[ax] for k, v in pieces}
    positional = ["a", "n", "axis", "prepend", "append"][1: 1 + len(args)]
    projectors = {k: _projector(p[k]) for k in ("prepend", "append") if k in positional}
    project_a = _projector(a)
    nargs = len(args)

    def diff_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
        g = _diff_adjoint(y_bar, ax, n) if n else y_bar
        start = sizes.get("prepend", 0)
        stop = start + x.shape[ax]
        a_bar = project_a(np.take(g, np.arange(start, stop), axis=ax))
        rest = []
        for k in positional:
            if k == "prepend" and k in projectors:
                part = np.take(g, np.arange(0, start), axis=ax)
                rest.append(projectors[k](_sum_to(part, np.shape(p[k]))))
            elif k == "append" and k in projectors:
                part = np.take(g, np.arange(stop, g.shape[ax]), axis=ax)
                rest.append(projectors[k](_sum_to(part, np.shape(p[k]))))
            else:
                rest.append(NoTangent())
        return (NoTangent(), a_bar, *rest)

    return y, diff_pullback


@frule.register(np.diff)
def diff_frule(dargs, a, *args, **kwargs):
    p = _bind(_DIFF_SIG, (a, *args), kwargs)
    y = np.diff(a, *args, **kwargs)
    x, ax, pieces = _diff_parts(a, p)
    positional = ["a", "n", "axis", "prepend", "append"][: 1 + len(args)]
    tangents = dict(zip(positional, dargs[1:]))
    a_dot = _dense(tangents["a"], a)
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
            t = _dense(tangents[k], p[k]) if k in tangents else None
            if t is None:
                parts.append(np.zeros(v.shape, dtype=y.dtype))
            else:
                any_tangent = True
                parts.append(np.broadcast_to(t, v.shape))
    if not any_tangent:
        return y, ZeroTangent()
    return y, _like(np.diff(np.concatenate(parts, axis=ax), int(p["n"]), axis=ax), y)


# ------------------------------------------------------------------------------ ediff1d

_EDIFF1D_SIG = _signature(np.ediff1d)


@rrule.register(np.ediff1d)
def ediff1d_rrule(ary, *args, **kwargs):
    p = _bind(_EDIFF1D_SIG, (ary, *args), kwargs)
    y = np.ediff1d(ary, *args, **kwargs)
    x = np.asarray(ary)
    # positional order: ary, to_end, to_begin
    positional = ["to_end", "to_begin"][: len(args)]
    n_begin = 0 if p["to_begin"] is None else np.size(p["to_begin"])
    n_mid = max(x.size - 1, 0)
    projectors = {k: _projector(p[k]) for k in positional if p[k] is not None}
    project_a = _projector(ary)
    nargs = len(args)

    def ediff1d_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        if y_bar is None:
            return _zero_pullback_result(nargs)
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
    p = _bind(_EDIFF1D_SIG, (ary, *args), kwargs)
    y = np.ediff1d(ary, *args, **kwargs)
    positional = ["to_end", "to_begin"][: len(args)]
    tangents = dict(zip(positional, dargs[2:]))
    a_dot = _dense(dargs[1], ary)
    parts = []
    any_tangent = a_dot is not None
    for key in ("to_begin", None, "to_end"):
        if key is None:
            mid = np.diff(np.ravel(a_dot)) if a_dot is not None else np.zeros(
                max(np.size(ary) - 1, 0))
            parts.append(mid)
        elif p[key] is not None:
            t = _dense(tangents[key], p[key]) if key in tangents else None
            any_tangent = any_tangent or t is not None
            parts.append(np.zeros(np.size(p[key])) if t is None else np.ravel(t))
    if not any_tangent:
        return y, ZeroTangent()
    return y, _like(np.concatenate(parts), y)


# ---------------------------------------------------------------------------- trapezoid

_TRAPEZOID_SIG = _signature(np.trapezoid) if hasattr(np, "trapezoid") else None


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
        p = _bind(_TRAPEZOID_SIG, (y, *args), kwargs)
        out = np.trapezoid(y, *args, **kwargs)
        axis = int(p["axis"])
        v, d = _trapezoid_parts(y, p["x"], p["dx"], axis)
        x = p["x"]
        names = ["x", "dx", "axis"][: len(args)]
        project_y = _projector(y)
        project_x = _projector(x) if "x" in names and x is not None else None
        project_dx = _projector(p["dx"]) if "dx" in names and x is None else None
        nargs = len(args)

        def trapezoid_pullback(out_bar):
            g = _cotangent(out_bar)
            if g is None:
                return _zero_pullback_result(nargs)
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
                    return project_x(_sum_to(np.moveaxis(full, -1, axis), np.shape(x)))

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
        p = _bind(_TRAPEZOID_SIG, (y, *args), kwargs)
        out = np.trapezoid(y, *args, **kwargs)
        axis = int(p["axis"])
        names = ["x", "dx", "axis"][: len(args)]
        tangents = dict(zip(names, dargs[2:]))
        y_dot = _dense(dargs[1], y)
        x_dot = _dense(tangents["x"], p["x"]) if "x" in tangents and p["x"] is not None else None
        dx_dot = (_dense(tangents["dx"], p["dx"])
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
        return out, _like(total, out)


def _differentiable_scalar(v: Any) -> bool:
    return isinstance(v, (float, complex, np.floating, np.complexfloating))


def _trapezoid_dx(y: Any, x_dot: Any, axis: int) -> Any:
    v, d_dot = _trapezoid_parts(y, x_dot, 1.0, axis)
    return np.sum((v[..., 1:] + v[..., :-1]) / 2 * d_dot, axis=-1)


# ------------------------------------------------------------------------------ linspace

_LINSPACE_SIG = _signature(np.linspace)


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
    p = _bind(_LINSPACE_SIG, (start, stop, *args), kwargs)
    y = np.linspace(start, stop, *args, **kwargs)
    retstep = bool(p["retstep"])
    samples = y[0] if retstep else y
    ndim = samples.ndim
    axis = int(p["axis"]) % ndim
    t, inv_div = _linspace_weights(p)
    project_start, project_stop = _projector(start), _projector(stop)
    nargs = len(args)
    no_tangent = _no_tangent_output(samples)

    def linspace_pullback(y_bar):
        y_bar = unthunk(y_bar)
        step_bar = None
        if retstep and not isinstance(y_bar, (ZeroTangent, NoTangent)):
            parts = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
            y_bar, step_bar = parts[0], _cotangent(parts[1])
        y_bar = _cotangent(y_bar)
        if no_tangent or (y_bar is None and step_bar is None):
            return (NoTangent(), project_start(ZeroTangent()), project_stop(ZeroTangent()),
                    *_rest_bars(args))
        tw = _linspace_along(t, ndim, axis)
        start_bar = 0 if y_bar is None else np.sum(y_bar * (1 - tw), axis=axis)
        stop_bar = 0 if y_bar is None else np.sum(y_bar * tw, axis=axis)
        if step_bar is not None:
            start_bar = start_bar - step_bar * inv_div
            stop_bar = stop_bar + step_bar * inv_div
        return (NoTangent(), project_start(_sum_to(np.asarray(start_bar), np.shape(start))),
                project_stop(_sum_to(np.asarray(stop_bar), np.shape(stop))),
                *(NoTangent(),) * nargs)

    return y, linspace_pullback


@frule.register(np.linspace)
def linspace_frule(dargs, start, stop, *args, **kwargs):
    p = _bind(_LINSPACE_SIG, (start, stop, *args), kwargs)
    y = np.linspace(start, stop, *args, **kwargs)
    retstep = bool(p["retstep"])
    samples = y[0] if retstep else y
    start_dot, stop_dot = _dense(dargs[1], start), _dense(dargs[2], stop)
    if (start_dot is None and stop_dot is None) or _no_tangent_output(samples):
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
    y_dot = _like(s0 * (1 - tw) + s1 * tw, samples)
    if not retstep:
        return y, y_dot
    return y, Tangent[tuple](y_dot, _like((np.asarray(stop_dot) - start_dot) * inv_div, y[1]))


# -------------------------------------------------------------------------------- arange


def _sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast result ``g`` back to ``shape``."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    out = np.sum(g, axis=axes, keepdims=True) if axes else g
    return out.reshape(shape)


def _is_integer(v: Any) -> bool:
    return isinstance(v, (int, np.integer, bool, np.bool_))


@rrule.register(np.arange)
def arange_rrule(*args, **kwargs):
    y = np.arange(*args, **kwargs)
    nargs = len(args)
    # arange(stop) / arange(start, stop) / arange(start, stop, step): y_k = start + k*step;
    # stop (and an int anywhere) only sets the length, a zero derivative almost everywhere.
    roles = ["stop"] if nargs == 1 else ["start", "stop", "step"][:nargs]
    projectors = [_projector(v) for v in args]
    no_tangent = _no_tangent_output(y)

    def arange_pullback(y_bar):
        y_bar = _cotangent(y_bar)
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
    if len(args) < 2 or _no_tangent_output(y):
        return y, ZeroTangent()
    start_dot = _dense(dargs[1], args[0])
    step_dot = _dense(dargs[3], args[2]) if len(args) > 2 else None
    if start_dot is None and step_dot is None:
        return y, ZeroTangent()
    y_dot = np.zeros(y.shape, dtype=y.dtype)
    if start_dot is not None:
        y_dot = y_dot + start_dot
    if step_dot is not None:
        y_dot = y_dot + step_dot * np.arange(y.size)
    return y, _like(y_dot, y)


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
    sig = _signature(f)

    def setup(args: tuple, kwargs: dict) -> tuple:
        p = _bind(sig, args, kwargs)
        y = f(*args, **kwargs)
        axis = int(p["axis"]) % max(np.ndim(y), 1)
        return p, y, axis

    def spaced_rrule(*args, **kwargs):
        p, y, axis = setup(args, kwargs)
        positional = names[: len(args)]
        no_tangent = _no_tangent_output(y)
        projectors = {k: _projector(p[k]) for k in positional if k in ("start", "stop", "base")}

        def spaced_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            ds = None if (y_bar is None or no_tangent) else partials(p, y, axis)
            bars = []
            for k in positional:
                if k not in projectors:
                    bars.append(NoTangent())
                elif ds is None:
                    bars.append(projectors[k](ZeroTangent()))
                else:
                    g = np.sum(np.conj(ds[k]) * y_bar, axis=axis)
                    bars.append(projectors[k](_sum_to(g, np.shape(p[k]))))
            return (NoTangent(), *bars)

        spaced_pullback.__name__ = spaced_pullback.__qualname__ = f"{name}_pullback"
        return y, spaced_pullback

    def spaced_frule(dargs, *args, **kwargs):
        p, y, axis = setup(args, kwargs)
        if _no_tangent_output(y):
            return y, ZeroTangent()
        bshape = y.shape[:axis] + y.shape[axis + 1:]
        ds = None
        y_dot: Any = None
        for k, t in zip(names, dargs[1:]):
            if k not in ("start", "stop", "base"):
                continue
            t = _dense(t, p[k])
            if t is None:
                continue
            ds = partials(p, y, axis) if ds is None else ds
            term = ds[k] * np.expand_dims(np.broadcast_to(t, bshape), axis)
            y_dot = term if y_dot is None else y_dot + term
        if y_dot is None:
            return y, ZeroTangent()
        return y, _like(y_dot, y)

    spaced_rrule.__name__ = spaced_rrule.__qualname__ = f"{name}_rrule"
    spaced_frule.__name__ = spaced_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(spaced_rrule)
    frule.register(f)(spaced_frule)


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
        project_fill = _projector(fill_value)
        no_tangent = _no_tangent_output(y)
        fill_shape = np.shape(fill_value)

        def fill_pullback(y_bar):
            y_bar = _cotangent(y_bar)
            if y_bar is None or no_tangent:
                fill_bar = project_fill(ZeroTangent())
            else:
                fill_bar = project_fill(_sum_to(y_bar, fill_shape))
            return (NoTangent(), NoTangent(), fill_bar, *_rest_bars(args))

        fill_pullback.__name__ = fill_pullback.__qualname__ = f"{name}_pullback"
        return y, fill_pullback

    def fill_frule(dargs, first, fill_value, *args, **kwargs):
        y = f(first, fill_value, *args, **kwargs)
        fill_dot = _dense(dargs[2], fill_value)
        if fill_dot is None or _no_tangent_output(y):
            return y, ZeroTangent()
        return y, _like(np.broadcast_to(fill_dot, y.shape), y)

    fill_rrule.__name__ = fill_rrule.__qualname__ = f"{name}_rrule"
    fill_frule.__name__ = fill_frule.__qualname__ = f"{name}_frule"
    rrule.register(f)(fill_rrule)
    frule.register(f)(fill_frule)


_fill_rules(np.full, "full")
_fill_rules(np.full_like, "full_like")


# ------------------------------------------------------------------------------ bincount


@rrule.register(np.bincount)
def bincount_rrule(x, *args, **kwargs):
    y = np.bincount(x, *args, **kwargs)
    weights = args[0] if args else None
    project_w = _projector(weights) if weights is not None else None
    index = np.asarray(x)

    def bincount_pullback(y_bar):
        y_bar = _cotangent(y_bar)
        rest: list = [NoTangent()] * len(args)
        if project_w is not None:
            rest[0] = project_w(ZeroTangent() if y_bar is None else y_bar[index])
        return (NoTangent(), NoTangent(), *rest)

    return y, bincount_pullback


@frule.register(np.bincount)
def bincount_frule(dargs, x, *args, **kwargs):
    y = np.bincount(x, *args, **kwargs)
    w_dot = _dense(dargs[2], args[0]) if args and args[0] is not None else None
    if w_dot is None:
        return y, ZeroTangent()
    return y, _like(np.bincount(x, w_dot, minlength=y.size), y)


# ---------------------------------------------------------------------- non-differentiable

for _f in (
    np.argmax, np.argmin, np.nanargmax, np.nanargmin, np.argsort, np.argpartition,
    np.lexsort, np.argwhere, np.nonzero, np.flatnonzero, np.searchsorted, np.digitize,
    np.count_nonzero, np.any, np.all, np.isclose, np.allclose, np.array_equal,
    np.array_equiv, np.isreal, np.iscomplex, np.isrealobj, np.iscomplexobj, np.isscalar,
    np.isposinf, np.isneginf, np.isin, np.einsum_path,
    # metadata and constant constructors (their outputs do not depend on array values)
    np.shape, np.ndim, np.size, np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like,
    np.empty_like, np.eye, np.identity, np.tri,
):
    non_differentiable(_f)

# memory and dtype queries (pullbacks call them; under a second derivative they see tracers)
for _name in ("may_share_memory", "shares_memory", "result_type", "can_cast",
              "promote_types", "broadcast_shapes", "min_scalar_type", "isdtype", "issubdtype"):
    if callable(getattr(np, _name, None)):
        non_differentiable(getattr(np, _name))

del _f, _fn, _name


# --------------------------------------------------------------------------------- cov

_COV_SIG = _signature(np.cov)


def _cov_rows(v: Any, rowvar: bool, dtype: Any) -> tuple[np.ndarray, Any]:
    """``v`` as NumPy's cov reads it: variables in rows, observations in columns; and
    the map of a cotangent in that layout back to ``v``'s shape."""
    a = np.asarray(v)
    x = np.array(a, ndmin=2, dtype=dtype)
    transposed = not rowvar and x.shape[0] != 1
    if transposed:
        x = x.T

    def back(g: np.ndarray) -> np.ndarray:
        return (g.T if transposed else g).reshape(a.shape)

    return x, back


def _cov_parts(m: Any, p: dict) -> tuple:
    """(X, rows of m, back maps, weights or None, normalisation) of ``np.cov``."""
    dtype = p["dtype"]
    if dtype is None:
        dtype = np.result_type(m, np.float64) if p["y"] is None else \
            np.result_type(m, p["y"], np.float64)
    x, back_m = _cov_rows(m, p["rowvar"], dtype)
    nm, back_y = x.shape[0], None
    if p["y"] is not None:
        xy, back_y = _cov_rows(p["y"], p["rowvar"], dtype)
        x = np.concatenate((x, xy), axis=0)
    ddof = p["ddof"]
    if ddof is None:
        ddof = 1 if not p["bias"] else 0
    w = None
    if p["fweights"] is not None:
        w = np.asarray(p["fweights"], dtype=float)
    if p["aweights"] is not None:
        aw = np.asarray(p["aweights"], dtype=float)
        w = aw if w is None else w * aw
    if w is None:
        fact = x.shape[1] - ddof
    elif ddof == 0:
        fact = w.sum()
    elif p["aweights"] is None:
        fact = w.sum() - ddof
    else:
        fact = w.sum() - ddof * np.sum(w * np.asarray(p["aweights"], dtype=float)) / w.sum()
    return x, nm, back_m, back_y, w, max(fact, 0)


def _cov_centred(x: np.ndarray, w: Any) -> np.ndarray:
    """The map ``dX -> dX - (dX w / sum w) 1^T`` (centring; also its own adjoint's
    transpose: see ``_cov_uncentre``)."""
    avg = np.average(x, axis=1, weights=w)
    return x - avg[:, None]


def _cov_uncentre(g: np.ndarray, w: Any) -> np.ndarray:
    """The adjoint of centring: ``G -> G - (G 1) w^T / sum w``."""
    n = g.shape[1]
    weights = np.full(n, 1.0 / n) if w is None else w / w.sum()
    return g - g.sum(axis=1, keepdims=True) * weights[None, :]


@rrule.register(np.cov)
def cov_rrule(m, *args, **kwargs):
    p = _bind(_COV_SIG, (m, *args), kwargs)
    y = np.cov(m, *args, **kwargs)
    x, nm, back_m, back_y, w, fact = _cov_parts(m, p)
    xc = _cov_centred(x, w)
    xcw = xc if w is None else xc * w[None, :]
    project_m = _projector(m)
    project_y = _projector(p["y"]) if len(args) >= 1 and p["y"] is not None else None
    nargs = len(args)

    def cov_pullback(c_bar):
        c_bar = _cotangent(c_bar)
        if c_bar is None:
            return _zero_pullback_result(nargs)
        c_bar = np.reshape(c_bar, (x.shape[0], x.shape[0]))
        # C = Xc W Xc^H / fact: Xc_bar = (C_bar + C_bar^H) Xc W / fact
        g = _cov_uncentre((c_bar + np.conj(c_bar.T)) @ xcw / fact, w)
        bars = [NoTangent(), project_m(back_m(g[:nm])), *_rest_bars(args)]
        if project_y is not None:
            bars[2] = project_y(back_y(g[nm:]))
        return tuple(bars)

    return y, cov_pullback


@frule.register(np.cov)
def cov_frule(dargs, m, *args, **kwargs):
    p = _bind(_COV_SIG, (m, *args), kwargs)
    y = np.cov(m, *args, **kwargs)
    has_y = len(args) >= 1 and p["y"] is not None
    m_dot = _dense(dargs[1], m)
    yv_dot = _dense(dargs[2], p["y"]) if has_y else None
    if _no_tangent_output(y) or (m_dot is None and yv_dot is None):
        return y, ZeroTangent()
    x, _, _, _, w, fact = _cov_parts(m, p)
    parts = [_cov_rows(np.zeros(np.shape(m)) if m_dot is None else m_dot, p["rowvar"],
                       None)[0]]
    if p["y"] is not None:
        parts.append(_cov_rows(np.zeros(np.shape(p["y"])) if yv_dot is None else yv_dot,
                               p["rowvar"], None)[0])
    dxc = _cov_centred(np.concatenate(parts, axis=0), w)
    # dC = (dXc W Xc^H + Xc W dXc^H) / fact
    d = (dxc if w is None else dxc * w[None, :]) @ np.conj(_cov_centred(x, w).T)
    return y, _like(np.reshape((d + np.conj(d.T)) / fact, np.shape(y)), y)


# ---------------------------------------------------------------------------- corrcoef

_CORRCOEF_SIG = _signature(np.corrcoef)


def _corrcoef_cov_args(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """np.cov's arguments for a corrcoef call (bias= and ddof= have no effect there)."""
    cov_args = args[:2]  # y, rowvar
    cov_kwargs = {k: v for k, v in kwargs.items() if k in ("y", "rowvar", "dtype")}
    return cov_args, cov_kwargs


@rrule.register(np.corrcoef)
def corrcoef_rrule(x, *args, **kwargs):
    r = np.corrcoef(x, *args, **kwargs)
    cov_args, cov_kwargs = _corrcoef_cov_args(args, kwargs)
    c, cov_pullback = cov_rrule(x, *cov_args, **cov_kwargs)
    nargs = len(args)
    if np.ndim(c) == 0:  # one variable: c / c
        return r, lambda r_bar: _zero_pullback_result(nargs)
    s = np.sqrt(np.diagonal(c).real)
    rn = c / s[:, None] / s[None, :]  # r before NumPy clips it to [-1, 1]

    def corrcoef_pullback(r_bar):
        r_bar = _cotangent(r_bar)
        if r_bar is None:
            return _zero_pullback_result(nargs)
        # r = c / (s s^T), s = sqrt(Re diag(c))
        c_bar = r_bar / s[:, None] / s[None, :]
        t = np.real(np.conj(r_bar) * rn)
        s_bar = -(t.sum(axis=1) + t.sum(axis=0)) / s
        c_bar = c_bar + np.diag(s_bar / (2 * s))
        bars = cov_pullback(c_bar)
        return (NoTangent(), bars[1], *bars[2:2 + len(cov_args)],
                *_rest_bars(args[len(cov_args):]))

    return r, corrcoef_pullback


@frule.register(np.corrcoef)
def corrcoef_frule(dargs, x, *args, **kwargs):
    r = np.corrcoef(x, *args, **kwargs)
    cov_args, cov_kwargs = _corrcoef_cov_args(args, kwargs)
    c, c_dot = cov_frule(dargs[:2 + len(cov_args)], x, *cov_args, **cov_kwargs)
    if np.ndim(c) == 0 or isinstance(c_dot, (ZeroTangent, NoTangent)):
        return r, ZeroTangent()
    s = np.sqrt(np.diagonal(c).real)
    rn = c / s[:, None] / s[None, :]
    s_dot = np.diagonal(c_dot).real / (2 * s)
    r_dot = c_dot / s[:, None] / s[None, :] - rn * (s_dot[:, None] / s[:, None]
                                                    + s_dot[None, :] / s[None, :])
    return r, _like(r_dot, r)


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
            result.append(ProjectTo(h)(-total / h))
    return result


@rrule.register(np.gradient)
def gradient_rrule(f, *varargs, axis=None, edge_order=1):
    y = np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    x = np.asarray(f)
    axes = _gradient_axes(x.ndim, axis)
    outs = list(y) if isinstance(y, (tuple, list)) else [y]
    project_f = _projector(f)
    stencils = None

    def gradient_pullback(y_bar):
        nonlocal stencils
        y_bar = unthunk(y_bar)
        if isinstance(y_bar, (ZeroTangent, NoTangent)):
            return (NoTangent(), ZeroTangent(), *(NoTangent(),) * len(varargs))
        parts = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
        bars = [_cotangent(b) for b in (parts if len(outs) > 1 else [parts])]
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
    f_dot = _dense(dargs[1], f)
    dots = [0] * len(outs)
    if f_dot is not None:
        g = np.gradient(f_dot, *varargs, axis=axis, edge_order=edge_order)
        dots = list(g) if isinstance(g, (tuple, list)) else [g]
    for v_i, h in enumerate(varargs):
        h_dot = unthunk(dargs[2 + v_i])
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
    dots = [_like(np.broadcast_to(d, np.shape(o)), o) for d, o in zip(dots, outs)]
    return y, (Tangent[type(y)](*dots) if len(outs) > 1 else dots[0])
