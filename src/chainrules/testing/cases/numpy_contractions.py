"""Rule cases for NumPy contractions (``chainrules/rules/numpy/contractions.py``).

1-d/2-d/N-d mixes for ``dot``/``inner``/``matmul``, batched and broadcast
``matmul``, many ``einsum`` subscripts (implicit output, ellipsis, traces,
diagonals, outer products, sublist form), ``tensordot`` axes forms, and the
modes of ``convolve``/``correlate``. Query points of ``interp`` stay away from
the knots.
"""

from __future__ import annotations

import numpy as np

from chainrules.testing import Case, arr, integers, no_tangent, scalar

FC = ("float64", "float32", "complex128")
F = ("float64", "float32")


def _ab(sa, sb):
    return lambda rng, dt: (arr(rng, dt, sa), arr(rng, dt, sb))


def _es(subs, *shapes, **kw):
    return Case(np.einsum, lambda rng, dt: (subs, *(arr(rng, dt, s) for s in shapes)),
                kwargs=kw, dtypes=FC,
                name=f"numpy.einsum({subs!r}{', optimize=' + str(kw['optimize']) if kw else ''})")


CASES: list[Case] = []

# dot: 0-d, 1-d, 2-d, N-d mixes
for _sa, _sb in [((), (3,)), ((2, 3), ()), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)),
                 ((3, 4), (4, 2)), ((2, 3, 4), (4,)), ((2, 3, 4), (5, 4, 2)), ((3,), (2, 3, 4))]:
    CASES.append(Case(np.dot, _ab(_sa, _sb), dtypes=FC, name=f"numpy.dot({_sa}, {_sb})"))
CASES += [
    Case(np.dot, lambda rng, dt: (arr(rng, dt, (4, 6))[:, ::2], arr(rng, dt, (4, 3)).T),
         dtypes=FC, name="numpy.dot(views)"),
    Case(np.dot, lambda rng, dt: (arr(rng, dt, (2, 3)).tolist(), arr(rng, dt, (3,))),
         dtypes=("float64",), name="numpy.dot(list, 1-d)"),
    Case(np.dot, _ab((2, 0), (0, 3)), dtypes=FC, name="numpy.dot(empty inner)"),
    Case(np.matmul, _ab((0, 2), (2, 3)), dtypes=FC, name="numpy.matmul(empty output)"),
    Case(np.einsum, lambda rng, dt: ("ij,jk->ik", arr(rng, dt, (2, 0)), arr(rng, dt, (0, 3))),
         dtypes=FC, name="numpy.einsum(empty)"),
    Case(np.dot, lambda rng, dt: (integers(rng, (2, 3), 0, 3), arr(rng, dt, (3,))),
         dtypes=FC, name="numpy.dot(int, 1-d)"),
]

# vdot (conjugates its first argument), inner, outer
CASES += [
    Case(np.vdot, _ab((4,), (4,)), dtypes=FC),
    Case(np.vdot, _ab((2, 3), (3, 2)), dtypes=FC, name="numpy.vdot(2-d)"),
    Case(np.inner, _ab((4,), (4,)), dtypes=FC),
    Case(np.inner, _ab((2, 3), (4, 3)), dtypes=FC, name="numpy.inner(2-d, 2-d)"),
    Case(np.inner, _ab((2, 2, 3), (3,)), dtypes=FC, name="numpy.inner(3-d, 1-d)"),
    Case(np.inner, _ab((), (2, 3)), dtypes=FC, name="numpy.inner(0-d, 2-d)"),
    Case(np.outer, _ab((3,), (4,)), dtypes=FC),
    Case(np.outer, _ab((2, 2), (3,)), dtypes=FC, name="numpy.outer(2-d, 1-d)"),
]

# tensordot
CASES += [
    Case(np.tensordot, _ab((2, 3, 4), (3, 4, 2)), dtypes=FC),
    Case(np.tensordot, _ab((2, 3), (3, 4)), kwargs={"axes": 1}, dtypes=FC),
    Case(np.tensordot, _ab((2, 3), (4, 2)), kwargs={"axes": 0}, dtypes=FC),
    Case(np.tensordot, _ab((2, 3, 4), (4, 2, 5)), kwargs={"axes": ([0, 2], [1, 0])},
         dtypes=FC),
    Case(np.tensordot, _ab((3, 4), (4, 2)), kwargs={"axes": (-1, 0)}, dtypes=FC),
    Case(np.tensordot, lambda rng, dt: (arr(rng, dt, (2, 3)), arr(rng, dt, (3, 2)), ([1], [0])),
         dtypes=FC, name="numpy.tensordot(a, b, axes positional)"),
]

