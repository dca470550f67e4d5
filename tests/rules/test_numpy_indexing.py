"""Rules of chainrules.rules.numpy.indexing: the case table plus targeted checks."""

import operator

import numpy as np
import pytest

from chainrules import (
    NoTangent,
    OutArgumentError,
    Tangent,
    Thunk,
    ZeroTangent,
    frule,
    rrule,
    unthunk,
)
from chainrules.core._validate import unwrap_pullback
from chainrules.testing import test_frule, test_rrule
from chainrules.testing.cases.numpy_indexing import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.fixture
def no_debug_mode():
    """Debug mode checks cotangents, which evaluates their thunks: switch it off."""
    import chainrules

    was = chainrules.debug_mode()
    chainrules.debug_mode(False)
    yield
    chainrules.debug_mode(was)


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_indexing"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


DIFFERENTIABLE = [operator.getitem, np.ndarray.__getitem__, np.take, np.take_along_axis,
                  np.compress, np.extract, np.where, np.select, np.choose, np.sort]


@pytest.mark.parametrize("f", DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_has_rules(f):
    assert rrule.has_rules(f) and frule.has_rules(f)


def test_every_differentiable_function_has_a_case():
    assert not [f.__name__ for f in DIFFERENTIABLE if f not in {c.f for c in CASES}]


def test_getitem_rule_is_for_ndarrays_only():
    x = np.arange(3.0)
    assert rrule.lookup(operator.getitem, (np.ndarray, int), None) is not None
    _, pullback = rrule(operator.getitem, x, 1)
    assert "getitem" in unwrap_pullback(pullback).__qualname__
    info = [r for r in rrule.registered() if r.function is operator.getitem
            and r.rule.__module__ == "chainrules.rules.numpy.indexing"]
    # (NumPy scalars index like 0-d arrays; lists and tuples keep Python's own rule)
    assert info and all(r.types[0] in (np.ndarray, np.generic) for r in info)


@pytest.mark.parametrize("x", [np.float64(1.5), np.float32(0.5), np.complex128(1 - 2j)])
def test_getitem_empty_tuple_of_numpy_scalar(x):
    test_frule(operator.getitem, x, ())
    test_rrule(operator.getitem, x, ())


@pytest.mark.parametrize("idx", [np.array([0, 0, 0, 2]), [1, 1], (np.array([0, 0]),
                                                                  np.array([1, 1]))])
def test_repeated_indices_accumulate(idx):
    x = np.arange(6.0).reshape(2, 3) if isinstance(idx, tuple) else np.arange(3.0)
    test_rrule(operator.getitem, x, idx)
    _, pullback = rrule(operator.getitem, x, idx)
    x_bar = pullback(np.ones(np.shape(x[idx])))[1]
    assert x_bar.sum() == np.size(x[idx])  # every repeat counted


def test_repeated_take_accumulates():
    test_rrule(np.take, np.array([1.0, 2.0, 3.0]), np.array([2, 2, 2, 0]))


def test_take_out_argument_error():
    with pytest.raises(OutArgumentError):
        rrule(np.take, np.arange(3.0), [0], out=np.empty(1))
    with pytest.raises(OutArgumentError):
        frule((NoTangent(), ZeroTangent(), NoTangent()), np.take, np.arange(3.0), [0],
              out=np.empty(1))


def test_where_one_argument_is_non_differentiable():
    y, pullback = rrule(np.where, np.array([True, False]))
    assert pullback(ZeroTangent()) == (NoTangent(), NoTangent())
    assert isinstance(frule((NoTangent(), NoTangent()), np.where, np.array([1, 0]))[1],
                      NoTangent)


def test_where_cotangents_are_thunks_computed_on_demand(no_debug_mode):
    _, pullback = rrule(np.where, np.array([True, False]), np.ones(2), np.zeros(2))
    _, _, x_bar, y_bar = pullback(np.array([1.0, 2.0]))
    assert isinstance(x_bar, Thunk) and isinstance(y_bar, Thunk)
    assert not y_bar.evaluated
    np.testing.assert_array_equal(unthunk(x_bar), [1.0, 0.0])


@pytest.mark.parametrize(("f", "args"), [
    (operator.getitem, (slice(None),)), (operator.getitem, ((Ellipsis,),)),
    (np.ndarray.__getitem__, (slice(None),)), (np.take, (np.arange(6),)),
    (np.sort, ()), (np.compress, None), (np.where, None),
])
def test_cotangent_does_not_alias_y_bar(f, args):
    x = np.arange(6.0)[::-1].copy()
    if f is np.compress:
        call = (np.ones(6, bool), x)
    elif f is np.where:
        call = (np.ones(6, bool), x, x)
    else:
        call = (x, *args)
    y, pullback = rrule(f, *call)
    y_bar = np.ones_like(y)
    for bar in pullback(y_bar)[1:]:
        bar = unthunk(bar)
        if isinstance(bar, np.ndarray):
            assert not np.shares_memory(bar, y_bar)


def test_select_choices_cotangent_is_structural_with_thunks():
    _, pullback = rrule(np.select, [np.array([True, False])], [np.ones(2)], np.zeros(2))
    _, _, choices_bar, default_bar = pullback(np.array([1.0, 2.0]))
    assert isinstance(choices_bar, Tangent) and isinstance(choices_bar[0], Thunk)
    assert isinstance(default_bar, Thunk)


def test_sort_ties_send_each_cotangent_to_one_element():
    # At ties the derivative does not exist; the rule picks the stable argsort order.
    x = np.array([1.0, 0.0, 1.0, 1.0])
    _, pullback = rrule(np.sort, x)
    x_bar = pullback(np.array([10.0, 20.0, 30.0, 40.0]))[1]
    assert sorted(x_bar.tolist()) == [10.0, 20.0, 30.0, 40.0]


@pytest.mark.parametrize("idx", [2, slice(1, 3), np.array([1, 1]), (None, 3)])
def test_getitem_cotangent_adds_in_place_without_a_dense_array(idx, no_debug_mode):
    from chainrules import InplaceableThunk, iadd

    x = np.arange(5.0)
    _, pullback = rrule(operator.getitem, x, idx)
    x_bar = pullback(np.ones(np.shape(x[idx])))[1]
    assert isinstance(x_bar, InplaceableThunk)
    acc = np.zeros(5)
    assert iadd(acc, x_bar) is acc
    assert not x_bar.evaluated  # the dense cotangent was never built
    np.testing.assert_array_equal(acc, unthunk(x_bar))


def test_getitem_in_place_add_keeps_real_accumulators_real():
    from chainrules import InvalidTangentError, iadd

    x = np.arange(3.0, dtype=np.float32)
    _, pullback = rrule(operator.getitem, x, 1)
    # the boundary refuses a complex cotangent for a real output; the rule's own
    # pullback (what an AD calls) projects it onto the real accumulator
    with pytest.raises(InvalidTangentError, match="the primal is real"):
        pullback(1.0 + 2.0j)
    acc = iadd(np.zeros(3, np.float32), unwrap_pullback(pullback)(1.0 + 2.0j)[1])
    assert acc.dtype == np.float32 and acc[1] == 1.0


@pytest.mark.parametrize(("f", "args"), [
    (np.take, (np.arange(3.0), [0], None)),
    (np.compress, ([True, False, True], np.arange(3.0), None)),
    (np.choose, (np.array([0, 1]), [np.zeros(2), np.ones(2)])),
    (np.ndarray.take, (np.arange(3.0), [0], None)),
    (np.ndarray.compress, (np.arange(3.0), [True, False, True], None)),
])
def test_positional_out_argument_error(f, args):
    out = np.empty_like(f(*args))
    with pytest.raises(OutArgumentError):
        rrule(f, *args, out)
    with pytest.raises(OutArgumentError):
        frule((NoTangent(),) * (len(args) + 2), f, *args, out)


@pytest.mark.parametrize("idx", [(), None, Ellipsis], ids=["()", "None", "..."])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_getitem_of_numpy_scalar(idx, dtype):
    # np.sum(x)[()] and friends: a NumPy scalar indexes like a 0-d array
    from chainrules.testing import test_frule

    x = dtype(0.7 + (0.2j if np.dtype(dtype).kind == "c" else 0))
    test_frule(operator.getitem, x, idx)
    test_rrule(operator.getitem, x, idx)


def test_compress_with_keyword_axis():
    # the pullback scatters along the same axis (axis= by keyword, not only positionally)
    test_rrule(np.compress, np.array([True, False, True]), np.arange(6.0).reshape(2, 3),
               fkwargs={"axis": 1})
