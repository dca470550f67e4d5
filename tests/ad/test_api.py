"""grad, value_and_grad, vjp, jvp, jacobian, hessian on numbers, arrays and structures."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import NamedTuple

import numpy as np
import pytest

from chainrules import NoTangent, Tangent
from chainrules.ad import (
    InputTypeError,
    NonScalarOutputError,
    grad,
    hessian,
    jacobian,
    jvp,
    value_and_grad,
    vjp,
)


def foo(x):
    return math.asin(0.2 + math.sin(x))


def test_grad_foo_matches_reference_value():
    # The reference document's example: the derivative at 3 is -1.0531613736418153.
    assert grad(foo)(3.0) == pytest.approx(-1.0531613736418153, rel=1e-14)


def test_value_and_grad_returns_primal():
    y, g = value_and_grad(foo)(3.0)
    assert y == pytest.approx(foo(3.0))
    assert g == pytest.approx(-1.0531613736418153)


def test_grad_argnums_tuple_and_negative():
    def f(a, b, c):
        return a * b + c * c

    assert grad(f, argnums=(0, 2))(2.0, 3.0, 4.0) == (3.0, 8.0)
    assert grad(f, argnums=-1)(2.0, 3.0, 4.0) == 8.0


def test_grad_int_input_is_treated_as_float():
    g = grad(lambda x: x * x)(3)
    assert g == 6.0
    assert type(g) is float


def test_grad_complex_convention_is_conjugate_free():
    # DESIGN §2: dL/dRe z + i dL/dIm z, so |z|^2 has gradient 2z.
    z = 1.0 + 2.0j
    assert grad(lambda z: abs(z) ** 2)(z) == pytest.approx(2 * z)


def test_grad_unused_input_is_a_natural_zero():
    assert grad(lambda x, y: y * 2.0)(1.0, 5.0) == 0.0
    g = grad(lambda x, y: y * 2.0)(np.ones(3), 5.0)
    np.testing.assert_array_equal(g, np.zeros(3))


def test_grad_array_input():
    x = np.array([0.1, 0.2, 0.3])
    g = grad(lambda x: np.sum(np.sin(x) * x))(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-13)


def test_grad_float32_array_keeps_dtype():
    x = np.array([0.1, 0.2], dtype=np.float32)
    g = grad(lambda x: np.sum(x * x))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * x, rtol=1e-6)


def test_grad_tuple_list_dict_inputs():
    def f(p):
        return p["w"][0] * p["w"][1] + p["b"] ** 2

    g = grad(f)({"w": (2.0, 3.0), "b": 4.0})
    assert g == {"w": (3.0, 2.0), "b": 8.0}
    assert grad(lambda xs: xs[0] * xs[1])([2.0, 5.0]) == [5.0, 2.0]


@dataclasses.dataclass
class Params:
    w: float
    b: np.ndarray
    name: str = "layer"


class Point(NamedTuple):
    x: float
    y: float


def test_grad_dataclass_input_gives_structural_tangent():
    p = Params(2.0, np.array([1.0, 2.0]))
    g = grad(lambda p: p.w * np.sum(p.b))(p)
    assert isinstance(g, Tangent)
    assert g.w == 3.0
    np.testing.assert_array_equal(g.b, [2.0, 2.0])
    assert isinstance(g.name, NoTangent)
    # gradient descent on a dataclass works through primal + Tangent
    q = p + g
    assert q.w == 5.0


def test_grad_namedtuple_input():
    g = grad(lambda p: p.x * p.y)(Point(2.0, 3.0))
    assert isinstance(g, Tangent)
    assert (g.x, g.y) == (3.0, 2.0)


def test_grad_non_scalar_output_error():
    with pytest.raises(NonScalarOutputError,
                       match=re.escape("grad expects the function to return a real scalar")):
        grad(lambda x: x * np.ones(2))(1.0)


def test_grad_complex_output_error():
    with pytest.raises(NonScalarOutputError, match="got complex"):
        grad(lambda x: x * 1j)(1.0)


def test_grad_bad_argnums_error():
    with pytest.raises(InputTypeError, match=re.escape("grad(argnums=3)")):
        grad(lambda x: x, argnums=3)(1.0)


def test_vjp_structured_output_and_repeated_pullback():
    y, pullback = vjp(lambda a, b: (a * b, a + b), 2.0, 3.0)
    assert y == (6.0, 5.0)
    assert pullback((1.0, 0.0)) == (3.0, 2.0)
    assert pullback((0.0, 1.0)) == (1.0, 1.0)
    assert pullback((1.0, 1.0)) == (4.0, 3.0)


def test_vjp_output_cotangent_length_error():
    _, pullback = vjp(lambda a: (a, a), 2.0)
    with pytest.raises(InputTypeError, match="expected a sequence of 2 entries, got 3"):
        pullback((1.0, 1.0, 1.0))


def test_jvp_scalar_and_array():
    y, y_dot = jvp(foo, (3.0,), (1.0,))
    assert y == pytest.approx(foo(3.0))
    assert y_dot == pytest.approx(-1.0531613736418153)
    x = np.array([0.5, 1.0])
    y, y_dot = jvp(lambda x: np.sin(x) * x, (x,), (np.array([1.0, 2.0]),))
    np.testing.assert_allclose(y_dot, (np.cos(x) * x + np.sin(x)) * [1.0, 2.0])


def test_jvp_tangent_count_error():
    with pytest.raises(InputTypeError, match=re.escape("expected 1 tangents (one per primal)")):
        jvp(foo, (3.0,), (1.0, 2.0))


def test_jvp_tangent_shape_error():
    with pytest.raises(InputTypeError, match=re.escape("expected shape (2,) (the primal's)")):
        jvp(lambda x: x, (np.ones(2),), (np.ones(3),))


def test_jvp_structured_tangent():
    y, y_dot = jvp(lambda p: p["a"] * p["b"], ({"a": 2.0, "b": 3.0},),
                   ({"a": 1.0, "b": 0.0},))
    assert (y, y_dot) == (6.0, 3.0)


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_jacobian_modes_agree(mode):
    x = np.array([0.3, 0.7, 1.1])

    def f(x):
        return np.sin(x) * x[0]

    expected = np.diag(np.cos(x) * x[0])
    expected[:, 0] += np.sin(x)
    np.testing.assert_allclose(jacobian(f, mode=mode)(x), expected, rtol=1e-12)


def test_jacobian_scalar_to_vector_shape():
    j = jacobian(lambda t: np.array([1.0, 2.0]) * t)(3.0)
    np.testing.assert_allclose(j, [1.0, 2.0])


def test_jacobian_bad_mode_error():
    with pytest.raises(InputTypeError, match="expected 'auto', 'forward' or 'reverse'"):
        jacobian(foo, mode="sideways")


def test_jacobian_complex_input_error():
    with pytest.raises(InputTypeError,
                       match=re.escape("expected a real number or real (float) array, got "
                                       "complex; for a complex input use jvp")):
        jacobian(lambda z: z)(1j)
    with pytest.raises(InputTypeError, match=re.escape(
            "got ndarray(shape=(2,), dtype=complex128); for a complex input use jvp (the "
            "holomorphic derivative along a direction) or vjp, or split it into real and "
            "imaginary parts")):
        jacobian(lambda z: z)(np.ones(2, dtype=complex))


def test_hessian_small_function():
    def f(x):
        return np.sum(x ** 2 * np.sin(x)) + x[0] * x[1] * 3.0

    x = np.array([0.5, 1.0, 3.0])
    expected = np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x ** 2 * np.sin(x))
    expected[0, 1] += 3.0
    expected[1, 0] += 3.0
    np.testing.assert_allclose(hessian(f)(x), expected, rtol=1e-12)


def test_hessian_of_scalar_function():
    assert hessian(lambda x: x ** 3 * math.exp(x))(0.5) == pytest.approx(
        (6 * 0.5 + 6 * 0.25 + 0.125) * math.exp(0.5))


def test_jacobian_integer_array_input_error():
    with pytest.raises(InputTypeError, match=re.escape(
            "got ndarray(shape=(2,), dtype=int64); integer and bool arrays have no "
            "derivative; convert the input with x.astype(float)")):
        jacobian(lambda x: x * 2.0)(np.array([1, 2]))
