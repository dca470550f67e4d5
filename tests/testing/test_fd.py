"""Finite differences: accuracy, precision, call counts, structures, errors."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pytest

from chainrules import NoTangent, Tangent, ZeroTangent
from chainrules.testing import (
    FDMethod,
    TesterUsageError,
    central_fdm,
    fd_derivative,
    fd_jvp,
    fd_vjp,
)


@pytest.mark.parametrize(("f", "df", "x"), [
    (math.sin, math.cos, 1.3),
    (math.exp, math.exp, 2.0),
    (math.log, lambda x: 1 / x, 0.1),
    (lambda x: x**-2, lambda x: -2 * x**-3, 0.2),
])
def test_fd_derivative_float64_accuracy(f, df, x):
    r = fd_derivative(lambda t: f(x + t), 0.0)
    assert abs(r.value - df(x)) <= 1e-10 * abs(df(x))
    assert r.calls == 10  # 6 for the step estimate, 4 for the 5-point stencil


def test_fd_derivative_float32_in_float32_precision():
    x = np.float32(1.3)
    r = fd_derivative(lambda t: np.sin(np.float32(x + t)), 0.0,
                      eps=float(np.finfo(np.float32).eps))
    err = abs(float(r.value) - math.cos(float(x)))
    assert err < 1e-4  # the evaluations are float32: not float64-exact, but close
    assert err > 1e-12  # and they really were float32


def test_fd_derivative_fixed_step_costs_four_calls():
    calls = []
    r = fd_derivative(lambda t: calls.append(t) or math.sin(t), 0.0, step=1e-3)
    assert len(calls) == 4 and abs(r.value - 1.0) < 1e-10


def test_fd_derivative_shrinks_step_outside_domain():
    # log(x) at x = 1e-3 with a step that would cross zero: retried with smaller steps
    r = fd_derivative(lambda t: math.log(1e-3 + t) if 1e-3 + t > 0 else math.nan, 0.0,
                      FDMethod(adapt=0), step=2e-3)
    assert r.step < 1e-3 and abs(r.value - 1e3) < 1e-2 * 1e3


def test_central_fdm_points_error():
    with pytest.raises(TesterUsageError, match=re.escape("`points` must be odd and >= 3, got 4")):
        central_fdm(4)


def test_fdmethod_adapt_error():
    with pytest.raises(TesterUsageError, match=re.escape("`adapt` must be >= 0, got -1")):
        FDMethod(adapt=-1)


@pytest.mark.parametrize("eps", [0.0, 1.5, "1e-9"])
def test_fdmethod_eps_error(eps):
    with pytest.raises(TesterUsageError, match=re.escape(
            "`eps` must be a relative error between 0 and 1")):
        FDMethod(eps=eps)


def _rounded_sin(x):
    """sin good to 5e-10 only, as an adaptive solver's output is good to its tolerance."""
    return np.round(np.sin(x), 9)


@pytest.mark.parametrize("tester", ["rrule", "frule"])
@pytest.mark.parametrize(("factor", "eps", "passes"), [
    (1.0, None, False),  # a right rule, machine epsilon: the differences are noise
    (1.0, 1e-9, True),   # told the function's accuracy: passes
    (2.0, 1e-9, False),  # and a wrong rule still fails
])
def test_eps_states_a_less_accurate_function(tester, factor, eps, passes):
    """With machine epsilon the differences of a function good to 5e-10 are noise at the
    step they pick, and a right rule fails; told the function's accuracy, they pass it
    and still fail a rule off by a factor of 2."""
    from chainrules import frule, rrule, scoped_rules
    from chainrules.testing import test_frule, test_rrule

    x = np.linspace(0.1, 1.2, 4)
    with scoped_rules():
        @rrule.register(_rounded_sin)
        def rounded_sin_rrule(x):
            return _rounded_sin(x), lambda g: (NoTangent(), factor * np.cos(x) * g)

        @frule.register(_rounded_sin)
        def rounded_sin_frule(dargs, x):
            return _rounded_sin(x), factor * np.cos(x) * dargs[1]

        run = test_rrule if tester == "rrule" else test_frule
        options = {} if eps is None else {"fdm": FDMethod(eps=eps)}
        if passes:
            run(_rounded_sin, x, seed=3, **options)
        else:
            with pytest.raises(AssertionError):
                run(_rounded_sin, x, seed=3, **options)


@dataclass(frozen=True)
class Params:
    w: np.ndarray
    b: float
    n: int


def test_fd_jvp_structures():
    p = Params(np.array([1.0, 2.0]), 0.5, 3)
    y_dot = fd_jvp(lambda p, d: p.w * p.b + d["c"] * p.n, (p, {"c": 2.0}),
                   (Tangent[Params](w=np.array([1.0, 0.0]), b=1.0), Tangent[dict]({"c": 1.0})))
    # d/dt: w_dot*b + w*b_dot + c_dot*n = [0.5, 0] + [1, 2] + [3, 3]
    np.testing.assert_allclose(y_dot, [4.5, 5.0], rtol=1e-9)


def test_fd_jvp_complex_and_zero_tangents():
    z = np.array([1 + 2j, -0.5j])
    y_dot = fd_jvp(np.exp, (z,), (np.array([1.0, 1j]),))
    np.testing.assert_allclose(y_dot, np.exp(z) * np.array([1.0, 1j]), rtol=1e-9)
    assert np.all(fd_jvp(np.exp, (z,), (ZeroTangent(),)) == 0)


def test_fd_jvp_tuple_output():
    y_dot = fd_jvp(lambda x: (np.sin(x), 2 * x), (0.3,), (1.0,))
    assert isinstance(y_dot, Tangent)
    assert abs(y_dot[0] - math.cos(0.3)) < 1e-10 and abs(y_dot[1] - 2) < 1e-10


def test_fd_jvp_float32_stays_float32():
    seen = []

    def f(x):
        seen.append(x.dtype)
        return x * x

    fd_jvp(f, (np.ones(3, np.float32),), (np.ones(3, np.float32),))
    assert set(seen) == {np.dtype(np.float32)}


def test_fd_jvp_length_mismatch_error():
    with pytest.raises(TesterUsageError, match=re.escape("fd_jvp: got 2 arguments but 1 tangents")):
        fd_jvp(np.add, (1.0, 2.0), (1.0,))


def test_fd_vjp_complex_convention():
    # gradient of |z|^2 is 2z (DESIGN §2)
    (z_bar,) = fd_vjp(lambda z: abs(z) ** 2, 1.0, (1 + 2j,))
    assert abs(z_bar - (2 + 4j)) < 1e-8


def test_fd_vjp_int_and_string_arguments_get_no_tangent():
    x_bar, n_bar, s_bar = fd_vjp(lambda x, n, s: x * n, 1.0, (2.0, 3, "a"))
    assert abs(x_bar - 3.0) < 1e-9
    assert isinstance(n_bar, NoTangent) and isinstance(s_bar, NoTangent)
