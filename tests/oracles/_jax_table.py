"""Rows and checker for the JAX oracle (the test files pick families of rows).

Each row pairs a NumPy/SciPy/stdlib function with its ``jax.numpy``/``jax.scipy``
counterpart; see ``_harness.py`` for what is compared and the complex
convention.  Rows marked ``xfail(strict=True)`` are confirmed bugs in our rules
(written up in the oracle report); they turn red once fixed.
"""

from __future__ import annotations

import cmath
import math
import operator
import os

import numpy as np
import pytest

jax = pytest.importorskip("jax")
# float64 comparisons need JAX's x64 mode: tests/oracles/conftest.py turns it on for
# each oracle test and back off afterwards (a global switch set at import would leak
# into every later JAX test of the session).
import jax.numpy as jnp  # noqa: E402
import jax.scipy.fft as jsf  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import jax.scipy.signal as jsig  # noqa: E402
import jax.scipy.special as jss  # noqa: E402
import scipy.fft as sf  # noqa: E402
import scipy.linalg as sla  # noqa: E402
import scipy.signal as ss  # noqa: E402
import scipy.special as sc  # noqa: E402

from chainrules import NoTangent, frule, rrule  # noqa: E402

from . import _harness  # noqa: E402
from ._harness import (  # noqa: E402
    HERM,
    REAL,
    SEQ,
    SPD,
    TRI,
    WC,
    C,
    N,
    P,
    R,
    U,
    assert_close,
    build_args,
    default_cot,
    dense,
    diff_positions,
    leaves,
    ours_cot,
    rand_like,
    tangent_leaves,
    tols,
)

params = _harness.params  # the test files build their parameters with it

F8, FC, F4 = ("f8",), ("f8", "c16"), ("f8", "f4")
FC4 = ("f8", "c16", "f4")


def _herm(x: np.ndarray) -> np.ndarray:
    return (x + np.conj(np.swapaxes(x, -1, -2))) / 2


def _sq(u: np.ndarray, u_dot: np.ndarray) -> np.ndarray:
    """d|u|^2 (gauge invariant under column phases): 2 Re(conj(u) u_dot)."""
    return 2 * np.real(np.conj(u) * u_dot)


def _svd_view(ys: list, ts: list) -> list:
    return [_sq(ys[0], ts[0]), np.asarray(ts[1]), _sq(ys[2], ts[2])]


def _eigh_view(ys: list, ts: list) -> list:
    return [np.asarray(ts[0]), _sq(ys[1], ts[1])]


def _gauge_cot(vec_idx: tuple) -> object:
    """Cotangent of the loss sum(w * s) + sum(W * |U|^2) for each vector output."""

    def cot(ys: list, r: np.random.Generator) -> list:
        out = []
        for i, y in enumerate(ys):
            y = np.asarray(y)
            w = r.standard_normal(y.shape)
            out.append(2 * w * y if i in vec_idx else np.asarray(w, dtype=y.dtype))
        return out

    return cot


def _first_cot(ys: list, r: np.random.Generator) -> list:
    return [rand_like(r, np.asarray(ys[0]))] + [None] * (len(ys) - 1)


def _with_zeros(*where: tuple) -> object:
    def build(r, dt):
        x = P(3, 4)(r, dt)
        for w in where:
            x[w] = 0
        return x

    return build


def _with_nans(r, dt):
    x = N(3, 4)(r, dt)
    x[0, 1] = np.nan
    x[2, 3] = np.nan
    return x


def _scalar(builder):
    def build(r, dt):
        v = builder(r, dt)[()]
        return complex(v) if np.iscomplexobj(v) else float(v)

    return build


def _S(lo, hi):
    return _scalar(U(lo, hi))


# ---------------------------------------------------------------- ufuncs
UFUNCS = [
    R("sign", np.sign, jnp.sign, N(5)),
    R("clip", np.clip, jnp.clip, N(3, 4), C(-0.5), C(0.7)),
    R("power_bcast", np.power, jnp.power, P(3, 4), N(4), dtypes=FC),
    R("power_negbase_const_exp", np.power, jnp.power, U(-2, -0.5, 5), C(3.0)),
    R("power_negbase_int_exp", np.power, jnp.power, U(-2, -0.5, 4),
      C(np.array([2.0, 3.0, -1.0, 4.0])), dtypes=FC),
    R("float_power", np.float_power, jnp.float_power, P(5), N(5), dtypes=FC),
    R("add_bcast", np.add, jnp.add, N(3, 4), N(4), dtypes=FC),
    R("subtract_bcast", np.subtract, jnp.subtract, N(3, 1), N(1, 4), dtypes=FC),
    R("multiply_bcast", np.multiply, jnp.multiply, N(3, 1), N(1, 4), dtypes=FC4),
    R("multiply_mixed", np.multiply, jnp.multiply, REAL(N(3, 4)), N(3, 4), dtypes=("c16",)),
    R("true_divide_bcast", np.true_divide, jnp.true_divide, N(3, 4), P(4), dtypes=FC),
    R("op_mul", operator.mul, operator.mul, N(3, 4), N(4), dtypes=FC),
    R("op_truediv", operator.truediv, operator.truediv, N(3, 4), P(3, 1), dtypes=FC),
    R("op_pow", operator.pow, operator.pow, P(3, 4), N(3, 4), dtypes=FC),
    R("op_matmul", operator.matmul, operator.matmul, N(3, 4), N(4, 2), dtypes=FC),
]

# ---------------------------------------------------------------- stdlib scalars
SCALARS = [
    R("math.sin", math.sin, jnp.sin, _S(-2, 2)),
    R("math.log", math.log, jnp.log, _S(0.5, 3)),
    R("math.log_base", math.log, lambda x, b: jnp.log(x) / jnp.log(b), _S(0.5, 3), _S(1.5, 3)),
    R("math.atan2", math.atan2, jnp.arctan2, _S(-2, 2), _S(-2, 2)),
    R("math.hypot", math.hypot, jnp.hypot, _S(-2, 2), _S(-2, 2)),
    R("math.pow", math.pow, jnp.power, _S(0.5, 2), _S(-2, 2)),
    R("math.sqrt", math.sqrt, jnp.sqrt, _S(0.5, 2)),
    R("math.erf", math.erf, jss.erf, _S(-2, 2)),
    R("math.lgamma", math.lgamma, jss.gammaln, _S(0.5, 4)),
    R("math.fabs", math.fabs, jnp.abs, _S(0.5, 2)),
    R("cmath.sqrt", cmath.sqrt, jnp.sqrt, _S(0.5, 2), dtypes=("c16",)),
    R("cmath.exp", cmath.exp, jnp.exp, _S(-1, 1), dtypes=("c16",)),
    R("cmath.log", cmath.log, jnp.log, _S(0.5, 2), dtypes=("c16",)),
    R("cmath.sin", cmath.sin, jnp.sin, _S(-1, 1), dtypes=("c16",)),
    R("cmath.phase", cmath.phase, jnp.angle, _S(0.5, 2), dtypes=("c16",)),
    R("abs_complex", abs, jnp.abs, _S(0.5, 2), dtypes=("c16",)),
    R("op_mul_scalar", operator.mul, operator.mul, _S(-2, 2), _S(-2, 2), dtypes=FC),
    R("op_truediv_scalar", operator.truediv, operator.truediv, _S(-2, 2), _S(0.5, 2),
      dtypes=FC),
    R("op_pow_scalar", operator.pow, operator.pow, _S(0.5, 2), _S(-2, 2), dtypes=FC),
]

