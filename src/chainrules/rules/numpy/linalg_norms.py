"""Rules for the norms of ``numpy.linalg``: ``norm``, ``vector_norm``, ``matrix_norm``
and ``cond``. ``ord`` 0 has derivative zero; at ties (``inf`` norms, matrix 1/inf norms)
the subgradient is averaged over the tied entries.

>>> import numpy as np
>>> from chainrules import rrule
>>> y, norm_pullback = rrule(np.linalg.norm, np.array([3.0, 4.0]))
>>> norm_pullback(1.0)[1]  # x / |x|
array([0.6, 0.8])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import NoTangent, ProjectTo, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_derivatives as deriv
from chainrules.rules import _linalg_kernel as kernel
from chainrules.rules.array_api.decompositions import finite_svd

# --------------------------------------------------------------------------------- norms


deriv.norm_rules(np.linalg.norm, (("ord", None), ("axis", None), ("keepdims", False)))


deriv.norm_rules(np.linalg.vector_norm, (("axis", None), ("keepdims", False), ("ord", 2)))


deriv.norm_rules(np.linalg.matrix_norm, (("keepdims", False), ("ord", "fro")))


# ---------------------------------------------------------------------------------- cond


def _cond_grad(x: np.ndarray, p: Any) -> np.ndarray:
    """d cond(x, p) / dx for a stack of square (or, for p in None/2/-2, any) matrices."""
    if p in (None, 2, -2):
        u, s, vh = finite_svd(np, x)
        hi, lo = s[..., :1], s[..., -1:]
        g_hi = u[..., :, :1] @ vh[..., :1, :]
        g_lo = u[..., :, -1:] @ vh[..., -1:, :]
        if p == -2:
            hi, lo, g_hi, g_lo = lo, hi, g_lo, g_hi
        # cond = hi / lo
        return (g_hi / lo[..., None] - g_lo * (hi / lo**2)[..., None])
    xi = np.linalg.inv(x)
    n1 = np.linalg.norm(x, p, axis=(-2, -1))[..., None, None]
    n2 = np.linalg.norm(xi, p, axis=(-2, -1))[..., None, None]
    g1 = deriv.matrix_norm_grad(x, p, (x.ndim - 2, x.ndim - 1))
    g2 = deriv.matrix_norm_grad(xi, p, (x.ndim - 2, x.ndim - 1))
    return n2 * g1 - n1 * (kernel.H(xi) @ g2 @ kernel.H(xi))


@frule.register(np.linalg.cond)
def cond_frule(dargs, x, *args, **kwargs):
    x_dot = kit.nonzero(dargs[1])
    y = np.linalg.cond(x, *args, **kwargs)
    if x_dot is None:
        return y, ZeroTangent()
    g = _cond_grad(kernel.as_float(x), kernel.options(args, kwargs, ("p", None))["p"])
    return y, ProjectTo(y)(kernel.rdot(g, x_dot, axis=(-2, -1)))


@rrule.register(np.linalg.cond)
def cond_rrule(x, *args, **kwargs):
    y = np.linalg.cond(x, *args, **kwargs)
    project_x = ProjectTo(x)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def cond_pullback(y_bar):
        g = _cond_grad(kernel.as_float(x), kernel.options(args, kwargs, ("p", None))["p"])
        return NoTangent(), project_x(np.real(np.asarray(y_bar))[..., None, None] * g), \
            *kernel.nots(args)

    return y, cond_pullback
