"""Rule lookup overhead: ``rrule(f, x)`` / ``frule(dargs, f, x)`` vs calling the rule directly.

For a cache hit (a float, a small array), a miss on a function with rules, a miss on a
function without any, and an opt-out; and, as a peer, the same hit through
``functools.singledispatch`` (the standard library's type dispatcher) and through
plum's ``@dispatch`` when plum is installed.

Every statement is timed in short samples (20,000 calls), all statements round by
round, so that a burst of load on this shared machine slows every statement alike
instead of one case; the tables report the median over the rounds. The overhead is
the median of the per-round differences (via the table minus direct), so it is
measured against calls made at the same moment.

A second table prices the boundary checks (``core/_validate.py``) in the same process:
the same hits with the fast cache holding the bare rule (no checks: what a hit cost
before them), the Python checking wrappers, and the wrappers in use (the C ones where
the extension is built), each also with its pullback called.

Run: ``python benchmarks/bench_lookup.py [--quick]`` (or ``python benchmarks/run.py lookup``);
``CHAINRULES_PURE_PYTHON=1`` in the environment measures the pure-Python entry points
instead of the C fast path.
"""

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import functools
import statistics
import sys
import timeit

import numpy as np

from chainrules import NoTangent, frule, rrule, scoped_rules

NUMBER = 20_000
ROUNDS = 61


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


def _singledispatch_peer():
    @functools.singledispatch
    def dispatched(x):
        return None

    dispatched.register(float)(target_rrule)
    dispatched.register(np.ndarray)(target_rrule)
    return dispatched


def _plum_peer():
    try:
        import plum
    except ImportError:
        return None

    @plum.dispatch
    def dispatched(x: float | np.ndarray):
        return x, None

    return dispatched


CASES = [
    # (name, direct statement, statement through the lookup)
    ("rrule hit, float", "target_rrule(x_float)", "rrule(target, x_float)"),
    ("rrule hit, array(3)", "target_rrule(x_arr)", "rrule(target, x_arr)"),
    ("rrule miss, unmatched type", "target_rrule(x_float)", "rrule(target, x_str)"),
    ("rrule miss, no rules at all", "target_rrule(x_float)", "rrule(no_rules, x_float)"),
    ("rrule opt-out", "target_rrule(x_float)", "rrule(target, x_special)"),
    ("frule hit, float", "target_frule(dargs, x_float)", "frule(dargs, target, x_float)"),
    ("frule hit, array(3)", "target_frule(dargs_arr, x_arr)", "frule(dargs_arr, target, x_arr)"),
    ("frule miss, no rules at all", "target_frule(dargs, x_float)",
     "frule(dargs, no_rules, x_float)"),
    ("peer: singledispatch, float", "target_rrule(x_float)", "singledispatched(x_float)"),
    ("peer: singledispatch, array(3)", "target_rrule(x_arr)", "singledispatched(x_arr)"),
]
PLUM_CASES = [
    ("peer: plum, float", "target_rrule(x_float)", "plum_dispatched(x_float)"),
    ("peer: plum, array(3)", "target_rrule(x_arr)", "plum_dispatched(x_arr)"),
]


def _sample(stmts: set, env: dict, rounds: int) -> dict[str, list[float]]:
    """ns per call of each statement, one sample per round, all statements round by round."""
    timers = {s: timeit.Timer(s, globals=env) for s in sorted(stmts)}
    for t in timers.values():  # warm every cache before timing
        t.timeit(1000)
    samples: dict[str, list[float]] = {s: [] for s in timers}
    for _ in range(rounds):
        for s, t in timers.items():
            samples[s].append(t.timeit(NUMBER) / NUMBER * 1e9)
    return samples


def target_bare(x):
    return x


def target_python(x):
    return x


def target_pullback(y_bar):
    return None, y_bar


def target_rrule_pb(x: float | np.ndarray):
    return x, target_pullback


CHECK_CASES = [
    # (name, statement with the bare rule cached, with the Python wrappers, as used)
    ("rrule hit, float", "rrule(target_bare, x_float)", "rrule(target_python, x_float)",
     "rrule(target, x_float)"),
    ("rrule hit + pullback, float", "rrule(target_bare, x_float)[1](1.0)",
     "rrule(target_python, x_float)[1](1.0)", "rrule(target, x_float)[1](1.0)"),
    ("rrule hit + pullback, array(3)", "rrule(target_bare, x_arr)[1](x_arr)",
     "rrule(target_python, x_arr)[1](x_arr)", "rrule(target, x_arr)[1](x_arr)"),
    ("frule hit, float", "frule(dargs, target_bare, x_float)",
     "frule(dargs, target_python, x_float)", "frule(dargs, target, x_float)"),
    ("frule hit, array(3)", "frule(dargs_arr, target_bare, x_arr)",
     "frule(dargs_arr, target_python, x_arr)", "frule(dargs_arr, target, x_arr)"),
]


