"""The rule tables behind ``rrule`` and ``frule``.

Rules are keyed first by the identity of the function called (a dict: the role
``typeof(sin)`` plays in Julia), then by the types of the positional arguments:
the most specific matching signature wins, and a tie raises ``AmbiguityError``.
The winner (or the absence of one) is cached per tuple of argument types, so a
repeated call costs two dict lookups. Hand-written: measured against plum,
multipledispatch and ovld, a dispatch library costs 2-4x more per call, and a
missing rule must return ``None`` rather than raise.
"""

from __future__ import annotations

import itertools
import numbers
import types as _types
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ._errors import (
    AmbiguityError,
    NoMatchingRuleError,
    PullbackError,
    RuleRegistrationError,
    describe,
    func_name,
)
from ._signatures import explicit_types, signature_types

__all__ = ["RuleInfo", "RuleOverwriteWarning", "RuleTable"]

_MISS = object()


class RuleOverwriteWarning(UserWarning):
    """A rule was registered for a signature that already had one; the new one replaces it."""


class RuleInfo(NamedTuple):
    """One registered rule, as listed by ``rrule.registered()``.

    Attributes:
        function: the callable the rule is for (a class for constructor and call rules).
        types: the types of the positional arguments.
        varargs: the type of further positional arguments, or None.
        required: how many positional arguments are required.
        config: the config class the rule is restricted to, or None.
        rule: the rule function.
        kind: "rule", "scalar", "non_differentiable" or "opt_out".
        target: "function" (calls of ``function``), "constructor" (calls of the class and
            its subclasses) or "call" (calls of instances of the class).
    """

    function: Any
    types: tuple
    varargs: Any
    required: int
    config: Any
    rule: Callable | None
    kind: str
    target: str

    def signature(self) -> str:
        """The rule's signature as text, e.g. ``numpy.sin(ndarray)``."""
        parts = [t.__qualname__ for t in self.types[: self.required]]
        parts += [f"[{t.__qualname__}]" for t in self.types[self.required:]]
        if self.varargs is not None:
            parts.append(f"*{self.varargs.__qualname__}")
        name = func_name(self.function)
        if self.target == "call":
            name = f"<{name} instance>"
        elif self.target == "constructor":
            name = f"{name} (and subclasses)"
        config = f" [config: {self.config.__qualname__}]" if self.config is not None else ""
        return f"{name}({', '.join(parts)}){config}"


class _NumberMeta(type):
    """Matching for the annotations ``int``, ``float`` and ``complex``: as Python's number
    ABCs say (``numbers.Integral``/``Real``/``Complex``), so ``x: int`` matches
    ``np.int64`` and ``x: float`` matches ``np.float32`` and ``int``. Bools match ``int``
    only (as ``isinstance(True, int)`` says); the ABCs themselves are wider than these."""

    rank: int
    abc: type

    def __subclasscheck__(cls, t: Any) -> bool:
        if not isinstance(t, type):
            return False
        if isinstance(t, _NumberMeta):
            return t.rank <= cls.rank
        if t.__module__ == "numbers":
            return False
        if cls.rank > 0 and issubclass(t, (bool, np.bool_)):
            return False
        return issubclass(t, cls.abc)

    def __instancecheck__(cls, x: Any) -> bool:
        return cls.__subclasscheck__(type(x))


def _number_match(name: str, rank: int, abc: type) -> type:
    return _NumberMeta(name, (), {"rank": rank, "abc": abc, "__qualname__": name})


def _sub(t: Any, u: Any) -> bool:
    """``issubclass`` between dispatch types, where ``float`` (say) sits below
    ``numbers.Real`` (not registered with the ABC: its own check would recurse)."""
    if isinstance(t, _NumberMeta) and not isinstance(u, _NumberMeta):
        return issubclass(t.abc, u)
    return issubclass(t, u)


