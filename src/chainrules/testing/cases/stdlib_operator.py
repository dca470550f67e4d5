"""Rule cases for the standard library's ``operator`` module (and the builtins ``abs``
and ``pow``, which share its rules).

The arithmetic operators are run on NumPy arrays (same shape, broadcasting, 0-d,
empty, non-contiguous views), NumPy scalars, Python scalars (``float`` for the
float runs, ``complex`` for complex128) and mixtures, in float64, float32 and
complex128.
"""

from __future__ import annotations

import operator
from collections import namedtuple
from typing import Any

import numpy as np

from chainrules.testing import Case, arr, integers, no_tangent, positive, with_tangent

_ALL = ("float64", "float32", "complex128")
_REAL = ("float64", "float32")
_Pair = namedtuple("_Pair", ["a", "b"])


def _py(rng: np.random.Generator, dt: np.dtype, low: float = -2.0, high: float = 2.0) -> Any:
    """A Python float (real dtypes) or complex (complex dtypes)."""
    v = arr(rng, dt, (), low, high)
    return complex(v) if dt.kind == "c" else float(v)


def _view(rng: np.random.Generator, dt: np.dtype, low: float = -2.0,
          high: float = 2.0) -> np.ndarray:
    """A non-contiguous (3, 2) view."""
    return arr(rng, dt, (6, 4), low, high)[::2, ::2]


def _binary(f: Any, dtypes: tuple = _ALL, low2: float = -2.0, high2: float = 2.0,
            second: Any = None, low1: float = -2.0, high1: float = 2.0) -> list[Case]:
    """Rows for an elementwise binary operator; the operands are drawn from
    (low1, high1) and (low2, high2) (``positive`` when ``second == "positive"``)."""
    name = f"operator.{f.__name__}"
    py_dtypes = tuple(d for d in ("float64", "complex128") if d in dtypes)

    def a(rng: np.random.Generator, dt: np.dtype, shape: Any) -> Any:
        return arr(rng, dt, shape, low1, high1)

    def a_py(rng: np.random.Generator, dt: np.dtype) -> Any:
        return _py(rng, dt, low1, high1)

    def b(rng: np.random.Generator, dt: np.dtype, shape: Any) -> Any:
        if second == "positive":
            return positive(rng, dt, shape, low2, high2)
        return arr(rng, dt, shape, low2, high2)

    return [
        Case(f, lambda rng, dt: (a(rng, dt, (3, 2)), b(rng, dt, (3, 2))), dtypes=dtypes,
             name=name),
        Case(f, lambda rng, dt: (a(rng, dt, (3, 1)), b(rng, dt, (2,))), dtypes=dtypes,
             name=f"{name}(broadcast)"),
        Case(f, lambda rng, dt: (a(rng, dt, (2, 3)), b(rng, dt, ())), dtypes=dtypes,
             name=f"{name}(array, numpy scalar)"),
        Case(f, lambda rng, dt: (a(rng, dt, (2, 3)), complex(b(rng, dt, ())) if dt.kind == "c"
                                 else float(b(rng, dt, ()))), dtypes=dtypes,
             name=f"{name}(array, python scalar)"),
        Case(f, lambda rng, dt: (a_py(rng, dt), b(rng, dt, (4,))), dtypes=dtypes,
             name=f"{name}(python scalar, array)"),
        Case(f, lambda rng, dt: (a_py(rng, dt), complex(b(rng, dt, ())) if dt.kind == "c"
                                 else float(b(rng, dt, ()))), dtypes=py_dtypes,
             name=f"{name}(python scalars)"),
        Case(f, lambda rng, dt: (np.asarray(a(rng, dt, ())), np.asarray(b(rng, dt, ()))),
             dtypes=dtypes, name=f"{name}(0-d)"),
        Case(f, lambda rng, dt: (a(rng, dt, (0, 3)), b(rng, dt, (3,))), dtypes=dtypes,
             name=f"{name}(empty)"),
        Case(f, lambda rng, dt: (_view(rng, dt, low1, high1), b(rng, dt, (6, 4))[1::2, ::2]),
             dtypes=dtypes, name=f"{name}(non-contiguous)"),
    ]


def _unary(f: Any, dtypes: tuple = _ALL, low: float = -2.0, high: float = 2.0,
           prefix: str | None = None) -> list[Case]:
    name = prefix or f"operator.{f.__name__}"
    return [
        Case(f, lambda rng, dt: (arr(rng, dt, (3, 2), low, high),), dtypes=dtypes, name=name),
        Case(f, lambda rng, dt: (arr(rng, dt, (), low, high),), dtypes=dtypes,
             name=f"{name}(numpy scalar)"),
        Case(f, lambda rng, dt: (_py(rng, dt, low, high),), dtypes=("float64", "complex128"),
             name=f"{name}(python scalar)"),
        Case(f, lambda rng, dt: (_view(rng, dt, low, high),), dtypes=dtypes,
             name=f"{name}(non-contiguous)"),
        Case(f, lambda rng, dt: (arr(rng, dt, (0,)),), dtypes=dtypes, name=f"{name}(empty)"),
    ]


