"""Rule cases for NumPy reductions, statistics, scans and constructors (rules/numpy/reductions.py,
statistics.py, scans.py, creation.py).

Inputs for ``max``/``min``/``ptp``/``median`` have well-separated values (no ties
within finite-difference reach); ``prod``/``cumprod`` rows include one and several
zeros; the ``nan*`` rows include NaNs.
"""

from __future__ import annotations

import numpy as np

from chainrules.testing import Case, arr, integers, no_tangent, positive, scalar

F = ("float64", "float32")
FC = ("float64", "float32", "complex128")


def _a(*shape):
    return lambda rng, dt: (arr(rng, dt, shape),)


def _distinct(rng, dt, shape, spacing=0.25):
    """Values at least ``spacing`` apart (real part), in random order."""
    n = int(np.prod(shape))
    v = (rng.permutation(n) - n / 2) * spacing
    if np.dtype(dt).kind == "c":
        v = v + 1j * rng.uniform(-1, 1, n)
    return np.asarray(v).astype(dt).reshape(shape)


def _d(*shape):
    return lambda rng, dt: (_distinct(rng, dt, shape),)


def _with_zeros(rng, dt, shape, where):
    x = arr(rng, dt, shape)
    for idx in where:
        x[idx] = 0
    return x


def _with_nans(rng, dt, shape, where, distinct=False):
    x = _distinct(rng, dt, shape) if distinct else arr(rng, dt, shape)
    for idx in where:
        x[idx] = np.nan
    return x


def _view(rng, dt):
    """A non-contiguous view: every other column of a transposed array."""
    return (arr(rng, dt, (6, 3)).T[:, ::2],)


CASES: list[Case] = []

# sum / mean: axis variants, keepdims, 0-d, empty, views, lists, positional axis
for _f in (np.sum, np.mean):
    CASES += [
        Case(_f, _a(3, 4), dtypes=FC),
        Case(_f, _a(3, 4), kwargs={"axis": 0}, dtypes=FC),
        Case(_f, _a(2, 3, 4), kwargs={"axis": -1}, dtypes=FC),
        Case(_f, _a(2, 3, 4), kwargs={"axis": (0, 2)}, dtypes=FC),
        Case(_f, _a(2, 3, 4), kwargs={"axis": (2, -3), "keepdims": True}, dtypes=FC),
        Case(_f, _a(3, 4), kwargs={"keepdims": True}, dtypes=FC),
        Case(_f, lambda rng, dt: (arr(rng, dt, (3, 4)), 1), dtypes=FC,
             name=f"numpy.{_f.__name__}(x, 1)"),
        Case(_f, lambda rng, dt: (np.asarray(arr(rng, dt, ())),), dtypes=FC,
             name=f"numpy.{_f.__name__}(0-d)"),
        Case(_f, _view, kwargs={"axis": 1}, dtypes=FC, name=f"numpy.{_f.__name__}(view)"),
        Case(_f, lambda rng, dt: (arr(rng, dt, (3, 2)).tolist(),), dtypes=("float64",),
             name=f"numpy.{_f.__name__}(list)"),
    ]
CASES += [
    Case(np.sum, _a(0, 3), kwargs={"axis": 0}, dtypes=FC, name="numpy.sum(empty)"),
    Case(np.sum, _a(3, 4), kwargs={"axis": 1, "dtype": np.float64}, dtypes=("float32",),
         name="numpy.sum(dtype=float64)"),
    Case(np.sum, _a(3, 4), kwargs={"axis": 1, "initial": 2.0}, dtypes=FC),
]

# nansum / nanmean
_NAN = [(0, 1), (2, 3)]
for _f in (np.nansum, np.nanmean):
    CASES += [
        Case(_f, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),), dtypes=F),
        Case(_f, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),), kwargs={"axis": 1},
             dtypes=F),
        Case(_f, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),),
             kwargs={"axis": 0, "keepdims": True}, dtypes=F),
    ]

