"""``python -m chainrules check`` and ``coverage``."""

import json
import math
import re
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

import chainrules.testing as testing
from chainrules import NoTangent, rrule, scoped_rules
from chainrules._cli import main
from chainrules.testing import Case, arr


def test_check_one_function_json(capsys):
    assert main(["check", "--function", "math.sin", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] == 0
    statuses = {(r["dtype"], r["mode"]): r["status"] for r in out["results"]}
    assert statuses[("float64", "rrule")] == "passed"
    assert statuses[("float64", "frule")] == "passed"
    assert all(r["function"] == "math.sin" for r in out["results"])


def test_check_table_lists_namespaces(capsys):
    assert main(["check", "--namespace", "cmath", "-q"]) == 0
    out = capsys.readouterr().out
    header, rule = out.splitlines()[:2]
    assert header.split()[:4] == ["namespace", "functions", "frule", "rrule"]
    assert any(line.startswith("cmath ") for line in out.splitlines())
    assert "0 failed" in out


def broken_sin(x):
    return np.sin(x)


def test_check_fails_on_a_wrong_rule(monkeypatch, capsys):
    with scoped_rules():

        @rrule.register(broken_sin)
        def broken_sin_rrule(x):
            def broken_sin_pullback(y_bar):
                return NoTangent(), -y_bar * np.cos(x)  # wrong sign

            return np.sin(x), broken_sin_pullback

        case = Case(broken_sin, lambda rng, dt: (arr(rng, dt, (3,)),), frule=False,
                    dtypes=("float64",))
        monkeypatch.setattr(testing, "iter_catalog", lambda namespace=None: iter([case]))
        assert main(["check", "-q"]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "broken_sin" in out and "1 failed" in out


def test_check_reports_skipped_cases(monkeypatch, capsys):
    case = Case(broken_sin, lambda rng, dt: (arr(rng, dt, (3,)),), dtypes=("float64",),
                skip="needs a newer library")
    monkeypatch.setattr(testing, "iter_catalog", lambda namespace=None: iter([case]))
    assert main(["check", "-q", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "2 skipped (see --verbose)" in out
    assert "skipped tests.test_cli.broken_sin [float64, rrule]: " in out
    assert out.count(": needs a newer library") == 2


def test_check_unknown_function_error(capsys):
    assert main(["check", "--function", "numpy.no_such_function"]) == 2
    assert "no case in the catalog tests 'numpy.no_such_function'" in capsys.readouterr().err


def test_coverage(capsys):
    assert main(["coverage", "math"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("math: ")
    assert "frule and rrule:" in out and "non-differentiable:" in out
    assert main(["coverage", "math", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "sin" in report["frule_and_rrule"] and "floor" in report["non_differentiable"]
    assert math.sin  # the namespace really is the math module


def test_coverage_unknown_namespace_error(capsys):
    assert main(["coverage", "no_such_module_xyz"]) == 2
    assert "cannot import 'no_such_module_xyz'" in capsys.readouterr().err


def test_module_entry_point():
    done = subprocess.run([sys.executable, "-m", "chainrules", "check", "--function", "math.exp",
                           "-q"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "math" in done.stdout


def test_usage_error():
    with pytest.raises(SystemExit):
        main(["nonsense"])


def test_check_one_function_counts_its_rules(capsys):
    assert main(["check", "--function", "numpy.sin", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["namespaces"]["numpy"]
    assert (summary["functions"], summary["frule"], summary["rrule"]) == (1, 1, 1)


def test_check_function_outside_namespace_error(capsys):
    assert main(["check", "--namespace", "numpy.linalg", "--function", "numpy.sin"]) == 2
    assert "in namespace 'numpy.linalg'" in capsys.readouterr().err


def test_coverage_counts_higher_order_rules(capsys):
    assert main(["coverage", "numpy", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "apply_along_axis" not in report["no_rule"]


def test_coverage_lists_distribution_methods(capsys):
    pytest.importorskip("scipy.stats")
    assert main(["coverage", "scipy.stats", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    covered, missing = report["frule_and_rrule"], report["no_rule"]
    assert {"norm.logpdf", "norm.isf", "poisson.logpmf", "multivariate_normal.logpdf",
            "dirichlet.pdf"} <= set(covered)
    # erlang subclasses gamma but is opted out of gamma's rules; discrete ppf has none
    assert {"erlang.logpdf", "poisson.ppf", "alpha.logpdf"} <= set(missing)
    assert "norm" not in covered and "norm" not in missing  # listed as its methods


def test_check_unknown_namespace_error(capsys):
    assert main(["check", "--namespace", "numpy.linalg2", "-q"]) == 2
    err = capsys.readouterr().err
    assert "unknown namespace 'numpy.linalg2': no rule or catalog case is in it. " \
           "Did you mean 'numpy.linalg'" in err
    listed = err.partition("Namespaces with rules: ")[2].rstrip(".\n").split(", ")
    assert len(listed) == len(set(listed))  # each once, by the name one types
    assert "functools" in listed and "functools + itertools" not in listed
    assert "numpy.random" in listed and "numpy.random.mtrand" not in listed
    assert main(["coverage", "numpy.linalg2"]) == 2
    assert "Did you mean 'numpy.linalg'" in capsys.readouterr().err


def test_progress_shows_an_eta():
    import io

    from chainrules._cli import _Progress

    stream = io.StringIO()
    progress = _Progress(4, stream, enabled=True)
    for _ in range(4):
        progress.step("case", failed=False)
    lines = stream.getvalue().splitlines()
    assert lines and all(re.search(r"ETA (\d+m)?\d+s$", line) for line in lines)


def test_catalog_wrappers_count_for_the_function_they_test(capsys):
    assert main(["check", "--function", "numpy.linalg.svd", "--mode", "rrule",
                 "--dtype", "float64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["namespaces"]) == {"numpy.linalg"}
    cases = {r["case"] for r in out["results"]}
    assert any(c.startswith("svd_abs2") for c in cases), cases
    assert {r["function"] for r in out["results"]} == {"numpy.linalg.svd"}


def test_coverage_lists_non_maths_apart_and_agrees_with_check(capsys):
    assert main(["coverage", "numpy", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"save", "loadtxt", "set_printoptions", "show_config"} <= set(
        report["not_mathematics"])
    assert "save" not in report["no_rule"]
    assert "numpy.add.reduce" in report["check_counts"]["not_module_attributes"]
    assert main(["check", "--namespace", "builtins", "--json", "--mode", "rrule",
                 "--dtype", "float64"]) == 0
    summary = json.loads(capsys.readouterr().out)["namespaces"]["builtins"]
    assert main(["coverage", "builtins", "--json"]) == 0
    cov = json.loads(capsys.readouterr().out)
    with_rules = len(cov["frule_and_rrule"]) + len(cov["partial"]) + len(
        cov["non_differentiable"])
    assert with_rules + len(cov["check_counts"]["not_module_attributes"]) == len(
        set(cov["frule_and_rrule"]) | {p.split()[0] for p in cov["partial"]}
        | set(cov["non_differentiable"])) + len(cov["check_counts"]["not_module_attributes"])
    assert cov["check_counts"]["functions"] == summary["functions"]


def _without_times(report):
    report.pop("seconds")
    for r in report["results"]:
        r.pop("seconds")
    for row in report["namespaces"].values():
        row.pop("seconds")
    return report


def test_check_in_worker_processes_matches_a_serial_run(capsys):
    assert main(["check", "--namespace", "math", "--json"]) == 0
    serial = json.loads(capsys.readouterr().out)
    assert main(["check", "--namespace", "math", "--json", "-j", "2"]) == 0
    parallel = json.loads(capsys.readouterr().out)
    assert len(serial["results"]) > 100
    assert _without_times(parallel) == _without_times(serial)


def test_check_jobs_keeps_table_progress_and_exit_code(capsys):
    # numpy.sinc is named scipy.special.sinc once SciPy is imported: the workers must
    # load what the parent loaded to find the case under that name
    pytest.importorskip("scipy.special")
    assert main(["check", "--function", "scipy.special.sinc", "--dtype", "float64",
                 "--jobs", "2"]) == 0
    captured = capsys.readouterr()
    assert any(line.startswith("scipy.special ") for line in captured.out.splitlines())
    assert "0 failed, 4 passed" in captured.out
    assert "100%  4/4 runs, 0 failed, ETA 0s" in captured.err


def test_check_jobs_argument():
    from chainrules._check_runner import _chunks, resolve_jobs

    assert resolve_jobs(0) >= 1 and resolve_jobs(3) == 3
    chunks = _chunks(list(range(1000)), 2)
    assert [i for c in chunks for i in c] == list(range(1000)) and len(chunks) > 2 * 8
    # a case's runs at one dtype and seed (its frule and rrule) stay in one chunk
    groups = [k // 2 for k in range(1, 1001)]  # pairs that straddle every even boundary
    chunks = _chunks(groups, 2)
    assert [i for c in chunks for i in c] == list(range(1000))
    assert all(groups[c[0]] != groups[c[0] - 1] for c in chunks[1:])


def test_check_jobs_negative_error(capsys):
    with pytest.raises(SystemExit):
        main(["check", "-j", "-1"])
    assert "argument -j/--jobs: must be >= 0 (0: one per CPU), got -1" in capsys.readouterr().err


def test_check_jobs_needs_catalog_cases(monkeypatch):
    case = Case(broken_sin, lambda rng, dt: (arr(rng, dt, (3,)),), dtypes=("float64",))
    monkeypatch.setattr(testing, "iter_catalog", lambda namespace=None: iter([case]))
    with pytest.raises(RuntimeError, match=r"case 'tests.test_cli.broken_sin' is not a row of "
                                           r"a module in chainrules.testing.cases.*-j 1"):
        main(["check", "-q", "-j", "2"])


def test_check_worker_refuses_a_changed_catalog():
    from chainrules._check_runner import _run_chunk

    with pytest.raises(RuntimeError, match=r"row 0 of chainrules.testing.cases.stdlib_math"
                                           r".CASES in a worker is not 'no_such_case'"):
        _run_chunk([(0, "chainrules.testing.cases.stdlib_math", 0, "no_such_case",
                     "float64", "rrule", 0)])


def test_check_worker_stops_once_its_check_is_gone():
    # a worker whose parent died (the check killed) exits rather than running on
    code = ("import chainrules._check_runner as r; r._parent = -1; "
            "r._run_chunk([(0, 'chainrules.testing.cases.stdlib_math', 0, 'x', "
            "'float64', 'rrule', 0)]); print('ran on')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "ran on" not in done.stdout


def test_check_without_jobs_uses_every_cpu_for_large_catalog_runs(monkeypatch):
    from chainrules._check_runner import resolve_jobs
    from chainrules._cli import AUTO_JOBS_MIN_RUNS, _workers

    catalog = list(testing.iter_catalog("stdlib_math"))
    many = [(catalog[k % len(catalog)], "float64", "rrule") for k in range(AUTO_JOBS_MIN_RUNS)]
    assert _workers(None, many) == resolve_jobs(0)
    assert _workers(None, many[:-1]) == 1  # starting workers costs more than it saves
    assert _workers(1, many) == 1 and _workers(3, many[:2]) == 3
    # cases a worker cannot find again (not rows of a case module) run here
    stray = Case(broken_sin, lambda rng, dt: (arr(rng, dt, (3,)),), dtypes=("float64",))
    assert _workers(None, [(stray, "float64", "rrule")] * AUTO_JOBS_MIN_RUNS) == 1
    monkeypatch.setattr("chainrules._check_runner.os.sched_getaffinity", lambda pid: {0},
                        raising=False)
    assert resolve_jobs(0) == 1


def test_check_seeds_runs_every_case_once_per_seed(capsys):
    assert main(["check", "--function", "math.sin", "--dtype", "float64", "--seeds", "3-5",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    seeds = defaultdict(list)
    for r in out["results"]:
        seeds[r["case"], r["mode"]].append(r["seed"])
    assert len(seeds) >= 2 and all(sorted(s) == [3, 4, 5] for s in seeds.values())
    assert out["namespaces"]["math"]["runs"] == 3 * len(seeds)


def test_check_seeds_names_the_seed_of_a_failure(monkeypatch, capsys):
    with scoped_rules():

        @rrule.register(broken_sin)
        def broken_sin_rrule(x):
            def broken_sin_pullback(y_bar):
                return NoTangent(), -y_bar * np.cos(x)  # wrong sign

            return np.sin(x), broken_sin_pullback

        case = Case(broken_sin, lambda rng, dt: (arr(rng, dt, (3,)),), frule=False,
                    dtypes=("float64",))
        monkeypatch.setattr(testing, "iter_catalog", lambda namespace=None: iter([case]))
        assert main(["check", "-q", "--seeds", "7-8"]) == 1
    out = capsys.readouterr().out
    assert "[float64, rrule, seed 7]" in out and "[float64, rrule, seed 8]" in out


@pytest.mark.parametrize("text", ["5-2", "a-b", "1-", "-3"])
def test_check_seeds_bad_range_error(text, capsys):
    with pytest.raises(SystemExit):
        main(["check", "--seeds", text])
    assert (f"argument --seeds: expected a seed range FIRST-LAST such as 0-99 (or one seed), "
            f"got {text!r}") in capsys.readouterr().err


def test_check_rows_are_named_for_users(capsys):
    from chainrules._naming import report_row

    assert report_row("functools") == report_row("itertools") == "functools + itertools"
    assert report_row("chainrules") == "chainrules (own functions)"
    assert report_row("numpy.linalg") == "numpy.linalg"
    assert main(["check", "--namespace", "functools", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # the row holds what was asked for: functools.reduce, not itertools.accumulate
    assert list(out["namespaces"]) == ["functools + itertools"]
    assert out["namespaces"]["functools + itertools"]["untested"] == ["functools.reduce"]
    assert main(["check", "--namespace", "functools + itertools", "-q"]) == 0
    table = capsys.readouterr().out
    assert re.search(r"^functools \+ itertools +2 ", table, re.M)
    assert main(["check", "--namespace", "chainrules", "-q"]) == 0
    assert re.search(r"^chainrules \(own functions\) +\d+ ", capsys.readouterr().out, re.M)


def test_check_unknown_namespace_exits_non_zero_with_a_hint(capsys):
    assert main(["check", "--namespace", "functool"]) == 2
    err = capsys.readouterr().err
    assert "unknown namespace 'functool': no rule or catalog case is in it. Did you mean " \
           "'functools'" in err
