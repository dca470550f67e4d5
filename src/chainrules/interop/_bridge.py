"""What every bridge does the same way: call the rules, and convert tangents at the edges.

A bridge sees a call as flat *leaves* (the arrays a framework tracks) inside a
structure of Python containers. Towards the rules, leaves become NumPy arrays and
the framework's cotangents become ChainRules tangents mirroring the output's
structure. Back towards the framework, a rule's tangents are looked up leaf by
leaf, projected onto each primal leaf's space (shape, dtype, real part) with
``ProjectTo``, and zeros become ``None`` so the framework can skip them.
"""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from typing import Any

import numpy as np

from chainrules.core import (
    AbstractTangent,
    NoTangent,
    NotImplementedDerivativeError,
    NotImplementedTangent,
    ProjectionError,
    PullbackError,
    ZeroTangent,
    frule,
    rrule,
    unthunk,
)
from chainrules.core._errors import func_name

from ._errors import NoRuleError, TangentConversionError
from ._tree import PathError, format_path, tangent_at, tangent_like

__all__ = [
    "argument_cotangents",
    "as_primal_form",
    "call_frule",
    "call_rrule",
    "check_pullback_entries",
    "framework_equivalent",
    "frule_tangents",
    "is_differentiable_dtype",
    "keyword_parameter_hint",
    "leaf_tangent",
    "non_tangent_reason",
    "numpy_conj",
    "numpy_met_framework_value",
    "output_cotangent",
    "rule_call_site",
    "tangent_leaf",
]


def call_rrule(bridge: str, config: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    """``rrule(f, *args, **kwargs)`` (with ``config`` if given), or `NoRuleError`."""
    result = rrule(f, *args, **kwargs) if config is None else rrule(config, f, *args, **kwargs)
    if result is None:
        raise NoRuleError(bridge, f, "rrule", tuple(map(type, args)),
                          "reverse mode (a gradient or VJP)",
                          hint=keyword_parameter_hint(f, kwargs, rrule))
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
                          "forward mode (a JVP)", hint=keyword_parameter_hint(f, kwargs, frule))
    return result


def keyword_parameter_hint(f: Any, kwargs: dict, table: Any) -> str:
    """Why a rule that exists was not found, when a positional parameter came by keyword.

    Rules dispatch on the types of the positional arguments, so ``L(x, t=t)`` looks
    for a rule of ``L(x)``; an rrule written as ``def L_rrule(x, t)`` is not it.
    Returns a sentence naming those keywords (and how to pass them), or ``""``.

    Examples:
        >>> import chainrules
        >>> def scale(x, t):
        ...     return t * x
        >>> @chainrules.rrule.register(scale)
        ... def scale_rrule(x, t):
        ...     return t * x, lambda y_bar: (chainrules.NoTangent(), t * y_bar, x * y_bar)
        >>> print(keyword_parameter_hint(scale, {"t": 2.0}, chainrules.rrule))
        The rules of ...scale dispatch on positional arguments only, and t is a
        positional parameter of scale passed by keyword: call scale(x, t) with t positional.
    """
    if not kwargs or not table.has_rules(f):
        return ""
    try:
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):  # builtins and ufuncs without a signature
        return ""
    positional = [name for name in kwargs if name in params and params[name].kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)]
    if not positional:
        return ""
    names = ", ".join(positional)
    order = ", ".join(name for name, p in params.items() if p.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY))
    short = getattr(f, "__name__", "f")
    are = "is a positional parameter" if len(positional) == 1 else "are positional parameters"
    return (f"The rules of {func_name(f)} dispatch on positional arguments only, and "
            f"{names} {are} of {short} passed by keyword: call {short}({order}) with "
            f"{names} positional.")


def non_tangent_reason(t: Any) -> str | None:
    """Why ``t``, returned by a rule as a tangent, is no tangent at all; None if it may be one.

    Refused always (not only in debug mode), by every bridge: ``None`` (a rule that
    forgot an entry; a framework would read it as "no gradient" and give a silent
    zero) and strings or bytes.

    Examples:
        >>> print(non_tangent_reason(None))
        None is not a tangent (ZeroTangent() is the zero tangent, NoTangent() the tangent ...
        >>> non_tangent_reason(1.5) is None
        True
    """
    if t is None:
        return ("None is not a tangent (ZeroTangent() is the zero tangent, NoTangent() the "
                "tangent of a non-differentiable argument)")
    if isinstance(t, (str, bytes)):
        return f"a {type(t).__qualname__} is not a tangent"
    return None


