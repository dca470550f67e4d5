"""rand_tangent, test_approx, default_tolerances, seeds."""

from __future__ import annotations

import re
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
import pytest

from chainrules import (
    NoTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    not_implemented,
)
from chainrules.testing import (
    TesterUsageError,
    default_seed,
    default_tolerances,
    make_rng,
    rand_tangent,
    test_approx,
)

Point = namedtuple("Point", ["x", "y"])


@dataclass
class Layer:
    w: np.ndarray
    name: str
    size: int


@pytest.mark.parametrize("x", [3, True, "s", None, np.arange(3), np.array([True]), len])
def test_rand_tangent_non_perturbable_is_no_tangent(x):
    assert isinstance(rand_tangent(x, 0), NoTangent)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "complex64"])
def test_rand_tangent_arrays_keep_dtype_and_shape(dtype):
    t = rand_tangent(np.zeros((2, 3), dtype), 0)
    assert t.dtype == np.dtype(dtype) and t.shape == (2, 3)
    if dtype.startswith("complex"):
        assert np.any(t.imag != 0)


def test_rand_tangent_scalars():
    assert type(rand_tangent(1.0, 0)) is float
    assert type(rand_tangent(1j, 0)) is complex
    assert type(rand_tangent(np.float32(1), 0)) is np.float32


def test_rand_tangent_structures():
    t = rand_tangent(Layer(np.ones(2), "a", 3), 0)
    assert isinstance(t, Tangent) and t.primal_type is Layer
    assert t.w.shape == (2,) and isinstance(t.name, NoTangent) and isinstance(t.size, NoTangent)
    assert isinstance(rand_tangent(Point(1.0, 2.0), 0), Tangent)
    assert isinstance(rand_tangent({"a": 1.0}, 0), Tangent)
    assert isinstance(rand_tangent((1, "a"), 0), NoTangent)


def test_rand_tangent_is_reproducible():
    a = rand_tangent(np.zeros(5), 7)
    b = rand_tangent(np.zeros(5), np.random.default_rng(7))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, rand_tangent(np.zeros(5), 8))


def test_seed_env_var(monkeypatch):
    monkeypatch.setenv("CHAINRULES_TEST_SEED", "12")
    assert default_seed() == 12
    np.testing.assert_array_equal(rand_tangent(np.zeros(3)), rand_tangent(np.zeros(3), 12))


def test_seed_env_var_error(monkeypatch):
    monkeypatch.setenv("CHAINRULES_TEST_SEED", "abc")
    with pytest.raises(TesterUsageError, match="CHAINRULES_TEST_SEED must be an integer, got 'abc'"):
        default_seed()


def test_make_rng_error():
    with pytest.raises(TesterUsageError, match=re.escape("rng must be a numpy.random.Generator")):
        make_rng("seed")


def test_default_tolerances_by_dtype():
    assert default_tolerances(np.ones(2)) == (1e-7, 1e-9)
    assert default_tolerances(np.ones(2, np.complex64)) == (2e-3, 1e-5)
    assert default_tolerances(Tangent[tuple](np.ones(1), np.ones(1, np.float32))) == (2e-3, 1e-5)


def test_approx_unthunks_and_zeros():
    test_approx(Thunk(lambda: np.ones(2)), np.ones(2))
    test_approx(ZeroTangent(), np.zeros(3))
    test_approx(NoTangent(), Tangent[tuple](0.0, np.zeros(2)))
    test_approx(Tangent[Point](x=1.0), Tangent[Point](x=1.0, y=0.0))
    with pytest.raises(AssertionError, match=re.escape("value: one side is a zero tangent")):
        test_approx(ZeroTangent(), np.ones(2))


def test_approx_structural_says_which_field():
    a = Tangent[Layer](w=np.array([1.0, 2.0, 3.0]))
    b = Tangent[Layer](w=np.array([1.0, 2.5, 3.0]))
    with pytest.raises(AssertionError, match=r"(?s)ctx: value\.w: not approximately equal.*\[1\]: "):
        test_approx(a, b, "ctx")


def test_approx_different_primal_types_error():
    with pytest.raises(AssertionError, match="tangents of different primal types"):
        test_approx(Tangent[Point](x=1.0), Tangent[Layer](size=1.0))


def test_approx_shape_mismatch():
    with pytest.raises(AssertionError, match=re.escape("shapes differ: (2,) vs (3,)")):
        test_approx(np.ones(2), np.ones(3))


def test_approx_nan_positions():
    test_approx(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    with pytest.raises(AssertionError, match="non-finite entries differ"):
        test_approx(np.array([np.nan, 1.0]), np.array([1.0, 1.0]))


def test_approx_tolerance_is_normwise():
    # a tiny element may be off by much more than rtol relative to itself
    test_approx(np.array([1e6, 1e-9]), np.array([1e6, 2e-9]))
    test_approx(1.0, 1.0 + 1e-6, rtol=1e-5)
    with pytest.raises(AssertionError):
        test_approx(1.0, 1.0 + 1e-6)


def test_approx_not_implemented_is_xfail():
    with pytest.raises(pytest.xfail.Exception, match="derivative not implemented"):
        test_approx(not_implemented("later"), 1.0)
