"""``python -m chainrules check --order 2``: second derivatives of the catalog's rules."""

import re

import numpy as np

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
