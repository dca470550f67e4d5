"""Pullbacks through Sylvester solves of real matrices with a complex right-hand side or
cotangent (``sqrtm``, ``solve_sylvester``, ``solve_continuous_lyapunov``): LAPACK's
complex ``?trsyl`` must never be handed a real quasi-triangular Schur form."""

import numpy as np
import pytest

pytest.importorskip("scipy")

import scipy.linalg as sla

from chainrules import frule, rrule, unthunk
from chainrules.core import NoTangent


def _bars(pullback, y_bar):
    return [np.asarray(unthunk(t)) for t in pullback(y_bar)[1:]]


def _problems(rng):
    n = 4
    a = rng.standard_normal((n, n))  # real, with complex eigenvalue pairs
    b = rng.standard_normal((n, n)) + 3 * np.eye(n)
    q = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    return [(sla.sqrtm, (a,)), (sla.solve_sylvester, (a, b, q)),
            (sla.solve_continuous_lyapunov, (a, q))]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_pullback_is_real_linear_in_a_complex_cotangent(k):
    rng = np.random.default_rng(k)
    f, args = _problems(rng)[k]
    y, pullback = rrule(f, *args)
    assert np.iscomplexobj(y)
    re, im = rng.standard_normal(y.shape), rng.standard_normal(y.shape)
    both = _bars(pullback, re + 1j * im)
    parts = [r + i for r, i in zip(_bars(pullback, re + 0j), _bars(pullback, 1j * im))]
    for got, want in zip(both, parts):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("k", [1, 2])
def test_cotangent_of_q_is_complex_linear(k):
    # y is linear in q, so q_bar(re + i im) = q_bar(re) + i q_bar(im)
    rng = np.random.default_rng(10 + k)
    f, args = _problems(rng)[k]
    y, pullback = rrule(f, *args)
    re, im = rng.standard_normal(y.shape), rng.standard_normal(y.shape)
    got = _bars(pullback, re + 1j * im)[-1]
    want = _bars(pullback, re + 0j)[-1] + 1j * _bars(pullback, im + 0j)[-1]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_solve_sylvester_real_matrices_complex_q_solves_the_equation():
    # the rule's own Bartels-Stewart solve (SciPy's solve_sylvester hands the real Schur
    # forms to ztrsyl for a complex q); its pullback is the adjoint of that solve
    rng = np.random.default_rng(3)
    a, b, q = _problems(rng)[1][1]
    y, pullback = rrule(sla.solve_sylvester, a, b, q)
    np.testing.assert_allclose(a @ y + y @ b, q, atol=1e-10)
    y_bar = rng.standard_normal(y.shape) + 1j * rng.standard_normal(y.shape)
    q_bar = np.asarray(unthunk(pullback(y_bar)[3]))
    # <y_bar, S^-1 dq> = <S^-H y_bar, dq>: check along a random dq with the frule
    dq = rng.standard_normal(q.shape) + 1j * rng.standard_normal(q.shape)
    _, y_dot = frule((NoTangent(), np.zeros_like(a), np.zeros_like(b), dq),
                     sla.solve_sylvester, a, b, q)
    np.testing.assert_allclose(a @ y_dot + y_dot @ b, dq, atol=1e-10)
    lhs = np.sum(np.conj(y_bar) * y_dot).real
    rhs = np.sum(np.conj(q_bar) * dq).real
    np.testing.assert_allclose(lhs, rhs, rtol=1e-10)


def test_sqrtm_frule_of_real_matrix_with_complex_root_solves_the_sylvester_equation():
    rng = np.random.default_rng(4)
    a = _problems(rng)[0][1][0]
    a_dot = rng.standard_normal(a.shape)
    y, y_dot = frule((NoTangent(), a_dot), sla.sqrtm, a)
    np.testing.assert_allclose(y @ y_dot + y_dot @ y, a_dot, atol=1e-9)


def _real_problems(rng):
    n = 4
    a = rng.standard_normal((n, n))
    root = a + 3 * np.eye(n)  # complex eigenvalue pairs: 2x2 blocks in the real Schur form
    b = rng.standard_normal((n, n)) + 3 * np.eye(n)
    q = rng.standard_normal((n, n))
    return [(sla.sqrtm, (root @ root,)), (sla.solve_sylvester, (a + 3 * np.eye(n), b, q)),
            (sla.solve_continuous_lyapunov, (a - 3 * np.eye(n), q))]


@pytest.mark.parametrize("k", [0, 1, 2])
def test_real_problem_complex_cotangent_projects_to_the_real_part(k):
    # the rule's own pullback (the checking wrapper refuses a complex cotangent of a real
    # output): its real cotangents are those of the cotangent's real part, which needs
    # the complex cotangent solved exactly over the real quasi-triangular Schur forms
    from chainrules.core._validate import unwrap_pullback

    rng = np.random.default_rng(20 + k)
    f, args = _real_problems(rng)[k]
    y, pullback = rrule(f, *args)
    assert not np.iscomplexobj(y)
    pullback = unwrap_pullback(pullback)
    re, im = rng.standard_normal(y.shape), rng.standard_normal(y.shape)
    for got, want in zip(_bars(pullback, re + 1j * im), _bars(pullback, re)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
