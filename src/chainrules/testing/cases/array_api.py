"""Rule cases for the array API rules (``chainrules/rules/array_api/``) on ``array_api_strict``.

``array_api_strict`` implements the standard and nothing more (no NumPy extras, strict
dtype rules), so these rows show that the generic rules, written once against ``xp``,
work outside NumPy: each row names the standard function, builds NumPy inputs with the
usual domain helpers and converts them with ``xs.asarray``. The testers check the rule on
the strict arrays against finite differences of the strict function. Importing this
module registers the rules on ``array_api_strict`` (``register_namespace``); without
``array_api_strict`` installed the table is empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.testing import (
    Case,
    arr,
    no_tangent,
    positive,
    unit_interval,
    well_conditioned,
)
from chainrules.testing._pairs import PrimalAndTangent

__all__ = ["CASES", "NAMESPACE", "build_cases"]

REAL = ("float64", "float32")
ALL = ("float64", "float32", "complex128")

NAMESPACE: Any
try:
    import array_api_strict

    NAMESPACE = array_api_strict
except ImportError:  # pragma: no cover - the optional dependency is missing
    NAMESPACE = None


class _Target:
    """The array library the rows are being built for: its namespace, the prefix of
    the rows' names, how a NumPy array becomes one of its arrays, and how a row's dtypes
    map onto the ones it runs (JAX without x64 runs float32 and complex64)."""

    def __init__(self, ns: Any, prefix: str, asarray: Callable[[Any], Any],
                 dtypes: dict[str, str | None] | None = None) -> None:
        self.ns, self.prefix, self.asarray, self.dtypes = ns, prefix, asarray, dtypes

    def convert(self, v: Any) -> Any:
        if isinstance(v, PrimalAndTangent):
            return PrimalAndTangent(self.convert(v.x), self.convert(v.x_dot))
        if isinstance(v, (np.ndarray, np.generic)):
            return self.asarray(np.asarray(v))
        if isinstance(v, list):
            return [self.convert(item) for item in v]
        return v

    def map_dtypes(self, dtypes: tuple) -> tuple:
        if self.dtypes is None:
            return dtypes
        mapped = (self.dtypes.get(d, d) for d in dtypes)
        return tuple(dict.fromkeys(d for d in mapped if d is not None))


_TARGET: _Target | None = None


def _ns() -> Any:
    """The namespace the rows are being built for."""
    assert _TARGET is not None
    return _TARGET.ns


def _to_xs(v: Any) -> Any:
    """NumPy inputs as ``array_api_strict`` arrays (the sorted-``eig`` helper's own)."""
    if isinstance(v, PrimalAndTangent):
        return PrimalAndTangent(_to_xs(v.x), _to_xs(v.x_dot))
    if isinstance(v, (np.ndarray, np.generic)):
        return NAMESPACE.asarray(np.asarray(v))
    if isinstance(v, list):
        return [_to_xs(item) for item in v]
    return v


def _fn(name: str, ns: Any = None) -> Any:
    target = _ns() if ns is None else ns
    for part in name.split("."):
        target = getattr(target, part)
    return target


def _case(name: str, args: Callable[..., tuple], dtypes: tuple = REAL,
          label: str | None = None, x64: bool = False, **options: Any) -> Case | None:
    """A row for ``<namespace>.<name>``: ``args(rng, dtype)`` builds NumPy inputs, which
    the row converts to the target library's arrays. ``x64``: the row needs 64-bit
    dtypes (a cast to float64) and is left out where they are not available."""
    target = _TARGET
    assert target is not None
    if x64 and target.dtypes is not None and target.dtypes.get("float64", "") is None:
        return None

    def library_args(rng: np.random.Generator, dtype: np.dtype) -> tuple:
        return tuple(target.convert(a) for a in args(rng, dtype))

    display = f"{target.prefix}.{name}" + (f" {label}" if label else "")
    return Case(_fn(name), library_args, dtypes=target.map_dtypes(dtypes), name=display,
                **options)


def _unary(name: str, gen: Any = arr, dtypes: tuple = ALL, shape: tuple = (3, 2),
           **options: Any) -> Case:
    return _case(name, lambda rng, dt: (gen(rng, dt, shape),), dtypes, **options)


def _binary(name: str, gen1: Any = arr, gen2: Any = arr, dtypes: tuple = ALL,
            **options: Any) -> Case:
    """Broadcasting (3, 1) against (4,)."""
    return _case(name, lambda rng, dt: (gen1(rng, dt, (3, 1)), gen2(rng, dt, (4,))), dtypes,
                 **options)


def _away(rng: np.random.Generator, dtype: np.dtype, shape: Any = (), low: float = 0.5,
          high: float = 2.0) -> Any:
    """Moduli in ``(low, high)`` and a random sign: away from zero."""
    x = np.asarray(positive(rng, dtype, shape, low, high))
    return (x * rng.choice([-1.0, 1.0], size=shape)).astype(dtype)


def _off_grid(rng: np.random.Generator, dtype: np.dtype, shape: Any = ()) -> Any:
    """Fractional parts in (0.1, 0.4): away from the jumps of the rounding functions."""
    k = rng.integers(-3, 3, size=shape)
    return np.asarray(k + rng.uniform(0.1, 0.4, size=shape)).astype(dtype)


def _grid(rng: np.random.Generator, dtype: np.dtype, shape: Any, offset: float) -> Any:
    """Values within 0.1 of ``k + offset``: two grids (offsets 0.25, 0.75) never tie."""
    re = rng.integers(-2, 2, size=shape) + offset + rng.uniform(-0.1, 0.1, size=shape)
    return re.astype(dtype)


def _quotient(rng: np.random.Generator, dtype: np.dtype) -> tuple:
    """``x1 / x2`` at least 0.1 from an integer: no jumps of ``remainder``."""
    x2 = _away(rng, dtype, (4,))
    return (x2 * _off_grid(rng, dtype, (3, 4))).astype(dtype), x2


def _off_bounds(rng: np.random.Generator, dtype: np.dtype, shape: Any) -> Any:
    """Moduli at least 0.1 from the ``clip`` bounds +-0.5."""
    u = rng.uniform(0, 1.8, size=shape)
    return (np.where(u < 0.4, u, u + 0.2) * rng.choice([-1.0, 1.0], size=shape)).astype(dtype)


def _acosh_domain(rng: np.random.Generator, dtype: np.dtype, shape: Any) -> Any:
    return positive(rng, dtype, shape, 1.2, 3.0)


def _elementwise_cases() -> list[Case | None]:
    return [
        _unary("negative"),
        _unary("positive"),
        _unary("square"),
        _unary("reciprocal", _away),
        _unary("sqrt", positive),
        _unary("exp"),
        _unary("expm1"),
        _unary("log", positive),
        _unary("log2", positive),
        _unary("log10", positive),
        _unary("log1p", positive),
        _unary("sin"),
        _unary("cos"),
        _unary("tan", unit_interval),
        _unary("asin", unit_interval),
        _unary("acos", unit_interval),
        _unary("atan", unit_interval),
        _unary("sinh"),
        _unary("cosh"),
        _unary("tanh", unit_interval),
        _unary("asinh", unit_interval),
        _unary("acosh", _acosh_domain),
        _unary("atanh", unit_interval),
        _unary("abs", _away),
        _unary("sign", _away),
        _unary("conj"),
        _unary("real"),
        _unary("imag", dtypes=("complex128",)),
        _unary("floor", _off_grid, REAL),
        _unary("ceil", _off_grid, REAL),
        _unary("trunc", _off_grid, REAL),
        _unary("round", _off_grid, REAL),
        _case("sin", lambda rng, dt: (np.asarray(arr(rng, dt)),), ALL, "0-d"),
        _case("exp", lambda rng, dt: (arr(rng, dt, (0, 3)),), ALL, "empty"),
        _binary("add"),
        _binary("subtract"),
        _binary("multiply"),
        _binary("divide", arr, _away),
        _binary("pow", positive, arr),
        _case("pow", lambda rng, dt: (arr(rng, dt, (4,)), no_tangent(2.0)), ALL,
              "negative base, x ** 2.0"),
        _case("multiply", lambda rng, dt: (arr(rng, dt, (2, 3)), 2.5), ALL, "array-float"),
        _case("remainder", _quotient, REAL),
        _case("floor_divide", _quotient, REAL),
        _binary("logaddexp", dtypes=REAL),
        _binary("atan2", dtypes=REAL),
        _binary("hypot", dtypes=REAL),
        _binary("copysign", _away, _away, REAL),
        _case("maximum", lambda rng, dt: (_grid(rng, dt, (3, 1), 0.25),
                                          _grid(rng, dt, (4,), 0.75)), REAL),
        _case("minimum", lambda rng, dt: (_grid(rng, dt, (3, 1), 0.25),
                                          _grid(rng, dt, (4,), 0.75)), REAL),
        _case("clip", lambda rng, dt: (_off_bounds(rng, dt, (3, 4)),
                                       -0.5 * np.ones((3, 1), dt), 0.5 * np.ones(4, dt)),
              REAL, "array bounds"),
        _case("clip", lambda rng, dt: (_off_bounds(rng, dt, (5,)),), REAL, "max=0.5",
              kwargs={"max": 0.5}),
    ]


def _spread(rng: np.random.Generator, dtype: np.dtype, shape: Any) -> Any:
    """Distinct values at least 4/n apart: no near-ties for ``max`` and ``min``; shifted
    by a quarter step, so no two magnitudes tie either (``vector_norm(ord=inf)``)."""
    n = int(np.prod(shape))
    values = np.linspace(-2, 2, n) + (1 / max(n - 1, 1))
    return rng.permutation(values).reshape(shape).astype(dtype)


def _x34(rng: np.random.Generator, dt: np.dtype) -> tuple:
    return (arr(rng, dt, (3, 4)),)


def _statistical_cases() -> list[Case | None]:
    return [
        _case("sum", _x34, ALL),
        _case("sum", _x34, ALL, kwargs={"axis": 0}),
        _case("sum", lambda rng, dt: (arr(rng, dt, (2, 3, 2)),), ALL,
              kwargs={"axis": (0, 2), "keepdims": True}),
        _case("sum", _x34, ("float32",), kwargs={"axis": 1, "dtype": _ns().float64}, x64=True),
        _case("mean", _x34, ALL),
        _case("mean", _x34, ALL, kwargs={"axis": -1, "keepdims": True}),
        _case("prod", _x34, ALL, kwargs={"axis": 1}),
        _case("prod", lambda rng, dt: (np.where(np.arange(12).reshape(3, 4) % 5 == 0, 0,
                                                arr(rng, dt, (3, 4))).astype(dt),),
              ALL, "with zeros", kwargs={"axis": 1}),
        _case("prod", lambda rng, dt: (arr(rng, dt, (2, 3, 2)),), REAL,
              kwargs={"axis": (0, 2)}),
        _case("var", _x34, REAL),
        _case("var", _x34, REAL, kwargs={"axis": 0, "correction": 1, "keepdims": True}),
        _case("std", _x34, REAL, kwargs={"axis": 1}),
        _case("std", _x34, REAL, kwargs={"correction": 1, "keepdims": True}),
        _case("max", lambda rng, dt: (_spread(rng, dt, (3, 4)),), REAL, kwargs={"axis": 1}),
        _case("max", lambda rng, dt: (_spread(rng, dt, (3, 4)),), REAL),
        _case("min", lambda rng, dt: (_spread(rng, dt, (2, 3, 2)),), REAL,
              kwargs={"axis": (0, 2), "keepdims": True}),
        _case("cumulative_sum", _x34, ALL, kwargs={"axis": 1}),
        _case("cumulative_sum", lambda rng, dt: (arr(rng, dt, (5,)),), ALL,
              kwargs={"include_initial": True}),
        _case("cumulative_prod", lambda rng, dt: (_away(rng, dt, (3, 4)),), ALL,
              kwargs={"axis": 0}),
        _case("cumulative_prod", lambda rng, dt: (_away(rng, dt, (5,)),), REAL,
              kwargs={"include_initial": True}),
    ]


def _x234(rng: np.random.Generator, dt: np.dtype) -> tuple:
    return (arr(rng, dt, (2, 3, 4)),)


def _manipulation_cases() -> list[Case | None]:
    ns = _ns()
    return [
        _case("reshape", _x234, ALL, kwargs={"shape": (4, 6)}),
        _case("reshape", lambda rng, dt: (arr(rng, dt, (2, 3)), (3, -1)), ALL, "positional"),
        _case("permute_dims", _x234, ALL, kwargs={"axes": (2, 0, 1)}),
        _case("expand_dims", _x34, ALL, kwargs={"axis": 1}),
        _case("squeeze", lambda rng, dt: (arr(rng, dt, (3, 1, 4)),), ALL, kwargs={"axis": 1}),
        _case("flip", _x234, ALL),
        _case("flip", _x234, ALL, kwargs={"axis": (0, 2)}),
        _case("roll", _x234, ALL, kwargs={"shift": 2, "axis": 1}),
        _case("roll", _x234, ALL, kwargs={"shift": (1, -1), "axis": (0, 2)}),
        _case("roll", _x34, ALL, "flat", kwargs={"shift": 5}),
        _case("moveaxis", lambda rng, dt: (arr(rng, dt, (2, 3, 4)), 0, -1), ALL),
        _case("broadcast_to", lambda rng, dt: (arr(rng, dt, (3, 1)),), ALL,
              kwargs={"shape": (2, 3, 4)}),
        _case("astype", lambda rng, dt: (arr(rng, dt, (3, 4)), ns.float64),
              ("float32",), "to float64", x64=True),
        _case("astype", lambda rng, dt: (arr(rng, dt, (3, 4)), ns.float32),
              ("float64",), "to float32"),
        _case("asarray", lambda rng, dt: (arr(rng, dt, (3, 4)),), ALL),
        _case("asarray", _x34, ("float32",), "dtype=float64",
              kwargs={"dtype": _ns().float64}, x64=True),
        _case("from_dlpack", lambda rng, dt: (arr(rng, dt, (3, 4)),), ALL),
        _case("meshgrid", lambda rng, dt: (arr(rng, dt, (3,)), arr(rng, dt, (4,)),
                                           arr(rng, dt, (2,))), ALL),
        _case("meshgrid", lambda rng, dt: (arr(rng, dt, (3,)), arr(rng, dt, (4,))), ALL,
              "ij", kwargs={"indexing": "ij"}),
        _case("tile", lambda rng, dt: (arr(rng, dt, (3, 4)), (2, 1, 3)), ALL),
        _case("repeat", lambda rng, dt: (arr(rng, dt, (3, 4)), 2), ALL, kwargs={"axis": 1}),
        _case("repeat", lambda rng, dt: (arr(rng, dt, (3, 4)), 3), ALL, "flat"),
        _case("repeat", lambda rng, dt: (arr(rng, dt, (3, 4)),
                                         np.array([1, 0, 2], dtype=np.int64)),
              ALL, "array repeats", kwargs={"axis": 0}),
        _case("tril", lambda rng, dt: (arr(rng, dt, (2, 4, 4)),), ALL),
        _case("triu", lambda rng, dt: (arr(rng, dt, (4, 3)),), ALL, kwargs={"k": 1}),
        _case("matrix_transpose", _x234, ALL),
        _case("concat", lambda rng, dt: ([arr(rng, dt, (2, 3)), arr(rng, dt, (1, 3))],), ALL),
        _case("concat", lambda rng, dt: ([arr(rng, dt, (2, 3)), arr(rng, dt, (2, 2))],), ALL,
              kwargs={"axis": -1}),
        _case("concat", lambda rng, dt: ([arr(rng, dt, (2, 3)), arr(rng, dt, (4,))],), ALL,
              kwargs={"axis": None}),
        _case("stack", lambda rng, dt: ([arr(rng, dt, (2, 3)), arr(rng, dt, (2, 3))],), ALL,
              kwargs={"axis": 1}),
        _case("unstack", _x234, ALL, kwargs={"axis": 2}),
        _case("broadcast_arrays", lambda rng, dt: (arr(rng, dt, (3, 1)), arr(rng, dt, (4,))),
              ALL),
    ]


def _ints(*values: int) -> Any:
    return no_tangent(np.array(values, dtype=np.int64))


def _searching_cases() -> list[Case | None]:
    return [
        _case("where", lambda rng, dt: (no_tangent(np.array([[True], [False], [True]])),
                                        arr(rng, dt, (3, 4)), arr(rng, dt, (4,))), ALL),
        _case("take", lambda rng, dt: (arr(rng, dt, (3, 4)), _ints(2, 0, 2, -1, 1)), ALL,
              kwargs={"axis": 1}),
        _case("take", lambda rng, dt: (arr(rng, dt, (6,)), _ints(5, 0, 0)), ALL, "1-d"),
        _case("take_along_axis", lambda rng, dt: (
            arr(rng, dt, (3, 4)), no_tangent(rng.integers(0, 4, size=(3, 5)))), ALL,
            kwargs={"axis": 1}),
        _case("take_along_axis", lambda rng, dt: (
            arr(rng, dt, (3, 4)), no_tangent(rng.integers(0, 3, size=(2, 1)))), ALL,
            "broadcast", kwargs={"axis": 0}),
        _case("sort", lambda rng, dt: (_spread(rng, dt, (3, 4)),), REAL),
        _case("sort", lambda rng, dt: (_spread(rng, dt, (3, 4)),), REAL, "descending",
              kwargs={"axis": 0, "descending": True}),
        _case("diff", _x34, ALL),
        _case("diff", _x34, ALL, kwargs={"axis": 0, "n": 2}),
        _case("diff", lambda rng, dt: (arr(rng, dt, (3, 4)),), ALL, "prepend, append",
              kwargs={"prepend": _ns().zeros((3, 1)), "append": _ns().ones((3, 2))}),
    ]


def _linalg_cases() -> list[Case | None]:
    def pair(s1: tuple, s2: tuple) -> Callable[..., tuple]:
        return lambda rng, dt: (arr(rng, dt, s1), arr(rng, dt, s2))

    return [
        _case("matmul", pair((2, 3, 4), (4, 5)), ALL),
        _case("matmul", pair((4,), (2, 4, 3)), ALL, "vector-matrix"),
        _case("matmul", pair((3, 4), (4,)), ALL, "matrix-vector"),
        _case("matmul", pair((4,), (4,)), ALL, "vector-vector"),
        _case("linalg.matmul", pair((3, 4), (1, 4, 2)), ALL),
        _case("tensordot", pair((2, 3, 4), (3, 4, 5)), ALL),
        _case("tensordot", pair((2, 3, 4), (4, 2)), ALL, "axes pairs",
              kwargs={"axes": ([2, 0], [0, 1])}),
        _case("linalg.tensordot", pair((3, 4), (4, 2)), ALL, kwargs={"axes": 1}),
        _case("vecdot", pair((3, 4), (4,)), ALL),
        _case("vecdot", pair((3, 1), (3, 5)), ALL, "axis -2", kwargs={"axis": -2}),
        _case("linalg.vecdot", pair((2, 3), (2, 3)), ALL),
        _case("linalg.matrix_transpose", _x234, ALL),
        _case("linalg.outer", pair((3,), (4,)), ALL),
        _case("linalg.cross", pair((4, 3), (3,)), ALL),
        _case("linalg.trace", _x234, ALL),
        _case("linalg.trace", lambda rng, dt: (arr(rng, dt, (3, 5)),), ALL, "offset 1",
              kwargs={"offset": 1}),
        _case("linalg.diagonal", _x234, ALL),
        _case("linalg.diagonal", lambda rng, dt: (arr(rng, dt, (4, 3)),), ALL, "offset -1",
              kwargs={"offset": -1}),
        _case("linalg.diagonal", lambda rng, dt: (arr(rng, dt, (3, 5)),), ALL, "offset 1",
              kwargs={"offset": 1}),
        _case("linalg.vector_norm", lambda rng, dt: (_away(rng, dt, (3, 4)),), ALL),
        _case("linalg.vector_norm", lambda rng, dt: (_away(rng, dt, (3, 4)),), ALL, "ord 3",
              kwargs={"ord": 3, "axis": 1, "keepdims": True}),
        _case("linalg.vector_norm", lambda rng, dt: (_spread(rng, dt, (3, 4)),), REAL,
              "ord inf", kwargs={"ord": float("inf"), "axis": 0}),
        _case("linalg.vector_norm", lambda rng, dt: (_away(rng, dt, (5,)),), REAL, "ord 1",
              kwargs={"ord": 1}),
        _case("linalg.matrix_norm", lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), ALL),
        *(_case("linalg.matrix_norm", lambda rng, dt: (_spread(rng, dt, (2, 3, 4)),), ALL,
                f"ord {p!r}", kwargs={"ord": p})
          for p in ("nuc", 2, -2, 1, -1, float("inf"), -float("inf"))),
        _case("linalg.vector_norm", lambda rng, dt: (arr(rng, dt, (3, 4)),), REAL, "ord 0",
              kwargs={"ord": 0, "axis": 1}),
        _case("linalg.matrix_power", lambda rng, dt: (arr(rng, dt, (2, 3, 3)) / 2, 3), ALL),
        _case("linalg.matrix_power", lambda rng, dt: (well_conditioned(rng, dt, 3), -2), ALL,
              "negative"),
    ]


