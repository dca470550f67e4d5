"""The AD on arrays of other libraries than NumPy (array_api_strict, JAX, PyTorch, dask).

Rules for array-API functions are written once against ``xp`` and registered on a
namespace by ``register_namespace``; the AD registers them on the namespace of every
foreign array it meets (an input, or ``array_namespace`` of a tracer in traced code),
so code written with ``xp = array_namespace(x)`` differentiates without a setup step.

A value the AD cannot see inside is refused at the boundary, never differentiated as a
constant: a dask array whose task graph holds a tracer (it was built from a traced
value by dask's own functions, which the AD does not trace) would compute with a value
of a trace that has ended, or fail to serialize on a cluster.
"""

from __future__ import annotations

import sys
from typing import Any

from chainrules.core import array_namespace, persistent_rules

__all__ = ["foreign_namespace"]

# ids of the namespaces whose functions got the array-API rules
_registered: set[int] = set()


def foreign_namespace(x: Any) -> Any:
    """The namespace of foreign array ``x``, with the array-API rules registered on it."""
    xp = array_namespace(x)
    if id(xp) not in _registered:
        from chainrules.rules import register_namespace

        # part of the library, loaded lazily: kept when a test's scoped_rules ends
        # (register_namespace itself registers a namespace once)
        with persistent_rules():
            register_namespace(xp)
        _registered.add(id(xp))
    return xp


def is_dask_array(x: Any) -> bool:
    """Whether ``x`` is a dask array (dask is not imported to answer)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(x, da.Array)
