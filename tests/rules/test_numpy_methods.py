"""Rules of chainrules.rules.numpy.methods: the case table plus targeted checks."""

import re

import numpy as np
import pytest

from chainrules import NoTangent, OutArgumentError, ZeroTangent, frule, rrule, unthunk
from chainrules.rules.numpy.methods import MissingDelegateRuleError
from chainrules.testing.cases.numpy_methods import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_methods"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


M = np.ndarray
DIFFERENTIABLE = [
    M.sum, M.mean, M.prod, M.max, M.min, M.std, M.var, M.cumsum, M.cumprod, M.dot, M.conj,
    M.conjugate, M.clip, M.trace, M.diagonal, M.take, M.repeat, M.squeeze, M.swapaxes,
    M.ravel, M.reshape, M.transpose, M.flatten, M.copy, M.astype, M.compress, M.item,
    M.__getitem__,
]
NON_DIFFERENTIABLE = [M.argmax, M.argmin, M.argsort, M.argpartition, M.nonzero,
                      M.searchsorted, M.all, M.any]


@pytest.mark.parametrize("method", DIFFERENTIABLE + NON_DIFFERENTIABLE,
                         ids=lambda m: m.__name__)
def test_has_rules(method):
    assert rrule.has_rules(method) and frule.has_rules(method)


def test_every_differentiable_method_has_a_case():
    from chainrules.testing.cases.numpy_indexing import CASES as INDEXING_CASES

    tested = {c.f for c in CASES} | {c.f for c in INDEXING_CASES}
    assert not [m.__name__ for m in DIFFERENTIABLE if m not in tested]


@pytest.mark.parametrize(("method", "args"), [
    (M.argmax, ()), (M.argsort, ()), (M.nonzero, ()), (M.all, ()), (M.searchsorted, (0.5,)),
])
def test_non_differentiable(method, args):
    x = np.array([0.0, 1.0, 2.0])
    y, pullback = rrule(method, x, *args)
    assert pullback(ZeroTangent()) == (NoTangent(),) * (len(args) + 2)
    assert isinstance(frule((NoTangent(),) * (len(args) + 2), method, x, *args)[1], NoTangent)


def test_missing_delegate_rule_error():
    from chainrules.rules.numpy.methods import _delegate

    def undifferentiated(x):
        return x

    def fake_method(x):
        return x

    _delegate(fake_method, undifferentiated)
    with pytest.raises(MissingDelegateRuleError, match=re.escape("delegates to numpy.undifferentiated")):
        rrule(fake_method, np.ones(2))
    with pytest.raises(MissingDelegateRuleError, match="has no frule"):
        frule((NoTangent(), np.ones(2)), fake_method, np.ones(2))


@pytest.mark.parametrize(("method", "args"), [
    (M.take, ([0],)), (M.compress, ([True, False],)), (M.sum, ()),
])
def test_out_argument_error(method, args):
    x = np.array([1.0, 2.0])
    out = np.empty_like(method(x, *args))
    with pytest.raises(OutArgumentError):
        rrule(method, x, *args, out=out)


@pytest.mark.parametrize(("method", "args"), [
    (M.reshape, (3, 2)), (M.reshape, ((6,),)), (M.transpose, ()), (M.flatten, ()),
    (M.copy, ()), (M.astype, (np.float64,)), (M.ravel, ()), (M.squeeze, ()),
    (M.swapaxes, (0, 1)), (M.diagonal, ()),
])
def test_cotangent_does_not_alias_y_bar(method, args):
    x = np.arange(6.0).reshape(2, 3)
    y, pullback = rrule(method, x, *args)
    y_bar = np.ones_like(y)
    bars = pullback(y_bar)
    assert len(bars) == len(args) + 2
    assert not np.shares_memory(unthunk(bars[1]), y_bar)


def test_astype_to_integer_has_no_tangent():
    x = np.array([1.5, 2.5])
    y, pullback = rrule(M.astype, x, np.int64)
    assert y.dtype == np.int64
    _, x_bar, dtype_bar = pullback(np.ones(2))
    assert isinstance(x_bar, NoTangent) and isinstance(dtype_bar, NoTangent)
    assert isinstance(frule((NoTangent(), np.ones(2), NoTangent()), M.astype, x, np.int64)[1],
                      NoTangent)