def _strict_eig_sorted(a: Any) -> tuple:
    """``array_api_strict.linalg.eig(a)`` with its eigenpairs in a continuous order and
    sign (see ``numpy_linalg.eig_sorted``): LAPACK's order and the eigenvectors' signs
    jump within a finite difference's reach at some seeds, however far apart the
    eigenvalues are. Its rules are ``eig``'s, permuted and signed."""
    from chainrules.testing.cases.numpy_linalg import canonical_eig, sorted_eig

    w, v = _fn("linalg.eig", NAMESPACE)(a)
    canon = canonical_eig(np.asarray(w), np.asarray(v))
    return tuple(_to_xs(p) for p in sorted_eig(np.asarray(w), np.asarray(v), *canon))


def _register_strict_eig_sorted() -> None:
    from chainrules import NoTangent, Tangent, frule, rrule, unthunk
    from chainrules.testing.cases.numpy_linalg import canonical_eig, sorted_eig, unsorted_eig

    eig = _fn("linalg.eig", NAMESPACE)

    def plain(t: Any) -> Any:
        t = unthunk(t)
        return t if isinstance(t, (Tangent, NoTangent)) or not hasattr(t, "shape") else (
            np.asarray(t))

    def strict_eig_sorted_frule(dargs: tuple, a: Any) -> Any:
        y, y_dot = frule((NoTangent(), dargs[1]), eig, a)
        canon = canonical_eig(np.asarray(y[0]), np.asarray(y[1]))
        out = tuple(_to_xs(p) for p in sorted_eig(np.asarray(y[0]), np.asarray(y[1]), *canon))
        if not isinstance(y_dot, Tangent):
            return out, y_dot
        dots = sorted_eig(plain(y_dot[0]), plain(y_dot[1]), *canon)
        return out, Tangent[tuple](*(_to_xs(d) for d in dots))

    def strict_eig_sorted_rrule(a: Any) -> Any:
        y, pullback = rrule(eig, a)
        order, sign = canonical_eig(np.asarray(y[0]), np.asarray(y[1]))
        out = tuple(_to_xs(p) for p in sorted_eig(np.asarray(y[0]), np.asarray(y[1]),
                                                   order, sign))

        def strict_eig_sorted_pullback(y_bar: Any) -> Any:
            y_bar = unthunk(y_bar)
            if not isinstance(y_bar, (Tangent, tuple)):
                return pullback(y_bar)
            items = tuple(y_bar) if isinstance(y_bar, tuple) else y_bar.backing
            bars = (_to_xs(unsorted_eig(plain(items[0]), order)),
                    _to_xs(unsorted_eig(plain(items[1]), order, sign)))
            fields = getattr(type(y), "_fields", None)
            if fields:
                return pullback(Tangent[type(y)](**dict(zip(fields, bars))))
            return pullback(Tangent[type(y)](*bars))

        return out, strict_eig_sorted_pullback

    frule.register(_strict_eig_sorted)(strict_eig_sorted_frule)
    rrule.register(_strict_eig_sorted)(strict_eig_sorted_rrule)


