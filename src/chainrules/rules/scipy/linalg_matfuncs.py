"""Rules for the matrix functions of ``scipy.linalg``: ``cosm``, ``sinm``, ``tanm``,
``coshm``, ``sinhm``, ``tanhm``, ``signm`` and ``fractional_matrix_power``.

Each is an analytic function with real Taylor coefficients, so its Fréchet derivative
comes from the block-triangular identity ``f([[A, E], [0, A]]) = [[f(A), Df(A)[E]], [0,
f(A)]]`` (exact), and the pullback is the Fréchet derivative at ``A^H`` applied to
``y_bar``, as for ``expm`` and ``logm`` in ``chainrules.rules.scipy.linalg``.
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

from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, rrule
from chainrules.rules.scipy.linalg import _H, _block_frechet, _each, _nots, _value


def _matfunc_rules(f: Any) -> None:
    """frule and rrule for ``f(A, *options)`` with real Taylor coefficients (module doc)."""
    name = f.__name__

    def matfunc_frule(dargs: tuple, a: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(a, *args, **kwargs)
        a_dot = _value(dargs[1])
        if a_dot is None:
            return y, ZeroTangent()
        return y, ProjectTo(y)(_block_frechet(lambda m: f(m, *args, **kwargs),
                                              np.asarray(a), np.asarray(a_dot)))

    def matfunc_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
        y = f(a, *args, **kwargs)
        project_a = ProjectTo(a)

        def matfunc_pullback(y_bar: Any) -> tuple:
            y_bar = _value(y_bar)
            if y_bar is None:
                return NoTangent(), ZeroTangent(), *_nots(args)
            a_bar = _block_frechet(lambda m: f(m, *args, **kwargs), _H(np.asarray(a)),
                                   np.asarray(y_bar))
            return NoTangent(), project_a(a_bar), *_nots(args)

        matfunc_pullback.__qualname__ = f"{name}_pullback"
        return y, matfunc_pullback

    matfunc_frule.__qualname__ = f"{name}_frule"
    matfunc_rrule.__qualname__ = f"{name}_rrule"
    frule.register(f)(matfunc_frule)
    rrule.register(f)(matfunc_rrule)


for _f in (sla.cosm, sla.sinm, sla.tanm, sla.coshm, sla.sinhm, sla.tanhm, sla.signm):
    _matfunc_rules(_f)


# ------------------------------------------------------------------------ fractional power

def _power(t: Any) -> Any:
    return lambda m: sla.fractional_matrix_power(m, t)


def _power_dt(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    return y @ _each(sla.logm, a)


@frule.register(sla.fractional_matrix_power)
def fractional_matrix_power_frule(dargs, a, t):
    y = sla.fractional_matrix_power(a, t)
    a_dot, t_dot = _value(dargs[1]), _value(dargs[2])
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

    def fractional_matrix_power_pullback(y_bar):
        y_bar = _value(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), project_t(ZeroTangent())
        a_arr = np.asarray(a)
        a_bar = _block_frechet(_power(t), _H(a_arr), np.asarray(y_bar))
        # <y_bar, A^t log(A)> = Re sum(conj(A^t log A) * y_bar)
        t_bar = np.real(np.sum(np.conj(_power_dt(a_arr, y)) * y_bar))
        return NoTangent(), project_a(a_bar), project_t(t_bar)

    return y, fractional_matrix_power_pullback