# matmul and the numpy 2 gufuncs
for _sa, _sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)),
                 ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)),
                 ((2, 3, 4), (4,))]:
    CASES.append(Case(np.matmul, _ab(_sa, _sb), dtypes=FC,
                      name=f"numpy.matmul({_sa}, {_sb})"))
CASES += [
    Case(np.matmul, lambda rng, dt: (arr(rng, dt, (3, 4)).T, arr(rng, dt, (6, 3))[::2]),
         dtypes=FC, name="numpy.matmul(views)"),
    Case(np.vecdot, _ab((4,), (4,)), dtypes=FC),
    Case(np.vecdot, _ab((2, 3, 4), (3, 4)), dtypes=FC, name="numpy.vecdot(batched)"),
    Case(np.matvec, _ab((2, 3, 4), (4,)), dtypes=FC),
    Case(np.matvec, _ab((3, 4), (2, 4)), dtypes=FC, name="numpy.matvec(broadcast)"),
    Case(np.vecmat, _ab((3,), (2, 3, 4)), dtypes=FC),
    Case(np.vecmat, _ab((2, 3), (3, 4)), dtypes=FC, name="numpy.vecmat(broadcast)"),
]

# einsum
CASES += [
    _es("ij,jk->ik", (2, 3), (3, 4)),
    _es("ij,jk", (2, 3), (3, 4)),
    _es("ij->ji", (2, 3)),
    _es("ij->", (2, 3)),
    _es("ij->i", (2, 3)),
    _es("i,j->ij", (3,), (2,)),
    _es("i,i", (4,), (4,)),
    _es("ii", (3, 3)),
    _es("ii->i", (3, 3)),
    _es("iij->j", (2, 2, 3)),
    _es("ij,ij->ij", (2, 3), (2, 3)),
    _es("bij,bjk->bik", (2, 2, 3), (2, 3, 2)),
    _es("...ij,...jk->...ik", (2, 2, 3), (3, 4)),
    _es("...ij,...jk", (2, 1, 2, 3), (4, 3, 2)),
    _es("i...->...", (3, 2, 2)),
    _es("ij,jk,kl->il", (2, 3), (3, 2), (2, 3)),
    _es("ij,jk,kl->il", (2, 3), (3, 2), (2, 3), optimize=True),
    _es("ij,jk,kl->il", (2, 3), (3, 2), (2, 3), optimize=["einsum_path", (1, 2), (0, 1)]),
    _es("ij,kl->ijkl", (2, 2), (2, 3)),
    _es("bA,Ac", (2, 3), (3, 2)),
    _es("ijk,ikj->i", (2, 3, 3), (2, 3, 3)),
    _es(",ij->ij", (), (2, 3)),
    _es("i...,i...->...", (3, 1, 2), (3, 4, 1)),
    _es("ab,ab,ab->a", (2, 2), (1, 2), (2, 1)),
    _es("iji->j", (2, 3, 2)),
    _es("ii,i->i", (3, 3), (3,)),
    _es("i,i,i->", (3,), (3,), (3,)),
    Case(np.einsum, lambda rng, dt: (arr(rng, dt, (2, 3)), [0, 1], arr(rng, dt, (3, 4)), [1, 2],
                                     [0, 2]), dtypes=FC, name="numpy.einsum(sublist)"),
    Case(np.einsum, lambda rng, dt: (arr(rng, dt, (2, 3)), [Ellipsis, 1],
                                     arr(rng, dt, (3,)), [1]),
         dtypes=FC, name="numpy.einsum(sublist, ellipsis, implicit)"),
]

