"""Rules for the matrix functions of ``scipy.linalg``: ``expm``, ``sqrtm``, ``logm``,
``cosm``, ``sinm``, ``tanm``, ``coshm``, ``sinhm``, ``tanhm``, ``signm`` and
``fractional_matrix_power``, and for the Sylvester solvers ``solve_sylvester`` and
``solve_continuous_lyapunov``.

``expm`` uses ``expm_frechet``; ``sqrtm`` a Sylvester solve; ``logm`` the block-triangular
identity below. The Sylvester solves keep the Schur forms of the primal for the pullback
(``SylvesterSolver`` in ``rules/_linalg_kernel.py``); real matrices with a complex
right-hand side or cotangent are solved as its real and imaginary parts (LAPACK's complex
``?trsyl`` cannot take a real quasi-triangular Schur form).

Each is an analytic function with real Taylor coefficients, so its Fréchet derivative
comes from the block-triangular identity ``f([[A, E], [0, A]]) = [[f(A), Df(A)[E]], [0,
f(A)]]`` (exact), and the pullback is the Fréchet derivative at ``A^H`` applied to
``y_bar``, as for ``expm`` and ``logm``.
``fractional_matrix_power(A, t)`` is also differentiated in a real exponent ``t``:
``d/dt A^t = A^t log(A)`` (the two commute; SciPy takes real ``t`` only).

>>> import numpy as np
>>> import scipy.linalg as sla
>>> from chainrules import rrule
>>> y, sinm_pullback = rrule(sla.sinm, np.diag([0.0, 1.0]))
>>> sinm_pullback(np.eye(2))[1]  # d tr(sinm(A)) / dA = cosm(A)^T
array([[1.        , 0.        ],
       [0.        , 0.54030231]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_kernel as kernel


def _matfunc_rules(f: Any) -> None:
    """frule and rrule for ``f(A, *options)`` with real Taylor coefficients (module doc)."""
    name = f.__name__

    def matfunc_frule(dargs: tuple, a: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(a, *args, **kwargs)
        a_dot = kit.nonzero(dargs[1])
        if a_dot is None:
            return y, ZeroTangent()
        return y, ProjectTo(y)(_block_frechet(lambda m: f(m, *args, **kwargs),
                                              np.asarray(a), np.asarray(a_dot)))

    def matfunc_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(a, *args, **kwargs)
        project_a = ProjectTo(a)

        @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
        def matfunc_pullback(y_bar: Any) -> tuple:
            a_bar = _block_frechet(lambda m: f(m, *args, **kwargs), kernel.H(np.asarray(a)),
                                   np.asarray(y_bar))
            return NoTangent(), project_a(a_bar), *kernel.nots(args)

        matfunc_pullback.__qualname__ = f"{name}_pullback"
        return y, matfunc_pullback

    kit.define_rules(f, frule_fn=matfunc_frule, rrule_fn=matfunc_rrule)


for _f in (sla.cosm, sla.sinm, sla.tanm, sla.coshm, sla.sinhm, sla.tanhm, sla.signm):
    _matfunc_rules(_f)


# ------------------------------------------------------------------------ fractional power

def _power(t: Any) -> Any:
    return lambda m: sla.fractional_matrix_power(m, t)


def _power_dt(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    return y @ kernel.each(sla.logm, a)


@frule.register(sla.fractional_matrix_power)
def fractional_matrix_power_frule(dargs, a, t):
    y = sla.fractional_matrix_power(a, t)
    a_dot, t_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    if a_dot is None and t_dot is None:
        return y, ZeroTangent()
    a = np.asarray(a)
    y_dot: Any = 0
    if a_dot is not None:
        y_dot = _block_frechet(_power(t), a, np.asarray(a_dot))
    if t_dot is not None:
        y_dot = y_dot + _power_dt(a, y) * t_dot
    return y, ProjectTo(y)(y_dot)


@rrule.register(sla.fractional_matrix_power)
def fractional_matrix_power_rrule(a, t):
    y = sla.fractional_matrix_power(a, t)
    project_a, project_t = ProjectTo(a), ProjectTo(t)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), project_t(ZeroTangent())))
    def fractional_matrix_power_pullback(y_bar):
        a_arr = np.asarray(a)
        a_bar = _block_frechet(_power(t), kernel.H(a_arr), np.asarray(y_bar))
        # <y_bar, A^t log(A)> = Re sum(conj(A^t log A) * y_bar)
        t_bar = np.real(np.sum(np.conj(_power_dt(a_arr, y)) * y_bar))
        return NoTangent(), project_a(a_bar), project_t(t_bar)

    return y, fractional_matrix_power_pullback



# --------------------------------------------------------------------- expm, sqrtm, logm


def _expm_frechet(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    e = np.broadcast_to(e, a.shape)
    if type(a) is not np.ndarray or type(e) is not np.ndarray:
        # an AD's traced values (a second derivative): expm of the block matrix
        # [[A, E], [0, A]], whose upper-right block is the Frechet derivative, uses
        # only expm, which has this very rule (differentiable to any order)
        return kernel.each(_expm_frechet_block, a, e)
    return kernel.finite_or_nan(lambda a, e: kernel.each(
        lambda x, d: sla.expm_frechet(x, d, compute_expm=False, check_finite=False),
        a, e), a, e)


def _expm_frechet_block(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    zero = np.zeros((n, n), dtype=np.result_type(x, d))
    return sla.expm(np.block([[x, d], [zero, x]]))[:n, n:]


@frule.register(sla.expm)
def expm_frule(dargs, a):
    a_dot = kit.nonzero(dargs[1])
    y = sla.expm(a)
    if a_dot is None:
        return y, ZeroTangent()
    return y, ProjectTo(y)(_expm_frechet(np.asarray(a), np.asarray(a_dot)))


@rrule.register(sla.expm)
def expm_rrule(a):
    y = sla.expm(a)
    project_a = ProjectTo(a)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def expm_pullback(y_bar):
        # adjoint of the Frechet derivative at A is the Frechet derivative at A^H
        return NoTangent(), project_a(_expm_frechet(kernel.H(np.asarray(a)), np.asarray(y_bar)))

    return y, expm_pullback


@frule.register(sla.sqrtm)
def sqrtm_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = sla.sqrtm(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    # X dX + dX X = dA
    return y, ProjectTo(y)(kernel.sylvester(y, y, np.asarray(a_dot)))


@rrule.register(sla.sqrtm)
def sqrtm_rrule(a, *args, **kwargs):
    y = sla.sqrtm(a, *args, **kwargs)
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def sqrtm_pullback(y_bar):
        y_h = kernel.H(y)
        return (
            NoTangent(),
            project_a(kernel.sylvester(y_h, y_h, np.asarray(y_bar))),
            *kernel.nots(args),
        )

    return y, sqrtm_pullback


def _block_frechet(f: Any, a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Frechet derivative of the analytic matrix function ``f`` at ``a`` along ``e``, from
    ``f([[A, E], [0, A]]) = [[f(A), Df(A)[E]], [0, f(A)]]``."""

    def one(x: np.ndarray, d: np.ndarray) -> np.ndarray:
        n = x.shape[-1]
        # scale the direction to the size of x (the derivative is linear in it)
        scale = float(np.linalg.norm(d))
        if scale == 0.0:
            return np.zeros_like(d, dtype=np.result_type(x, d, np.float64))
        t = max(float(np.linalg.norm(x)), 1e-300) / scale
        dtype = np.result_type(x, d, np.float64)
        # np.block, not writes into a zero matrix: run on an AD's traced values (a
        # second derivative) this code stays differentiable
        zero = np.zeros((n, n), dtype=dtype)
        block = np.block([[x, d * t], [zero, x]]).astype(dtype)
        return f(block)[:n, n:] / t

    return kernel.each(one, a, np.broadcast_to(e, a.shape))


