"""Rules of chainrules.rules.numpy.shape: the case table plus targeted checks."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import chainrules
from chainrules import NoTangent, OutArgumentError, Tangent, ZeroTangent, frule, rrule, unthunk
from chainrules.testing import unsupported
from chainrules.testing.cases.numpy_shape import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_shape"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


# ---------------------------------------------------------------------------- coverage

DIFFERENTIABLE = [
    np.reshape, np.ravel, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d,
    np.atleast_3d, np.transpose, np.permute_dims, np.matrix_transpose, np.swapaxes,
    np.moveaxis, np.flip, np.fliplr, np.flipud, np.roll, np.rot90, np.broadcast_to,
    np.broadcast_arrays, np.concatenate, np.concat, np.stack, np.hstack, np.vstack, np.dstack,
    np.column_stack, np.append, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
    np.unstack, np.tile, np.repeat, np.pad, np.diag, np.diagonal, np.diagflat, np.triu,
    np.tril, np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
    np.copy, np.astype, np.resize, np.delete, np.insert, np.rollaxis, sliding_window_view,
]
NON_DIFFERENTIABLE = [
    np.indices, np.unravel_index, np.ravel_multi_index, np.tril_indices, np.triu_indices,
    np.tril_indices_from, np.triu_indices_from, np.diag_indices, np.diag_indices_from,
]


@pytest.mark.parametrize("f", DIFFERENTIABLE + NON_DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_has_rules(f):
    assert rrule.has_rules(f) and frule.has_rules(f)


def test_every_differentiable_function_has_a_case():
    tested = {c.f for c in CASES}
    missing = [f.__name__ for f in DIFFERENTIABLE if f not in tested]
    assert not missing


@pytest.mark.parametrize(("f", "args"), [
    (np.indices, ((2, 3),)),
    (np.unravel_index, (np.array([1, 5]), (2, 3))),
    (np.tril_indices, (3,)),
    (np.diag_indices_from, (np.ones((2, 2)),)),
])
def test_non_differentiable(f, args):
    y, pullback = rrule(f, *args)
    assert all(isinstance(t, NoTangent) for t in pullback(1.0))
    assert len(pullback(1.0)) == len(args) + 1
    assert isinstance(frule((NoTangent(),) * (len(args) + 1), f, *args)[1], NoTangent)


# ---------------------------------------------------------------------------- errors


def test_concatenate_out_argument_error():
    xs = [np.ones(2), np.ones(3)]
    with pytest.raises(OutArgumentError):
        rrule(np.concatenate, xs, out=np.empty(5))
    with pytest.raises(OutArgumentError):
        frule((NoTangent(), ZeroTangent()), np.concatenate, xs, out=np.empty(5))


def test_pad_nonlinear_mode_not_implemented():
    x = np.array([1.0, 3.0, 2.0])
    _, pullback = rrule(np.pad, x, 1, mode="maximum")
    assert isinstance(pullback(np.ones(5))[1], chainrules.NotImplementedTangent)
    _, y_dot = frule((NoTangent(), np.ones(3), NoTangent()), np.pad, x, 1, mode="maximum")
    assert isinstance(y_dot, chainrules.NotImplementedTangent)


# ---------------------------------------------------------------------------- aliasing


@pytest.mark.parametrize(("f", "args"), [
    (np.reshape, ((6,),)), (np.ravel, ()), (np.transpose, ()), (np.squeeze, ()),
    (np.expand_dims, (0,)), (np.flip, ()), (np.rot90, ()), (np.asarray, ()), (np.copy, ()),
    (np.array, ()), (np.swapaxes, (0, 1)), (np.moveaxis, (0, 1)), (np.atleast_2d, ()),
    (np.matrix_transpose, ()), (np.fliplr, ()), (np.astype, (np.float64,)),
])
def test_cotangent_does_not_alias_y_bar(f, args):
    x = np.arange(6.0).reshape(2, 3)
    y, pullback = rrule(f, x, *args)
    y_bar = np.ones_like(y)
    x_bar = unthunk(pullback(y_bar)[1])
    assert not np.shares_memory(x_bar, y_bar)


def test_split_cotangent_pieces_do_not_alias_y_bar_and_accept_zero_items():
    x = np.arange(6.0)
    y, pullback = rrule(np.split, x, 3)
    y_bar = [np.ones(2), ZeroTangent(), np.full(2, 2.0)]
    x_bar = pullback(Tangent[list](*y_bar))[1]
    np.testing.assert_array_equal(x_bar, [1, 1, 0, 0, 2, 2])


def test_list_input_gets_a_structural_cotangent():
    _, pullback = rrule(np.asarray, [[1.0, 2.0], [3.0, 4.0]])
    x_bar = pullback(np.array([[1.0, 2.0], [3.0, 4.0]]))[1]
    assert isinstance(x_bar, Tangent) and x_bar.primal_type is list
    assert isinstance(x_bar[0], Tangent) and x_bar[1][0] == 3.0


def test_broadcast_to_sums_repeated_entries():
    from chainrules.testing import test_rrule

    test_rrule(np.broadcast_to, np.array([[1.0], [2.0]]), (3, 2, 4))


# ------------------------------------------------------------ layout-dependent functions
# The testers rebuild perturbed inputs C-contiguous, so these functions are tested with
# the layout made inside the differentiated function, chaining the rules by hand.


def _chain_rrule(steps):
    """rrule_f for x -> steps[-1](...steps[0](x)), each step (f, args, kwargs)."""

    def chain_rrule(config, f, x, **kwargs):
        pullbacks = []
        for g, args, kw in steps:
            x, pullback = rrule(g, x, *args, **kw)
            pullbacks.append(pullback)

        def chain_pullback(y_bar):
            for pullback in reversed(pullbacks):
                y_bar = pullback(y_bar)[1]
            return (NoTangent(), y_bar)

        return x, chain_pullback

    return chain_rrule


def _chain_frule(steps):
    def chain_frule(config, dargs, f, x, **kwargs):
        x_dot = dargs[1]
        for g, args, kw in steps:
            x, x_dot = frule((NoTangent(), x_dot, *(NoTangent() for _ in args)), g, x,
                             *args, **kw)
        return x, x_dot

    return chain_frule


_LAYOUT_CHAINS = {
    "ravel_K_of_flipped_transpose": [(np.transpose, (), {}), (np.flip, (0,), {}),
                                     (np.ravel, (), {"order": "K"})],
    "ravel_A_of_transpose": [(np.transpose, (), {}), (np.ravel, (), {"order": "A"})],
    "reshape_A_of_transpose": [(np.transpose, (), {}), (np.reshape, ((2, 6),),
                                                       {"order": "A"})],
    "ravel_K_of_broadcast": [(np.broadcast_to, ((3, 4, 2),), {}),
                             (np.swapaxes, (0, 2), {}), (np.ravel, (), {"order": "K"})],
}


@pytest.mark.parametrize("name", list(_LAYOUT_CHAINS))
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_layout_dependent_orders(name, dtype):
    from chainrules.testing import test_frule, test_rrule

    steps = _LAYOUT_CHAINS[name]

    def f(x):
        for g, args, kw in steps:
            x = g(x, *args, **kw)
        return x

    shape = (4, 2) if name == "ravel_K_of_broadcast" else (4, 3)
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    if dtype == "complex128":
        x = x + 1j * np.random.default_rng(2).standard_normal(shape)
    test_rrule(f, x, rrule_f=_chain_rrule(steps))
    test_frule(f, x, frule_f=_chain_frule(steps))


@pytest.mark.parametrize("f", [np.concatenate, np.stack])
def test_positional_out_argument_error(f):
    xs = [np.ones(2), np.ones(2)]
    out = np.empty_like(f(xs, 0))
    with pytest.raises(OutArgumentError):
        rrule(f, xs, 0, out)
    with pytest.raises(OutArgumentError):
        frule((NoTangent(), ZeroTangent(), NoTangent(), NoTangent()), f, xs, 0, out)


_PAD_DICT = unsupported("np.pad with a dict of widths (NumPy 2.3)",
                        lambda: np.pad(np.ones(2), {0: (1, 1)}))


@pytest.mark.skipif(_PAD_DICT is not None, reason=str(_PAD_DICT))
def test_pad_with_a_dict_of_widths():
    from chainrules.testing import test_frule, test_rrule

    x = np.random.default_rng(0).standard_normal((2, 3))
    test_rrule(np.pad, x, {1: (1, 2)}, "reflect")
    test_frule(np.pad, x, {1: (1, 2)}, "reflect")
