"""The tangent types and every row of their algebra."""

import collections
import dataclasses
import pickle
import re

import attrs
import numpy as np
import pytest

from chainrules import (
    InplaceableThunk,
    MutableTangent,
    NoTangent,
    NotImplementedDerivativeError,
    NotImplementedTangent,
    PrimalAdditionError,
    Tangent,
    TangentFieldError,
    TangentTypeMismatchError,
    Thunk,
    ZeroTangent,
    backing,
    canonicalize,
    debug_mode,
    iadd,
    not_implemented,
    unthunk,
    zero_tangent,
)

Z, N = ZeroTangent(), NoTangent()


@dataclasses.dataclass
class Point:
    x: float
    y: float


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: float
    b: np.ndarray


Pair = collections.namedtuple("Pair", "first second")


@attrs.define
class AttrsBox:
    value: float
    _private: float = 0.0


class Plain:
    def __init__(self, a, b):
        self.a = a
        self.b = b


class Slotted:
    __slots__ = ("u", "v")

    def __init__(self, u, v):
        self.u = u
        self.v = v


class Odd:
    """A plain class whose constructor does not take its fields."""

    def __init__(self):
        self.w = 1.0


# --- singletons -------------------------------------------------------------------------


def test_singletons_are_unique_and_picklable():
    assert ZeroTangent() is ZeroTangent()
    assert NoTangent() is NoTangent()
    assert pickle.loads(pickle.dumps(Z)) is Z
    assert Z != N
    assert repr(Z) == "ZeroTangent()"


@pytest.mark.parametrize("x", [2.5, 3, 1 + 2j, np.float32(1.5), np.ones(3)])
def test_zero_is_the_additive_identity(x):
    assert (Z + x) is x
    assert (x + Z) is x
    assert (x - Z) is x


def test_zero_minus_x_negates():
    np.testing.assert_array_equal(Z - np.ones(2), -np.ones(2))
    assert Z - 2.0 == -2.0


@pytest.mark.parametrize("x", [2.5, np.ones(3), Tangent[Point](x=1.0)])
def test_zero_times_anything_is_zero(x):
    assert Z * x is Z
    assert x * Z is Z
    assert Z / 2.0 is Z


def test_zero_with_numpy_ufuncs():
    a = np.ones(2)
    assert np.multiply(a, Z) is Z
    assert np.add(a, Z) is a
    assert np.conj(Z) is Z
    assert -Z is Z
    assert Z.conj() is Z and Z.real is Z and Z.imag is Z


def test_no_tangent_rows():
    assert N + Z is N
    assert Z + N is N
    assert N + N is N
    assert N + 1.5 == 1.5
    assert 1.5 + N == 1.5
    assert N * Z is Z and Z * N is Z
    assert N * 3.0 is N
    assert -N is N
    assert N - 2.0 == -2.0
    assert Z - N is N


def test_no_tangent_plus_primal_is_the_primal():
    p = Point(1.0, 2.0)
    assert (N + p) is p


def test_no_tangent_plus_primal_in_debug_mode_error():
    was = debug_mode()
    debug_mode(True)
    try:
        with pytest.raises(PrimalAdditionError, match="in debug mode, adding NoTangent"):
            N + Point(1.0, 2.0)
        assert N + 1.0 == 1.0  # numbers are tangents too
    finally:
        debug_mode(was)


# --- NotImplementedTangent --------------------------------------------------------------


def test_not_implemented_propagates_under_add_and_mul():
    t = not_implemented("w.r.t. nu")
    assert isinstance(t, NotImplementedTangent)
    assert t + 1.0 is t and 1.0 + t is t
    assert t + Z is t and N + t is t
    assert 2.0 * t is t and t * np.ones(2) is t
    assert t + Tangent[Point](x=1.0) is t
    assert "test_tangents.py" in t.where


def test_not_implemented_negate_error():
    t = not_implemented("w.r.t. nu")
    with pytest.raises(NotImplementedDerivativeError, match=r"cannot negate a NotImplementedTangent \(w.r.t. nu"):
        -t


