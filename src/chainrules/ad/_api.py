"""The user-facing transformations: grad, value_and_grad, vjp, jvp (jacobian and
hessian, built on them, are in ``_jacobian``), and `ADConfig`."""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from chainrules.core import (
    AbstractTangent,
    HasForwardsMode,
    HasReverseMode,
    NoTangent,
    NotImplementedDerivativeError,
    NotImplementedTangent,
    ProjectTo,
    RuleConfig,
    Tangent,
    Thunk,
    ZeroTangent,
    array_namespace,
    is_foreign_array,
    unthunk,
)

from ._arraylib import check_opaque, is_graph_type
from ._closures import with_cells
from ._dispatch import call, project_traced
from ._errors import InputTypeError, NonScalarOutputError
from ._forward import ForwardTrace
from ._reverse import _INPUT, ReverseTrace
from ._tracer import Tracer, deep_primal, mark_input
from ._tree import (
    _CONSTANT_LEAVES,
    _STRUCTURES,
    _box_inputs,
    _is_leaf_differentiable,
    _items,
    _map_leaves,
    _output_cotangent_leaves,
    _rebuild_mapping,
    _rebuild_record,
    _record_fields,
    _tangent_structure,
    _walk_paths,
)

__all__ = ["ADConfig", "grad", "jvp", "value_and_grad", "vjp"]

_ndarray = np.ndarray


