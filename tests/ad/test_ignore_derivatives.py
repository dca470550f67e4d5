"""ignore_derivatives inside differentiated code gives plain values, never tracers."""

import numpy as np

from chainrules import ignore_derivatives
from chainrules.ad import grad


def test_logged_values_are_plain_numbers():
    history = []

    def loss(w):
        value = np.sum((w - 1.0) ** 2)
        history.append(ignore_derivatives(value))
        return value

    w = np.array([0.0, 3.0])
    g = grad(loss)(w)
    np.testing.assert_allclose(g, 2 * (w - 1.0))
    assert isinstance(history[-1], float)  # np.float64 is a float
    assert f"{history[-1]:.3f}" == "5.000"


def test_ignored_value_carries_no_derivative():
    def f(x):
        return x * ignore_derivatives(x)

    assert grad(f)(3.0) == 3.0  # d/dx (x * c) with c = 3 held constant
