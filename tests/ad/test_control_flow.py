"""Values decided by branching on traced values: a function handed to a solver.

A solver compares the values of the function it is given and builds its answer from
plain floats, so the answer depends on the traced values only through comparisons.
The AD cannot follow that derivative; it must say so instead of returning zero.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.optimize

from chainrules import NotImplementedDerivativeError, ignore_derivatives
from chainrules.ad import ControlFlowError, grad, jvp

MESSAGE = "depends on the traced values only through comparisons"


def bisect(f, lo, hi, *args):
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid, *args) < 0 else (lo, mid)
    return lo


def search(f, lo, hi):
    x = bisect(f, lo, hi)
    return x, f(x)


def bisect_with_value(f, lo, hi):
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return lo, f(lo)


def test_closure_handed_to_a_solver_error():
    with pytest.raises(ControlFlowError, match=re.escape(
            f"the result of {__name__}.bisect {MESSAGE}")) as info:
        grad(lambda a: bisect(lambda t: t - a, -5.0, 5.0))(1.0)
    assert info.value.function is bisect
    assert "register an rrule/frule for" in str(info.value)
    assert "ignore_derivatives" in str(info.value)


def test_parameter_passed_through_args_error():
    with pytest.raises(ControlFlowError, match=MESSAGE):
        grad(lambda a: bisect(lambda t, b: t - b, -5.0, 5.0, a))(1.0)


def test_error_names_the_call_chain():
    with pytest.raises(ControlFlowError, match=re.escape(
            f"(in the call chain {__name__}.search > {__name__}.bisect)")) as info:
        grad(lambda a: search(lambda t: t - a, -5.0, 5.0)[0])(1.0)
    assert info.value.calls == (search, bisect)


def test_scipy_solver_without_rule_error():
    # brent with full_output=True has no rule: an error, not the zero it used to give
    with pytest.raises(ControlFlowError, match=MESSAGE):
        grad(lambda a: scipy.optimize.brent(lambda t: (t - a) ** 2, full_output=True)[0])(1.0)


def test_builtin_handed_a_function_error():
    # a discrete argmax: zero would be right here, but the AD cannot know that
    with pytest.raises(ControlFlowError, match=re.escape("the result of builtins.max")):
        grad(lambda a: max([0.1 * i for i in range(10)], key=lambda t: -(t - a) ** 2))(0.3)


def test_forward_mode_gives_not_implemented():
    with pytest.raises(NotImplementedDerivativeError, match=MESSAGE):
        jvp(lambda a: bisect(lambda t: t - a, -5.0, 5.0), (1.0,), (1.0,))


def test_unused_decided_value_is_no_error():
    # the solver's traced value f(x) is fine; only x carries no derivative
    assert grad(lambda a: bisect_with_value(lambda t: t - 2 * a, -5.0, 5.0)[1])(1.0) == -2.0


def test_ignore_derivatives_accepts_the_zero():
    assert grad(lambda a: a + ignore_derivatives(
        bisect(lambda t: t - a, -5.0, 5.0)))(1.0) == 1.0


def test_branches_without_a_function_argument_stay_piecewise():
    relu = lambda x: x if x > 0 else 0.0  # noqa: E731
    assert grad(relu)(-1.0) == 0.0
    assert grad(relu)(2.0) == 1.0
    np.testing.assert_array_equal(
        grad(lambda x: np.sum(np.where(x > 0, x, 0.0)))(np.array([-1.0, 2.0])), [0.0, 1.0])


def test_function_argument_without_branches_is_followed():
    def apply(f, x):
        return f(x) * 2.0

    assert grad(lambda a: apply(lambda t: t * a, 3.0))(1.0) == 6.0
