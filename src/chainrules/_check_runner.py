"""Run the catalog cases of ``python -m chainrules check``, in this process or in workers.

A run is one (case, dtype, mode) of the catalog. With ``jobs > 1`` the runs go to
worker processes started with "spawn" (nothing is inherited but what is sent, so the
runner behaves the same on every platform and next to multithreaded libraries). A
worker loads the rules and the catalog once, is sent where each case is (its case
module and row) and returns the `CaseResult`. Every run is seeded by itself
(``run_case(..., seed=seed)``), so results do not depend on which worker runs what, or
in which order; they come back in the order of the runs.

Both ways run with one BLAS thread (when ``threadpoolctl`` is installed): the catalog's
matrices are tiny, and a BLAS thread pool only adds synchronisation, which on a
loaded machine made each small LAPACK call ten times slower.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

_worker_limits: Any = None


def load_all_rules() -> None:
    """The rule set, and the AD's higher-order rules (map, apply_along_axis, ...)."""
    import chainrules  # registers the rule set
    import chainrules.ad  # noqa: F401 -- registers the higher-order rules


def catalog_origins() -> dict[int, tuple[str, int]]:
    """``id(case) -> (case module, row)`` for the catalog's cases."""
    from chainrules.testing._cases import _catalog_rows

    return {id(case): (module, k) for module, k, case in _catalog_rows()}


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit BLAS (and OpenMP) to one thread inside the block, when threadpoolctl is there."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1):
        yield


def resolve_jobs(jobs: int) -> int:
    """``jobs`` worker processes; 0 means one per CPU this process may use."""
    if jobs > 0:
        return jobs
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def all_in_catalog(runs: Sequence[tuple]) -> bool:
    """Whether a worker process can find every run's case (a row of a case module)."""
    origins = catalog_origins()
    return all(id(run[0]) in origins for run in runs)


def run_all(runs: Sequence[tuple], seed: int | Sequence[int], jobs: int,
            on_result: Callable[[int, Any], None]) -> list:
    """The `CaseResult` of every run ``(case, dtype, mode)``, in the order of ``runs``.

    ``seed`` is the seed of every run, or one seed per run (``check --seeds``).
    ``on_result(position, result)`` is called as each run finishes (in completion
    order when ``jobs > 1``), for the progress bar.
    """
    from chainrules.testing import run_case
    from chainrules.testing._memo import sharing

    seeds = [seed] * len(runs) if isinstance(seed, int) else list(seed)
    results: list = [None] * len(runs)
    if jobs <= 1 or len(runs) <= 1:
        with one_blas_thread(), sharing():
            for pos, (case, dtype, mode) in enumerate(runs):
                results[pos] = run_case(case, dtype, mode, seed=seeds[pos])
                on_result(pos, results[pos])
        return results
    import multiprocessing

    origins = catalog_origins()
    sent = []
    for (case, dtype, mode), run_seed in zip(runs, seeds):
        origin = origins.get(id(case))
        if origin is None:
            raise RuntimeError(
                f"check -j: case {case.display_name!r} is not a row of a module in "
                "chainrules.testing.cases, so a worker process cannot find it; "
                "run it with -j 1.")
        sent.append((*origin, case.display_name, dtype, mode, run_seed))
    chunks = _chunks([(id(case), dtype, run_seed)
                      for (case, dtype, _), run_seed in zip(runs, seeds)], jobs)
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(chunks)),
                               mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker)
    try:
        futures = [pool.submit(_run_chunk, [(pos, *sent[pos]) for pos in chunk])
                   for chunk in chunks]
        # (as_completed waits on each future once; a loop of wait(FIRST_COMPLETED) over
        # the pending set costs O(chunks) per chunk: half a core in the parent for the
        # 8,000 chunks of a ten-seed sweep)
        for future in as_completed(futures):
            for pos, result in future.result():
                results[pos] = result
                on_result(pos, result)
    except BaseException:
        # a worker's error or Ctrl-C: stop now rather than after the queued runs
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return results


def _chunks(groups: Sequence, jobs: int) -> list[range]:
    """Consecutive runs in chunks small enough to balance the load (a case's runs
    cost alike, cases do not) and large enough that sending them costs little.

    ``groups[pos]`` names the inputs of run ``pos``: consecutive runs of one group (a
    case's frule and rrule at one dtype and seed) stay in one chunk, so that one worker
    runs them one after the other and they share their finite differences."""
    n = len(groups)
    size = max(1, min(16, n // (jobs * 8)))
    chunks: list[range] = []
    start = 0
    while start < n:
        end = min(start + size, n)
        while end < n and groups[end] == groups[end - 1]:
            end += 1
        chunks.append(range(start, end))
        start = end
    return chunks


_parent = 0  # the pid of the check that started this worker; 0 outside a worker


def _init_worker() -> None:
    global _worker_limits, _parent
    _parent = os.getppid()
    from chainrules.testing._cases import _catalog_rows

    load_all_rules()
    # The whole catalog, as in the parent: a name can depend on what is imported
    # (numpy.sinc is named scipy.special.sinc once SciPy re-exports it), and the BLAS
    # limit below reaches only the libraries loaded by then (SciPy has its own BLAS).
    for _ in _catalog_rows():
        pass
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        pass
    else:
        _worker_limits = threadpool_limits(limits=1)  # for the worker's whole life


def _run_chunk(chunk: list[tuple[int, str, int, str, str, str, int]]) -> list:
    from chainrules.testing._memo import sharing

    with sharing():
        return [_run_one(*run) for run in chunk]


def _run_one(pos: int, module: str, k: int, name: str, dtype: str, mode: str,
             seed: int) -> tuple:
    from chainrules.testing import run_case

    if _parent and os.getppid() != _parent:
        # the check was killed (SIGTERM, SIGKILL): do not run on as an orphan
        os._exit(1)
    table = getattr(importlib.import_module(module), "CASES", [])
    case = table[k] if k < len(table) else None
    if case is None or case.display_name != name:
        raise RuntimeError(
            f"check -j: row {k} of {module}.CASES in a worker is not {name!r} as in "
            "the parent process; a catalog that changes at run time can only be "
            "checked with -j 1.")
    return pos, run_case(case, dtype, mode, seed=seed)
