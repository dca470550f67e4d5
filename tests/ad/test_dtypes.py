"""The AD's results keep the inputs' floating dtypes, as NumPy's own computation does:
a float32 loss has a float32 value, gradient, Hessian and Jacobian (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

from chainrules.ad import grad, hessian, jacobian, jvp, value_and_grad, vjp

_LOSSES = {
    # x ** 2: a Python int exponent makes the power rule's partial an int64 array,
    # which promoted the float32 Hessian to float64
    "power": lambda x: np.sum(x ** 2 * np.sin(x)),
    "exp_mean": lambda x: np.mean(np.exp(-x) * x ** 3),
    "dot": lambda x: x @ (x * x),
    "logsumexp": lambda x: np.log(np.sum(np.exp(x))),
}


def _hessian_fd(f, x, eps=1e-5):
    x = x.astype(np.float64)
    g = grad(f)
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = eps
        cols.append((g(x + e) - g(x - e)) / (2 * eps))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name", sorted(_LOSSES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_value_gradient_hessian_keep_the_input_dtype(name, dtype):
    f = _LOSSES[name]
    x = np.array([0.3, 1.2, -0.7], dtype=dtype)
    value, g = value_and_grad(f)(x)
    assert np.result_type(value) == np.result_type(f(x)) == dtype
    assert g.dtype == dtype
    h = hessian(f)(x)
    assert h.dtype == dtype
    rtol = 1e-4 if dtype == np.float32 else 1e-7
    np.testing.assert_allclose(h, _hessian_fd(f, x), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("mode", ["forward", "reverse", "auto"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jacobian_keeps_the_input_dtype(mode, dtype):
    x = np.array([0.3, 1.2, -0.7], dtype=dtype)
    jac = jacobian(lambda v: v ** 2 * np.cos(v[::-1]), mode=mode)(x)
    assert jac.dtype == dtype
    x64 = x.astype(np.float64)
    expected = np.diag(2 * x64 * np.cos(x64[::-1])) + np.fliplr(
        np.diag(-(x64 ** 2) * np.sin(x64[::-1])))
    np.testing.assert_allclose(jac, expected, rtol=1e-5, atol=1e-6)


def test_jacobian_of_float32_to_float64_map_is_float64():
    x = np.array([0.3, 1.2], dtype=np.float32)
    jac = jacobian(lambda v: v.astype(np.float64) ** 2, mode="forward")(x)
    assert jac.dtype == np.float64


def test_jvp_tangent_has_the_output_dtype():
    x = np.array([0.3, 1.2, 2.0], dtype=np.float32)
    y, y_dot = jvp(lambda v: v ** 2, (x,), (np.ones(3, np.float32),))
    assert y.dtype == y_dot.dtype == np.float32
    y, y_dot = jvp(lambda v: np.sum(v ** 3), (x,), (np.ones(3, np.float32),))
    assert np.result_type(y) == np.result_type(y_dot) == np.float32
    np.testing.assert_allclose(y_dot, np.sum(3 * x.astype(np.float64) ** 2), rtol=1e-6)


def test_complex64_value_gradient_and_tangent():
    z = np.array([1 + 1j, 2 - 0.5j], dtype=np.complex64)
    value, g = value_and_grad(lambda v: np.sum(np.abs(v ** 2) ** 2))(z)
    assert np.result_type(value) == np.float32
    assert g.dtype == np.complex64
    # |z|^4 has gradient 4 |z|^2 z in the ChainRules convention
    np.testing.assert_allclose(g, 4 * np.abs(z) ** 2 * z, rtol=1e-5)
    y, y_dot = jvp(lambda v: v ** 2, (z,), (np.ones(2, np.complex64),))
    assert y_dot.dtype == np.complex64
    np.testing.assert_allclose(y_dot, 2 * z, rtol=1e-6)
    y, pullback = vjp(lambda v: v ** 2, z)
    assert pullback(np.ones(2, np.complex64))[0].dtype == np.complex64


def test_float32_maximum_likelihood_hessian_is_float32():
    # the report: float32 data, scipy.stats promotes the loss itself to float64 (the
    # value follows SciPy), while the gradient and the Hessian are the parameters'
    data = np.array([0.1, 0.4, 2.0, 1.1], dtype=np.float32)
    p = np.array([0.5, 1.3], dtype=np.float32)

    def nll(p):
        return -np.sum(st.norm.logpdf(data, p[0], p[1]))

    value, g = value_and_grad(nll)(p)
    assert np.result_type(value) == np.result_type(nll(p))
    assert g.dtype == np.float32
    h = hessian(nll)(p)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, _hessian_fd(nll, p), rtol=1e-4)
