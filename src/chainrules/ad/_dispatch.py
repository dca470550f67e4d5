"""Dispatch: how a call in traced code finds its rule.

Every call in rewritten code goes through `call`, and every NumPy function or ufunc
applied to tracers through `apply`. Both find the innermost trace among the arguments
and ask it to process the call with the callable's rule (``trace.process``); with no
rule they trace into the callable (its rewritten source), or run code the AD cannot
look inside on the tracers themselves. Rules run on values of an outer trace (a
second derivative) have their own code traced (`_run_mixed`).
"""

from __future__ import annotations

import functools
import linecache
import operator
import types
import weakref
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from chainrules.core import (
    AbstractTangent,
    OutArgumentError,
    ProjectTo,
    Tangent,
    frule,
    ignore_derivatives,
    is_foreign_array,
    registered_functions,
    rrule,
)
from chainrules.rules import _kit as kit

from . import _native
from ._arraylib import check_constructed, in_namespace
from ._checkpoint import Checkpointed, checkpoint_call
from ._closures import _captures_tracers, _passes_function, _reachable_trace, _watched
from ._errors import (
    ADError,
    NoRuleError,
    TracerConversionError,
    func_name,
    refusal_in,
)
from ._rewrite import rewritten_function
from ._tracer import (
    _INPLACE_FUNCS,
    _NO_RULE,
    AD_DIR,
    LAST_REFUSAL,
    Tracer,
    _describe,
    connect,
    deep_primal,
)
from ._tree import _deep_struct_primal, _is_struct, _strip, _top_trace_deep

__all__ = ["apply", "call", "project_traced"]

_r_by_func = registered_functions(rrule)
_f_by_func = registered_functions(frule)
_FunctionType = types.FunctionType
_MethodType = types.MethodType
_ndarray = np.ndarray
_ufunc = np.ufunc
_BuiltinFunctionType = types.BuiltinFunctionType
_NumpyFunctionType = type(np.concatenate)  # NumPy's functions with __array_function__
_EMPTY: dict = {}

def _run_mixed(rule: Callable, f: Any, call_args: tuple, kwargs: dict) -> Any:
    """Run ``rule`` on arguments that hold tracers of outer traces, tracing its code."""
    try:
        res = call(_traceable(rule), *call_args, **kwargs)
    except (ADError, OutArgumentError, NotImplementedError) as e:
        if _is_builtin_rule(rule):
            raise _not_twice_differentiable(e, f"the built-in rule for {func_name(f)}") \
                from e
        raise
    except _RULE_CRASHES as e:
        if _is_builtin_rule(rule):
            raise _crash_error(e, f, f"the built-in rule for {func_name(f)}") from e
        raise
    if type(res) is tuple and len(res) == 2 and callable(res[1]) and _is_builtin_rule(rule):
        try:
            _PULLBACK_OWNER[res[1]] = func_name(f)
        except TypeError:
            pass
    return res


# built-in pullbacks created on values of an outer trace -> the function they are for
_PULLBACK_OWNER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _is_builtin_rule(fn: Any) -> bool:
    return (getattr(fn, "__module__", None) or "").startswith("chainrules.rules.")


def _not_twice_differentiable(e: BaseException, what: str) -> BaseException:
    """``e`` (same class and attributes) saying that a built-in rule's own code cannot be
    differentiated again: a second derivative through it needs other code."""
    if getattr(e, "_chainrules_not_twice", False):
        return e
    new: Any = type(e).__new__(type(e))
    new.__dict__.update(e.__dict__)
    new.args = (f"{what} is not twice differentiable: its own code (run again on traced "
                f"values for a higher-order derivative) fails with: {e}",)
    new._chainrules_not_twice = True
    return new


