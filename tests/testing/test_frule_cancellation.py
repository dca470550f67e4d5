"""test_frule when the pushforward along the seeded direction nearly cancels (a sum of
terms of order one that is 1e-4 of them): the finite difference's estimated error,
which scales with the terms, then exceeds a tolerance that scales with the sum, so
small inputs are judged column by column. A wrong rule still fails."""

from __future__ import annotations

import numpy as np
import pytest

from chainrules import frule, scoped_rules
from chainrules.testing import test_frule, with_tangent


def lifted(x):
    # the constant makes the float32 round-off of f, and so of its differences, honest
    # and large
    return 100 + x[0] ** 2 + x[1] ** 2


X = np.array([3.0, 3.0003], dtype=np.float32)
X_DOT = np.array([1.0, -1.0], dtype=np.float32)  # y_dot = 2 x0 - 2 x1, about -6e-4


def _register(slip: float = 0.0, bilinear: float = 0.0) -> None:
    @frule.register(lifted)
    def lifted_frule(dargs, x):
        _, x_dot = dargs
        y_dot = (2 + slip) * x[0] * x_dot[0] + 2 * x[1] * x_dot[1]
        return lifted(x), y_dot + bilinear * x_dot[0] * x_dot[1]


def test_cancelled_pushforward_of_a_right_rule_passes():
    with scoped_rules():
        _register()
        report = test_frule(lifted, with_tangent(X, X_DOT))
    assert "pushforward (cancelled along the direction; checked by columns)" in report.checks
    assert "full Jacobian (forward)" in report.checks


@pytest.mark.parametrize("slip", [0.1, -0.1, 0.03])
def test_cancelled_pushforward_of_a_wrong_rule_fails(slip):
    with scoped_rules():
        _register(slip=slip)
        with pytest.raises(AssertionError, match="lifted: wrong pushforward: y_dot differs "
                                                 "from the finite-difference J·x_dot"):
            test_frule(lifted, with_tangent(X, X_DOT))


@pytest.mark.parametrize("bilinear", [0.1, 0.01])
def test_cancelled_pushforward_of_a_nonlinear_rule_fails(bilinear):
    # right along each axis (the Jacobian's columns agree), wrong for this direction
    with scoped_rules():
        _register(bilinear=bilinear)
        with pytest.raises(AssertionError, match="lifted: wrong pushforward: y_dot differs "
                                                 "from the finite-difference J·x_dot"):
            test_frule(lifted, with_tangent(X, X_DOT))
