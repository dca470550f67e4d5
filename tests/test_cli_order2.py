"""``python -m chainrules check --order 2``: second derivatives of the catalog's rules."""

import importlib
import re

import numpy as np
import pytest

import chainrules.testing as testing
from chainrules import NoTangent, ignore_derivatives, rrule, scoped_rules
from chainrules._cli import main
from chainrules._order2 import check_second_order
from chainrules.testing import Case, arr, iter_catalog


def test_order_2_adds_a_column(capsys):
    assert main(["check", "--function", "numpy.sin", "--order", "2", "-q"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert header.split()[-2:] == ["2nd", "order"]
    assert re.search(r"second order: [1-9]\d* passed, 0 failed", out)


def wrong_second_sin(x):
    return np.sin(x)


def _wrong_second_rules():
    @rrule.register(wrong_second_sin)
    def wrong_second_sin_rrule(x):
        def wrong_second_sin_pullback(y_bar):
            # right value, but the derivative of cos(x) is dropped: a wrong Hessian
            return NoTangent(), y_bar * np.cos(ignore_derivatives(x))

        return np.sin(x), wrong_second_sin_pullback


def test_order_2_finds_a_wrong_second_derivative(monkeypatch, capsys):
    case = Case(wrong_second_sin, lambda rng, dt: (arr(rng, dt, (3,)),), frule=False,
                dtypes=("float64",))
    with scoped_rules():
        _wrong_second_rules()
        result = check_second_order(case)
        assert result.status == "failed"
        assert "Hessian-vector product" in result.message
        monkeypatch.setattr(testing, "iter_catalog", lambda namespace=None: iter([case]))
        assert main(["check", "--order", "2", "-q"]) == 1
        assert main(["check", "-q"]) == 0  # the first derivative is right
    out = capsys.readouterr().out
    assert "FAILED" in out and "wrong_second_sin" in out


def test_second_order_of_the_ufunc_catalog():
    # every numpy ufunc rule is differentiable again: no wrong value, and only the
    # listed rules refuse (by name) to be differentiated twice (one case per function,
    # to keep this under a minute)
    known_errors = {"numpy.multiply.accumulate with zeros"}
    statuses = {}
    seen = set()
    for case in iter_catalog("numpy_ufuncs"):
        if id(case.f) in seen:
            continue
        seen.add(id(case.f))
        result = check_second_order(case)
        statuses[case.display_name] = result.status
        assert result.status != "failed", f"{case.display_name}: {result.message}"
    errors = {name for name, s in statuses.items() if s == "error"}
    assert errors <= known_errors
    assert sum(s == "passed" for s in statuses.values()) >= 75


_SCATTERING = ("numpy.interp", "numpy.quantile", "numpy.percentile", "numpy.nanquantile",
               "numpy.nanpercentile")


def test_rules_that_scatter_are_twice_differentiable():
    """interp and the quantiles sum their cotangents into positions by np.bincount, which
    the AD follows, instead of np.add.at / np.put_along_axis, which write into an array:
    their Hessian-vector products match differences of the gradient."""
    cases = [c for c in iter_catalog("numpy")
             if c.display_name.split("(")[0] in _SCATTERING]
    assert {c.display_name.split("(")[0] for c in cases} == set(_SCATTERING)
    for case in cases:
        result = check_second_order(case)
        assert result.status == "passed", f"{case.display_name}: {result.message}"


def test_rules_that_scatter_reverse_over_reverse():
    """The same pullbacks run on cotangents of an outer reverse trace (and einsum's,
    whose cotangent for a repeated index is summed onto the diagonal the same way)."""
    from chainrules.ad import grad, vjp

    rng = np.random.default_rng(3)
    x, v = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    programs = {
        "quantile": lambda x: np.sum(np.quantile(x, [0.3, 0.8], axis=1) ** 2 * [1, 2, 3]),
        "nanquantile": lambda x: np.sum(np.nanquantile(x, [0.3, 0.8], axis=1) ** 3),
        "percentile": lambda x: np.percentile(x, 40.0) ** 3,
        "interp": lambda fp: np.sum(np.interp(np.linspace(-1, 5, 7), np.arange(5.0), fp[0])
                                    ** 3),
    }
    # einsum with a repeated index (a diagonal): its cotangent goes onto the diagonal
    a, w = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    programs["einsum('ii,i->i')"] = lambda a: np.sum(np.einsum("ii,i->i", a, w[0]) ** 3)
    for name, f in programs.items():
        x, v = (a, w) if name.startswith("einsum") else (x, v)
        g = grad(f)
        hvp = vjp(g, x)[1](v)[0]
        h = 1e-6
        np.testing.assert_allclose(hvp, (g(x + h * v) - g(x - h * v)) / (2 * h),
                                   rtol=1e-6, atol=1e-7, err_msg=name)


def test_truncnorm_is_twice_differentiable_in_its_bounds():
    """truncnorm's partials w.r.t. its bounds (log Phi(b) - Phi(a), by the tail formula
    of each element's side) choose their formula with np.where instead of writing into
    an array: Hessians w.r.t. a and b, in both tails and between, match differences of
    the gradient."""
    from scipy import stats

    from chainrules.ad import grad, jvp, vjp

    for a, b, points in [(-1.0, 2.0, [0.1, 0.5, -0.3]), (3.0, 6.0, [3.2, 4.0, 5.5]),
                         (-6.0, -3.0, [-5.0, -3.5, -4.0])]:
        xs = np.array(points)
        for method in ("pdf", "logpdf", "cdf", "logsf"):
            def f(p, method=method, xs=xs):
                return np.sum(getattr(stats.truncnorm, method)(xs * p[2], p[0], p[1]) ** 2)

            g, p, v = grad(f), np.array([a, b, 1.0]), np.array([0.3, -0.2, 0.5])
            h = 1e-5
            fd = (g(p + h * v) - g(p - h * v)) / (2 * h)
            for hvp in (vjp(g, p)[1](v)[0], jvp(g, (p,), (v,))[1]):
                np.testing.assert_allclose(hvp, fd, rtol=1e-5, atol=1e-6,
                                           err_msg=f"truncnorm.{method} on [{a}, {b}]")


def test_i0_is_differentiable_at_every_order():
    """np.i0's rules use I1 (its derivative), which has a rule of its own whose partial
    calls np.i0: a Hessian through np.i0, in all four nestings, matches differences of
    the gradient, in both of I1's series, at 0 and for negative x."""
    from chainrules.ad import grad, jvp, vjp

    x = np.array([-25.0, -0.5, 0.0, 0.3, 7.0, 19.9, 20.1, 40.0])
    v = np.linspace(0.5, 1.5, 8)

    def f(x):
        return np.sum(np.i0(x) * np.cos(x))

    g = grad(f)
    h = 1e-5
    hv = (g(x + h * v) - g(x - h * v)) / (2 * h)
    for got in (vjp(g, x)[1](v)[0], jvp(g, (x,), (v,))[1],
                grad(lambda x: jvp(f, (x,), (v,))[1])(x)):
        np.testing.assert_allclose(got, hv, rtol=1e-7)
    np.testing.assert_allclose(jvp(lambda x: jvp(f, (x,), (v,))[1], (x,), (v,))[1], v @ hv,
                               rtol=1e-7)




def test_scans_are_twice_differentiable():
    """multiply.accumulate's exact pullback (zeros in the input) runs a scan that stacks
    its columns instead of writing them into an array."""
    cases = [c for c in iter_catalog("numpy")
             if c.display_name.startswith(("numpy.multiply.accumulate", "numpy.cumprod"))]
    assert any("zero" in c.display_name for c in cases)
    for case in cases:
        result = check_second_order(case)
        assert result.status in ("passed", "skipped"), f"{case.display_name}: {result.message}"


def test_histogram_density_and_max_reverse_over_reverse():
    """histogram's density pullback joins its edge cotangents and builtins.max(array)'s
    puts its item between zeros, instead of writing into arrays: differentiable again,
    reverse over reverse included."""
    from chainrules.ad import grad, vjp

    cases = [c for c in iter_catalog() if c.f is np.histogram
             and c.display_name.startswith("histogram(density")]
    assert len(cases) == 2
    for case in cases:
        result = check_second_order(case)
        assert result.status == "passed", f"{case.display_name}: {result.message}"
    rng = np.random.default_rng(4)
    for x in (rng.standard_normal(5), rng.standard_normal(1)):
        v = rng.standard_normal(x.shape)

        def f(x):
            return np.sum(max(x) ** 3) + np.sum(x ** 2)

        g, h = grad(f), 1e-6
        np.testing.assert_allclose(vjp(g, x)[1](v)[0], (g(x + h * v) - g(x - h * v)) / (2 * h),
                                   rtol=1e-6, atol=1e-8)


def _function(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("names, must_cover", [
    # rules whose own code wrote into arrays (zeros, empty, views); now they stack, pad,
    # join or gather, which the AD follows, so their pullbacks run on traced values
    (("scipy.linalg.companion",), ()),
    (("numpy.polydiv",), ()),
    (("scipy.linalg.solve_banded", "scipy.linalg.solveh_banded"), ()),
    (("scipy.linalg.lu_factor",), ()),
    (("scipy.linalg.qr",), ("pivoting", "mode='r'")),
    # np.outer instead of np.multiply.outer (the final state's pullback, zi given)
    (("scipy.signal.lfilter",), ("zi",)),
])
def test_rules_rewritten_without_writes_are_twice_differentiable(names, must_cover):
    pytest.importorskip("scipy")
    functions = [_function(n) for n in names]
    cases = [c for c in iter_catalog() if any(c.f is f for f in functions)]
    assert {id(c.f) for c in cases} == {id(f) for f in functions}
    for part in must_cover:
        assert any(part in c.display_name for c in cases), part
    for case in cases:
        result = check_second_order(case)
        assert result.status == "passed", f"{case.display_name}: {result.message}"