# ---------------------------------------------------------------- reductions
REDUCTIONS = [
    R("sum", np.sum, jnp.sum, N(3, 4), dtypes=FC4),
    R("sum_axis", np.sum, jnp.sum, N(2, 3, 4), kw=dict(axis=(0, 2))),
    R("sum_keepdims", np.sum, jnp.sum, N(3, 4), kw=dict(axis=1, keepdims=True), dtypes=FC),
    R("prod", np.prod, jnp.prod, P(3, 4), dtypes=FC),
    R("prod_axis", np.prod, jnp.prod, N(3, 4), kw=dict(axis=1), dtypes=FC),
    R("prod_one_zero", np.prod, jnp.prod, _with_zeros((0, 1))),
    R("prod_one_zero_axis", np.prod, jnp.prod, _with_zeros((0, 1)), kw=dict(axis=1),
      dtypes=FC),
    R("prod_two_zeros_axis", np.prod, jnp.prod, _with_zeros((0, 1), (0, 3), (2, 2)),
      kw=dict(axis=1)),
    R("mean", np.mean, jnp.mean, N(3, 4), kw=dict(axis=0), dtypes=FC4),
    R("var", np.var, jnp.var, N(3, 4), dtypes=FC),
    R("var_ddof_axis", np.var, jnp.var, N(3, 4), kw=dict(axis=1, ddof=1, keepdims=True),
      dtypes=FC),
    R("std", np.std, jnp.std, N(3, 4), kw=dict(axis=0), dtypes=FC4),
    R("std_ddof", np.std, jnp.std, N(3, 4), kw=dict(ddof=1), dtypes=FC),
    R("max", np.max, jnp.max, N(3, 4)),
    R("max_axis", np.max, jnp.max, N(3, 4), kw=dict(axis=1, keepdims=True)),
    R("min_axis", np.min, jnp.min, N(3, 4), kw=dict(axis=0)),
    R("amax", np.amax, jnp.amax, N(3, 4), kw=dict(axis=-1)),
    R("cumsum", np.cumsum, jnp.cumsum, N(3, 4), kw=dict(axis=0), dtypes=FC),
    R("cumsum_flat", np.cumsum, jnp.cumsum, N(3, 4)),
    R("cumprod", np.cumprod, jnp.cumprod, P(3, 4), kw=dict(axis=1), dtypes=FC),
    R("cumprod_zero", np.cumprod, jnp.cumprod, _with_zeros((1, 1)), kw=dict(axis=1)),
    R("average_weights", np.average, jnp.average, N(3, 4), C(0), P(3)),
    R("average_weights_1", np.average, jnp.average, N(3, 4), C(1), P(4)),
    R("ptp", np.ptp, jnp.ptp, N(3, 4), kw=dict(axis=1)),
    R("cov", np.cov, jnp.cov, N(3, 5)),
    R("cov_y_rowvar", np.cov, jnp.cov, N(5, 2), N(5, 1), kw=dict(rowvar=False)),
    R("cov_aweights", np.cov, jnp.cov, N(3, 5),
      kw=dict(aweights=np.linspace(0.5, 1.5, 5), ddof=1)),
    R("corrcoef", np.corrcoef, jnp.corrcoef, N(3, 5)),
    R("corrcoef_y", np.corrcoef, jnp.corrcoef, N(5), N(5)),
    R("gradient", np.gradient, jnp.gradient, N(6)),
    R("gradient_2d_axis", np.gradient, jnp.gradient, N(4, 5), kw=dict(axis=1)),
    R("nansum", np.nansum, jnp.nansum, _with_nans, kw=dict(axis=1)),
    R("nanmean", np.nanmean, jnp.nanmean, _with_nans, kw=dict(axis=0)),
    R("median", np.median, jnp.median, N(3, 5), kw=dict(axis=1)),
    R("trapezoid", np.trapezoid, jnp.trapezoid, N(3, 5), kw=dict(axis=1)),
    R("diff", np.diff, jnp.diff, N(3, 5), kw=dict(axis=1, n=2)),
    R("linalg.norm", np.linalg.norm, jnp.linalg.norm, N(5), dtypes=FC4),
    R("norm_1", np.linalg.norm, jnp.linalg.norm, N(5), C(1), dtypes=FC),
    R("norm_inf", np.linalg.norm, jnp.linalg.norm, N(5), C(np.inf), dtypes=FC),
    R("norm_-inf", np.linalg.norm, jnp.linalg.norm, N(5), C(-np.inf)),
    R("norm_3", np.linalg.norm, jnp.linalg.norm, N(5), C(3), dtypes=FC),
    R("norm_axis", np.linalg.norm, jnp.linalg.norm, N(3, 4), kw=dict(axis=1), dtypes=FC),
    R("norm_fro", np.linalg.norm, jnp.linalg.norm, N(3, 4), C("fro"), dtypes=FC),
    R("norm_nuc", np.linalg.norm, jnp.linalg.norm, N(3, 4), C("nuc"), dtypes=FC),
    R("norm_2mat", np.linalg.norm, jnp.linalg.norm, N(3, 4), C(2), dtypes=FC),
    R("norm_-2mat", np.linalg.norm, jnp.linalg.norm, N(3, 4), C(-2)),
    R("norm_1mat", np.linalg.norm, jnp.linalg.norm, N(3, 4), C(1)),
    R("norm_infmat", np.linalg.norm, jnp.linalg.norm, N(3, 4), C(np.inf), dtypes=FC),
]

# ---------------------------------------------------------------- contractions
CONTRACTIONS = [
    R("dot_11", np.dot, jnp.dot, N(4), N(4), dtypes=FC4),
    R("dot_22", np.dot, jnp.dot, N(3, 4), N(4, 2), dtypes=FC),
    R("dot_21", np.dot, jnp.dot, N(3, 4), N(4), dtypes=FC),
    R("dot_32", np.dot, jnp.dot, N(2, 3, 4), N(4, 2)),
    R("vdot", np.vdot, jnp.vdot, N(4), N(4), dtypes=FC),
    R("vdot_2d", np.vdot, jnp.vdot, N(2, 3), N(2, 3), dtypes=FC),
    R("inner", np.inner, jnp.inner, N(3, 4), N(2, 4), dtypes=FC),
    R("outer", np.outer, jnp.outer, N(3), N(4), dtypes=FC),
    R("tensordot_2", np.tensordot, jnp.tensordot, N(2, 3, 4), N(3, 4, 2), dtypes=FC),
    R("tensordot_axes", np.tensordot, jnp.tensordot, N(2, 3, 4), N(4, 2),
      kw=dict(axes=([2, 0], [0, 1]))),
    R("einsum_ij,jk", np.einsum, jnp.einsum, C("ij,jk->ik"), N(3, 4), N(4, 2), dtypes=FC),
    R("einsum_ii", np.einsum, jnp.einsum, C("ii->i"), N(3, 3)),
    R("einsum_trace", np.einsum, jnp.einsum, C("ii"), N(3, 3), dtypes=FC),
    R("einsum_batch", np.einsum, jnp.einsum, C("bij,bjk->bik"), N(2, 3, 4), N(2, 4, 2),
      dtypes=FC),
    R("einsum_ij,ij->i", np.einsum, jnp.einsum, C("ij,ij->i"), N(3, 4), N(3, 4), dtypes=FC),
    R("einsum_3op", np.einsum, jnp.einsum, C("ij,jk,k->i"), N(3, 4), N(4, 2), N(2),
      dtypes=FC),
    R("einsum_ellipsis", np.einsum, jnp.einsum, C("...ij,...j->...i"), N(2, 3, 4), N(2, 4)),
    R("einsum_outer_sum", np.einsum, jnp.einsum, C("i,j->"), N(3), N(4)),
    R("einsum_repeated_out", np.einsum, jnp.einsum, C("iji->j"), N(3, 2, 3)),
    R("matmul_11", np.matmul, jnp.matmul, N(4), N(4), dtypes=FC),
    R("matmul_12", np.matmul, jnp.matmul, N(3), N(3, 4), dtypes=FC),
    R("matmul_21", np.matmul, jnp.matmul, N(3, 4), N(4), dtypes=FC),
    R("matmul_batched_bcast", np.matmul, jnp.matmul, N(2, 3, 4), N(4, 2), dtypes=FC4),
    R("matmul_batched_bcast2", np.matmul, jnp.matmul, N(2, 1, 3, 4), N(3, 4, 2)),
    R("trace", np.trace, jnp.trace, N(3, 3), dtypes=FC),
    R("trace_offset_axes", np.trace, jnp.trace, N(3, 4, 3),
      kw=dict(offset=1, axis1=0, axis2=2)),
    R("kron", np.kron, jnp.kron, N(2, 3), N(3, 2), dtypes=FC),
    R("cross", np.cross, jnp.cross, N(3), N(3), dtypes=FC),
    R("cross_batched", np.cross, jnp.cross, N(4, 3), N(3)),
    R("cross_2d", np.cross, jnp.cross, N(4, 3), N(4, 3), kw=dict(axis=1)),
    R("convolve_full", np.convolve, jnp.convolve, N(5), N(3), dtypes=FC),
    R("convolve_same", np.convolve, jnp.convolve, N(5), N(3), C("same"), dtypes=FC),
    R("convolve_valid", np.convolve, jnp.convolve, N(5), N(3), C("valid")),
    R("convolve_same_short_first", np.convolve, jnp.convolve, N(3), N(6), C("same")),
    R("correlate_valid", np.correlate, jnp.correlate, N(5), N(3), dtypes=FC),
    R("correlate_full", np.correlate, jnp.correlate, N(5), N(3), C("full"), dtypes=FC),
    R("correlate_same", np.correlate, jnp.correlate, N(6), N(3), C("same"), dtypes=FC),
    R("polyval", np.polyval, jnp.polyval, N(4), N(5), dtypes=FC),
    R("interp", np.interp, jnp.interp, U(0.05, 0.95, 7), C(np.linspace(0, 1, 6)), N(6)),
    R("linalg.multi_dot", np.linalg.multi_dot, jnp.linalg.multi_dot,
      SEQ(N(3, 4), N(4, 5), N(5, 2)), dtypes=FC),
]

