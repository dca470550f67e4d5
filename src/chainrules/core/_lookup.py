"""Read-only accessors for ADs that look rules up once per traced operation.

`rrule.lookup` answers every question an AD has, but an AD that records thousands of
operations per gradient asks it on its hot path; these accessors answer the same
questions with the rule tables' caches read directly, and expose what ``scalar_rule``
knows (the partials) so an AD can record them instead of a pullback closure. They
never register or change anything.
"""

from __future__ import annotations

import types as _types
from collections.abc import Callable, Mapping
from typing import Any

from ._helpers import _PARTIALS_ATTR, registered_partials
from ._helpers import namespace_of as _namespace_of
from ._rules import frule_table, rrule_table

__all__ = ["cached_lookup", "derived_cache", "namespace_of", "registered_functions",
           "scalar_partials"]

_MISS = object()


def cached_lookup(entry: Any) -> Callable[[Any, tuple, Any], Any]:
    """A function equivalent to ``entry.lookup(f, argtypes, config)``, faster on hits.

    ``entry`` is `rrule` or `frule`. The returned ``lookup(f, argtypes, config)`` gives
    ``(rule, takes_config, takes_instance)`` or None, exactly as ``entry.lookup`` does
    (the same cache answers both; a registration still empties it): a call already
    resolved for this config type costs two dict reads.

    Example:
        >>> import math
        >>> from chainrules import rrule
        >>> from chainrules.core import cached_lookup
        >>> lookup = cached_lookup(rrule)
        >>> lookup(math.sin, (float,), None) == rrule.lookup(math.sin, (float,))
        True
    """
    table = entry.table
    by_func_get = table.by_func.get
    slow = table.lookup

    def lookup(f: Any, argtypes: tuple, config: Any) -> Any:
        if config is None:
            return slow(f, argtypes, config)
        try:
            tab = by_func_get(f)
        except TypeError:  # an unhashable callable
            return slow(f, argtypes, config)
        if tab is not None:
            hit = tab.config_cache.get((type(config), argtypes), _MISS)
            if hit is not _MISS:
                return hit
        return slow(f, argtypes, config)

    return lookup


def derived_cache(entry: Any, derive: Callable[[Any, tuple, Any, Any], Any]
                  ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """A cache of facts an AD derives from lookups, emptied by every registration.

    ``entry`` is `rrule` or `frule`; ``derive(f, argtypes, config, hit)`` turns a
    lookup's answer ``hit`` (as `cached_lookup` gives it) into what the AD wants to know
    (say, whether the call is a ``scalar_rule`` it can record as partials). Returns
    ``(get, fill)``: ``get(key, default)`` reads the cache (a dict's ``get``; the key
    is the AD's, e.g. ``(f, type(x), type(config))``), ``fill(key, f, argtypes,
    config)`` derives, stores and returns the fact. A registration (or a debug-mode
    switch) empties the cache as it empties the tables' own, so a stale fact is never
    read; ``derive`` must therefore depend on nothing but its arguments and the rules
    registered. An unhashable ``f`` makes ``get`` raise ``TypeError``, as a dict does.

    Example:
        >>> import math
        >>> from chainrules import rrule
        >>> from chainrules.core import derived_cache
        >>> get, fill = derived_cache(rrule, lambda f, types, config, hit: hit is not None)
        >>> get((math.sin, float), None) is None
        True
        >>> fill((math.sin, float), math.sin, (float,), None), get((math.sin, float))
        (True, True)
    """
    table = entry.table
    lookup = cached_lookup(entry)
    cache: dict = {}
    dirty = table.dirty

    def fill(key: Any, f: Any, argtypes: tuple, config: Any) -> Any:
        fact = derive(f, argtypes, config, lookup(f, argtypes, config))
        if not cache:
            dirty.append(cache)  # its first entry since the last registration
        cache[key] = fact
        return fact

    return cache.get, fill


def registered_functions(entry: Any) -> Mapping[Any, Any]:
    """A live read-only view whose keys are the callables with rules registered for them
    directly (``entry.register(f)``, ``scalar_rule``...), for a quick ``f in view``.

    Rules for classes (constructors, calls of instances) are not in it: use
    ``entry.has_rules(f)`` for the complete answer. The values are the core's own.

    Example:
        >>> import math
        >>> from chainrules import rrule
        >>> from chainrules.core import registered_functions
        >>> math.sin in registered_functions(rrule), print in registered_functions(rrule)
        (True, False)
    """
    return _types.MappingProxyType(entry.table.by_func)


def scalar_partials(f: Any, rule: Any = None, *, forward: bool = False) -> Any:
    """The partials ``scalar_rule`` registered for ``f``, or None.

    With ``rule`` (a rule function that a lookup returned for a call of ``f``), None
    unless that is the rrule ``scalar_rule`` made (the frule, with ``forward=True``), so
    a hand-written rule for some argument types is never mistaken for the partials. The
    result has the attributes ``fn`` (the partials function), ``nargs``, ``nout``,
    ``uses_output`` (``fn`` takes the primal output as keyword ``y``), ``uses_xp``
    (``fn`` takes the array namespace as keyword ``xp``, see `namespace_of`) and
    ``uses_wrt`` (``fn`` takes keyword ``wrt``, a bool per argument: whether its partial
    is needed); calling it as ``part(y, args)`` gives what `derivatives_given_output`
    gives, and ``part(y, args, wrt)`` may leave the partials not asked for as None.

    Example:
        >>> import math
        >>> from chainrules.core import scalar_partials
        >>> part = scalar_partials(math.sin)
        >>> part.nargs, part(math.sin(0.0), (0.0,))
        (1, ((1.0,),))
        >>> scalar_partials(print) is None
        True
    """
    if rule is None:
        return registered_partials(f)
    part = getattr(rule, _PARTIALS_ATTR, None)
    if part is None:
        return None
    try:
        tab = (frule_table if forward else rrule_table).by_func.get(f)
    except TypeError:
        return None
    if tab is None:
        return None
    for e in tab.entries:
        if e.rule is rule:  # the rule scalar_rule made for f, still registered for it
            return part if e.kind == "scalar" else None
    return None


def namespace_of(args: tuple) -> Any:
    """The array namespace of ``args`` (as ``array_namespace(*args)``), without its cost
    when they are NumPy arrays, NumPy scalars and Python numbers: for evaluating the
    partials of `scalar_partials` whose ``uses_xp`` is set.

    Example:
        >>> import numpy as np
        >>> from chainrules.core import namespace_of
        >>> namespace_of((np.ones(2), 1.0)).sin(np.zeros(1))
        array([0.])
    """
    return _namespace_of(args)
