"""The fast facts of the calls a reverse trace records: what `ReverseTrace`'s fast paths
(and the C tape's) know of a call of ``f`` on arguments of given types, derived from its
rule once and cached (emptied by registrations)."""

from __future__ import annotations

from typing import Any

from chainrules.core import derived_cache, is_foreign_type, rrule, scalar_partials

from ._memory import learn
from ._tracer import _NO_RULE

__all__ = ["_INDEX", "_INDEX_RULE", "_MISS", "_PlainRule", "_fast_fill", "_fast_get",
           "_scalar_partials", "_scalar_rule_fns"]

_scalar_rule_fns: dict = {}


def _scalar_partials(f: Any, rule: Any) -> Any:
    """The partials of ``f`` when ``rule`` is its ``scalar_rule`` (None for other rules);
    cached per rule (a ``scalar_rule`` makes one rule per function)."""
    try:
        return _scalar_rule_fns[rule]
    except KeyError:
        pass
    except TypeError:
        return None
    found = scalar_partials(f, rule)
    _scalar_rule_fns[rule] = found
    if found is not None:
        learn(found)  # what its partials read (what the tape must keep)
    return found


# The AD's own rule for ``x[i]`` (``_ad_rules.getitem_index_rrule``, which imports this
# module and puts itself here): recorded as an index node, ``(x, i, parent)``.
_INDEX_RULE: list = [None]
_INDEX = object()


class _PlainRule:
    """The fast fact of a call whose rule takes neither the config nor the callable (the
    rule is called with the primals, and its pullback recorded)."""

    __slots__ = ("rule",)

    def __init__(self, rule: Any) -> None:
        self.rule = rule


def _derive_scalar(f: Any, argtypes: tuple, config: Any, hit: Any) -> Any:
    """What `ReverseTrace`'s fast paths need to know of a call: ``_NO_RULE`` (no rule),
    the partials of a one-output ``scalar_rule`` (recorded as a `_ScalarNode` tuple),
    ``_INDEX`` (``x[i]`` by the AD's own rule, recorded as an index node), a `_PlainRule`
    (any other rule taking neither the config nor the callable) or None (the general
    path)."""
    if hit is None:
        return _NO_RULE
    if hit[0] is _INDEX_RULE[0] and not hit[2]:
        return _INDEX
    if hit[1] or hit[2]:
        return None
    part = _scalar_partials(f, hit[0])  # (scalar nodes unbroadcast with NumPy: not foreign)
    return part if part is not None and part.nout == 1 and not any(
        map(is_foreign_type, argtypes)) else _PlainRule(hit[0])


# (f, argument types..., config type) -> `_derive_scalar`'s answer; emptied by registrations
_fast_get, _fast_fill = derived_cache(rrule, _derive_scalar)
_MISS = object()