# ---------------------------------------------------------------- shape / indexing
_idx = np.array([[0, 2, 2], [1, 0, 3], [3, 3, 1]])
_mask = np.array([[True, False, True, True], [False, False, True, False],
                  [True, True, False, False]])
SHAPE = [
    R("reshape", np.reshape, jnp.reshape, N(3, 4), C((2, 6)), dtypes=FC),
    R("transpose", np.transpose, jnp.transpose, N(2, 3, 4), C((1, 2, 0)), dtypes=FC),
    R("moveaxis", np.moveaxis, jnp.moveaxis, N(2, 3, 4), C(0), C(-1)),
    R("swapaxes", np.swapaxes, jnp.swapaxes, N(2, 3, 4), C(0), C(2)),
    R("squeeze", np.squeeze, jnp.squeeze, N(3, 1, 4)),
    R("expand_dims", np.expand_dims, jnp.expand_dims, N(3, 4), C(1)),
    R("broadcast_to", np.broadcast_to, jnp.broadcast_to, N(3, 1), C((2, 3, 4)), dtypes=FC),
    R("ravel", np.ravel, jnp.ravel, N(3, 4)),
    R("concatenate", np.concatenate, jnp.concatenate, SEQ(N(2, 4), N(3, 4)), dtypes=FC),
    R("concatenate_axis1", np.concatenate, jnp.concatenate, SEQ(N(3, 2), N(3, 4)), C(1)),
    R("stack", np.stack, jnp.stack, SEQ(N(3), N(3), N(3)), kw=dict(axis=1), dtypes=FC),
    R("hstack", np.hstack, jnp.hstack, SEQ(N(3), N(2))),
    R("vstack", np.vstack, jnp.vstack, SEQ(N(3), N(2, 3))),
    R("split", np.split, jnp.split, N(6, 2), C(3), dtypes=FC),
    R("split_idx", np.split, jnp.split, N(2, 7), C([2, 5]), kw=dict(axis=1)),
    R("array_split", np.array_split, jnp.array_split, N(7), C(3)),
    R("tile", np.tile, jnp.tile, N(2, 3), C((2, 2)), dtypes=FC),
    R("tile_more_dims", np.tile, jnp.tile, N(3), C((2, 1, 2))),
    R("repeat", np.repeat, jnp.repeat, N(2, 3), C(2), kw=dict(axis=1), dtypes=FC),
    R("repeat_array", np.repeat, jnp.repeat, N(3), C(np.array([1, 0, 3]))),
    R("repeat_flat", np.repeat, jnp.repeat, N(2, 2), C(2)),
    R("pad_constant", np.pad, jnp.pad, N(3, 4), C(((1, 2), (0, 1))), dtypes=FC),
    R("pad_reflect", np.pad, jnp.pad, N(4, 5), C(((1, 2), (2, 1))), C("reflect")),
    R("pad_symmetric", np.pad, jnp.pad, N(4, 5), C(2), C("symmetric")),
    R("pad_edge", np.pad, jnp.pad, N(4, 5), C(((1, 2), (2, 1))), C("edge")),
    R("pad_wrap", np.pad, jnp.pad, N(4, 5), C(((1, 2), (2, 1))), C("wrap")),
    R("roll", np.roll, jnp.roll, N(3, 4), C(2), kw=dict(axis=1), dtypes=FC),
    R("roll_flat", np.roll, jnp.roll, N(3, 4), C(-5)),
    R("roll_multi", np.roll, jnp.roll, N(3, 4), C((1, 2)), C((0, 1))),
    R("flip", np.flip, jnp.flip, N(3, 4), kw=dict(axis=0)),
    R("flip_all", np.flip, jnp.flip, N(3, 4)),
    R("diag_1to2", np.diag, jnp.diag, N(3), C(1), dtypes=FC),
    R("diag_2to1", np.diag, jnp.diag, N(3, 4), C(-1)),
    R("diagonal", np.diagonal, jnp.diagonal, N(2, 3, 4), kw=dict(offset=1, axis1=1, axis2=2)),
    R("triu", np.triu, jnp.triu, N(4, 4), C(1), dtypes=FC),
    R("tril", np.tril, jnp.tril, N(2, 3, 4), C(-1)),
    R("take", np.take, jnp.take, N(3, 4), C(np.array([2, 0, 2, 3])), kw=dict(axis=1),
      dtypes=FC),
    R("take_flat", np.take, jnp.take, N(3, 4), C(np.array([[1, 11], [1, 5]]))),
    R("take_along_axis", np.take_along_axis, jnp.take_along_axis, N(3, 4), C(_idx), C(1)),
    R("where", np.where, jnp.where, C(_mask), N(3, 4), N(3, 4), dtypes=FC),
    R("where_bcast", np.where, jnp.where, C(_mask), N(3, 4), N(4)),
    R("sort", np.sort, jnp.sort, N(3, 4), kw=dict(axis=1)),
    R("sort_axis0", np.sort, jnp.sort, N(4, 3), kw=dict(axis=0)),
    R("getitem_fancy_repeat", operator.getitem, operator.getitem, N(4, 3),
      C(np.array([0, 2, 2, 3, 0])), dtypes=FC),
    R("getitem_bool", operator.getitem, operator.getitem, N(3, 4), C(_mask), dtypes=FC),
    R("getitem_slices", operator.getitem, operator.getitem, N(4, 5),
      C((slice(None, None, -1), slice(1, 4))), dtypes=FC),
    R("getitem_int_newaxis", operator.getitem, operator.getitem, N(4, 5),
      C((1, None, slice(None), ))),
    R("getitem_mixed", operator.getitem, operator.getitem, N(3, 4, 5),
      C((slice(None), np.array([1, 1, 3]), np.array([0, 4, 4])))),
    R("getitem_2d_fancy", operator.getitem, operator.getitem, N(3, 4),
      C((np.array([[0, 0], [2, 1]]), np.array([[1, 1], [3, 0]])))),
    R("getitem_ellipsis", operator.getitem, operator.getitem, N(2, 3, 4),
      C((Ellipsis, 1))),
]

# ---------------------------------------------------------------- linalg
LINALG = [
    R("inv", np.linalg.inv, jnp.linalg.inv, WC(3), dtypes=FC4),
    R("inv_batched", np.linalg.inv, jnp.linalg.inv, WC(3, (2,)), dtypes=FC),
    R("solve_vec", np.linalg.solve, jnp.linalg.solve, WC(3), N(3), dtypes=FC),
    R("solve_mat", np.linalg.solve, jnp.linalg.solve, WC(3), N(3, 2), dtypes=FC4),
    R("solve_batched", np.linalg.solve, jnp.linalg.solve, WC(3, (2,)), N(2, 3, 2)),
    R("det", np.linalg.det, jnp.linalg.det, WC(3), dtypes=FC4),
    R("det_batched", np.linalg.det, jnp.linalg.det, WC(3, (2,)), dtypes=FC),
    R("slogdet", np.linalg.slogdet, jnp.linalg.slogdet, WC(3), dtypes=FC),
    R("slogdet_neg", np.linalg.slogdet, jnp.linalg.slogdet,
      lambda r, dt: -WC(3)(r, dt)),
    R("cholesky", np.linalg.cholesky, jnp.linalg.cholesky, SPD(3), herm=True, dtypes=FC4),
    R("qr", np.linalg.qr, jnp.linalg.qr, N(3, 3), dtypes=FC),
    R("qr_tall", np.linalg.qr, jnp.linalg.qr, N(5, 3), dtypes=FC),
    R("qr_wide", np.linalg.qr, jnp.linalg.qr, N(3, 5)),
    R("qr_r", np.linalg.qr, jnp.linalg.qr, N(5, 3), kw=dict(mode="r")),
    R("svd", np.linalg.svd, jnp.linalg.svd, N(4, 3), kw=dict(full_matrices=False),
      cot=_gauge_cot((0, 2)), view=_svd_view, dtypes=FC),
    R("svd_wide", np.linalg.svd, jnp.linalg.svd, N(3, 4), kw=dict(full_matrices=False),
      cot=_gauge_cot((0, 2)), view=_svd_view, dtypes=FC),
    R("svd_vals", np.linalg.svd, jnp.linalg.svd, N(4, 3), kw=dict(compute_uv=False),
      dtypes=FC),
    R("svdvals", np.linalg.svdvals, jnp.linalg.svdvals, N(3, 4), dtypes=FC),
    R("eigh", np.linalg.eigh, jnp.linalg.eigh, HERM(4), cot=_gauge_cot((1,)),
      view=_eigh_view, herm=True, dtypes=FC),
    R("eigvalsh", np.linalg.eigvalsh, jnp.linalg.eigvalsh, HERM(4), herm=True, dtypes=FC4),
    R("eigvals", np.linalg.eigvals, jnp.linalg.eigvals, N(4, 4), modes="v"),
    R("pinv", np.linalg.pinv, jnp.linalg.pinv, N(4, 3), dtypes=FC),
    R("pinv_wide", np.linalg.pinv, jnp.linalg.pinv, N(2, 4)),
    R("lstsq", np.linalg.lstsq, jnp.linalg.lstsq, N(5, 3), N(5), cot=_first_cot,
      view=lambda ys, ts: [ts[0]], dtypes=FC),
    R("lstsq_mat", np.linalg.lstsq, jnp.linalg.lstsq, N(5, 3), N(5, 2), cot=_first_cot,
      view=lambda ys, ts: [ts[0]]),
    R("matrix_power_3", np.linalg.matrix_power, jnp.linalg.matrix_power, N(3, 3), C(3),
      dtypes=FC),
    R("matrix_power_-2", np.linalg.matrix_power, jnp.linalg.matrix_power, WC(3), C(-2)),
    R("matrix_power_0", np.linalg.matrix_power, jnp.linalg.matrix_power, WC(3), C(0)),
    R("sla.expm", sla.expm, jsl.expm, N(3, 3, scale=0.5), dtypes=FC),
    R("sla.solve_triangular_lower", sla.solve_triangular, jsl.solve_triangular,
      TRI(3, True), N(3, 2), kw=dict(lower=True), dtypes=FC),
    R("sla.solve_triangular_upper_T", sla.solve_triangular, jsl.solve_triangular,
      TRI(3, False), N(3), kw=dict(trans="T"), dtypes=FC),
    R("sla.solve_triangular_C", sla.solve_triangular, jsl.solve_triangular,
      TRI(3, False), N(3, 2), kw=dict(trans="C"), dtypes=("c16",)),
    R("sla.solve_triangular_unit", sla.solve_triangular, jsl.solve_triangular,
      TRI(3, True), N(3), kw=dict(lower=True, unit_diagonal=True)),
    R("sla.cholesky", sla.cholesky, jsl.cholesky, SPD(3), kw=dict(lower=True), herm=True,
      dtypes=FC),
    R("sla.cholesky_upper", sla.cholesky, jsl.cholesky, SPD(3), herm=True, dtypes=FC),
    R("sla.det", sla.det, jsl.det, WC(3), dtypes=FC),
    R("sla.inv", sla.inv, jsl.inv, WC(3), dtypes=FC),
    R("sla.solve", sla.solve, jsl.solve, WC(3), N(3, 2), dtypes=FC),
    R("sla.eigh_vals", sla.eigh, jsl.eigh, HERM(4), kw=dict(eigvals_only=True),
      herm=True, dtypes=FC),
    R("sla.eigh", sla.eigh, jsl.eigh, HERM(4), cot=_gauge_cot((1,)), view=_eigh_view,
      herm=True, dtypes=FC),
]

