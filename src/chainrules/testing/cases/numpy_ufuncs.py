"""Rule cases for NumPy's elementwise functions (``chainrules/rules/numpy/ufuncs.py``, and
``ufunc_methods.py`` for ``reduce``/``accumulate``).

Inputs stay inside each function's domain and away from its non-smooth points
(integers for ``floor``, jumps of ``fmod``, zero for ``abs``, ties for
``maximum``), where finite differences are meaningless; the conventions there are
tested in ``tests/rules/test_numpy_ufuncs.py``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from chainrules.testing import Case, arr, integers, no_tangent, positive, unit_interval

__all__ = ["CASES"]

REAL = ("float64", "float32")
ALL = ("float64", "float32", "complex128", "complex64")


def _away(rng: np.random.Generator, dtype: np.dtype, shape: Any = (), low: float = 0.5,
          high: float = 2.0) -> Any:
    """Entries with modulus in ``(low, high)`` and a random sign: away from zero."""
    x = positive(rng, dtype, shape, low, high)
    sign = rng.choice([-1.0, 1.0], size=shape)
    return (x * sign).astype(dtype) if np.ndim(x) else dtype.type(x * sign)


def _off_cut(rng: np.random.Generator, dtype: np.dtype, shape: Any = ()) -> Any:
    """`_away`, and for complex dtypes phases within (-2.8, 2.8): at least 0.34 rad from
    the negative real axis, where ``angle`` jumps by 2 pi (seed 26 drew -1.72 - 0.0066j)."""
    if dtype.kind != "c":
        return _away(rng, dtype, shape)
    r = rng.uniform(0.5, 2.0, size=shape)
    theta = rng.uniform(-2.8, 2.8, size=shape)
    z = np.asarray(r * np.exp(1j * theta)).astype(dtype)
    return z if np.ndim(z) else dtype.type(z)


def _off_grid(rng: np.random.Generator, dtype: np.dtype, shape: Any = ()) -> Any:
    """Reals whose fractional part is in (0.1, 0.4): away from integers and halves."""
    k = rng.integers(-3, 3, size=shape)
    frac = rng.uniform(0.1, 0.4, size=shape)
    return np.asarray(k + frac).astype(dtype)


def _with_zeros(rng: np.random.Generator, dtype: np.dtype, shape: tuple,
                zeros: list) -> np.ndarray:
    x = arr(rng, dtype, shape)
    for index in zeros:
        x[index] = 0
    return x


def _unary(f: Any, gen: Any = arr, dtypes: tuple = ALL, name: str | None = None,
           shape: tuple = (3, 2), **kwargs: Any) -> Case:
    return Case(f, lambda rng, dt: (gen(rng, dt, shape),), dtypes=dtypes, name=name,
                kwargs=kwargs)


def _binary(f: Any, gen1: Any = arr, gen2: Any = arr, dtypes: tuple = ALL,
            name: str | None = None) -> Case:
    """Broadcasting (3, 1) against (4,)."""
    return Case(f, lambda rng, dt: (gen1(rng, dt, (3, 1)), gen2(rng, dt, (4,))),
                dtypes=dtypes, name=name)


def _arccosh_domain(rng: np.random.Generator, dtype: np.dtype, shape: Any) -> Any:
    return positive(rng, dtype, shape, 1.2, 3.0)


def _no_power_of_two(rng: np.random.Generator, dtype: np.dtype, shape: Any) -> Any:
    """Moduli in (1.1, 1.9) and (4.4, 7.6): the exponent of ``frexp`` is locally constant."""
    return _away(rng, dtype, shape, 1.1, 1.9) * rng.choice([1, 4], size=shape).astype(dtype)


def _spread(rng: np.random.Generator, dtype: np.dtype, shape: Any) -> Any:
    """Distinct values at least 4/n apart (real parts for complex): no near-ties for
    ``maximum``-like selections, even at float32 finite-difference steps."""
    n = int(np.prod(shape))
    re = rng.permutation(np.linspace(-2, 2, n)).reshape(shape)
    if dtype.kind == "c":
        return (re + 1j * rng.uniform(-2, 2, size=shape)).astype(dtype)
    return re.astype(dtype)


def _quotient_case(rng: np.random.Generator, dtype: np.dtype) -> tuple:
    """``(x1, x2)`` with ``x1 / x2`` at least 0.1 from an integer: no jumps of
    ``fmod``, ``remainder``, ``floor_divide`` within a finite-difference step."""
    x2 = _away(rng, dtype, (4,))
    return (x2 * _off_grid(rng, dtype, (3, 4))).astype(dtype), x2


def _non_finite(rng: np.random.Generator, dtype: np.dtype, bad: float = np.nan) -> Any:
    """Finite entries mixed with ``bad``, ``-bad`` (complex: in either part)."""
    x = arr(rng, dtype, (5,))
    x[1] = bad
    x[3] = -bad
    if dtype.kind == "c":
        x[4] = x[4].real + 1j * bad
    return x


def _off_bounds(rng: np.random.Generator, dtype: np.dtype, shape: Any) -> Any:
    """Moduli in [0, 0.4) or (0.6, 2): at least 0.1 from the ``clip`` bounds +-0.5."""
    u = rng.uniform(0, 1.8, size=shape)
    v = np.where(u < 0.4, u, u + 0.2) * rng.choice([-1.0, 1.0], size=shape)
    return v.astype(dtype)


def _grid(rng: np.random.Generator, dtype: np.dtype, shape: Any, offset: float) -> Any:
    """Real parts within 0.1 of ``k + offset`` (k = -2..1), imaginary parts random: two
    grids with offsets 0.25 and 0.75 never come within 0.3 of each other, so
    ``maximum``-like selections (lexicographic for complex) have no near-ties."""
    re = rng.integers(-2, 2, size=shape) + offset + rng.uniform(-0.1, 0.1, size=shape)
    if dtype.kind == "c":
        return (re + 1j * rng.uniform(-2, 2, size=shape)).astype(dtype)
    return re.astype(dtype)


def _selection_pair(rng: np.random.Generator, dtype: np.dtype) -> tuple:
    return _grid(rng, dtype, (3, 1), 0.25), _grid(rng, dtype, (4,), 0.75)


def _small(rng: np.random.Generator, dtype: np.dtype, shape: Any) -> Any:
    return arr(rng, dtype, shape, -0.03, 0.03)


CASES: list[Case] = [
    # --- unary, holomorphic or real-only, main shape (3, 2)
    _unary(np.negative),
    _unary(np.positive),
    _unary(np.square),
    _unary(np.reciprocal, _away),
    _unary(np.sqrt, positive),
    _unary(np.cbrt, _away, REAL),
    _unary(np.exp),
    _unary(np.exp2),
    _unary(np.expm1),
    _unary(np.log, positive),
    _unary(np.log2, positive),
    _unary(np.log10, positive),
    _unary(np.log1p, positive),
    _unary(np.sin),
    _unary(np.cos),
    _unary(np.tan, unit_interval),
    _unary(np.arcsin, unit_interval),
    _unary(np.arccos, unit_interval),
    _unary(np.arctan, unit_interval),
    _unary(np.sinh),
    _unary(np.cosh),
    _unary(np.tanh, unit_interval),  # complex poles at +-i pi/2
    _unary(np.arcsinh, unit_interval),  # complex branch cuts beyond +-i
    _unary(np.arccosh, _arccosh_domain),
    _unary(np.arctanh, unit_interval),
    _unary(np.deg2rad, dtypes=REAL),
    _unary(np.radians, dtypes=REAL),
    _unary(np.rad2deg, dtypes=REAL),
    _unary(np.degrees, dtypes=REAL),
    _unary(np.sinc),
    _unary(np.sinc, _small, name="numpy.sinc near 0"),
    _unary(np.fabs, _away, REAL),
    _unary(np.absolute, _away),
    _unary(np.sign, _away),
    _unary(np.conjugate),
    _unary(np.real),
    _unary(np.imag),
    _unary(np.angle, _off_cut),
    _unary(np.angle, _off_cut, name="numpy.angle(deg=True)", deg=True),
    Case(np.angle, lambda rng, dt: (_off_cut(rng, dt, (3,)), True), dtypes=ALL,
         name="numpy.angle(z, True)"),
    _unary(np.floor, _off_grid, REAL),
    _unary(np.ceil, _off_grid, REAL),
    _unary(np.trunc, _off_grid, REAL),
    _unary(np.rint, _off_grid, REAL),
    _unary(np.rint, lambda rng, dt, s: (_off_grid(rng, np.dtype("float64"), s)
                                        + 1j * _off_grid(rng, np.dtype("float64"), s)
                                        ).astype(dt),
           ("complex128",), name="numpy.rint complex"),
    _unary(np.round, _off_grid, ALL),
    _unary(np.around, _off_grid, ALL),
    Case(np.round, lambda rng, dt: (_off_grid(rng, dt, (4,)) / 10, 1), dtypes=ALL,
         name="numpy.round(x, 1)"),
    _unary(np.fix, _off_grid, REAL),
    _unary(np.modf, _off_grid, REAL),
    _unary(np.frexp, _no_power_of_two, REAL),
    _unary(np.nan_to_num),
    Case(np.nan_to_num, lambda rng, dt: (_non_finite(rng, dt),), dtypes=ALL,
         name="numpy.nan_to_num at nan"),
    Case(np.nan_to_num, lambda rng, dt: (_non_finite(rng, dt, np.inf),),
         kwargs={"posinf": 5.0, "neginf": -5.0}, dtypes=ALL,
         name="numpy.nan_to_num(posinf=5.0, neginf=-5.0) at inf"),
    # --- unary: 0-d, empty, non-contiguous, transposed, Python scalars
    Case(np.sin, lambda rng, dt: (np.asarray(arr(rng, dt)),), dtypes=ALL,
         name="numpy.sin 0-d"),
    Case(np.exp, lambda rng, dt: (arr(rng, dt, (0, 3)),), dtypes=ALL,
         name="numpy.exp empty"),
    Case(np.tanh, lambda rng, dt: (unit_interval(rng, dt, (6, 2))[::2],), dtypes=ALL,
         name="numpy.tanh strided"),
    Case(np.log, lambda rng, dt: (positive(rng, dt, (2, 3)).T,), dtypes=ALL,
         name="numpy.log transposed"),
    Case(np.absolute, lambda rng, dt: (_away(rng, dt, (6,))[::3],), dtypes=ALL,
         name="numpy.absolute strided"),
    Case(np.cos, lambda rng, dt: (float(arr(rng, np.dtype("float64"))),),
         name="numpy.cos Python float", dtypes=("float64",)),
    Case(np.exp, lambda rng, dt: (complex(arr(rng, np.dtype("complex128"))),),
         name="numpy.exp Python complex", dtypes=("complex128",)),
    Case(np.sqrt, lambda rng, dt: (positive(rng, dt),), dtypes=ALL,
         name="numpy.sqrt NumPy scalar"),
    Case(np.sin, lambda rng, dt: ([float(v) for v in arr(rng, np.dtype("float64"), (3,))],),
         name="numpy.sin list", dtypes=("float64",)),
    Case(np.absolute, lambda rng, dt: (np.asarray(_away(rng, dt)),), dtypes=ALL,
         name="numpy.absolute 0-d"),
    Case(np.real, lambda rng, dt: (arr(rng, dt),), dtypes=ALL, name="numpy.real scalar"),
    Case(np.square, lambda rng, dt: (arr(rng, dt, (4,)),), kwargs={"dtype": np.complex128},
         dtypes=("float64",), name="numpy.square(dtype=complex128)"),
    # --- binary, broadcasting (3, 1) with (4,)
    _binary(np.add),
    _binary(np.subtract),
    _binary(np.multiply),
    _binary(np.divide, arr, _away),
    _binary(np.power, positive, arr),
    _binary(np.float_power, positive, arr),
    Case(np.fmod, _quotient_case, dtypes=REAL),
    Case(np.remainder, _quotient_case, dtypes=REAL),
    Case(np.floor_divide, _quotient_case, dtypes=REAL),
    Case(np.divmod, _quotient_case, dtypes=REAL),
    _binary(np.logaddexp, dtypes=REAL),
    _binary(np.logaddexp2, dtypes=REAL),
    _binary(np.arctan2, dtypes=REAL),
    _binary(np.hypot, dtypes=REAL),
    Case(np.maximum, _selection_pair, dtypes=ALL),
    Case(np.minimum, _selection_pair, dtypes=ALL),
    Case(np.fmax, _selection_pair, dtypes=ALL),
    Case(np.fmin, _selection_pair, dtypes=ALL),
    _binary(np.copysign, _away, _away, REAL),
    _binary(np.heaviside, _away, arr, REAL),
    Case(np.heaviside, lambda rng, dt: (no_tangent(np.array([0.0, -1.0, 0.0, 2.0], dtype=dt)),
                                        arr(rng, dt, (4,))),
         dtypes=REAL, name="numpy.heaviside at x1 == 0"),
    Case(np.ldexp, lambda rng, dt: (arr(rng, dt, (3, 1)), integers(rng, (4,), -2, 3)),
         dtypes=REAL),
    # --- binary: scalars, 0-d, empty, transposed, integer arrays
    Case(np.multiply, lambda rng, dt: (arr(rng, dt, (2, 3)), 2.5), dtypes=ALL,
         name="numpy.multiply array-float"),
    Case(np.subtract, lambda rng, dt: (arr(rng, dt), arr(rng, dt, (2, 3))), dtypes=ALL,
         name="numpy.subtract scalar-array"),
    Case(np.divide, lambda rng, dt: (np.asarray(arr(rng, dt)), _away(rng, dt, (3,))),
         dtypes=ALL, name="numpy.divide 0-d-array"),
    Case(np.add, lambda rng, dt: (arr(rng, dt, (0, 2)), arr(rng, dt, (2,))), dtypes=ALL,
         name="numpy.add empty"),
    Case(np.maximum, lambda rng, dt: (_grid(rng, dt, (3, 2), 0.25).T,
                                      _grid(rng, dt, (6,), 0.75)[::2]),
         dtypes=ALL, name="numpy.maximum views"),
    Case(np.power, lambda rng, dt: (positive(rng, dt, (3,)), np.array([0, 1, 3])),
         dtypes=ALL, name="numpy.power integer exponents"),
    Case(np.power, lambda rng, dt: (arr(rng, dt, (4,)), no_tangent(2.0)), dtypes=ALL,
         name="numpy.power negative base, float exponent 2"),
    Case(np.multiply, lambda rng, dt: (arr(rng, dt, (3,)), np.array([1, -2, 3])),
         dtypes=ALL, name="numpy.multiply by int array"),
    Case(np.multiply, lambda rng, dt: ([float(v) for v in arr(rng, np.dtype("float64"), (3,))],
                                       arr(rng, dt, (2, 3))),
         dtypes=("float64",), name="numpy.multiply list-array"),
    Case(np.hypot, lambda rng, dt: (arr(rng, dt, (3,)), np.float32(0.5)), dtypes=REAL,
         name="numpy.hypot NumPy scalar"),
    # --- clip
    Case(np.clip, lambda rng, dt: (_off_bounds(rng, dt, (3, 4)), -0.5 * np.ones((3, 1), dt),
                                   np.asarray(0.5 * np.ones(4), dt)),
         dtypes=REAL, name="numpy.clip array bounds"),
    Case(np.clip, lambda rng, dt: (_off_bounds(rng, dt, (5,)), dt.type(-0.5), None),
         dtypes=REAL, name="numpy.clip lower only"),
    Case(np.clip, lambda rng, dt: (_off_bounds(rng, dt, (5,)),), kwargs={"max": 0.5},
         dtypes=REAL, name="numpy.clip(max=0.5)"),
    Case(np.clip, lambda rng, dt: (_off_bounds(rng, dt, (4,)), dt.type(0.5), dt.type(-0.5)),
         dtypes=REAL, name="numpy.clip min > max"),
    Case(np.clip, lambda rng, dt: (_grid(rng, dt, (6,), 0.5), dt.type(-1 - 1j), dt.type(1 + 1j)),
         dtypes=("complex128",), name="numpy.clip complex"),
    # --- reduce
    Case(np.add.reduce, lambda rng, dt: (arr(rng, dt, (3, 4)),), dtypes=ALL,
         name="numpy.add.reduce"),
    Case(np.add.reduce, lambda rng, dt: (arr(rng, dt, (2, 3, 2)),),
         kwargs={"axis": (0, 2), "keepdims": True}, dtypes=ALL,
         name="numpy.add.reduce(axis=(0, 2), keepdims=True)"),
    Case(np.add.reduce, lambda rng, dt: (arr(rng, dt, (3, 4)), 1), dtypes=ALL,
         name="numpy.add.reduce(x, 1)"),
    Case(np.add.reduce, lambda rng, dt: (arr(rng, dt, (3, 4)),),
         kwargs={"axis": None, "dtype": np.float64}, dtypes=("float32",),
         name="numpy.add.reduce(axis=None, dtype=float64)"),
    Case(np.add.reduce, lambda rng, dt: (arr(rng, dt, (0, 3)),), dtypes=REAL,
         name="numpy.add.reduce empty"),
    Case(np.multiply.reduce, lambda rng, dt: (arr(rng, dt, (3, 4)),), kwargs={"axis": 1},
         dtypes=ALL, name="numpy.multiply.reduce(axis=1)"),
    Case(np.multiply.reduce,
         lambda rng, dt: (_with_zeros(rng, dt, (3, 4), [(0, 1), (1, 0), (1, 2)]),),
         kwargs={"axis": 1}, dtypes=ALL, name="numpy.multiply.reduce with zeros"),
    Case(np.multiply.reduce, lambda rng, dt: (arr(rng, dt, (2, 3, 2)),),
         kwargs={"axis": (-1, 0), "keepdims": True, "initial": 2.0}, dtypes=ALL,
         name="numpy.multiply.reduce(axis=(-1, 0), keepdims=True, initial=2)"),
    Case(np.maximum.reduce, lambda rng, dt: (_spread(rng, dt, (3, 4)),), kwargs={"axis": 1},
         dtypes=ALL, name="numpy.maximum.reduce(axis=1)"),
    Case(np.maximum.reduce, lambda rng, dt: (_spread(rng, dt, (3, 4)),),
         kwargs={"axis": None, "initial": 1.0}, dtypes=REAL,
         name="numpy.maximum.reduce(axis=None, initial=1)"),
    Case(np.minimum.reduce, lambda rng, dt: (_spread(rng, dt, (2, 3, 2)),),
         kwargs={"axis": (0, 2), "keepdims": True}, dtypes=ALL,
         name="numpy.minimum.reduce(axis=(0, 2), keepdims=True)"),
    # --- accumulate
    Case(np.add.accumulate, lambda rng, dt: (arr(rng, dt, (3, 4)),), dtypes=ALL,
         name="numpy.add.accumulate"),
    Case(np.add.accumulate, lambda rng, dt: (arr(rng, dt, (3, 4)), -1), dtypes=ALL,
         name="numpy.add.accumulate(x, -1)"),
    Case(np.multiply.accumulate, lambda rng, dt: (arr(rng, dt, (3, 4)),),
         kwargs={"axis": 1}, dtypes=ALL, name="numpy.multiply.accumulate(axis=1)"),
    Case(np.multiply.accumulate,
         lambda rng, dt: (_with_zeros(rng, dt, (3, 5), [(0, 1), (1, 0), (1, 3), (2, 4)]),),
         kwargs={"axis": 1}, dtypes=ALL, name="numpy.multiply.accumulate with zeros"),
    Case(np.maximum.accumulate, lambda rng, dt: (_spread(rng, dt, (4, 3)),), dtypes=ALL,
         name="numpy.maximum.accumulate"),
    Case(np.minimum.accumulate, lambda rng, dt: (_spread(rng, dt, (3, 5)),),
         kwargs={"axis": 1},
         dtypes=ALL, name="numpy.minimum.accumulate(axis=1)"),
]

#: The ufuncs whose main row (no name, no keyword arguments) names ``jax.numpy``'s
#: function of the same name as its oracle: tests/oracles compares JAX's vjp and jvp
#: with the rules at this table's inputs, so the JAX table has no rows of its own for them.
#: Not here: ``sign`` (JAX differentiates complex sign(z) = z/|z| as a constant) and
#: ``float_power`` (NumPy computes float32 inputs in float64, JAX in float32).
_JAX_SAME_NAME = frozenset({
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "cbrt", "square", "reciprocal", "negative", "positive", "absolute", "fabs",
    "conjugate", "real", "imag", "angle", "deg2rad", "rad2deg", "sinc", "maximum", "minimum",
    "fmax", "fmin", "arctan2", "hypot", "copysign", "power", "logaddexp",
    "logaddexp2", "divide",
})
CASES = [dataclasses.replace(c, oracle=f"jax.numpy.{c.f.__name__}")
         if c.name is None and not c.kwargs and getattr(c.f, "__name__", None) in _JAX_SAME_NAME
         else c for c in CASES]