def check_pullback_entries(bridge: str, f: Any, bars: Any, nargs: int) -> None:
    """Raise `PullbackError` unless ``bars`` (what a pullback returned) is a tuple of
    ``1 + nargs`` entries: ``(self_bar, *arg_bars)``. The message says when it looks like
    ``self_bar`` was forgotten, or when a single value came back instead of a tuple.

    Examples:
        >>> import numpy as np
        >>> check_pullback_entries("jax_function", np.sin, (None, 1.0), 1)
        >>> check_pullback_entries("jax_function", np.sin, (1.0,), 1)
        Traceback (most recent call last):
        ...
        chainrules.core._errors.PullbackError: jax_function(numpy.sin): the rrule's ...
    """
    if isinstance(bars, tuple) and len(bars) == 1 + nargs:
        return
    expected = (f"expected {1 + nargs} (self_bar for the function itself, then one per "
                f"positional argument)")
    if isinstance(bars, tuple):
        got = f"{len(bars)} {'entry' if len(bars) == 1 else 'entries'}"
        if len(bars) == nargs:
            fix = ("It looks like the pullback forgot self_bar: return (NoTangent(), "
                   f"{', '.join(['x_bar'] * nargs) if nargs <= 3 else '*arg_bars'}), "
                   f"with NoTangent() first for a plain function.")
        else:
            fix = "Fix the rule's pullback."
    else:
        got = f"a {type(bars).__qualname__}, not a tuple"
        fix = ("Return a tuple: (NoTangent(), x_bar) for one argument (NoTangent() is "
               "self_bar, the function's own cotangent).")
    raise PullbackError(f"{bridge}({func_name(f)}): the rrule's pullback returned {got}, "
                        f"{expected}. {fix}")


def _library_dirs() -> tuple[str, ...]:
    """Folders whose frames are not the rule's own code: the frameworks, NumPy, SciPy,
    array-api-compat, and chainrules' core, bridges and rule kit (helpers the rules call)."""
    here = os.path.dirname(__file__)
    root = os.path.dirname(here)
    dirs = [here, os.path.join(root, "core")]
    for name in ("jax", "jaxlib", "numpy", "scipy", "array_api_compat", "torch", "autograd"):
        module = sys.modules.get(name)  # a library never imported has no frames
        if module is not None and getattr(module, "__file__", None):
            dirs.append(os.path.dirname(str(module.__file__)))
    return tuple(d + os.sep for d in dirs)


_HELPER_FILES = ("_kit.py",)


def rule_call_site(e: BaseException) -> tuple[str, int, str]:
    """File, line and source of the innermost frame of the rule's (or user's) own code
    in ``e``'s traceback: where a NumPy call met a tracer or a tensor.

    Frames of the frameworks, NumPy, SciPy and chainrules' own helpers are skipped, so
    a rule that calls a helper which calls ``np.asarray`` is named at its call of the
    helper. ``("<unknown>", 0, "")`` when no such frame exists.
    """
    skip = _library_dirs()
    found = ("<unknown>", 0, "")
    for frame in traceback.extract_tb(e.__traceback__):
        name = frame.filename
        if name.startswith(skip) or (os.path.basename(name) in _HELPER_FILES
                                     and (os.sep + "chainrules" + os.sep) in name):
            continue
        found = (name, frame.lineno or 0, (frame.line or "").strip())
    return found


def _library_name(f: Any) -> str:
    """``func_name(f)``, with the module found for a ufunc (which names none) in NumPy or
    ``scipy.special``."""
    name = func_name(f)
    if "." not in name and isinstance(f, np.ufunc):
        for module_name in ("numpy", "scipy.special"):
            module = sys.modules.get(module_name)
            if module is not None and getattr(module, f.__name__, None) is f:
                return f"{module_name}.{f.__name__}"
    return name


def _third_party_dirs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Folders of NumPy and SciPy, and of the other libraries a rule's frames pass through."""
    def dirs(names: tuple[str, ...]) -> tuple[str, ...]:
        out = []
        for name in names:
            module = sys.modules.get(name)
            if module is not None and getattr(module, "__file__", None):
                out.append(os.path.dirname(str(module.__file__)) + os.sep)
        return tuple(out)

    return (dirs(("numpy", "scipy")),
            dirs(("jax", "jaxlib", "array_api_compat", "torch", "autograd")))


