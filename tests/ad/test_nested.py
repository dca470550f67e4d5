"""Nested differentiation: second derivatives, Hessians, no perturbation confusion."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chainrules.ad import grad, hessian, jacobian, jvp


def test_second_derivative_of_math_function():
    assert grad(grad(math.sin))(1.0) == pytest.approx(-math.sin(1.0))
    assert grad(grad(lambda x: x ** 3))(2.0) == pytest.approx(12.0)


def test_third_derivative():
    assert grad(grad(grad(lambda x: x ** 4)))(2.0) == pytest.approx(48.0)


def test_forward_over_reverse_second_derivative():
    y, y_dot = jvp(grad(lambda x: math.exp(x) * x), (0.5,), (1.0,))
    assert y == pytest.approx(math.exp(0.5) * 1.5)
    assert y_dot == pytest.approx(math.exp(0.5) * 2.5)


def test_no_perturbation_confusion():
    # d/dx [ x * d/dy (x + y) ] = d/dx [ x * 1 ] = 1 (confusion would give 2)
    def outer(x):
        return x * grad(lambda y: x + y)(1.0)

    assert grad(outer)(3.0) == 1.0


def test_no_perturbation_confusion_forward():
    def outer(x):
        return x * jvp(lambda y: x + y, (1.0,), (1.0,))[1]

    assert jvp(outer, (3.0,), (1.0,))[1] == 1.0


def test_inner_derivative_depending_on_outer_variable():
    # d/dx [ d/dy (x * y^2) at y = x ] = d/dx [2 x y]|y=x = d/dx 2x^2 = 4x
    def outer(x):
        return grad(lambda y: x * y ** 2)(x)

    assert grad(outer)(1.5) == pytest.approx(6.0)


def test_hessian_matches_jacobian_of_grad_reverse():
    def f(x):
        return np.sum(np.exp(x) * np.sin(x))

    x = np.array([0.1, 0.4])
    h = hessian(f)(x)
    h_rev = jacobian(grad(f), mode="reverse")(x)
    np.testing.assert_allclose(h, h_rev, rtol=1e-12)
    np.testing.assert_allclose(np.diag(h), 2 * np.exp(x) * np.cos(x), rtol=1e-12)
