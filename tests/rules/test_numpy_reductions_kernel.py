"""reduction_rule (rules/numpy/_reduce_kernel.py): a reduction defined by its weights."""

import warnings

import numpy as np
import pytest

from chainrules import NoTangent, OutArgumentError, ZeroTangent, frule, rrule, scoped_rules
from chainrules.rules.numpy._reduce_kernel import WhereArgumentError, reduction_rule
from chainrules.testing import test_frule, test_rrule


@pytest.fixture(autouse=True)
def _isolated_rules():
    with scoped_rules():
        yield


def total(a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    return np.sum(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims, where=where)


def sum_of_squares(a, axis=None, keepdims=False):
    return np.sum(a * a, axis=axis, keepdims=keepdims)


def nan_total(a, axis=None, keepdims=False):
    return np.nansum(a, axis=axis, keepdims=keepdims)


def abs_total(a, axis=None, keepdims=False):
    return np.sum(np.abs(a) ** 2, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("kwargs", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True},
                                    {"axis": -1}])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_weights_give_both_rules(kwargs, dtype):
    reduction_rule(sum_of_squares, lambda x, y, p, axes, keepdims: 2 * x)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(dtype)
    test_rrule(sum_of_squares, x, fkwargs=kwargs)
    test_frule(sum_of_squares, x, fkwargs=kwargs)


def test_empty_and_zero_dimensional_inputs():
    reduction_rule(sum_of_squares, lambda x, y, p, axes, keepdims: 2 * x)
    test_rrule(sum_of_squares, np.array(1.5))
    y, pullback = rrule(sum_of_squares, np.zeros((0, 3)), axis=0)
    assert pullback(np.ones(3))[1].shape == (0, 3)


def test_nan_elements_get_zero():
    reduction_rule(nan_total, lambda x, y, p, axes, keepdims: 1.0, nan=True)
    x = np.array([1.0, np.nan, 2.0])
    _, pullback = rrule(nan_total, x)
    np.testing.assert_array_equal(pullback(1.0)[1], [1.0, 0.0, 1.0])
    _, y_dot = frule((NoTangent(), np.array([1.0, np.nan, 1.0])), nan_total, x)
    assert y_dot == 2.0


def test_real_output_of_complex_input():
    reduction_rule(abs_total, lambda x, y, p, axes, keepdims: 2 * np.conj(x), real=True)
    x = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    test_rrule(abs_total, x)
    test_frule(abs_total, x)
    _, y_dot = frule((NoTangent(), np.ones(2, complex)), abs_total, x)
    assert np.isrealobj(y_dot)


def test_zero_cotangent_and_positional_arguments():
    reduction_rule(total, lambda x, y, p, axes, keepdims: 1.0)
    _, pullback = rrule(total, np.ones((2, 2)), 0)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent(), NoTangent())
    assert pullback(np.ones(2))[2] == NoTangent()


def test_out_and_where_are_refused():
    reduction_rule(total, lambda x, y, p, axes, keepdims: 1.0)
    with pytest.raises(OutArgumentError, match="does not support out="):
        rrule(total, np.ones(2), out=np.zeros(()))
    with pytest.raises(WhereArgumentError, match=r"does not support where= \(only where=True\)"):
        frule((NoTangent(), np.ones(2)), total, np.ones(2), where=np.array([True, False]))


def test_check_refuses_arguments():
    def refuse_dtype(f, p):
        if p["dtype"] is not None:
            raise NotImplementedError("no dtype= here")

    reduction_rule(total, lambda x, y, p, axes, keepdims: 1.0, check=refuse_dtype)
    with pytest.raises(NotImplementedError, match="no dtype= here"):
        rrule(total, np.ones(2), dtype=np.float32)


_WHOLE_INPUTS = [
    np.linspace(-1.0, 2.0, 7),
    np.linspace(-1.0, 2.0, 7, dtype=np.float32),
    np.float32(1e7) + np.arange(1001, dtype=np.float32) / 3,  # rounding in the sum
    np.random.default_rng(0).standard_normal((37, 53)),  # pairwise summation, 2-d
    np.linspace(0.0, 1.0, 20)[::3],  # non-contiguous
    np.linspace(0.0, 1.0, 12).reshape(3, 4).T,
    np.array(2.5),  # 0-d
    np.zeros(0),  # empty: NumPy's own code (a warning and nan for the mean)
    np.linspace(0.0, 1.0, 5) + 1j * np.linspace(2.0, -1.0, 5),
    (np.linspace(0.0, 1.0, 5) + 1j).astype(np.complex64),
    np.linspace(0.0, 1.0, 5, dtype=np.float16),
    np.arange(6), np.array([True, False, True]),
    np.linspace(0.0, 1.0, 5, dtype=np.longdouble),
]


@pytest.mark.parametrize("x", _WHOLE_INPUTS, ids=lambda x: f"{x.dtype}{x.shape}")
def test_whole_reductions_are_numpys_bit_for_bit(x):
    """``np.sum(x)`` and ``np.mean(x)`` of a whole array, which the rules compute
    without NumPy's Python wrappers: the same value, type and dtype."""
    from chainrules.rules.numpy.reductions import _sum_whole
    from chainrules.rules.numpy.statistics import _mean_whole

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for ours, numpys in ((_sum_whole(x), np.sum(x)), (_mean_whole(x), np.mean(x))):
            assert type(ours) is type(numpys)
            assert ours.dtype == numpys.dtype
            np.testing.assert_array_equal(ours, numpys)
        if x.dtype.kind in "fc":  # the rules' primals are these
            for f in (np.sum, np.mean):
                y = rrule(f, x)[0]
                assert type(y) is type(f(x))
                np.testing.assert_array_equal(y, f(x))
