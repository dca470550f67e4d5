"""``python -m chainrules``: check every rule against finite differences, and list coverage.

``check`` runs every case of the rule-case catalog (``chainrules.testing.cases``)
through ``test_frule`` / ``test_rrule`` and prints a table per namespace; it exits
non-zero when any run fails. Large runs use one worker process per CPU unless
``-j N`` says otherwise (``-j 1``: serial; the results are the same).
``check --seeds 0-99`` runs every case once per seed, to find tolerances that fail
only for some inputs (each failure names its seed; ``--seed N`` repeats it).
``coverage NAMESPACE`` compares the public functions
of a namespace with the registered rules and lists those without one; a
distribution object (``scipy.stats.norm``) is listed as its methods (``norm.logpdf``).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import re
import sys
import time
import types
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from chainrules._check_runner import load_all_rules as _load_all_rules
from chainrules._check_runner import resolve_jobs
from chainrules._naming import (
    NAMESPACES,
    REPORT_ROWS,
    namespace_and_name,
    qualified_name,
    report_row,
)

_MODES = ("frule", "rrule")


@dataclass
class _Row:
    functions: set = field(default_factory=set)
    tested: set = field(default_factory=set)
    frule: set = field(default_factory=set)
    rrule: set = field(default_factory=set)
    non_differentiable: set = field(default_factory=set)
    runs: int = 0
    passed: int = 0
    failed: int = 0
    xfail: int = 0
    seconds: float = 0.0
    # --order 2: status -> count of the second-order checks
    second: dict = field(default_factory=lambda: defaultdict(int))


def _group(f: Any) -> tuple[str, str]:
    """(namespace, name) for the tables, as users know the function: a catalog
    wrapper (a gauge-invariant ``svd``, say) counts for the function it tests (its
    ``tests`` attribute); chainrules' own helpers share the namespace ``chainrules``.
    The table row is ``report_row(namespace)``."""
    target = getattr(f, "tests", None)
    if target is not None and callable(target):
        return _group(target)
    ns, name = namespace_and_name(f)
    if ns.startswith("chainrules.testing"):
        return "chainrules.testing", name
    if ns.startswith("chainrules"):
        return "chainrules", name
    return ns, name


def _key(f: Any) -> str:
    """The name a function is counted under, e.g. ``numpy.sin``."""
    return "{}.{}".format(*_group(f))


def _known_namespaces(cases: list) -> set[str]:
    from chainrules import frule, rrule

    known: set[str] = set(NAMESPACES)
    known.update(_group(c.f)[0] for c in cases)
    for table in (rrule, frule):
        known.update(_group(i.function)[0] for i in table.registered()
                     if i.target == "function")
    return known | {report_row(ns) for ns in known}


def _unknown_namespace_error(wanted: str, known: set[str]) -> str:
    close = difflib.get_close_matches(wanted, sorted(known), n=3)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    # (the table's row names are accepted too, but each namespace is listed once, by the
    # name one types)
    listed = sorted(ns for ns in known if ns not in REPORT_ROWS.values())
    return (f"unknown namespace {wanted!r}: no rule or catalog case is in it.{hint} "
            f"Namespaces with rules: {', '.join(listed)}.")


def _in_namespace(ns: str, wanted: str | None) -> bool:
    """Whether ``--namespace wanted`` selects namespace ``ns`` (by its name, a parent's
    name, or its table row's name)."""
    return (wanted is None or ns == wanted or ns.startswith(wanted + ".")
            or report_row(ns) == wanted)


def _registry_rows(wanted: str | None, only: set | None = None) -> dict[str, _Row]:
    from chainrules import frule, rrule

    rows: dict[str, _Row] = defaultdict(_Row)
    for table, attr in ((rrule, "rrule"), (frule, "frule")):
        for info in table.registered():
            if info.target != "function" or info.kind == "opt_out":
                continue
            ns, name = _group(info.function)
            if not _in_namespace(ns, wanted):
                continue
            if only is not None and f"{ns}.{name}" not in only:
                continue
            row = rows[report_row(ns)]
            key = f"{ns}.{name}"
            if info.kind == "non_differentiable":
                row.non_differentiable.add(key)
            else:
                row.functions.add(key)
                getattr(row, attr).add(key)
    return rows


class _Progress:
    """A one-line progress bar on a terminal; sparse lines otherwise."""

    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.enabled = enabled
        self.tty = enabled and stream.isatty()
        self.done = 0
        self.failed = 0
        self.last_line = -1
        self.start = time.perf_counter()

    def eta(self) -> str:
        """The time left at the pace so far, e.g. ``ETA 1m05s``."""
        if not self.done:
            return "ETA ?"
        left = (time.perf_counter() - self.start) / self.done * (self.total - self.done)
        minutes, seconds = divmod(round(left), 60)
        return f"ETA {minutes}m{seconds:02d}s" if minutes else f"ETA {seconds}s"

    def step(self, label: str, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        if not self.enabled:
            return
        frac = self.done / self.total
        if self.tty:
            width = 30
            bar = "#" * int(frac * width)
            self.stream.write(
                f"\r[{bar:<{width}}] {self.done}/{self.total} "
                f"failed {self.failed}  {self.eta():<11} {label[:40]:<40}"
            )
            self.stream.flush()
        else:
            tenth = int(frac * 10)
            if tenth != self.last_line:
                self.last_line = tenth
                self.stream.write(
                    f"  {int(frac * 100):3d}%  {self.done}/{self.total} runs, "
                    f"{self.failed} failed, {self.eta()}\n"
                )
                self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _check(args: argparse.Namespace) -> int:
    _load_all_rules()
    from chainrules._check_runner import run_all
    from chainrules.testing import iter_catalog

    catalog = list(iter_catalog())
    if args.namespace:
        known = _known_namespaces(catalog)
        if not any(_in_namespace(ns, args.namespace) for ns in known):
            print(_unknown_namespace_error(args.namespace, known), file=sys.stderr)
            return 2
    cases = []
    for case in catalog:
        ns, _ = _group(case.f)
        if not _in_namespace(ns, args.namespace):
            continue
        if args.function and args.function not in (qualified_name(case.f), case.display_name,
                                                   _key(case.f)):
            continue
        cases.append(case)
    if args.function and not cases:
        where = f" in namespace {args.namespace!r}" if args.namespace else ""
        print(f"no case in the catalog tests {args.function!r}{where}; names look like "
              f"'numpy.sin' (see `python -m chainrules coverage numpy`)", file=sys.stderr)
        return 2
    dtypes = args.dtype or None
    modes = [args.mode] if args.mode else list(_MODES)
    # a case's frule and rrule at one dtype and seed run one after the other: they share
    # their finite differences (chainrules.testing._memo)
    seeds = args.seeds or [args.seed]
    pairs = [((c, d, m), seed) for c in cases for d in c.dtypes
             if dtypes is None or d in dtypes for seed in seeds
             for m in modes if getattr(c, m)]
    runs = [run for run, _ in pairs]
    run_seeds = [seed for _, seed in pairs]

    only = {_key(c.f) for c in cases} if args.function else None
    rows = _registry_rows(args.namespace, only)
    progress = _Progress(len(runs), sys.stderr, enabled=not args.json and not args.quiet)
    results = []
    start = time.perf_counter()

    def step(pos: int, result: Any) -> None:
        case, dtype, mode = runs[pos]
        progress.step(f"{case.display_name} {dtype} {mode}", result.status == "failed")

    outcomes = run_all(runs, run_seeds, _workers(args.jobs, runs), step)
    for (case, dtype, mode), run_seed, result in zip(runs, run_seeds, outcomes):
        key = _key(case.f)
        row = rows[report_row(_group(case.f)[0])]
        row.tested.add(key)
        row.runs += 1
        row.seconds += result.seconds
        if result.status == "passed":
            row.passed += 1
        elif result.status == "xfail":
            row.xfail += 1
        elif result.status == "failed":
            row.failed += 1
        results.append({
            "case": case.display_name, "function": key, "dtype": dtype, "mode": mode,
            "status": result.status, "message": result.message,
            "primal_calls": result.primal_calls, "seconds": round(result.seconds, 4),
            "draws": result.draws,
            **({"seed": run_seed} if args.seeds else {}),
        })
    progress.close()
    second = _check_second_order(cases, rows, args) if args.order >= 2 else []
    total_seconds = time.perf_counter() - start
    failed = [r for r in results if r["status"] == "failed"]
    failed += [r for r in second if r["status"] == "failed"]

    if args.json:
        summary = {
            ns: {
                "functions": len(row.functions), "frule": len(row.frule),
                "rrule": len(row.rrule), "both": len(row.frule & row.rrule),
                "non_differentiable": len(row.non_differentiable),
                "untested": sorted(row.functions - row.tested),
                "runs": row.runs, "passed": row.passed, "failed": row.failed,
                "xfail": row.xfail, "seconds": round(row.seconds, 3),
                **({"second_order": dict(row.second)} if args.order >= 2 else {}),
            }
            for ns, row in _ordered(rows)
        }
        json.dump({"namespaces": summary, "results": results + second,
                   "failed": len(failed), "seconds": round(total_seconds, 3)},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_table(rows, total_seconds, args.order)
        if args.verbose:
            for ns, row in _ordered(rows):
                untested = sorted(row.functions - row.tested)
                if untested:
                    print(f"\n{ns}: rules without a catalog case ({len(untested)}): "
                          f"{', '.join(untested)}")
        for r in failed[: args.max_failures]:
            seed = f", seed {r['seed']}" if "seed" in r else ""
            print(f"\nFAILED {r['case']} [{r['dtype']}, {r['mode']}{seed}]\n"
                  f"{_indent(r['message'])}")
        errors = [r for r in second if r["status"] == "error"]
        if args.verbose:
            for r in errors:
                print(f"\nerror {r['case']} [second order]\n{_indent(r['message'], 3)}")
        if second:
            counts = {k: sum(r["status"] == k for r in second)
                      for k in ("passed", "failed", "error", "xfail", "skipped")}
            print("\nsecond order: " + ", ".join(f"{v} {k}" for k, v in counts.items())
                  + (" (errors: see --verbose)" if errors and not args.verbose else ""))
        if len(failed) > args.max_failures:
            print(f"\n... and {len(failed) - args.max_failures} more failures "
                  f"(--max-failures, or --json for all)")
        skipped = [r for r in results if r["status"] == "skipped"]
        if args.verbose:
            for r in skipped:
                print(f"\nskipped {r['case']} [{r['dtype']}, {r['mode']}]: {r['message']}")
        redrawn = [r for r in results if r["draws"] > 1 and r["status"] != "failed"]
        if args.verbose:
            for r in redrawn:
                print(f"\nredrawn {r['case']} [{r['dtype']}, {r['mode']}]\n"
                      f"{_indent(r['message'])}")
        also = f", {len(skipped)} skipped (see --verbose)" if skipped else ""
        if redrawn:
            also += (f", {len(redrawn)} at inputs drawn again where finite differences "
                     "did not settle the first (see --verbose)")
        print(f"\n{len(failed)} failed, {sum(r['status'] == 'passed' for r in results)} passed, "
              f"{sum(r['status'] == 'xfail' for r in results)} xfailed{also} "
              f"in {total_seconds:.1f}s")
    return 1 if failed else 0


def _check_second_order(cases: list, rows: dict[str, _Row],
                        args: argparse.Namespace) -> list[dict]:
    """``--order 2``: a Hessian-vector product per case against differences of the
    gradient (see ``chainrules._order2``); counts go to the table's last column."""
    from chainrules._order2 import check_second_order

    progress = _Progress(len(cases), sys.stderr, enabled=not args.json and not args.quiet)
    out = []
    for case in cases:
        result = check_second_order(case, seed=args.seed)
        rows[report_row(_group(case.f)[0])].second[result.status] += 1
        out.append({"case": case.display_name, "function": _key(case.f),
                    "dtype": "float64", "mode": "hvp", "status": result.status,
                    "message": result.message, "primal_calls": 0,
                    "seconds": round(result.seconds, 4)})
        progress.step(f"{case.display_name} second order", result.status == "failed")
    progress.close()
    return out


def _second_cell(counts: dict) -> str:
    """passed/run (failed, errors) of the second-order checks of one row."""
    run = sum(v for k, v in counts.items() if k != "skipped")
    cell = f"{counts.get('passed', 0)}/{run}"
    if counts.get("failed"):
        cell += f" {counts['failed']}F"
    if counts.get("error"):
        cell += f" {counts['error']}E"
    return cell


def _ordered(rows: dict[str, _Row]) -> list[tuple[str, _Row]]:
    order: dict[str, int] = {}
    for ns in (*NAMESPACES, *REPORT_ROWS):
        order.setdefault(report_row(ns), len(order))
    return sorted(rows.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))


def _indent(text: str, limit: int = 25) -> str:
    lines = text.splitlines()
    if len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more lines)"]
    return "\n".join(f"    {line}" for line in lines)


def _print_table(rows: dict[str, _Row], seconds: float, order: int = 1) -> None:
    header: tuple = ("namespace", "functions", "frule", "rrule", "non-diff", "untested",
                     "runs", "passed", "failed", "xfail", "time")
    table = []
    total = _Row()
    for ns, row in _ordered(rows):
        untested = len(row.functions - row.tested)
        table.append((ns, len(row.functions), len(row.frule), len(row.rrule),
                      len(row.non_differentiable), untested, row.runs, row.passed,
                      row.failed, row.xfail, f"{row.seconds:.1f}s")
                     + ((_second_cell(row.second),) if order >= 2 else ()))
        for k, v in row.second.items():
            total.second[k] += v
        for attr in ("functions", "tested", "frule", "rrule", "non_differentiable"):
            getattr(total, attr).update(getattr(row, attr))
        total.runs += row.runs
        total.passed += row.passed
        total.failed += row.failed
        total.xfail += row.xfail
    table.append(("total", len(total.functions), len(total.frule), len(total.rrule),
                  len(total.non_differentiable), len(total.functions - total.tested),
                  total.runs, total.passed, total.failed, total.xfail, f"{seconds:.1f}s")
                 + ((_second_cell(total.second),) if order >= 2 else ()))
    if order >= 2:
        header = (*header, "2nd order")
    widths = [max(len(str(r[i])) for r in [header, *table]) for i in range(len(header))]

    def fmt(r: Sequence[Any]) -> str:
        return "  ".join(str(v).ljust(widths[i]) if i == 0 else str(v).rjust(widths[i])
                         for i, v in enumerate(r))

    print(fmt(header))
    print("  ".join("-" * w for w in widths))
    for r in table[:-1]:
        print(fmt(r))
    print("  ".join("-" * w for w in widths))
    print(fmt(table[-1]))


# The methods of a distribution object (scipy.stats.norm, a norm_gen instance) listed
# as functions of their own: norm.logpdf, norm.cdf, ...
_DISTRIBUTION_METHODS = ("logpdf", "pdf", "logpmf", "pmf", "logcdf", "cdf", "logsf", "sf",
                         "ppf", "isf")


def _is_distribution(obj: Any) -> bool:
    return any(isinstance(getattr(type(obj), m, None), types.FunctionType)
               for m in ("logpdf", "logpmf"))


def _public_functions(namespace: str, with_rules: set | None = None) -> dict[str, Any]:
    """The public callables of a namespace: functions, and the classes that have rules
    (constructors such as ``float`` or ``zip``, which ``check`` counts too)."""
    module = importlib.import_module(namespace)
    out = {}
    for attr in sorted(dir(module)):
        if attr.startswith("_"):
            continue
        obj = getattr(module, attr)
        if not callable(obj) or type(obj).__name__ == "module":
            continue
        if isinstance(obj, type) and (with_rules is None or id(obj) not in with_rules):
            continue
        if _is_distribution(obj):
            for m in _DISTRIBUTION_METHODS:
                if isinstance(getattr(type(obj), m, None), types.FunctionType):
                    out[f"{attr}.{m}"] = getattr(obj, m)
            continue
        out[attr] = obj
    return out


def _method_kinds(f: Any, infos: dict[int, list]) -> set:
    """Rules for a bound method: those of its function whose first dispatch type the
    instance matches (``rv_continuous.logpdf`` for ``norm_gen``), unless opted out."""
    out = set()
    for table, attr, info in infos.get(id(f.__func__), ()):
        if (info.types and isinstance(f.__self__, info.types[0])
                and not table.is_opted_out(f.__func__, f.__self__)):
            out.add("non_differentiable" if info.kind == "non_differentiable" else attr)
    return out


#: Public functions that are not mathematics (I/O, printing, configuration, testing,
#: introspection): listed apart by ``coverage``, not as missing rules.
_NOT_MATHS = re.compile(
    r"^(load|save|savez|savez_compressed|loadtxt|savetxt|genfromtxt|fromfile|fromregex|"
    r"frombuffer|fromstring|fromiter|memmap|open_memmap|array2string|array_repr|array_str|"
    r"format_float_positional|format_float_scientific|base_repr|binary_repr|"
    r"set_printoptions|get_printoptions|printoptions|setbufsize|getbufsize|seterr|geterr|"
    r"seterrcall|geterrcall|errstate|show_config|show_runtime|info|test|who|"
    r"get_include|typename|mintypecode|may_share_memory|shares_memory|is_busday|"
    r"busday_count|busday_offset|datetime_as_string|datetime_data|print|input|help|exec|"
    r"eval|compile|breakpoint|open|vars|dir|globals|locals|id|hash|repr|ascii|format|"
    r"getattr|setattr|delattr|hasattr|isinstance|issubclass|callable|iter|next|"
    r"get_blas_funcs|get_lapack_funcs|find_best_blas_type)$"
)


def _coverage(args: argparse.Namespace) -> int:
    _load_all_rules()
    from chainrules import frule, rrule

    try:
        # first: importing a namespace registers its lazy rules (scipy.signal's), which
        # the tables below must already hold
        importlib.import_module(args.namespace)
    except ImportError:
        pass  # reported below

    kinds: dict[int, set] = defaultdict(set)
    infos: dict[int, list] = defaultdict(list)
    for table, attr in ((rrule, "rrule"), (frule, "frule")):
        for info in table.registered():
            if info.kind == "opt_out" or info.target != "function":
                continue
            kinds[id(info.function)].add(
                "non_differentiable" if info.kind == "non_differentiable" else attr)
            infos[id(info.function)].append((table, attr, info))
    try:
        functions = _public_functions(args.namespace, set(kinds))
    except ImportError as e:
        known = _known_namespaces([])
        print(f"cannot import {args.namespace!r}: {e}. "
              f"{_unknown_namespace_error(args.namespace, known)}", file=sys.stderr)
        return 2
    both, partial, nondiff, missing, other = [], [], [], [], []
    for name, f in functions.items():
        k = kinds.get(id(f), set())
        if not k and type(f) is types.MethodType:
            k = _method_kinds(f, infos)
        if "non_differentiable" in k:
            nondiff.append(name)
        elif {"frule", "rrule"} <= k:
            both.append(name)
        elif k:
            partial.append(f"{name} (only {', '.join(sorted(k))})")
        elif _NOT_MATHS.match(name):
            other.append(name)
        else:
            missing.append(name)
    # what `check` counts for this namespace: every rule grouped under it, which also
    # covers callables that are not attributes of the module (ufunc methods, ...)
    row = _registry_rows(args.namespace).get(report_row(args.namespace), _Row())
    # by the names check uses (an alias such as numpy.abs counts once, as absolute)
    listed = {_key(f) for f in functions.values() if id(f) in kinds}
    in_check = row.functions | row.non_differentiable
    elsewhere = sorted(in_check - listed)
    if args.json:
        json.dump({"namespace": args.namespace, "functions": len(functions),
                   "frule_and_rrule": both, "partial": partial,
                   "non_differentiable": nondiff, "no_rule": missing,
                   "not_mathematics": other,
                   "check_counts": {"functions": len(row.functions),
                                    "non_differentiable": len(row.non_differentiable),
                                    "not_module_attributes": elsewhere}},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"{args.namespace}: {len(functions)} public functions")
    print(f"  frule and rrule:     {len(both)}")
    print(f"  only one of them:    {len(partial)}")
    print(f"  non-differentiable:  {len(nondiff)}")
    print(f"  no rule:             {len(missing)}")
    print(f"  not mathematics:     {len(other)} (I/O, printing, configuration, testing)")
    print(f"`check --namespace {args.namespace}` counts {len(in_check)} functions with rules "
          f"({len(row.non_differentiable)} non-differentiable): the "
          f"{len(listed & in_check)} above under their own names (aliases counted once), "
          f"plus {len(elsewhere)} callables that are not attributes of the module")
    if partial:
        print("\nonly one rule:\n  " + "\n  ".join(partial))
    if missing:
        print("\nno rule:\n  " + _wrap(missing))
    if other:
        print("\nnot mathematics (no rule expected):\n  " + _wrap(other))
    if elsewhere:
        print("\nrules for callables that are not module attributes:\n  " + _wrap(elsewhere))
    return 0


def _wrap(names: list[str], width: int = 96) -> str:
    lines, line = [], ""
    for n in names:
        if line and len(line) + len(n) + 2 > width:
            lines.append(line)
            line = ""
        line = f"{line}, {n}" if line else n
    lines.append(line)
    return "\n  ".join(lines)


#: Below this many runs ``check`` without ``-j`` stays in this process: starting a
#: worker (importing the rules and the catalog) costs about as much as 1,000 cheap runs.
AUTO_JOBS_MIN_RUNS = 1000


def _workers(jobs: int | None, runs: list) -> int:
    """Worker processes for ``check``: ``-j N`` as given (0: one per CPU); without
    ``-j``, one per CPU for a large run of catalog cases, else none (serial)."""
    if jobs is not None:
        return resolve_jobs(jobs)
    from chainrules._check_runner import all_in_catalog

    if len(runs) < AUTO_JOBS_MIN_RUNS or not all_in_catalog(runs):
        return 1
    return resolve_jobs(0)


def _seed_range(text: str) -> list[int]:
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", text.strip())
    if match is None or (match[2] is not None and int(match[2]) < int(match[1])):
        raise argparse.ArgumentTypeError(
            f"expected a seed range FIRST-LAST such as 0-99 (or one seed), got {text!r}")
    first = int(match[1])
    return list(range(first, int(match[2] or first) + 1))


def _jobs(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 (0: one per CPU), got {n}")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m chainrules",
        description="Check chainrules' rules against finite differences, and list coverage.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="run every rule of the catalog through the testers")
    check.add_argument("--namespace", help="only this namespace, e.g. numpy, numpy.linalg, math")
    check.add_argument("--function", help="only this function, e.g. numpy.sin")
    check.add_argument("--dtype", action="append",
                       choices=("float64", "float32", "complex128", "complex64"),
                       help="only these dtypes (repeatable)")
    check.add_argument("--mode", choices=_MODES, help="only frules or only rrules")
    check.add_argument("--seed", type=int, default=0, help="seed for inputs and tangents")
    check.add_argument("--seeds", type=_seed_range, metavar="FIRST-LAST",
                       help="run every case once per seed of this range, e.g. 0-99 (a sweep "
                            "for tolerances that fail only at some seeds); failures name "
                            "their seed, and `check --seed N` repeats one")
    check.add_argument("--order", type=int, choices=(1, 2), default=1,
                       help="2: also check second derivatives (a Hessian-vector product "
                            "by chainrules.ad against differences of the gradient)")
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                       help="run the cases in N worker processes (0: one per CPU, 1: "
                            "serial); same results as a serial run. Default: one per "
                            f"CPU from {AUTO_JOBS_MIN_RUNS} runs on, serial below")
    check.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="also list registered rules that no catalog case tests")
    check.add_argument("--max-failures", type=int, default=20,
                       help="how many failure messages to print (default 20)")
    check.set_defaults(run=_check)
    cov = sub.add_parser("coverage", help="list a namespace's functions that have no rule")
    cov.add_argument("namespace", help="e.g. numpy, numpy.linalg, math, scipy.special")
    cov.add_argument("--json", action="store_true", help="machine-readable output")
    cov.set_defaults(run=_coverage)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m chainrules`` and the ``chainrules`` script."""
    args = build_parser().parse_args(argv)
    return int(args.run(args))
