"""``x[idx]`` with integer index arrays and masks on PyTorch and array_api_strict arrays
(issue 27): values and gradients (a position picked twice gets both cotangents) equal
NumPy's, whose own gradients are checked against JAX and PyTorch elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

import chainrules
from chainrules import ad
from chainrules.ad import NoRuleError

rng = np.random.default_rng(2)
X = rng.standard_normal((5, 4))
X1 = rng.standard_normal(6)


def f(x, key):
    xp = chainrules.array_namespace(x)
    return xp.sum(xp.sin(x[key]) ** 2)


def _torch():
    torch = pytest.importorskip("torch")
    return torch.tensor, lambda a: a.detach().numpy(), torch.tensor


def _strict():
    xs = pytest.importorskip("array_api_strict")
    return xs.asarray, lambda a: np.asarray(a._array), xs.asarray


def _key(key, conv):
    if isinstance(key, tuple):
        return tuple(conv(k) if isinstance(k, np.ndarray) else k for k in key)
    return conv(key)


KEYS_2D = [
    (np.array([0, 1, 1]), np.array([3, 3, 0])),  # repeated positions
    (np.array([4, 4, 0]), 2),
    (1, np.array([0, 0, 3])),
]


@pytest.mark.parametrize("make", [_torch, _strict], ids=["torch", "array_api_strict"])
@pytest.mark.parametrize("key", KEYS_2D, ids=["arrays", "array-int", "int-array"])
def test_index_arrays_values_and_gradients(make, key):
    conv, back, keyconv = make()
    x = conv(X)
    k = _key(key, keyconv)
    np.testing.assert_allclose(back(x[k]), X[key])
    g = ad.grad(f)(x, k)
    assert type(g) is type(x)
    np.testing.assert_allclose(back(g), ad.grad(f)(X, key), rtol=1e-12)


@pytest.mark.parametrize("make", [_torch, _strict], ids=["torch", "array_api_strict"])
def test_one_dimensional_index_array_with_repeats(make):
    conv, back, keyconv = make()
    key = np.array([0, 5, 5, 5, 2])
    g = ad.grad(f)(conv(X1), keyconv(key))
    expected = np.zeros(6)
    np.add.at(expected, key, np.sin(2 * X1[key]))
    np.testing.assert_allclose(back(g), expected, rtol=1e-12)
    np.testing.assert_allclose(back(g), ad.grad(f)(X1, key), rtol=1e-12)


@pytest.mark.parametrize("make", [_torch, _strict], ids=["torch", "array_api_strict"])
def test_boolean_mask(make):
    conv, back, _ = make()

    def g(x):
        xp = chainrules.array_namespace(x)
        return xp.sum(x[x > 0] ** 2)

    np.testing.assert_allclose(back(ad.grad(g)(conv(X))), 2 * np.where(X > 0, X, 0),
                               rtol=1e-12)


@pytest.mark.parametrize("make", [_torch, _strict], ids=["torch", "array_api_strict"])
def test_index_arrays_forward_mode_and_vjp(make):
    conv, back, keyconv = make()
    key = (np.array([0, 1, 1]), np.array([3, 3, 0]))
    k = _key(key, keyconv)
    v = np.linspace(-1.0, 1.0, 20).reshape(5, 4)
    _, y_dot = ad.jvp(lambda x: x[k] * 2.0, (conv(X),), (conv(v),))
    np.testing.assert_allclose(back(y_dot), 2.0 * v[key], rtol=1e-12)
    y, pullback = ad.vjp(lambda x: x[k], conv(X))
    (x_bar,) = pullback(conv(np.array([1.0, 2.0, 3.0])))
    expected = np.zeros((5, 4))
    np.add.at(expected, key, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(back(x_bar), expected)


def test_torch_index_array_second_derivative_error():
    torch = pytest.importorskip("torch")
    k = torch.tensor([0, 2, 2])
    with pytest.raises(NoRuleError, match=r"second derivative through indexing.*xp\.take"):
        ad.hessian(lambda x: f(x, k))(torch.tensor(X1))


def test_dask_index_array_error():
    da = pytest.importorskip("dask.array")
    x = da.from_array(X1, chunks=3)
    with pytest.raises(NoRuleError, match=r"indexing a dask array with an index array.*"
                                          r"xp\.take"):
        ad.grad(f)(x, np.array([0, 2, 2]))
