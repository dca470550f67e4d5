"""Rules for ``scipy.linalg.funm(A, func)``, registered for ADs (``config=HasReverseMode``,
``config=HasForwardsMode``): the derivative of the user's scalar ``func`` comes from the AD
(``rrule_via_ad`` / ``frule_via_ad`` on the eigenvalues).

With ``A = V diag(w) V^-1`` (distinct eigenvalues), the Fréchet derivative is
``V (F * (V^-1 E V)) V^-1`` with the divided differences ``F_ij = (f(w_i) - f(w_j)) /
(w_i - w_j)`` and ``F_ii = f'(w_i)`` (Daleckii-Krein); the pullback is its adjoint
``V^-H (conj(F) * (V^H Y_bar V^-H)) V^H``. Eigenvalues closer than ``1e-8`` times the
largest one use ``(f'(w_i) + f'(w_j)) / 2``, a first-order approximation (``funm`` itself
is ill-conditioned there). ``func`` is treated as a plain function: a cotangent or
tangent for values it captures is ``not_implemented``.

>>> import numpy as np
>>> import scipy.linalg as sla
>>> from chainrules import rrule
>>> from chainrules.testing import ADviaRuleConfig
>>> y, funm_pullback = rrule(ADviaRuleConfig(), sla.funm, np.diag([0.0, 1.0]), np.exp)
>>> np.round(funm_pullback(np.eye(2))[1], 6)  # d tr(exp(A)) / dA = exp(A)^T
array([[1.      , 0.      ],
       [0.      , 2.718282]])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, not_implemented, unthunk
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_kernel as kernel

_CLOSURE = ("funm: derivatives with respect to values captured by func are not "
            "implemented; pass them through A or use a plain function")
_CLOSE = 1e-8


def _divided_differences(w: np.ndarray, fw: np.ndarray, dfw: np.ndarray) -> np.ndarray:
    gaps = w[:, None] - w[None, :]
    close = np.abs(gaps) <= _CLOSE * max(float(np.max(np.abs(w))), 1.0)
    safe = np.where(close, 1, gaps)
    return np.where(close, (dfw[:, None] + dfw[None, :]) / 2,
                    (fw[:, None] - fw[None, :]) / safe)


def _eig(a: Any) -> tuple:
    w, v = sla.eig(np.asarray(a))
    return w.astype(np.complex128), v.astype(np.complex128)


@frule.register(sla.funm, config=core.HasForwardsMode)
def funm_frule(config, dargs, a, func, *args, **kwargs):
    out = sla.funm(a, func, *args, **kwargs)
    y = out[0] if isinstance(out, tuple) else out
    a_dot, func_dot = kit.nonzero(dargs[1]), dargs[2]
    if not kit.is_zero(unthunk(func_dot)):
        return out, not_implemented(_CLOSURE)
    if a_dot is None:
        return out, ZeroTangent()
    w, v = _eig(a)
    fw, dfw = core.frule_via_ad(config, (NoTangent(), np.ones_like(w)), func, w)
    f = _divided_differences(w, np.asarray(fw), np.asarray(unthunk(dfw)))
    y_dot = ProjectTo(y)(v @ (f * np.linalg.solve(v, np.asarray(a_dot) @ v)) @
                         np.linalg.inv(v))
    if isinstance(out, tuple):  # disp=False also returns the error estimate
        return out, (y_dot, NoTangent())
    return out, y_dot


@core.rrule.register(sla.funm, config=core.HasReverseMode)
def funm_rrule(config, a, func, *args, **kwargs):
    out = sla.funm(a, func, *args, **kwargs)
    project_a = ProjectTo(a)
    w, v = _eig(a)
    fw, func_pullback = core.rrule_via_ad(config, func, w)

    def funm_pullback(y_bar):
        y_bar = unthunk(y_bar)
        if isinstance(out, tuple) and not isinstance(y_bar, (ZeroTangent, NoTangent)):
            y_bar = unthunk(y_bar[0])
        y_bar = kit.nonzero(y_bar)
        if y_bar is None:
            return NoTangent(), ZeroTangent(), NoTangent(), *kernel.nots(args)
        func_bar, w_bar = func_pullback(np.ones_like(w))
        if not kit.is_zero(unthunk(func_bar)):
            return NoTangent(), not_implemented(_CLOSURE), not_implemented(_CLOSURE), \
                *kernel.nots(args)
        dfw = np.conj(np.asarray(unthunk(w_bar)))  # w_bar = conj(f'(w)) for y_bar = 1
        f = _divided_differences(w, np.asarray(fw), dfw)
        v_inv_h = kernel.H(np.linalg.inv(v))
        a_bar = v_inv_h @ (np.conj(f) * (kernel.H(v) @ np.asarray(y_bar) @ v_inv_h)) @ kernel.H(v)
        return NoTangent(), project_a(a_bar), NoTangent(), *kernel.nots(args)

    return out, funm_pullback