# prod / nanprod: zeros (one, several in a slice, everywhere), axis variants
CASES += [
    Case(np.prod, _a(3, 4), dtypes=FC),
    Case(np.prod, _a(3, 4), kwargs={"axis": 0}, dtypes=FC),
    Case(np.prod, _a(2, 3, 4), kwargs={"axis": (0, -1), "keepdims": True}, dtypes=FC),
    Case(np.prod, _a(3, 4), kwargs={"axis": 1, "initial": 1.5}, dtypes=FC),
    Case(np.prod, lambda rng, dt: (_with_zeros(rng, dt, (3, 4), [(1, 2)]),), dtypes=FC,
         name="numpy.prod(one zero)"),
    Case(np.prod, lambda rng, dt: (_with_zeros(rng, dt, (3, 4), [(1, 2), (0, 0)]),),
         dtypes=FC, name="numpy.prod(two zeros)"),
    Case(np.prod, lambda rng, dt: (_with_zeros(rng, dt, (3, 4), [(1, 2)]),),
         kwargs={"axis": 1}, dtypes=FC, name="numpy.prod(one zero, axis=1)"),
    Case(np.prod, lambda rng, dt: (_with_zeros(rng, dt, (3, 4), [(1, 2), (1, 0), (2, 2)]),),
         kwargs={"axis": -1}, dtypes=FC, name="numpy.prod(two zeros in a row, axis=-1)"),
    Case(np.prod, lambda rng, dt: (np.asarray(arr(rng, dt, ())),), dtypes=FC,
         name="numpy.prod(0-d)"),
    Case(np.prod, _a(0, 3), kwargs={"axis": 0}, dtypes=FC, name="numpy.prod(empty)"),
    Case(np.prod, _a(3, 0), kwargs={"axis": 0}, dtypes=FC, name="numpy.prod(empty output)"),
    Case(np.nanprod, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),), kwargs={"axis": 1},
         dtypes=F),
]

# var / std: ddof, axis, complex
for _f in (np.var, np.std):
    CASES += [
        Case(_f, _a(3, 4), dtypes=FC),
        Case(_f, _a(3, 4), kwargs={"axis": 0}, dtypes=FC),
        Case(_f, _a(3, 4), kwargs={"axis": 1, "ddof": 1}, dtypes=FC),
        Case(_f, _a(2, 3, 4), kwargs={"axis": (0, 2), "keepdims": True}, dtypes=FC),
        Case(_f, lambda rng, dt: (arr(rng, dt, (3, 4)), -1, None, None, 1), dtypes=FC,
             name=f"numpy.{_f.__name__}(x, -1, None, None, 1)"),
        Case(_f, _a(5), kwargs={"correction": 1}, dtypes=FC),
    ]

CASES += [
    Case(np.nanvar, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),), dtypes=F),
    Case(np.nanvar, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),),
         kwargs={"axis": 1, "ddof": 1}, dtypes=F),
    Case(np.nanstd, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),), kwargs={"axis": 0},
         dtypes=F),
    Case(np.nanstd, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),),
         kwargs={"axis": 1, "keepdims": True}, dtypes=F),
]

# max / min family: distinct values
for _f in (np.max, np.amax, np.min, np.amin, np.ptp, np.median):
    _dt = FC
    CASES += [
        Case(_f, _d(3, 4), dtypes=_dt),
        Case(_f, _d(3, 4), kwargs={"axis": 0}, dtypes=_dt),
        Case(_f, _d(2, 3, 4), kwargs={"axis": -1, "keepdims": True}, dtypes=_dt),
    ]
    if _f is not np.ptp:
        CASES.append(Case(_f, _d(2, 3, 4), kwargs={"axis": (0, 2)}, dtypes=_dt))
CASES += [
    Case(np.max, _d(3, 4), kwargs={"axis": 1, "initial": 0.1}, dtypes=F),
    Case(np.median, _d(2, 5), kwargs={"axis": 1}, dtypes=FC, name="numpy.median(odd)"),
    Case(np.nanmax, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN, distinct=True),),
         kwargs={"axis": 1}, dtypes=F),
    Case(np.nanmin, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN, distinct=True),),
         dtypes=F),
]

