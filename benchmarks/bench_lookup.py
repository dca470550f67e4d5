"""Rule lookup overhead: ``rrule(f, x)`` / ``frule(dargs, f, x)`` vs calling the rule directly.

For a cache hit (a float, a small array), a miss on a function with rules, a miss on a
function without any, and an opt-out. Timings are interleaved (direct, via the table,
direct, ...) and the medians compared, so drifting machine load affects both alike.

Run: ``python benchmarks/bench_lookup.py`` (or ``python benchmarks/run.py lookup``).
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import statistics
import sys
import timeit

import numpy as np

from chainrules import NoTangent, frule, rrule, scoped_rules

NUMBER = 200_000
REPEATS = 15


def target(x):
    return x


def no_rules(x):
    return x


def target_rrule(x: float | np.ndarray):
    return x, None


def target_frule(dargs, x: float | np.ndarray):
    return x, None


class Special(np.ndarray):
    pass


def per_call_ns(stmt: str, env: dict) -> list[float]:
    timer = timeit.Timer(stmt, globals=env)
    return [t / NUMBER * 1e9 for t in timer.repeat(repeat=1, number=NUMBER)]


def compare(direct: str, via: str, env: dict) -> tuple[float, float]:
    d, v = [], []
    for _ in range(REPEATS):
        d += per_call_ns(direct, env)
        v += per_call_ns(via, env)
    return statistics.median(d), statistics.median(v)


def main() -> list[dict]:
    with scoped_rules():
        rrule.register(target)(target_rrule)
        frule.register(target)(target_frule)
        rrule.opt_out(target, Special)
        frule.opt_out(target, Special)
        x_float, x_arr = 1.0, np.ones(3)
        env = dict(
            rrule=rrule, frule=frule, target=target, no_rules=no_rules,
            target_rrule=target_rrule, target_frule=target_frule,
            x_float=x_float, x_arr=x_arr, x_str="s", x_special=x_arr.view(Special),
            dargs=(NoTangent(), 1.0),
        )
        cases = [
            ("rrule hit, float", "target_rrule(x_float)", "rrule(target, x_float)"),
            ("rrule hit, array(3)", "target_rrule(x_arr)", "rrule(target, x_arr)"),
            ("rrule miss, unmatched type", "target_rrule(x_float)", "rrule(target, x_str)"),
            ("rrule miss, no rules at all", "target_rrule(x_float)", "rrule(no_rules, x_float)"),
            ("rrule opt-out", "target_rrule(x_float)", "rrule(target, x_special)"),
            ("frule hit, float", "target_frule(dargs, x_float)", "frule(dargs, target, x_float)"),
            ("frule hit, array(3)", "target_frule(dargs, x_arr)", "frule(dargs, target, x_arr)"),
            ("frule miss, no rules at all", "target_frule(dargs, x_float)",
             "frule(dargs, no_rules, x_float)"),
        ]
        rows = []
        for name, direct, via in cases:
            d, v = compare(direct, via, env)
            rows.append({"case": name, "direct_ns": d, "via_table_ns": v,
                         "overhead_ns": v - d, "ratio": v / d})
    return rows


def report(rows: list[dict]) -> None:
    print(f"rule lookup overhead (median of {REPEATS} interleaved repeats x {NUMBER} calls; "
          f"Python {sys.version.split()[0]}, NumPy {np.__version__})")
    print(f"{'case':<30} {'direct':>9} {'via table':>10} {'overhead':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['case']:<30} {r['direct_ns']:>7.0f}ns {r['via_table_ns']:>8.0f}ns "
              f"{r['overhead_ns']:>7.0f}ns {r['ratio']:>6.2f}")
    print("'miss' and 'opt-out' rows compare a lookup that finds no rule with calling the rule.")


if __name__ == "__main__":
    report(main())