_MATCH = {int: _number_match("int", 0, numbers.Integral),
          float: _number_match("float", 1, numbers.Real),
          complex: _number_match("complex", 2, numbers.Complex)}


class _Entry:
    __slots__ = ("config", "info", "kind", "match", "nreq", "rule", "types", "varargs",
                 "varmatch")

    def __init__(self, types: tuple, nreq: int, varargs: Any, config: Any, rule: Any,
                 kind: str) -> None:
        self.types = types
        self.nreq = nreq
        self.varargs = varargs
        self.config = config
        self.rule = rule
        self.kind = kind
        # what the types match (int/float/complex widened to the number ABCs)
        self.match = tuple(_MATCH.get(t, t) for t in types)
        self.varmatch = _MATCH.get(varargs, varargs)

    def same_signature(self, other: _Entry) -> bool:
        return (self.types == other.types and self.nreq == other.nreq
                and self.varargs == other.varargs and self.config is other.config)

    def type_at(self, i: int) -> Any:
        return self.match[i] if i < len(self.match) else self.varmatch

    def applies(self, argtypes: tuple) -> bool:
        n = len(argtypes)
        if n < self.nreq or (n > len(self.types) and self.varargs is None):
            return False
        return all(issubclass(t, self.type_at(i)) for i, t in enumerate(argtypes))


def _at_least_as_specific(a: _Entry, b: _Entry, n: int) -> bool:
    return all(_sub(a.type_at(i), b.type_at(i)) for i in range(n))


def _most_specific(entries: list[_Entry], n: int) -> list[_Entry]:
    """The entries not beaten by another; ties broken towards fixed arity."""
    best = []
    for a in entries:
        beaten = False
        for b in entries:
            if a is b:
                continue
            if _at_least_as_specific(b, a, n):
                if not _at_least_as_specific(a, b, n):
                    beaten = True
                    break
                # Equal at this arity: fixed arity beats varargs, then fewer optionals.
                if (a.varargs is not None, len(a.types)) > (b.varargs is not None, len(b.types)):
                    beaten = True
                    break
        if not beaten:
            best.append(a)
    return best


class _FuncTable:
    """All rules for one callable (or one class, for call and constructor rules)."""

    __slots__ = ("cache", "config_cache", "entries", "fast", "function", "target")

    def __init__(self, function: Any, target: str) -> None:
        self.function = function
        self.target = target
        self.entries: list[_Entry] = []
        self.cache: dict = {}
        self.config_cache: dict = {}
        # Keyed by the types of (f, *args) for the entry points' fast path; kept apart
        # from `cache` (keyed by the primal types alone) so keys never collide.
        self.fast: dict = {}

    def resolve(self, table: str, argtypes: tuple, config: Any) -> _Entry | None:
        """The winning entry for these positional types, or None."""
        pools: list[list[_Entry]] = []
        if config is not None:
            pools.append([e for e in self.entries
                          if e.config is not None and isinstance(config, e.config)])
        pools.append([e for e in self.entries if e.config is None])
        for pool in pools:
            found = [e for e in pool if e.applies(argtypes)]
            if not found:
                continue
            best = _most_specific(found, len(argtypes))
            # Alternatives of one Union-annotated rule can tie; they run the same code.
            if len(best) > 1 and any(e.rule is not best[0].rule or e.kind != best[0].kind
                                     for e in best):
                raise AmbiguityError(table, self.function, argtypes,
                                     [_info(self, e).signature() for e in best])
            return best[0]
        return None


def _info(tab: _FuncTable, e: _Entry) -> RuleInfo:
    return RuleInfo(tab.function, e.types, e.varargs, e.nreq, e.config, e.rule, e.kind,
                    tab.target)


# ---------------------------------------------------------------------------------------
# Reading dispatch types from annotations


# ---------------------------------------------------------------------------------------
# The table


