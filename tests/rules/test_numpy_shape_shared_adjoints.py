"""NumPy rules whose adjoints are the array-API ones (rules/array_api/_adjoints.py), on the
argument forms only NumPy accepts (int ``reps``, list ``shift``, ``axis=None``...), and the
public contraction rule functions other modules register on other names."""

import numpy as np
import pytest

import chainrules
from chainrules import NoTangent, rrule, unthunk
from chainrules.rules.numpy import contractions
from chainrules.testing import test_frule, test_rrule

rng = np.random.default_rng(0)
X = rng.normal(size=(3, 4))
XC = X + 1j * rng.normal(size=(3, 4))
X32 = X.astype(np.float32)

NUMPY_FORMS = [
    pytest.param(np.tile, (X, 2), {}, id="tile(int reps)"),
    pytest.param(np.tile, (X,), {"reps": (2, 1, 2)}, id="tile(reps=)"),
    pytest.param(np.tile, (np.float64(1.5), (2, 3)), {}, id="tile(0-d)"),
    pytest.param(np.tile, (X, np.array([1, 2])), {}, id="tile(array reps)"),
    pytest.param(np.tile, (np.zeros((0, 2)), 3), {}, id="tile(empty)"),
    pytest.param(np.repeat, (X, 2), {}, id="repeat(axis=None)"),
    pytest.param(np.repeat, (np.float64(2.0), 3), {}, id="repeat(0-d)"),
    pytest.param(np.repeat, (X, [1, 0, 2]), {"axis": 0}, id="repeat(list repeats)"),
    pytest.param(np.repeat, (X, np.int64(2), -1), {}, id="repeat(np.int64, axis=-1)"),
    pytest.param(np.roll, (X, 5), {}, id="roll(axis=None)"),
    pytest.param(np.roll, (X, [1, -1], (0, 1)), {}, id="roll(list shift)"),
    pytest.param(np.roll, (X, np.array(2), 1), {}, id="roll(0-d array shift)"),
    pytest.param(np.flip, (X,), {}, id="flip(axis=None)"),
    pytest.param(np.moveaxis, (rng.normal(size=(2, 3, 4)),), {"source": -1, "destination": 0},
                 id="moveaxis(keywords)"),
    pytest.param(np.matrix_transpose, (rng.normal(size=(2, 3, 4)),), {}, id="matrix_transpose"),
    pytest.param(np.transpose, (rng.normal(size=(2, 3, 4)), (-1, 0, 1)), {},
                 id="transpose(negative axes)"),
]


@pytest.mark.parametrize(("f", "args", "kwargs"), NUMPY_FORMS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_numpy_forms(f, args, kwargs, dtype):
    x = np.asarray(args[0]).astype(dtype)
    if np.ndim(args[0]) == 0:
        x = x[()]
    args = (x, *args[1:])
    test_rrule(f, *args, fkwargs=kwargs)
    test_frule(f, *args, fkwargs=kwargs)


def test_tile_of_a_list():
    test_rrule(np.tile, [1.0, 2.0], 2)


def test_tile_cotangent_keeps_float32():
    y, tile_pullback = rrule(np.tile, X32, (2, 2))
    x_bar = unthunk(tile_pullback(np.ones_like(y))[1])
    assert x_bar.dtype == np.float32
    np.testing.assert_array_equal(x_bar, np.full(X32.shape, 4.0, np.float32))


def test_roll_cotangent_is_not_a_view_of_y_bar():
    y, roll_pullback = rrule(np.roll, X, 0)
    y_bar = np.ones_like(y)
    x_bar = unthunk(roll_pullback(y_bar)[1])
    assert not np.may_share_memory(x_bar, y_bar)


def test_fft_pad_adjoint_crops():
    x = rng.normal(size=(2, 5))
    test_rrule(np.fft.fft, x, 8)
    test_rrule(np.fft.rfft, x, 3)


# ------------------------------------------------------------ public contraction rules

PUBLIC = [
    (np.matmul, "matmul"), (np.outer, "outer"), (np.vecdot, "vecdot"),
    (np.tensordot, "tensordot"), (np.trace, "trace"), (np.cross, "cross"),
    (np.dot, "dot"), (np.vdot, "vdot"), (np.inner, "inner"), (np.kron, "kron"),
    (np.einsum, "einsum"),
]


@pytest.mark.parametrize(("f", "name"), PUBLIC, ids=[n for _, n in PUBLIC])
def test_contraction_rule_functions_are_public(f, name):
    assert f"{name}_rrule" in contractions.__all__ and f"{name}_frule" in contractions.__all__
    rrule_fn = getattr(contractions, f"{name}_rrule")
    frule_fn = getattr(contractions, f"{name}_frule")
    assert rrule_fn.__name__ == f"{name}_rrule" and frule_fn.__name__ == f"{name}_frule"


def test_contraction_rule_serves_another_name_of_the_function():
    # what numpy.linalg's rules do: the same rule function on np.linalg.matmul
    def my_matmul(a, b):
        return np.matmul(a, b)

    chainrules.rrule.register(my_matmul)(contractions.matmul_rrule)
    chainrules.frule.register(my_matmul)(contractions.matmul_frule)
    a, b = rng.normal(size=(3, 2)), XC[:2]
    test_rrule(my_matmul, a, b)
    test_frule(my_matmul, a, b)
    _, pullback = rrule(my_matmul, a, b)
    assert pullback(np.ones((3, 4)))[0] == NoTangent()


def test_matrix_transpose_rule_functions_are_public():
    from chainrules.rules.numpy.shape import matrix_transpose_frule, matrix_transpose_rrule

    assert matrix_transpose_rrule.__name__ == "matrix_transpose_rrule"
    assert matrix_transpose_frule.__name__ == "matrix_transpose_frule"
    y, pullback = matrix_transpose_rrule(X)
    np.testing.assert_array_equal(unthunk(pullback(y)[1]), X)
