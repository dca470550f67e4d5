"""Second derivatives through the ODE rules (``rules/scipy/integrate_ode.py``) w.r.t.
``y0``, parameters passed through ``args=`` and numbers and arrays a closure captures:
``hessian`` (forward over reverse), ``jvp`` of ``grad``, ``jvp`` of ``jvp`` and ``vjp``
of ``grad``, against central differences of the AD's own gradient and against JAX's
odeint (traced values inside other captured objects are refused by name)."""

import math
import re

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from chainrules.ad import TracerConversionError, grad, hessian, jvp, vjp  # noqa: E402
from chainrules.rules.scipy.integrate import SolverError  # noqa: E402

TS = np.array([0.0, 0.4, 1.0])
Y0 = np.array([1.0, 2.0])
P = np.array([0.7, 0.3])
V = np.array([1.0, -0.5])
TIGHT = {"rtol": 1e-10, "atol": 1e-12}


def rhs(y, t, a, b):
    return -a * y * y + b * np.sin(t)


def odeint_loss(p):
    return np.sum(si.odeint(rhs, Y0, TS, args=(p[0], p[1]), **TIGHT) ** 2)


def solve_ivp_loss(p):
    res = si.solve_ivp(lambda t, y, a, b: rhs(y, t, a, b), (0.0, 1.0), Y0, t_eval=TS[1:],
                       args=(p[0], p[1]), **TIGHT)
    return np.sum(res.y ** 2)


def gradient_differences(f, p, h=1e-5):
    g = grad(f)
    return np.stack([(g(p + h * e) - g(p - h * e)) / (2 * h) for e in np.eye(len(p))])


def jax_hessian(p):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from jax.experimental.ode import odeint

    jax.config.update("jax_enable_x64", True)

    def loss(p):
        Y = odeint(lambda y, t, a, b: -a * y * y + b * jnp.sin(t), jnp.asarray(Y0),
                   jnp.asarray(TS), p[0], p[1], rtol=1e-12, atol=1e-12)
        return jnp.sum(Y ** 2)

    # (its odeint is a custom_vjp: reverse over reverse)
    return np.asarray(jax.jacrev(jax.grad(loss))(jnp.asarray(p)))


@pytest.mark.parametrize("loss", [odeint_loss, solve_ivp_loss])
def test_hessian_wrt_args(loss):
    H = hessian(loss)(P)
    assert np.allclose(H, gradient_differences(loss, P), rtol=1e-6, atol=1e-8)
    if loss is odeint_loss:  # (JAX's reverse over reverse of its odeint takes ~20 s)
        assert np.allclose(H, jax_hessian(P), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("loss", [odeint_loss, solve_ivp_loss])
def test_jvp_of_grad_jvp_of_jvp_and_vjp_of_grad_wrt_args(loss):
    Hv = gradient_differences(loss, P) @ V
    assert np.allclose(jvp(grad(loss), (P,), (V,))[1], Hv, rtol=1e-6, atol=1e-8)
    assert np.allclose(vjp(grad(loss), P)[1](V)[0], Hv, rtol=1e-6, atol=1e-8)
    vHv = jvp(lambda q: jvp(loss, (q,), (V,))[1], (P,), (V,))[1]
    assert vHv == pytest.approx(V @ Hv, rel=1e-6)


def test_hessian_wrt_y0_and_args_together():
    def loss(w):
        Y = si.odeint(rhs, w[:2], TS, args=(w[2], w[3]), **TIGHT)
        return np.sum(Y[1:] ** 3)

    w = np.concatenate([Y0, P])
    assert np.allclose(hessian(loss)(w), gradient_differences(loss, w), rtol=1e-6, atol=1e-8)


def closure_loss(solver):
    def loss(p):
        if solver == "odeint":
            Y = si.odeint(lambda y, t: -p[0] * y * y + p[1] * np.sin(t), Y0, TS, **TIGHT)
        else:
            Y = si.solve_ivp(lambda t, y: -p[0] * y * y + p[1] * np.sin(t), (0.0, 1.0), Y0,
                             t_eval=TS, **TIGHT).y
        return np.sum(Y ** 2)
    return loss


@pytest.mark.parametrize("solver", ["odeint", "solve_ivp"])
def test_second_derivatives_wrt_a_closure(solver):
    # the captured values are passed to the sensitivity solve as parameters
    loss = closure_loss(solver)
    H = gradient_differences(loss, P)
    assert np.allclose(hessian(loss)(P), H, rtol=1e-6, atol=1e-8)
    vHv = jvp(lambda q: jvp(loss, (q,), (V,))[1], (P,), (V,))[1]
    assert vHv == pytest.approx(V @ H @ V, rel=1e-6)


def test_second_derivative_wrt_values_captured_in_a_container():
    # a right-hand side that takes a batch of states: the batched collocation runs on the
    # outer AD's traced values, and it follows them into the dict
    def loss(p):
        rates = {"a": p[0], "b": p[1]}
        Y = si.odeint(lambda y, t: -rates["a"] * y * y + rates["b"], Y0, TS, **TIGHT)
        return np.sum(Y ** 2)

    def same_by_args(p):
        Y = si.odeint(lambda y, t, a, b: -a * y * y + b, Y0, TS, args=(p[0], p[1]), **TIGHT)
        return np.sum(Y ** 2)

    assert np.allclose(hessian(loss)(P), hessian(same_by_args)(P), rtol=1e-8, atol=0.0)


def test_second_derivative_wrt_a_captured_container_error():
    # point by point (math.cos of t: no batch), values in a container are refused
    def loss(p):
        rates = {"a": p[0], "b": p[1]}
        Y = si.odeint(lambda y, t: -rates["a"] * y * y + rates["b"] * math.cos(t), Y0, TS,
                      **TIGHT)
        return np.sum(Y ** 2)

    assert np.isfinite(grad(loss)(P)).all()  # first derivatives follow the dict
    with pytest.raises(SolverError, match=re.escape(
            "scipy.integrate.odeint: a second derivative w.r.t. traced values the "
            "right-hand side captures inside dict 'rates' is not implemented; capture "
            "numbers and arrays, or pass them as parameters through args=")):
        hessian(loss)(P)


def test_inner_closure_under_an_outer_derivative_is_never_a_silent_zero():
    # d/dy0 of (d/dp with p captured): the AD reaches odeint's rule at the outer level
    # first, where p (the inner derivative's) is not known; it must raise, not drop p
    def inner(p, y0):
        return np.sum(si.odeint(lambda y, t: -p * y * y, y0, TS, **TIGHT) ** 2)

    with pytest.raises(TracerConversionError):
        jvp(lambda y: grad(inner)(0.7, y), (Y0,), (V,))
