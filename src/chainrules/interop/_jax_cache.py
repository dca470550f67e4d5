"""What the JAX bridge decides once per function and argument structure, and keeps.

An eager JAX call of a bridged function must not pay, on every call, for building a
``jax.custom_jvp`` and for probing which backend applies: both depend only on the
function, the bridge's options and the call's structure (pytree, shapes, dtypes,
static values), so they are kept here, in bounded caches that any rule registration
empties. The callback path's table of pullbacks, kept from a forward pass for the
backward pass, is here too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

__all__ = ["BackendChoice"]


# -- what is decided once per function and argument structure ----------------------------

#: The plan of a cached structure whose calls take the callback path.
_CALLBACK = object()
#: ``(f, mode, backend, config, structure) -> (fn, NativeCall) or _CALLBACK``: one
#: custom-derivative function per structure, reused by every call (and every new
#: ``jax_function(f)``) with that structure, so an eager call pays no construction or
#: probe. ``_CHOICES``: the backend decisions (see ``backend_for``), keyed by shapes.
_PLANS: dict = {}
_CHOICES: dict = {}
#: Entries each cache keeps (the oldest go first): bounded, whatever the calls.
_CACHE_SIZE = 512
_CACHE_LOCK = threading.Lock()


def _remember(cache: dict, key: Any, value: Any) -> None:
    """Keep ``value`` in ``cache``; registering any rule empties the cache (it joins the
    rule tables' caches, which a registration clears), so no decision outlives the rules
    it was made from."""
    from chainrules.core._rules import frule_table, rrule_table

    with _CACHE_LOCK:
        if not cache:
            rrule_table.dirty.append(cache)
            frule_table.dirty.append(cache)
        cache[key] = value
        while len(cache) > _CACHE_SIZE:
            del cache[next(iter(cache))]


def _plan_key(bridged: Any, treedef: Any, leaves: list, array: type) -> Any:
    """A hashable key of everything a plan depends on: the function and the bridge's
    options, the arguments' pytree structure, each JAX array's shape, dtype and weak
    type, and every other leaf's type and value. None when a leaf is a NumPy array (its
    contents are not part of any key) or is unhashable: such calls build their plan."""
    parts: list = []
    for leaf in leaves:
        if isinstance(leaf, array):
            parts.append((leaf.shape, leaf.dtype, leaf.weak_type))
        elif type(leaf) is float:
            parts.append((float, leaf.hex()))  # -0.0 is not 0.0, and nan is nan
        elif isinstance(leaf, np.ndarray):
            return None
        else:
            parts.append((type(leaf), leaf))
    key = (bridged.f, bridged.mode, bridged.backend, bridged.config,
           bridged.result_shape is None, treedef, tuple(parts))
    try:
        hash(key)
    except TypeError:
        return None
    return key


class BackendChoice(NamedTuple):
    """How a bridged function runs for one input signature (see ``backend_for``).

    Attributes:
        backend: ``"native"`` (the function and its rules trace with JAX values) or
            ``"callback"`` (NumPy code in ``jax.pure_callback``).
        mode: ``"forward"`` (``jax.custom_jvp`` from the frule), ``"reverse"``
            (``jax.custom_vjp`` from the rrule) or, for the callback path, ``"both"``.
        reason: why ``backend="auto"`` chose the callback path (the error that tracing
            the function or its rules raised), else None.
    """

    backend: str
    mode: str
    reason: str | None


class _PullbackStash:
    """Pullbacks kept from a forward pass for the backward pass, found by an integer token.

    Bounded (oldest dropped first) and popped on use: a missing entry only costs a
    recomputation of the rrule, so the table never has to outlive a traced
    program, and a forward pass whose backward pass never runs leaks nothing.
    """

    def __init__(self, capacity: int = 16) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[int, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._next = 0

    def put(self, entry: Any) -> int:
        with self._lock:
            self._next = (self._next + 1) % 2**31
            token = self._next
            self._entries[token] = entry
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return token

    def pop(self, token: int) -> Any:
        with self._lock:
            return self._entries.pop(token, None)

    def __len__(self) -> int:
        return len(self._entries)


_STASH = _PullbackStash()
