"""Classic numerical codes written the usual NumPy way (preallocated arrays, slice
updates, in-place sweeps) differentiate to the right value: reverse mode and forward
mode against the project's finite differences, and a Hessian-vector product
(forward over reverse) against finite differences of the gradient."""

from __future__ import annotations

import numpy as np

from chainrules.ad import grad, jvp
from chainrules.testing import fd_jvp, fd_vjp


def check_fd(f, x, v, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(grad(f)(x), fd_vjp(f, 1.0, (x,))[0], rtol=rtol, atol=atol)
    y, y_dot = jvp(f, (x,), (v,))
    np.testing.assert_allclose(y, f(x), rtol=1e-12)
    np.testing.assert_allclose(y_dot, fd_jvp(f, (x,), (v,)), rtol=rtol, atol=atol)
    hvp = jvp(grad(f), (x,), (v,))[1]
    np.testing.assert_allclose(hvp, fd_jvp(grad(f), (x,), (v,)), rtol=1e-5, atol=1e-7)


RNG = np.random.default_rng(0)


def heat_explicit(params):
    # u_t = k u_xx, explicit Euler with slice updates; params = (k, amplitude, shift)
    k, amp, shift = params[0], params[1], params[2]
    n = 12
    grid = np.linspace(0.0, 1.0, n)
    u = amp * np.sin(np.pi * grid) + shift * grid * (1.0 - grid)
    r = k * 0.4
    for _ in range(15):
        u[1:-1] += r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u[0] = 0.0
        u[-1] = 0.0
    return np.sum(u ** 2)


def test_heat_equation_slice_updates():
    check_fd(heat_explicit, np.array([0.8, 1.3, 0.4]), np.array([0.3, -0.2, 0.5]))


def rk4_trajectory(params):
    # a damped oscillator with a preallocated trajectory
    def rhs(y, w, c):
        d = np.empty(2)
        d[0] = y[1]
        d[1] = -w * w * y[0] - c * y[1]
        return d

    w, c = params[0], params[1]
    dt, steps = 0.1, 20
    traj = np.zeros((steps + 1, 2))
    traj[0] = params[2:]
    for i in range(steps):
        y = traj[i]
        k1 = rhs(y, w, c)
        k2 = rhs(y + 0.5 * dt * k1, w, c)
        k3 = rhs(y + 0.5 * dt * k2, w, c)
        k4 = rhs(y + dt * k3, w, c)
        traj[i + 1] = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(traj[:, 0] ** 2) + traj[-1, 1]


def test_rk4_preallocated_trajectory():
    check_fd(rk4_trajectory, np.array([1.5, 0.3, 1.0, 0.2]),
             np.array([0.1, -0.3, 0.2, 0.4]))


def thomas(a, b, c, d):
    """The tridiagonal solve, in place on copies of the diagonals."""
    n = len(d)
    b = b.copy()
    d = d.copy()
    for i in range(1, n):
        w = a[i] / b[i - 1]
        b[i] -= w * c[i - 1]
        d[i] -= w * d[i - 1]
    x = np.empty(n)
    x[-1] = d[-1] / b[-1]
    for i in range(n - 2, -1, -1):
        x[i] = (d[i] - c[i] * x[i + 1]) / b[i]
    return x


def thomas_loss(params):
    n = 6
    a = np.full(n, -1.0) * params[0]
    b = 4.0 + params[1] * np.arange(n)
    c = np.full(n, -1.0) + params[2]
    d = np.sin(np.arange(n) * params[3])
    return np.sum(thomas(a, b, c, d) ** 2)


def test_thomas_solver_in_place():
    p = np.array([0.9, 0.3, 0.2, 0.7])
    # the solver is right (against a dense solve)
    n = 6
    a, b, c = np.full(n, -0.9), 4.0 + 0.3 * np.arange(n), np.full(n, -0.8)
    d = np.sin(np.arange(n) * 0.7)
    dense = np.diag(b) + np.diag(a[1:], -1) + np.diag(c[:-1], 1)
    np.testing.assert_allclose(thomas(a, b, c, d), np.linalg.solve(dense, d), rtol=1e-12)
    check_fd(thomas_loss, p, np.array([0.2, -0.1, 0.3, 0.5]))


def kalman_loglik(params):
    # a 1-D random walk observed with noise; preallocated means, variances, innovations
    q, r = params[0] ** 2, params[1] ** 2
    obs = np.array([0.3, 0.1, 0.5, 0.9, 0.7, 1.1, 1.0])
    t = len(obs)
    means = np.zeros(t)
    variances = np.empty(t)
    loglik = np.zeros(1)
    m, p = params[2], 1.0
    for i in range(t):
        p = p + q
        s = p + r
        gain = p / s
        innovation = obs[i] - m
        loglik[0] -= 0.5 * (np.log(2 * np.pi * s) + innovation ** 2 / s)
        m = m + gain * innovation
        p = (1.0 - gain) * p
        means[i] = m
        variances[i] = p
    return loglik[0] + 0.1 * np.sum(means ** 2) + np.sum(variances)


def test_kalman_filter_preallocated():
    check_fd(kalman_loglik, np.array([0.4, 0.6, 0.1]), np.array([0.2, -0.3, 0.5]))


def gauss_seidel(params):
    n = 5
    a = (np.diag(np.full(n, 4.0)) + np.diag(np.full(n - 1, -1.0), 1)
         + np.diag(np.full(n - 1, -1.0), -1))
    a[0, 0] += params[0]
    b = np.cos(np.arange(n) * params[1])
    u = np.zeros(n)
    for _ in range(30):
        for i in range(n):
            u[i] = (b[i] - a[i, :i] @ u[:i] - a[i, i + 1:] @ u[i + 1:]) / a[i, i]
    return np.sum(u ** 2)


def test_gauss_seidel_sweeps():
    check_fd(gauss_seidel, np.array([0.5, 0.8]), np.array([0.3, -0.7]))


def softmax(z):
    z = z.copy()
    z -= z.max()
    e = np.exp(z)
    e /= e.sum()
    return e


def test_softmax_with_in_place_shift():
    w = np.array([0.5, -1.0, 2.0, 0.3])
    check_fd(lambda z: np.sum(softmax(z) * w) + np.sum(softmax(z) ** 2),
             np.array([0.2, 1.5, -0.3, 0.9]), np.array([0.1, 0.4, -0.2, 0.3]))


def scatter_add_loss(params):
    bins = np.array([0, 2, 1, 2, 0, 3, 2])
    values = np.tanh(params * np.arange(1, 8))
    totals = np.zeros(4)
    np.add.at(totals, bins, values * params)
    return np.sum(totals ** 2)


def test_scatter_add_with_add_at():
    check_fd(scatter_add_loss, np.linspace(0.1, 0.7, 7), np.linspace(-0.3, 0.4, 7))


def matrix_entry_by_entry(params):
    n = 3
    m = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            m[i, j] = np.exp(-params[0] * (i - j) ** 2) + (i == j) * params[1]
    rhs = np.array([1.0, params[2], 2.0])
    return np.sum(np.linalg.solve(m, rhs) ** 2)


def test_matrix_built_entry_by_entry_then_solved():
    check_fd(matrix_entry_by_entry, np.array([0.7, 1.5, -0.4]), np.array([0.2, 0.5, -0.3]))