# nanmedian, quantile, percentile (q differentiated too)
CASES += [
    Case(np.nanmedian, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN, distinct=True),),
         dtypes=F),
    Case(np.nanmedian, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN, distinct=True),),
         kwargs={"axis": 1}, dtypes=F),
    Case(np.nanmedian, lambda rng, dt: (_with_nans(rng, dt, (4, 3), [(0, 1), (2, 1)], True),),
         kwargs={"axis": 0, "keepdims": True}, dtypes=F),
    Case(np.quantile, lambda rng, dt: (_distinct(rng, dt, (3, 4)), dt.type(0.3)), dtypes=F,
         name="numpy.quantile(a, 0.3)"),
    Case(np.quantile, lambda rng, dt: (_distinct(rng, dt, (3, 4)), np.array([0.3, 0.55], dt)),
         kwargs={"axis": 1}, dtypes=F, name="numpy.quantile(a, [q], axis=1)"),
    Case(np.quantile, lambda rng, dt: (_distinct(rng, dt, (2, 3, 4)),
                                       np.array([[0.1], [0.9]], dt)),
         kwargs={"axis": (0, 2), "keepdims": True}, dtypes=F,
         name="numpy.quantile(a, [[q]], axis=(0, 2), keepdims)"),
    Case(np.percentile, lambda rng, dt: (_distinct(rng, dt, (3, 4)), dt.type(35.0)),
         kwargs={"axis": 0}, dtypes=F, name="numpy.percentile(a, 35, axis=0)"),
]

# average: weights (positional: differentiated), returned=
CASES += [
    Case(np.average, _a(3, 4), dtypes=FC),
    Case(np.average, _a(3, 4), kwargs={"axis": 1}, dtypes=FC),
    Case(np.average, lambda rng, dt: (arr(rng, dt, (3, 4)), None, positive(rng, dt, (3, 4))),
         dtypes=FC, name="numpy.average(a, None, w)"),
    Case(np.average, lambda rng, dt: (arr(rng, dt, (3, 4)), 1, positive(rng, dt, (4,))),
         dtypes=FC, name="numpy.average(a, 1, w1d)"),
    Case(np.average, lambda rng, dt: (arr(rng, dt, (3, 4)), 0, positive(rng, dt, (3, 4))),
         kwargs={"keepdims": True}, dtypes=FC, name="numpy.average(a, 0, w, keepdims)"),
    Case(np.average, lambda rng, dt: (arr(rng, dt, (2, 3, 4)), -2, positive(rng, dt, (3,))),
         kwargs={"keepdims": True}, dtypes=FC, name="numpy.average(a, -2, w1d, keepdims)"),
    Case(np.average, lambda rng, dt: (arr(rng, dt, (3, 4)), 0, positive(rng, dt, (3,)), True),
         dtypes=FC, name="numpy.average(a, 0, w1d, returned)"),
    Case(np.average, lambda rng, dt: (arr(rng, dt, (3, 4)),), kwargs={"returned": True},
         dtypes=FC, name="numpy.average(a, returned)"),
]

# cumsum / cumprod / cumulative_*
for _f in (np.cumsum, np.cumprod):
    CASES += [
        Case(_f, _a(3, 4), dtypes=FC),
        Case(_f, _a(3, 4), kwargs={"axis": 0}, dtypes=FC),
        Case(_f, _a(2, 3, 4), kwargs={"axis": -1}, dtypes=FC),
        Case(_f, _view, kwargs={"axis": 1}, dtypes=FC, name=f"numpy.{_f.__name__}(view)"),
    ]
