"""Rules of chainrules/rules/numpy/reductions.py: the case table, then conventions."""

import numpy as np
import pytest

import chainrules
from chainrules import NoTangent, OutArgumentError, Thunk, ZeroTangent, frule, rrule
from chainrules.rules.numpy.reductions import WhereArgumentError
from chainrules.testing import test_frule, test_rrule
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_reductions"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


# ------------------------------------------------------------------ targeted tests

SCOPE = [
    np.sum, np.nansum, np.prod, np.nanprod, np.mean, np.nanmean, np.var, np.std, np.nanvar,
    np.nanstd, np.nancumsum, np.nancumprod,
    np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin, np.ptp, np.median, np.nanmedian,
    np.quantile, np.percentile, np.average,
    np.cumsum, np.cumprod, np.cumulative_sum, np.cumulative_prod, np.diff, np.ediff1d,
    np.trapezoid, np.linspace, np.logspace, np.geomspace, np.full, np.full_like,
    np.arange, np.bincount,
]

NON_DIFFERENTIABLE = [
    np.argmax, np.argmin, np.nanargmax, np.nanargmin, np.argsort, np.argpartition,
    np.lexsort, np.argwhere, np.nonzero, np.flatnonzero, np.searchsorted, np.digitize,
    np.count_nonzero, np.any, np.all, np.isclose, np.allclose, np.array_equal,
    np.array_equiv, np.isreal, np.iscomplex, np.isrealobj, np.iscomplexobj, np.isscalar,
    np.isposinf, np.isneginf, np.isin, np.einsum_path, np.shape, np.ndim, np.size, np.zeros,
    np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.eye, np.identity, np.tri,
]


@pytest.mark.parametrize("f", SCOPE + NON_DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_has_frule_and_rrule(f):
    assert chainrules.rrule.has_rules(f)
    assert chainrules.frule.has_rules(f)


@pytest.mark.parametrize(("f", "args"), [
    (np.argmax, (np.array([1.0, 3.0, 2.0]),)),
    (np.argsort, (np.array([1.0, 3.0, 2.0]),)),
    (np.searchsorted, (np.array([1.0, 2.0, 3.0]), 2.5)),
    (np.isclose, (np.array([1.0, 2.0]), np.array([1.0, 2.1]))),
    (np.count_nonzero, (np.array([0.0, 2.0]),)),
    (np.digitize, (np.array([0.5, 2.5]), np.array([0.0, 1.0, 2.0]))),
    (np.any, (np.array([0.0, 2.0]),)),
    (np.zeros_like, (np.array([0.5, 2.0]),)),
    (np.ones_like, (np.array([0.5, 2.0]),)),
    (np.shape, (np.array([0.5, 2.0]),)),
])
def test_non_differentiable(f, args):
    y, pullback = rrule(f, *args)
    assert np.array_equal(y, f(*args))
    assert pullback(np.ones(np.shape(y))) == (NoTangent(),) * (len(args) + 1)
    _, y_dot = frule((NoTangent(),) + tuple(np.ones_like(a) for a in args), f, *args)
    assert y_dot == NoTangent()


@pytest.mark.parametrize("f", [np.sum, np.prod, np.mean, np.var, np.std, np.max, np.nansum,
                               np.cumsum, np.cumprod])
def test_out_argument_error(f):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    out = np.empty(3) if f not in (np.cumsum, np.cumprod) else np.empty(6)
    kwargs = {"axis": 0, "out": out} if f not in (np.cumsum, np.cumprod) else {"out": out}
    with pytest.raises(OutArgumentError, match="does not support out="):
        rrule(f, x, **kwargs)
    with pytest.raises(OutArgumentError, match="does not support out="):
        frule((NoTangent(), np.ones_like(x)), f, x, **kwargs)


@pytest.mark.parametrize("f", [np.sum, np.mean, np.max, np.var])
def test_where_argument_error(f):
    x = np.arange(1.0, 7.0).reshape(2, 3)
    kwargs = {"where": x > 2}
    if f is np.max:
        kwargs["initial"] = 0.0
    with pytest.raises(WhereArgumentError, match=r"does not support where= \(only where=True\)"):
        rrule(f, x, **kwargs)
    y, _ = rrule(f, x, where=True)
    assert np.allclose(y, f(x))


@pytest.mark.parametrize("f", [np.sum, np.prod, np.nansum])
def test_positional_initial_not_implemented_error(f):
    x = np.arange(1.0, 4.0)
    with pytest.raises(NotImplementedError, match="pass it as a keyword, initial="):
        rrule(f, x, None, None, None, False, 2.0)
    y, _ = rrule(f, x, initial=2.0)
    assert np.isclose(y, f(x, initial=2.0))


def test_var_mean_argument_error():
    x = np.arange(1.0, 7.0)
    with pytest.raises(NotImplementedError, match="does not support mean="):
        rrule(np.var, x, mean=np.mean(x, keepdims=True))


@pytest.mark.parametrize("x", [
    np.array([2.0, 0.0, 3.0, -1.5]),           # one zero
    np.array([2.0, 0.0, 3.0, 0.0]),            # two zeros
    np.array([0.0, 0.0, 0.0]),                 # all zeros
    np.array([[1.5, 0.0, 2.0], [0.0, 0.0, -1.0]]),
], ids=["one-zero", "two-zeros", "all-zeros", "2-d"])
@pytest.mark.parametrize("f", [np.prod, np.cumprod])
def test_prod_with_zeros(f, x):
    test_rrule(f, x)
    test_frule(f, x)
    _, pullback = rrule(f, x)
    x_bar = pullback(np.ones(np.shape(f(x))))[1]
    assert np.all(np.isfinite(x_bar))


def test_prod_underflow_without_zeros():
    # the product underflows to 0 but no element is 0: prod/x would give 0 everywhere
    x = np.array([1e-200, 2e-200, 3.0])
    test_rrule(np.prod, x)
    test_frule(np.prod, x)
    _, pullback = rrule(np.prod, x)
    assert np.all(pullback(1.0)[1][:2] > 0)


def test_prod_two_zeros_gradient_vanishes():
    # with two zeros every product of "the others" contains a zero
    _, pullback = rrule(np.prod, np.array([2.0, 0.0, 3.0, 0.0]))
    assert np.array_equal(pullback(1.0)[1], np.zeros(4))


@pytest.mark.parametrize(("f", "x", "expected"), [
    (np.max, np.array([1.0, 3.0, 3.0, 2.0]), [0.0, 0.5, 0.5, 0.0]),
    (np.amax, np.array([3.0, 3.0, 3.0]), [1 / 3, 1 / 3, 1 / 3]),
    (np.min, np.array([1.0, 3.0, 1.0, 2.0]), [0.5, 0.0, 0.5, 0.0]),
    (np.nanmax, np.array([np.nan, 3.0, 3.0]), [0.0, 0.5, 0.5]),
    (np.ptp, np.array([1.0, 3.0, 3.0, 1.0]), [-0.5, 0.5, 0.5, -0.5]),
])
def test_ties_split_equally(f, x, expected):
    _, pullback = rrule(f, x)
    assert np.allclose(pullback(1.0)[1], expected)
    _, y_dot = frule((NoTangent(), np.ones_like(x)), f, x)
    assert np.isclose(y_dot, np.sum(expected))


def test_max_initial_wins():
    _, pullback = rrule(np.max, np.array([1.0, 2.0]), initial=5.0)
    assert np.array_equal(pullback(1.0)[1], [0.0, 0.0])


def test_quantile_method_not_implemented_error():
    with pytest.raises(NotImplementedError, match="method='linear'"):
        rrule(np.quantile, np.arange(4.0), 0.5, method="nearest")


def test_median_even_count_splits_middle_pair():
    _, pullback = rrule(np.median, np.array([4.0, 1.0, 3.0, 2.0]))
    assert np.allclose(pullback(1.0)[1], [0.0, 0.0, 0.5, 0.5])


@pytest.mark.parametrize(("f", "args", "kwargs"), [
    (np.sum, (np.arange(6.0).reshape(2, 3),), {"axis": 0}),
    (np.prod, (np.arange(6.0).reshape(2, 3),), {"axis": 1}),
    (np.var, (np.arange(6.0).reshape(2, 3),), {"axis": 1, "ddof": 1}),
    (np.max, (np.arange(6.0).reshape(2, 3),), {}),
    (np.cumprod, (np.arange(6.0).reshape(2, 3),), {"axis": 1}),
    (np.median, (np.array([3.0, 1.0, 2.0]),), {"overwrite_input": True}),
    (np.diff, (np.arange(6.0),), {"n": 2}),
    (np.average, (np.arange(6.0).reshape(2, 3), 1, np.array([1.0, 2.0, 3.0])), {}),
])
def test_no_mutation(f, args, kwargs):
    before = [np.copy(a) for a in args]
    y, pullback = rrule(f, *args, **kwargs)
    y_bar = np.ones_like(y)
    bars = pullback(y_bar)
    for b in bars:
        chainrules.unthunk(b)
    assert np.array_equal(y_bar, np.ones_like(y))
    for a, b in zip(args, before):
        assert np.array_equal(a, b)


def test_pullback_accepts_zero_and_thunk():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    _, pullback = rrule(np.prod, x, 0)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent(), NoTangent())
    thunked = pullback(Thunk(lambda: np.ones(3)))[1]
    assert np.allclose(chainrules.unthunk(thunked), pullback(np.ones(3))[1])