def _run_pullback_traced(pullback: Callable, b: Any) -> Any:
    """A pullback run on a cotangent of an outer trace (its own code is traced)."""
    try:
        return call(_traceable(pullback), b)
    except (ADError, OutArgumentError, NotImplementedError) as e:
        if _is_builtin_rule(pullback):
            owner = _PULLBACK_OWNER.get(pullback) if _weakrefable(pullback) else None
            what = (f"the built-in rule for {owner}" if owner else
                    f"the built-in pullback {func_name(pullback)}")
            raise _not_twice_differentiable(e, what) from e
        raise
    except _RULE_CRASHES as e:
        if _is_builtin_rule(pullback):
            owner = _PULLBACK_OWNER.get(pullback) if _weakrefable(pullback) else None
            what = (f"the built-in rule for {owner}" if owner else
                    f"the built-in pullback {func_name(pullback)}")
            raise _crash_error(e, pullback, what) from e
        raise


# Exceptions a built-in rule's own code raises when run on traced values it was not
# written for (a second derivative): reported as a named error, not a crash. (A first
# derivative at the same point ran the same code on plain values without raising.)
_RULE_CRASHES = (ValueError, IndexError, TypeError, AttributeError)


def _crash_error(e: BaseException, f: Any, what: str) -> NoRuleError:
    if isinstance(e, np.linalg.LinAlgError):
        raise e
    return NoRuleError(f, "rule", (), f"{what} is not twice differentiable: its own code "
                                      f"(run again on traced values for a higher-order "
                                      f"derivative) fails with {type(e).__name__}: {e}")


def _weakrefable(fn: Any) -> bool:
    try:
        weakref.ref(fn)
    except TypeError:
        return False
    return True


def _traceable(fn: Callable) -> Callable:
    if type(fn) is _FunctionType:
        g = _rewritten(fn)
        if g is not None:
            return g
    return fn

def _rewritten(fn: types.FunctionType) -> types.FunctionType | None:
    cached = fn.__dict__.get("__chainrules_rewritten__")
    if cached is not None and cached[0] is fn.__code__ and cached[1] is fn.__defaults__:
        return cached[2]
    g = rewritten_function(fn, call)
    if g is not None and g is not fn:
        try:
            fn.__dict__["__chainrules_rewritten__"] = (fn.__code__, fn.__defaults__, g)
        except (AttributeError, TypeError):
            pass
    return g


def apply(f: Any, args: tuple, kwargs: dict, soft: bool = False,
          from_numpy: bool = False) -> Any:
    """Apply ``f`` to arguments of which at least one holds a tracer, using its rule.

    ``soft``: return ``_NO_RULE`` instead of raising when there is no rule (operators
    then try the NumPy ufunc). ``from_numpy``: called by ``__array_function__``.
    """
    if from_numpy and (id(f) in _INPLACE_FUNCS or kwargs.get("out") is not None):
        return _write_call(f, args, kwargs)
    top = None
    for a in args:
        if type(a) is Tracer:
            if top is None or a._trace.level > top.level:
                top = a._trace
        elif type(a) is not float and type(a) is not int and type(a) is not _ndarray \
                and _is_struct(a):
            top = _top_trace_deep(a, top)
    if kwargs and _has_tracer_kwargs(kwargs, None):
        # A traced keyword argument: NumPy would dispatch the same call back here.
        top = _top_trace_deep(kwargs, top)
        moved = _positional_form(f, args, kwargs)
        if moved is None:
            raise _traced_keywords_error(f, args, kwargs, top)
        args, kwargs = moved
    if top is None:
        return f(*args, **kwargs)
    if from_numpy:
        mapped = in_namespace(f, args, kwargs, deep_primal)
        if mapped is not None:
            return call(mapped[0], *mapped[1], **mapped[2])
    out = top.process(f, args, kwargs)
    if out is not _NO_RULE:
        return out
    if soft:
        return _NO_RULE
    if _strippable(f):
        return f(*_strip(args), **kwargs)
    if isinstance(f, np.ufunc) and not kwargs and _is_object_ufunc(f):
        return _object_ufunc(f, args)
    if from_numpy:
        impl = getattr(f, "_implementation", None)
        g = _rewritten(impl) if type(impl) is _FunctionType else None
        if g is not None:
            # A NumPy function written in Python (np.block, np.meshgrid, ...): trace its
            # implementation, whose own calls reach their rules.
            try:
                return g(*args, **kwargs)
            except (ADError, OutArgumentError, TypeError, ValueError, AttributeError) as e:
                raise NoRuleError(
                    f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                    f"tracing into NumPy's implementation failed: {type(e).__name__}: {e}"
                ) from e
    if isinstance(f, np.ufunc) or from_numpy:
        raise NoRuleError(f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                          "NumPy would have to convert the traced values to plain arrays")
    if getattr(f, "__module__", None) in ("_operator", "operator"):
        raise NoRuleError(f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                          "an operator on traced values needs a rule")
    return _through(f, args, kwargs, top)