class RuleTable:
    """A table of rules (``rrule`` or ``frule``) with registration and lookup.

    Users call the module-level ``rrule`` / ``frule`` functions; they are thin entry
    points over one ``RuleTable`` each. This class holds the registration methods
    those functions expose as attributes.
    """

    def __init__(self, name: str, leading: int) -> None:
        self.name = name
        # Positional parameters a rule function takes before the primal arguments
        # (0 for rrule, 1 for frule: the tangent tuple).
        self.leading = leading
        self.by_func: dict[Any, _FuncTable] = {}
        # f -> that function's fast cache (the same dict as by_func[f].fast), so the
        # entry points reach it with one lookup.
        self.fast_by_func: dict[Any, dict] = {}
        self.call_tables: dict[type, _FuncTable] = {}
        self.ctor_tables: dict[type, _FuncTable] = {}
        self.type_cache: dict[Any, _FuncTable | None] = {}
        # Types of callables known to have no rules (a set, for the entry points' miss
        # path); filled by lookups, emptied by every registration.
        self.no_table_types: set = set()
        # The per-function caches written since the last registration (by `lookup` and
        # the entry points' `_remember`): a registration clears just these, so
        # registering n rules at import costs O(n), not O(n * tables).
        self.dirty: list[dict] = []
        self.config_class: Any = None  # set by _config to avoid an import cycle

    # --- registration -----------------------------------------------------------------

    def _check_target(self, f: Any) -> None:
        if f is type:
            raise RuleRegistrationError(
                f"a {self.name} for `type` would catch every constructor call. Register the "
                f"rule on your class instead: {self.name}.register(MyClass) for its "
                f"constructor, {self.name}.register_call(MyClass) for calls of its instances"
            )
        try:
            hash(f)
        except TypeError:
            raise RuleRegistrationError(
                f"cannot register a {self.name} for an unhashable {type(f).__qualname__} "
                f"object; register a rule for calls of its instances with "
                f"{self.name}.register_call({type(f).__qualname__})"
            ) from None

    def _add(self, tab: _FuncTable, types: tuple, rule: Any, config: Any, kind: str,
             skip: int) -> None:
        rule_name = getattr(rule, "__qualname__", rule)
        where = f"the {self.name} {rule_name!r} for {func_name(tab.function)}"
        if config is not None and not isinstance(config, type):
            raise RuleRegistrationError(
                f"config= must be a class (a RuleConfig subclass or a feature such as "
                f"HasReverseMode), got {config!r} for {where}"
            )
        if types:
            alts, nreq, varargs = explicit_types(types)
        else:
            alts, nreq, varargs = signature_types(rule, skip, where)
        for combo in itertools.product(*alts) if alts else [()]:
            entry = _Entry(tuple(combo), nreq, varargs, config, rule, kind)
            for i, old in enumerate(tab.entries):
                if old.same_signature(entry):
                    # Declaring something non-differentiable twice is harmless; replacing
                    # a rule is not.
                    # Defaults the core adds (e.g. refusing a positional out=) step aside.
                    if (old.rule is not rule or old.kind != kind) and not (
                        old.kind == kind == "non_differentiable"
                        or getattr(old.rule, "replaceable_default", False)
                    ):
                        warnings.warn(
                            f"{_info(tab, entry).signature()}: a {self.name} was already "
                            f"registered for this signature ({old.kind} "
                            f"{getattr(old.rule, '__qualname__', old.rule)!r}); the new one "
                            f"replaces it",
                            RuleOverwriteWarning,
                            stacklevel=4,
                        )
                    tab.entries[i] = entry
                    break
            else:
                tab.entries.append(entry)
        self.invalidate()

    def invalidate(self) -> None:
        """Drop every cached lookup (after a registration, or a debug-mode switch)."""
        for cache in self.dirty:
            cache.clear()
        self.dirty.clear()
        self.type_cache.clear()
        self.no_table_types.clear()

    def snapshot(self) -> Any:
        """The registrations as they are now, for `restore`."""
        return {
            name: {k: list(t.entries) for k, t in store.items()}
            for name, store in (("function", self.by_func), ("call", self.call_tables),
                                ("constructor", self.ctor_tables))
        }

    def restore(self, snap: Any) -> None:
        """Put the registrations back as they were when ``snap`` was taken."""
        for target, store in (("function", self.by_func), ("call", self.call_tables),
                              ("constructor", self.ctor_tables)):
            saved = snap[target]
            for key in list(store):
                if key not in saved:
                    del store[key]
                    if target == "function":
                        del self.fast_by_func[key]
            for key, entries in saved.items():
                self._table_for(key, target).entries = list(entries)
        self.invalidate()

    def _table_for(self, f: Any, target: str) -> _FuncTable:
        store = {"function": self.by_func, "call": self.call_tables,
                 "constructor": self.ctor_tables}[target]
        tab = store.get(f)
        if tab is None:
            tab = store[f] = _FuncTable(f, target)
            if target == "function":
                self.fast_by_func[f] = tab.fast
        return tab

    def register(self, f: Any, *types: Any, config: Any = None,
                 subclasses: bool = False) -> Callable[[Callable], Callable]:
        """Register a rule for calls of ``f``; use as a decorator.

        The rule function receives what the caller passed, minus ``f`` itself: an
        rrule ``(*args, **kwargs)``, an frule ``(dargs, *args, **kwargs)``, with the
        config first when ``config=`` restricts the rule to a config class or feature.
        Dispatch types come from the rule's parameter annotations (none means
        ``object``; ``Union``/``X | Y`` register each alternative), or from ``types``.
        A trailing ``...`` in ``types`` accepts any further arguments.

        Args:
            f: the function, builtin, ufunc or class (constructor) the rule is for.
            *types: explicit positional dispatch types (default: from annotations).
            config: restrict the rule to configs that are instances of this class.
            subclasses: for a class ``f``, also use the rule for constructors of its
                subclasses.

        Examples:
            >>> import math
            >>> from chainrules import rrule, NoTangent
            >>> def my_sin(x):
            ...     return math.sin(x)
            >>> @rrule.register(my_sin)
            ... def my_sin_rrule(x: float):
            ...     def my_sin_pullback(y_bar):
            ...         return NoTangent(), y_bar * math.cos(x)
            ...     return my_sin(x), my_sin_pullback
            >>> y, pb = rrule(my_sin, 0.0)
            >>> pb(1.0)
            (NoTangent(), 1.0)
        """
        self._check_target(f)
        if subclasses and not isinstance(f, type):
            raise RuleRegistrationError(
                f"subclasses=True applies to classes; {func_name(f)} is a "
                f"{type(f).__qualname__}"
            )
        target = "constructor" if subclasses else "function"
        skip = self.leading + (1 if config is not None else 0)

        def decorator(rule: Callable) -> Callable:
            self._add(self._table_for(f, target), types, rule, config, "rule", skip)
            return rule

        return decorator

    def register_call(self, cls: type, *types: Any,
                      config: Any = None) -> Callable[[Callable], Callable]:
        """Register a rule for calls of *instances* of ``cls`` (callable objects).

        The rule receives the instance before the arguments (after the config and,
        for frules, the tangent tuple). It also applies to instances of subclasses;
        the nearest class in the method resolution order wins. The instance's tangent
        (``self_bar``) is a ``Tangent[cls]``.

        Examples:
            >>> from chainrules import rrule, Tangent
            >>> class Scale:
            ...     def __init__(self, a):
            ...         self.a = a
            ...     def __call__(self, x):
            ...         return self.a * x
            >>> @rrule.register_call(Scale)
            ... def scale_rrule(scale, x: float):
            ...     def scale_pullback(y_bar):
            ...         return Tangent[Scale](a=y_bar * x), y_bar * scale.a
            ...     return scale(x), scale_pullback
            >>> y, pb = rrule(Scale(3.0), 2.0)
            >>> pb(1.0)
            (Tangent[Scale](a=2.0), 3.0)
        """
        if not isinstance(cls, type):
            raise RuleRegistrationError(
                f"register_call takes a class, got a {type(cls).__qualname__}; for a "
                f"function use {self.name}.register(f)"
            )
        if cls is type:
            self._check_target(cls)
        skip = self.leading + 1 + (1 if config is not None else 0)

        def decorator(rule: Callable) -> Callable:
            self._add(self._table_for(cls, "call"), types, rule, config, "rule", skip)
            return rule

        return decorator

    def add_rule(self, f: Any, rule: Callable, types: tuple, *, kind: str,
                 config: Any = None) -> None:
        """Register ``rule`` for ``f`` with explicit types (used by the definition helpers)."""
        self._check_target(f)
        self._add(self._table_for(f, "function"), types, rule, config, kind, 0)

    def opt_out(self, f: Any, *types: Any, config: Any = None) -> None:
        """Declare that for this (more specific) signature the generic rule does not apply.

        A lookup matching it returns ``None``, so an AD differentiates through ``f``
        instead; ADs can ask with `is_opted_out`. A trailing ``...`` in
        ``types`` accepts any further arguments.

        Examples:
            >>> import numpy as np
            >>> from chainrules import rrule
            >>> def total(x):
            ...     return np.sum(x)
            >>> @rrule.register(total)
            ... def total_rrule(x):
            ...     return total(x), lambda y_bar: (None, y_bar * np.ones_like(x))
            >>> class Fancy(np.ndarray):
            ...     pass
            >>> rrule.opt_out(total, Fancy)
            >>> rrule(total, np.zeros(2).view(Fancy)) is None
            True
            >>> rrule.is_opted_out(total, np.zeros(2).view(Fancy))
            True
        """
        self._check_target(f)
        if not types:
            raise RuleRegistrationError(
                f"{self.name}.opt_out({func_name(f)}) needs the argument types to opt out, "
                f"e.g. {self.name}.opt_out(f, MyArray)"
            )
        self._add(self._table_for(f, "function"), types, None, config, "opt_out", 0)

    # --- lookup -------------------------------------------------------------------------

    def _tables_for(self, f: Any) -> _FuncTable | None:
        try:
            tab = self.by_func.get(f)
        except TypeError:
            tab = None
        if tab is not None:
            return tab
        key = f if isinstance(f, type) else type(f)
        try:
            return self.type_cache[key]
        except KeyError:
            pass
        except TypeError:
            return None
        found = None
        if isinstance(f, type):
            for klass in f.__mro__:
                if klass in self.ctor_tables:
                    found = self.ctor_tables[klass]
                    break
        else:
            for klass in type(f).__mro__:
                if klass in self.call_tables:
                    found = self.call_tables[klass]
                    break
        self.type_cache[key] = found
        # A bound method is never a known miss: the entry points look for a rule of its
        # function (see _rules._bound_method_rrule), which the type alone cannot rule out.
        if found is None and not isinstance(f, type) and key is not _types.MethodType and not (
            self.config_class is not None and isinstance(f, self.config_class)
        ):
            self.no_table_types.add(key)
        return found

    def lookup(self, f: Any, argtypes: tuple, config: Any = None) -> tuple[Callable, bool,
                                                                             bool] | None:
        """The rule function for a call, without calling it: ``(rule, takes_config,
        takes_instance)``, or None when no rule applies (none registered, or opted out).

        For ADs that call the rule function themselves (to trace its code, say): call
        ``rule(*lead, *args, **kwargs)`` where ``lead`` is the config (if
        ``takes_config``), then for frules the tangent tuple, then the callable object
        (if ``takes_instance``). ``argtypes`` are the types of the positional primal
        arguments. Cached like every lookup.

        Examples:
            >>> import math
            >>> from chainrules import rrule
            >>> rule, takes_config, takes_instance = rrule.lookup(math.sin, (float,))
            >>> y, pullback = rule(0.0)
            >>> (takes_config, takes_instance), pullback(1.0)
            ((False, False), (NoTangent(), 1.0))
        """
        tab = self._tables_for(f)
        if tab is None:
            return None
        ctype = type(config) if config is not None else None
        cache = tab.config_cache if config is not None else tab.cache
        key = (ctype, argtypes) if config is not None else argtypes
        hit = cache.get(key, _MISS)
        if hit is _MISS:
            entry = tab.resolve(self.name, argtypes, config)
            if entry is None or entry.kind == "opt_out":
                hit = None
            else:
                hit = (entry.rule, entry.config is not None, tab.target == "call")
            if not cache:
                self.dirty.append(cache)  # its first entry since the last registration
            cache[key] = hit
        return hit

    def has_rules(self, f: Any) -> bool:
        """Whether any rule (or opt-out) is registered for ``f`` or its type; for a
        bound method ``obj.m``, also for the function ``type(obj).m`` it wraps (whose
        rules ``rrule(obj.m, ...)`` uses).

        Examples:
            >>> import math
            >>> import chainrules
            >>> chainrules.rrule.has_rules(math.sin)
            True
        """
        if self._tables_for(f) is not None:
            return True
        return type(f) is _types.MethodType and self._tables_for(f.__func__) is not None

    def no_match_error(self, f: Any, argtypes: tuple, config: Any = None) -> Any:
        """The `NoMatchingRuleError` for a call of ``f`` with ``argtypes`` that no
        rule matches although ``f`` has rules; None when ``f`` has no rules, a rule
        matches, or the call is opted out. For ADs and testers, which need a rule where
        ``rrule`` itself returns None.

        Examples:
            >>> from chainrules import rrule, scoped_rules
            >>> def power(x, n):
            ...     return x**n
            >>> with scoped_rules():
            ...     @rrule.register(power)
            ...     def power_rrule(x: float, n: int):
            ...         return power(x, n), None
            ...     print(rrule.no_match_error(power, (float, float)))  # doctest: +ELLIPSIS
            no rrule for ...power(float, float): rules are registered for ...
              - ...power(float, int)
            Convert the arguments to one of these types, or register a rule for (float, float).
        """
        tab = self._tables_for(f)
        if tab is None:
            return None
        try:
            entry = tab.resolve(self.name, argtypes, config)
        except AmbiguityError:
            return None
        if entry is not None:
            return None
        pools = [e for e in tab.entries if e.kind != "opt_out"
                 and (e.config is None or (config is not None and isinstance(config, e.config)))]
        if not pools:
            return None
        return NoMatchingRuleError(self.name, f, argtypes,
                                   sorted({_info(tab, e).signature() for e in pools}))

    def is_opted_out(self, f: Any, *args: Any, config: Any = None) -> bool:
        """Whether this call matches an ``opt_out`` declaration (so no rule applies)."""
        tab = self._tables_for(f)
        if tab is None:
            return False
        entry = tab.resolve(self.name, tuple(map(type, args)), config)
        return entry is not None and entry.kind == "opt_out"

    def registered(self) -> list[RuleInfo]:
        """Every registered rule and opt-out, for docs, reports and the CLI."""
        out = []
        for tab in itertools.chain(self.by_func.values(), self.ctor_tables.values(),
                                   self.call_tables.values()):
            out.extend(_info(tab, e) for e in tab.entries)
        return out

    def ambiguities(self) -> list[tuple[RuleInfo, RuleInfo]]:
        """Pairs of registered signatures that some call would match equally well.

        A pair is reported when, position by position, each pair of types is related
        by subclassing, neither signature is more specific, and no registered signature
        covers exactly their overlap.

        Examples:
            >>> from chainrules import rrule
            >>> rrule.ambiguities()
            []
        """
        found = []
        for tab in itertools.chain(self.by_func.values(), self.ctor_tables.values(),
                                   self.call_tables.values()):
            for a, b in itertools.combinations(tab.entries, 2):
                if a.config is not b.config or (a.rule is b.rule and a.kind == b.kind):
                    continue
                lo = max(a.nreq, b.nreq)
                hi_a = len(a.types) if a.varargs is None else max(len(a.types), len(b.types))
                hi_b = len(b.types) if b.varargs is None else max(len(a.types), len(b.types))
                for n in range(lo, min(hi_a, hi_b) + 1):
                    meet = []
                    for i in range(n):
                        ta, tb = a.type_at(i), b.type_at(i)
                        if _sub(ta, tb):
                            meet.append(ta)
                        elif _sub(tb, ta):
                            meet.append(tb)
                        else:
                            break
                    else:
                        if len(_most_specific([a, b], n)) < 2:
                            continue
                        meet_t = tuple(meet)
                        covered = any(e.applies(meet_t) and _at_least_as_specific(e, a, n)
                                      and _at_least_as_specific(e, b, n)
                                      and e is not a and e is not b for e in tab.entries)
                        if not covered:
                            found.append((_info(tab, a), _info(tab, b)))
                            break
        return found


