"""chainrules.ad on array_api_strict, JAX and PyTorch arrays (issue 27): code written
with ``xp = array_namespace(x)`` differentiates with respect to any of its arguments,
gives the library's types back, and matches the NumPy answer (itself checked against
JAX and PyTorch in ``test_against_references``) and the library's own AD where it has
one."""

from __future__ import annotations

import numpy as np
import pytest

import chainrules
from chainrules import ad
from chainrules.ad import Tracer

rng = np.random.default_rng(0)
X = rng.standard_normal((8, 4))
W = rng.standard_normal(4)
V = np.arange(4.0)


def _strict():
    xs = pytest.importorskip("array_api_strict")
    return xs.asarray, lambda a: np.asarray(a._array), type(xs.asarray(0.0))


def _torch():
    torch = pytest.importorskip("torch")
    return torch.tensor, lambda a: a.detach().numpy(), torch.Tensor


def _jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    return jnp.asarray, np.asarray, jax.Array


LIBRARIES = {"array_api_strict": _strict, "torch": _torch, "jax": _jax}


@pytest.fixture(params=list(LIBRARIES))
def lib(request):
    if request.param == "jax":
        jax = pytest.importorskip("jax")
        before = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", True)
        try:
            yield LIBRARIES["jax"]()
        finally:
            jax.config.update("jax_enable_x64", before)
    else:
        yield LIBRARIES[request.param]()


def loss(x, w):
    xp = chainrules.array_namespace(x, w)
    return xp.sum(xp.tanh(x @ w) ** 2)


def lse(w):
    xp = chainrules.array_namespace(w)
    m = xp.max(w)
    return m + xp.log(xp.sum(xp.exp(w - m)))


def test_gradients_with_respect_to_each_and_both_arguments(lib):
    conv, back, array_type = lib
    ref_x, ref_w = ad.grad(loss, argnums=(0, 1))(X, W)
    g_x, g_w = ad.grad(loss, argnums=(0, 1))(conv(X), conv(W))
    assert isinstance(g_x, array_type) and isinstance(g_w, array_type)
    np.testing.assert_allclose(back(g_x), ref_x, rtol=1e-12)
    np.testing.assert_allclose(back(g_w), ref_w, rtol=1e-12)
    np.testing.assert_allclose(back(ad.grad(loss, argnums=1)(conv(X), conv(W))), ref_w,
                               rtol=1e-12)
    np.testing.assert_allclose(back(ad.grad(loss, argnums=0)(conv(X), conv(W))), ref_x,
                               rtol=1e-12)


def test_a_tracer_reports_its_librarys_namespace(lib):
    conv, back, array_type = lib
    w = conv(W)
    expected = chainrules.array_namespace(w)
    seen = {}

    def f(w):
        seen["type"] = type(w)
        seen["xp"] = chainrules.array_namespace(w)
        seen["own"] = w.__array_namespace__()
        return seen["xp"].sum(w * w)

    np.testing.assert_allclose(back(ad.grad(f)(w)), 2 * W)
    assert seen == {"type": Tracer, "xp": expected, "own": expected}


def test_indexing_a_traced_array(lib):
    conv, back, array_type = lib

    def f(x):
        xp = chainrules.array_namespace(x)
        return xp.sum(x[:, :2] ** 2) + xp.sum(x[1, ...])

    expected = np.zeros_like(X)
    expected[:, :2] = 2 * X[:, :2]
    expected[1] += 1.0
    np.testing.assert_allclose(back(ad.grad(f)(conv(X))), expected, rtol=1e-12)


def test_operators_and_matmul_with_constants(lib):
    conv, back, array_type = lib
    x = conv(X)

    def f(w):
        xp = chainrules.array_namespace(w)
        return xp.sum((x @ w) * 2.0 - 1.0) + xp.sum(w @ x.T)

    np.testing.assert_allclose(back(ad.grad(f)(conv(W))), 3 * X.sum(0), rtol=1e-12)
    (w_bar,) = ad.vjp(lambda w: loss(x, w), conv(W))[1](1.0)
    assert isinstance(w_bar, array_type)
    np.testing.assert_allclose(back(w_bar), ad.grad(loss, argnums=1)(X, W), rtol=1e-12)