# ---------------------------------------------------------------- fft
FFT = [
    R("fft", np.fft.fft, jnp.fft.fft, N(6), dtypes=FC4),
    R("fft_n_pad", np.fft.fft, jnp.fft.fft, N(5), C(8), dtypes=FC),
    R("fft_n_trunc_axis0", np.fft.fft, jnp.fft.fft, N(6, 3), C(4), C(0), dtypes=FC),
    R("fft_ortho", np.fft.fft, jnp.fft.fft, N(6), kw=dict(norm="ortho"), dtypes=FC),
    R("fft_forward", np.fft.fft, jnp.fft.fft, N(6), kw=dict(norm="forward"), dtypes=FC),
    R("ifft", np.fft.ifft, jnp.fft.ifft, N(6), dtypes=FC),
    R("ifft_ortho", np.fft.ifft, jnp.fft.ifft, N(5), kw=dict(norm="ortho"), dtypes=FC),
    R("rfft", np.fft.rfft, jnp.fft.rfft, N(6), dtypes=F4),
    R("rfft_odd", np.fft.rfft, jnp.fft.rfft, N(7)),
    R("rfft_n", np.fft.rfft, jnp.fft.rfft, N(6), C(9)),
    R("rfft_ortho", np.fft.rfft, jnp.fft.rfft, N(6), kw=dict(norm="ortho")),
    R("irfft", np.fft.irfft, jnp.fft.irfft, N(4), dtypes=("c16",)),
    R("irfft_n_odd", np.fft.irfft, jnp.fft.irfft, N(4), C(7), dtypes=("c16",)),
    R("irfft_n_even_pad", np.fft.irfft, jnp.fft.irfft, N(4), C(10), dtypes=("c16",)),
    R("irfft_n_trunc", np.fft.irfft, jnp.fft.irfft, N(6), C(6), dtypes=("c16",)),
    R("irfft_forward", np.fft.irfft, jnp.fft.irfft, N(4), kw=dict(norm="forward"),
      dtypes=("c16",)),
    R("fft2", np.fft.fft2, jnp.fft.fft2, N(3, 4), dtypes=FC),
    R("ifft2", np.fft.ifft2, jnp.fft.ifft2, N(3, 4), kw=dict(norm="ortho"), dtypes=FC),
    R("fftn_axes", np.fft.fftn, jnp.fft.fftn, N(2, 3, 4), kw=dict(axes=(0, 2)), dtypes=FC),
    R("rfft2", np.fft.rfft2, jnp.fft.rfft2, N(4, 6)),
    R("irfft2", np.fft.irfft2, jnp.fft.irfft2, N(4, 3), dtypes=("c16",)),
    R("irfftn_s", np.fft.irfftn, jnp.fft.irfftn, N(4, 3), C((4, 5)), C((0, 1)),
      dtypes=("c16",)),
    R("hfft", np.fft.hfft, jnp.fft.hfft, N(4), dtypes=("c16",)),
    R("ihfft", np.fft.ihfft, jnp.fft.ihfft, N(6)),
    R("fftshift", np.fft.fftshift, jnp.fft.fftshift, N(3, 5), dtypes=FC),
    R("ifftshift", np.fft.ifftshift, jnp.fft.ifftshift, N(5), dtypes=FC),
]

# ---------------------------------------------------------------- scipy.special
SPECIAL = [
    R("digamma", sc.digamma, jss.digamma, P(5)),
    R("erf", sc.erf, jss.erf, N(5), dtypes=F4),
    R("erfc", sc.erfc, jss.erfc, N(5)),
    R("ndtr", sc.ndtr, jss.ndtr, N(5)),
    R("log_ndtr", sc.log_ndtr, jss.log_ndtr, N(5)),
    R("polygamma", sc.polygamma, jss.polygamma, C(np.array([1, 2, 1])), P(3)),
    R("gammaincc_x", sc.gammaincc, jss.gammaincc, C(np.array([0.7, 1.5, 3.0])), P(3)),
    R("exp1", sc.exp1, jss.exp1, P(5)),
    R("expi", sc.expi, jss.expi, P(5)),
    R("logsumexp", sc.logsumexp, jss.logsumexp, N(3, 4), dtypes=F4),
    R("logsumexp_axis", sc.logsumexp, jss.logsumexp, N(3, 4), kw=dict(axis=1, keepdims=True)),
    R("logsumexp_b", sc.logsumexp, jss.logsumexp, N(3, 4), C(1), P(3, 4)),
    R("logsumexp_b_const", sc.logsumexp, jss.logsumexp, N(3, 4), kw=dict(axis=0),
      okw=None),
    R("softmax", sc.softmax, jss.softmax, N(3, 4), kw=dict(axis=1), dtypes=F4),
    R("softmax_all", sc.softmax, lambda x: jss.softmax(x, axis=None), N(3, 4)),
    R("log_softmax", sc.log_softmax, jss.log_softmax, N(3, 4), kw=dict(axis=0)),
]


# ---------------------------------------------------------------- harder variants
_wmask = np.array([[True, False, True, True], [False, True, True, False],
                   [True, True, False, True]])
