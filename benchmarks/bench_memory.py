"""Peak memory of a large gradient: the reference AD against hand-written NumPy (issue 27).

``chainrules.ad.grad`` of ``sum(tanh(x @ w) ** 2)`` (``x`` of ``--size`` rows by 10
columns, float64; ``w`` of 10) with respect to ``w`` and with respect to ``(x, w)``,
against the hand-written gradient ``t = tanh(x @ w)``, ``g = 2 t (1 - t^2)``,
``w_bar = x.T @ g`` (and ``x_bar = outer(g, w)``). Each job runs in a fresh process
(BLAS pinned to one thread) that allocates ``x``, runs one gradient on a tiny array
(imports, source rewriting, rule lookups), reads its resident memory (the baseline, to
which it resets the peak where Linux allows), then runs the gradient once and reports
its peak resident memory above the baseline: ``VmHWM`` of ``/proc/self/status``, the
peak of this address space (``getrusage(RUSAGE_SELF).ru_maxrss`` would count the
parent's peak before ``exec`` in a process started from a larger one, such as pytest;
it is the fallback where there is no ``VmHWM``). The AD runs with the C tape and with
the pure-Python tape (``CHAINRULES_PURE_PYTHON=1``). Rounds interleave the jobs; the
table gives medians and the ratio AD / hand-written.

    python benchmarks/bench_memory.py                   # x of 2_000_000 x 10 (153 MB)
    python benchmarks/bench_memory.py --size 400000 --rounds 1   # a quick check (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys
import numpy as np
from chainrules import ad

job, wrt, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
cols = 10


def loss(x, w):
    return np.sum(np.tanh(x @ w) ** 2)


def hand_gradient(x, w):
    t = np.tanh(x @ w)
    g = 2.0 * t * (1.0 - t * t)
    del t
    w_bar = x.T @ g
    return (np.outer(g, w), w_bar) if wrt == "xw" else w_bar


def gradient(x, w):
    if job == "numpy":
        return hand_gradient(x, w)
    return ad.grad(loss, argnums=(0, 1) if wrt == "xw" else 1)(x, w)


w = np.linspace(-1.0, 1.0, cols)
gradient(np.ones((64, cols)), w)  # first-call costs, on a tiny array
x = np.random.default_rng(0).standard_normal((rows, cols)) / np.sqrt(cols)
with open("/proc/self/statm") as f:
    base = int(f.read().split()[1]) * resource.getpagesize() / 1024


def peak_kb():
    # ru_maxrss counts the peak of the process before exec too (a parent's, forked from
    # a large process such as pytest): the peak of this address space, VmHWM, where
    # Linux has it, reset to the current resident memory below
    try:
        with open("/proc/self/status") as f:
            return float(f.read().split("VmHWM:")[1].split()[0])
    except (OSError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


try:  # reset the peak to the current resident memory (Linux 4.0 and later)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
before = peak_kb()
if before > base + 1024:
    raise SystemExit(f"the peak before the gradient ({before} KB) is above the baseline "
                     f"({base:.0f} KB): use a larger --size")
g = gradient(x, w)
peak = peak_kb()
w_bar = g[1] if isinstance(g, tuple) else g
print(json.dumps({"peak_mb": (peak - base) / 1024, "x_mb": x.nbytes / 2**20,
                  "check": float(np.sum(w_bar))}))
"""

JOBS = ("numpy", "ad", "ad_pure")


def run_job(job: str, wrt: str, rows: int) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONPATH=str(ROOT / "src"))
    env.pop("CHAINRULES_PURE_PYTHON", None)
    if job == "ad_pure":
        env["CHAINRULES_PURE_PYTHON"] = "1"
    out = subprocess.run([sys.executable, "-c", _CHILD, job.split("_")[0], wrt, str(rows)],
                         env=env, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{job} ({wrt}) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2_000_000, help="rows of x (10 columns)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    results: dict = {}
    for _ in range(args.rounds):
        for wrt in ("w", "xw"):
            for job in JOBS:  # interleaved: one run of each job per round
                r = run_job(job, wrt, args.size)
                results.setdefault((wrt, job), []).append(r)
    x_mb = results[("w", "numpy")][0]["x_mb"]
    print(f"x: {args.size} x 10 float64 ({x_mb:.0f} MB); peak RSS above the baseline "
          f"(after allocating x), median of {args.rounds}")
    print(f"{'wrt':<6}{'job':<10}{'peak MB':>10}{'ratio':>8}")
    table: dict = {}
    for wrt in ("w", "xw"):
        checks = {job: results[(wrt, job)][0]["check"] for job in JOBS}
        ref = checks["numpy"]
        for job, c in checks.items():
            if abs(c - ref) > 1e-8 * max(1.0, abs(ref)):
                raise SystemExit(f"{job} ({wrt}) disagrees with NumPy: {c} != {ref}")
        base = statistics.median(r["peak_mb"] for r in results[(wrt, "numpy")])
        for job in JOBS:
            peak = statistics.median(r["peak_mb"] for r in results[(wrt, job)])
            ratio = peak / base if base > 0 else float("nan")
            table[(wrt, job)] = (peak, ratio)
            print(f"{wrt:<6}{job:<10}{peak:>10.1f}{ratio:>8.2f}")
    return table


if __name__ == "__main__":
    main()
