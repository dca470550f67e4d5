"""Building a pydata ``sparse.COO`` inside a differentiated function (issue 27): with
constant data it works (no false ``StaleSourceError``: every function of the ``sparse``
package rewrites from its file); with traced data the array would hold a tracer its
numba code cannot compute with, so the constructor is refused by name."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from chainrules import ad
from chainrules.ad import OpaqueArrayError, StaleSourceError
from chainrules.ad._rewrite import rewritten_code

sparse = pytest.importorskip("sparse")

COORDS = np.array([[0, 1, 2, 2], [1, 2, 0, 2]])
DATA = np.array([1.0, 2.0, 3.0, -1.0])
V = np.array([1.0, 2.0, 3.0])


def dense():
    m = np.zeros((3, 3))
    m[tuple(COORDS)] = DATA
    return m


def test_coo_built_inside_a_loss_with_constant_data():
    def loss(v):
        s = sparse.COO(COORDS, DATA, shape=(3, 3))
        return np.sum((s @ v) ** 2)

    m = dense()
    np.testing.assert_allclose(ad.grad(loss)(V), 2 * m.T @ (m @ V), rtol=1e-12)
    _, v_dot = ad.jvp(lambda v: sparse.COO(COORDS, DATA, shape=(3, 3)) @ v, (V,), (V,))
    np.testing.assert_allclose(v_dot, m @ V, rtol=1e-12)


def test_coo_built_from_traced_data_error():
    def loss(d):
        return np.sum(sparse.COO(COORDS, d, shape=(3, 3)) @ V)

    with pytest.raises(OpaqueArrayError, match=r"the result of sparse\.COO\(\.\.\.\) is a "
                                               r"sparse\.COO \(shape=\(3, 3\)\) holding a "
                                               r"traced value.*register an rrule for "
                                               r"sparse\.COO\(\.\.\.\)"):
        ad.grad(loss)(DATA)


def _functions(prefix):
    seen, found = set(), []

    def visit(obj, depth):
        if id(obj) in seen or depth > 3:
            return
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType):
            if (obj.__module__ or "").startswith(prefix):
                found.append(obj)
        elif isinstance(obj, type):
            for v in vars(obj).values():
                if isinstance(v, (staticmethod, classmethod)):
                    v = v.__func__
                if isinstance(v, property):
                    v = v.fget
                visit(v, depth + 1)
        elif hasattr(obj, "py_func"):  # a numba dispatcher: its Python function
            visit(obj.py_func, depth + 1)

    for name, module in list(sys.modules.items()):
        if name.startswith(prefix) and module is not None:
            for v in list(vars(module).values()):
                visit(v, 0)
    return found


def test_no_false_stale_source_in_the_sparse_package():
    # equal functions in several files of the package (its backends) once made the
    # rewriter compare one file's text with another's code
    stale = []
    functions = _functions("sparse")
    assert len(functions) > 100
    for fn in functions:
        try:
            rewritten_code(fn.__code__)
        except StaleSourceError as e:
            stale.append(f"{fn.__module__}.{fn.__qualname__}: {e}")
        except Exception:
            pass
    assert stale == []
