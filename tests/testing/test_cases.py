"""The rule-case catalog: Case, run_case, iter_catalog, input helpers."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chainrules import NoTangent, not_implemented, rrule
from chainrules.testing import (
    Case,
    TesterUsageError,
    arr,
    case_id,
    integers,
    iter_catalog,
    no_tangent,
    positive,
    run_case,
    scalar,
    spd,
    unit_interval,
    well_conditioned,
)


def halve(x):
    return x / 2


@rrule.register(halve)
def _(x):
    def halve_pullback(y_bar):
        return NoTangent(), y_bar / 2

    return halve(x), halve_pullback


def halve_wrong(x):
    return x / 2


@rrule.register(halve_wrong)
def _(x):
    def halve_wrong_pullback(y_bar):
        return NoTangent(), y_bar

    return halve_wrong(x), halve_wrong_pullback


def half_done(x, y):
    return x * y


@rrule.register(half_done)
def _(x, y):
    def half_done_pullback(z_bar):
        return NoTangent(), y * z_bar, not_implemented("y later")

    return x * y, half_done_pullback


def build(rng, dtype):
    return (arr(rng, dtype, (3,)),)


def test_run_case_statuses():
    assert run_case(Case(halve, build, frule=False), "float64", "rrule").status == "passed"
    assert run_case(Case(halve, build, frule=False), "float64", "frule").status == "skipped"
    assert run_case(Case(halve, build), "complex128", "rrule").status == "skipped"
    failed = run_case(Case(halve_wrong, build), "float32", "rrule")
    assert failed.status == "failed" and "wrong cotangent" in failed.message and not failed.ok
    xf = run_case(Case(half_done, lambda rng, dt: (arr(rng, dt, (2,)), arr(rng, dt, (2,)))),
                  "float64", "rrule")
    assert xf.status == "xfail" and "y later" in xf.message


def test_run_case_xfail_marker():
    known = Case(halve_wrong, build, xfail="documented bug")
    res = run_case(known, "float64", "rrule")
    assert res.status == "xfail" and "known limitation: documented bug" in res.message
    stale = run_case(Case(halve, build, xfail="fixed since"), "float64", "rrule")
    assert stale.status == "failed" and "remove the xfail marker" in stale.message


def test_run_case_skip_marker_and_unsupported_probe():
    from chainrules.testing import unsupported

    reason = unsupported("np.sum(frobnicate=)", lambda: np.sum([1.0], frobnicate=True))
    assert reason.startswith("needs np.sum(frobnicate=), which the installed libraries lack")
    res = run_case(Case(halve, build, skip=reason), "float64", "rrule")
    assert res.status == "skipped" and res.ok and reason in res.message
    assert unsupported("np.sum", lambda: np.sum([1.0])) is None


def test_run_case_reports_calls_and_time():
    res = run_case(Case(halve, build), "float64", "rrule", seed=3)
    assert res.primal_calls > 0 and res.seconds >= 0


def test_run_case_output_tangent_and_kwargs():
    c = Case(np.sum, lambda rng, dt: (arr(rng, dt, (2, 3)),), kwargs={"axis": 0},
             output_tangent=lambda rng, dt, y: np.ones_like(y))
    assert c.display_name == "numpy.sum(axis=0)"
    assert run_case(c, "float64", "rrule").status in ("passed", "failed")


def test_case_ids():
    c = Case(halve, build, name="halve(vector)")
    assert case_id(c, "float32", "frule") == "halve(vector)-float32-frule"


def test_case_errors():
    with pytest.raises(TesterUsageError, match=re.escape("Case: argument 1 (f) must be callable")):
        Case(3, build)
    with pytest.raises(TesterUsageError, match="`args` must be a callable args\\(rng, dtype\\)"):
        Case(halve, (1.0,))
    with pytest.raises(TesterUsageError, match=re.escape("unknown dtype(s) ['int32']")):
        Case(halve, build, dtypes=("int32",))
    with pytest.raises(TesterUsageError, match=re.escape(
            "`oracle` must be a dotted name such as 'jax.numpy.sin'")):
        Case(halve, build, oracle=np.sin)
    with pytest.raises(TesterUsageError, match=re.escape(
            "`fdm` must be an FDMethod (e.g. FDMethod(eps=1e-10)), got float")):
        Case(halve, build, fdm=1e-10)


def test_oracle_names_resolve_only_when_asked():
    from chainrules.testing._cases import resolve_oracle

    row = Case(halve, build, oracle="numpy.linalg.solve")
    assert resolve_oracle(row) is np.linalg.solve
    with pytest.raises(TesterUsageError, match=re.escape(
            "oracle 'numpy.no_such_function' does not exist: numpy has no attribute")):
        resolve_oracle(Case(halve, build, oracle="numpy.no_such_function"))
    with pytest.raises(TesterUsageError, match="names no oracle"):
        resolve_oracle(Case(halve, build))
    with pytest.raises(ImportError):  # the library is imported only here
        resolve_oracle(Case(halve, build, oracle="chainrules_no_such_library.sin"))


def test_run_case_errors():
    with pytest.raises(TesterUsageError, match=re.escape("argument 3 (mode) must be 'frule' or")):
        run_case(Case(halve, build), "float64", "vjp")
    with pytest.raises(TesterUsageError, match=re.escape("argument 2 (dtype) must be one of")):
        run_case(Case(halve, build), "int8", "rrule")


def test_helpers_domains_and_dtypes():
    rng = np.random.default_rng(0)
    f32 = np.dtype("float32")
    assert arr(rng, f32, (2, 2)).dtype == f32
    assert isinstance(scalar(rng, f32), np.float32)
    assert (positive(rng, np.dtype("float64"), (50,)) > 0).all()
    z = positive(rng, np.dtype("complex128"), (50,))
    assert (z.real > 0).all() and z.dtype == np.complex128
    assert (np.abs(unit_interval(rng, np.dtype("float64"), (50,))) < 0.9).all()
    assert integers(rng, (3,), 0, 2).dtype == np.int64 and isinstance(integers(rng), int)
    assert np.linalg.eigvalsh(spd(rng, np.dtype("complex128"), 4)).min() > 0
    assert np.linalg.cond(well_conditioned(rng, np.dtype("float64"), 6)) < 10


def test_helper_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(TesterUsageError, match=re.escape("arr: argument 2 (dtype) must be a "
                                                         "float or complex dtype, got int64")):
        arr(rng, np.dtype("int64"))
    with pytest.raises(TesterUsageError, match=re.escape("positive: `low` must be > 0, got 0")):
        positive(rng, np.dtype("float64"), low=0)
    with pytest.raises(TesterUsageError, match=re.escape("`margin` must be in [0, 1), got 1")):
        unit_interval(rng, np.dtype("float64"), margin=1)


def test_no_tangent_pair():
    p = no_tangent(2.0)
    assert p.x == 2.0 and isinstance(p.x_dot, NoTangent)


def test_iter_catalog_yields_cases():
    cases = list(iter_catalog())
    assert all(isinstance(c, Case) for c in cases)
    assert list(iter_catalog("no-such-area")) == []
