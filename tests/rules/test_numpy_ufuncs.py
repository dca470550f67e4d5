import pytest

from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_ufuncs"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


# ------------------------------------------------------------------ what tables cannot say

import re  # noqa: E402

import numpy as np  # noqa: E402

from chainrules import (  # noqa: E402
    NoTangent,
    OutArgumentError,
    ZeroTangent,
    frule,
    rrule,
    unthunk,
)
from chainrules.testing import test_frule, test_rrule  # noqa: E402

EXCLUDED = {
    # name: why this module has no rule for it
    "matmul": "a contraction: rules in chainrules/rules/numpy/contractions.py",
    "vecdot": "a contraction: rules in chainrules/rules/numpy/contractions.py",
    "matvec": "a contraction: rules in chainrules/rules/numpy/contractions.py",
    "vecmat": "a contraction: rules in chainrules/rules/numpy/contractions.py",
}
NON_DIFFERENTIABLE = [
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift,
    np.right_shift, np.bitwise_count, np.gcd, np.lcm,
    np.isnan, np.isinf, np.isfinite, np.isnat, np.signbit, np.spacing, np.nextafter,
]
ALL_UFUNC_NAMES = sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc))
METHODS = [getattr(u, m) for u in (np.add, np.multiply, np.maximum, np.minimum)
           for m in ("reduce", "accumulate")]


def _y_bar(y):
    return np.ones_like(y) if isinstance(y, np.ndarray) else type(y)(1)


def _pull(f, *args, y_bar=None, **kwargs):
    y, pullback = rrule(f, *args, **kwargs)
    return unthunk_all(pullback(_y_bar(y) if y_bar is None else y_bar))


def unthunk_all(bars):
    return tuple(unthunk(b) for b in bars)


def _push(f, *args_and_dots, **kwargs):
    args = args_and_dots[::2]
    dots = args_and_dots[1::2]
    return frule((NoTangent(), *dots), f, *args, **kwargs)[1]


@pytest.mark.parametrize("name", ALL_UFUNC_NAMES)
def test_every_ufunc_has_rules_or_is_excluded(name):
    f = getattr(np, name)
    if name in EXCLUDED:
        pytest.skip(EXCLUDED[name])
    types = (np.ndarray,) * f.nin
    assert rrule.lookup(f, types) is not None, f"np.{name} has no rrule"
    assert frule.lookup(f, types) is not None, f"np.{name} has no frule"


@pytest.mark.parametrize("method", METHODS, ids=lambda m: f"{m.__self__.__name__}.{m.__name__}")
def test_ufunc_methods_found_through_fresh_bound_methods(method):
    ufunc = method.__self__
    fresh = getattr(ufunc, method.__name__)  # a new bound-method object, equal and same hash
    assert fresh is not method
    x = np.arange(1.0, 7.0).reshape(2, 3)
    y, pullback = rrule(fresh, x, axis=0)
    np.testing.assert_array_equal(y, fresh(x, axis=0))
    assert frule((NoTangent(), np.ones_like(x)), fresh, x, axis=0) is not None


@pytest.mark.parametrize("f", NON_DIFFERENTIABLE, ids=lambda f: f.__name__)
def test_non_differentiable_declarations(f):
    args = (np.array([1.0, 2.0]),) * f.nin
    if f is np.isnat:
        args = (np.array(["2020-01-01", "NaT"], dtype="datetime64[D]"),)
    elif f.__name__ in ("bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
                        "right_shift", "bitwise_count", "gcd", "lcm"):
        args = (np.array([3, 5]),) * f.nin
    y, pullback = rrule(f, *args)
    np.testing.assert_array_equal(y, f(*args))
    assert pullback(np.ones(np.shape(y))) == (NoTangent(),) * (f.nin + 1)
    assert frule((NoTangent(),) * (f.nin + 1), f, *args)[1] == NoTangent()


# --- out= and where= are refused

_X = np.array([0.3, 0.6])
OUT_CALLS = [
    (np.sin, (_X,)), (np.add, (_X, _X)), (np.absolute, (_X,)), (np.sign, (_X,)),
    (np.conjugate, (_X,)), (np.ldexp, (_X, np.array([1, 2]))), (np.frexp, (_X,)),
    (np.modf, (_X,)), (np.divmod, (_X, _X + 1)), (np.maximum, (_X, _X[::-1])),
    (np.round, (_X,)), (np.fix, (_X,)),
]


