"""NumPy rules on the edge inputs of issue #26 (values checked against finite differences
through the reference AD, and against JAX in tests/oracles/test_peer_edges.py)."""

import warnings

import numpy as np
import pytest

from chainrules import NoTangent, ad, frule, rrule


def test_real_of_complex_forward_over_reverse_is_complex():
    # the pullback of real maps into the complex input's space: so does its tangent
    z = np.array([1.0 + 2j, -0.5 + 0.3j])
    z_dot = np.array([1.0 + 1j, 2.0 - 1j])

    def grad(v):
        return ad.grad(lambda w: np.sum(np.real(w) ** 2))(v)

    g, g_dot = ad.jvp(grad, (z,), (z_dot,))
    assert np.iscomplexobj(g) and np.iscomplexobj(g_dot)
    np.testing.assert_allclose(g, 2 * np.real(z) + 0j)
    np.testing.assert_allclose(g_dot, 2 * np.real(z_dot) + 0j)


def test_matrix_norm_2_second_order_has_no_writes():
    # the Hessian-vector product of ||A||_2 by forward over reverse, against differences
    # of the gradient (the rule once wrote into its weights, which a trace cannot follow)
    rng = np.random.default_rng(3)
    a, a_dot = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))

    def grad(v):
        return ad.grad(lambda w: np.linalg.norm(w, 2))(v)

    _, hvp = ad.jvp(grad, (a,), (a_dot,))
    h = 1e-6
    fd = (grad(a + h * a_dot) - grad(a - h * a_dot)) / (2 * h)
    np.testing.assert_allclose(hvp, fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("f", "args", "kwargs"), [
    (np.nanquantile, (np.zeros((0, 3)), 0.5), {"axis": 0}),
    (np.nanpercentile, (np.zeros((3, 0)), np.array([25.0, 50.0])), {"axis": 1}),
    (np.linalg.pinv, (np.zeros((0, 3)),), {"hermitian": True}),
    (np.linalg.pinv, (np.zeros((2, 0)),), {}),
], ids=["nanquantile", "nanpercentile", "pinv-hermitian", "pinv"])
def test_empty_inputs_give_zero_derivatives(f, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "mean of empty slice"
        y, pullback = rrule(f, *args, **kwargs)
        x_bar = pullback(np.ones_like(y))[1]
        dargs = (NoTangent(), np.ones_like(args[0])) + (NoTangent(),) * (len(args) - 1)
        _, y_dot = frule(dargs, f, *args, **kwargs)
    assert np.shape(x_bar) == args[0].shape
    assert np.shape(y_dot) == np.shape(y) and not np.any(y_dot)
