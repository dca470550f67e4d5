"""The ODE rules' batched collocation (``rules/scipy/_ode_batched.py``): the right-hand
side traced once on all the collocation points when it takes a batch of states, and
point by point when it does not (an exception, values or derivatives that differ from
the plain calls'), with the same gradient either way."""

import math

import numpy as np
import pytest

si = pytest.importorskip("scipy.integrate")

from chainrules import NoTangent, rrule  # noqa: E402
from chainrules.ad import grad  # noqa: E402
from chainrules.rules.scipy import _ode_batched, integrate_ode  # noqa: E402

TS = np.linspace(0.0, 4.0, 9)
TIGHT = {"rtol": 1e-9, "atol": 1e-11}


def central(f, p, h=1e-6):
    e = np.eye(len(p)) * h
    return np.array([(f(p + e[i]) - f(p - e[i])) / (2 * h) for i in range(len(p))])


@pytest.fixture
def paths(monkeypatch):
    """Which way each gradient went: 'batched', 'points' (the batched attempt declined)
    or 'unresolved'."""
    taken = []
    original = _ode_batched.gradient

    def spy(*args, **kwargs):
        try:
            result = original(*args, **kwargs)
        except _ode_batched.Unresolved:
            taken.append("unresolved")
            raise
        taken.append("points" if result is None else "batched")
        return result

    monkeypatch.setattr(_ode_batched, "gradient", spy)
    monkeypatch.setattr(_ode_batched, "_BATCHABLE", {})
    return taken


def damped(y, t, a, b):
    x, v = y
    return np.array([v, -a * x - b * v + np.sin(t)])


def check(loss, p, want_path, paths, rel=1e-6):
    g = grad(loss)(p)
    assert paths == [want_path]
    want = central(loss, p)
    assert np.max(np.abs(g - want)) <= rel * np.max(np.abs(want))
    return g


def test_batchable_right_hand_side_with_args_is_traced_once(paths):
    def loss(p):
        Y = si.odeint(damped, p[2:], TS, args=(p[0], p[1]), **TIGHT)
        return np.sum(Y[:, 0] ** 2) + np.sum(Y[:, 1])

    check(loss, np.array([2.0, 0.3, 1.0, -0.5]), "batched", paths)


def test_closure_list_output_and_solve_ivp(paths):
    def loss(p):
        a, b = p[0], p[1]

        def f(t, y):  # captures a and b; returns a list
            return [y[1], -a * y[0] - b * y[1] ** 3]

        res = si.solve_ivp(f, (0.0, 4.0), p[2:], t_eval=TS, **TIGHT)
        return np.sum(res.y ** 2)

    check(loss, np.array([2.0, 0.3, 1.0, -0.5]), "batched", paths)


def test_matrix_parameter_and_a_scalar_state(paths):
    def loss(p):
        A = np.array([[-p[0], p[1]], [-p[1], -p[0]]])
        Y = si.odeint(lambda y, t, A: A @ y, np.array([1.0, 0.0]), TS, args=(A,), **TIGHT)
        Z = si.odeint(lambda z, t, k: -k * z * np.cos(t), np.array([p[2]]), TS,
                      args=(p[0],), **TIGHT)
        return np.sum(Y ** 2) + np.sum(Z)

    g = grad(loss)(np.array([0.4, 1.3, 2.0]))
    assert paths == ["batched", "batched"]
    want = central(loss, np.array([0.4, 1.3, 2.0]))
    assert np.max(np.abs(g - want)) <= 1e-6 * np.max(np.abs(want))


@pytest.mark.parametrize("kind", ["math", "float", "branch", "coupled", "transposed"])
def test_right_hand_sides_that_take_no_batch_go_point_by_point(kind, paths):
    def f(y, t, a):
        if kind == "math":  # math.cos of an array: TypeError
            return np.array([y[1], -a * y[0] + math.cos(t)])
        if kind == "float":
            return np.array([y[1], -a * y[0] + float(t) * 0.1])
        if kind == "branch":  # a value decides: ambiguous truth of an array
            return np.array([y[1], -a * y[0] if y[0] > -10.0 else a * y[0]])
        if kind == "coupled":  # a sum over the state: the batch's values differ
            return np.array([y[1], -a * y[0] + 0.1 * np.sum(y)])
        M = np.array([[0.0, 1.0], [-a, -0.2]])  # y @ M.T works point by point only
        return y @ M.T

    def loss(p):
        return np.sum(si.odeint(f, p[1:], TS, args=(p[0],), **TIGHT) ** 2)

    check(loss, np.array([2.0, 1.0, -0.5]), "points", paths)