CASES += [
    Case(np.cumsum, _a(2, 0), kwargs={"axis": 1}, dtypes=FC, name="numpy.cumsum(empty)"),
    Case(np.cumprod, _a(0, 3), kwargs={"axis": 0}, dtypes=FC, name="numpy.cumprod(empty)"),
    Case(np.cumprod, lambda rng, dt: (_with_zeros(rng, dt, (6,), [2]),), dtypes=FC,
         name="numpy.cumprod(one zero)"),
    Case(np.cumprod, lambda rng, dt: (_with_zeros(rng, dt, (7,), [1, 4]),), dtypes=FC,
         name="numpy.cumprod(two zeros)"),
    Case(np.cumprod, lambda rng, dt: (_with_zeros(rng, dt, (3, 5), [(0, 0), (1, 2), (1, 3)]),),
         kwargs={"axis": 1}, dtypes=FC, name="numpy.cumprod(zeros, axis=1)"),
    Case(np.cumprod, lambda rng, dt: (_with_zeros(rng, dt, (4, 3), [(3, 0), (0, 2), (2, 2)]),),
         kwargs={"axis": 0}, dtypes=FC, name="numpy.cumprod(zeros, axis=0)"),
    Case(np.nancumsum, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),), kwargs={"axis": 1},
         dtypes=F),
    Case(np.nancumprod, lambda rng, dt: (_with_nans(rng, dt, (3, 4), _NAN),),
         kwargs={"axis": 1}, dtypes=F),
    Case(np.nancumprod, lambda rng, dt: (_with_zeros(rng, dt, (3, 4), [(0, 2), (1, 1)]),),
         dtypes=F, name="numpy.nancumprod(zeros)"),
    Case(np.nancumprod, lambda rng, dt: (np.where(np.arange(12).reshape(3, 4) % 5 == 1, 0,
                                                  _with_nans(rng, dt, (3, 4), _NAN)),),
         dtypes=F, name="numpy.nancumprod(nan and zero)"),
    Case(np.cumulative_sum, _a(3, 4), kwargs={"axis": 1}, dtypes=FC),
    Case(np.cumulative_sum, _a(5), kwargs={"include_initial": True}, dtypes=FC),
    Case(np.cumulative_prod, _a(3, 4), kwargs={"axis": 0, "include_initial": True}, dtypes=FC),
    Case(np.cumulative_prod, lambda rng, dt: (_with_zeros(rng, dt, (6,), [1, 3]),), dtypes=FC,
         name="numpy.cumulative_prod(two zeros)"),
]

# diff: n, axis, prepend/append (keyword: constants; positional: differentiated)
CASES += [
    Case(np.diff, _a(6), dtypes=FC),
    Case(np.diff, _a(3, 5), kwargs={"n": 2}, dtypes=FC),
    Case(np.diff, _a(4, 3), kwargs={"axis": 0}, dtypes=FC),
    Case(np.diff, _a(4, 3), kwargs={"n": 0}, dtypes=FC),
    Case(np.diff, _a(3, 4), kwargs={"prepend": 1.0, "append": np.zeros((3, 2))}, dtypes=FC),
    Case(np.diff, lambda rng, dt: (arr(rng, dt, (3, 4)), 2, 0, arr(rng, dt, (1, 4)),
                                   arr(rng, dt, ())), dtypes=FC,
         name="numpy.diff(a, 2, 0, prepend, append)"),
    Case(np.diff, lambda rng, dt: (arr(rng, dt, (3, 4)), 1, -1, arr(rng, dt, (3, 2))),
         dtypes=FC, name="numpy.diff(a, 1, -1, prepend)"),
]

# ediff1d (to_begin/to_end: keyword constants, positional differentiated)
CASES += [
    Case(np.ediff1d, _a(2, 3), dtypes=FC),
    Case(np.ediff1d, _a(4), kwargs={"to_begin": np.array([1.0, 2.0]), "to_end": 3.0},
         dtypes=FC),
    Case(np.ediff1d, lambda rng, dt: (arr(rng, dt, (4,)), arr(rng, dt, (2,)), scalar(rng, dt)),
         dtypes=FC, name="numpy.ediff1d(a, to_end, to_begin)"),
]


# trapezoid: w.r.t. y, x (1-d or full) and dx
def _grid(rng, dt, shape, axis=0):
    steps = rng.uniform(0.1, 1.0, shape)
    return np.cumsum(steps, axis=axis).astype(np.dtype(dt).type(0).real.dtype)


CASES += [
    Case(np.trapezoid, _a(5), dtypes=FC),
    Case(np.trapezoid, _a(3, 4), kwargs={"axis": 0}, dtypes=FC),
    Case(np.trapezoid, lambda rng, dt: (arr(rng, dt, (3, 4)), _grid(rng, dt, (4,))),
         dtypes=FC, name="numpy.trapezoid(y, x1d)"),
    Case(np.trapezoid, lambda rng, dt: (arr(rng, dt, (4, 3)), _grid(rng, dt, (4, 3))),
         kwargs={"axis": 0}, dtypes=FC, name="numpy.trapezoid(y, x, axis=0)"),
    Case(np.trapezoid, lambda rng, dt: (arr(rng, dt, (2, 3)), None, dt.type(0.7)), dtypes=FC,
         name="numpy.trapezoid(y, None, dx)"),
    Case(np.trapezoid, lambda rng, dt: (arr(rng, dt, (4, 3)), _grid(rng, dt, (4,)), 1.0, 0),
         dtypes=FC, name="numpy.trapezoid(y, x1d, 1.0, 0)"),
]

