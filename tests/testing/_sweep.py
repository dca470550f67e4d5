"""Edge-input sweep over the catalog's own cases (issue #26): each floating input replaced
by an empty array, all-NaN or all-inf values that the primal accepts; the rules must then
give a value or a named chainrules error, never a raw crash. Shared by the test and by a
run that lists every failure (``python tests/testing/_sweep.py [module ...]``)."""

from __future__ import annotations

import sys
import time
import warnings
from typing import Any

import numpy as np

from chainrules import NoTangent, frule, rrule, unthunk
from chainrules.core import ChainRulesError, Tangent, array_namespace, is_foreign_array
from chainrules.testing._foreign import to_numpy
from chainrules.testing._pairs import PrimalAndTangent


def _strip(a: Any) -> Any:
    return a.x if isinstance(a, PrimalAndTangent) else a


def _is_float(a: Any) -> bool:
    if isinstance(a, np.ndarray):
        return a.dtype.kind == "f" and a.ndim >= 1
    if is_foreign_array(a):
        return array_namespace(a).isdtype(a.dtype, "real floating") and a.ndim >= 1
    return False


def _variants(a: Any) -> list:
    x = np.asarray(to_numpy(a))
    back = np.asarray if isinstance(a, np.ndarray) else array_namespace(a).asarray
    empty = np.zeros((0, *x.shape[1:]), dtype=x.dtype)
    return [(label, back(v)) for label, v in (
        ("empty", empty), ("nan", np.full_like(x, np.nan)), ("inf", np.full_like(x, np.inf)))]


def _ones(x: Any) -> Any:
    return np.ones_like(x) if isinstance(x, np.ndarray) else array_namespace(x).ones_like(x)


def _ones_like(y: Any) -> Any:
    if isinstance(y, tuple):
        fields = getattr(type(y), "_fields", None)
        items = [_ones_like(v) for v in y]
        return Tangent[type(y)](**dict(zip(fields, items))) if fields else Tangent[type(y)](
            *items)
    if isinstance(y, np.ndarray) and y.dtype.kind in "fc":
        return np.ones_like(y)
    if is_foreign_array(y) and array_namespace(y).isdtype(
            y.dtype, ("real floating", "complex floating")):
        return array_namespace(y).ones_like(y)
    if isinstance(y, (float, np.floating)):
        return 1.0
    return NoTangent()


def probe(case: Any, seed: int = 0) -> list[tuple[str, str]]:
    """(label, error) for each variant whose rules crash with a raw (non-chainrules) error."""
    rng = np.random.default_rng(seed)
    try:
        args = [_strip(a) for a in case.args(rng, np.dtype("float64"))]
    except Exception:  # a case that cannot build float64 inputs
        return []
    failures = []
    for i, a in enumerate(args):
        if not _is_float(a):
            continue
        for label, v in _variants(a):
            new = list(args)
            new[i] = v
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    case.f(*new, **case.kwargs)
                except Exception:  # the primal refuses this input: skip
                    continue
                try:
                    y, pullback = rrule(case.f, *new, **case.kwargs)
                    bars = pullback(_ones_like(y))
                    for b in bars:
                        unthunk(b)
                    dargs = (NoTangent(), *(_ones(x) if _is_float(x) else NoTangent()
                                            for x in new))
                    frule(dargs, case.f, *new, **case.kwargs)
                except (ChainRulesError, NotImplementedError):
                    continue  # a named refusal
                except Exception as e:  # what the sweep looks for
                    failures.append((f"{case.display_name} arg {i} {label}",
                                     f"{type(e).__name__}: {str(e)[:120]}"))
    return failures


if __name__ == "__main__":  # pragma: no cover - a manual listing
    from chainrules.testing import iter_catalog

    start = time.perf_counter()
    found = []
    n = 0
    for module in sys.argv[1:] or [None]:
        for case in iter_catalog(module):
            if "float64" not in case.dtypes:
                continue
            n += 1
            found += probe(case)
    for label, err in found:
        print(label, "|", err)
    print(f"{len(found)} raw crashes in {n} cases, {time.perf_counter() - start:.1f}s")