@pytest.mark.parametrize("op", [lambda t: t - 1.0, lambda t: 1.0 - t])
def test_not_implemented_subtract_error(op):
    t = not_implemented("missing")
    with pytest.raises(NotImplementedDerivativeError, match="cannot subtract"):
        op(t)


def test_not_implemented_conj_error():
    with pytest.raises(NotImplementedDerivativeError, match="cannot conjugate"):
        not_implemented("x").conj()


# --- Thunk -------------------------------------------------------------------------------


def test_thunk_is_lazy_and_evaluated_once():
    calls = []

    def compute():
        calls.append(1)
        return np.arange(3.0)

    t = Thunk(compute)
    assert calls == []
    assert not t.evaluated
    np.testing.assert_array_equal(unthunk(t), np.arange(3.0))
    unthunk(t)
    assert len(calls) == 1


def test_thunk_behaves_like_its_value():
    a = np.arange(3.0)
    t = Thunk(lambda: a)
    np.testing.assert_array_equal(t + 1, a + 1)
    np.testing.assert_array_equal(1 + t, a + 1)
    np.testing.assert_array_equal(np.ones(3) + t, a + 1)
    np.testing.assert_array_equal(t * 2, a * 2)
    np.testing.assert_array_equal(np.ones(3) * t, a)
    np.testing.assert_array_equal(-t, -a)
    np.testing.assert_array_equal(t - np.ones(3), a - 1)
    np.testing.assert_array_equal(np.ones(3) - t, 1 - a)
    assert t[1] == 1.0
    assert t.shape == (3,)
    assert np.sum(t) == 3.0
    np.testing.assert_array_equal(np.asarray(t), a)
    np.testing.assert_array_equal(np.concatenate([t, t]), np.concatenate([a, a]))
    np.testing.assert_array_equal(t @ np.ones(3), a @ np.ones(3))
    assert float(Thunk(lambda: 2.0)) == 2.0


def test_thunk_precedence():
    t = Thunk(lambda: 2.0)
    assert t + Z is t and Z + t is t
    assert t + N is t
    assert (Z * t) is Z
    assert (t + 1.0) == 3.0


def test_thunk_plus_structural_tangent():
    t = Thunk(lambda: Tangent[Point](x=1.0))
    assert t + Tangent[Point](y=2.0) == Tangent[Point](x=1.0, y=2.0)


def test_thunk_needs_a_function_error():
    with pytest.raises(TypeError, match="Thunk expects a function of no arguments"):
        Thunk(3.0)


def test_unthunk_is_identity_on_non_thunks():
    x = np.ones(2)
    assert unthunk(x) is x
    assert unthunk(Z) is Z


def test_inplaceable_thunk_adds_in_place():
    x = np.array([1.0, 2.0])
    adds = []

    def add_into(acc):
        adds.append(1)
        acc += x
        return acc

    t = InplaceableThunk(add_into, Thunk(lambda: x.copy()))
    acc = np.zeros(2)
    assert iadd(acc, t) is acc
    np.testing.assert_array_equal(acc, x)
    assert adds == [1]
    assert not t.evaluated  # the in-place path does not need the value
    np.testing.assert_array_equal(unthunk(t), x)


def test_inplaceable_thunk_needs_a_function_error():
    with pytest.raises(TypeError, match="InplaceableThunk expects add_fn"):
        InplaceableThunk(1.0, Thunk(lambda: 1.0))


# --- Tangent ----------------------------------------------------------------------------


def test_tangent_absent_fields_read_as_zero():
    t = Tangent[Point](x=1.0)
    assert t.x == 1.0
    assert t.y is Z
    assert t["y"] is Z


def test_tangent_unknown_field_error():
    msg = "Tangent[Point] got field 'z', but Point has fields ('x', 'y')"
    with pytest.raises(TangentFieldError, match=re.escape(msg)):
        Tangent[Point](z=1.0)