EXTRA = [
    R("sum_where", np.sum, jnp.sum, N(3, 4), kw=dict(axis=1, where=_wmask), dtypes=FC),
    R("mean_where", np.mean, jnp.mean, N(3, 4), kw=dict(axis=1, where=_wmask)),
    R("var_where", np.var, jnp.var, N(3, 4), kw=dict(axis=1, where=_wmask)),
    R("prod_where", np.prod, jnp.prod, P(3, 4), kw=dict(axis=0, where=_wmask)),
    R("max_where_initial", np.max, jnp.max, N(3, 4),
      kw=dict(axis=1, where=_wmask, initial=-5.0)),
    R("sum_dtype", np.sum, jnp.sum, N(3, 4), kw=dict(axis=0, dtype=np.float64), dtypes=("f4",)),
    R("mean_dtype_c", np.mean, jnp.mean, N(3, 4), kw=dict(dtype=np.complex128),
      dtypes=("f8",)),
    R("average_returned", np.average, jnp.average, N(3, 4), C(1), P(4),
      kw=dict(returned=True)),
    R("average_noweights", np.average, jnp.average, N(3, 4), C(0), dtypes=FC),
    R("std_axis_tuple", np.std, jnp.std, N(2, 3, 4), kw=dict(axis=(0, 2), ddof=1),
      dtypes=FC),
    R("cumsum_c_axis1", np.cumsum, jnp.cumsum, N(3, 4), C(1), dtypes=("c16",)),
    R("cumprod_c_zero", np.cumprod, jnp.cumprod, _with_zeros((1, 1)), C(1), dtypes=("c16",)),
    R("nanmax", np.nanmax, jnp.nanmax, _with_nans, kw=dict(axis=1)),
    R("nanprod", np.nanprod, jnp.nanprod, _with_nans, kw=dict(axis=0)),
    R("nanstd", np.nanstd, jnp.nanstd, _with_nans, kw=dict(axis=1)),
    R("quantile", np.quantile, jnp.quantile, N(3, 5), C(0.3), kw=dict(axis=1)),
    R("percentile", np.percentile, jnp.percentile, N(7), C(np.array([10.0, 75.0]))),
    R("logaddexp_reduce", np.logaddexp.reduce, lambda x, axis: jss.logsumexp(x, axis=axis),
      N(3, 4), kw=dict(axis=1)),
    R("add_reduce", np.add.reduce, lambda x, axis: jnp.sum(x, axis=axis), N(3, 4),
      kw=dict(axis=0)),
    R("multiply_accumulate", np.multiply.accumulate, lambda x, axis: jnp.cumprod(x, axis=axis),
      P(3, 4), kw=dict(axis=1)),
    R("norm_-1vec", np.linalg.norm, jnp.linalg.norm, N(5), C(-1)),
    R("norm_0.5vec", np.linalg.norm, jnp.linalg.norm, N(5), C(0.5)),
    R("norm_-2vec", np.linalg.norm, jnp.linalg.norm, N(5), C(-2)),
    R("norm_0vec", np.linalg.norm, jnp.linalg.norm, N(5), C(0)),
    R("norm_nuc_batched", np.linalg.norm, jnp.linalg.norm, N(2, 3, 4), C("nuc"), C((1, 2)),
      dtypes=FC),
    R("norm_2_batched_keep", np.linalg.norm, jnp.linalg.norm, N(2, 3, 4), C(2), C((2, 1)),
      C(True)),
    R("norm_fro_axes", np.linalg.norm, jnp.linalg.norm, N(2, 3, 4), C("fro"), C((0, 2))),
    R("norm_-infmat", np.linalg.norm, jnp.linalg.norm, N(3, 4), C(-np.inf)),
    R("norm_-1mat", np.linalg.norm, jnp.linalg.norm, N(3, 4), C(-1), dtypes=FC),
    R("vector_norm", np.linalg.vector_norm, jnp.linalg.vector_norm, N(3, 4),
      kw=dict(axis=1, ord=3), dtypes=FC),
    R("matrix_norm", np.linalg.matrix_norm, jnp.linalg.matrix_norm, N(2, 3, 4),
      kw=dict(ord="nuc"), dtypes=FC),
    R("tensordot_0", np.tensordot, jnp.tensordot, N(2, 3), N(3), C(0)),
    R("tensordot_1", np.tensordot, jnp.tensordot, N(2, 3), N(3, 2), C(1), dtypes=FC),
    R("einsum_ii->_c", np.einsum, jnp.einsum, C("ii->"), N(3, 3), dtypes=("c16",)),
    R("einsum_bcast", np.einsum, jnp.einsum, C("ij,j"), N(3, 4), N(4), dtypes=FC),
    R("einsum_optimize", np.einsum, jnp.einsum, C("ij,jk,kl->il"), N(2, 3), N(3, 4), N(4, 2),
      kw=dict(optimize=True)),
    R("einsum_implicit", np.einsum, jnp.einsum, C("ij,kj"), N(2, 3), N(4, 3)),
    R("cross_axisab", np.cross, jnp.cross, N(3, 2), N(2, 3), kw=dict(axisa=0, axisb=1)),
    R("cross_2vec", np.cross, jnp.cross, N(4, 3), N(4, 3), dtypes=("c16",)),
    R("convolve_valid_short_first", np.convolve, jnp.convolve, N(3), N(6), C("valid"),
      dtypes=FC),
    R("correlate_valid_short_first", np.correlate, jnp.correlate, N(3), N(6), C("valid"),
      dtypes=FC),
    R("correlate_same_even", np.correlate, jnp.correlate, N(6), N(4), C("same"), dtypes=FC),
    R("convolve_same_even", np.convolve, jnp.convolve, N(6), N(4), C("same"), dtypes=FC),
    R("polyval_c", np.polyval, jnp.polyval, N(3), N(4), dtypes=("c16",)),
    R("interp_lr", np.interp, jnp.interp, U(-0.5, 1.5, 8), C(np.linspace(0, 1, 6)), N(6),
      C(-2.0), C(3.0)),
    R("interp_cfp", np.interp, jnp.interp, REAL(U(0.05, 0.95, 7)), C(np.linspace(0, 1, 6)),
      N(6), dtypes=("c16",)),
    R("interp_period", np.interp, jnp.interp, U(-3, 3, 7), C(np.linspace(0, 1, 6)), N(6),
      kw=dict(period=1.2)),
    R("vecdot", np.vecdot, jnp.vecdot, N(3, 4), N(4), dtypes=FC),
    R("matvec", np.matvec, jnp.matvec, N(2, 3, 4), N(4), dtypes=FC),
    R("vecmat", np.vecmat, jnp.vecmat, N(3), N(2, 3, 4), dtypes=FC),
    R("linalg.outer", np.linalg.outer, jnp.linalg.outer, N(3), N(2), dtypes=FC),
    R("linalg.matmul", np.linalg.matmul, jnp.linalg.matmul, N(3, 4), N(4), dtypes=FC),
    R("linalg.tensordot", np.linalg.tensordot, jnp.linalg.tensordot, N(2, 3), N(3, 2),
      kw=dict(axes=1)),
    R("linalg.cross", np.linalg.cross, jnp.linalg.cross, N(2, 3), N(2, 3)),
    R("linalg.trace", np.linalg.trace, jnp.linalg.trace, N(2, 3, 3), kw=dict(offset=1)),
    R("linalg.diagonal", np.linalg.diagonal, jnp.linalg.diagonal, N(2, 3, 4)),
    R("linalg.vecdot", np.linalg.vecdot, jnp.linalg.vecdot, N(2, 3), N(2, 3), dtypes=FC),
    R("getitem_neg_fancy", operator.getitem, operator.getitem, N(4, 3),
      C(np.array([-1, 0, -1, -4]))),
    R("getitem_list", operator.getitem, lambda x, i: x[np.asarray(i)], N(4, 3), C([0, 2, 2])),
    R("getitem_adv_separated", operator.getitem, operator.getitem, N(3, 4, 5),
      C((np.array([0, 2, 2]), slice(1, 3), np.array([4, 0, 4]))), dtypes=FC),
    R("getitem_bool_rows", operator.getitem, operator.getitem, N(3, 4),
      C(np.array([True, False, True]))),
    R("getitem_bool_axis1", operator.getitem, operator.getitem, N(3, 4),
      C((slice(None), np.array([True, False, True, True])))),
    R("getitem_scalar", operator.getitem, operator.getitem, N(3, 4), C((2, -1)), dtypes=FC),
    R("getitem_neg_step", operator.getitem, operator.getitem, N(7), C(slice(6, 0, -2))),
    R("take_wrap", np.take, jnp.take, N(5), C(np.array([7, -8, 2, 2])),
      kw=dict(mode="wrap")),
    R("take_clip", np.take, jnp.take, N(5), C(np.array([7, -8, 2, 2])),
      kw=dict(mode="clip")),
    R("take_neg", np.take, jnp.take, N(3, 5), C(np.array([-1, -1, 0])), kw=dict(axis=1)),
    R("take_along_axis_none", np.take_along_axis, jnp.take_along_axis, N(3, 4),
      C(np.array([11, 0, 0, 5])), C(None)),
    R("take_along_axis_neg", np.take_along_axis, jnp.take_along_axis, N(3, 4),
      C(np.array([[-1], [0], [-4]])), C(1)),
    R("repeat_none_array", np.repeat, jnp.repeat, N(2, 2), C(np.array([1, 0, 2, 3]))),
    R("pad_constant_value", np.pad, jnp.pad, N(3, 4), C(1), kw=dict(constant_values=2.0)),
    R("pad_linear_ramp", np.pad, jnp.pad, N(3, 4), C(2), C("linear_ramp")),
    R("pad_maximum", np.pad, jnp.pad, N(3, 4), C(1), C("maximum")),
    R("pad_mean", np.pad, jnp.pad, N(3, 4), C(1), C("mean")),
    R("pad_reflect_odd", np.pad, jnp.pad, N(5), C((3, 2)), C("reflect"),
      kw=dict(reflect_type="odd")),
    R("pad_reflect_wide", np.pad, jnp.pad, N(3), C((5, 4)), C("reflect")),
    R("pad_wrap_wide", np.pad, jnp.pad, N(3), C((5, 4)), C("wrap")),
    R("pad_symmetric_wide", np.pad, jnp.pad, N(3), C((5, 4)), C("symmetric")),
    R("concatenate_none", np.concatenate, jnp.concatenate, SEQ(N(2, 2), N(3)), C(None)),
    R("stack_neg", np.stack, jnp.stack, SEQ(N(2, 3), N(2, 3)), C(-1)),
    R("column_stack", np.column_stack, jnp.column_stack, SEQ(N(3), N(3, 2))),
    R("dstack", np.dstack, jnp.dstack, SEQ(N(2, 3), N(2, 3))),
    R("block", np.block, jnp.block, SEQ(N(2, 2), N(2, 3))),
    R("polyadd", np.polyadd, jnp.polyadd, N(3), N(5)),
    R("polymul", np.polymul, jnp.polymul, N(3), N(2)),
    R("polyder_2", np.polyder, jnp.polyder, N(5), C(2)),
    R("polyint", np.polyint, jnp.polyint, N(4)),
    R("vander", np.vander, jnp.vander, N(3), C(4)),
    R("meshgrid_ij", np.meshgrid, jnp.meshgrid, N(3), N(2), kw=dict(indexing="ij")),
    R("i0", np.i0, jnp.i0, N(5, scale=3.0), dtypes=("f8",)),
    R("nanquantile", np.nanquantile, jnp.nanquantile, N(7), C(0.31), dtypes=("f8",)),
    R("append", np.append, jnp.append, N(2, 3), N(1, 3), C(0)),
    R("atleast_2d", np.atleast_2d, jnp.atleast_2d, N(3)),
    R("array_split_axis1", np.array_split, jnp.array_split, N(2, 7), C(3), C(1)),
    R("hsplit", np.hsplit, jnp.hsplit, N(2, 4), C(2)),
    R("sort_none", np.sort, jnp.sort, N(3, 4), C(None)),
    R("sort_c", np.sort, jnp.sort, N(5), dtypes=("c16",)),
    R("where_scalar_branch", np.where, jnp.where, C(_mask), N(3, 4), C(0.0)),
    R("where_bcast_cond", np.where, jnp.where, C(np.array([True, False, True, False])),
      N(3, 4), N(3, 1)),
    R("diag_nonsquare_k", np.diag, jnp.diag, N(3, 5), C(2)),
    R("diagonal_neg", np.diagonal, jnp.diagonal, N(4, 3), C(-1)),
    R("triu_nonsquare", np.triu, jnp.triu, N(3, 5), C(-1)),
    R("rot90", np.rot90, jnp.rot90, N(3, 4), C(3), dtypes=FC),
    R("fliplr", np.fliplr, jnp.fliplr, N(3, 4)),
    R("trim_zeros_free_resize", np.resize, jnp.resize, N(2, 3), C((4, 4))),
    R("real_if_close", np.real_if_close, lambda x: jnp.real(x), N(3), dtypes=("f8",)),
    R("copy", np.copy, jnp.copy, N(3), dtypes=FC),
    R("asarray", np.asarray, jnp.asarray, N(3), dtypes=FC),
    R("astype_c2r", lambda x: x.astype(np.float64), lambda x: x.astype(jnp.float64), N(3),
      dtypes=()),
    R("qr_complete", np.linalg.qr, jnp.linalg.qr, N(4, 3), kw=dict(mode="complete"),
      dtypes=FC),
    R("qr_wide_c", np.linalg.qr, jnp.linalg.qr, N(3, 5), dtypes=("c16",)),
    R("qr_batched", np.linalg.qr, jnp.linalg.qr, N(2, 4, 3)),
    R("svd_batched", np.linalg.svd, jnp.linalg.svd, N(2, 4, 3), kw=dict(full_matrices=False),
      cot=_gauge_cot((0, 2)), view=_svd_view),
    R("svd_full_square", np.linalg.svd, jnp.linalg.svd, N(3, 3), cot=_gauge_cot((0, 2)),
      view=_svd_view, dtypes=FC),
    R("eigh_upper", np.linalg.eigh, jnp.linalg.eigh, HERM(4), kw=dict(UPLO="U"),
      okw=dict(UPLO="U", symmetrize_input=True), cot=_gauge_cot((1,)), view=_eigh_view,
      herm=True, dtypes=FC),
    R("eigh_batched", np.linalg.eigh, jnp.linalg.eigh,
      lambda r, dt: np.stack([HERM(3)(r, dt), HERM(3)(r, dt)]), cot=_gauge_cot((1,)),
      view=_eigh_view, herm=True),
    R("eigvals_c", np.linalg.eigvals, jnp.linalg.eigvals, N(3, 3), modes="v",
      dtypes=("c16",)),
    R("det_c_batched", np.linalg.det, jnp.linalg.det, WC(3, (2,)), dtypes=("c16",)),
    R("slogdet_batched", np.linalg.slogdet, jnp.linalg.slogdet, WC(3, (2,)), dtypes=FC),
    R("inv_f4_batched", np.linalg.inv, jnp.linalg.inv, WC(2, (3,)), dtypes=("f4",)),
    R("solve_batched_c", np.linalg.solve, jnp.linalg.solve, WC(3, (2,)), N(2, 3, 2),
      dtypes=("c16",)),
    R("tensorsolve", np.linalg.tensorsolve, jnp.linalg.tensorsolve,
      lambda r, dt: WC(6)(r, dt).reshape(2, 3, 6), N(2, 3)),
    R("tensorinv", np.linalg.tensorinv, jnp.linalg.tensorinv,
      lambda r, dt: WC(6)(r, dt).reshape(6, 2, 3), kw=dict(ind=1)),
    R("matrix_power_-3_c", np.linalg.matrix_power, jnp.linalg.matrix_power, WC(3), C(-3),
      dtypes=("c16",)),
    R("matrix_power_batched", np.linalg.matrix_power, jnp.linalg.matrix_power,
      N(2, 3, 3), C(2)),
    R("pinv_hermitian", np.linalg.pinv, jnp.linalg.pinv, SPD(3), kw=dict(hermitian=True),
      herm=True),
    R("pinv_batched", np.linalg.pinv, jnp.linalg.pinv, N(2, 4, 3)),
    R("lstsq_wide", np.linalg.lstsq, jnp.linalg.lstsq, N(3, 5), N(3), cot=_first_cot,
      view=lambda ys, ts: [ts[0]]),
    R("cond", np.linalg.cond, jnp.linalg.cond, WC(3)),
    R("matrix_rank_free_det", np.linalg.det, jnp.linalg.det, N(4, 4)),
    R("sla.expm_big", sla.expm, jsl.expm, N(3, 3, scale=3.0), dtypes=FC, rtol=1e-6),
    R("sla.expm_batched", sla.expm, jsl.expm, N(2, 3, 3, scale=0.5)),
    R("sla.solve_triangular_vec_lower_T", sla.solve_triangular, jsl.solve_triangular,
      TRI(3, True), N(3), kw=dict(lower=True, trans=1), dtypes=FC),
    R("sla.solve_triangular_C_upper_unit", sla.solve_triangular, jsl.solve_triangular,
      TRI(3, False), N(3, 2), kw=dict(trans=2, unit_diagonal=True), dtypes=("c16",)),
    # oracle: jsl.solve(assume_a="pos") has a wrong complex vjp (it treats the Hermitian
    # solve as self-transposed), so the reference is the general solve
    R("sla.solve_pos", sla.solve, jsl.solve, SPD(3), N(3), kw=dict(assume_a="pos"), okw={},
      herm=True, dtypes=FC),
    R("sla.solve_sym", sla.solve, jsl.solve, HERM(3), N(3, 2), kw=dict(assume_a="sym"),
      herm=True),
    R("sla.lu_factor_solve", lambda a, b: sla.lu_solve(sla.lu_factor(a), b),
      lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), WC(3), N(3), dtypes=()),
    R("sla.cho_factor_solve", lambda a, b: sla.cho_solve(sla.cho_factor(a), b),
      lambda a, b: jsl.cho_solve(jsl.cho_factor(a), b), SPD(3), N(3), dtypes=()),
    R("sla.block_diag", sla.block_diag, jsl.block_diag, N(2, 2), N(1, 3), dtypes=FC),
    R("sla.eigh_upper", sla.eigh, jsl.eigh, HERM(4), kw=dict(lower=False),
      cot=_gauge_cot((1,)), view=_eigh_view, herm=True, dtypes=FC),
    R("sla.lu", sla.lu, jsl.lu, WC(3), dtypes=FC),
    R("fft_axis0", np.fft.fft, jnp.fft.fft, N(4, 3), kw=dict(axis=0), dtypes=FC),
    R("ifft_n_forward", np.fft.ifft, jnp.fft.ifft, N(5), C(7), kw=dict(norm="forward"),
      dtypes=FC),
    R("rfft_f4_n", np.fft.rfft, jnp.fft.rfft, N(6), C(4), dtypes=("f4",)),
    R("rfft_axis0", np.fft.rfft, jnp.fft.rfft, N(5, 3), kw=dict(axis=0)),
    R("irfft_ortho", np.fft.irfft, jnp.fft.irfft, N(5), kw=dict(norm="ortho"),
      dtypes=("c16",)),
    R("irfft_axis0", np.fft.irfft, jnp.fft.irfft, N(4, 3), C(6), C(0), dtypes=("c16",)),
    R("irfft_real_input", np.fft.irfft, jnp.fft.irfft, N(4)),
    R("hfft_n", np.fft.hfft, jnp.fft.hfft, N(4), C(5), dtypes=("c16",)),
    R("ihfft_n", np.fft.ihfft, jnp.fft.ihfft, N(6), C(5)),
    R("rfftn_s", np.fft.rfftn, jnp.fft.rfftn, N(3, 4), C((4, 6)), C((0, 1))),
    R("fftn_s", np.fft.fftn, jnp.fft.fftn, N(3, 4), C((2, 6)), C((0, 1)), dtypes=FC),
    R("ifftn_ortho", np.fft.ifftn, jnp.fft.ifftn, N(3, 4), kw=dict(norm="ortho"), dtypes=FC),
    R("irfft2_s_forward", np.fft.irfft2, jnp.fft.irfft2, N(3, 3), C((3, 5)),
      kw=dict(norm="forward"), dtypes=("c16",)),
    R("fftshift_axes", np.fft.fftshift, jnp.fft.fftshift, N(3, 4), kw=dict(axes=1)),
    R("logsumexp_b_neg", sc.logsumexp, jss.logsumexp, N(4), C(0), C(np.array([1., 2., 0.5, 3.]))),
    R("logsumexp_axis_tuple", sc.logsumexp, jss.logsumexp, N(2, 3, 4), C((0, 2))),
    R("logsumexp_c", sc.logsumexp, jss.logsumexp, N(4), dtypes=("c16",)),
    R("logsumexp_return_sign", sc.logsumexp, jss.logsumexp, N(4), C(0), P(4),
      kw=dict(return_sign=True)),
    R("softmax_tuple_axis", sc.softmax, jss.softmax, N(2, 3, 4), kw=dict(axis=(0, 2))),
    R("log_softmax_none", sc.log_softmax, lambda x: jss.log_softmax(x, axis=None), N(3, 4)),
    R("log_expit", sc.log_expit, jax.nn.log_sigmoid, N(5)),
    R("softplus", sc.softplus, jax.nn.softplus, N(5)),
    R("gamma", sc.gamma, jss.gamma, P(5)),
    R("loggamma", sc.loggamma, jss.gammaln, P(5)),
    R("beta", sc.beta, jss.beta, P(5), P(5)),
    R("erfcx", sc.erfcx, jss.erfcx, N(5)) if hasattr(jss, "erfcx") else None,
    R("xlogy_bcast", sc.xlogy, jss.xlogy, N(3, 1), P(4)),
    R("zeta", sc.zeta, jss.zeta, C(np.array([2.5, 3.0, 4.5])), P(3)),
    R("gammainc_x", sc.gammainc, jss.gammainc, C(np.array([0.7, 1.5, 3.0])), P(3)),
    R("polygamma_0", sc.polygamma, jss.polygamma, C(np.array([0, 0])), P(2)),
    R("multigammaln", sc.multigammaln, jss.multigammaln, U(2.0, 4.0, 3), C(2)),
    R("ndtri_f4", sc.ndtri, jss.ndtri, U(0.1, 0.9, 5), dtypes=("f4",)),
]
EXTRA = [r for r in EXTRA if r is not None]