def test_list_input_gets_list_tangent():
    _, pullback = rrule(np.sum, [1.0, 2.0, 3.0])
    x_bar = pullback(2.0)[1]
    assert isinstance(x_bar, chainrules.Tangent)
    assert list(x_bar.backing) == [2.0, 2.0, 2.0]


def test_float32_stays_float32():
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    for f in (np.sum, np.mean, np.var, np.std, np.prod, np.cumsum, np.max, np.median):
        _, pullback = rrule(f, x)
        assert chainrules.unthunk(pullback(np.ones_like(f(x)))[1]).dtype == np.float32


def test_average_thunks_not_computed_when_unused():
    a, w = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0])
    _, pullback = rrule(np.average, a, 1, w)
    bars = pullback(np.ones(2))
    assert isinstance(bars[1], Thunk) and isinstance(bars[3], Thunk)
    assert not bars[3].evaluated


@pytest.mark.parametrize("f", [np.sum, np.mean])
def test_cotangent_is_writeable(f):
    _, pullback = rrule(f, np.ones((2, 3)), 0)
    assert pullback(np.ones(3))[1].flags.writeable


@pytest.mark.filterwarnings("ignore:Degrees of freedom <= 0:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("f", [np.var, np.std, np.nanvar, np.nanstd])
def test_var_and_std_of_an_empty_input(f):
    y, pullback = rrule(f, np.zeros(0))
    assert np.isnan(y)
    _, x_bar = pullback(np.float64(1.0))
    assert x_bar.shape == (0,)
    y2, y_dot = frule((NoTangent(), np.zeros(0)), f, np.zeros(0))
    assert np.isnan(y2) and np.ndim(y_dot) == 0
    # a slice with no degrees of freedom (ddof = N): the derivative is not finite, as y
    _, pullback = rrule(f, np.ones(2), ddof=2)
    assert not np.all(np.isfinite(pullback(np.float64(1.0))[1]))
