"""Oracle check against PyTorch (a subset of the JAX rows).

PyTorch's gradient convention for complex inputs is ours (``grad(|z|^2) == 2z``):
``torch.autograd.grad(outputs, inputs, grad_outputs=y_bar)`` returns our ``x_bar``
for a cotangent ``y_bar`` without conjugation (checked in
``test_complex_convention_abs2``).  Only reverse mode is compared here.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from chainrules import rrule  # noqa: E402

from ._harness import (  # noqa: E402
    HERM,
    SPD,
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
    params,
    tols,
)

FC = ("f8", "c16")


def _eigh_vals(a):
    return torch.linalg.eigvalsh(a)


ROWS = [
    R("sin", np.sin, torch.sin, N(3, 4), dtypes=FC),
    R("exp", np.exp, torch.exp, N(3, 4), dtypes=FC),
    R("log", np.log, torch.log, P(3, 4), dtypes=FC),
    R("sqrt", np.sqrt, torch.sqrt, P(5), dtypes=FC),
    R("abs", np.abs, torch.abs, N(3, 4), dtypes=FC),
    R("angle", np.angle, torch.angle, N(5), dtypes=("c16",)),
    R("real", np.real, torch.real, N(5), dtypes=("c16",)),
    R("imag", np.imag, torch.imag, N(5), dtypes=("c16",)),
    R("conj", np.conj, torch.conj_physical, N(5), dtypes=("c16",)),
    R("arctan2", np.arctan2, torch.atan2, N(5), N(5)),
    R("hypot", np.hypot, torch.hypot, N(5), N(5)),
    R("maximum", np.maximum, torch.maximum, N(5), N(5)),
    R("power", np.power, torch.pow, P(3, 4), N(3, 4), dtypes=FC),
    R("logaddexp", np.logaddexp, torch.logaddexp, N(5), N(5)),
    R("arcsin", np.arcsin, torch.asin, U(-0.9, 0.9, 5), dtypes=FC),
    R("tanh", np.tanh, torch.tanh, N(5), dtypes=FC),
    R("divide_bcast", np.divide, torch.div, N(3, 4), P(4), dtypes=FC),
    R("prod_axis", np.prod, lambda x, axis: torch.prod(x, axis), N(3, 4), C(1), dtypes=FC),
    R("cumprod", np.cumprod, lambda x, axis: torch.cumprod(x, axis), P(3, 4), C(1), dtypes=FC),
    R("var_ddof", np.var, lambda x, **kw: torch.var(x, kw["axis"], correction=kw["ddof"]),
      N(3, 4), kw=dict(axis=0, ddof=1), dtypes=FC),
    R("matmul", np.matmul, torch.matmul, N(2, 3, 4), N(4, 2), dtypes=FC),
    R("vdot", np.vdot, torch.vdot, N(4), N(4), dtypes=FC),
    R("kron", np.kron, torch.kron, N(2, 3), N(3, 2), dtypes=FC),
    R("cross", np.cross, lambda a, b: torch.linalg.cross(a, b), N(4, 3), N(4, 3), dtypes=FC),
    R("inv", np.linalg.inv, torch.linalg.inv, WC(3), dtypes=FC),
    R("solve", np.linalg.solve, torch.linalg.solve, WC(3), N(3, 2), dtypes=FC),
    R("det", np.linalg.det, torch.linalg.det, WC(3), dtypes=FC),
    R("pinv", np.linalg.pinv, torch.linalg.pinv, N(4, 3), dtypes=FC),
    R("eigvalsh", np.linalg.eigvalsh, _eigh_vals, HERM(4), herm=True, dtypes=FC),
    R("cholesky", np.linalg.cholesky, torch.linalg.cholesky, SPD(3), herm=True, dtypes=FC),
    R("svdvals", np.linalg.svdvals, torch.linalg.svdvals, N(4, 3), dtypes=FC),
    R("norm_nuc", np.linalg.norm, lambda a, o: torch.linalg.matrix_norm(a, o), N(3, 4),
      C("nuc"), dtypes=FC),
    R("matrix_power", np.linalg.matrix_power, torch.linalg.matrix_power, WC(3), C(-2),
      dtypes=FC),
    R("fft", np.fft.fft, torch.fft.fft, N(6), dtypes=FC),
    R("rfft_n", np.fft.rfft, torch.fft.rfft, N(6), C(9)),
    R("irfft_n", np.fft.irfft, torch.fft.irfft, N(4), C(7), dtypes=("c16",)),
    R("fft2_ortho", np.fft.fft2, torch.fft.fft2, N(3, 4), kw=dict(norm="ortho"), dtypes=FC),
]


def _herm(x):
    return (x + np.conj(np.swapaxes(x, -1, -2))) / 2


def _to_torch(a):
    if isinstance(a, np.ndarray):
        return torch.tensor(a, requires_grad=True)
    return a


@pytest.mark.parametrize(("row", "dt", "mode"), params(ROWS, pytest, modes="v"))
def test_against_torch(row, dt, mode):
    r, args = build_args(row, dt)
    pos = diff_positions(row, args)
    rtol, atol = tols(row, dt)
    y, pullback = rrule(row.f, *args, **row.kw)
    ys = leaves(y)
    cots = default_cot(ys, r)
    grads = pullback(ours_cot(y, cots))
    targs = [_to_torch(a) if i in pos else a for i, a in enumerate(args)]
    out = row.of(*targs, **row.kw)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    assert_close(ys, [o.detach().numpy() for o in outs], rtol, atol, "primal")
    theirs = torch.autograd.grad(outs, [targs[i] for i in pos],
                                 grad_outputs=[torch.tensor(np.asarray(c)) for c in cots])
    for k, i in enumerate(pos):
        ours_i = dense(grads[1 + i], args[i])
        theirs_i = theirs[k].numpy()
        if row.herm and i == 0:
            ours_i, theirs_i = _herm(ours_i), _herm(theirs_i)
        assert_close(ours_i, theirs_i, rtol, atol, f"cotangent of argument {i}")


def test_complex_convention_abs2():
    z = torch.tensor([1.0 + 2.0j, -0.5 + 0.25j], requires_grad=True)
    (g,) = torch.autograd.grad((z.abs() ** 2).sum(), z)
    np.testing.assert_allclose(g.numpy(), 2 * z.detach().numpy())
