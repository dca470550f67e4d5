"""The array API rows (``cases/array_api.py``) on JAX arrays, through ``jax.numpy``: the
same generic rules and inputs, checked by the testers on JAX arrays (and traced under
``jax.jit``). JAX computes in 32 bits unless x64 is enabled, which is a process-wide switch
that a catalog must not flip: the rows run in float32, one per function plus the edge rows
(zeros, 0-sized inputs, every norm ``ord``). Without JAX installed the table is empty.
"""

from __future__ import annotations

import dataclasses

from chainrules.testing import Case
from chainrules.testing.cases.array_api import build_cases

__all__ = ["CASES"]

#: Each row's dtypes: float32 alone (float64 needs x64; complex64 would double the run
#: time of the slowest table, whose every case is also traced under ``jax.jit``).
DTYPES: dict[str, str | None] = {"float64": None, "float32": "float32", "complex128": None}

#: Rows whose primal cannot run where the testers need it, and why.
SKIP = {
    "jax.numpy.from_dlpack": (
        "jnp.from_dlpack refuses a tracer (no __dlpack__), so it cannot run under jax.jit; "
        "its rule is the identity's, tested on the other libraries"),
}


def _cases() -> list[Case]:
    try:
        import jax.numpy as jnp
    except ImportError:  # pragma: no cover - the optional dependency is missing
        return []
    rows = build_cases(jnp, "jax.numpy", jnp.asarray, DTYPES)
    return [dataclasses.replace(row, skip=SKIP[row.display_name])
            if row.display_name in SKIP else row for row in _one_per_function(rows)]


def _one_per_function(rows: list[Case]) -> list[Case]:
    """The first row of each function, and every edge row (zeros, 0-sized inputs): the
    rest of the table runs on ``array_api_strict`` and PyTorch, and JAX's traced check of
    every row would cost minutes."""
    seen: set = set()
    kept = []
    for row in rows:
        edge = any(w in (row.name or "") for w in ("empty", "zeros", "0x0", "n=0", "ord"))
        if edge or row.f not in seen:
            kept.append(row)
            seen.add(row.f)
    return kept


CASES: list[Case] = _cases()