def test_jvp_returns_the_librarys_types(lib):
    conv, back, array_type = lib
    y, y_dot = ad.jvp(lambda w: loss(conv(X), w), (conv(W),), (conv(V),))
    ref_y, ref_dot = ad.jvp(lambda w: loss(X, w), (W,), (V,))
    assert isinstance(y, array_type) and isinstance(y_dot, array_type)
    np.testing.assert_allclose(back(y_dot), ref_dot, rtol=1e-12)
    value, g = ad.value_and_grad(lse)(conv(W))
    assert isinstance(value, array_type)
    np.testing.assert_allclose(back(g), ad.grad(lse)(W), rtol=1e-12)


def test_jacobian_of_a_foreign_input(lib):
    conv, back, array_type = lib

    def f(w):
        return chainrules.array_namespace(w).tanh(w) * 2.0

    for mode in ("forward", "reverse"):
        jac = ad.jacobian(f, mode=mode)(conv(W))
        assert isinstance(jac, array_type)
        np.testing.assert_allclose(back(jac), ad.jacobian(f, mode=mode)(W), rtol=1e-12)


def test_torch_hessian_and_hvp_match_torch():
    torch = pytest.importorskip("torch")
    w = torch.tensor(W)
    h = ad.hessian(lse)(w)
    assert isinstance(h, torch.Tensor)
    np.testing.assert_allclose(h.numpy(), torch.func.hessian(torch.logsumexp)(w, 0).numpy(),
                               rtol=1e-10, atol=1e-14)
    _, hvp = ad.jvp(ad.grad(lse), (w,), (torch.tensor(V),))
    assert float(hvp.abs().sum()) > 0
    np.testing.assert_allclose(hvp.numpy(), h.numpy() @ V, rtol=1e-10, atol=1e-14)


def test_torch_loss_with_numpy_style_methods():
    torch = pytest.importorskip("torch")

    def f(x, w):
        return ((x @ w) ** 2).sum(axis=0) + (x * x).mean()

    ref_x, ref_w = ad.grad(f, argnums=(0, 1))(X, W)
    g_x, g_w = ad.grad(f, argnums=(0, 1))(torch.tensor(X), torch.tensor(W))
    np.testing.assert_allclose(g_x.numpy(), ref_x, rtol=1e-12)
    np.testing.assert_allclose(g_w.numpy(), ref_w, rtol=1e-12)


def test_jax_gradient_matches_jax_grad(lib):
    jax = pytest.importorskip("jax")
    conv, back, array_type = lib
    if array_type is not jax.Array:
        pytest.skip("JAX only")
    g = ad.grad(lse)(conv(W))
    np.testing.assert_allclose(back(g), np.asarray(jax.grad(jax.nn.logsumexp)(conv(W))),
                               rtol=1e-12)


def test_jax_hvp_and_hessian_match_jax(jax):
    # the HVP (jvp of grad) of an array-API logsumexp was all zeros on JAX arrays
    jnp = jax.numpy
    w, v = jnp.asarray(W), jnp.asarray(V)
    _, hvp = ad.jvp(ad.grad(lse), (w,), (v,))
    _, ref = jax.jvp(jax.grad(jax.nn.logsumexp), (w,), (v,))
    assert isinstance(hvp, jax.Array) and float(jnp.abs(hvp).sum()) > 0
    np.testing.assert_allclose(np.asarray(hvp), np.asarray(ref), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(np.asarray(ad.hessian(lse)(w)),
                               np.asarray(jax.hessian(jax.nn.logsumexp)(w)),
                               rtol=1e-10, atol=1e-14)


def test_numpy_style_keywords_reach_the_namespace_rule(jax):
    # np.sum(x, axis=...) on a JAX array: the keyword stays a keyword (jnp.sum's rule
    # takes axis by keyword only)
    w = jax.numpy.asarray(W)
    _, y_dot = ad.jvp(lambda v: np.sum(v * v, axis=(0,)), (w,), (w,))
    np.testing.assert_allclose(float(y_dot), 2 * float(W @ W), rtol=1e-12)
