"""dask arrays in the rules and the AD (issue 27): lazy, right, or refused by name.

Laziness is checked by running under a scheduler that raises: anything that computes a
dask array before ``.compute()`` fails the test.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import chainrules  # noqa: E402
from chainrules import (  # noqa: E402
    NoTangent,
    ProjectTo,
    ZeroTangent,
    ad,
    frule,
    rrule,
    unthunk,
)
from chainrules.ad import OpaqueArrayError  # noqa: E402
from chainrules.core import LazyArrayError, is_lazy_array  # noqa: E402

rng = np.random.default_rng(0)
X = rng.standard_normal((8, 4))
W = rng.standard_normal(4)


def _refuse_compute(*args, **kwargs):
    raise AssertionError("a dask array was computed before .compute()")


@contextlib.contextmanager
def lazy():
    """Inside: any computation of a dask array fails the test."""
    with dask.config.set(scheduler=_refuse_compute):
        yield


def xd():
    return da.from_array(X, chunks=(4, 2))


def wd():
    return da.from_array(W, chunks=2)


def loss(x, w):
    return np.sum(np.tanh(x @ w) ** 2)


def loss_xp(x, w):
    xp = chainrules.array_namespace(x, w)
    return xp.sum(xp.tanh(x @ w) ** 2)


def mean_loss(x, w):
    return np.mean((x @ w - 1.0) ** 2) + np.sum(x * x) / 10


def computed(v):
    assert is_lazy_array(v), type(v)
    return v.compute(scheduler="threads")


def test_array_namespace_of_a_dask_array_is_dasks():
    xp = chainrules.array_namespace(xd(), 2.0, X)
    assert xp.__name__ == "array_api_compat.dask.array"
    assert chainrules.is_foreign_array(xd())


@pytest.mark.parametrize("f", [np.sum, np.mean])
def test_rrule_and_frule_of_a_reduction_stay_lazy_and_right(f):
    x = xd()
    with lazy():
        y, pullback = rrule(f, x)
        x_bar = unthunk(pullback(1.0)[1])
        _, y_dot = frule((NoTangent(), x), f, x)
    assert not isinstance(x_bar, NoTangent | ZeroTangent)
    np.testing.assert_allclose(computed(y), f(X))
    np.testing.assert_allclose(computed(x_bar), rrule(f, X)[1](1.0)[1])
    np.testing.assert_allclose(computed(y_dot), frule((NoTangent(), X), f, X)[1])


def test_rrule_and_frule_of_matmul_stay_lazy_and_right():
    x, w = xd(), wd()
    y_bar = da.from_array(rng.standard_normal(8), chunks=4)
    with lazy():
        _, pullback = rrule(np.matmul, x, w)
        _, x_bar, w_bar = (unthunk(b) for b in pullback(y_bar))
        _, y_dot = frule((NoTangent(), x, w), np.matmul, x, w)
    yb = y_bar.compute()
    np.testing.assert_allclose(computed(x_bar), np.outer(yb, W))
    np.testing.assert_allclose(computed(w_bar), X.T @ yb)
    np.testing.assert_allclose(computed(y_dot), 2 * X @ W)


def test_rrule_of_solve_stays_lazy_and_right():
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal(3)
    ad_, bd = da.from_array(a, chunks=3), da.from_array(b, chunks=3)
    with lazy():
        y, pullback = rrule(np.linalg.solve, ad_, bd)
        _, a_bar, b_bar = (unthunk(g) for g in pullback(da.ones(3, chunks=3)))
    _, ref_pullback = rrule(np.linalg.solve, a, b)
    _, ref_a, ref_b = (unthunk(g) for g in ref_pullback(np.ones(3)))
    np.testing.assert_allclose(computed(y), np.linalg.solve(a, b))
    np.testing.assert_allclose(computed(a_bar), ref_a)
    np.testing.assert_allclose(computed(b_bar), ref_b)


def test_a_numpy_linalg_rule_without_a_dask_counterpart_is_refused_by_name():
    a = da.from_array(np.eye(3) * 2.0, chunks=3)
    with lazy(), pytest.raises(LazyArrayError, match=re.escape(
            "computes with NumPy and would compute a dask array of shape (3, 3) eagerly")):
        rrule(np.linalg.det, a)


def test_project_to_a_dask_array_keeps_it_lazy():
    x = xd()
    with lazy():
        dx = ProjectTo(x)(da.ones((8, 4), chunks=4))
        from_numpy = ProjectTo(x)(np.ones((2, 8, 4)))
    assert is_lazy_array(dx) and is_lazy_array(from_numpy)
    np.testing.assert_allclose(computed(from_numpy), np.full((8, 4), 2.0))


@pytest.mark.parametrize("f", [loss, loss_xp, mean_loss])
def test_grad_vjp_jvp_over_dask_are_lazy_and_match_numpy(f):
    ref_x, ref_w = ad.grad(f, argnums=(0, 1))(X, W)
    ref_dot = ad.jvp(f, (X, W), (X, W))[1]
    with lazy():
        g_x, g_w = ad.grad(f, argnums=(0, 1))(xd(), wd())
        y, pullback = ad.vjp(f, xd(), wd())
        b_x, b_w = pullback(1.0)
        y2, y_dot = ad.jvp(f, (xd(), wd()), (xd(), wd()))
    np.testing.assert_allclose(computed(g_x), ref_x)
    np.testing.assert_allclose(computed(g_w), ref_w)
    np.testing.assert_allclose(computed(b_x), ref_x)
    np.testing.assert_allclose(computed(b_w), ref_w)
    np.testing.assert_allclose(computed(y2), f(X, W))
    np.testing.assert_allclose(computed(y_dot), ref_dot)


def test_vjp_with_a_dask_constant_left_of_matmul_is_right():
    x = xd()
    y, pullback = ad.vjp(lambda w: loss(x, w), W)
    (w_bar,) = pullback(1.0)
    np.testing.assert_allclose(w_bar, ad.grad(loss, argnums=1)(X, W))
    assert float(np.abs(w_bar).sum()) > 0


def test_a_dask_graph_holding_a_tracer_is_refused_by_name():
    # dask's own `x * w` takes the tracer w for a NumPy chunk and hides it in its graph
    x = xd()
    hidden = "is a dask array (shape=(8, 4), dtype=float64) whose task graph holds a traced"
    met = re.escape(f"argument 1 of operator.mul {hidden}")
    with pytest.raises(OpaqueArrayError, match=met):
        ad.grad(lambda w: np.sum(w * np.tanh(x * w)))(W)
    with pytest.raises(OpaqueArrayError, match=met):
        ad.jvp(lambda w: np.sum(w * np.tanh(x * w)), (W,), (W,))
    with pytest.raises(OpaqueArrayError, match=re.escape(f"the output {hidden}")):
        ad.vjp(lambda w: x * w, W)
    with pytest.raises(OpaqueArrayError, match=re.escape("the output is a dask array (shape=()")):
        ad.grad(lambda w: np.sum(x * w))(W)