def test_a_rule_that_takes_no_batch_is_caught_by_the_derivative_check(paths):
    def twice(v):
        return 2.0 * v

    @rrule.register(twice)
    def twice_rrule(v):
        # right for one state; for a batch (2-D) it reports 3x: the values agree, the
        # derivatives would not
        k = 2.0 if np.ndim(v) == 1 else 3.0
        return 2.0 * v, lambda v_bar: (NoTangent(), k * np.asarray(v_bar))

    def loss(p):
        Y = si.odeint(lambda y, t, a: -a * twice(y), p[1:], TS, args=(p[0],), **TIGHT)
        return np.sum(Y ** 2)

    check(loss, np.array([0.7, 1.0, -0.5]), "points", paths)


def test_the_batch_check_is_remembered_per_code_object(paths):
    def loss(p):
        return np.sum(si.odeint(damped, p[2:], TS, args=(p[0], p[1]), **TIGHT))

    g1 = grad(loss)(np.array([2.0, 0.3, 1.0, -0.5]))
    g2 = grad(loss)(np.array([2.0, 0.3, 1.0, -0.5]))
    assert paths == ["batched", "batched"]
    assert _ode_batched._BATCHABLE[damped.__code__] is True
    assert np.array_equal(g1, g2)


def test_unresolved_hands_over_to_the_adjoint(paths, monkeypatch):
    adjoint = []
    original = integrate_ode._adjoint
    monkeypatch.setattr(integrate_ode, "_adjoint",
                        lambda *a, **k: adjoint.append(1) or original(*a, **k))

    def loss(p):
        # |y| has a kink where y crosses zero: no depth of pieces resolves it to 1e-10
        Y = si.odeint(lambda y, t, k: -k * np.abs(y) + np.cos(3.0 * t), np.array([0.2]),
                      np.linspace(0.0, 6.0, 7), args=(p[0],), rtol=1e-10, atol=1e-12)
        return np.sum(Y ** 2)

    check(loss, np.array([0.8]), "unresolved", paths, rel=1e-5)
    assert adjoint == [1]


def robertson(t, y, k1, k2, k3):  # stiff: LSODA switches to BDF
    return [-k1 * y[0] + k3 * y[1] * y[2], k1 * y[0] - k2 * y[1] ** 2 - k3 * y[1] * y[2],
            k2 * y[1] ** 2]


@pytest.mark.parametrize("case", ["damped", "robertson", "full_output"])
def test_the_forward_solve_is_unchanged_by_the_sampled_points(case):
    # the rule asks LSODA for the collocation's points too (after the first output
    # time, where they leave its steps alone): the primal must be the plain call's, bit
    # for bit, info included
    from chainrules.ad import ADConfig

    if case == "robertson":
        f, y0, t = robertson, np.array([1.0, 0.0, 0.0]), np.logspace(-3, 2, 12)
        t[0] = 0.0
        kw = {"args": (0.04, 3e7, 1e4), "tfirst": True, "rtol": 1e-6, "atol": 1e-10}
    else:
        f, y0, t = damped, np.array([1.0, -0.5]), TS
        kw = {"args": (2.0, 0.3), "rtol": 1e-7}
    if case == "full_output":
        kw["full_output"] = True
    y, _ = integrate_ode.odeint_rrule(ADConfig(), f, y0, t, **kw)
    plain = si.odeint(f, y0, t, **kw)
    if case == "full_output":
        (y, info), (plain, plain_info) = y, plain
        assert info.keys() == plain_info.keys()
        for k in info:
            assert np.array_equal(info[k], plain_info[k]), k
    assert np.array_equal(y, plain)
    _, _, _, _, sampled = integrate_ode._odeint_solve(f, (y0, t), kw, sample=True)
    assert sampled is not None and len(sampled[0]) > 1000


def test_a_solve_that_fails_plain_fails_under_the_rule():
    # mxstep bounds the steps between two outputs: the extra outputs must not let the
    # rule's solve through where the plain call stops
    def loss(w):
        Y = si.odeint(lambda y, t, w: np.array([y[1], -w * w * y[0]]), np.array([1.0, 0.0]),
                      np.array([0.0, 0.1, 60.0]), args=(w,), mxstep=40)
        return np.sum(Y)

    with pytest.warns(si.ODEintWarning, match="Excess work"):
        loss(3.0)
    with pytest.raises(integrate_ode.SolverError, match="Excess work"):
        grad(loss)(3.0)