def _tuple(rng: np.random.Generator, dt: np.dtype) -> tuple:
    return (_py(rng, dt), arr(rng, dt, (2,)), "label", 3, _py(rng, dt))


CASES: list[Case] = [
    *_binary(operator.add),
    *_binary(operator.sub),
    *_binary(operator.mul),
    *_binary(operator.truediv, low2=0.5, high2=2.0, second="positive"),
    # mod: x / m stays in (0.05, 0.94), away from the jumps at integers
    *_binary(operator.mod, dtypes=_REAL, low1=0.1, high1=1.5, low2=1.6, high2=2.0),
    Case(operator.mod, lambda rng, dt: (arr(rng, dt, (4,), -1.5, -0.1), arr(rng, dt, (4,), 1.6,
                                                                            2.0)),
         dtypes=_REAL, name="operator.mod(negative x)"),
    Case(operator.mod, lambda rng, dt: (arr(rng, dt, (4,), 0.1, 1.5), arr(rng, dt, (4,), -2.0,
                                                                          -1.6)),
         dtypes=_REAL, name="operator.mod(negative m)"),
    *_unary(operator.neg),
    *_unary(operator.pos),
    *_unary(operator.abs, low=0.2, high=2.0, prefix="operator.abs(positive)"),
    *_unary(operator.abs, low=-2.0, high=-0.2, prefix="operator.abs(negative)"),
    Case(operator.abs, lambda rng, dt: (arr(rng, dt, (5,)),), dtypes=("complex128",),
         name="operator.abs(complex, mixed signs)"),
    Case(abs, lambda rng, dt: (_py(rng, dt, 0.3, 2.0),), dtypes=("float64", "complex128"),
         name="abs(python scalar)"),
    Case(abs, lambda rng, dt: (arr(rng, dt, (3,), -2.0, -0.2),), dtypes=_ALL, name="abs(array)"),
    Case(abs, lambda rng, dt: (with_tangent(-3, 0.5),), name="abs(int)"),
    # pow: base in the right half-plane so the exponent can be perturbed
    Case(operator.pow, lambda rng, dt: (positive(rng, dt, (3, 2)), arr(rng, dt, (3, 2))),
         dtypes=_ALL, name="operator.pow"),
    Case(operator.pow, lambda rng, dt: (positive(rng, dt, (3, 1)), arr(rng, dt, (2,))),
         dtypes=_ALL, name="operator.pow(broadcast)"),
    Case(operator.pow, lambda rng, dt: (positive(rng, dt, (2, 2)), 3.0), dtypes=_ALL,
         name="operator.pow(array, python float)"),
    Case(operator.pow, lambda rng, dt: (arr(rng, dt, (2, 2)), integers(rng, (2, 2), 0, 4)),
         dtypes=_ALL, name="operator.pow(array, int array)"),
    Case(operator.pow, lambda rng, dt: (_py(rng, dt, 0.2, 2.0), _py(rng, dt)),
         dtypes=("float64", "complex128"), name="operator.pow(python scalars)"),
    # x < 0 with a real result: p is an integer, held fixed (no_tangent)
    Case(operator.pow, lambda rng, dt: (_py(rng, dt, -2.0, -0.2), no_tangent(3.0)),
         dtypes=("float64",), name="operator.pow(negative python float, p fixed)"),
    Case(operator.pow, lambda rng, dt: (arr(rng, dt, (3,), -2.0, -0.2), no_tangent(2.0)),
         dtypes=_ALL, name="operator.pow(negative array, p fixed)"),
    Case(operator.pow, lambda rng, dt: (_py(rng, dt, -2.0, -0.2), 0.5), dtypes=("float64",),
         name="operator.pow(negative python float, complex result)",
         output_tangent=lambda rng, dt, y: complex(rng.standard_normal(), rng.standard_normal())),
    Case(operator.pow, lambda rng, dt: (with_tangent(2, 1.0), with_tangent(3, 0.5)),
         name="operator.pow(int, int)"),
    Case(operator.pow, lambda rng, dt: (np.asarray(positive(rng, dt, ())), arr(rng, dt, ())),
         dtypes=_ALL, name="operator.pow(0-d, numpy scalar)"),
    Case(operator.pow, lambda rng, dt: (positive(rng, dt, (0, 2)), arr(rng, dt, (2,))),
         dtypes=_ALL, name="operator.pow(empty)"),
    Case(pow, lambda rng, dt: (positive(rng, dt, (3,)), arr(rng, dt, (3,))), dtypes=_ALL,
         name="pow(arrays)"),
    Case(pow, lambda rng, dt: (_py(rng, dt, 0.2, 2.0), _py(rng, dt)),
         dtypes=("float64", "complex128"), name="pow(python scalars)"),
    Case(operator.add, lambda rng, dt: (with_tangent(2, 0.5), _py(rng, dt)),
         dtypes=("float64",), name="operator.add(int, float)"),
    Case(operator.truediv, lambda rng, dt: (with_tangent(1, 0.5), with_tangent(3, -1.0)),
         name="operator.truediv(int, int)"),
    # in-place forms on immutable scalars
    *(Case(f, lambda rng, dt: (_py(rng, dt), _py(rng, dt, 0.5, 2.0)),
           dtypes=("float64", "complex128"), name=f"operator.{f.__name__}")
      for f in (operator.iadd, operator.isub, operator.imul, operator.itruediv)),
    Case(operator.ipow, lambda rng, dt: (_py(rng, dt, 0.2, 2.0), _py(rng, dt)),
         dtypes=("float64", "complex128"), name="operator.ipow"),
    Case(operator.imod, lambda rng, dt: (_py(rng, dt, 0.1, 1.5), _py(rng, dt, 1.6, 2.0)),
         dtypes=("float64",), name="operator.imod"),
    Case(operator.iadd, lambda rng, dt: ((_py(rng, dt),), (arr(rng, dt, (2,)),)), dtypes=_ALL,
         name="operator.iadd(tuple, tuple)"),
    # matmul
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (3, 4)), arr(rng, dt, (4, 2))),
         dtypes=_ALL, name="operator.matmul"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (4,)), arr(rng, dt, (4,))),
         dtypes=_ALL, name="operator.matmul(1-d, 1-d)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (3, 4)), arr(rng, dt, (4,))),
         dtypes=_ALL, name="operator.matmul(2-d, 1-d)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (4,)), arr(rng, dt, (4, 3))),
         dtypes=_ALL, name="operator.matmul(1-d, 2-d)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), arr(rng, dt, (4,))),
         dtypes=_ALL, name="operator.matmul(batched, 1-d)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (4,)), arr(rng, dt, (2, 4, 3))),
         dtypes=_ALL, name="operator.matmul(1-d, batched)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (2, 1, 3, 4)), arr(rng, dt, (3, 4, 2))),
         dtypes=_ALL, name="operator.matmul(broadcast batch)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (3, 4)), arr(rng, dt, (2, 4, 2))),
         dtypes=_ALL, name="operator.matmul(2-d, batched)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (0, 4)), arr(rng, dt, (4, 2))),
         dtypes=_ALL, name="operator.matmul(empty)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (3, 0)), arr(rng, dt, (0, 2))),
         dtypes=_ALL, name="operator.matmul(empty inner)"),
    Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (6, 8))[::2, ::2],
                                           arr(rng, dt, (6, 4)).T[:, 1:4]),
         dtypes=_ALL, name="operator.matmul(non-contiguous)"),
    # sequences and dicts
    Case(operator.getitem, lambda rng, dt: (_tuple(rng, dt), 1), dtypes=_ALL,
         name="operator.getitem(tuple)"),
    Case(operator.getitem, lambda rng, dt: (_tuple(rng, dt), -1), dtypes=_ALL,
         name="operator.getitem(tuple, negative index)"),
    Case(operator.getitem, lambda rng, dt: (_tuple(rng, dt), slice(0, 4, 2)), dtypes=_ALL,
         name="operator.getitem(tuple, slice)"),
    Case(operator.getitem, lambda rng, dt: (list(_tuple(rng, dt)), 0), dtypes=_ALL,
         name="operator.getitem(list)"),
    Case(operator.getitem, lambda rng, dt: (list(_tuple(rng, dt)), slice(None, None, -1)),
         dtypes=_ALL, name="operator.getitem(list, reversed slice)"),
    Case(operator.getitem, lambda rng, dt: ({"w": arr(rng, dt, (2, 2)), "b": _py(rng, dt),
                                             "n": 3}, "w"),
         dtypes=_ALL, name="operator.getitem(dict)"),
    Case(operator.getitem, lambda rng, dt: (_Pair(_py(rng, dt), arr(rng, dt, (2,))), 1),
         dtypes=_ALL, name="operator.getitem(namedtuple)"),
    Case(operator.getitem, lambda rng, dt: (_Pair(_py(rng, dt), arr(rng, dt, (2,))),
                                            slice(0, 2)),
         dtypes=_ALL, name="operator.getitem(namedtuple, slice)"),
    Case(operator.add, lambda rng, dt: ((_py(rng, dt), arr(rng, dt, (2,))), (_py(rng, dt),)),
         dtypes=_ALL, name="operator.add(tuple, tuple)"),
    Case(operator.add, lambda rng, dt: ([_py(rng, dt)], [arr(rng, dt, (2,)), "x"]),
         dtypes=_ALL, name="operator.add(list, list)"),
    Case(operator.concat, lambda rng, dt: ((_py(rng, dt),), (_py(rng, dt), _py(rng, dt))),
         dtypes=_ALL, name="operator.concat(tuple, tuple)"),
    Case(operator.mul, lambda rng, dt: ((_py(rng, dt), arr(rng, dt, (2,))), 3), dtypes=_ALL,
         name="operator.mul(tuple, int)"),
    Case(operator.mul, lambda rng, dt: (2, [_py(rng, dt), _py(rng, dt)]), dtypes=_ALL,
         name="operator.mul(int, list)"),
]