# mixed real/complex arguments, complex64, Python scalars
MIXED = [
 R("solve_mixedA", np.linalg.solve, jnp.linalg.solve, REAL(WC(3)), N(3, 2), dtypes=("c16",)),
 R("solve_mixedb", np.linalg.solve, jnp.linalg.solve, WC(3), REAL(N(3, 2)), dtypes=("c16",)),
 R("matmul_mixed", np.matmul, jnp.matmul, REAL(N(3, 4)), N(4, 2), dtypes=("c16",)),
 R("dot_mixed", np.dot, jnp.dot, N(4), REAL(N(4)), dtypes=("c16",)),
 R("vdot_mixed", np.vdot, jnp.vdot, REAL(N(4)), N(4), dtypes=("c16",)),
 R("einsum_mixed", np.einsum, jnp.einsum, C("ij,jk->ik"), REAL(N(3, 4)), N(4, 2), dtypes=("c16",)),
 R("tensordot_mixed", np.tensordot, jnp.tensordot, N(2, 3), REAL(N(3, 2)), C(1), dtypes=("c16",)),
 R("fft_real_in", np.fft.fft, jnp.fft.fft, REAL(N(6)), dtypes=("c16",)),
 R("ifft2_real_in", np.fft.ifft2, jnp.fft.ifft2, REAL(N(3, 4)), dtypes=("c16",)),
 R("convolve_mixed", np.convolve, jnp.convolve, REAL(N(5)), N(3), dtypes=("c16",)),
 R("correlate_mixed", np.correlate, jnp.correlate, N(5), REAL(N(3)), C("full"), dtypes=("c16",)),
 R("kron_mixed", np.kron, jnp.kron, REAL(N(2, 2)), N(2, 3), dtypes=("c16",)),
 R("outer_mixed", np.outer, jnp.outer, REAL(N(3)), N(2), dtypes=("c16",)),
 R("power_mixed", np.power, jnp.power, P(4), REAL(N(4)), dtypes=("c16",)),
 R("power_mixed2", np.power, jnp.power, REAL(P(4)), N(4), dtypes=("c16",)),
 R("divide_mixed", np.divide, jnp.divide, REAL(N(4)), P(4), dtypes=("c16",)),
 R("add_mixed", np.add, jnp.add, REAL(N(3, 4)), N(4), dtypes=("c16",)),
 R("where_mixed", np.where, jnp.where, C(np.array([True, False, True])), REAL(N(3)), N(3),
   dtypes=("c16",)),
 R("concat_mixed", np.concatenate, jnp.concatenate, SEQ(REAL(N(2)), N(3)), dtypes=("c16",)),
 R("stack_mixed", np.stack, jnp.stack, SEQ(REAL(N(2)), N(2)), dtypes=("c16",)),
 R("polyval_mixed", np.polyval, jnp.polyval, REAL(N(3)), N(4), dtypes=("c16",)),
 R("cross_mixed", np.cross, jnp.cross, REAL(N(3)), N(3), dtypes=("c16",)),
 R("lstsq_mixed", np.linalg.lstsq, jnp.linalg.lstsq, REAL(N(5, 3)), N(5), cot=_first_cot, view=lambda ys, ts: [ts[0]],
   dtypes=("c16",)),
 R("sla.solve_triangular_mixed", sla.solve_triangular, jsl.solve_triangular, REAL(TRI(3, True)), N(3), kw=dict(lower=True),
   dtypes=("c16",)),
 R("mul_f4_f8", np.multiply, jnp.multiply, REAL(N(3)), N(3), dtypes=("f4",)),
 R("xlogy_mixed", sc.xlogy, jss.xlogy, REAL(N(3)), P(3), dtypes=("c16",)),
 R("sin_c8", np.sin, jnp.sin, N(3), dtypes=("c8",)),
 R("inv_c8", np.linalg.inv, jnp.linalg.inv, WC(3), dtypes=("c8",)),
 R("fft_c8", np.fft.fft, jnp.fft.fft, N(4), dtypes=("c8",)),
 R("abs_c8", np.abs, jnp.abs, N(4), dtypes=("c8",)),
 R("det_c8", np.linalg.det, jnp.linalg.det, WC(3), dtypes=("c8",)),
 R("mul_scalar_first", np.multiply, jnp.multiply, _S(-2, 2), N(3), dtypes=("f8", "c16")),
 R("matmul_scalarish", np.matmul, jnp.matmul, N(1, 3), N(3, 1), dtypes=("c16",)),
]

