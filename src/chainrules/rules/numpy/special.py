"""Rules for ``np.i0`` (the modified Bessel function of order 0) and ``np.unwrap``.

- ``i0'(x) = I1(x)``, the modified Bessel function of order 1, computed here (NumPy has
  none, and SciPy is optional): its power series up to ``|x| = 20`` (positive terms,
  no cancellation), Hankel's asymptotic series beyond.
- ``unwrap(p)`` adds to each element a whole multiple of the period, chosen from the
  differences of ``p``: locally constant, so ``unwrap``'s derivative with respect to
  ``p`` is the identity, and with respect to ``discont`` (which only moves the choice)
  zero. ``period`` is keyword-only and so gets no tangent from a rule; an AD follows
  NumPy's own code when it is traced.

Examples:
    >>> import numpy as np
    >>> from chainrules import frule, NoTangent
    >>> y, y_dot = frule((NoTangent(), 1.0), np.i0, np.float64(1.0))
    >>> round(float(y_dot), 12)  # I1(1)
    0.565159103992
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.core import NoTangent, ZeroTangent, frule, rrule, scalar_rule
from chainrules.rules import _kit as kit


def _i1(x: Any) -> np.ndarray:
    """The modified Bessel function of the first kind of order 1 (real ``x``)."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    out = np.empty_like(ax)
    small = ax <= 20.0
    if small.any():
        xs = ax[small]
        q = xs * xs / 4.0
        term = xs / 2.0
        total = term.copy()
        for k in range(1, 80):  # positive terms; the 80th is below 1e-30 of the sum
            term = term * q / (k * (k + 1))
            total = total + term
        out[small] = total
    if (~small).any():
        xb = ax[~small]
        # Hankel: I1(x) ~ e^x / sqrt(2 pi x) * sum_k (-1)^k a_k / x^k,
        # a_k = prod_{j<=k} (4 - (2j - 1)^2) / (k! 8^k)
        total = np.ones_like(xb)
        coef = np.ones_like(xb)
        for k in range(1, 16):
            coef = coef * -(4.0 - (2 * k - 1) ** 2) / (k * 8.0 * xb)
            total = total + coef
        with np.errstate(over="ignore"):
            out[~small] = np.exp(xb) / np.sqrt(2 * np.pi * xb) * total
    return np.sign(x) * out


def _i1_partial(x: Any, *, y: Any) -> Any:
    """I1'(x) = I0(x) - I1(x) / x (1/2 at 0; infinite where I1 overflows)."""
    x = np.asarray(x, dtype=np.float64)
    zero = x == 0
    slope = np.i0(x) - y / np.where(zero, 1.0, x)
    return np.where(zero, 0.5, np.where(np.isinf(y), np.inf, slope))


# i0's rules call _i1: with a rule of its own, they are differentiable again (a Hessian
# through np.i0), and _i1's partial calls np.i0, so every order is
scalar_rule(_i1, _i1_partial)


@frule.register(np.i0, object)
def i0_frule(dargs: tuple, x: Any) -> Any:
    y = np.i0(x)
    x_dot = kit.nonzero(dargs[1])
    if x_dot is None:
        return y, kit.zero_for(y)
    return y, kit.fit_output(_i1(x) * kit.dense_tangent(x_dot, x), y)


@rrule.register(np.i0, object)
def i0_rrule(x: Any) -> Any:
    y = np.i0(x)
    project_x = kit.array_projector(x)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(x)))
    def i0_pullback(y_bar: Any) -> tuple:
        x_bar = _i1(x) * np.asarray(y_bar)
        if np.ndim(x_bar) > np.ndim(x):
            x_bar = x_bar.reshape(np.shape(x))
        return NoTangent(), project_x(x_bar)

    return y, i0_pullback


def _discont_bar(args: tuple) -> tuple:
    """The cotangents of the positional options: ``discont`` (a float: zero, it only
    moves where the multiples change) and ``axis``."""
    return tuple(ZeroTangent() if i == 0 and isinstance(a, (float, np.floating))
                 else NoTangent() for i, a in enumerate(args))


@frule.register(np.unwrap, object, ...)
def unwrap_frule(dargs: tuple, p: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.unwrap(p, *args, **kwargs)
    p_dot = kit.nonzero(dargs[1])
    if p_dot is None:
        return y, kit.zero_for(y)
    return y, kit.fit_output(kit.dense_tangent(p_dot, p), y)


@rrule.register(np.unwrap, object, ...)
def unwrap_rrule(p: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.unwrap(p, *args, **kwargs)
    project_p = kit.array_projector(p)
    rest = _discont_bar(args)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(p), *rest))
    def unwrap_pullback(y_bar: Any) -> tuple:
        return (NoTangent(), project_p(np.broadcast_to(y_bar, np.shape(y))), *rest)

    return y, unwrap_pullback
