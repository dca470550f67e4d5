"""What the AD benchmarks share: interleaved rounds, medians, paired ratios, formatting.

Every benchmark here reports medians and the median over rounds of the paired ratio
impl/ours, taken in one process at the same moment, so that load drifting on a shared
machine hits every implementation alike.
"""

import statistics
import time
from collections.abc import Callable

import numpy as np


def per_call(fn: Callable[[], object], min_time: float) -> tuple[int, float]:
    """Calls per batch so a batch takes about ``min_time``; and one call's time."""
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    n = max(1, int(min_time / max(one, 1e-7)))
    return n, one


def interleave(impls: dict[str, Callable[[], object]], batches: dict[str, int],
               rounds: int, clock: Callable[[], float] = time.perf_counter
               ) -> tuple[dict, dict]:
    """Each implementation runs one batch per round, in a rotating order. Returns the
    median time per call and, per implementation, the median over rounds of its time
    divided by ours (``impls["ours"]``) in the same round: paired, so machine load that
    drifts between rounds cancels out. ``clock``: ``time.perf_counter`` (wall) or
    ``time.process_time`` (CPU time of this process, all its threads: what to read on
    an overloaded machine, where wall time is mostly waiting for a core)."""
    names = list(impls)
    times: dict[str, list[float]] = {name: [] for name in impls}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            fn, n = impls[name], batches[name]
            t0 = clock()
            for _ in range(n):
                fn()
            times[name].append((clock() - t0) / n)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    ratios = {name: statistics.median(t / o for t, o in zip(ts, times["ours"]))
              for name, ts in times.items()}
    return medians, ratios


def measure(impls: dict[str, Callable[[], object]], rounds: int, min_time: float,
            clock: Callable[[], float] = time.perf_counter) -> tuple[dict, dict]:
    """``interleave`` after one warm-up call each (compilation, caches), with batches
    sized so each takes about ``min_time``."""
    batches = {}
    for name, fn in impls.items():
        fn()
        batches[name] = per_call(fn, min_time)[0]
    return interleave(impls, batches, rounds, clock)


def close(a, b, rtol: float = 1e-7, atol: float = 1e-10) -> bool:
    """Whether two results (arrays, numbers, or tuples of them) agree."""
    if isinstance(a, tuple):
        return len(a) == len(b) and all(close(x, y, rtol, atol) for x, y in zip(a, b))
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol,
                       atol=atol)


def fmt(t: float) -> str:
    if t >= 1.0:
        return f"{t:8.2f} s "
    if t >= 1e-3:
        return f"{t * 1e3:8.2f} ms"
    return f"{t * 1e6:8.1f} µs"
