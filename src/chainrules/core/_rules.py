"""The public ``rrule`` and ``frule`` entry points.

Each is a plain function carrying its table's registration methods as attributes.
The fast path, taken when ``f`` itself has rules and debug mode is off, is two dict
lookups keyed by ``f`` and by the argument types.

When the optional C extension ``_fastcall`` is built (``pip install`` compiles it
where a C compiler is available), the names ``rrule`` and ``frule`` are bound to a
C object in front of these functions: it answers cache hits and cached misses
from the same dicts without a Python frame and hands every other call to the
Python function unchanged. ``CHAINRULES_PURE_PYTHON=1`` in the environment keeps
the Python functions.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from types import MethodType as _MethodType
from typing import Any

from ._config import RuleConfig
from ._debug import state as _state
from ._dispatch import RuleTable, check_dargs, check_frule_result, check_rrule_result
from ._tangent_types import NoTangent
from ._validate import (
    check_dargs_fit,
    checked_frule,
    checked_pullback_result,
    checked_rrule,
    unwrap_pullback,
)
from ._validate import native as _native

__all__ = ["frule", "frule_python", "frule_table", "rrule", "rrule_python", "rrule_table",
           "scoped_rules"]

_MISS = object()
_NA = object()  # "argument not given", for the positional-only fast-path parameters

rrule_table = RuleTable("rrule", leading=0)
frule_table = RuleTable("frule", leading=1)


def _attach(fn: Any, table: RuleTable) -> None:
    fn.table = table
    fn.register = table.register
    fn.register_call = table.register_call
    fn.opt_out = table.opt_out
    fn.is_opted_out = table.is_opted_out
    fn.has_rules = table.has_rules
    fn.registered = table.registered
    fn.ambiguities = table.ambiguities
    fn.lookup = table.lookup
    fn.no_match_error = table.no_match_error
    fn.add_rule = table.add_rule


_r_get = rrule_table.fast_by_func.get
_f_get = frule_table.fast_by_func.get
# Types whose instances are known to have no rules of their own and no call rules
# (plain functions, builtins, ...), kept by the tables; never RuleConfig or class types.
_r_no_table = rrule_table.no_table_types
_f_no_table = frule_table.no_table_types
rrule_table.config_class = frule_table.config_class = RuleConfig


def rrule(f: Any, x: Any = _NA, y: Any = _NA, /, *rest: Any, **kwargs: Any) -> Any:
    """The reverse-mode rule of a call: ``(y, pullback)``, or ``None`` if there is none.

    ``rrule(f, *args, **kwargs)`` runs ``y = f(*args, **kwargs)`` and returns it with
    ``pullback(y_bar) -> (self_bar, *arg_bars)``: one cotangent for ``f`` itself
    (``NoTangent()`` for plain functions), then one per positional argument. Keyword
    arguments are not differentiated. ``rrule(config, f, *args)`` also considers
    rules registered for that config (tried first), then config-free ones. A bound
    method ``obj.m`` without rules of its own uses those of ``type(obj).m`` (which
    receive ``obj`` first; its cotangent is the bound method's ``self_bar``).

    Registration and queries are attributes of this function: ``rrule.register``,
    ``rrule.register_call``, ``rrule.opt_out``, ``rrule.is_opted_out``,
    ``rrule.has_rules``, ``rrule.lookup``, ``rrule.registered``, ``rrule.ambiguities``
    (see `RuleTable`); ``frule`` has the same.

    Examples:
        >>> import math
        >>> from chainrules import rrule
        >>> y, pullback = rrule(math.sin, 0.0)
        >>> pullback(1.0)
        (NoTangent(), 1.0)
        >>> rrule(print, "no rule for this") is None
        True
    """
    # Fast path: `f` has its own rules and the call has one or two positional
    # arguments, taken as named parameters so no argument tuple is built. Cached misses
    # are stored as `_no_rule`, so a miss costs no more than a hit. In debug mode the
    # fast caches stay empty, so every call takes the slow path.
    try:
        tab = _r_get(f)
    except TypeError:
        tab = None
    if tab is not None and not rest:
        if y is _NA:
            hit = tab.get(type(x))
            if hit is not None:
                if kwargs:
                    return hit(x, **kwargs) if hit is not _no_rule else None
                return hit(x)
        else:
            hit = tab.get((type(x), type(y)))
            if hit is not None:
                if kwargs:
                    return hit(x, y, **kwargs) if hit is not _no_rule else None
                return hit(x, y)
    elif tab is None and type(f) in _r_no_table:
        return None  # nothing registered for f or its type: the common miss
    elif tab is None and type(f) is _MethodType and _bound_miss(rrule_table, f):
        return None
    return _rrule_slow(f, _positional(x, y, rest), kwargs)


def _no_rule(a: Any, b: Any = None, c: Any = None, /) -> None:
    """The fast caches' entry for a call no rule applies to: as cheap to call as a rule."""
    return None


def _positional(x: Any, y: Any, rest: tuple) -> tuple:
    if x is _NA:
        return ()
    if y is _NA:
        return (x,)
    return (x, y, *rest)


def _fast_key(args: tuple) -> Any:
    if len(args) == 1:
        return type(args[0])
    if len(args) == 2:
        return (type(args[0]), type(args[1]))
    return None


def _rrule_slow(f: Any, args: tuple, kwargs: dict) -> Any:
    config = None
    if isinstance(f, RuleConfig):
        config = f
        if not args:
            raise TypeError("rrule(config, f, *args) is missing the function f")
        f, args = args[0], args[1:]
    hit = rrule_table.lookup(f, tuple(map(type, args)), config)
    if config is None and not _state.debug:
        _remember(rrule_table, f, args, hit)
    if hit is None:
        if type(f) is _MethodType and _has_function_rules(rrule_table, f):
            return _bound_method_rrule(config, f, args, kwargs)
        return None
    rule, takes_config, takes_instance = hit
    call_args = args
    if takes_instance:
        call_args = (f, *call_args)
    if takes_config:
        call_args = (config, *call_args)
    result = rule(*call_args, **kwargs)
    if _state.debug:
        result = check_rrule_result(f, args, result)
    return checked_pullback_result(f, rule, result)


def _has_function_rules(table: RuleTable, f: Any) -> bool:
    try:
        return f.__func__ in table.by_func
    except TypeError:
        return False


def _bound_miss(table: RuleTable, f: Any) -> bool:
    """A bound method with no rule of its own, none for its function, and no rule for
    calls of bound methods in general: the fast miss (bound methods are never in
    ``no_table_types``, see ``RuleTable._tables_for``)."""
    return _MethodType not in table.call_tables and not _has_function_rules(table, f)


def _bound_method_rrule(config: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    """The rrule of ``obj.method(*args)`` from a rule for ``Cls.method(obj, *args)``.

    A bound method is a new object on every attribute access, so rules are registered
    on the function it wraps (``f.__func__``), which receives the instance first. The
    instance's cotangent stands for the bound method's own (``self_bar``).
    """
    head = (f.__func__,) if config is None else (config, f.__func__)
    result = _rrule_slow(head[0], (*head[1:], f.__self__, *args), kwargs)
    if result is None:
        return None
    y, pullback = result

    def bound_method_pullback(y_bar: Any) -> Any:
        return pullback(y_bar)[1:]

    bound_method_pullback.__qualname__ = (
        f"{getattr(unwrap_pullback(pullback), '__qualname__', 'pullback')}[bound method]")
    return y, bound_method_pullback


def _bound_method_frule(config: Any, dargs: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    """The frule of ``obj.method(*args)`` from one for ``Cls.method(obj, *args)``: the
    bound method's tangent (``dargs[0]``) is the instance's."""
    if not isinstance(dargs, tuple) or not dargs:
        return None
    inner = (NoTangent(), *dargs)
    head = (inner, f.__func__) if config is None else (config, inner, f.__func__)
    return _frule_slow(head[0], head[1], (*head[2:], f.__self__, *args), kwargs)


def _remember(table: RuleTable, f: Any, args: tuple, hit: Any) -> None:
    """Fill the fast cache of the entry point, for plain function rules of arity 1 or 2.

    The cache holds the rule wrapped to check tangents (see ``_validate``), so the C fast
    path, which calls what it finds there, checks them too.
    """
    try:
        fast = table.fast_by_func.get(f)
    except TypeError:
        return
    key = _fast_key(args)
    if fast is not None and key is not None:
        if not fast:
            table.dirty.append(fast)  # its first entry since the last registration
        if hit is None:
            fast[key] = _no_rule
        else:
            fast[key] = (checked_rrule(f, hit[0], len(args)) if table is rrule_table
                         else checked_frule(f, hit[0], len(args)))


def frule(dargs: Any, f: Any = _NA, x: Any = _NA, y: Any = _NA, /, *rest: Any,
          **kwargs: Any) -> Any:
    """The forward-mode rule of a call: ``(y, y_dot)``, or ``None`` if there is none.

    ``frule((self_dot, *arg_dots), f, *args, **kwargs)`` runs ``y = f(*args, **kwargs)``
    and pushes the tangents forward: ``y_dot`` is the directional derivative along
    the given tangents (one for ``f`` itself, usually ``NoTangent()``, then one per
    positional argument). ``frule(config, dargs, f, *args)`` also considers rules
    registered for that config.

    Examples:
        >>> import math
        >>> from chainrules import frule, NoTangent
        >>> frule((NoTangent(), 2.0), math.sin, 0.0)
        (0.0, 2.0)
    """
    try:
        tab = _f_get(f)
    except TypeError:
        tab = None
    if tab is not None and not rest:
        if y is _NA:
            hit = tab.get(type(x))
            if hit is not None:
                if kwargs:
                    return hit(dargs, x, **kwargs) if hit is not _no_rule else None
                return hit(dargs, x)
        else:
            hit = tab.get((type(x), type(y)))
            if hit is not None:
                if kwargs:
                    return hit(dargs, x, y, **kwargs) if hit is not _no_rule else None
                return hit(dargs, x, y)
    elif tab is None and type(f) in _f_no_table and not isinstance(dargs, RuleConfig):
        return None
    elif tab is None and type(f) is _MethodType and _bound_miss(frule_table, f):
        return None
    return _frule_slow(dargs, f, _positional(x, y, rest), kwargs)


def _frule_slow(dargs: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    config = None
    if isinstance(dargs, RuleConfig):
        if not args:
            raise TypeError(
                "frule(config, dargs, f, *args) is missing the function f"
            )
        config, dargs, f, args = dargs, f, args[0], args[1:]
    if f is _NA:
        raise TypeError(
            "frule expects the tangents and the function: frule((self_dot, *arg_dots), f, *args)"
        )
    hit = frule_table.lookup(f, tuple(map(type, args)), config)
    if config is None and not _state.debug:
        _remember(frule_table, f, args, hit)
    if hit is None:
        if type(f) is _MethodType and _has_function_rules(frule_table, f):
            return _bound_method_frule(config, dargs, f, args, kwargs)
        return None
    if _state.debug:
        check_dargs(f, dargs, args)
    rule, takes_config, takes_instance = hit
    if not getattr(rule, "_chainrules_checked", False):
        check_dargs_fit(f, rule, dargs, args)
    call_args = args
    if takes_instance:
        call_args = (f, *call_args)
    call_args = (dargs, *call_args)
    if takes_config:
        call_args = (config, *call_args)
    result = rule(*call_args, **kwargs)
    if _state.debug:
        return check_frule_result(f, dargs, args, result)
    return result


@contextlib.contextmanager
def scoped_rules() -> Iterator[None]:
    """Undo, on exit, every rule registered (or replaced) inside the ``with`` block.

    For tests that register throw-away rules, or replace built-in ones.

    Examples:
        >>> from chainrules import rrule, scoped_rules
        >>> def double(x):
        ...     return 2 * x
        >>> with scoped_rules():
        ...     @rrule.register(double)
        ...     def double_rrule(x):
        ...         return double(x), lambda y_bar: (None, 2 * y_bar)
        ...     rrule.has_rules(double)
        True
        >>> rrule.has_rules(double)
        False
    """
    snaps = (rrule_table.snapshot(), frule_table.snapshot())
    _open_scopes.append(snaps)
    try:
        yield
    finally:
        _open_scopes.remove(snaps)
        rrule_table.restore(snaps[0])
        frule_table.restore(snaps[1])


#: The snapshots of the ``scoped_rules`` blocks open now, innermost last.
_open_scopes: list[tuple[Any, Any]] = []


@contextlib.contextmanager
def persistent_rules() -> Iterator[None]:
    """Keep the rules registered inside the ``with`` block when an enclosing
    `scoped_rules` block ends.

    For rule sets loaded lazily (the SciPy rules register when ``scipy.<module>`` is
    first imported, which may happen inside a test's ``scoped_rules``): they are part of
    the library, and the loader registers them only once.

    Examples:
        >>> from chainrules import rrule, scoped_rules
        >>> from chainrules.core import persistent_rules
        >>> def triple(x):
        ...     return 3 * x
        >>> with scoped_rules():
        ...     with persistent_rules():
        ...         _ = rrule.register(triple)(lambda x: (3 * x, lambda y_bar: (None, 3 * y_bar)))
        >>> rrule.has_rules(triple)
        True
    """
    if not _open_scopes:
        yield
        return
    before = (rrule_table.snapshot(), frule_table.snapshot())
    try:
        yield
    finally:
        after = (rrule_table.snapshot(), frule_table.snapshot())
        for scope in _open_scopes:
            for old, new, saved in zip(before, after, scope):
                _carry_new_entries(old, new, saved)


def _carry_new_entries(old: Any, new: Any, saved: Any) -> None:
    """Add to the snapshot ``saved`` the entries that ``new`` has and ``old`` had not."""
    for target, store in new.items():
        for key, entries in store.items():
            known = {id(e) for e in old[target].get(key, ())}
            added = [e for e in entries if id(e) not in known]
            if added:
                saved[target].setdefault(key, []).extend(added)


_attach(rrule, rrule_table)
_attach(frule, frule_table)
_state.listeners.append(rrule_table.invalidate)
_state.listeners.append(frule_table.invalidate)

#: The Python entry points (what the C fast path hands its other calls to).
rrule_python, frule_python = rrule, frule


def _fast_entry(python: Any, table: RuleTable, lead: int) -> Any:
    """The C entry point in front of ``python``, or ``python`` when it is not built."""
    if _native is None:
        return python
    entry = _native.entry(python, table.fast_by_func, table.no_table_types, _no_rule,
                            RuleConfig, lead)
    # the function's name, docstring, module and attributes (register, table, ...);
    # __wrapped__ gives inspect.signature and doctest the Python function
    return functools.update_wrapper(entry, python)


globals().update(rrule=_fast_entry(rrule_python, rrule_table, 0),
                 frule=_fast_entry(frule_python, frule_table, 1))
