"""Second derivatives of array-API code on array_api_strict (issue 27): its operators
refused a traced operand (``const * tracer`` raised ``TypeError`` instead of returning
NotImplemented) and its ``ones_like`` read the data of a traced array, so ``hessian`` and
``jvp`` of ``grad`` raised. Checked against the NumPy answer (itself checked against JAX
and PyTorch in ``test_against_references``), and on torch and JAX arrays too."""

from __future__ import annotations

import numpy as np
import pytest

import chainrules
from chainrules import ad

rng = np.random.default_rng(1)
X = rng.standard_normal((8, 4))
W = rng.standard_normal(4)
V = np.arange(4.0) + 1.0


def loss(x, w):
    xp = chainrules.array_namespace(x, w)
    return xp.sum(xp.tanh(x @ w) ** 2)


def lse(w):
    xp = chainrules.array_namespace(w)
    m = xp.max(w)
    return m + xp.log(xp.sum(xp.exp(w - m)))


def mixed(w):
    xp = chainrules.array_namespace(w)
    return (xp.mean(w / (1.0 + w * w)) + xp.sum(xp.where(w > 0, w ** 3, xp.sin(w)))
            + xp.prod(xp.cos(w)) + xp.sum(xp.sqrt(w * w + 1.0)) / 2.0)


def _strict():
    xs = pytest.importorskip("array_api_strict")
    return xs.asarray, lambda a: np.asarray(a._array), type(xs.asarray(0.0))


def _torch():
    torch = pytest.importorskip("torch")
    return torch.tensor, lambda a: a.detach().numpy(), torch.Tensor


def _jax():
    jax = pytest.importorskip("jax")
    return jax.numpy.asarray, np.asarray, jax.Array


@pytest.fixture(params=["array_api_strict", "torch", "jax"])
def lib(request):
    if request.param == "jax":
        jax = pytest.importorskip("jax")
        before = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", True)
        try:
            yield _jax()
        finally:
            jax.config.update("jax_enable_x64", before)
    else:
        yield {"array_api_strict": _strict, "torch": _torch}[request.param]()


@pytest.mark.parametrize("name", ["lse", "mixed", "loss_w", "loss_x"])
def test_hessian_and_hvp_match_numpy(lib, name):
    conv, back, array_type = lib
    if name == "loss_x":
        w_c = conv(W)
        f, ref_f, at = (lambda x: loss(x, w_c)), (lambda x: loss(x, W)), X
    elif name == "loss_w":
        x_c = conv(X)
        f, ref_f, at = (lambda w: loss(x_c, w)), (lambda w: loss(X, w)), W
    else:
        f = ref_f = {"lse": lse, "mixed": mixed}[name]
        at = W
    ref = ad.hessian(ref_f)(at)
    h = ad.hessian(f)(conv(at))
    assert isinstance(h, array_type)
    np.testing.assert_allclose(back(h), ref, rtol=1e-10, atol=1e-13)
    v = np.linspace(1.0, 2.0, at.size).reshape(at.shape)
    _, hv = ad.jvp(ad.grad(f), (conv(at),), (conv(v),))
    assert isinstance(hv, array_type)
    expected = (ref.reshape(at.size, at.size) @ v.ravel()).reshape(at.shape)
    np.testing.assert_allclose(back(hv), expected, rtol=1e-10, atol=1e-13)


def test_mixed_second_derivative_of_two_arguments(lib):
    conv, back, array_type = lib
    ref = ad.jacobian(ad.grad(loss, argnums=1), argnums=0)(X, W)
    got = ad.jacobian(ad.grad(loss, argnums=1), argnums=0)(conv(X), conv(W))
    np.testing.assert_allclose(back(got), ref, rtol=1e-10, atol=1e-13)


def test_grad_of_grad_of_a_scalar_function_on_strict_arrays():
    conv, back, _ = _strict()

    def f(w):
        xp = chainrules.array_namespace(w)
        return xp.sum(w * xp.exp(w))

    def g(w):  # the first derivative's sum: its gradient is a Hessian row sum
        xp = chainrules.array_namespace(w)
        return xp.sum(ad.grad(f)(w))

    np.testing.assert_allclose(back(ad.grad(g)(conv(W))), (2 + W) * np.exp(W), rtol=1e-12)


def test_strict_operators_still_refuse_other_operands():
    xs = pytest.importorskip("array_api_strict")
    a = xs.asarray([1.0, 2.0])
    ad.grad(lse)(a)  # the AD has met the namespace: its operators give way to tracers
    with pytest.raises(TypeError, match="Expected Array or Python scalar"):
        a + np.float64(1.0)
    with pytest.raises(TypeError, match="Expected Array or Python scalar"):
        a * object()