@pytest.mark.parametrize(("f", "args"), OUT_CALLS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("mode", ["rrule", "frule"])
def test_out_argument_error(f, args, mode):
    nout = getattr(f, "nout", 1)
    out = tuple(np.empty(2) for _ in range(nout)) if nout > 1 else np.empty(2)
    calls = [({"out": out}, "out")]
    if isinstance(f, np.ufunc):
        calls.append(({"where": np.array([True, False])}, "where"))
    for kwargs, argument in calls:
        message = re.escape(f"the rule for numpy.{f.__name__} does not support {argument}=")
        with pytest.raises(OutArgumentError, match=message):
            if mode == "rrule":
                rrule(f, *args, **kwargs)
            else:
                frule((NoTangent(),) * (len(args) + 1), f, *args, **kwargs)


@pytest.mark.parametrize("f", [np.sin, np.add], ids=lambda f: f.__name__)
def test_positional_out_argument_error(f):
    args = (_X,) * f.nin + (np.empty(2),)
    with pytest.raises(OutArgumentError, match="does not support out="):
        rrule(f, *args)
    with pytest.raises(OutArgumentError, match="does not support out="):
        frule((NoTangent(),) * (len(args) + 1), f, *args)


@pytest.mark.parametrize("method", METHODS, ids=lambda m: f"{m.__self__.__name__}.{m.__name__}")
def test_ufunc_method_out_argument_error(method):
    x = np.ones((2, 3))
    out = np.empty(3) if method.__name__ == "reduce" else np.empty((2, 3))
    with pytest.raises(OutArgumentError, match="does not support out="):
        rrule(method, x, axis=0, out=out)
    with pytest.raises(OutArgumentError, match="does not support out="):
        frule((NoTangent(), x, NoTangent(), NoTangent(), NoTangent()), method, x, 0, None, out)
    if method.__name__ == "reduce":
        name = f"numpy.{method.__self__.__name__}.reduce"
        with pytest.raises(OutArgumentError, match=re.escape(f"{name} does not support where=")):
            rrule(method, x, axis=0, where=np.array([True, False, True]))


def test_clip_and_nan_to_num_refuse_writing_into_their_input():
    x = np.array([1.0, np.nan])
    with pytest.raises(OutArgumentError, match=re.escape("numpy.clip")):
        rrule(np.clip, x, 0.0, 1.0, out=np.empty(2))
    with pytest.raises(OutArgumentError, match=re.escape("numpy.nan_to_num")):
        rrule(np.nan_to_num, x, copy=False)
    with pytest.raises(OutArgumentError, match=re.escape("numpy.nan_to_num")):
        frule((NoTangent(), x, NoTangent()), np.nan_to_num, x, False)


# --- conventions at non-smooth points (finite differences cannot check these)


@pytest.mark.parametrize("x", [0.0, np.array([0.0, -0.0]), np.array([0j, 1e-300j * 0])])
def test_abs_at_zero_is_zero(x):
    assert np.all(_pull(np.absolute, x)[1] == 0)
    assert np.all(unthunk(_push(np.absolute, x, np.ones_like(x))) == 0)


def test_zero_at_origin_conventions():
    zero = np.zeros(2)
    assert np.all(_pull(np.fabs, zero)[1] == 0)
    for f in (np.hypot, np.arctan2):
        bars = _pull(f, zero, zero)
        assert np.all(bars[1] == 0) and np.all(bars[2] == 0), f.__name__
        assert np.all(_push(f, zero, np.ones(2), zero, np.ones(2)) == 0), f.__name__
    assert np.all(_pull(np.copysign, zero, np.array([1.0, -1.0]))[1] == 0)
    zc = np.zeros(2, dtype=complex)
    assert np.all(_pull(np.sign, zc, y_bar=np.ones(2, complex))[1] == 0)
    assert np.all(_push(np.sign, zc, np.ones(2, complex)) == 0)
    assert np.all(_pull(np.angle, zc)[1] == 0)


@pytest.mark.parametrize("f", [np.sign, np.floor, np.ceil, np.trunc, np.rint, np.round,
                               np.around, np.fix])
def test_piecewise_constant_functions_have_zero_derivative(f):
    x = np.array([-1.0, 0.0, 2.0])  # including the jumps
    assert _pull(f, x)[1] == ZeroTangent()
    assert _push(f, x, np.ones(3)) == ZeroTangent()


def test_floor_divide_and_divmod_quotient_have_zero_derivative():
    x1, x2 = np.array([3.5, -2.0]), np.array([2.0, 0.75])
    bars = _pull(np.floor_divide, x1, x2)
    assert bars[1] == ZeroTangent() and bars[2] == ZeroTangent()
    y, pullback = rrule(np.divmod, x1, x2)
    bars = pullback((np.ones(2), ZeroTangent()))
    assert unthunk(bars[1]) == ZeroTangent() and unthunk(bars[2]) == ZeroTangent()


@pytest.mark.parametrize(("f", "w1"), [(np.maximum, 0.5), (np.minimum, 0.5), (np.fmax, 0.5),
                                       (np.fmin, 0.5)])
def test_ties_split_equally(f, w1):
    x = np.array([1.0, -2.0], dtype=np.float32)
    bars = _pull(f, x, x.copy(), y_bar=np.array([2.0, 4.0], dtype=np.float32))
    np.testing.assert_array_equal(bars[1], [1.0, 2.0])
    np.testing.assert_array_equal(bars[2], [1.0, 2.0])
    assert bars[1].dtype == np.float32
    y_dot = _push(f, x, np.array([1.0, 3.0]), x.copy(), np.array([3.0, 5.0]))
    np.testing.assert_array_equal(y_dot, [2.0, 4.0])


def test_nan_goes_to_the_argument_numpy_returns():
    nan = np.array([np.nan, 1.0])
    other = np.array([0.0, np.nan])
    for f, to_first in ((np.maximum, [1, 0]), (np.minimum, [1, 0]), (np.fmax, [0, 1]),
                        (np.fmin, [0, 1])):
        bars = _pull(f, nan, other)
        np.testing.assert_array_equal(bars[1], to_first, err_msg=f.__name__)
        np.testing.assert_array_equal(bars[2], 1 - np.array(to_first), err_msg=f.__name__)


def test_clip_ties_go_to_x():
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    bars = _pull(np.clip, x, -1.0, 1.0)
    np.testing.assert_array_equal(bars[1], [1, 1, 1, 0])
    assert bars[2] == 0.0
    assert bars[3] == 1.0


def test_heaviside_derivative_in_x2_is_the_indicator_of_x1_zero():
    bars = _pull(np.heaviside, np.array([0.0, 1.0, -1.0]), np.array([0.5, 0.5, 0.5]))
    assert bars[1] == ZeroTangent()
    np.testing.assert_array_equal(bars[2], [1, 0, 0])


def test_power_conventions():
    # d/dp at x == 0 is 0 (limit from p > 0); d/dx at p == 0 is 0, also at x == 0
    bars = _pull(np.power, np.array([0.0, 0.0, 2.0]), np.array([2.0, 0.0, 0.0]))
    np.testing.assert_array_equal(bars[1], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(bars[2], [0.0, 0.0, np.log(2.0)])
    # real negative base: d/dp = Re(y log x) = y log|x|
    bars = _pull(np.power, np.array([-2.0]), np.array([3.0]))
    np.testing.assert_allclose(bars[2], [-8.0 * np.log(2.0)])


def test_reduce_ties_split_equally_among_maximisers():
    x = np.array([[3.0, 1.0, 3.0, 3.0], [0.0, 2.0, 1.0, -1.0]])
    for method in (np.maximum.reduce, np.minimum.reduce):
        y, pullback = rrule(method, x if method == np.maximum.reduce else -x, axis=1)
        bars = pullback(np.array([3.0, 1.0]))
        np.testing.assert_allclose(bars[1], [[1, 0, 1, 1], [0, 1, 0, 0]])
    # an `initial` equal to the maximum takes its share
    y, pullback = rrule(np.maximum.reduce, np.array([1.0, 2.0]), initial=2.0)
    np.testing.assert_allclose(pullback(1.0)[1], [0.0, 0.5])
    y, pullback = rrule(np.maximum.reduce, np.array([1.0, 2.0]), initial=5.0)
    np.testing.assert_allclose(pullback(1.0)[1], [0.0, 0.0])


def test_accumulate_ties_split_equally_among_running_maximisers():
    x = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    y, pullback = rrule(np.maximum.accumulate, x)
    np.testing.assert_allclose(pullback(np.ones(5))[1],
                               [1, 1 + 0.5 + 0.5 + 1 / 3, 0.5 + 0.5 + 1 / 3, 0, 1 / 3])
    _assert_frule_is_adjoint_of_rrule(np.maximum.accumulate, x)
    _assert_frule_is_adjoint_of_rrule(np.minimum.accumulate, -x)
    _assert_frule_is_adjoint_of_rrule(np.maximum.reduce, np.array([[2.0, 2.0, 1.0]]), axis=1)


def _assert_frule_is_adjoint_of_rrule(f, x, **kwargs):
    """At ties, frule and rrule must still implement the same linear map."""
    rng = np.random.default_rng(0)
    x_dot = rng.standard_normal(x.shape)
    y, pullback = rrule(f, x, **kwargs)
    y_bar = rng.standard_normal(np.shape(y))
    y_dot = frule((NoTangent(), x_dot), f, x, **kwargs)[1]
    x_bar = pullback(y_bar)[1]
    np.testing.assert_allclose(np.sum(y_bar * y_dot), np.sum(x_bar * x_dot))


@pytest.mark.parametrize("f", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_binary_selection_frule_is_adjoint_of_rrule_at_ties(f):
    x = np.array([1.0, 2.0, 3.0])
    rng = np.random.default_rng(1)
    dots = rng.standard_normal((2, 3))
    y_bar = rng.standard_normal(3)
    y_dot = _push(f, x, dots[0], x.copy(), dots[1])
    bars = _pull(f, x, x.copy(), y_bar=y_bar)
    np.testing.assert_allclose(y_bar @ y_dot, bars[1] @ dots[0] + bars[2] @ dots[1])


def test_multiply_reduce_and_accumulate_at_zeros_by_finite_differences():
    # all-zero rows and several zeros in one row: where y / x would divide by zero
    x = np.array([[0.0, 0.0, 2.0], [0.0, 3.0, 0.5], [1.5, -2.0, 0.0]])
    for method, kwargs in ((np.multiply.reduce, {"axis": 1}),
                           (np.multiply.reduce, {"axis": None}),
                           (np.multiply.accumulate, {"axis": 1}),
                           (np.multiply.accumulate, {"axis": 0})):
        test_rrule(method, x, fkwargs=kwargs)
        test_frule(method, x, fkwargs=kwargs)


# --- integer and boolean inputs, thunks, mutation


def test_integer_and_bool_inputs_get_no_tangent():
    i = np.array([1, 2, 3])
    b = np.array([True, False, True])
    f_arr = np.array([1.0, 2.0, 3.0])
    for f, args, which in ((np.add, (i, i), (0, 1)), (np.multiply, (i, f_arr), (0,)),
                           (np.absolute, (i,), (0,)), (np.maximum, (i, i[::-1]), (0, 1)),
                           (np.add, (b, b), (0, 1)), (np.ldexp, (f_arr, 3), (1,)),
                           (np.power, (f_arr, i), (1,))):
        y, pullback = rrule(f, *args)
        bars = unthunk_all(pullback(np.ones(np.shape(y))))
        for k in which:
            assert isinstance(bars[k + 1], NoTangent), (f.__name__, k, bars[k + 1])
        # a zero y_bar may pass through ProjectTo as ZeroTangent (DESIGN §1, Projection)
        bars = unthunk_all(pullback(ZeroTangent()))
        for k in which:
            assert isinstance(bars[k + 1], (NoTangent, ZeroTangent)), (f.__name__, k)
        y_dot = frule((NoTangent(), *(NoTangent() if k in which else np.ones(3)
                                      for k in range(len(args)))), f, *args)[1]
        if not np.issubdtype(np.asarray(y).dtype, np.inexact):
            assert isinstance(y_dot, (NoTangent, ZeroTangent)), (f.__name__, y_dot)


def test_scalar_rule_partials_are_exposed_for_fusion():
    from chainrules import derivatives_given_output, has_scalar_rule

    assert has_scalar_rule(np.sin) and has_scalar_rule(np.maximum)
    x = np.array([0.0, 1.0])
    (p,), = derivatives_given_output(np.sqrt(x), np.sqrt, x)  # no warning at sqrt'(0) = inf
    assert p[0] == np.inf


def test_array_likes_and_positional_out_take_the_local_rules():
    y, pullback = rrule(np.multiply, [1.0, 2.0], (3.0, 4.0))
    bars = unthunk_all(pullback(np.ones(2)))
    assert [float(v) for v in bars[1]] == [3.0, 4.0]
    assert [float(v) for v in bars[2]] == [1.0, 2.0]


def test_rules_do_not_write_into_read_only_inputs_or_cotangents():
    x = np.array([[0.5, -1.0], [2.0, 0.0]])
    x.setflags(write=False)
    y_bar = np.array([[1.0, 2.0], [3.0, 4.0]])
    y_bar.setflags(write=False)
    for f, args, kwargs in ((np.sin, (x,), {}), (np.multiply, (x, x), {}),
                            (np.maximum, (x, x.T), {}), (np.absolute, (x,), {}),
                            (np.clip, (x, -0.5, 0.5), {}),
                            (np.multiply.accumulate, (x,), {"axis": 1}),
                            (np.maximum.accumulate, (x,), {}),
                            (np.add.accumulate, (x,), {})):
        y, pullback = rrule(f, *args, **kwargs)
        unthunk_all(pullback(y_bar))
        frule((NoTangent(), *(y_bar if np.shape(a) == y_bar.shape else 1.0 for a in args)),
              f, *args, **kwargs)
