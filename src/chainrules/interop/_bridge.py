"""What every bridge does the same way: call the rules, and convert tangents at the edges.

A bridge sees a call as flat *leaves* (the arrays a framework tracks) inside a
structure of Python containers. Towards the rules, leaves become NumPy arrays and
the framework's cotangents become ChainRules tangents mirroring the output's
structure. Back towards the framework, a rule's tangents are looked up leaf by
leaf, projected onto each primal leaf's space (shape, dtype, real part) with
``ProjectTo``, and zeros become ``None`` so the framework can skip them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import (
    AbstractTangent,
    NoTangent,
    NotImplementedDerivativeError,
    NotImplementedTangent,
    ProjectionError,
    ZeroTangent,
    frule,
    rrule,
)
from chainrules.core._errors import func_name

from ._errors import NoRuleError, TangentConversionError
from ._tree import PathError, format_path, tangent_at, tangent_like

__all__ = [
    "call_frule",
    "call_rrule",
    "is_differentiable_dtype",
    "leaf_tangent",
    "output_cotangent",
    "tangent_leaf",
]


def call_rrule(bridge: str, config: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    """``rrule(f, *args, **kwargs)`` (with ``config`` if given), or `NoRuleError`."""
    result = rrule(f, *args, **kwargs) if config is None else rrule(config, f, *args, **kwargs)
    if result is None:
        raise NoRuleError(bridge, f, "rrule", tuple(map(type, args)),
                          "reverse mode (a gradient or VJP)")
    return result


def call_frule(bridge: str, config: Any, dargs: tuple, f: Any, args: tuple,
               kwargs: dict) -> Any:
    """``frule(dargs, f, *args, **kwargs)`` (with ``config`` if given), or `NoRuleError`."""
    if config is None:
        result = frule(dargs, f, *args, **kwargs)
    else:
        result = frule(config, dargs, f, *args, **kwargs)
    if result is None:
        raise NoRuleError(bridge, f, "frule", tuple(map(type, args)),
                          "forward mode (a JVP)")
    return result


def is_differentiable_dtype(dtype: Any) -> bool:
    """Float and complex dtypes carry tangents; integers and bools do not."""
    return np.dtype(dtype).kind in "fc"


def tangent_leaf(bridge: str, f: Any, what: str, position: int, path: tuple, primal: Any,
                 tangent: Any, *, framework: str = "framework", array: str = "an array",
                 structure: str = "the argument's", where: str | None = None) -> Any:
    """The part of ``tangent`` at ``path`` as it is, or None for a zero; the checks every
    bridge makes before converting it (``framework``, ``array``, ``structure`` and
    ``where`` word the errors).

    Raises:
        TangentConversionError: the tangent's layout does not match, or a structural
            tangent stands where an array is.
        NotImplementedDerivativeError: the tangent is a ``NotImplementedTangent``.
    """
    try:
        t = tangent_at(tangent, path)
    except PathError as e:
        raise TangentConversionError(
            bridge, f, what, position, format_path(e.step_path), primal, e.got,
            f"its layout does not match {structure} structure at {format_path(e.step_path)}",
        ) from None
    if isinstance(t, (ZeroTangent, NoTangent)):
        return None
    if isinstance(t, NotImplementedTangent):
        where = f"{what} {position}{format_path(path)}" if where is None else where
        raise NotImplementedDerivativeError(
            t, f"convert to a {framework} tangent (the {where} of {func_name(f)} in {bridge})")
    if isinstance(t, AbstractTangent):
        raise TangentConversionError(bridge, f, what, position, format_path(path), primal, t,
                                     f"a structural tangent cannot stand for {array}")
    return t


def leaf_tangent(bridge: str, f: Any, what: str, position: int, path: tuple, primal: Any,
                 tangent: Any) -> np.ndarray | None:
    """The part of ``tangent`` at ``path`` as an array shaped like ``primal``, or None for zero.

    ``tangent`` is the whole tangent of argument (or output) ``position``; ``primal``
    is the NumPy leaf at ``path`` inside that argument.
    """
    t = tangent_leaf(bridge, f, what, position, path, primal, tangent)
    if t is None:
        return None
    try:
        projected = _project(primal, t)
    except (ProjectionError, TypeError, ValueError) as e:
        raise TangentConversionError(bridge, f, what, position, format_path(path), primal, t,
                                     str(e)) from None
    if isinstance(projected, (ZeroTangent, NoTangent)):
        return None
    out = np.asarray(projected)
    if out.dtype.kind not in "fc":
        raise TangentConversionError(bridge, f, what, position, format_path(path), primal, t,
                                     f"its dtype {out.dtype} is not a float or complex dtype")
    return out


def _project(primal: Any, t: Any) -> Any:
    from chainrules.core import ProjectTo

    if isinstance(primal, (np.ndarray, np.generic)) and primal.dtype.kind in "fc":
        # the common case, without building a projector: same shape and dtype already
        if (isinstance(t, np.ndarray) and t.dtype == primal.dtype
                and t.shape == np.shape(primal)):
            return t
    return ProjectTo(primal)(t)


def output_cotangent(y: Any, leaf_cotangents: dict) -> Any:
    """The ChainRules cotangent of output ``y`` from cotangents of its leaves.

    ``leaf_cotangents`` maps a path (see ``_tree``) to a NumPy array, or to None
    (or nothing) for a zero. Each is cast to the type of its leaf in ``y`` (a
    Python float for a float, a NumPy scalar for one, an array of the leaf's dtype
    otherwise) so that pullbacks see cotangents of their output's type.
    """

    def leaf(path: tuple, y_leaf: Any) -> Any:
        if isinstance(y_leaf, (bool, int, np.bool_)) or (
            isinstance(y_leaf, (np.ndarray, np.generic)) and y_leaf.dtype.kind not in "fc"
        ):
            return NoTangent()
        ct = leaf_cotangents.get(path)
        if ct is None:
            return ZeroTangent()
        if isinstance(y_leaf, complex):
            return complex(ct)
        if isinstance(y_leaf, float):
            return float(np.real(ct))
        if isinstance(y_leaf, np.generic):
            return y_leaf.dtype.type(ct)
        if isinstance(y_leaf, np.ndarray):
            ct = np.asarray(ct)
            if ct.dtype != y_leaf.dtype:
                ct = ct.astype(y_leaf.dtype)
            return ct.reshape(y_leaf.shape)
        return ct

    return tangent_like(y, leaf)
