"""ProjectTo for every kind of primal."""

import collections
import dataclasses
import re

import numpy as np
import pytest

from chainrules import (
    NoTangent,
    NotImplementedTangent,
    ProjectionError,
    ProjectTo,
    Tangent,
    Thunk,
    ZeroTangent,
    not_implemented,
)


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float


Pair = collections.namedtuple("Pair", "first second")


@pytest.mark.parametrize("x", [1.5, 2, np.float64(1.0)])
def test_real_scalar_takes_real_part_as_float(x):
    out = ProjectTo(x)(2.0 + 3j)
    assert out == 2.0
    assert isinstance(out, float)


def test_numpy_real_scalar_keeps_its_type():
    out = ProjectTo(np.float32(1.0))(np.float64(2.5) + 1j)
    assert out == 2.5 and type(out) is np.float32


def test_scalar_accepts_arrays_as_broadcast_0d():
    assert ProjectTo(1.0)(np.array([[2.0]])) == 2.0
    assert ProjectTo(1.0)(np.array(3.0)) == 3.0
    out = ProjectTo(1.0)(np.ones((2, 3)) + 1j)  # a scalar broadcast against an array
    assert out == 6.0 and isinstance(out, float)
    assert ProjectTo(np.float32(1))(np.ones(4)) == np.float32(4.0)


def test_scalar_given_a_non_numeric_array_error():
    msg = "cannot project ndarray(shape=(1,), dtype=<U1) onto the tangent space of a float: expected a number, got dtype <U1"
    with pytest.raises(ProjectionError, match=re.escape(msg)):
        ProjectTo(1.0)(np.array(["a"]))


def test_scalar_given_a_structural_tangent_error():
    with pytest.raises(ProjectionError, match="a scalar's tangent is a number"):
        ProjectTo(1.0)(Tangent[tuple](1.0))


def test_complex_scalar_and_array():
    assert ProjectTo(1j)(2.0) == 2.0 + 0j and isinstance(ProjectTo(1j)(2.0), complex)
    z = np.ones(2, dtype=np.complex64)
    out = ProjectTo(z)(np.ones(2))
    assert out.dtype == np.complex64


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_real_array_real_part_same_dtype(dtype):
    x = np.ones(3, dtype=dtype)
    out = ProjectTo(x)(np.array([1 + 1j, 2 + 2j, 3 - 1j]))
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
    assert out.dtype == dtype


def test_float32_stays_float32():
    out = ProjectTo(np.ones(2, dtype=np.float32))(np.ones(2, dtype=np.float64))
    assert out.dtype == np.float32


@pytest.mark.parametrize(
    ("x_shape", "dx_shape", "expected"),
    [
        ((3,), (2, 3), np.full(3, 2.0)),  # leading dim added by broadcasting
        ((2, 1), (2, 4), np.full((2, 1), 4.0)),  # size-1 dim broadcast
        ((1, 3), (5, 4, 3), np.full((1, 3), 20.0)),  # both
        ((3,), (1, 3, 1), np.ones(3)),  # trivial dims added
        ((1, 3, 1), (3,), np.ones((1, 3, 1))),  # trivial dims removed
        ((), (2, 2), np.array(4.0)),  # 0-d primal, broadcast dx
    ],
)
def test_shapes(x_shape, dx_shape, expected):
    out = ProjectTo(np.zeros(x_shape))(np.ones(dx_shape))
    assert out.shape == x_shape
    np.testing.assert_array_equal(out, expected)


def test_shape_mismatch_error_names_both_shapes():
    msg = "shape (4,) does not fit shape (3,)"
    with pytest.raises(ProjectionError, match=re.escape(msg)) as info:
        ProjectTo(np.zeros(3))(np.ones(4))
    assert "ndarray(shape=(3,), dtype=float64)" in str(info.value)


def test_array_given_a_structural_tangent_error():
    with pytest.raises(ProjectionError, match="an array's tangent is an array"):
        ProjectTo(np.zeros(2))(Tangent[tuple](1.0, 2.0))


def test_array_given_a_non_numeric_error():
    with pytest.raises(ProjectionError, match="expected a numeric array, got dtype <U1"):
        ProjectTo(np.zeros(1))(np.array(["a"]))


def test_empty_and_non_contiguous():
    out = ProjectTo(np.zeros((0, 3)))(np.zeros((2, 0, 3)))
    assert out.shape == (0, 3)
    base = np.arange(12.0).reshape(3, 4)
    view = base[:, ::2]
    np.testing.assert_array_equal(ProjectTo(view)(view.T.T), view)