# kron, trace, cross
CASES += [
    Case(np.kron, _ab((2, 3), (2, 2)), dtypes=FC),
    Case(np.kron, _ab((3,), (2, 2)), dtypes=FC, name="numpy.kron(1-d, 2-d)"),
    Case(np.kron, _ab((2,), (3,)), dtypes=FC, name="numpy.kron(1-d, 1-d)"),
    Case(np.trace, lambda rng, dt: (arr(rng, dt, (3, 3)),), dtypes=FC),
    Case(np.trace, lambda rng, dt: (arr(rng, dt, (3, 4)),), kwargs={"offset": 1}, dtypes=FC),
    Case(np.trace, lambda rng, dt: (arr(rng, dt, (4, 3)),), kwargs={"offset": -2}, dtypes=FC),
    Case(np.trace, lambda rng, dt: (arr(rng, dt, (2, 3, 3)),),
         kwargs={"axis1": 1, "axis2": 2}, dtypes=FC),
    Case(np.trace, lambda rng, dt: (arr(rng, dt, (3, 2, 3)), 0, -1, 0), dtypes=FC,
         name="numpy.trace(a, 0, -1, 0)"),
    Case(np.cross, _ab((3,), (3,)), dtypes=FC),
    Case(np.cross, _ab((2, 3), (3,)), dtypes=FC, name="numpy.cross(batched, 1-d)"),
    Case(np.cross, _ab((3, 2), (2, 3)), kwargs={"axisa": 0, "axisc": 0}, dtypes=FC),
    Case(np.cross, _ab((3, 2), (3, 2)), kwargs={"axis": 0}, dtypes=FC),
    Case(np.cross, _ab((2, 3, 1), (3, 4)), kwargs={"axisa": 1, "axisb": 0, "axisc": -1},
         dtypes=FC),
]

# convolve, correlate: every mode, both length orders (even and odd differences)
for _f in (np.convolve, np.correlate):
    for _m, _n in [(5, 3), (3, 5), (4, 2), (2, 5), (4, 4)]:
        for _mode in ("full", "same", "valid"):
            CASES.append(Case(_f, _ab((_m,), (_n,)), kwargs={"mode": _mode}, dtypes=FC,
                              name=f"numpy.{_f.__name__}({_m}, {_n}, mode={_mode!r})"))
    CASES.append(Case(_f, _ab((5,), (3,)), dtypes=FC, name=f"numpy.{_f.__name__}(default)"))


# interp: x, xp and fp; left/right positional; period
def _knots(rng, dt, n=5):
    return (np.arange(n) + rng.uniform(-0.2, 0.2, n)).astype(np.dtype(dt).type(0).real.dtype)


def _queries(rng, dt, shape, low=-1, high=5, period=None):
    """Points at least 0.15 from every knot of `_knots` (and from the ends)."""
    real = np.dtype(dt).type(0).real.dtype
    x = rng.integers(low, high, shape) + rng.uniform(0.35, 0.65, shape)
    if period is not None:
        x = x + period * rng.integers(-1, 2, shape)
    return x.astype(real)


CASES += [
    Case(np.interp, lambda rng, dt: (_queries(rng, dt, (6,), 0, 4), _knots(rng, dt),
                                     arr(rng, dt, (5,))), dtypes=FC, name="numpy.interp"),
    Case(np.interp, lambda rng, dt: (_queries(rng, dt, (2, 4)), _knots(rng, dt),
                                     arr(rng, dt, (5,))), dtypes=FC,
         name="numpy.interp(outside)"),
    Case(np.interp, lambda rng, dt: (_queries(rng, dt, (2, 4)), _knots(rng, dt),
                                     arr(rng, dt, (5,)), scalar(rng, dt), scalar(rng, dt)),
         dtypes=FC, name="numpy.interp(x, xp, fp, left, right)"),
    Case(np.interp, lambda rng, dt: (_queries(rng, dt, (6,)), _knots(rng, dt),
                                     arr(rng, dt, (5,))), kwargs={"left": 0.5, "right": -1.0},
         dtypes=F),
    Case(np.interp, lambda rng, dt: (_queries(rng, dt, (6,), 0, 5, period=5.5), _knots(rng, dt),
                                     arr(rng, dt, (5,))), kwargs={"period": 5.5},
         dtypes=FC),
    Case(np.interp, lambda rng, dt: (np.float64(1.37), no_tangent(_knots(rng, dt)),
                                     arr(rng, dt, (5,))), dtypes=("float64",),
         name="numpy.interp(scalar x, fixed xp)"),
]

# polyval
CASES += [
    Case(np.polyval, _ab((4,), (3,)), dtypes=FC),
    Case(np.polyval, _ab((3,), (2, 2)), dtypes=FC, name="numpy.polyval(2-d x)"),
    Case(np.polyval, lambda rng, dt: (arr(rng, dt, (4,)), scalar(rng, dt)), dtypes=FC,
         name="numpy.polyval(scalar x)"),
    Case(np.polyval, _ab((1,), (3,)), dtypes=FC, name="numpy.polyval(constant)"),
]

del _f, _m, _n, _mode, _sa, _sb
