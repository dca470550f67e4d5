"""Compare the reference AD of two source trees (before and after a change) on
`bench_ad`'s small programs.

Each tree's ``chainrules`` runs in its own process (the two cannot share one), and the
processes alternate, round after round, in alternating order, so drift of the machine's
speed falls on both. Each process reports, per program, the best of 7 timings; the
table gives the median over rounds and the ratio old ÷ new (above 1: the new tree is
faster). ``np.sin`` of 10 elements is timed in each process as a control: its ratio
should be 1.00, and how far it is from 1 is the noise.

    git worktree add /tmp/before <commit>      # the old tree
    cp src/chainrules/core/_fastcall*.so /tmp/before/src/chainrules/core/  # its C path
    python benchmarks/ab_ad.py /tmp/before . --rounds 6
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, sys, time
root, bench = sys.argv[1], sys.argv[2]
sys.path[:0] = [root + "/src", bench]
import numpy as np
import chainrules
assert chainrules.__file__.startswith(root), chainrules.__file__
from bench_ad import chain, foo, mse, mse_vec, sum3
from chainrules.ad import grad, jvp

x = np.linspace(0.1, 1, 10)
rng = np.random.default_rng(0)
y, h = rng.standard_normal(30), rng.standard_normal(30)
g_chain, g_vec, g_loop = grad(chain), grad(mse_vec, (0, 1)), grad(mse, (0, 1))
g_sum3, g_foo, a3 = grad(sum3), grad(foo), np.array([1.0, 2.0, 3.0])
programs = {
    "grad chain, 20 calls": (lambda: g_chain(x, 5), 200),
    "grad chain, 120 calls": (lambda: g_chain(x, 30), 20),
    "jvp chain, 120 calls": (lambda: jvp(lambda v: chain(v, 30), (x,), (x,)), 20),
    "grad mse_vec": (lambda: g_vec(y, h), 200),
    "grad mse (loop)": (lambda: g_loop(y, h), 20),
    "grad sum3": (lambda: g_sum3(a3), 200),
    "grad foo": (lambda: g_foo(3.0), 200),
    "control: np.sin": (lambda: np.sin(x), 2000),
}
out = {}
for name, (f, n) in programs.items():
    f()
    best = float("inf")
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    out[name] = best
print(json.dumps(out))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the old source tree (a checkout with src/chainrules)")
    parser.add_argument("new", help="the new source tree")
    parser.add_argument("--rounds", type=int, default=6)
    opts = parser.parse_args()
    bench = os.path.dirname(os.path.abspath(__file__))
    trees = {"old": os.path.abspath(opts.old), "new": os.path.abspath(opts.new)}
    times: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as script:
        script.write(_CHILD)  # (a file, not -c: some launchers drop -c's program text)
    try:
        for r in range(opts.rounds):
            for label in (("old", "new") if r % 2 == 0 else ("new", "old")):
                run = subprocess.run([sys.executable, script.name, trees[label], bench],
                                     capture_output=True, text=True)
                if run.returncode:
                    print(run.stderr, file=sys.stderr)
                    return 1
                times[label].append(json.loads(run.stdout))
    finally:
        os.unlink(script.name)
    print(f"old: {trees['old']}\nnew: {trees['new']}\n{opts.rounds} rounds; medians of "
          f"per-process best times; ratio old / new (above 1: new is faster)")
    print(f"{'':<24}{'old':>11}{'new':>11}{'old/new':>9}")
    for name in times["old"][0]:
        old = statistics.median(t[name] for t in times["old"])
        new = statistics.median(t[name] for t in times["new"])
        print(f"{name:<24}{old * 1e6:>9.1f}µs{new * 1e6:>9.1f}µs{old / new:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