_strict_eig_sorted.tests = _fn("linalg.eig", NAMESPACE)  # type: ignore[attr-defined]
_register_strict_eig_sorted()


def _decomposition_cases() -> list[Case | None]:
    from chainrules.testing.cases.numpy_linalg import herm, pd, separated, wc

    return [
        _case("linalg.inv", lambda rng, dt: (wc(rng, dt, 3),), ALL),
        _case("linalg.inv", lambda rng, dt: (wc(rng, dt, 3, (2,)),), ALL, "stack"),
        _case("linalg.solve", lambda rng, dt: (wc(rng, dt, 3), arr(rng, dt, (3, 2))), ALL),
        _case("linalg.solve", lambda rng, dt: (wc(rng, dt, 3, (2,)), arr(rng, dt, (2, 3, 2))),
              ALL, "stack"),
        _case("linalg.det", lambda rng, dt: (wc(rng, dt, 3),), ALL),
        _case("linalg.det", lambda rng, dt: (wc(rng, dt, 3, (2,)),), ALL, "stack"),
        _case("linalg.slogdet", lambda rng, dt: (wc(rng, dt, 3) * -1,), ALL),
        _case("linalg.slogdet", lambda rng, dt: (wc(rng, dt, 3, (2,)),), ALL, "stack"),
        _case("linalg.cholesky", lambda rng, dt: (pd(rng, dt, 3),), ALL),
        _case("linalg.cholesky", lambda rng, dt: (pd(rng, dt, 3, (2,)),), ALL, "stack"),
        _case("linalg.cholesky", lambda rng, dt: (pd(rng, dt, 3),), ALL,
              kwargs={"upper": True}),
        _case("linalg.eigh", lambda rng, dt: (herm(rng, dt, 3),), REAL),
        _case("linalg.eigh", lambda rng, dt: (herm(rng, dt, 3, (2,)),), ("float64",), "stack"),
        _case("linalg.eigvalsh", lambda rng, dt: (herm(rng, dt, 3),), ALL),
        # eigenvalues far apart and eigenvectors far from their gauge's ties
        # (`separated`): LAPACK's order and phase then hold under the perturbations
        *_strict_only([
            Case(_strict_eig_sorted, lambda rng, dt: (_to_xs(separated(rng, dt, 3)),),
                 dtypes=ALL, name="array_api_strict.linalg.eig (sorted, signed)"),
            Case(_strict_eig_sorted, lambda rng, dt: (_to_xs(separated(rng, dt, 3, (2,))),),
                 dtypes=ALL, name="array_api_strict.linalg.eig (sorted, signed) stack"),
        ]),
        _case("linalg.eigvals", lambda rng, dt: (separated(rng, dt, 3),), ALL),
        _case("linalg.svd", lambda rng, dt: (arr(rng, dt, (3, 3)),), REAL, "square"),
        _case("linalg.svd", lambda rng, dt: (arr(rng, dt, (4, 3)),), REAL,
              kwargs={"full_matrices": False}),
        _case("linalg.svd", lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), ("float64",),
              "wide stack", kwargs={"full_matrices": False}),
        _case("linalg.svdvals", lambda rng, dt: (arr(rng, dt, (4, 3)),), ALL),
        _case("linalg.qr", lambda rng, dt: (arr(rng, dt, (4, 3)),), ALL, "tall"),
        _case("linalg.qr", lambda rng, dt: (arr(rng, dt, (2, 3, 3)),), ALL, "stack"),
        _case("linalg.qr", lambda rng, dt: (arr(rng, dt, (3, 5)),), ALL, "wide"),
        _case("linalg.qr", lambda rng, dt: (arr(rng, dt, (2, 3)),), ALL, "wide, complete",
              kwargs={"mode": "complete"}),
        _case("linalg.qr", lambda rng, dt: (arr(rng, dt, (2, 4, 2)),), ALL, "tall, complete",
              kwargs={"mode": "complete"}),
        _case("linalg.pinv", lambda rng, dt: (arr(rng, dt, (4, 3)),), ALL, "tall"),
        _case("linalg.pinv", lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), ALL, "wide stack"),
    ]


