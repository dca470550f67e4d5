"""Inside `_memo.sharing` (what ``check`` runs in), a case's frule and rrule tests at
equal inputs share their finite differences, and nothing else changes: a wrong rule
is caught as before, and different inputs compute their own."""

from __future__ import annotations

import numpy as np
import pytest

from chainrules import NoTangent, frule, rrule, scoped_rules
from chainrules.testing import test_frule, test_rrule
from chainrules.testing._memo import _fingerprint, sharing


def _f(x, y):
    return np.sin(x) * y[:, None]


def _f_rrule(x, y, factor=1.0):
    def pullback(z_bar):
        z_bar = np.asarray(z_bar)
        return (NoTangent(), factor * z_bar * np.cos(x) * y[:, None],
                (z_bar * np.sin(x)).sum(axis=1))
    return _f(x, y), pullback


def _f_frule(dargs, x, y):
    return _f(x, y), np.cos(x) * dargs[1] * y[:, None] + np.sin(x) * dargs[2][:, None]


def _g(x):
    return x ** 2


def _g_rrule(x):
    return _g(x), lambda y_bar: (NoTangent(), 2 * x * y_bar)


@pytest.fixture(autouse=True)
def rules():
    with scoped_rules():
        rrule.register(_f)(_f_rrule)
        frule.register(_f)(_f_frule)
        rrule.register(_g)(_g_rrule)
        yield


X = np.linspace(0.1, 0.9, 6).reshape(2, 3)
Y = np.array([0.5, -1.5])


def _calls(x=X, y=Y):
    return test_frule(_f, x, y, seed=3).primal_calls, test_rrule(_f, x, y, seed=3).primal_calls


def test_the_rrule_test_reuses_the_frule_tests_differences():
    alone = _calls()
    with sharing():
        shared = _calls(X.copy(), Y.copy())  # equal by value, other objects
    assert shared[0] == alone[0]
    # the rrule's Jacobian columns and direction were all computed by the frule test
    assert shared[1] < alone[1] / 4


def test_different_inputs_compute_their_own():
    alone = _calls(X, Y)
    with sharing():
        test_frule(_f, X, Y, seed=3)
        other = X.copy()
        other[0, 0] = np.nextafter(other[0, 0], 1.0)  # one ulp
        assert test_rrule(_f, other, Y, seed=3).primal_calls == alone[1]


def test_a_wrong_rule_is_caught_from_shared_differences():
    with sharing():
        test_frule(_f, X, Y, seed=3)
        with scoped_rules():
            rrule.register(_f)(lambda x, y: _f_rrule(x, y, factor=1.01))
            with pytest.raises(AssertionError, match="wrong cotangent for argument 1"):
                test_rrule(_f, X, Y, seed=3)


def test_a_rule_that_mutates_its_input_drops_what_was_shared():
    def mutating_frule(dargs, x):
        y = x ** 2
        x += 1.0  # the bug the tester names
        return y, 2 * (x - 1.0) * dargs[1]

    x = np.array([0.3, 0.7])
    alone = test_rrule(_g, x.copy(), seed=1).primal_calls
    with sharing():
        with scoped_rules():
            frule.register(_g)(mutating_frule)
            with pytest.raises(AssertionError, match="mutated argument 1"):
                test_frule(_g, x.copy(), seed=1)
        assert test_rrule(_g, x.copy(), seed=1).primal_calls == alone


@pytest.mark.parametrize("a, b", [
    (0.0, -0.0),
    (np.array([1.0, 2.0]), np.array([1.0, 2.0], dtype=np.float32)),
    (np.array([1.0, 2.0]), np.array([[1.0, 2.0]])),
    (np.zeros((2, 2)), np.zeros((2, 2)).T[::1, ::-1]),
    ([1.0, 2.0], (1.0, 2.0)),
    (object(), object()),
])
def test_fingerprints_tell_apart(a, b):
    assert _fingerprint(a, []) != _fingerprint(b, [])


def test_fingerprints_keep_what_they_name_by_identity():
    kept: list = []
    thing = object()
    assert _fingerprint((1, thing), kept) == ("tuple", (("int", "1"), ("id", id(thing))))
    assert kept == [thing]


def test_the_catalogs_pytest_tests_share_between_a_cases_modes():
    from chainrules.testing import Case, arr
    from chainrules.testing.pytest_plugin import check_case

    case = Case(_g, lambda rng, dt: (arr(rng, dt, (4,)),), frule=False, dtypes=("float64",))
    other = Case(_f, lambda rng, dt: (arr(rng, dt, (2, 3)), arr(rng, dt, (2,))),
                 dtypes=("float64",))
    assert check_case(other, "float64", "rrule", seed=5).status == "passed"
    first = check_case(case, "float64", "rrule", seed=5).primal_calls
    # the same case and seed again (as its rrule test after its frule test)
    assert check_case(case, "float64", "rrule", seed=5).primal_calls < first / 2