# jax.scipy.signal and jax.scipy.fft differentiate their own implementations; ours
# come from the rules
_FC = ("f8", "c16")

SCIPY_SIGNAL = [
    R("convolve_full", ss.convolve, jsig.convolve, N(7), N(3), dtypes=_FC),
    R("convolve_same_even", ss.convolve, jsig.convolve, N(6), N(4), kw=dict(mode="same"),
      dtypes=_FC),
    R("convolve_valid_2d", ss.convolve, jsig.convolve, N(5, 4), N(2, 3),
      kw=dict(mode="valid"), dtypes=_FC),
    R("correlate_full", ss.correlate, jsig.correlate, N(6), N(3), dtypes=_FC),
    R("correlate_same_2d", ss.correlate, jsig.correlate, N(4, 5), N(3, 2),
      kw=dict(mode="same"), dtypes=_FC),
    R("correlate_valid", ss.correlate, jsig.correlate, N(8), N(3), kw=dict(mode="valid"),
      dtypes=_FC),
    R("fftconvolve_same", ss.fftconvolve, jsig.fftconvolve, N(9), N(4), kw=dict(mode="same"),
      dtypes=_FC),
    R("fftconvolve_axes", ss.fftconvolve, jsig.fftconvolve, N(3, 7), N(3, 3),
      kw=dict(axes=1)),
    R("convolve2d_full", ss.convolve2d, jsig.convolve2d, N(4, 5), N(2, 3), dtypes=_FC),
    R("convolve2d_same", ss.convolve2d, jsig.convolve2d, N(4, 5), N(3, 2),
      kw=dict(mode="same"), dtypes=_FC),
    R("correlate2d_valid", ss.correlate2d, jsig.correlate2d, N(5, 4), N(2, 3),
      kw=dict(mode="valid"), dtypes=_FC),
    R("correlate2d_full", ss.correlate2d, jsig.correlate2d, N(3, 4), N(2, 2), dtypes=_FC),
    R("detrend_linear", ss.detrend, jsig.detrend, N(3, 8)),
    R("detrend_constant_axis0", ss.detrend, jsig.detrend, N(6, 3),
      kw=dict(axis=0, type="constant")),
    # the window named explicitly: SciPy's default name ("hann_periodic") is newer than JAX's
    R("stft", ss.stft, jsig.stft, N(2, 30), kw=dict(nperseg=8, window="hann")),
    R("stft_even", ss.stft, jsig.stft, N(30), kw=dict(nperseg=7, noverlap=3,
                                                      boundary="even", window="hann")),
    R("istft", ss.istft, jsig.istft, N(5, 9), kw=dict(window="hann"), dtypes=_FC),
    R("istft_overlap", ss.istft, jsig.istft, N(4, 8), kw=dict(nperseg=6, noverlap=2,
                                                              window="hann"), dtypes=_FC),
    R("welch", ss.welch, jsig.welch, N(2, 30), kw=dict(nperseg=8, window="hann")),
    R("welch_linear_nfft", ss.welch, jsig.welch, N(30), kw=dict(nperseg=8, nfft=10,
                                                               detrend="linear",
                                                               window="hann")),
]

