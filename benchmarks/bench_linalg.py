"""Linear-algebra pullbacks reuse the forward factorization.

For ``solve``, ``slogdet`` and ``scipy.linalg.solve_sylvester`` at n = 100 and
500, times (medians) the
pullback of ``rrule(f, A, ...)`` — every cotangent unthunked — against calling
the primal again, and against the pullback one would write without the stored
factors (a fresh solve with ``A^H``), and the rrule's forward pass against the
primal (it factors once and keeps the factors: LU, or the Schur forms of
Bartels-Stewart). The ratio ``again / pullback``
above 1 means the pullback costs less than one more forward call: it does O(n^2)
work per right-hand side on the stored LU factors instead of O(n^3).

One thread (OMP/MKL/OpenBLAS, set before NumPy is imported, re-executing the
script if needed); the implementations are interleaved round by round so
drifting machine load hits all alike.

Run: ``python benchmarks/bench_linalg.py [--quick]``.
"""

import os
import sys

_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
if any(os.environ.get(k) != v for k, v in _ENV.items()):
    os.environ.update(_ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import statistics  # (E402 is ignored for benchmarks: the environment comes first)
import time
from collections.abc import Callable

import numpy as np

from chainrules import rrule, unthunk


def _median_times(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def _unthunk_all(bars: tuple) -> None:
    for b in bars:
        unthunk(b)


def bench_solve(n: int, rounds: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)) + n**0.5 * np.eye(n)
    b = rng.standard_normal(n)
    y, pullback = rrule(np.linalg.solve, a, b)
    y_bar = rng.standard_normal(n)

    def naive_pullback() -> None:
        g = np.linalg.solve(a.conj().T, y_bar)
        np.outer(-g, y.conj())

    return _median_times({
        "pullback (stored LU)": lambda: _unthunk_all(pullback(y_bar)),
        "pullback without stored LU": naive_pullback,
        "np.linalg.solve again": lambda: np.linalg.solve(a, b),
        "rrule forward (factor + solve)": lambda: rrule(np.linalg.solve, a, b),
    }, rounds)


def bench_slogdet(n: int, rounds: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)) + n**0.5 * np.eye(n)
    _y, pullback = rrule(np.linalg.slogdet, a)
    y_bar = (0.0, 1.0)
    return _median_times({
        "pullback (stored LU)": lambda: _unthunk_all(pullback(y_bar)),
        "pullback without stored LU": lambda: np.linalg.inv(a).T,
        "np.linalg.slogdet again": lambda: np.linalg.slogdet(a),
        "rrule forward (slogdet + factor)": lambda: rrule(np.linalg.slogdet, a),
    }, rounds)


def bench_sylvester(n: int, rounds: int) -> dict[str, float]:
    import scipy.linalg as sla

    rng = np.random.default_rng(2)
    a = rng.standard_normal((n, n)) + n**0.5 * np.eye(n)
    b = rng.standard_normal((n, n)) + n**0.5 * np.eye(n)
    q = rng.standard_normal((n, n))
    y, pullback = rrule(sla.solve_sylvester, a, b, q)
    y_bar = rng.standard_normal((n, n))

    def naive_pullback() -> None:
        g = sla.solve_sylvester(a.conj().T, b.conj().T, y_bar)
        -(g @ y.conj().T), -(y.conj().T @ g)

    return _median_times({
        "pullback (stored Schur forms)": lambda: _unthunk_all(pullback(y_bar)),
        "pullback without stored forms": naive_pullback,
        "sla.solve_sylvester again": lambda: sla.solve_sylvester(a, b, q),
        "rrule forward (Schur + solve)": lambda: rrule(sla.solve_sylvester, a, b, q),
    }, rounds)


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = (100, 300) if quick else (100, 500)
    print(f"numpy {np.__version__}, one thread; medians in ms")
    for name, bench in (("solve(A, b)", bench_solve), ("slogdet(A)", bench_slogdet),
                        ("solve_sylvester(A, B, Q)", bench_sylvester)):
        for n in sizes:
            rounds = 30 if n <= 100 else (5 if quick else 15)
            t = bench(n, rounds)
            pb = next(v for k, v in t.items() if k.startswith("pullback (stored"))
            again = next(v for k, v in t.items() if k.endswith("again"))
            naive = next(v for k, v in t.items() if k.startswith("pullback without"))
            print(f"\n{name}, n = {n} ({rounds} rounds)")
            for k, v in t.items():
                print(f"  {k:32s} {v * 1e3:9.3f} ms")
            print(f"  ratio  primal again / pullback       {again / pb:6.2f}")
            print(f"  ratio  naive pullback / pullback     {naive / pb:6.2f}")
            fwd = next(v for k, v in t.items() if k.startswith("rrule forward"))
            print(f"  ratio  rrule forward / primal        {fwd / again:6.2f}")


if __name__ == "__main__":
    main()
