"""Rules for NumPy reductions: ``sum``, ``nansum``, ``prod``, ``nanprod``, ``max``/``amax``,
``min``/``amin``, ``nanmax``, ``nanmin``, ``ptp`` and ``bincount`` (w.r.t. positional
``weights``); index, count and predicate results (``argmax``, ``argsort``, ``nonzero``,
``any``, ``isclose``...), array metadata and constant constructors (``zeros``,
``ones_like``, ``eye``...) are non-differentiable. Statistics (``mean``, ``var``,
``median``, ``quantile``, ``cov``...) are in ``statistics.py``, scans and differences in
``scans.py``, constructors from values in ``creation.py``.

Conventions:

- ``axis`` (int, negative, tuple, None), ``keepdims``, ``dtype`` and ``initial`` (as a
  keyword: a constant) are supported; ``out=`` is refused with `OutArgumentError`,
  ``where=`` (other than True) with `WhereArgumentError`. Positional arguments that
  are not arrays of values (``axis``, ``dtype``...) get ``NoTangent()``; keyword
  arguments are not differentiated.
- Complex inputs follow DESIGN §2: the pullback of a linear map is its adjoint, e.g.
  ``prod``'s pullback multiplies by ``conj`` of the product of the other elements.
- ``prod`` never divides by ``x`` where it is zero: exact with one zero, several
  zeros, or none (exclusive products from both sides).
- ``max``/``min``/``nanmax``/``nanmin``/``ptp``: ties split the cotangent equally
  among the tied elements (a subgradient). An ``initial=`` value is a constant: if it
  wins, the elements get zero. Complex values are ordered as NumPy orders them
  (lexicographically); the selected element gets the cotangent.
- ``nan*`` functions: elements that are NaN get a zero cotangent.

Examples:
    >>> import numpy as np
    >>> from chainrules import rrule
    >>> y, prod_pullback = rrule(np.prod, np.array([2.0, 0.0, 3.0]))
    >>> prod_pullback(1.0)[1]              # exact at a zero: no division by x
    array([0., 6., 0.])
    >>> y, max_pullback = rrule(np.max, np.array([[1.0, 4.0, 4.0]]), axis=1)
    >>> max_pullback(np.array([1.0]))[1]   # ties share the cotangent
    array([[0. , 0.5, 0.5]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import NoTangent, ZeroTangent, frule, non_differentiable, rrule
from chainrules.rules import _kit as kit

from . import _reduce_kernel as kernel
from ._reduce_kernel import WhereArgumentError

__all__ = ["WhereArgumentError"]


# ------------------------------------------------------------------------- sum, prod


def _ones(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> None:
    return None  # all ones


def _sum_whole(a: np.ndarray) -> Any:
    """``np.sum(a)``: for an ndarray, NumPy's wrapper calls exactly this."""
    return np.add.reduce(a, None)


kernel.reduction_rule(np.sum, _ones, whole=_sum_whole)
kernel.reduction_rule(np.nansum, _ones, nan=True)


def _prod_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
    """The product of the other elements of each slice (times a keyword ``initial``)."""
    others = kernel.prod_others(x, axes)
    return others * p["initial"] if kernel.is_given(p.get("initial")) else others


def _nanprod_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
    # NaNs count as 1, as in the primal
    return _prod_weights(np.where(np.isnan(x), 1, x), y, p, axes, keepdims)


kernel.reduction_rule(np.prod, _prod_weights)
kernel.reduction_rule(np.nanprod, _nanprod_weights, nan=True)


# ------------------------------------------------------------ max, min, nanmax, nanmin


def _extremum_mask(x: np.ndarray, y: Any, axes: tuple, keepdims: bool) -> np.ndarray:
    """Where each element equals its slice's extremum, divided by the number of ties."""
    mask = x == kernel.expand(np.asarray(y), x.shape, axes, keepdims)
    count = np.sum(mask, axis=axes, keepdims=True)
    return mask / np.maximum(count, 1)


def _extremum_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
    return _extremum_mask(x, y, axes, keepdims)


def _ptp_weights(x: np.ndarray, y: Any, p: dict, axes: tuple, keepdims: bool) -> Any:
    hi = np.max(x, axis=axes, keepdims=keepdims)
    lo = np.min(x, axis=axes, keepdims=keepdims)
    return _extremum_mask(x, hi, axes, keepdims) - _extremum_mask(x, lo, axes, keepdims)


for _f in (np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin):
    kernel.reduction_rule(_f, _extremum_weights)
kernel.reduction_rule(np.ptp, _ptp_weights)


# ------------------------------------------------------------------------------ bincount


@rrule.register(np.bincount)
def bincount_rrule(x, *args, **kwargs):
    y = np.bincount(x, *args, **kwargs)
    weights = args[0] if args else None
    project_w = kit.array_projector(weights) if weights is not None else None
    index = np.asarray(x)

    def bincount_pullback(y_bar):
        y_bar = kit.nonzero_array(y_bar)
        rest: list = [NoTangent()] * len(args)
        if project_w is not None:
            rest[0] = project_w(ZeroTangent() if y_bar is None else y_bar[index])
        return (NoTangent(), NoTangent(), *rest)

    return y, bincount_pullback


@frule.register(np.bincount)
def bincount_frule(dargs, x, *args, **kwargs):
    y = np.bincount(x, *args, **kwargs)
    w_dot = (
        kit.dense_tangent(dargs[2], args[0], zeros=False) if args and args[0] is not None else None
    )
    if w_dot is None:
        return y, ZeroTangent()
    return y, kit.fit_output(np.bincount(x, w_dot, minlength=y.size), y)


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

