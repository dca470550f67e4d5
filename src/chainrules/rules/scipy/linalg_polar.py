"""Rules for ``scipy.linalg.lstsq`` and ``scipy.linalg.polar``.

``lstsq`` uses the rule of ``numpy.linalg.lstsq`` (same outputs ``x, residues, rank, s``;
SciPy's ``residues`` of a vector ``b`` is a scalar where NumPy's has shape ``(1,)``), at
full rank: a rank-deficient ``a`` (SciPy's ``rank < min(m, n)``) is ``not_implemented``.

``polar(a)`` (``a = U P``, ``P`` positive definite): with ``M = U^H dA`` and
``Omega = U^H dU`` (skew-Hermitian), ``P Omega + Omega P = M - M^H`` and
``dP = M - Omega P``; the pullback is the adjoint of that Sylvester solve.
``side="left"`` (``a = P U``) is the right polar decomposition of ``a^H``. Square
nonsingular ``a`` only (otherwise ``not_implemented``).

>>> import numpy as np
>>> import scipy.linalg as sla
>>> from chainrules import frule, NoTangent
>>> (u, p), (u_dot, p_dot) = frule((NoTangent(), np.eye(2)), sla.polar, 2 * np.eye(2))
>>> p_dot  # P = (A^H A)^(1/2) = A here
array([[1., 0.],
       [0., 1.]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Tangent, ZeroTangent, frule, not_implemented
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_kernel as kernel

# ------------------------------------------------------------------------ lstsq

_RANK_DEFICIENT = ("lstsq of a rank-deficient matrix: the solution is not differentiable "
                   "where the rank changes; the rule covers full rank only")


def _lstsq_full_rank(a: Any, y: tuple) -> bool:
    return int(y[2]) == min(np.shape(a)[-2:])


def _numpy_residues(res: Any, like: np.ndarray) -> Any:
    return res if res is None else np.reshape(np.asarray(res), np.shape(like))


@frule.register(sla.lstsq)
def lstsq_frule(dargs, a, b, *args, **kwargs):
    y = sla.lstsq(a, b, *args, **kwargs)
    if kit.nonzero(dargs[1]) is None and kit.nonzero(dargs[2]) is None:
        return y, ZeroTangent()
    if not _lstsq_full_rank(a, y):
        return y, not_implemented(_RANK_DEFICIENT)
    _, (x_dot, res_dot, _, s_dot) = kit.delegate(frule, np.linalg.lstsq, (dargs[:3],), (
        a if hasattr(a, "shape") else np.asarray(a), b if hasattr(b, "shape") else np.asarray(b)),
        {})
    if not isinstance(res_dot, (ZeroTangent, NoTangent)):
        res_dot = ProjectTo(y[1])(np.reshape(res_dot, np.shape(y[1])))
    return y, Tangent[tuple](x_dot, res_dot, NoTangent(), s_dot)


@core.rrule.register(sla.lstsq)
def lstsq_rrule(a, b, *args, **kwargs):
    y = sla.lstsq(a, b, *args, **kwargs)
    full_rank = _lstsq_full_rank(a, y)
    y_np, numpy_pullback = core.rrule(np.linalg.lstsq, np.asarray(a), np.asarray(b))

    def lstsq_pullback(y_bar):
        x_bar, res_bar, s_bar = kernel.item(y_bar, 0), kernel.item(y_bar, 1), kernel.item(y_bar, 3)
        if x_bar is None and res_bar is None and s_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)
        if not full_rank:
            return (NoTangent(), not_implemented(_RANK_DEFICIENT),
                    not_implemented(_RANK_DEFICIENT), *kernel.nots(args))
        bars = tuple(ZeroTangent() if t is None else t for t in
                     (x_bar, _numpy_residues(res_bar, y_np[1]), None, s_bar))
        _, a_bar, b_bar = numpy_pullback(Tangent[tuple](*bars))
        return NoTangent(), ProjectTo(a)(a_bar), ProjectTo(b)(b_bar), *kernel.nots(args)

    return y, lstsq_pullback


# ------------------------------------------------------------------------ polar

_POLAR_SHAPE = "polar of a non-square matrix has no rule yet (square nonsingular a only)"


def _side(args: tuple, kwargs: dict) -> str:
    return args[0] if args else kwargs.get("side", "right")


def _polar_tangent(u: np.ndarray, p: np.ndarray, a_dot: np.ndarray) -> tuple:
    m = kernel.H(u) @ a_dot
    omega = kernel.sylvester(p, p, m - kernel.H(m))
    return u @ omega, m - omega @ p


def _polar_cotangent(u: np.ndarray, p: np.ndarray, u_bar: Any, p_bar: Any) -> np.ndarray:
    g = 0
    m_bar = 0
    if u_bar is not None:
        g = kernel.H(u) @ u_bar
    if p_bar is not None:
        g = g - p_bar @ p
        m_bar = p_bar
    s = kernel.sylvester(
        p, p, np.asarray(g)
    )  # the Sylvester operator of Hermitian P is self-adjoint
    return u @ (m_bar + s - kernel.H(s))


@frule.register(sla.polar)
def polar_frule(dargs, a, *args, **kwargs):
    y = sla.polar(a, *args, **kwargs)
    a_dot = kit.nonzero(dargs[1])
    if a_dot is None:
        return y, ZeroTangent()
    a_dot = np.asarray(a_dot)
    if np.shape(a)[-1] != np.shape(a)[-2]:
        return y, not_implemented(_POLAR_SHAPE)
    u, p = y
    if _side(args, kwargs) == "left":  # A^H = U^H P
        u_h_dot, p_dot = _polar_tangent(kernel.H(u), p, kernel.H(a_dot))
        u_dot = kernel.H(u_h_dot)
    else:
        u_dot, p_dot = _polar_tangent(u, p, a_dot)
    return y, Tangent[tuple](ProjectTo(u)(u_dot), ProjectTo(p)(p_dot))


@core.rrule.register(sla.polar)
def polar_rrule(a, *args, **kwargs):
    y = sla.polar(a, *args, **kwargs)
    project_a = ProjectTo(a)
    square = np.shape(a)[-1] == np.shape(a)[-2]

    def polar_pullback(y_bar):
        u_bar, p_bar = kernel.item(y_bar, 0), kernel.item(y_bar, 1)
        if u_bar is None and p_bar is None:
            return NoTangent(), ZeroTangent(), *kernel.nots(args)
        if not square:
            return NoTangent(), not_implemented(_POLAR_SHAPE), *kernel.nots(args)
        u, p = y
        if _side(args, kwargs) == "left":
            u_h_bar = None if u_bar is None else kernel.H(np.asarray(u_bar))
            a_bar = kernel.H(_polar_cotangent(kernel.H(u), p, u_h_bar, p_bar))
        else:
            a_bar = _polar_cotangent(u, p, u_bar, p_bar)
        return NoTangent(), project_a(a_bar), *kernel.nots(args)

    return y, polar_pullback