def check_costs(rounds: int = ROUNDS) -> list[dict]:
    """The hits of `CHECK_CASES`, with the three kinds of fast-cache entry side by side."""
    from chainrules.core import _validate

    with scoped_rules():
        for f in (target, target_bare, target_python):
            rrule.register(f)(target_rrule_pb)
            frule.register(f)(target_frule)
        x_arr = np.ones(3)
        env = dict(rrule=rrule, frule=frule, target=target, target_bare=target_bare,
                   target_python=target_python, x_float=1.0, x_arr=x_arr,
                   dargs=(NoTangent(), 1.0), dargs_arr=(NoTangent(), np.ones(3)))
        for stmt in {c for row in CHECK_CASES for c in row[1:]}:
            eval(stmt, env)  # fills the fast caches
        native, _validate.native = _validate.native, None  # the Python wrappers
        try:
            for key in (float, np.ndarray):
                rrule.table.fast_by_func[target_bare][key] = target_rrule_pb
                frule.table.fast_by_func[target_bare][key] = target_frule
                rrule.table.fast_by_func[target_python][key] = _validate.checked_rrule(
                    target_python, target_rrule_pb, 1)
                frule.table.fast_by_func[target_python][key] = _validate.checked_frule(
                    target_python, target_frule, 1)
        finally:
            _validate.native = native
        samples = _sample({c for row in CHECK_CASES for c in row[1:]}, env, rounds)
    rows = []
    for name, bare, python, used in CHECK_CASES:
        b, p, u = samples[bare], samples[python], samples[used]
        rows.append({
            "case": name,
            "unchecked_ns": statistics.median(b),
            "python_checks_ns": statistics.median(p),
            "checks_ns": statistics.median(u),
            "ratio": statistics.median(y / x for x, y in zip(b, u)),
        })
    return rows


def report_checks(rows: list[dict]) -> None:
    print()
    print("boundary checks: the same hit with the fast cache holding the bare rule, the "
          "Python checking wrappers, and the wrappers in use; ratio = in use / bare")
    print(f"{'case':<31} {'bare':>9} {'Python':>9} {'in use':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['case']:<31} {r['unchecked_ns']:>7.0f}ns {r['python_checks_ns']:>7.0f}ns "
              f"{r['checks_ns']:>7.0f}ns {r['ratio']:>6.2f}")


def main(rounds: int = ROUNDS) -> list[dict]:
    with scoped_rules():
        rrule.register(target)(target_rrule)
        frule.register(target)(target_frule)
        rrule.opt_out(target, Special)
        frule.opt_out(target, Special)
        x_arr = np.ones(3)
        env = dict(
            rrule=rrule, frule=frule, target=target, no_rules=no_rules,
            target_rrule=target_rrule, target_frule=target_frule,
            x_float=1.0, x_arr=x_arr, x_str="s", x_special=x_arr.view(Special),
            dargs=(NoTangent(), 1.0), dargs_arr=(NoTangent(), np.ones(3)),
            singledispatched=_singledispatch_peer(),
            plum_dispatched=_plum_peer(),
        )
        cases = CASES + (PLUM_CASES if env["plum_dispatched"] is not None else [])
        samples = _sample({s for _, d, v in cases for s in (d, v)}, env, rounds)
        rows = []
        for name, direct, via in cases:
            d, v = samples[direct], samples[via]
            rows.append({
                "case": name,
                "direct_ns": statistics.median(d),
                "via_table_ns": statistics.median(v),
                "overhead_ns": statistics.median(b - a for a, b in zip(d, v)),
                "ratio": statistics.median(b / a for a, b in zip(d, v)),
            })
    return rows


def report(rows: list[dict], rounds: int = ROUNDS) -> None:
    entry = ("C fast path" if type(rrule).__name__ == "Entry"
             else "pure-Python entry points")
    print(f"rule lookup overhead, {entry} (medians over {rounds} rounds x {NUMBER} calls; "
          f"Python {sys.version.split()[0]}, NumPy {np.__version__})")
    print(f"{'case':<31} {'direct':>9} {'via lookup':>11} {'overhead':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['case']:<31} {r['direct_ns']:>7.0f}ns {r['via_table_ns']:>9.0f}ns "
              f"{r['overhead_ns']:>7.0f}ns {r['ratio']:>6.2f}")
    print("'miss' and 'opt-out' rows compare a lookup that finds no rule with calling the rule;")
    print("'peer' rows dispatch the same rule function by the argument's type.")


if __name__ == "__main__":
    n = 15 if "--quick" in sys.argv[1:] else ROUNDS
    report(main(n), n)
    report_checks(check_costs(n))