def _is_object_ufunc(f: np.ufunc) -> bool:
    """A ufunc made by ``np.frompyfunc``: it calls a Python function per element."""
    return all(set(t.replace("->", "")) == {"O"} for t in f.types)


def _object_ufunc(f: np.ufunc, args: tuple) -> Any:
    """Apply a ``np.frompyfunc`` ufunc to tracers element by element.

    Each element is a scalar tracer (the Python function then runs on tracers, so its
    operators are recorded); the results are stacked back into one traced array.
    """
    shape = np.broadcast_shapes(*(np.shape(deep_primal(a)) for a in args))
    cells = []
    for a in args:
        obj = np.empty(shape, dtype=object)
        p = deep_primal(a)
        for idx in np.ndindex(*shape):
            src = tuple(i if n > 1 else 0 for i, n in
                        zip(idx[len(shape) - np.ndim(p):], np.shape(p)))
            obj[idx] = a[src] if type(a) is Tracer and np.ndim(p) else a if np.ndim(p) == 0 \
                else p[src]
        cells.append(obj)
    out = f(*cells)
    if f.nout > 1:
        return tuple(_object_result(o, shape) for o in out)
    return _object_result(out, shape)


def _traced_objects(out: Any) -> Any:
    """An object ufunc's output: an object array holding tracers becomes one traced
    array; anything else (strings, plain numbers) stays as NumPy gave it."""
    if type(out) is tuple:
        return tuple(_traced_objects(o) for o in out)
    if type(out) is _ndarray and out.dtype == object and out.size and any(
            type(v) is Tracer for v in out.flat):
        return _object_result(out, out.shape)
    return out


def _object_result(out: Any, shape: tuple) -> Any:
    if not shape:
        return out[()] if isinstance(out, _ndarray) else out
    return call(_stack_nested, out.tolist())


def _mode(trace: Any) -> str:
    return trace.mode


# Functions of shapes and dtypes only: run on the primals, their results are constants.
_STRIP_FUNCS = {np.zeros_like, np.ones_like, np.empty_like, np.shape, np.ndim,
                np.size, np.result_type, np.iscomplexobj, np.isrealobj, np.isscalar}