class ADConfig(RuleConfig, HasReverseMode, HasForwardsMode):
    """The reference AD's `RuleConfig`: rules registered with
    ``config=HasReverseMode`` or ``config=HasForwardsMode`` receive it and may call
    back into the AD with `rrule_via_ad` / `frule_via_ad`.

    Example:
        >>> import math
        >>> from chainrules import rrule_via_ad, frule_via_ad, NoTangent
        >>> from chainrules.ad import ADConfig
        >>> y, pullback = rrule_via_ad(ADConfig(), lambda x: x * x, 3.0)
        >>> y, pullback(1.0)
        (9.0, (NoTangent(), 6.0))
        >>> frule_via_ad(ADConfig(), (NoTangent(), 1.0), lambda x: x * x, 3.0)
        (9.0, 6.0)
    """

    __slots__ = ()

    def rrule_via_ad(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        """``(y, pullback)`` of ``f(*args, **kwargs)`` by tracing ``f`` in reverse mode.

        ``self_bar`` is ``NoTangent()`` for functions and a ``Tangent`` of the fields
        for callable dataclass instances (their fields are differentiated too).
        """
        f = _unwrapped(f)
        if _is_callable_struct(f):
            y, pullback = _vjp(self, _call_self, (f, *args), kwargs, range(len(args) + 1))

            def via_ad_self_pullback(y_bar: Any) -> tuple:
                return pullback(y_bar)

            return y, via_ad_self_pullback
        names = _captured_numbers(f)
        if names:
            values = tuple(_cell(f, n) for n in names)
            y, pullback = _vjp(self, _with_cells_caller(f, names), (values, *args), kwargs,
                               range(len(args) + 1))

            def via_ad_closure_pullback(y_bar: Any) -> tuple:
                values_bar, *arg_bars = pullback(y_bar)
                bars = [values_bar[k] for k in range(len(names))] \
                    if isinstance(values_bar, (Tangent, tuple)) else [values_bar] * len(names)
                return (Tangent[type(f)](**dict(zip(names, bars))), *arg_bars)

            return y, via_ad_closure_pullback
        y, pullback = _vjp(self, f, args, kwargs, range(len(args)))

        def via_ad_pullback(y_bar: Any) -> tuple:
            return (NoTangent(), *pullback(y_bar))

        return y, via_ad_pullback

    def frule_via_ad(self, dargs: tuple, f: Any, *args: Any, **kwargs: Any) -> Any:
        """``(y, y_dot)`` of ``f(*args, **kwargs)`` along ``dargs[1:]`` by forward tracing
        (and along ``dargs[0]`` for a callable dataclass instance with a ``Tangent``)."""
        f = _unwrapped(f)
        if isinstance(dargs[0], Tangent) and _is_callable_struct(f):
            return _jvp(self, _call_self, (f, *args), tuple(dargs), kwargs)
        if isinstance(dargs[0], Tangent) and type(f) is types.FunctionType:
            names = _captured_numbers(f)
            values = tuple(_cell(f, n) for n in names)
            values_dot = tuple(getattr(dargs[0], n) for n in names)
            return _jvp(self, _with_cells_caller(f, names), (values, *args),
                        (values_dot, *dargs[1:]), kwargs)
        return _jvp(self, f, args, tuple(dargs[1:]), kwargs)


def _is_callable_struct(f: Any) -> bool:
    return dataclasses.is_dataclass(f) and not isinstance(f, type) and callable(f)


def _unwrapped(f: Any) -> Any:
    """``f`` without the dispatching wrapper the AD puts around functions it hands to
    code it cannot look inside (``rrule_via_ad`` called from traced code)."""
    if type(f) is functools.partial and f.func is call and len(f.args) == 1 \
            and not f.keywords:
        return f.args[0]
    return f


def _captured_numbers(f: Any) -> tuple[str, ...]:
    """The variables a closure captures that hold numbers or arrays (or structures of
    them): the fields of its tangent."""
    if type(f) is not types.FunctionType or not f.__closure__:
        return ()
    names = []
    for name, cell in zip(f.__code__.co_freevars, f.__closure__):
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if _holds_numbers(v):
            names.append(name)
    return tuple(names)


def _holds_numbers(v: Any) -> bool:
    if type(v) is Tracer:
        return True
    if isinstance(v, (float, complex, np.inexact)) and not isinstance(v, bool):
        return True
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "fc"
    if type(v) in (list, tuple) or (isinstance(v, tuple) and hasattr(v, "_fields")):
        return bool(v) and any(_holds_numbers(u) for u in v) and all(
            _holds_numbers(u) or isinstance(u, _CONSTANT_LEAVES) for u in v)
    if type(v) is dict:
        return _holds_numbers(tuple(v.values()))
    return False


def _cell(f: types.FunctionType, name: str) -> Any:
    return (f.__closure__ or ())[f.__code__.co_freevars.index(name)].cell_contents


def _with_cells_caller(f: types.FunctionType, names: tuple) -> Callable:
    """A function of ``(values, *args)`` calling closure ``f`` with its captured
    ``names`` holding ``values`` (so the AD differentiates w.r.t. them)."""

    def call_with_cells(values: tuple, *args: Any, **kwargs: Any) -> Any:
        return call(with_cells(f, dict(zip(names, values))), *args, **kwargs)

    return call_with_cells


def _call_self(f: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``f`` through the dispatch point (``f`` itself is being differentiated)."""
    return call(f, *args, **kwargs)


_CONFIG = ADConfig()


# ---------------------------------------------------------------------------------------
# Inputs and outputs as structures of leaves

def _natural(primal: Any, g: Any, what: str) -> Any:
    """A leaf cotangent as the natural tangent of ``primal`` (zeros when absent)."""
    if isinstance(g, Thunk):
        g = unthunk(g)
    if type(primal) is Tracer:
        primal = deep_primal(primal)
    if type(g) is Tracer:
        return project_traced(ProjectTo(primal), g)
    if g is None or type(g) is ZeroTangent:
        if not _is_leaf_differentiable(primal):
            return NoTangent()
        if isinstance(primal, np.ndarray):
            return np.zeros_like(primal)
        if is_foreign_array(primal):
            return array_namespace(primal).zeros_like(primal)
        if type(primal) is int:
            return 0.0
        return type(primal)(0)
    if type(g) is NotImplementedTangent:
        raise NotImplementedDerivativeError(g, f"return the derivative w.r.t. {what} as")
    if type(g) is NoTangent or not _is_leaf_differentiable(primal):
        return NoTangent() if not _is_leaf_differentiable(primal) else _natural(primal, None,
                                                                                 what)
    tg = type(g)
    if tg is float and type(primal) in (float, int):
        return g
    if tg is np.ndarray and type(primal) is np.ndarray and g.shape == primal.shape \
            and g.dtype == primal.dtype:
        return g
    return ProjectTo(float(primal) if type(primal) is int else primal)(g)


def _unbox_output(trace: Any, y: Any, out: list) -> Any:
    """The primal of output ``y``; records ``(primal, tracer-or-None)`` per leaf."""
    if type(y) is Tracer and y._trace is trace:  # the common single output
        out.append((y.primal, y))
        if is_graph_type(type(y.primal)):
            check_opaque(y.primal, "the output")
        return y.primal

    def leaf(v: Any) -> Any:
        if type(v) is Tracer:
            if v._trace is trace:
                out.append((v.primal, v))
                return v.primal
            return v
        if is_graph_type(type(v)):
            check_opaque(v, "the output")
        out.append((v, None))
        return v

    return _map_leaves(y, leaf)


def _arg_name(f: Any, i: int) -> str:
    """``argument i (`name`)`` for messages, using ``f``'s signature when it has one."""
    try:
        import inspect
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                              params[i].POSITIONAL_OR_KEYWORD):
        return f"argument {i} ({params[i].name!r})"
    return f"argument {i}"


def _check_float_inputs(api: str, f: Any, args: tuple, nums: Sequence[int]) -> None:
    """Refuse integer and bool NumPy inputs (they have no tangent space).

    Python ints are treated as floats; ``np.int64`` and integer arrays are refused
    instead of being silently given a ``NoTangent`` gradient.
    """
    for i in nums:
        a = args[i]
        ta = type(a)
        if ta is float or (ta is np.ndarray and a.dtype.kind in "fc"):
            continue  # the common inputs, accepted as `check` below would
        def check(v: Any, path: str, i: int = i) -> Any:
            if type(v) is Tracer:
                v = deep_primal(v)
            if isinstance(v, np.ndarray) and v.dtype.kind in "iub":
                got = f"ndarray(shape={v.shape}, dtype={v.dtype})"
            elif isinstance(v, np.integer | np.bool_):
                got = f"{type(v).__name__} {v!r}"
            elif _is_leaf_differentiable(v) or isinstance(v, _CONSTANT_LEAVES):
                return v
            else:
                raise InputTypeError(
                    f"{api} {_arg_name(f, i)}{path}", _STRUCTURES,
                    f"a {type(v).__module__}.{type(v).__qualname__}",
                    "the AD cannot see inside it and would lose the derivatives of what it "
                    "holds; make its class a dataclass (or a namedtuple), or pass the "
                    "arrays it holds as arguments")
            name = _arg_name(f, i)
            raise InputTypeError(
                f"{api} {name}{path}", "float or complex values", got,
                "integer and bool arrays have no derivative; convert the input with "
                "x.astype(float) (np.float64(x) for a scalar)")
        _walk_paths(args[i], "", check)

def _argnums_tuple(argnums: int | Sequence[int], nargs: int, api: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not isinstance(n, int) or not -nargs <= n < nargs:
            raise InputTypeError(f"{api}(argnums={argnums!r})",
                                 f"argument positions in range({nargs})", repr(n),
                                 "pass the positions of the arguments to differentiate")
    return tuple(n % nargs for n in nums)


# ---------------------------------------------------------------------------------------
# Reverse mode


def _vjp(config: RuleConfig, f: Callable, args: tuple, kwargs: dict,
         argnums: Sequence[int], once: bool = False) -> tuple[Any, Callable]:
    """``(y, pullback)``; ``once``: the pullback runs once, and drops each tape entry as
    soon as it has run (a pullback of `vjp` may run several times)."""
    trace = ReverseTrace(config)
    boxed = list(args)
    in_leaves: dict[int, list] = {}
    try:
        for i in argnums:
            leaves: list = []
            boxed[i] = _box_inputs(trace, args[i], leaves)
            in_leaves[i] = leaves
        y = call(f, *boxed, **kwargs)
        out_leaves: list = []
        y_primal = _unbox_output(trace, y, out_leaves)
    finally:
        # tracers kept past this call (a global, a list) must not record anything more
        trace.end()
    argnums = tuple(argnums)

    def pullback(y_bar: Any) -> tuple:
        bars_in = _output_cotangent_leaves(y_primal, y_bar)
        seeds = [(t.aux, b) for (_, t), b in zip(out_leaves, bars_in) if t is not None]
        bars = trace.backward(seeds, free=once) if seeds else None
        result = []
        for i in argnums:
            grads = []
            for k, (primal, idx) in enumerate(in_leaves[i]):
                g = bars[idx] if (bars is not None and idx is not None) else None
                grads.append(_natural(primal, g, f"argument {i} (leaf {k})"))
            result.append(_tangent_structure(args[i], grads))
        return tuple(result)

    return y_primal, pullback

def vjp(f: Callable, *primals: Any, **kwargs: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """Evaluate ``f(*primals)`` and return ``(y, pullback)``.

    ``pullback(y_bar)`` returns one cotangent per primal (natural tangents: floats,
    arrays; structures come back as tuples, lists, dicts or ``Tangent``). It can be
    called several times. Keyword arguments are passed to ``f`` and not differentiated.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import vjp
        >>> y, pullback = vjp(lambda a, b: a * b, 2.0, 5.0)
        >>> y, pullback(1.0)
        (10.0, (5.0, 2.0))
    """
    _check_float_inputs("vjp", f, primals, range(len(primals)))
    y, pullback = _vjp(_CONFIG, f, primals, kwargs, range(len(primals)))
    y_primal = deep_primal(y)

    @functools.wraps(pullback)
    def vjp_pullback(y_bar: Any) -> tuple:
        _check_output_cotangent(y_primal, y_bar)
        return pullback(y_bar)

    return y, vjp_pullback


def _check_output_cotangent(y: Any, y_bar: Any) -> None:
    """A cotangent for an array output must have its shape (and be real if it is real):
    NumPy would otherwise broadcast a wrong one and the pullback would sum it silently."""
    y_bar = unthunk(y_bar)
    if y_bar is None or isinstance(y_bar, (str, bytes)):
        raise InputTypeError("vjp pullback: the output cotangent y_bar",
                             "a cotangent of the output", repr(y_bar),
                             "pass ZeroTangent() for a zero cotangent")
    if not isinstance(y, (np.ndarray, np.generic, float, complex)) or isinstance(
            y_bar, (ZeroTangent, NoTangent)):
        return
    if not isinstance(y_bar, (np.ndarray, np.generic, int, float, complex)):
        return  # structural cotangents are checked by the rules' projections
    y_shape, bar_shape = np.shape(y), np.shape(y_bar)
    if bar_shape != y_shape:
        raise InputTypeError(
            "vjp pullback: the output cotangent y_bar", f"shape {y_shape} (the output's)",
            f"shape {bar_shape}", "give one cotangent entry per output entry")
    if np.iscomplexobj(y_bar) and not np.iscomplexobj(y):
        raise InputTypeError(
            "vjp pullback: the output cotangent y_bar", "a real cotangent for a real output",
            f"dtype {np.result_type(y_bar)}", "take its real part")


def _scalar_seed(y: Any, api: str) -> Any:
    if isinstance(y, float) and type(y) is not bool:
        return type(y)(1.0)
    if isinstance(y, np.floating):
        return type(y)(1.0)
    if isinstance(y, np.ndarray) and y.dtype.kind == "f" and y.size == 1:
        return np.ones(y.shape, dtype=y.dtype)
    if is_foreign_array(y):
        xp = array_namespace(y)
        if xp.isdtype(y.dtype, "real floating") and y.ndim == 0:
            return xp.ones_like(y)
    desc = (f"ndarray(shape={y.shape}, dtype={y.dtype})" if isinstance(y, np.ndarray)
            else type(y).__qualname__)
    raise NonScalarOutputError(api, desc)


def _leaf_value_and_grad(f: Callable, args: tuple, kwargs: dict,
                         nums: tuple[int, ...]) -> tuple[Any, tuple] | None:
    """`value_and_grad`'s common case, or None where it does not apply (then the
    general code runs, and nothing has been evaluated): every differentiated argument a
    float or a real float array, and a traced real scalar output. The same steps as
    `_vjp` and its pullback for one-leaf inputs and outputs, without their walks over
    structures."""
    for i in nums:
        a = args[i]
        ta = type(a)
        if ta is not float and not (ta is _ndarray and a.dtype.kind == "f"):
            return None
    if len(set(nums)) != len(nums):
        return None
    trace = ReverseTrace(_CONFIG)
    tape = trace.tape
    boxed = list(args)
    for i in nums:
        boxed[i] = mark_input(Tracer(args[i], trace, len(tape)))
        tape.append(_INPUT)
    try:
        y = call(f, *boxed, **kwargs)
    finally:
        trace.end()
    if type(y) is not Tracer or y._trace is not trace:
        # an untraced or structured output: what `_vjp`'s pullback would do with it
        out_leaves: list = []
        y_primal = _unbox_output(trace, y, out_leaves)
        seed = _scalar_seed(deep_primal(y_primal), "grad")
        seeds = [(t.aux, b) for (_, t), b in zip(out_leaves,
                                                   _output_cotangent_leaves(y_primal, seed))
                 if t is not None]
    else:
        y_primal = y.primal  # (a tracer of an outer trace under nested grads)
        seeds = [(y.aux, _scalar_seed(deep_primal(y_primal), "grad"))]
    del y, boxed
    # (the tape runs once: each entry is dropped as soon as it has run)
    bars = trace.backward(seeds, free=True) if seeds else None
    grads = []
    for k, i in enumerate(nums):
        primal = args[i]
        g: Any = bars[k] if bars is not None else None  # the inputs are entries 0, 1, ...
        tg = type(g)
        if tg is not type(primal) or (tg is _ndarray and (g.shape != primal.shape
                                                          or g.dtype != primal.dtype)):
            g = _natural(primal, g, f"argument {i} (leaf 0)")
        grads.append(g)
    return y_primal, tuple(grads)


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """Like `grad`, returning ``(f(*args), gradient)``.

    Example:
        >>> import math
        >>> from chainrules.ad import value_and_grad
        >>> value_and_grad(math.sin)(0.0)
        (0.0, 1.0)
    """

    single = isinstance(argnums, int)
    # (the argument count of the last call, its positions): one tuple, read and replaced
    # whole, so calls from several threads never pair one count with another's positions
    last: list = [(-1, ())]

    @functools.wraps(f)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        n, nums = last[0]
        if n != len(args):
            nums = _argnums_tuple(argnums, len(args), "grad")
            last[0] = (len(args), nums)
        out = _leaf_value_and_grad(f, args, kwargs, nums)
        if out is not None:
            y, grads = out
        else:
            _check_float_inputs("grad", f, args, nums)
            y, pullback = _vjp(_CONFIG, f, args, kwargs, nums, once=True)
            seed = _scalar_seed(deep_primal(y), "grad")
            grads = pullback(seed)
        return y, grads[0] if single else grads

    return value_and_grad_f


def grad(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The gradient of a real-scalar-valued ``f`` with respect to argument(s) ``argnums``.

    ``f`` is ordinary Python + NumPy code; every call it makes to a function with a
    registered ``rrule`` uses that rule, other Python functions are traced into.
    The gradient has the structure of the input (floats, arrays, tuples, lists,
    dicts; dataclasses and namedtuples as ``Tangent``). For complex inputs the
    gradient is ``dL/dRe z + i dL/dIm z``. An ``int`` input is treated as a float.

    Args:
        f: the function; must return a real scalar.
        argnums: the position, or a tuple of positions, to differentiate.

    Returns:
        A function of the same arguments returning the gradient (a tuple of gradients
        when ``argnums`` is a tuple).

    Raises:
        NonScalarOutputError: ``f`` does not return a real scalar.
        TracerConversionError, NoRuleError, MutationError: ``f`` does something the AD
            cannot differentiate; the message says what and suggests a rule.

    Example:
        >>> import math
        >>> from chainrules.ad import grad
        >>> def foo(x):
        ...     return math.asin(0.2 + math.sin(x))
        >>> grad(foo)(3.0)
        -1.0531613736418153
        >>> grad(lambda z: abs(z) ** 2)(1.0 + 2.0j)
        (2+4j)
    """

    value_and_grad_f = value_and_grad(f, argnums)

    @functools.wraps(f)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        return value_and_grad_f(*args, **kwargs)[1]

    return grad_f


# ---------------------------------------------------------------------------------------
# Forward mode


def _jvp(config: RuleConfig, f: Callable, primals: tuple, tangents: tuple,
         kwargs: dict) -> tuple[Any, Any]:
    if len(tangents) != len(primals):
        raise InputTypeError("jvp tangents", f"{len(primals)} tangents (one per primal)",
                             f"{len(tangents)}", "pass one tangent per primal argument")
    trace = ForwardTrace(config)
    boxed = []
    try:
        for i, (x, dx) in enumerate(zip(primals, tangents)):
            boxed.append(_box_forward(trace, x, dx, f"tangent {i}"))
        y = call(f, *boxed, **kwargs)
    finally:
        trace.end()

    def leaf(v: Any) -> Any:
        if type(v) is Tracer and v._trace is trace:
            v = v.primal
        if is_graph_type(type(v)):
            check_opaque(v, "the output")
        return v

    def leaf_dot(v: Any) -> Any:
        if type(v) is Tracer and v._trace is trace:
            d = unthunk(v.aux)
            if type(d) is NotImplementedTangent:
                raise NotImplementedDerivativeError(d, "return as the pushforward")
            return _in_dtype_of(v.primal, d)
        return _natural(deep_primal(v), None, "output")

    return _map_leaves(y, leaf), _map_leaves(y, leaf_dot)


def _in_dtype_of(y: Any, y_dot: Any) -> Any:
    """``y_dot`` in the floating dtype of ``y``, as NumPy's own computation gives ``y``.

    A rule's partials may be computed in a wider type than the primal (a Python ``int``
    exponent becomes an ``int64`` array, which promotes ``float32`` to ``float64``); the
    tangent of a ``float32`` output is ``float32`` all the same, as its cotangent is.
    """
    ty = type(y)
    if type(y_dot) is Tracer or ty is Tracer:  # (they pass for arrays in isinstance)
        return y_dot
    if ty is _ndarray:
        if type(y_dot) is _ndarray and y_dot.dtype != y.dtype and \
                y_dot.dtype.kind == y.dtype.kind and y.dtype.kind in "fc":
            return y_dot.astype(y.dtype)
    elif isinstance(y, np.inexact) and type(y_dot) is not ty and (
            isinstance(y_dot, np.inexact) or (type(y_dot) is _ndarray and y_dot.ndim == 0)) \
            and y_dot.dtype.kind == y.dtype.kind:
        return ty(y_dot)
    return y_dot


def _box_forward(trace: ForwardTrace, x: Any, dx: Any, what: str) -> Any:
    t = type(x)
    if isinstance(dx, Thunk):
        dx = unthunk(dx)
    if t is tuple or t is list or (isinstance(x, tuple) and hasattr(x, "_fields")):
        items = _items(dx, len(x))
        boxed = [_box_forward(trace, u, d, f"{what}[{k}]")
                 for k, (u, d) in enumerate(zip(x, items))]
        return t(*boxed) if hasattr(x, "_fields") else t(boxed)
    if isinstance(x, dict):
        return _rebuild_mapping(x, {
            k: _box_forward(trace, u, dx[k] if isinstance(dx, dict | Tangent) else dx,
                            f"{what}[{k!r}]") for k, u in x.items()})
    fields = _record_fields(x)
    if fields is not None:
        changes = {k: _box_forward(trace, getattr(x, k),
                                   getattr(dx, k) if isinstance(dx, Tangent) else dx,
                                   f"{what}.{k}")
                   for k in fields}
        return _rebuild_record(x, changes)
    if isinstance(dx, ZeroTangent | NoTangent) or not _is_leaf_differentiable(x):
        return x
    if isinstance(dx, AbstractTangent):
        raise InputTypeError(what, "a natural tangent (number or array)", repr(dx),
                             "pass floats or arrays as tangents of number or array primals")
    if dx is None or isinstance(dx, (str, bytes)):
        raise InputTypeError(what, "a tangent of the primal", repr(dx),
                             "pass ZeroTangent() for a zero tangent")
    if np.shape(dx) != np.shape(x):
        raise InputTypeError(what, f"shape {np.shape(x)} (the primal's)",
                             f"shape {np.shape(dx)}", "give each tangent its primal's shape")
    if (isinstance(x, (float, int, np.ndarray, np.generic)) and np.iscomplexobj(dx)
            and not np.iscomplexobj(x)):
        raise InputTypeError(what, "a real tangent for a real primal",
                             f"dtype {np.result_type(dx)}", "take its real part")
    if type(x) is int:
        x = float(x)
    return mark_input(Tracer(x, trace, dx))


def jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
        **kwargs: Any) -> tuple[Any, Any]:
    """Evaluate ``f(*primals)`` and its directional derivative along ``tangents``.

    Forward mode: every call to a function with a registered ``frule`` uses it
    (an ``rrule`` serves when no ``frule`` exists and the output is small), other
    Python functions are traced into.

    Returns:
        ``(y, y_dot)`` with ``y_dot`` in the structure of ``y``.

    Example:
        >>> import math
        >>> from chainrules.ad import jvp
        >>> jvp(math.sin, (0.0,), (2.0,))
        (0.0, 2.0)
    """
    primals = tuple(primals)
    _check_float_inputs("jvp", f, primals, [
        k for k, d in enumerate(tuple(tangents)[:len(primals)])
        if not isinstance(d, ZeroTangent | NoTangent)])
    return _jvp(_CONFIG, f, primals, tuple(tangents), kwargs)


# ---------------------------------------------------------------------------------------
# Jacobians and Hessians
