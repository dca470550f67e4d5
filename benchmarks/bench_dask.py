"""A gradient over a dask array larger than a memory limit (issue 27).

``chainrules.ad.grad`` of ``sum(tanh(x @ w) ** 2)`` with respect to ``w``, where ``x`` is
a chunked dask array of ``--factor`` times ``--memory-limit`` bytes, generated chunk by
chunk (never whole in memory), against the hand-written dask gradient
``x.T @ (2 t (1 - t^2))``, ``t = tanh(x @ w)``. Each job runs in a fresh process
(threaded scheduler with one worker, BLAS pinned to one thread) that reports its time
(building the lazy gradient, then ``.compute()``) and its peak resident memory
(``ru_maxrss``) above what it held after a first gradient on a tiny array (imports,
rewriting, rule lookups); the two results must agree. Rounds alternate the jobs; the
table gives medians and the ratios AD / hand-written.

    python benchmarks/bench_dask.py                    # 256 MB limit, x of 512 MB
    python benchmarks/bench_dask.py --memory-limit 64 --factor 4 --rounds 3
    python benchmarks/bench_dask.py --quick            # 32 MB limit, one round
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys, time
import numpy as np, dask, dask.array as da
import chainrules
from chainrules import ad

job, rows, cols, chunk_rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
dask.config.set(scheduler="threads", num_workers=1)


def data():
    # generated per chunk from its block index: never held whole in memory
    def block(block_info=None):
        (i, _), = [block_info[None]["chunk-location"]]
        r = np.random.default_rng(i)
        n = block_info[None]["chunk-shape"][0]
        return r.standard_normal((n, cols)) / np.sqrt(cols)

    return da.map_blocks(block, chunks=((chunk_rows,) * (rows // chunk_rows), (cols,)),
                         dtype=np.float64)


def loss(x, w):
    xp = chainrules.array_namespace(x, w)
    return xp.sum(xp.tanh(x @ w) ** 2)


def hand_gradient(x, w):
    t = da.tanh(x @ w)
    return x.T @ (2.0 * t * (1.0 - t * t))


def gradient(x, w):
    return ad.grad(loss, argnums=1)(x, w) if job == "ad" else hand_gradient(x, w)


x = data()
w = da.from_array(np.linspace(-1.0, 1.0, cols), chunks=cols)
# first-call costs (the modules dask and chainrules import on first use, source
# rewriting, rule lookups) paid on a tiny array; the baseline is the resident memory
# after it
gradient(da.ones((64, cols), chunks=(32, cols)), w).compute()
with open("/proc/self/statm") as f:
    base = int(f.read().split()[1]) * resource.getpagesize() / 1024
t0 = time.perf_counter()
g = gradient(x, w)
t1 = time.perf_counter()
value = g.compute()
t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"job": job, "build_s": t1 - t0, "compute_s": t2 - t1,
                  "peak_mb": (peak - base) / 1024, "value": value.tolist()}))
"""


def _env() -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = "1"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-limit", type=float, default=256.0,
                        help="the memory limit in MB that x exceeds (default 256)")
    parser.add_argument("--factor", type=float, default=2.0,
                        help="x's size as a multiple of the limit (default 2)")
    parser.add_argument("--cols", type=int, default=16)
    parser.add_argument("--chunk-mb", type=float, default=16.0, help="chunk size in MB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="32 MB limit, one round")
    args = parser.parse_args()
    if args.quick:
        args.memory_limit, args.rounds, args.chunk_mb = 32.0, 1, 4.0
    chunk_rows = max(1, int(args.chunk_mb * 2**20 / 8 / args.cols))
    rows = chunk_rows * max(1, round(args.factor * args.memory_limit / args.chunk_mb))
    size_mb = rows * args.cols * 8 / 2**20
    print(f"x: {rows} x {args.cols} float64 = {size_mb:.0f} MB in chunks of "
          f"{chunk_rows} rows ({args.chunk_mb:g} MB); memory limit {args.memory_limit:g} MB")
    results: dict[str, list] = {"ad": [], "hand": []}
    # the job as a file: chainrules.ad reads the source of the functions it rewrites
    job_file = Path(tempfile.mkdtemp()) / "dask_gradient_job.py"
    job_file.write_text(_CHILD)
    for r in range(args.rounds):
        for job in (("ad", "hand") if r % 2 == 0 else ("hand", "ad")):
            out = subprocess.run(
                [sys.executable, str(job_file), job, str(rows), str(args.cols),
                 str(chunk_rows)], capture_output=True, text=True, env=_env(), check=True)
            results[job].append(json.loads(out.stdout.strip().splitlines()[-1]))
    ad_value = results["ad"][0]["value"]
    hand_value = results["hand"][0]["value"]
    import numpy as np

    np.testing.assert_allclose(ad_value, hand_value, rtol=1e-9)
    print(f"{'job':<22}{'build (ms)':>12}{'compute (s)':>13}{'peak RSS (MB)':>15}")
    med = {}
    for job, label in (("ad", "chainrules.ad.grad"), ("hand", "hand-written dask")):
        build = statistics.median(x["build_s"] for x in results[job]) * 1e3
        compute = statistics.median(x["compute_s"] for x in results[job])
        peak = statistics.median(x["peak_mb"] for x in results[job])
        med[job] = (build, compute, peak)
        print(f"{label:<22}{build:>12.1f}{compute:>13.2f}{peak:>15.0f}")
    print(f"ratio AD / hand: time {med['ad'][1] / med['hand'][1]:.2f}x, "
          f"peak memory {med['ad'][2] / max(med['hand'][2], 1e-9):.2f}x; "
          f"both peaks under the {args.memory_limit:g} MB limit: "
          f"{max(med['ad'][2], med['hand'][2]) < args.memory_limit} (x is {size_mb:.0f} MB)")


if __name__ == "__main__":
    main()