def call(f: Any, /, *args: Any, **kwargs: Any) -> Any:
    """The dispatch point every call in rewritten code goes through."""
    if f is ignore_derivatives:
        # Stops differentiation: the result is the plain value, never a tracer, so it
        # can be logged, formatted and kept after the trace ends.
        return deep_primal(ignore_derivatives(*(deep_primal(a) for a in args)))
    tf = type(f)
    if tf is Checkpointed:  # checkpoint(g)(...): the rule of checkpoint_call does it
        return call(checkpoint_call, f.bound(kwargs), *args)  # type: ignore[attr-defined]
    top = None
    plain = True  # every argument a tracer, a float, an int or an ndarray
    for a in args:
        ta = type(a)
        if ta is Tracer:
            if top is None or a._trace.level > top.level:
                top = a._trace
        elif ta is not float and ta is not _ndarray and ta is not int:
            plain = False
    if tf is _NumpyFunctionType and top is not None:
        # NumPy's function on a traced foreign array: the namespace's own function
        mapped = in_namespace(f, args, kwargs, deep_primal)
        if mapped is not None:
            return call(mapped[0], *mapped[1], **mapped[2])
    if plain and not kwargs and (tf is _ufunc or tf is _BuiltinFunctionType or (
            tf is _NumpyFunctionType and id(f) not in _INPLACE_FUNCS)):
        # the common calls (np.sin(x), math.exp(x), len(x), range(n)), decided as the
        # general path below decides them: a rule for the innermost trace, else
        # tracing through; with no tracer, the plain call (nothing to wrap or stack)
        if top is None:
            if tf is _ufunc and _is_object_ufunc(f):
                # np.frompyfunc(lambda v: v * s, 1, 1)(x) with a traced s: its object
                # array of tracers as one traced array (astype, sums follow it)
                return _traced_objects(f(*args))
            if f is not np.fromiter:
                return f(*args)
        elif tf is _NumpyFunctionType and f in _STRIP_FUNCS:
            # np.zeros_like(x) and the like: a plain array in every mode (a traced
            # constant in reverse mode and a plain one in forward mode would make one
            # program's writes differ between the modes)
            return f(*_strip(args))
        else:
            out = top.process(f, args, _EMPTY)
            if out is not _NO_RULE:
                return out
            return _through(f, args, kwargs, top)
    if plain and not kwargs and tf is _FunctionType and top is not None \
            and id(f) not in _INPLACE_FUNCS:
        # the user's own function on tracers and plain values (a helper, the function
        # being differentiated): its rule if it has one, else its rewritten code, as the
        # general path below would decide (no structure, function or keyword to look at)
        out = top.process(f, args, _EMPTY)
        if out is not _NO_RULE:
            return out
        g = _rewritten(f)
        if g is not None:
            return g(*args)
        return _through(f, args, kwargs, top)
    if tf is np.vectorize and not kwargs and f.signature is None and not f.excluded \
            and _captures_tracers([f.pyfunc]):
        # np.vectorize(lambda v: v * s)(x) with a traced s: the function per element,
        # through the dispatch (NumPy would write its tracers into a float array)
        return _object_ufunc(np.frompyfunc(functools.partial(call, f.pyfunc), len(args), 1),
                             args)
    if top is None and kwargs and _has_rule(f) and _has_tracer_kwargs(kwargs, None):
        # a function with rules and a traced keyword argument: the general path below
        # moves the keyword to its positional place for the rule
        top = _top_trace_deep(kwargs, None)
    if top is None:
        if tf is _FunctionType and f not in _r_by_func and f not in _f_by_func:
            g = _rewritten(f) or f
            if _passes_function(args, kwargs):
                return _watched(f, g, args, kwargs)
            return g(*args, **kwargs)
        if tf is _MethodType and type(f.__func__) is _FunctionType:
            g = _rewritten(f.__func__)
            if g is not None:
                if _passes_function(args, kwargs):
                    return _watched(f, g, (f.__self__, *args), kwargs)
                return g(f.__self__, *args, **kwargs)
            return f(*args, **kwargs)
        if f is ProjectTo:
            return ProjectTo(_strip(args[0]))
        for a in args:
            if type(a) is not int and type(a) is not float and _is_struct(a):
                top = _top_trace_deep(a, top)
            elif type(a) is _FunctionType and a.__closure__ is not None:
                # a function closing over traced values: its rule (a solver's) may
                # differentiate w.r.t. them
                top = _reachable_trace(a, top, 0)
        if kwargs:
            for v in kwargs.values():
                top = _top_trace_deep(v, top)
        if top is None:
            if tf is _FunctionType:
                g = _rewritten(f) or f
                if _passes_function(args, kwargs):
                    return _watched(f, g, args, kwargs)
                return g(*args, **kwargs)
            if tf is _MethodType:
                return f(*args, **kwargs)
            if not isinstance(f, type) and type(_call_method(tf)) is _FunctionType:
                # a callable object: its fields may hold tracers, so trace its __call__
                g = _rewritten(_call_method(tf))
                if g is not None:
                    return g(f, *args, **kwargs)
            if kwargs or args:
                return _call_opaque(f, args, kwargs)
            return f()
    elif tf is ProjectTo:
        return project_traced(f, args[0])
    elif f is ProjectTo:
        return ProjectTo(_strip(args[0]))
    if id(f) in _INPLACE_FUNCS or (kwargs and kwargs.get("out") is not None):
        return _write_call(f, args, kwargs)
    if tf is _NumpyFunctionType and _strippable(f):
        return f(*_strip(args), **_strip(kwargs))  # (as in the fast path above)
    if tf is _ufunc:
        args = _ufunc_arrays(args)
    if not _has_tracer_kwargs(kwargs, top):
        out = top.process(f, args, kwargs)
        if out is not _NO_RULE:
            return out
        if tf is _MethodType:
            # a rule registered for `Foo.method` (a Python or compiled function) serves
            # `foo.method(x)`
            out = top.process(f.__func__, (f.__self__, *args), kwargs)
            if out is not _NO_RULE:
                return out
    else:
        # Rules differentiate positional arguments: a traced keyword argument is moved
        # to its place when the signature allows; otherwise trace into f as it is.
        moved = _positional_form(f, args, kwargs)
        top = _top_trace_deep(kwargs, top)
        if moved is not None:
            out = top.process(f, moved[0], moved[1])
            if out is not _NO_RULE:
                return out
            if tf is _MethodType:
                out = top.process(f.__func__, (f.__self__, *moved[0]), moved[1])
                if out is not _NO_RULE:
                    return out
        elif _has_rule(f):
            try:
                return _through(f, args, kwargs, top)
            except (NoRuleError, TracerConversionError) as e:
                raise _traced_keywords_error(f, args, kwargs, top) from e
    return _through(f, args, kwargs, top)