def _fft_cases() -> list[Case | None]:
    c = ("complex128",)
    cases = []
    for norm in ("backward", "ortho", "forward"):
        cases += [
            _case("fft.fft", lambda rng, dt: (arr(rng, dt, (3, 5)),), c, norm,
                  kwargs={"norm": norm}),
            _case("fft.ifft", lambda rng, dt: (arr(rng, dt, (3, 5)),), c, norm,
                  kwargs={"norm": norm, "axis": 0}),
            _case("fft.rfft", _x34, REAL, norm, kwargs={"norm": norm}),
            _case("fft.irfft", lambda rng, dt: (arr(rng, dt, (2, 5)),), c, norm,
                  kwargs={"norm": norm}),
            _case("fft.hfft", lambda rng, dt: (arr(rng, dt, (2, 4)),), c, norm,
                  kwargs={"norm": norm}),
            _case("fft.ihfft", lambda rng, dt: (arr(rng, dt, (2, 5)),), REAL, norm,
                  kwargs={"norm": norm}),
        ]
    return [
        *cases,
        _case("fft.fft", lambda rng, dt: (arr(rng, dt, (5,)),), c, "n=8", kwargs={"n": 8}),
        _case("fft.fft", lambda rng, dt: (arr(rng, dt, (5,)),), c, "n=3", kwargs={"n": 3}),
        _case("fft.rfft", lambda rng, dt: (arr(rng, dt, (6,)),), REAL, "n=4", kwargs={"n": 4}),
        _case("fft.irfft", lambda rng, dt: (arr(rng, dt, (4,)),), c, "n=7", kwargs={"n": 7}),
        _case("fft.irfft", lambda rng, dt: (arr(rng, dt, (4,)),), c, "n=4", kwargs={"n": 4}),
        _case("fft.fftn", lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), c),
        _case("fft.fftn", lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), c, "s, axes",
              kwargs={"s": [4, 2], "axes": [0, 2], "norm": "ortho"}),
        _case("fft.ifftn", lambda rng, dt: (arr(rng, dt, (3, 4)),), c),
        _case("fft.rfftn", lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), REAL),
        _case("fft.rfftn", lambda rng, dt: (arr(rng, dt, (3, 4)),), REAL, "s",
              kwargs={"s": [3, 6], "axes": [0, 1], "norm": "forward"}),
        _case("fft.irfftn", lambda rng, dt: (arr(rng, dt, (3, 4)),), c),
        _case("fft.irfftn", lambda rng, dt: (arr(rng, dt, (2, 3, 4)),), c, "s, axes",
              kwargs={"s": [2, 5], "axes": [0, 1], "norm": "ortho"}),
        _case("fft.fftshift", _x34, ALL),
        _case("fft.ifftshift", _x234, ALL, kwargs={"axes": (0, 2)}),
    ]