@pytest.mark.parametrize("x", [True, np.bool_(False), "s", None, np.arange(3), np.array([True]), b"b"])
def test_non_differentiable_primals_give_no_tangent(x):
    assert ProjectTo(x)(1.0) is NoTangent()


@pytest.mark.parametrize("dx", [ZeroTangent(), NoTangent()])
def test_zero_like_pass_through(dx):
    assert ProjectTo(np.ones(2))(dx) is dx
    assert ProjectTo(1.0)(dx) is dx
    assert ProjectTo((1.0, 2.0))(dx) is dx


def test_not_implemented_passes_through():
    t = not_implemented("x")
    assert ProjectTo(np.ones(2))(t) is t
    assert isinstance(t, NotImplementedTangent)


def test_thunk_becomes_thunk_of_projection():
    calls = []

    def compute():
        calls.append(1)
        return np.ones((2, 3))

    out = ProjectTo(np.zeros(3, dtype=np.float32))(Thunk(compute))
    assert isinstance(out, Thunk) and calls == []
    value = out.unthunk()
    assert value.dtype == np.float32 and value.shape == (3,)


def test_tuple_list_dict():
    t = ProjectTo((1.0, np.zeros(2, dtype=np.float32), "label"))((1 + 1j, np.ones(2), 5.0))
    assert type(t) is Tangent[tuple]
    assert t[0] == 1.0 and t[1].dtype == np.float32 and t[2] is NoTangent()
    lst = ProjectTo([1.0, 2.0])(Tangent[list](3.0, 4.0j))
    assert lst == Tangent[list](3.0, 0.0)
    d = ProjectTo({"a": 1.0, "n": 3})({"a": 2.0 + 1j})
    assert d == Tangent[dict]({"a": 2.0})


def test_sequence_length_error():
    with pytest.raises(ProjectionError, match="expected 2 items, got 3"):
        ProjectTo((1.0, 2.0))((1.0, 2.0, 3.0))


def test_sequence_given_a_number_error():
    with pytest.raises(ProjectionError, match="expected a tuple, list or Tangent of items"):
        ProjectTo((1.0, 2.0))(1.0)


def test_dict_unknown_key_error():
    with pytest.raises(ProjectionError, match="key 'z' is not in the primal"):
        ProjectTo({"a": 1.0})({"z": 1.0})


def test_dict_given_a_number_error():
    with pytest.raises(ProjectionError, match="expected a dict or a Tangent"):
        ProjectTo({"a": 1.0})(1.0)


def test_dataclass_and_namedtuple():
    p = Params(np.zeros(2, dtype=np.float32), 1.0)
    t = ProjectTo(p)(Tangent[Params](w=np.ones(2) + 1j, b=2 + 1j))
    assert type(t) is Tangent[Params]
    assert t.w.dtype == np.float32 and t.b == 2.0
    nt = ProjectTo(Pair(1.0, 2.0))((3.0, 4.0))
    assert nt == Tangent[Pair](first=3.0, second=4.0)


def test_object_wrong_tangent_type_error():
    with pytest.raises(ProjectionError, match="it is a tangent of a Pair"):
        ProjectTo(Params(np.zeros(1), 1.0))(Tangent[Pair](first=1.0))


def test_object_unknown_field_error():
    with pytest.raises(ProjectionError, match="field 'z' is not a field of the primal"):
        ProjectTo(Params(np.zeros(1), 1.0))({"z": 1.0})


def test_object_given_a_number_error():
    with pytest.raises(ProjectionError, match="expected a Tangent of its fields"):
        ProjectTo(Params(np.zeros(1), 1.0))(1.0)


def test_scipy_sparse_keeps_pattern():
    sp = pytest.importorskip("scipy.sparse")
    x = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    out = ProjectTo(x)(np.array([[5.0, 6.0], [7.0, 8.0]]))
    assert sp.issparse(out) and out.format == "csr"
    np.testing.assert_array_equal(out.toarray(), [[5.0, 0.0], [0.0, 8.0]])
    arr = sp.csc_array(np.array([[0.0, 1.0]]))
    out = ProjectTo(arr)(sp.csc_array(np.array([[3.0, 4.0 + 1j]])))
    assert isinstance(out, sp.sparray) and out.format == "csc"
    np.testing.assert_array_equal(out.toarray(), [[0.0, 4.0]])


def test_scipy_sparse_shape_error():
    sp = pytest.importorskip("scipy.sparse")
    x = sp.csr_matrix(np.eye(2))
    with pytest.raises(ProjectionError, match=r"shape \(3, 3\) differs from \(2, 2\)"):
        ProjectTo(x)(sp.csr_matrix(np.eye(3)))


def test_repr():
    assert repr(ProjectTo(1.0)) == "ProjectTo(float)"