def _write_call(f: Any, args: tuple, kwargs: dict) -> Any:
    """A NumPy function that writes into an argument (``np.copyto``, ``out=``) on traced
    values: the write machinery of ``_inplace_numpy``."""
    from . import _inplace_numpy as _inplace  # (it imports this module)

    if id(f) in _INPLACE_FUNCS:
        return _inplace.inplace_function(f, args, kwargs)
    kwargs = dict(kwargs)
    if type(f) is _ufunc:
        out = kwargs.pop("out")
        return _inplace.ufunc_write(f, "__call__", args, {**kwargs, "out": out})
    return _inplace.out_call(f, args, kwargs)


def _strippable(f: Any) -> bool:
    try:
        return f in _STRIP_FUNCS
    except TypeError:
        return False


def _positional_form(f: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
    """``(args, kwargs)`` with every keyword argument that holds a tracer moved to its
    positional place (earlier unfilled places take their defaults), or None when the
    signature does not allow it (a keyword-only parameter, ``**kwargs``, no signature).
    A function whose signature is ``(*args, **kwds)`` may declare its parameters
    (``kit.declare_parameters``: the ``scipy.stats`` methods do)."""
    traced = [k for k, v in kwargs.items() if _top_trace_deep(v, None) is not None]
    if not traced:  # (before the signature: inspect.signature costs ~100 us a call)
        return None
    positional = kit.positional_parameters(f)
    if positional is None:
        return None
    names = [p.name for p in positional]
    if any(k not in names[len(args):] for k in traced):
        return None
    last = max(names.index(k) for k in traced)
    new_args, rest = list(args), dict(kwargs)
    for p in positional[len(args):last + 1]:
        if p.name in rest:
            new_args.append(rest.pop(p.name))
        elif p.default is not p.empty:
            new_args.append(p.default)
        else:
            return None
    return tuple(new_args), rest


def _has_rule(f: Any) -> bool:
    """Whether ``f`` (or the function of a bound method) has a registered rule."""
    g = f.__func__ if type(f) is _MethodType else f
    try:
        return g in _r_by_func or g in _f_by_func
    except TypeError:  # an unhashable callable
        return False


def _traced_keywords_error(f: Any, args: tuple, kwargs: dict, top: Any) -> NoRuleError:
    names = ", ".join(f"{k}=" for k, v in kwargs.items()
                      if _top_trace_deep(v, None) is not None)
    return NoRuleError(
        f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
        f"traced values passed by keyword ({names}) that cannot be moved to a positional "
        f"place; rules differentiate positional arguments, so pass them positionally")


def _has_tracer_kwargs(kwargs: dict, top: Any) -> bool:
    if not kwargs:
        return False
    return any(_top_trace_deep(v, None) is not None for v in kwargs.values())

def project_traced(project: ProjectTo, dx: Any) -> Any:
    """Apply a projector to a traced cotangent, with operations the AD can follow."""
    if type(dx) is not Tracer:
        return project(dx)
    p = deep_primal(dx)
    target = project(p)
    if isinstance(target, AbstractTangent):
        return target
    if np.iscomplexobj(p) and not np.iscomplexobj(target):
        dx = call(np.real, dx)
    tshape = np.shape(target)
    if not isinstance(target, _ndarray) and np.ndim(p) and not is_foreign_array(target):
        return call(np.sum, dx)  # a scalar's cotangent (a JAX / torch array is an array)
    if np.shape(p) != tshape:
        pshape = np.shape(p)
        extra = len(pshape) - len(tshape)
        if extra > 0:
            dx = call(np.sum, dx, axis=tuple(range(extra)))
            pshape = pshape[extra:]
        axes = tuple(i for i, (a, b) in enumerate(zip(pshape, tshape)) if a != b and b == 1)
        if axes:
            dx = call(np.sum, dx, axis=axes, keepdims=True)
        if np.shape(deep_primal(dx)) != tshape:
            dx = call(np.reshape, dx, tshape)
    if type(target) is _ndarray and type(p) is _ndarray and p.dtype != target.dtype \
            and p.dtype.kind == target.dtype.kind:
        # a float32 primal's cotangent is float32 also when traced (a Hessian's rows)
        dx = call(np.ndarray.astype, dx, target.dtype)
    return dx


@functools.cache
def _dispatchers_by_implementation() -> dict[int, Any]:
    out: dict[int, Any] = {}
    for module in (np, np.linalg, np.fft):
        for name in dir(module):
            d = getattr(module, name, None)
            impl = getattr(d, "_implementation", None)
            if impl is not None and type(impl) is not _FunctionType:
                out.setdefault(id(impl), d)
    return out


def _numpy_dispatcher(f: Any) -> Any:
    """The public NumPy function whose C implementation ``f`` is (NumPy's own Python
    code calls some, e.g. ``concatenate``, without the public wrapper), or None."""
    return _dispatchers_by_implementation().get(id(f))


def _through(f: Any, args: tuple, kwargs: dict, top: Any) -> Any:
    """Trace into ``f`` (no rule applies): run its rewritten source on the tracers."""
    tf = type(f)
    if tf is types.BuiltinFunctionType:
        public = _numpy_dispatcher(f)
        if public is not None:
            return call(public, *args, **kwargs)
    if _strippable(f):
        return f(*_strip(args), **kwargs)
    if tf is _FunctionType:
        g = _rewritten(f)
        if g is not None:
            if _passes_function(args, kwargs):
                return _watched(f, g, args, kwargs)
            return g(*args, **kwargs)
        return _call_opaque_traced(f, args, kwargs, top)
    if tf is _MethodType and type(f.__func__) is _FunctionType:
        g = _rewritten(f.__func__)
        if g is not None:
            if _passes_function(args, kwargs):
                return _watched(f, g, (f.__self__, *args), kwargs)
            return g(f.__self__, *args, **kwargs)
        return _call_opaque_traced(f, args, kwargs, top)
    if isinstance(f, np.ufunc) and not kwargs and _is_object_ufunc(f):
        return _object_ufunc(f, args)
    if isinstance(f, np.ufunc):
        raise NoRuleError(f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                          "NumPy would have to convert the traced values to plain arrays")
    if tf is functools.partial:
        if f.func is call:
            return call(*f.args, *args, **{**f.keywords, **kwargs})
        return call(f.func, *f.args, *args, **{**f.keywords, **kwargs})
    if isinstance(f, type):
        init = f.__init__
        if (type(f) is type and f.__new__ is object.__new__ and type(init) is _FunctionType
                and not hasattr(f, "__dataclass_fields__")):
            g = _rewritten(cast(types.FunctionType, init))
            if g is not None:
                obj = object.__new__(f)
                g(obj, *args, **kwargs)
                return check_constructed(f, obj)  # (another library's array: refused)
        return check_constructed(f, _call_opaque_traced(f, args, kwargs, top))
    method = _call_method(tf)
    if type(method) is _FunctionType and not isinstance(f, (types.BuiltinFunctionType,)):
        g = _rewritten(method)
        if g is not None:
            return g(f, *args, **kwargs)
    return _call_opaque_traced(f, args, kwargs, top)


def _call_method(cls: type) -> Any:
    """The ``__call__`` defined by a class (None if only ``object``'s or a C slot)."""
    for klass in cls.__mro__:
        method = klass.__dict__.get("__call__")
        if method is not None:
            return method
    return None


# Builtins that look at a callable instead of calling it: they get the callable itself,
# never the dispatching wrapper (isinstance(f, functools.partial) must stay False).
_INTROSPECTING = {id(b) for b in (
    isinstance, issubclass, type, id, getattr, hasattr, setattr, delattr, callable, vars,
    dir, repr, str, hash, format, print, len, bool, object.__setattr__,
    object.__getattribute__, operator.is_, operator.is_not, operator.eq, operator.ne,
    operator.contains, operator.getitem, weakref.ref, functools.update_wrapper,
    functools.wraps)}


_CONTAINERS = (dict, set, frozenset, list, tuple)


def _introspects(f: Any) -> bool:
    if id(f) in _INTROSPECTING:
        return True
    # a container's own methods (d.get(fn), fns.append(fn), fn in s) store or look up
    # the callable: identity matters; list.sort(key=fn) calls it
    owner = getattr(f, "__self__", None)
    return (type(f) is types.BuiltinMethodType and isinstance(owner, _CONTAINERS)
            and getattr(f, "__name__", "") != "sort")


def _wrap_callable(v: Any) -> Any:
    if v is call or (type(v) is functools.partial and v.func is call):
        return v
    if type(v) is _FunctionType or type(v) is _MethodType or (
            callable(v) and type(_call_method(type(v))) is _FunctionType
            and not isinstance(v, type)):
        return functools.partial(call, v)
    if (type(v) is types.BuiltinFunctionType or isinstance(v, np.ufunc)) and (
            _has_rules(_rr_has, v) or _has_rules(_fr_has, v)):
        return functools.partial(call, v)  # map(math.sin, xs): each call reaches the rule
    return v


def _has_rules(has: Callable, v: Any) -> bool:
    try:
        return has(v)
    except TypeError:
        return False


_rr_has, _fr_has = rrule.has_rules, frule.has_rules


def _call_opaque_traced(f: Any, args: tuple, kwargs: dict, top: Any) -> Any:
    """``_call_opaque`` for a call whose arguments hold tracers: a failure is most likely
    the tracer's, so it becomes a `NoRuleError` naming the function."""
    try:
        return _call_opaque(f, args, kwargs)
    except ADError:
        raise
    except (TypeError, ValueError) as e:
        if _is_ad_code(f):
            raise
        why = f"calling it on traced values failed: {type(e).__name__}: {e}"
        if _source_unreadable(f):
            # (an array library refusing a tracer: its calls were not intercepted)
            why += ("; its source could not be read (a function defined in the REPL, with "
                    "`python -c` or by exec), so the calls inside it cannot reach their "
                    "rules: define it in a file")
        raise NoRuleError(f, _mode(top), tuple(type(_deep_struct_primal(a)) for a in args),
                          why) from e
    except Exception as e:
        if type(e).__module__ in ("struct", "_struct"):
            raise NoRuleError(f, _mode(top),
                              tuple(type(_deep_struct_primal(a)) for a in args),
                              f"calling it on traced values failed: {e}") from e
        raise


def _call_opaque(f: Any, args: tuple, kwargs: dict) -> Any:
    """Call code the AD cannot look inside: callables passed to it still dispatch."""
    watch = False
    if not _introspects(f):
        watch = _passes_function(args, kwargs)
        args = tuple(_wrap_callable(a) for a in args)
        if kwargs:
            kwargs = {k: _wrap_callable(v) for k, v in kwargs.items()}
    if f is np.fromiter and args:
        # NumPy would write each item into a new array: refuse traced items by name
        items = list(args[0])
        if _top_trace_deep(items, None) is not None:
            first = next(v for v in items if _top_trace_deep(v, None) is not None)
            raise TracerConversionError(
                "numpy.fromiter of traced values (use np.array([...]) or np.stack, which "
                "the AD follows)", _describe(first) if type(first) is Tracer
                else "a structure holding traced values")
        args = (items, *args[1:])
    if f is np.array or f is np.asarray or f is np.asanyarray:
        if len(args) == 1 and not kwargs and type(args[0]) is Tracer:
            return args[0]  # already an array-like value the AD follows
        if args and _top_trace_deep(args[0], None) is not None:
            return call(_stack_nested, args[0], **kwargs)
    before = LAST_REFUSAL[0]
    try:
        if watch:
            return _watched(f, f, args, kwargs)
        return f(*args, **kwargs)
    except TracerConversionError as e:
        if e.function is None and f not in (float, complex, int) and not _is_ad_code(f):
            raise TracerConversionError(e.operation, e.primal, func_name(f),
                                        _source_unreadable(f)) from e
        raise
    except Exception as e:
        # C code calling back into Python that ignores a failed conversion of the
        # callback's result (SciPy's brentq: the tracer's refusal stays set, and the next
        # call reports "returned a result with an exception set"), or reports it as its
        # own error (MINPACK: "not a proper array of floats"): the refusal is the error,
        # found in the chain
        refusal = refusal_in(e)
        if (refusal is None and watch and not isinstance(e, ADError)
                and LAST_REFUSAL[0] is not before):
            refusal = LAST_REFUSAL[0]  # (swallowed by the C code, which raised its own)
        if not isinstance(refusal, TracerConversionError) or _is_ad_code(f):
            raise
        raise TracerConversionError(refusal.operation, refusal.primal, func_name(f),
                                    _source_unreadable(f)) from e


def _source_unreadable(f: Any) -> bool:
    """``f`` is Python code whose source the AD could not read (REPL, ``python -c``,
    ``exec``), so it ran without its calls being intercepted."""
    fn = f.__func__ if type(f) is _MethodType else f
    code = getattr(fn, "__code__", None) if type(fn) is _FunctionType else None
    return code is not None and not linecache.getlines(code.co_filename)


def _is_ad_code(f: Any) -> bool:
    code = getattr(f, "__code__", None)
    return code is not None and code.co_filename.startswith(AD_DIR)



def _stack_nested(x: Any, dtype: Any = None) -> Any:
    """``np.array`` of a nested list holding tracers, as stacks the AD can follow."""
    if type(x) is list or type(x) is tuple:
        out = np.stack([_stack_nested(v) for v in x])
    else:
        out = x
    if dtype is not None:
        out = out.astype(dtype)
    return out


def _unstack_cotangent(x: Any, g: Any) -> Any:
    if type(x) is list or type(x) is tuple:
        return Tangent[type(x)](*[_unstack_cotangent(v, g[i]) for i, v in enumerate(x)])
    return project_traced(ProjectTo(deep_primal(x)), g)


def _array_of(x: Any, dtype: Any) -> Any:
    """``np.array(x, dtype)``, stacked when ``x`` holds values of an outer trace (this
    rule run for a higher-order derivative)."""
    if _top_trace_deep(x, None) is not None:
        return _stack_nested(x, dtype)
    return np.array(x, dtype=dtype)

def _ufunc_arrays(args: tuple) -> tuple:
    """Arguments of a NumPy ufunc with every list or tuple holding tracers made an array
    the AD follows (``scipy.special.gammaln([a, a - 0.5])``): the ufunc's rule then sees
    an array, as the ufunc itself would."""
    for a in args:
        if type(a) is list or type(a) is tuple:
            break
    else:
        return args
    return tuple(call(_stack_nested, a) if (type(a) is list or type(a) is tuple)
                 and _top_trace_deep(a, None) is not None else a for a in args)


if _native.TAPE is not None:
    # the common traced call (a scalar_rule of one tracer of a reverse trace) recorded in
    # C; every other call goes to the Python dispatch point above
    call = functools.update_wrapper(_native.TAPE.Dispatch(call), call)  # type: ignore[assignment]
connect(call, apply)