def _strict_only(cases: list[Case]) -> list[Case]:
    """Rows written for ``array_api_strict`` alone (their helpers convert to it)."""
    assert _TARGET is not None
    return cases if _TARGET.ns is NAMESPACE else []


def _with_zeros(rng: np.random.Generator, dtype: np.dtype, shape: tuple) -> Any:
    """Values with exact zeros at fixed places (one, two, or none per row)."""
    x = arr(rng, dtype, shape)
    mask = (np.arange(int(np.prod(shape))).reshape(shape) % 4) == 1
    return np.where(mask, 0, x).astype(dtype)


def _edge_cases() -> list[Case | None]:
    """Zeros and 0-sized inputs: where a rule written with NumPy in mind breaks on
    another library (a reduction over an empty axis, ``x.size`` being a method)."""
    empty = lambda shape: lambda rng, dt: (arr(rng, dt, shape),)  # noqa: E731
    return [
        _case("cumulative_prod", lambda rng, dt: (_with_zeros(rng, dt, (3, 5)),), ALL,
              "with zeros", kwargs={"axis": 1}),
        _case("cumulative_prod", lambda rng, dt: (_with_zeros(rng, dt, (6,)),), REAL,
              "with zeros, include_initial", kwargs={"include_initial": True}),
        _case("prod", lambda rng, dt: (_with_zeros(rng, dt, (3, 5)),), REAL, "with zeros",
              kwargs={"axis": 0}),
        _case("sum", empty((0, 3)), ALL, "empty", kwargs={"axis": 0}),
        _case("prod", empty((3, 0)), REAL, "empty", kwargs={"axis": 1}),
        _case("cumulative_prod", empty((3, 0)), REAL, "empty", kwargs={"axis": 1}),
        _case("repeat", lambda rng, dt: (arr(rng, dt, (0, 3)), 2), REAL, "empty, flat"),
        _case("concat", lambda rng, dt: ([arr(rng, dt, (0, 3)), arr(rng, dt, (2,))],), REAL,
              "empty, flat", kwargs={"axis": None}),
        _case("take", lambda rng, dt: (arr(rng, dt, (5,)), _ints(4, 0, 4)), REAL,
              "axis=None", kwargs={"axis": None}),
        _case("diff", _x34, REAL, "n=0, prepend",
              kwargs={"n": 0, "axis": 1, "prepend": _ns().zeros((3, 1))}),
        _case("linalg.svd", empty((0, 0)), REAL, "0x0", kwargs={"full_matrices": False}),
        _case("linalg.svdvals", empty((2, 0, 0)), REAL, "empty stack"),
        _case("linalg.eigh", empty((0, 3, 3)), REAL, "empty stack"),
        _case("linalg.eigvalsh", empty((0, 0)), REAL, "0x0"),
        _case("linalg.eigvals", empty((0, 0)), REAL, "0x0"),
        _case("linalg.det", empty((0, 3, 3)), REAL, "empty stack"),
        _case("linalg.inv", empty((0, 0)), REAL, "0x0"),
    ]