def test_tangent_reading_unknown_field_error():
    with pytest.raises(TangentFieldError, match="got field 'z'"):
        Tangent[Point](x=1.0).z


@pytest.mark.parametrize(
    ("cls", "fields"),
    [(Frozen, "('a', 'b')"), (Pair, "('first', 'second')"), (AttrsBox, "('value', '_private')"),
     (Slotted, "('u', 'v')")],
)
def test_tangent_fields_known_for_structured_classes(cls, fields):
    with pytest.raises(TangentFieldError, match=re.escape(fields)):
        Tangent[cls](nope=1.0)


def test_tangent_of_plain_class_accepts_any_field_until_added():
    t = Tangent[Plain](zz=1.0)  # fields of a plain class are known only per instance
    with pytest.raises(TangentFieldError, match="got field 'zz'"):
        Plain(1.0, 2.0) + t


def test_tangent_is_immutable_error():
    with pytest.raises(AttributeError, match="is immutable"):
        Tangent[Point](x=1.0).x = 2.0


def test_tangent_takes_keywords_error():
    with pytest.raises(TypeError, match=re.escape("Tangent[Point] takes fields as keyword arguments")):
        Tangent[Point](1.0)


def test_tangent_sequence_takes_positional_error():
    with pytest.raises(TypeError, match="takes the items positionally"):
        Tangent[tuple](a=1.0)


def test_tangent_needs_a_type_error():
    with pytest.raises(TypeError, match="takes the primal's type"):
        Tangent[3]


def test_tangent_add_fieldwise_over_union():
    a = Tangent[Point](x=1.0)
    b = Tangent[Point](x=2.0, y=3.0)
    assert a + b == Tangent[Point](x=3.0, y=3.0)
    assert a - b == Tangent[Point](x=-1.0, y=-3.0)
    assert -a == Tangent[Point](x=-1.0)


def test_tangent_add_different_primal_types_error():
    with pytest.raises(TangentTypeMismatchError, match="cannot add Tangent and Tangent"):
        Tangent[Point](x=1.0) + Tangent[Frozen](a=1.0)


def test_tangent_tuple_length_mismatch_error():
    with pytest.raises(TangentTypeMismatchError, match="lengths 2 and 1"):
        Tangent[tuple](1.0, 2.0) + Tangent[tuple](1.0)


def test_tangent_scaling_and_conj():
    t = Tangent[Point](x=1.0 + 2j)
    assert 2 * t == Tangent[Point](x=2.0 + 4j)
    assert t * 2 == Tangent[Point](x=2.0 + 4j)
    assert t / 2 == Tangent[Point](x=0.5 + 1j)
    assert t.conj() == Tangent[Point](x=1.0 - 2j)
    assert t.real == Tangent[Point](x=1.0)
    assert t.imag == Tangent[Point](x=2.0)


def test_tangent_times_tangent_error():
    with pytest.raises(TypeError, match="cannot multiply two structural tangents"):
        Tangent[Point](x=1.0) * Tangent[Point](x=1.0)


def test_tangent_equality_treats_absent_as_zero():
    assert Tangent[Point](x=1.0) == Tangent[Point](x=1.0, y=Z)
    assert Tangent[Point](x=1.0) != Tangent[Point](x=2.0)
    assert Tangent[Point]() == Z
    assert Tangent[Point](x=np.zeros(2)) == Tangent[Point]()


def test_tangent_tuple_and_dict():
    t = Tangent[tuple](1.0, Z)
    assert t[0] == 1.0 and len(t) == 2
    d = Tangent[dict]({"a": 1.0})
    assert d["a"] == 1.0
    assert d["missing"] is Z
    assert repr(d) == "Tangent[dict]({'a': 1.0})"


def test_tangent_with_arrays_in_numpy_expressions():
    t = Tangent[Point](x=np.ones(2))
    # numpy defers to the tangent's reflected operators instead of making object arrays
    assert (np.float64(2.0) * t) == Tangent[Point](x=2 * np.ones(2))


