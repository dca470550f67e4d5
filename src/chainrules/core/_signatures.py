"""Reading a rule function's signature: the dispatch types of its positional parameters.

``register`` reads the annotations of the positional parameters a rule takes after
its leading ones (the tangent tuple of an frule, a config): a class, a Union of
classes, or nothing (``object``).
"""

from __future__ import annotations

import inspect
import types as _types
import typing
from collections.abc import Callable
from typing import Any, NamedTuple

from ._errors import RuleRegistrationError

__all__ = ["explicit_types", "signature_types"]


def _expand_annotation(ann: Any, where: str) -> tuple:
    """The classes an annotation stands for (a Union gives several)."""
    if ann is inspect.Parameter.empty or ann is Any or ann is object:
        return (object,)
    if ann is None or ann is type(None):
        return (type(None),)
    origin = typing.get_origin(ann)
    if origin is typing.Union or (hasattr(_types, "UnionType") and origin is _types.UnionType):
        out: list = []
        for a in typing.get_args(ann):
            for t in _expand_annotation(a, where):
                if t not in out:
                    out.append(t)
        return tuple(out)
    if origin is not None and isinstance(origin, type):
        return (origin,)  # list[float] dispatches as list
    if isinstance(ann, type):
        return (ann,)
    raise RuleRegistrationError(
        f"cannot dispatch on the annotation {ann!r} of {where}: use a class, a Union of "
        f"classes, or no annotation (= object); or pass the types to register() explicitly"
    )


class _Param(NamedTuple):
    """What dispatch reads of one positional parameter (a subset of inspect.Parameter)."""

    name: str
    annotation: Any
    default: Any
    kind: Any


_EMPTY = inspect.Parameter.empty
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _plain_function_params(rule: Any) -> list[_Param] | None:
    """The positional parameters of a plain Python function, read from its code object;
    None for anything else (wrapped functions, partials, callable objects), which
    `inspect.signature` reads. Registering the built-in rules reads ~600 signatures at
    import, and inspect.signature's generality was a sixth of ``import chainrules``."""
    if (type(rule) is not _types.FunctionType or hasattr(rule, "__wrapped__")
            or hasattr(rule, "__signature__")):
        return None
    code = rule.__code__
    n = code.co_argcount
    names = code.co_varnames
    defaults = rule.__defaults__ or ()
    annotations = rule.__annotations__
    first_default = n - len(defaults)

    def annotation(name: str) -> Any:
        ann = annotations.get(name, _EMPTY)
        # as inspect.signature(eval_str=True) does, in the function's module
        return eval(ann, rule.__globals__) if isinstance(ann, str) else ann

    params = [_Param(names[i], annotation(names[i]),
                     defaults[i - first_default] if i >= first_default else _EMPTY,
                     inspect.Parameter.POSITIONAL_OR_KEYWORD) for i in range(n)]
    if code.co_flags & inspect.CO_VARARGS:
        name = names[n + code.co_kwonlyargcount]
        params.append(_Param(name, annotation(name), _EMPTY,
                             inspect.Parameter.VAR_POSITIONAL))
    return params


def signature_types(rule: Callable, skip: int, where: str) -> tuple[list, int, Any]:
    """Positional dispatch types (each a tuple of alternatives), required count, varargs."""
    try:
        params: list[Any] | None = _plain_function_params(rule)
        if params is None:
            params = [p for p in inspect.signature(rule, eval_str=True).parameters.values()
                      if p.kind in _POSITIONAL or p.kind == p.VAR_POSITIONAL]
    except (TypeError, ValueError, NameError) as e:
        raise RuleRegistrationError(
            f"cannot read the signature of {where}: {e}. Pass the argument types to "
            f"register() explicitly, e.g. register(f, float, float)"
        ) from None
    fixed = [p for p in params if p.kind != inspect.Parameter.VAR_POSITIONAL]
    var = [p for p in params if p.kind == inspect.Parameter.VAR_POSITIONAL]
    if len(fixed) < skip and not var:
        raise RuleRegistrationError(
            f"{where} must take {skip} leading positional parameter(s) before the primal "
            f"arguments (see the register() docs for what a rule receives)"
        )
    fixed = fixed[skip:]  # a *args parameter absorbs whatever leading ones are missing
    alts = [_expand_annotation(p.annotation, f"parameter {p.name!r} of {where}") for p in fixed]
    nreq = sum(1 for p in fixed if p.default is _EMPTY)
    varargs = None
    if var:
        v = _expand_annotation(var[0].annotation, f"parameter *{var[0].name} of {where}")
        if len(v) != 1:
            raise RuleRegistrationError(f"the *args annotation of {where} cannot be a Union")
        varargs = v[0]
    return alts, nreq, varargs


def explicit_types(types: tuple) -> tuple[list, int, Any]:
    varargs = None
    if types and types[-1] is Ellipsis:
        types = types[:-1]
        varargs = object
    alts = [_expand_annotation(t, "register()") for t in types]
    return alts, len(alts), varargs