def numpy_met_framework_value(e: BaseException) -> bool:
    """Whether ``e`` was raised because NumPy or SciPy code was handed a framework value.

    True when the innermost frame of code outside the libraries (the rule, the user's
    function, or the bridge calling ``f``) called straight into NumPy or SciPy, which
    then failed: ``np.take(tracer, i)`` calling ``tracer.take(i, mode="raise")``, a
    SciPy routine turning a tensor into an array. A failure inside the framework's own
    operations called from user code (a broadcasting mistake in ``jnp``) is not. The
    frameworks' own "cannot convert" errors (JAX's ``TracerArrayConversionError``)
    are classified by each bridge before this is asked.
    """
    numpy_dirs, other_dirs = _third_party_dirs()
    frames = traceback.extract_tb(e.__traceback__)
    next_after_own = None
    for k, frame in enumerate(frames):
        if not frame.filename.startswith(numpy_dirs + other_dirs):
            next_after_own = frames[k + 1] if k + 1 < len(frames) else None
    return next_after_own is not None and next_after_own.filename.startswith(numpy_dirs)


def framework_equivalent(f: Any, prefixes: dict[str, str],
                         known: dict[str, str] | None = None) -> str | None:
    """The dotted name of the framework's own version of a NumPy or SciPy function ``f``.

    ``known`` maps full names to a framework name (``{"scipy.linalg.expm":
    "torch.linalg.matrix_exp"}``) and is tried first; otherwise ``prefixes`` maps a
    library prefix to the framework's (``{"numpy.": "jax.numpy.", "scipy.":
    "jax.scipy."}``) and the renamed function must exist. None when there is none.

    Examples:
        >>> import pytest; jax = pytest.importorskip("jax")  # skips this example without JAX
        >>> import numpy as np
        >>> framework_equivalent(np.sin, {"numpy.": "jax.numpy."})
        'jax.numpy.sin'
    """
    name = _library_name(f)
    if known and name in known:
        return known[name]
    for prefix, replacement in prefixes.items():
        if not name.startswith(prefix):
            continue
        target = replacement + name[len(prefix):]
        module_name, _, attr = target.rpartition(".")
        try:
            module = __import__(module_name, fromlist=[attr])
        except ImportError:
            return None
        return target if callable(getattr(module, attr, None)) else None
    return None


def is_differentiable_dtype(dtype: Any) -> bool:
    """Float and complex dtypes carry tangents (ml_dtypes' ``bfloat16`` and ``float8_*``,
    which JAX uses, too); integers and bools do not."""
    dt = np.dtype(dtype)
    # ml_dtypes registers its floats with NumPy as kind "V" (void), like float0 ("void")
    return dt.kind in "fc" or (dt.kind == "V" and dt.name.startswith(("bfloat", "float")))


def tangent_leaf(bridge: str, f: Any, what: str, position: int, path: tuple, primal: Any,
                 tangent: Any, *, framework: str = "framework", array: str = "an array",
                 structure: str = "the argument's", where: str | None = None) -> Any:
    """The part of ``tangent`` at ``path`` as it is, or None for a zero; the checks every
    bridge makes before converting it (``framework``, ``array``, ``structure`` and
    ``where`` word the errors).

    Raises:
        TangentConversionError: the tangent's layout does not match, a structural
            tangent stands where an array is, or it is no tangent at all (None, a string:
            see `non_tangent_reason`).
        NotImplementedDerivativeError: the tangent is a ``NotImplementedTangent``.
    """
    try:
        t = tangent_at(tangent, path)
    except PathError as e:
        reason = non_tangent_reason(e.got)
        if reason is not None:
            raise TangentConversionError(
                bridge, f, what, position, format_path(e.step_path[:-1]), primal, e.got,
                reason) from None
        raise TangentConversionError(
            bridge, f, what, position, format_path(e.step_path), primal, e.got,
            f"its layout does not match {structure} structure at {format_path(e.step_path)}",
        ) from None
    if isinstance(t, (ZeroTangent, NoTangent)):
        return None
    reason = non_tangent_reason(t)
    if reason is not None:
        raise TangentConversionError(bridge, f, what, position, format_path(path), primal, t,
                                     reason)
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
        if isinstance(y_leaf, (complex, float, np.generic)):
            return as_primal_form(ct, y_leaf)
        if isinstance(y_leaf, np.ndarray):
            ct = np.asarray(ct)
            if ct.dtype != y_leaf.dtype:
                ct = ct.astype(y_leaf.dtype)
            return ct.reshape(y_leaf.shape)
        return ct

    return tangent_like(y, leaf)


# -- the skeleton of a bridged call: tangents in, cotangents out -----------------------
# A bridge flattens a call's arguments into leaves; ``where[i] = (position, path)``
# says where leaf ``i`` sits: ``position`` 1-based for a positional argument (0 for a
# keyword argument's leaf), ``path`` inside that argument (see ``_tree``).