# --- primal + tangent -------------------------------------------------------------------


def test_primal_plus_tangent_dataclass():
    assert Point(1.0, 2.0) + Tangent[Point](x=0.5) == Point(1.5, 2.0)
    new = Frozen(1.0, np.ones(2)) + Tangent[Frozen](b=np.ones(2))
    np.testing.assert_array_equal(new.b, 2 * np.ones(2))


def test_primal_plus_tangent_namedtuple_attrs_plain_slots():
    assert Pair(1.0, 2.0) + Tangent[Pair](second=1.0) == Pair(1.0, 3.0)
    box = AttrsBox(1.0, 2.0) + Tangent[AttrsBox](value=1.0, _private=1.0)
    assert (box.value, box._private) == (2.0, 3.0)
    p = Plain(1.0, 2.0) + Tangent[Plain](a=1.0)
    assert (type(p), p.a, p.b) == (Plain, 2.0, 2.0)
    s = Slotted(1.0, 2.0) + Tangent[Slotted](v=1.0)
    assert (s.u, s.v) == (1.0, 3.0)
    o = Odd() + Tangent[Odd](w=1.0)
    assert o.w == 2.0


def test_primal_plus_tangent_sequences_and_dicts():
    assert (1.0, 2.0) + Tangent[tuple](1.0, Z) == (2.0, 2.0)
    assert [1.0, 2.0] + Tangent[list](1.0, 1.0) == [2.0, 3.0]
    assert {"a": 1.0, "b": 2.0} + Tangent[dict]({"a": 1.0}) == {"a": 2.0, "b": 2.0}
    assert Tangent[tuple](1.0, 1.0) + (1.0, 2.0) == (2.0, 3.0)


def test_primal_plus_nested_tangent():
    p = (Point(1.0, 1.0), 2.0)
    t = Tangent[tuple](Tangent[Point](y=1.0), 1.0)
    assert p + t == (Point(1.0, 2.0), 3.0)


def test_gradient_descent_on_a_dataclass():
    p = Point(1.0, 2.0)
    for _ in range(3):
        p = p + (-0.5) * Tangent[Point](x=2 * p.x, y=2 * p.y)
    assert p == Point(0.0, 0.0)


def test_primal_minus_tangent_on_every_structured_type():
    assert Point(1.0, 2.0) - Tangent[Point](x=0.5) == Point(0.5, 2.0)
    new = Frozen(1.0, np.ones(2)) - Tangent[Frozen](b=np.ones(2))
    np.testing.assert_array_equal(new.b, np.zeros(2))
    assert Pair(1.0, 2.0) - Tangent[Pair](second=1.0) == Pair(1.0, 1.0)
    box = AttrsBox(1.0, 2.0) - Tangent[AttrsBox](value=1.0, _private=1.0)
    assert (box.value, box._private) == (0.0, 1.0)
    p = Plain(1.0, 2.0) - Tangent[Plain](a=1.0)
    assert (type(p), p.a, p.b) == (Plain, 0.0, 2.0)
    sl = Slotted(1.0, 2.0) - Tangent[Slotted](v=1.0)
    assert (sl.u, sl.v) == (1.0, 1.0)
    assert (Odd() - Tangent[Odd](w=1.0)).w == 0.0
    assert (1.0, 2.0) - Tangent[tuple](1.0, Z) == (0.0, 2.0)
    assert [1.0, 2.0] - Tangent[list](1.0, 1.0) == [0.0, 1.0]
    assert {"a": 1.0, "b": 2.0} - Tangent[dict]({"a": 1.0}) == {"a": 0.0, "b": 2.0}
    nested = (Point(1.0, 1.0), 2.0) - Tangent[tuple](Tangent[Point](y=1.0), 1.0)
    assert nested == (Point(1.0, 0.0), 1.0)