# jax.scipy.fft has the type-2 transforms only
SCIPY_FFT = [
    R(f"{name}_{norm}", getattr(sf, name), getattr(jsf, name), N(*shape), kw=dict(norm=norm))
    for name, shape in (("dct", (7,)), ("idct", (6,)), ("dctn", (3, 4)), ("idctn", (4, 3)))
    for norm in (None, "ortho")
] + [
    R("dct_n_axis0", sf.dct, jsf.dct, N(5, 3), kw=dict(n=7, axis=0)),
    R("dctn_s", sf.dctn, jsf.dctn, N(3, 4), kw=dict(s=(5, 2), norm="ortho")),
]


FAMILIES = dict(ufuncs=UFUNCS, scalars=SCALARS, reductions=REDUCTIONS,
                contractions=CONTRACTIONS, shape=SHAPE, linalg=LINALG, fft=FFT,
                special=SPECIAL, extra=EXTRA, mixed=MIXED, scipy_signal=SCIPY_SIGNAL,
                scipy_fft=SCIPY_FFT)
ROWS = [row for rows in FAMILIES.values() for row in rows]

if os.environ.get("CHAINRULES_ORACLE_FAMILIES"):  # e.g. "linalg,fft" to run a subset
    FAMILIES = {f: FAMILIES[f] for f in os.environ["CHAINRULES_ORACLE_FAMILIES"].split(",")}
    ROWS = [row for rows in FAMILIES.values() for row in rows]

# ---------------------------------------------------------------- known bugs / conventions
_WHERE = "not supported: where= raises WhereArgumentError (coverage gap, see report)"
_NORULE = "no rule registered (coverage gap, see report)"
_NOTIMPL = "derivative is NotImplementedTangent (coverage gap, see report)"
XFAIL: dict = {
    "sum_where": {"f8": _WHERE, "c16": _WHERE},
    "mean_where": {"f8": _WHERE},
    "var_where": {"f8": _WHERE},
    "prod_where": {"f8": _WHERE},
    "max_where_initial": {"f8": _WHERE},
    "logaddexp_reduce": {"f8": _NORULE},
    "real_if_close": {"f8": _NORULE},
    "pad_maximum": {"f8": _NOTIMPL},
}


def _apply_xfails() -> None:
    for row in ROWS:
        for key, reason in XFAIL.get(row.id, {}).items():
            row.xfail[key] = reason


_apply_xfails()


# ---------------------------------------------------------------- the check


def _to_jax(a):
    if isinstance(a, list):
        return [_to_jax(x) for x in a]
    return jnp.asarray(a)


def _oracle_fun(row, args, pos):
    okw = row.kw if row.okw is None else row.okw

    def fun(*dargs):
        full = list(args)
        for i, d in zip(pos, dargs):
            full[i] = d
        return row.of(*full, **okw)

    return fun


def _np_leaves(tree) -> list:
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _view(row, ys, ts):
    ys = [np.asarray(y) for y in ys]
    ts = [None if t is None else np.asarray(t) for t in ts]
    if row.view is not None:
        return row.view(ys, ts)
    return [t for y, t in zip(ys, ts) if y.dtype.kind in "fc"]


def _herm_if(row, i, a):
    """Rows with a Hermitian input: compare the Hermitian part of the cotangent
    (LAPACK reads one triangle; JAX symmetrizes; both are right on Hermitian
    perturbations) and push forward Hermitian tangents only."""
    return _herm(a) if (row.herm and i == 0) else a


def check(row, dt, mode):
    r, args = build_args(row, dt)
    pos = diff_positions(row, args)
    rtol, atol = tols(row, dt)
    fun = _oracle_fun(row, args, pos)
    jargs = [_to_jax(args[i]) for i in pos]
    res = rrule(row.f, *args, **row.kw)
    assert res is not None, f"no rrule for {row.id} on these argument types"
    y, pullback = res
    if mode == "v":
        ys = leaves(y)
        theirs = _np_leaves(fun(*jargs))
        assert len(ys) == len(theirs), (len(ys), len(theirs))
        ref = row.f(*args, **row.kw)
        assert_close(_view(row, ys, ys), _view(row, leaves(ref), leaves(ref)), rtol, atol,
                     "rrule primal vs f")
        assert_close(_view(row, ys, ys), _view(row, theirs, theirs), rtol, atol, "primal")
        ys = leaves(y)
        seed = int(r.integers(1 << 30))
        cots = (row.cot or default_cot)(ys, np.random.default_rng(seed))
        grads = pullback(ours_cot(y, cots))
        assert len(grads) == len(args) + 1, f"pullback returned {len(grads)} entries"
        out, vjp_fn = jax.vjp(fun, *jargs)
        flat, tree = jax.tree_util.tree_flatten(out)
        if row.cot is not None:  # gauge losses: the same loss, on the oracle's own vectors
            ocots = row.cot([np.asarray(x) for x in flat], np.random.default_rng(seed))
        else:
            ocots = cots
        jcots = []
        for c, leaf in zip(ocots, flat):
            if c is not None:
                jcots.append(jnp.asarray(np.conj(c)))
            elif jnp.issubdtype(leaf.dtype, jnp.inexact):
                jcots.append(jnp.zeros_like(leaf))
            else:
                jcots.append(np.zeros(leaf.shape, dtype=jax.dtypes.float0))
        theirs = vjp_fn(jax.tree_util.tree_unflatten(tree, jcots))
        for k, i in enumerate(pos):
            ours_i = _herm_if(row, i, dense(grads[1 + i], args[i]))
            theirs_i = jax.tree_util.tree_map(lambda t: np.conj(np.asarray(t)), theirs[k])
            theirs_i = _herm_if(row, i, theirs_i)
            assert_close(ours_i, theirs_i, rtol, atol, f"cotangent of argument {i}")
    else:
        dots = [_herm_if(row, i, rand_like(r, args[i])) for i in pos]
        full = [NoTangent()] * len(args)
        for i, d in zip(pos, dots):
            full[i] = d
        fres = frule((NoTangent(), *full), row.f, *args, **row.kw)
        assert fres is not None, f"no frule for {row.id}"
        y, y_dot = fres
        ts = tangent_leaves(y_dot, y)
        out, tout = jax.jvp(fun, tuple(jargs), tuple(_to_jax(d) for d in dots))
        ys_j, ts_j = _np_leaves(out), jax.tree_util.tree_leaves(tout)
        ts_j = [None if t.dtype == jax.dtypes.float0 else np.asarray(t) for t in ts_j]
        assert_close(_view(row, leaves(y), ts), _view(row, ys_j, ts_j), rtol, atol,
                     "pushforward")