def frule_tangents(args: tuple, where: list, tangents: dict,
                   differentiable: Any = None, constant: Any = None,
                   convert: Any = None) -> tuple:
    """``(NoTangent(), *arg_dots)`` for an frule, from the tangents of the call's leaves.

    Arguments:
        args: the positional arguments, as the rule receives them.
        where: ``(position, path)`` of each leaf.
        tangents: leaf index -> tangent; a leaf that is absent has a zero tangent.
        differentiable: ``differentiable(i)``, whether leaf ``i`` carries a tangent at
            all (an integer leaf does not); default: every leaf does.
        constant: the tangent of an argument with no differentiable leaf;
            ``NoTangent()`` by default.
        convert: ``convert(t, leaf)``, the tangent ``t`` in the form the rule expects
            for the primal ``leaf``; default: as it is.

    An argument whose differentiable leaves all have zero tangents gets
    ``ZeroTangent()``, so that rules can skip it; any other gets a tangent mirroring
    its structure (``NoTangent()`` at a leaf that carries none, ``ZeroTangent()`` at
    one whose tangent is zero).

    Examples:
        >>> import numpy as np
        >>> x, n = np.ones(2), 3
        >>> frule_tangents((x, n), [(1, ())], {0: np.full(2, 0.5)})
        (NoTangent(), array([0.5, 0.5]), NoTangent())
        >>> frule_tangents((x, n), [(1, ())], {})
        (NoTangent(), ZeroTangent(), NoTangent())
    """
    is_diff = differentiable or (lambda i: True)
    no_leaf = NoTangent() if constant is None else constant
    by_position: dict[int, list[int]] = {}
    for i, (position, _) in enumerate(where):
        by_position.setdefault(position, []).append(i)
    dargs: list[Any] = [NoTangent()]
    for position in range(1, len(args) + 1):
        idx = by_position.get(position, [])
        diff = [i for i in idx if is_diff(i)]
        if not diff:
            dargs.append(no_leaf)
            continue
        if not any(i in tangents for i in diff):
            dargs.append(ZeroTangent())
            continue
        by_path = {where[i][1]: i for i in idx}

        def leaf(path: tuple, x: Any, by_path: dict = by_path) -> Any:
            i = by_path.get(path)
            if i is None or not is_diff(i):
                return NoTangent()
            if i not in tangents:
                return ZeroTangent()
            return tangents[i] if convert is None else convert(tangents[i], x)

        dargs.append(tangent_like(args[position - 1], leaf))
    return tuple(dargs)


def argument_cotangents(bars: tuple, where: list, need: Any, convert: Any,
                        unthunk_with: Any = None) -> list:
    """What a pullback returned, leaf by leaf: ``convert(i, position, path, bar)`` for each
    leaf ``i`` in ``need``, where ``bar`` is its argument's entry of ``bars``, unthunked
    once per argument (by ``unthunk_with``, ``unthunk`` by default) and only for the
    arguments some leaf needs, so a thunk no one asked for is never computed.

    Examples:
        >>> from chainrules import NoTangent, Thunk
        >>> bars = (NoTangent(), Thunk(lambda: 2.0), Thunk(lambda: 1 / 0))
        >>> argument_cotangents(bars, [(1, ()), (2, ())], [0],
        ...                     lambda i, position, path, bar: bar)
        [2.0]
    """
    run = unthunk if unthunk_with is None else unthunk_with
    unthunked: dict[int, Any] = {}
    out = []
    for i in need:
        position, path = where[i]
        if position not in unthunked:
            unthunked[position] = run(bars[position])
        out.append(convert(i, position, path, unthunked[position]))
    return out


def numpy_conj(x: Any) -> Any:
    """The complex conjugate of a NumPy value; a real one as it is, not copied."""
    return np.conj(x) if np.iscomplexobj(x) else x


def as_primal_form(t: Any, primal: Any) -> Any:
    """A tangent ``t`` (an array or a number) in the type of a scalar ``primal``: a
    ``complex`` for a complex, a ``float`` (the real part) for a float, a NumPy scalar of
    the primal's dtype for a NumPy scalar; as it is for anything else.

    Examples:
        >>> import numpy as np
        >>> as_primal_form(np.array(2.0 + 1j), 1.0), as_primal_form(np.array(2.0), np.float32(1))
        (2.0, np.float32(2.0))
    """
    if isinstance(primal, complex):
        return complex(t)
    if isinstance(primal, float):
        return float(np.real(t))
    if isinstance(primal, np.generic):
        return primal.dtype.type(t)
    return t