# ---------------------------------------------------------------------------------------
# Debug-mode checks on what rules return


def check_rrule_result(f: Any, args: tuple, result: Any) -> Any:
    if result is None:
        return None
    if not isinstance(result, tuple) or len(result) != 2 or not callable(result[1]):
        raise PullbackError(
            f"the rrule for {func_name(f)} returned {describe(result)}; an rrule returns a "
            f"tuple (y, pullback) with a callable pullback"
        )
    y, pullback = result

    def checked_pullback(y_bar: Any) -> Any:
        out = pullback(y_bar)
        if not isinstance(out, tuple):
            raise PullbackError(
                f"the pullback of the rrule for {func_name(f)} returned {describe(out)}; it "
                f"must return a tuple (self_bar, *arg_bars)"
            )
        if len(out) != len(args) + 1:
            forgot = (". It looks like the pullback forgot self_bar, the first entry: "
                      "NoTangent() for a plain function" if len(out) == len(args) else "")
            raise PullbackError(
                f"the pullback of the rrule for {func_name(f)} returned {len(out)} entries "
                f"for a call with {len(args)} positional argument(s); it must return "
                f"{len(args) + 1}: one for the function itself, then one per argument{forgot}"
            )
        for i, (x, x_bar) in enumerate(zip(args, out[1:])):
            xs, bs = getattr(x, "shape", None), getattr(x_bar, "shape", None)
            if xs is not None and bs is not None and tuple(xs) != tuple(bs):
                raise PullbackError(
                    f"the pullback of the rrule for {func_name(f)} returned a cotangent of "
                    f"shape {tuple(bs)} for argument {i + 1} of shape {tuple(xs)}; project "
                    f"it with ProjectTo(x)"
                )
        return out

    checked_pullback.__qualname__ = getattr(pullback, "__qualname__", "pullback")
    return y, checked_pullback


def check_frule_result(f: Any, dargs: Any, args: tuple, result: Any) -> Any:
    if result is None:
        return None
    if not isinstance(result, tuple) or len(result) != 2:
        raise PullbackError(
            f"the frule for {func_name(f)} returned {describe(result)}; an frule returns a "
            f"tuple (y, y_dot)"
        )
    return result


def check_dargs(f: Any, dargs: Any, args: tuple) -> None:
    if not isinstance(dargs, tuple) or len(dargs) != len(args) + 1:
        n = len(dargs) if isinstance(dargs, tuple) else describe(dargs)
        raise PullbackError(
            f"frule for {func_name(f)} got tangents {n}; pass a tuple "
            f"(self_dot, *arg_dots) with {len(args) + 1} entries: one for the function "
            f"itself, then one per positional argument"
        )