@pytest.mark.parametrize("solver", ["odeint", "solve_ivp", "closure"])
def test_forward_mode_by_the_batched_collocation(solver, monkeypatch):
    from chainrules.ad import jvp

    def solution(p):
        if solver == "odeint":
            return si.odeint(damped, p[2:], TS, args=(p[0], p[1]), **TIGHT)
        if solver == "solve_ivp":
            return si.solve_ivp(lambda t, y, a, b: damped(y, t, a, b), (0.0, 4.0), p[2:],
                                t_eval=TS[1:], args=(p[0], p[1]), **TIGHT).y
        return si.odeint(lambda y, t: damped(y, t, p[0], p[1]), p[2:], TS, **TIGHT)

    p, v = np.array([2.0, 0.3, 1.0, -0.5]), np.array([0.3, -0.2, 0.5, 0.7])
    taken = []
    original = _ode_batched.tangent
    monkeypatch.setattr(_ode_batched, "tangent",
                        lambda *a, **k: taken.append(1) or original(*a, **k))
    _, d = jvp(solution, (p,), (v,))
    assert taken and d.shape == solution(p).shape
    # the per-step forward sensitivities (the path before, and the fallback) agree
    monkeypatch.setattr(_ode_batched, "tangent", lambda *a, **k: None)
    _, d_steps = jvp(solution, (p,), (v,))
    assert np.max(np.abs(d - d_steps)) <= 1e-6 * np.max(np.abs(d_steps))
    fd = (solution(p + 1e-6 * v) - solution(p - 1e-6 * v)) / 2e-6
    assert np.max(np.abs(d - fd)) <= 1e-5 * np.max(np.abs(fd))


def test_forward_mode_with_respect_to_the_times():
    from chainrules.ad import jvp

    def solution(t_end):
        t = np.array([0.0, 1.0, t_end])
        return si.odeint(damped, np.array([1.0, -0.5]), t, args=(2.0, 0.3), **TIGHT)

    _, d = jvp(solution, (3.0,), (1.0,))
    fd = (solution(3.0 + 1e-6) - solution(3.0 - 1e-6)) / 2e-6
    assert np.allclose(d, fd, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("case", ["odeint args", "odeint closure", "solve_ivp args"])
def test_second_derivatives_by_the_batched_collocation_on_traced_values(case, monkeypatch):
    # a Hessian runs the gradient's collocation on the outer AD's traced values (its code
    # written for the outer AD to follow); it must agree with the per-step sensitivity
    # system the rules used before (and fall back to)
    from chainrules.ad import hessian

    def loss(p):
        if case == "odeint args":
            Y = si.odeint(damped, p[2:], TS, args=(p[0], p[1]), **TIGHT)
        elif case == "odeint closure":
            Y = si.odeint(lambda y, t: damped(y, t, p[0], p[1]), p[2:], TS, **TIGHT)
        else:
            Y = si.solve_ivp(lambda t, y, a, b: damped(y, t, a, b), (0.0, 4.0), p[2:],
                             t_eval=TS, args=(p[0], p[1]), **TIGHT).y.T
        return np.sum(Y[:, 0] ** 2) + np.sum(np.sin(Y[:, 1]))

    p = np.array([2.0, 0.3, 1.0, -0.5])
    used = []
    original = _ode_batched.gradient

    def spy(*args, **kwargs):
        result = original(*args, **kwargs)
        used.append(result is not None)
        return result

    # a Hessian first, in a process that has not checked the function yet: the forward
    # rule (on plain values) checks it, the traced pass uses it and records nothing
    monkeypatch.setattr(_ode_batched, "_BATCHABLE", {})
    monkeypatch.setattr(_ode_batched, "gradient", spy)
    H = hessian(loss)(p)
    assert used and all(used)
    assert list(_ode_batched._BATCHABLE.values()) == [True]
    monkeypatch.setattr(_ode_batched, "gradient", lambda *a, **k: None)
    H_steps = hessian(loss)(p)
    assert np.max(np.abs(H - H_steps)) <= 1e-6 * np.max(np.abs(H_steps))
    assert np.allclose(H, H.T, rtol=0, atol=1e-7 * np.max(np.abs(H)))
