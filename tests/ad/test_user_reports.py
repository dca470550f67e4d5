"""Regression tests for the problems a first user reported."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chainrules.ad import InputTypeError, grad, hessian, jacobian, jvp, value_and_grad, vjp

_INT_MSG = re.escape("expected float or complex values, got ndarray(shape=(3,), dtype=int64); "
                     "integer and bool arrays have no derivative; convert the input with "
                     "x.astype(float)")


def _f(x):
    return np.sum(x ** 2 * 1.5)


@pytest.mark.parametrize("api", [
    lambda x: grad(_f)(x),
    lambda x: value_and_grad(_f)(x),
    lambda x: jacobian(lambda v: v * 1.5)(x),
    lambda x: hessian(_f)(x),
    lambda x: vjp(_f, x),
    lambda x: jvp(_f, (x,), (np.ones(3),)),
])
def test_integer_array_input_is_refused(api):
    with pytest.raises(InputTypeError, match=r"argument 0 \('(x|v)'\): " + _INT_MSG):
        api(np.array([1, 2, 3]))


def test_numpy_integer_and_bool_scalars_are_refused():
    with pytest.raises(InputTypeError, match=r"grad argument 0 \('x'\): .*got int64 "
                                             r"np\.int64\(3\).*x\.astype\(float\)"):
        grad(lambda x: x ** 2 * 1.5)(np.int64(3))
    with pytest.raises(InputTypeError, match=r"dtype=bool\).*x\.astype\(float\)"):
        grad(_f)(np.array([True, False, True]))
    with pytest.raises(InputTypeError, match=r"grad argument 1 \('b'\)\['k'\]: .*int64"):
        grad(lambda a, b: a * b["k"][0], argnums=(0, 1))(1.0, {"k": np.array([1, 2])})


def test_python_int_still_treated_as_float():
    assert grad(lambda x: x ** 2 * 1.5)(3) == 9.0
    np.testing.assert_allclose(grad(_f)(np.array([1.0, 2.0, 3.0])), [3.0, 6.0, 9.0])
    # an integer array that is not differentiated is fine
    assert grad(lambda x, idx: x * float(idx[0]))(2.0, np.array([3, 4])) == 3.0


def test_tracer_internals_do_not_shadow_ndarray_api():
    from chainrules.ad import Tracer
    assert not set(Tracer.__slots__) & set(dir(np.ndarray))


def test_ndarray_trace_method():
    np.testing.assert_array_equal(grad(lambda M: M.trace())(np.eye(2)), np.eye(2))
    np.testing.assert_array_equal(grad(lambda M: M.trace(1))(np.zeros((3, 3))),
                                  np.eye(3, k=1))
    J = jacobian(lambda M: M.trace(axis1=1, axis2=2))(np.ones((2, 2, 2)))
    assert J.shape == (2, 2, 2, 2) and J.sum() == 4.0