# linspace: w.r.t. start and stop
CASES += [
    Case(np.linspace, lambda rng, dt: (scalar(rng, dt), scalar(rng, dt)), kwargs={"num": 5},
         dtypes=FC),
    Case(np.linspace, lambda rng, dt: (scalar(rng, dt), scalar(rng, dt), 4), dtypes=FC,
         name="numpy.linspace(start, stop, 4)"),
    Case(np.linspace, lambda rng, dt: (arr(rng, dt, (3,)), arr(rng, dt, (2, 1))),
         kwargs={"num": 4, "axis": -1, "endpoint": False}, dtypes=FC),
    Case(np.linspace, lambda rng, dt: (arr(rng, dt, (3,)), scalar(rng, dt)),
         kwargs={"num": 5, "retstep": True}, dtypes=FC),
    Case(np.linspace, lambda rng, dt: (scalar(rng, dt), scalar(rng, dt)), kwargs={"num": 1},
         dtypes=FC, name="numpy.linspace(num=1)"),
]

# logspace (w.r.t. start, stop, base), geomspace (w.r.t. start, stop)
CASES += [
    Case(np.logspace, lambda rng, dt: (scalar(rng, dt, 0.0, 1.0), scalar(rng, dt, 0.0, 1.0)),
         kwargs={"num": 5}, dtypes=FC),
    Case(np.logspace, lambda rng, dt: (arr(rng, dt, (2,), 0.0, 1.0), scalar(rng, dt, 0.0, 1.0),
                                       4, True, positive(rng, dt, (2,), 1.5, 3.0)),
         dtypes=F, name="numpy.logspace(start, stop, 4, True, base)"),
    Case(np.logspace, lambda rng, dt: (arr(rng, dt, (2,), 0.0, 1.0), arr(rng, dt, (3, 1), 0, 1)),
         kwargs={"num": 4, "axis": -1, "endpoint": False}, dtypes=FC),
    Case(np.geomspace, lambda rng, dt: (positive(rng, dt, (), 0.5, 1.0),
                                        positive(rng, dt, (), 2.0, 3.0)), kwargs={"num": 5},
         dtypes=FC),
    Case(np.geomspace, lambda rng, dt: (-positive(rng, dt, (3,), 0.5, 1.0),
                                        -positive(rng, dt, (), 2.0, 3.0)),
         kwargs={"num": 4, "axis": 1}, dtypes=F, name="numpy.geomspace(negative, axis=1)"),
]

# arange: w.r.t. start and step (stop only sets the length)
CASES += [
    Case(np.arange, lambda rng, dt: (dt.type(0.3), dt.type(2.05), dt.type(0.5)), dtypes=F,
         name="numpy.arange(start, stop, step)"),
    Case(np.arange, lambda rng, dt: (dt.type(0.3), dt.type(2.05)), dtypes=F,
         name="numpy.arange(start, stop)"),
    Case(np.arange, lambda rng, dt: (1, 5, no_tangent(2)), dtypes=("float64",),
         name="numpy.arange(ints)"),
]

# full, full_like: w.r.t. the fill value (scalar or broadcast array)
CASES += [
    Case(np.full, lambda rng, dt: ((2, 3), scalar(rng, dt)), dtypes=FC,
         name="numpy.full(shape, scalar)"),
    Case(np.full, lambda rng, dt: ((2, 3), arr(rng, dt, (3,))), dtypes=FC,
         name="numpy.full(shape, row)"),
    Case(np.full_like, lambda rng, dt: (arr(rng, dt, (2, 3)), scalar(rng, dt)), dtypes=FC,
         name="numpy.full_like(a, scalar)"),
    Case(np.full_like, lambda rng, dt: (arr(rng, dt, (2, 3)), arr(rng, dt, (2, 1))),
         dtypes=FC, name="numpy.full_like(a, column)"),
    Case(np.full_like, lambda rng, dt: (arr(rng, dt, (2, 3)), 1.5), kwargs={"dtype": np.float64},
         dtypes=F, name="numpy.full_like(a, python float, dtype=float64)"),
]

