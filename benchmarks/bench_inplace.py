"""In-place code under the reference AD costs what the same program written out of
place costs.

Two programs, each written twice and differentiated with ``chainrules.ad.grad``:

- ``loop``: ``out[i] = sin(x[i]) * x[i]`` for i < n (a preallocated ``np.empty(n)``
  filled element by element, then ``sum(out ** 2)``), against the same loop collecting
  the elements in a list and ``np.stack``-ing them (n = 10^4). A write that copied the
  array would make the in-place loop O(n^2).
- ``stencil``: an explicit 2-D heat-equation time stepper on a 64 x 64 grid, 50 steps,
  ``u[1:-1, 1:-1] += r * laplacian(u)`` against ``u = u + r * pad(laplacian(u))``.

Reports medians and the paired ratio in-place / out-of-place (target <= 1.5), one
thread, interleaved rounds (``_bench_harness``), and checks both give the same
gradient.

Run: ``python benchmarks/bench_inplace.py [--quick]``.
"""

import os
import sys

_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
if any(os.environ.get(k) != v for k, v in _ENV.items()):
    os.environ.update(_ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # (E402 is ignored for benchmarks: the environment comes first)

from _bench_harness import close, fmt, measure
from chainrules.ad import grad


def loop_in_place(x):
    out = np.empty(len(x))
    for i in range(len(x)):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out ** 2)


def loop_out_of_place(x):
    items = []
    for i in range(len(x)):
        items.append(np.sin(x[i]) * x[i])
    return np.sum(np.stack(items) ** 2)


def stencil_in_place(u0, steps=50, r=0.2):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] += r * lap
    return np.sum(u ** 2)


def stencil_out_of_place(u0, steps=50, r=0.2):
    u = u0
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u = u + r * np.pad(lap, 1)
    return np.sum(u ** 2)


def main() -> None:
    quick = "--quick" in sys.argv
    rounds = 3 if quick else 7
    rng = np.random.default_rng(0)
    cases = {
        "loop n=10^4": (loop_in_place, loop_out_of_place, rng.standard_normal(10_000)),
        "stencil 64x64, 50 steps": (stencil_in_place, stencil_out_of_place,
                                    rng.standard_normal((64, 64))),
    }
    print(f"{'program':26} {'in place':>10} {'out of place':>13} {'ratio':>7}")
    for name, (inplace, outplace, x) in cases.items():
        g_in, g_out = grad(inplace)(x), grad(outplace)(x)
        if not close(g_in, g_out):
            raise SystemExit(f"{name}: the two programs' gradients differ")
        medians, ratios = measure({"ours": lambda f=inplace, x=x: grad(f)(x),
                                   "out": lambda f=outplace, x=x: grad(f)(x)},
                                  rounds=rounds, min_time=0.2 if quick else 0.5)
        print(f"{name:26} {fmt(medians['ours']):>10} {fmt(medians['out']):>13} "
              f"{1.0 / ratios['out']:7.2f}")


if __name__ == "__main__":
    main()
