"""Rules of chainrules/rules/numpy/contractions.py: the case table, then conventions."""

import numpy as np
import pytest

import chainrules
from chainrules import NoTangent, OutArgumentError, Thunk, ZeroTangent, frule, rrule, unthunk
from chainrules.testing import test_frule, test_rrule
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_contractions"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


# ------------------------------------------------------------------ targeted tests

SCOPE = [
    np.dot, np.vdot, np.inner, np.outer, np.tensordot, np.einsum, np.matmul, np.vecdot,
    np.matvec, np.vecmat, np.trace, np.cross, np.kron, np.convolve, np.correlate, np.interp,
    np.polyval,
]


@pytest.mark.parametrize("f", SCOPE, ids=lambda f: f.__name__)
def test_has_frule_and_rrule(f):
    assert chainrules.rrule.has_rules(f)
    assert chainrules.frule.has_rules(f)


@pytest.mark.parametrize(("f", "args"), [
    (np.dot, (np.ones((2, 2)), np.ones(2))),
    (np.outer, (np.ones(2), np.ones(3))),
    (np.matmul, (np.ones((2, 2)), np.ones(2))),
    (np.einsum, ("ij,j->i", np.ones((2, 2)), np.ones(2))),
    (np.trace, (np.ones((2, 2)), 0, 0, 1, None)),
])
def test_out_argument_error(f, args):
    out = np.empty(2 if f is not np.outer else (2, 3))
    kwargs = {} if f is np.trace else {"out": out}
    if f is np.trace:
        args = (*args, np.empty(()))
    with pytest.raises(OutArgumentError, match="does not support out="):
        rrule(f, *args, **kwargs)
    with pytest.raises(OutArgumentError, match="does not support out="):
        frule((NoTangent(),) * (len(args) + 1), f, *args, **kwargs)


@pytest.mark.parametrize("f", [np.dot, np.matmul, np.vecdot])
def test_positional_out_argument_error(f):
    a, b = np.ones((2, 2)), np.ones((2, 2))
    out = np.empty(f(a, b).shape)
    with pytest.raises(OutArgumentError, match="does not support out="):
        rrule(f, a, b, out)
    with pytest.raises(OutArgumentError, match="does not support out="):
        frule((NoTangent(),) * 4, f, a, b, out)


def test_matmul_axes_not_implemented_error():
    a = np.ones((2, 3, 3))
    with pytest.raises(NotImplementedError, match="does not support axes="):
        rrule(np.matmul, a, a, axes=[(0, 1), (0, 1), (0, 1)])


def test_cross_2_vectors_not_implemented_error():
    with pytest.raises(NotImplementedError, match="3-vectors only"):
        rrule(np.cross, np.ones((2, 3)), np.ones((2, 3)), axisa=0, axisb=0)


@pytest.mark.parametrize(("f", "conjugated"), [(np.vdot, 0), (np.vecdot, 0), (np.correlate, 1)])
def test_conjugating_functions_complex(f, conjugated):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    b = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    test_rrule(f, a, b)
    test_frule(f, a, b)
    # the conjugated argument enters antilinearly: a real-linear, not complex-linear, map
    _, y_dot = frule((NoTangent(), *(1j * np.eye(4)[0] if k == conjugated else ZeroTangent()
                                     for k in range(2))), f, a, b)
    _, y_dot1 = frule((NoTangent(), *(np.eye(4)[0] if k == conjugated else ZeroTangent()
                                      for k in range(2))), f, a, b)
    assert np.allclose(y_dot, -1j * y_dot1)


@pytest.mark.parametrize(("f", "args", "kwargs"), [
    (np.dot, (np.arange(6.0).reshape(2, 3), np.arange(3.0)), {}),
    (np.einsum, ("ii->i", np.arange(9.0).reshape(3, 3)), {}),
    (np.einsum, ("ij,jk->ik", np.ones((2, 3)), np.ones((3, 2))), {"optimize": True}),
    (np.matmul, (np.ones((2, 1, 2, 3)), np.ones((4, 3, 2))), {}),
    (np.convolve, (np.arange(5.0), np.arange(3.0)), {"mode": "same"}),
    (np.interp, (np.array([0.5, 1.5]), np.arange(3.0), np.arange(3.0) ** 2), {}),
    (np.cross, (np.arange(6.0).reshape(2, 3), np.array([1.0, 0.0, 2.0])), {}),
])
def test_no_mutation(f, args, kwargs):
    before = [np.copy(a) for a in args]
    y, pullback = rrule(f, *args, **kwargs)
    y_bar = np.ones_like(y)
    for b in pullback(y_bar):
        unthunk(b)
    assert np.array_equal(y_bar, np.ones_like(y))
    for a, b in zip(args, before):
        assert np.array_equal(a, b)


def test_unneeded_thunk_is_never_computed():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    _, pullback = rrule(np.matmul, a, b)
    bars = pullback(np.ones((2, 4)))
    assert all(isinstance(t, Thunk) for t in bars[1:])
    unthunk(bars[1])
    assert not bars[2].evaluated


def test_zero_cotangent():
    a, b = np.ones((2, 3)), np.ones((3,))
    for f in (np.dot, np.matmul, np.inner):
        _, pullback = rrule(f, a, b)
        assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent(), ZeroTangent())


def test_einsum_subscripts_get_no_tangent():
    _, pullback = rrule(np.einsum, "ij,jk", np.ones((2, 3)), np.ones((3, 2)))
    bars = pullback(np.ones((2, 2)))
    assert bars[0] == NoTangent() and bars[1] == NoTangent()
    assert unthunk(bars[2]).shape == (2, 3)


def test_einsum_diagonal_cotangent_is_off_diagonal_zero():
    # convention check (not a formula): "ii->i" reads only the diagonal
    _, pullback = rrule(np.einsum, "ii->i", np.arange(9.0).reshape(3, 3))
    x_bar = unthunk(pullback(np.ones(3))[2])
    assert np.array_equal(x_bar, np.eye(3))


@pytest.mark.parametrize("subscripts", ["ij->ij", "ij->ji", "ij->j", "ii->i"])
def test_einsum_cotangent_is_a_fresh_writeable_array(subscripts):
    x = np.arange(9.0).reshape(3, 3)
    y, pullback = rrule(np.einsum, subscripts, x)
    y_bar = np.ones_like(y)
    x_bar = unthunk(pullback(y_bar)[2])
    assert not np.shares_memory(x_bar, y_bar)
    assert x_bar.flags.writeable


def test_interp_integer_cotangent_keeps_the_fp_gradient():
    xp, fp = np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 20.0])
    _, pullback = rrule(np.interp, 0.5, xp, fp)
    as_int = [unthunk(t) for t in pullback(1)]
    as_float = [unthunk(t) for t in pullback(1.0)]
    np.testing.assert_array_equal(as_int[3], [0.5, 0.5, 0.0])
    for a, b in zip(as_int[1:], as_float[1:]):
        np.testing.assert_array_equal(a, b)
    test_rrule(np.interp, 0.5, xp, fp)


@pytest.mark.parametrize(("p", "x"), [(np.zeros(0), 2.0), (np.zeros(0), np.array([1.0, 2.0])),
                                      (np.array([1.0, 2.0]), np.zeros(0))])
def test_polyval_empty(p, x):
    test_rrule(np.polyval, p, x)
    test_frule(np.polyval, p, x)