def build_cases(ns: Any, prefix: str, asarray: Callable[[Any], Any],
                dtypes: dict[str, str | None] | None = None) -> list[Case]:
    """The array-API rows on the library ``ns``: the same rows as on ``array_api_strict``
    (less the strict-only ones), each named ``<prefix>.<function>``, with inputs made by
    ``asarray`` from NumPy arrays and dtypes mapped by ``dtypes`` (``None`` drops one).
    Registers the generic rules on ``ns`` first.

    >>> import array_api_strict as xs
    >>> rows = build_cases(xs, "strict-again", xs.asarray)
    >>> rows[0].display_name
    'strict-again.negative'
    """
    global _TARGET
    from chainrules.rules import register_namespace

    register_namespace(ns)
    previous, _TARGET = _TARGET, _Target(ns, prefix, asarray, dtypes)
    try:
        rows = (_elementwise_cases() + _statistical_cases() + _manipulation_cases()
                + _searching_cases() + _linalg_cases() + _decomposition_cases()
                + _fft_cases() + _edge_cases())
    finally:
        _TARGET = previous
    return [row for row in rows if row is not None and row.dtypes]


def _all_cases() -> list[Case]:
    if NAMESPACE is None:
        return []
    return build_cases(NAMESPACE, "array_api_strict", NAMESPACE.asarray)


CASES: list[Case] = _all_cases()