# bincount: w.r.t. positional weights
CASES += [
    Case(np.bincount, lambda rng, dt: (integers(rng, (7,), 0, 4), arr(rng, dt, (7,))),
         dtypes=F, name="numpy.bincount(x, weights)"),
    Case(np.bincount, lambda rng, dt: (integers(rng, (7,), 0, 4), arr(rng, dt, (7,))),
         kwargs={"minlength": 6}, dtypes=F, name="numpy.bincount(x, weights, minlength=6)"),
]

del _f, _dt

# cov: m and y (positional) differentiated; rowvar, bias, ddof and the weights are not
_FW = np.array([1, 2, 1, 3, 1])
CASES += [
    Case(np.cov, _a(3, 5), dtypes=FC),
    Case(np.cov, _a(5,), dtypes=FC, name="numpy.cov(vector)"),
    Case(np.cov, _a(5, 3), kwargs={"rowvar": False}, dtypes=FC),
    Case(np.cov, lambda rng, dt: (arr(rng, dt, (3, 5)), arr(rng, dt, (2, 5))), dtypes=FC,
         name="numpy.cov(m, y)"),
    Case(np.cov, lambda rng, dt: (arr(rng, dt, (5,)), arr(rng, dt, (5,))),
         kwargs={"rowvar": False}, dtypes=FC, name="numpy.cov(x, y, rowvar=False)"),
    Case(np.cov, _a(3, 5), kwargs={"bias": True}, dtypes=F),
    Case(np.cov, _a(3, 5), kwargs={"ddof": 2}, dtypes=F),
    Case(np.cov, _a(3, 5), kwargs={"fweights": _FW}, dtypes=F, name="numpy.cov(fweights)"),
    Case(np.cov, _a(3, 5), kwargs={"aweights": np.linspace(0.5, 1.5, 5)}, dtypes=FC,
         name="numpy.cov(aweights)"),
    Case(np.cov, _a(3, 5), kwargs={"aweights": np.linspace(0.5, 1.5, 5), "fweights": _FW,
                                   "ddof": 1}, dtypes=F, name="numpy.cov(aweights, fweights)"),
]

# corrcoef: through cov, then the normalisation by the standard deviations
CASES += [
    Case(np.corrcoef, _a(3, 6), dtypes=FC),
    Case(np.corrcoef, _a(6, 3), kwargs={"rowvar": False}, dtypes=F),
    Case(np.corrcoef, lambda rng, dt: (arr(rng, dt, (6,)), arr(rng, dt, (6,))), dtypes=FC,
         name="numpy.corrcoef(x, y)"),
    Case(np.corrcoef, _a(6,), dtypes=F, name="numpy.corrcoef(one variable)"),
]

# gradient: linear in f; float spacings differentiated, coordinate arrays held fixed
_XS = np.array([0.0, 0.7, 1.5, 2.0, 3.1, 3.5])
CASES += [
    Case(np.gradient, _a(6), dtypes=FC),
    Case(np.gradient, _a(6), kwargs={"edge_order": 2}, dtypes=F),
    Case(np.gradient, lambda rng, dt: (arr(rng, dt, (6,)), dt.type(0.5)), dtypes=F,
         name="numpy.gradient(f, h)"),
    Case(np.gradient, lambda rng, dt: (arr(rng, dt, (6,)), no_tangent(_XS)),
         kwargs={"edge_order": 2}, dtypes=F, name="numpy.gradient(f, coordinates)"),
    Case(np.gradient, _a(4, 5), dtypes=FC, name="numpy.gradient(2-d)"),
    Case(np.gradient, lambda rng, dt: (arr(rng, dt, (4, 5)), dt.type(0.5), dt.type(2.0)),
         kwargs={"edge_order": 2}, dtypes=F, name="numpy.gradient(2-d, hx, hy, edge_order=2)"),
    Case(np.gradient, _a(4, 5), kwargs={"axis": 1}, dtypes=F),
    Case(np.gradient, _a(2, 3), kwargs={"axis": (1, 0)}, dtypes=F),
]