def test_gradient_descent_step_with_minus():
    p = Point(1.0, 2.0)
    for _ in range(3):
        p = p - 0.5 * Tangent[Point](x=2 * p.x, y=2 * p.y)
    assert p == Point(0.0, 0.0)


def test_tangent_minus_primal_error():
    with pytest.raises(TypeError, match="cannot subtract Point from Tangent"):
        Tangent[Point](x=1.0) - Point(1.0, 2.0)


def test_primal_minus_tangent_wrong_primal_type_error():
    with pytest.raises(PrimalAdditionError, match="the tangent describes a Point, not a Pair"):
        Pair(1.0, 2.0) - Tangent[Point](x=1.0)


def test_primal_plus_tangent_wrong_primal_type_error():
    with pytest.raises(PrimalAdditionError, match="the tangent describes a Point, not a Pair"):
        Pair(1.0, 2.0) + Tangent[Point](x=1.0)


def test_primal_plus_tangent_length_error():
    with pytest.raises(PrimalAdditionError, match="it has 2 items but the tangent has 1"):
        (1.0, 2.0) + Tangent[tuple](1.0)


def test_primal_plus_tangent_dict_key_error():
    with pytest.raises(PrimalAdditionError, match=r"keys \['z'\] the dict lacks"):
        {"a": 1.0} + Tangent[dict]({"z": 1.0})


def test_primal_plus_tangent_on_a_builtin_based_object():
    import types

    ns = types.SimpleNamespace(a=1.0, b="label")
    new = ns + Tangent[types.SimpleNamespace](a=2.0)
    assert new == types.SimpleNamespace(a=3.0, b="label")
    assert ns.a == 1.0  # the primal is not changed


def test_primal_plus_tangent_no_constructor_error():
    class Weird(int):
        pass

    with pytest.raises(PrimalAdditionError, match=r"cannot add Tangent\[Weird\] to a Weird: .*Define a constructor Weird\(\*\*fields\)"):
        Weird(1) + Tangent[Weird](real=1.0)


# --- MutableTangent ---------------------------------------------------------------------


def test_mutable_tangent_assign_and_accumulate():
    t = MutableTangent[Plain](a=1.0)
    t.a = 2.0
    t["b"] = 3.0
    assert (t.a, t.b) == (2.0, 3.0)
    acc = iadd(t, Tangent[Plain](a=1.0))
    assert acc is t and t.a == 3.0


def test_mutable_tangent_unknown_field_error():
    t = MutableTangent[Point](x=1.0)
    with pytest.raises(TangentFieldError, match="got field 'z'"):
        t.z = 1.0


def test_iadd_mutable_tangent_type_mismatch_error():
    with pytest.raises(TangentTypeMismatchError, match="cannot accumulate"):
        iadd(MutableTangent[Point](x=1.0), Tangent[Plain](a=1.0))


# --- iadd ---------------------------------------------------------------------------------


def test_iadd_in_place_for_owned_arrays():
    acc = np.zeros(3)
    assert iadd(acc, np.ones(3)) is acc
    assert iadd(acc, Thunk(lambda: np.ones(3))) is acc
    np.testing.assert_array_equal(acc, 2 * np.ones(3))


def test_iadd_out_of_place_when_unsafe():
    acc = np.zeros(3)
    out = iadd(acc, np.ones((2, 3)))  # would broadcast acc up
    assert out is not acc and out.shape == (2, 3)
    acc32 = np.zeros(2, dtype=np.float32)
    assert iadd(acc32, np.ones(2)) is acc32  # float64 into float32 is same-kind
    real = np.zeros(2)
    out = iadd(real, np.ones(2) * 1j)  # complex does not fit a real accumulator
    assert out is not real and out.dtype.kind == "c"
    ro = np.zeros(2)
    ro.flags.writeable = False
    assert iadd(ro, np.ones(2)) is not ro
    assert iadd(ZeroTangent(), 2.0) == 2.0
    assert iadd(1.0, 2.0) == 3.0