def _logm_frechet(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Frechet derivative of the principal logarithm at ``a`` along ``e``."""
    return _block_frechet(sla.logm, a, e)


@frule.register(sla.logm)
def logm_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = sla.logm(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    return y, ProjectTo(y)(_logm_frechet(np.asarray(a), np.asarray(a_dot)))


@rrule.register(sla.logm)
def logm_rrule(a, *args, **kwargs):
    y = sla.logm(a, *args, **kwargs)
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def logm_pullback(y_bar):
        return NoTangent(), project_a(_logm_frechet(kernel.H(np.asarray(a)), np.asarray(y_bar))), \
            *kernel.nots(args)

    return y, logm_pullback


# ------------------------------------------------------------------- Sylvester, Lyapunov


@frule.register(sla.solve_sylvester)
def solve_sylvester_frule(dargs, a, b, q):
    a_dot, b_dot, q_dot = (kit.nonzero(d) for d in dargs[1:])
    solver = kernel.SylvesterSolver(a, b)
    y = solver.solve(q)
    if a_dot is None and b_dot is None and q_dot is None:
        return y, ZeroTangent()
    rhs = np.zeros(y.shape, dtype=y.dtype) if q_dot is None else np.asarray(q_dot)
    if a_dot is not None:
        rhs = rhs - a_dot @ y
    if b_dot is not None:
        rhs = rhs - y @ b_dot
    return y, ProjectTo(y)(solver.solve(rhs))


@rrule.register(sla.solve_sylvester)
def solve_sylvester_rrule(a, b, q):
    solver = kernel.SylvesterSolver(a, b)
    y = solver.solve(q)
    project_a, project_b, project_q = ProjectTo(a), ProjectTo(b), ProjectTo(q)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent(), ZeroTangent()))
    def solve_sylvester_pullback(y_bar):
        # the adjoint of X -> AX + XB is G -> A^H G + G B^H (same Schur forms)
        g = solver.solve(y_bar, adjoint=True)
        return (NoTangent(), Thunk(lambda: project_a(-(g @ kernel.H(y)))),
                Thunk(lambda: project_b(-(kernel.H(y) @ g))), project_q(g))

    return y, solve_sylvester_pullback


@frule.register(sla.solve_continuous_lyapunov)
def solve_continuous_lyapunov_frule(dargs, a, q):
    a_dot, q_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    solver = kernel.SylvesterSolver(a, kernel.H(np.asarray(a)))
    y = solver.solve(q)
    if a_dot is None and q_dot is None:
        return y, ZeroTangent()
    rhs = np.zeros(y.shape, dtype=y.dtype) if q_dot is None else np.asarray(q_dot)
    if a_dot is not None:
        rhs = rhs - a_dot @ y - y @ kernel.H(a_dot)
    return y, ProjectTo(y)(solver.solve(rhs))


@rrule.register(sla.solve_continuous_lyapunov)
def solve_continuous_lyapunov_rrule(a, q):
    solver = kernel.SylvesterSolver(a, kernel.H(np.asarray(a)))
    y = solver.solve(q)
    project_a, project_q = ProjectTo(a), ProjectTo(q)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
    def solve_continuous_lyapunov_pullback(y_bar):
        # adjoint of X -> AX + XA^H is G -> A^H G + G A (same Schur form)
        g = solver.solve(y_bar, adjoint=True)
        return (NoTangent(), Thunk(lambda: project_a(-(g @ kernel.H(y) + kernel.H(g) @ y))),
                project_q(g))

    return y, solve_continuous_lyapunov_pullback
