"""The reference AD on SciPy users' code (issue #29): no false ``StaleSourceError`` for
NumPy helpers whose methods name their own class (``np.iinfo(...).max``, reached from
``np.tri`` and ``np.triu_indices``) or a user's method that does; ``copy.copy`` and
``copy.deepcopy`` of a traced value."""

import copy

import numpy as np
import pytest

from chainrules.ad import grad, jvp

X = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize(("f", "expected"), [
    (lambda x: np.sum(np.tri(3) @ x), np.array([3.0, 2.0, 1.0])),
    (lambda x: np.sum(x[np.triu_indices(3, 1)[0]]), np.array([2.0, 1.0, 0.0])),
    (lambda x: np.sum(x) * float(np.iinfo(np.int32).max > 0), np.ones(3)),
], ids=["tri", "triu_indices", "iinfo"])
def test_numpy_helpers_naming_their_class_are_not_stale(f, expected):
    np.testing.assert_allclose(grad(f)(X), expected)


class Model:
    scale = 2.0

    def __call__(self, x):
        return Model.scale * np.sum(x ** 2)


class _Private:
    __k = 3.0

    def f(self, x):
        return self.__k * _Private.__k * np.sum(x ** 2)


class Derived(_Private):
    def f(self, x):
        return super().f(x) + Model()(x)


def test_method_naming_its_own_class():
    np.testing.assert_allclose(grad(Model())(X), 4.0 * X)


def test_method_with_mangled_names_and_super():
    np.testing.assert_allclose(grad(Derived().f)(X), 18.0 * X + 4.0 * X)


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy])
def test_copy_of_a_traced_value(copier):
    np.testing.assert_allclose(grad(lambda x: np.sum(copier(x) ** 2))(X), 2 * X)
    _, t = jvp(lambda x: np.sum(copier({"a": x})["a"] ** 2), (X,), (np.ones(3),))
    np.testing.assert_allclose(t, 2 * np.sum(X))