# --- utilities ----------------------------------------------------------------------------


def test_backing():
    assert backing(Point(1.0, 2.0)) == {"x": 1.0, "y": 2.0}
    assert backing(Pair(1.0, 2.0)) == {"first": 1.0, "second": 2.0}
    assert backing([1.0, 2.0]) == (1.0, 2.0)
    assert backing(Tangent[Point](x=1.0)) == {"x": 1.0}
    assert backing(2.0) == 2.0
    assert backing(Plain(1, 2)) == {"a": 1, "b": 2}


def test_canonicalize_fills_fields_in_order():
    t = canonicalize(Tangent[Point](y=1.0))
    assert list(t.backing) == ["x", "y"]
    assert t.x is Z
    plain = Tangent[Plain](a=1.0)
    assert canonicalize(plain) is plain
    assert canonicalize(2.0) == 2.0


def test_zero_tangent():
    assert zero_tangent(1.5) == 0.0
    assert zero_tangent(3) == 0.0
    assert zero_tangent(1j) == 0j
    assert zero_tangent(True) is N
    assert zero_tangent("s") is N
    assert zero_tangent(None) is N
    assert zero_tangent(np.arange(3)) is N
    z = zero_tangent(np.ones(2, dtype=np.complex64))
    assert z.dtype == np.complex64 and not z.any()
    assert zero_tangent(np.float32(1)) == np.float32(0)
    assert zero_tangent((1.0, "a")) == Tangent[tuple](0.0, N)
    assert zero_tangent({"k": 1.0}) == Tangent[dict]({"k": 0.0})
    assert isinstance(zero_tangent(Point(1.0, 2.0)), MutableTangent)
    assert type(zero_tangent(Frozen(1.0, np.ones(1)))) is Tangent[Frozen]
    assert type(zero_tangent(Pair(1.0, 2.0))) is Tangent[Pair]


def test_tangent_copy_deepcopy_pickle():
    import copy

    t = Tangent[Point](x=np.ones(2))
    d = copy.deepcopy(t)
    assert d == t and d.x is not t.x
    c = copy.copy(t)
    assert c == t and c.x is t.x
    p = pickle.loads(pickle.dumps(Tangent[Pair](first=1.0)))
    assert p == Tangent[Pair](first=1.0) and type(p) is Tangent[Pair]
    m = copy.deepcopy(MutableTangent[Point](x=1.0))
    assert type(m) is MutableTangent[Point]
    m.x = 2.0
    assert pickle.loads(pickle.dumps(Tangent[tuple](1.0, Z))) == Tangent[tuple](1.0, Z)


def test_namedtuple_tangent_indexes_by_position():
    t = Tangent[Pair](second=2.0)
    assert t[1] == 2.0 and t[0] is Z
    with pytest.raises(IndexError):
        t[2]


def test_describe_structural_tangent():
    from chainrules.core._errors import describe

    assert describe(Tangent[Plain](a=1.0)) == "Tangent[Plain]"
    assert describe(np.ones((2, 3))) == "ndarray(shape=(2, 3), dtype=float64)"


def test_items_of_zeros_are_zeros():
    assert Z[0] is Z and Z["eigenvalues"] is Z
    assert N[1] is N
    assert getattr(Z, "shape", None) is None  # attributes are not forwarded


def test_from_backing():
    assert Tangent[Point].from_backing({"x": 1.0}) == Tangent[Point](x=1.0)
    with pytest.raises(TypeError, match="from_backing takes a dict of fields or a tuple"):
        Tangent[Point].from_backing([1.0])


def test_fields_of_zeros_are_zeros():
    assert Z.A is Z and N.weights is N
    assert Z @ np.ones(2) is Z and np.ones(2) @ Z is Z
    assert np.matmul(np.ones((2, 2)), Z) is Z
    for name in ("shape", "dtype", "_fields", "__array_interface__", "backing"):
        assert not hasattr(Z, name)
