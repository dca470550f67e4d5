"""ODE rules' reverse mode by Chebyshev collocation of the sensitivities
(``rules/scipy/integrate_ode.py``): against JAX's odeint, central differences and the
adjoint the rules fall back to, on a problem the collocation resolves and on ones it
hands to the adjoint."""

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from chainrules.ad import grad  # noqa: E402
from chainrules.rules.scipy import _chebyshev as cheb  # noqa: E402
from chainrules.rules.scipy import integrate_ode  # noqa: E402

TS = np.linspace(0.0, 10.0, 21)
P = np.array([1.5, 1.0, 3.0, 1.0, 1.0, 1.0]) * 1.05
DATA = np.stack([1.0 + 0.5 * np.sin(TS), 1.0 + 0.5 * np.cos(TS)], axis=1)
TIGHT = {"rtol": 1e-8, "atol": 1e-10}


def lotka_volterra(y, t, a, b, c, d):
    x, z = y[0], y[1]
    return np.array([a * x - b * x * z, -c * z + d * x * z])


def odeint_loss(p):
    Y = si.odeint(lotka_volterra, p[4:], TS, args=(p[0], p[1], p[2], p[3]), **TIGHT)
    return np.sum((Y - DATA) ** 2)


def solve_ivp_loss(p):
    res = si.solve_ivp(lambda t, y: lotka_volterra(y, t, p[0], p[1], p[2], p[3]), (0.0, 10.0),
                       p[4:], t_eval=TS, **TIGHT)
    return np.sum((res.y.T - DATA) ** 2)


def central(f, p, h=1e-6):
    e = np.eye(len(p)) * h
    return np.array([(f(p + e[i]) - f(p - e[i])) / (2 * h) for i in range(len(p))])


def jax_lotka_volterra_gradient(p):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from jax.experimental.ode import odeint

    jax.config.update("jax_enable_x64", True)

    def rhs(y, t, a, b, c, d):
        return jnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])

    def loss(p):
        Y = odeint(rhs, p[4:], jnp.asarray(TS), p[0], p[1], p[2], p[3], rtol=1e-10,
                   atol=1e-12)
        return jnp.sum((Y - jnp.asarray(DATA)) ** 2)

    return np.asarray(jax.grad(loss)(jnp.asarray(p)))


@pytest.fixture
def adjoint_calls(monkeypatch):
    calls = []
    original = integrate_ode._adjoint

    def counted(*args, **kwargs):
        calls.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(integrate_ode, "_adjoint", counted)
    return calls


@pytest.mark.parametrize("loss", [odeint_loss, solve_ivp_loss])
def test_lotka_volterra_gradient_against_jax_and_differences(loss, adjoint_calls):
    g = grad(loss)(P)
    assert adjoint_calls == []  # the collocation resolved it
    scale = np.max(np.abs(g))
    assert np.max(np.abs(g - jax_lotka_volterra_gradient(P))) <= 1e-5 * scale
    assert np.max(np.abs(g - central(loss, P))) <= 1e-5 * scale


def test_collocation_agrees_with_the_adjoint(monkeypatch):
    # (both carry the solve's error, about 1e-7 of the largest entry at rtol 1e-8: the
    # collocation reads the state at its points from the forward solve)
    g = grad(odeint_loss)(P)
    monkeypatch.setattr(integrate_ode, "_MAX_UNKNOWNS", 0)  # always the adjoint
    assert np.max(np.abs(grad(odeint_loss)(P) - g)) <= 1e-6 * np.max(np.abs(g))


def kinked_loss(k):
    # |y| has a kink where y crosses zero: not resolved by polynomials, so the
    # collocation halves the interval until its depth limit and hands over
    Y = si.odeint(lambda y, t: -k * np.abs(y) + np.cos(3.0 * t), np.array([0.2]),
                  np.linspace(0.0, 6.0, 7), rtol=1e-10, atol=1e-12)
    return np.sum(Y ** 2)


def test_unresolved_sensitivities_fall_back_to_the_adjoint(adjoint_calls):
    g = grad(kinked_loss)(0.8)
    assert len(adjoint_calls) == 1
    assert g == pytest.approx(central(lambda k: kinked_loss(k[0]), np.array([0.8]))[0],
                              rel=1e-5)


def test_fast_oscillation_resolved_or_handed_over():
    # the Jacobian is constant but the sensitivities oscillate 16 times: the check on
    # S (not only on the Jacobians) must catch an under-resolved collocation
    def loss(w):
        Y = si.odeint(lambda y, t: np.array([y[1], -w * w * y[0]]), np.array([1.0, 0.0]),
                      np.linspace(0.0, 10.0, 5), rtol=1e-10, atol=1e-12)
        return np.sum(Y[:, 0])

    w = 10.0
    want = np.sum(-np.linspace(0.0, 10.0, 5) * np.sin(w * np.linspace(0.0, 10.0, 5)))
    assert grad(loss)(w) == pytest.approx(want, rel=1e-6)


def test_chebyshev_collocation_solves_a_linear_problem():
    a, b = 0.5, 3.0
    t = cheb.points(a, b, 16)
    S = cheb.solve_linear(a, b, np.full((17, 1, 1), -2.0), t.reshape(-1, 1, 1),
                          np.array([[1.0]]))[:, 0, 0]
    exact = (1.0 - (a / 2 - 0.25)) * np.exp(-2.0 * (t - a)) + t / 2 - 0.25
    assert np.max(np.abs(S - exact)) < 1e-12
    assert cheb.interpolate(a, b, S, np.array([1.7]))[0] == pytest.approx(
        (1.0 - (a / 2 - 0.25)) * np.exp(-2.0 * 1.2) + 1.7 / 2 - 0.25, rel=1e-12)
    assert cheb.resolved(np.sin(t), 1e-10) and not cheb.resolved(np.sin(8.0 * t), 1e-10)
