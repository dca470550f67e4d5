"""Rules for NumPy's polynomial functions (coefficients highest power first).

- linear in the coefficients: ``polyadd``, ``polysub``, ``polyder``, ``polyint`` (also
  w.r.t. the integration constants ``k``);
- bilinear: ``polymul`` (a convolution; its adjoint is a correlation);
- ``polydiv`` (``(q, r)`` with ``u = q·v + r``): differentiating that identity gives
  ``q̇·v + ṙ = u̇ - q·v̇``, a division of ``u̇ - q·v̇`` by the fixed ``v``;
- ``polyval`` (w.r.t. ``p`` and ``x``; 1-d coefficients);
- ``poly`` (coefficients from roots; a 1-d sequence of roots), ``roots`` (a simple root
  ``z`` of ``p`` moves by ``ż = -ṗ(z) / p'(z)``, with ``p`` including any leading and
  trailing zero coefficients NumPy strips), ``vander``.

``numpy.poly1d`` objects are not arrays: their methods have no rules, and passing one
to these functions raises ``TypeError`` naming the function (see
:class:`Poly1dArgumentError`).

Examples:
    >>> import numpy as np
    >>> from chainrules import rrule
    >>> (q, r), pullback = rrule(np.polydiv, np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0]))
    >>> q, r
    (array([ 1., -2.]), array([0.]))
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from chainrules.core import ChainRulesError, NoTangent, Tangent, Thunk, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit


class Poly1dArgumentError(ChainRulesError, TypeError):
    """A ``numpy.poly1d`` was passed to a polynomial function's rule.

    Examples:
        >>> import numpy as np
        >>> from chainrules import rrule
        >>> rrule(np.polyadd, np.poly1d([1.0, 2.0]), np.array([1.0]))
        Traceback (most recent call last):
        ...
        chainrules.rules.numpy.polynomial.Poly1dArgumentError: the rule for numpy.polyadd ...
    """

    def __init__(self, function: Any) -> None:
        self.function = function
        super().__init__(
            f"the rule for {kit.qualified_name(function)} takes coefficient arrays, not "
            f"numpy.poly1d objects (whose results are poly1d too): pass p.coeffs instead")


def _coefficients(f: Any, *ps: Any) -> list[np.ndarray]:
    out = []
    for p in ps:
        if isinstance(p, np.poly1d):
            raise Poly1dArgumentError(f)
        out.append(np.atleast_1d(np.asarray(p)))
    return out


def _pad_to(v: np.ndarray, n: int) -> np.ndarray:
    """``v`` with leading zeros to length ``n`` (higher powers first)."""
    return np.concatenate([np.zeros(n - len(v), v.dtype), v]) if len(v) < n else v


def _tangent(t: Any, x: Any) -> Any:
    """A 1-d coefficient tangent as an array, or None for a zero (or an integer ``x``)."""
    t = kit.nonzero(t)
    if t is None or not kit.is_differentiable(x):
        return None
    return np.atleast_1d(kit.dense_tangent(t, x))


def _output_bars(y_bar: Any, n: int) -> list:
    """The items of the cotangent of a tuple output, unthunked; None for a zero item."""
    items = y_bar.backing if isinstance(y_bar, Tangent) else y_bar
    return [kit.nonzero(b) for b in items][:n]


# ------------------------------------------------------------------- polyadd, polysub


def _add_rules(f: Any, sign: float) -> None:
    name = f.__name__

    def add_frule(dargs: tuple, a1: Any, a2: Any) -> Any:
        y = f(a1, a2)
        d1, d2 = _tangent(dargs[1], a1), _tangent(dargs[2], a2)
        if d1 is None and d2 is None:
            return y, kit.zero_for(y)
        n = len(y)
        y_dot = 0 if d1 is None else _pad_to(d1, n)
        if d2 is not None:
            y_dot = y_dot + sign * _pad_to(d2, n)
        return y, kit.fit_output(y_dot, y)

    def add_rrule(a1: Any, a2: Any) -> Any:
        c1, c2 = _coefficients(f, a1, a2)
        y = f(a1, a2)
        project_1, project_2 = kit.array_projector(a1), kit.array_projector(a2)

        @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(a1), kit.zero_for(a2)))
        def add_pullback(y_bar: Any) -> tuple:
            y_bar = np.asarray(y_bar)
            b1 = y_bar[len(y_bar) - len(c1):]
            b2 = sign * y_bar[len(y_bar) - len(c2):]
            return NoTangent(), project_1(b1.reshape(np.shape(a1))), project_2(
                b2.reshape(np.shape(a2)))

        return y, add_pullback

    add_frule.__qualname__ = f"{name}_frule"
    add_rrule.__qualname__ = f"{name}_rrule"
    frule.register(f, object, object)(add_frule)
    rrule.register(f, object, object)(add_rrule)


_add_rules(np.polyadd, 1.0)
_add_rules(np.polysub, -1.0)


# ------------------------------------------------------------------------------ polymul


def _polymul_factors(a1: Any, a2: Any) -> list[np.ndarray]:
    """The coefficients ``np.polymul`` multiplies: an empty one is the zero polynomial
    ``[0]`` (NumPy's ``poly1d([])``)."""
    return [c if len(c) else np.zeros(1, c.dtype) for c in _coefficients(np.polymul, a1, a2)]


@frule.register(np.polymul, object, object)
def polymul_frule(dargs: tuple, a1: Any, a2: Any) -> Any:
    c1, c2 = _polymul_factors(a1, a2)
    y = np.polymul(a1, a2)
    # an empty input has no coefficient to perturb
    d1 = _tangent(dargs[1], a1) if np.size(a1) else None
    d2 = _tangent(dargs[2], a2) if np.size(a2) else None
    if d1 is None and d2 is None:
        return y, kit.zero_for(y)
    y_dot = 0 if d1 is None else np.convolve(d1, c2)
    if d2 is not None:
        y_dot = y_dot + np.convolve(c1, d2)
    return y, kit.fit_output(y_dot, y)


@rrule.register(np.polymul, object, object)
def polymul_rrule(a1: Any, a2: Any) -> Any:
    c1, c2 = _polymul_factors(a1, a2)
    y = np.polymul(a1, a2)
    project_1, project_2 = kit.array_projector(a1), kit.array_projector(a2)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(a1), kit.zero_for(a2)))
    def polymul_pullback(y_bar: Any) -> tuple:
        y_bar = np.asarray(y_bar)
        # the adjoint of a full convolution with c is a valid correlation with c
        # (np.correlate conjugates its second argument)
        b1 = np.correlate(y_bar, c2, "valid")[:np.size(a1)]
        b2 = np.correlate(y_bar, c1, "valid")[:np.size(a2)]
        return NoTangent(), project_1(b1.reshape(np.shape(a1))), project_2(
            b2.reshape(np.shape(a2)))

    return y, polymul_pullback


# ------------------------------------------------------------------------------ polydiv


def _division_matrices(v: np.ndarray, n: int, nr: int) -> tuple[np.ndarray, np.ndarray]:
    """The matrices of the linear map ``w -> (q, r)`` of dividing a length-``n``
    polynomial ``w`` by the fixed ``v``, without NumPy's trimming of ``r``: ``r`` is the
    last ``nr`` coefficients of the remainder."""
    m = len(v)
    dtype = np.result_type(v.dtype, np.float64)
    if n < m:  # q = [0], r = w
        return np.zeros((1, n), dtype), np.eye(n, dtype=dtype)[n - nr:]
    nq = n - m + 1
    # column j: the division of the j-th unit polynomial. Rows are kept in lists and
    # stacked at the end (no writes into an array: run on values of an outer trace, for
    # a second derivative, this stays differentiable)
    w = list(np.eye(n, dtype=dtype))
    q = []
    for k in range(nq):
        q.append(w[k] / v[0])
        for i in range(m):
            w[k + i] = w[k + i] - v[i] * q[k]
    return np.stack(q).astype(dtype, copy=False), np.stack(w[n - nr:]).reshape(
        nr, n).astype(dtype, copy=False)


@frule.register(np.polydiv, object, object)
def polydiv_frule(dargs: tuple, u: Any, v: Any) -> Any:
    cu, cv = _coefficients(np.polydiv, u, v)
    y = q, r = np.polydiv(u, v)
    du, dv = _tangent(dargs[1], u), _tangent(dargs[2], v)
    if du is None and dv is None:
        return y, Tangent[tuple](kit.zero_for(q), kit.zero_for(r))
    w = np.zeros(len(cu), np.result_type(cu, cv, np.float64)) if du is None else du
    if dv is not None and len(cu) >= len(cv):
        w = w - np.convolve(q, dv)
    jq, jr = _division_matrices(cv, len(cu), len(r))
    return y, Tangent[tuple](kit.fit_output(jq @ w, q), kit.fit_output(jr @ w, r))


@rrule.register(np.polydiv, object, object)
def polydiv_rrule(u: Any, v: Any) -> Any:
    cu, cv = _coefficients(np.polydiv, u, v)
    y = q, r = np.polydiv(u, v)
    project_u, project_v = kit.array_projector(u), kit.array_projector(v)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(u), kit.zero_for(v)))
    def polydiv_pullback(y_bar: Any) -> tuple:
        q_bar, r_bar = _output_bars(y_bar, 2)
        if q_bar is None and r_bar is None:
            return NoTangent(), kit.zero_for(u), kit.zero_for(v)
        jq, jr = _division_matrices(cv, len(cu), len(r))
        w_bar = np.zeros(len(cu), np.result_type(jq, q))
        if q_bar is not None:
            w_bar = w_bar + jq.conj().T @ np.asarray(q_bar)
        if r_bar is not None:
            w_bar = w_bar + jr.conj().T @ np.asarray(r_bar)
        if len(cu) >= len(cv):
            v_bar = -np.correlate(w_bar, q, "valid")
        else:
            v_bar = np.zeros(len(cv), w_bar.dtype)
        return NoTangent(), project_u(w_bar.reshape(np.shape(u))), project_v(
            v_bar.reshape(np.shape(v)))

    return y, polydiv_pullback


# ---------------------------------------------------------------------- polyder, polyint


def _options(f: Any, args: tuple, kwargs: dict) -> dict:
    """The optional arguments of ``f(x, *args, **kwargs)`` by name, defaults filled in."""
    bound = inspect.signature(f).bind(None, *args, **kwargs)
    bound.apply_defaults()
    return dict(list(bound.arguments.items())[1:])


def _tail(args: tuple) -> tuple:
    """The cotangents of positional options: none of them is differentiated."""
    return (NoTangent(),) * len(args)


@frule.register(np.polyder, object, ...)
def polyder_frule(dargs: tuple, p: Any, *args: Any, **kwargs: Any) -> Any:
    _coefficients(np.polyder, p)
    y = np.polyder(p, *args, **kwargs)
    d = _tangent(dargs[1], p)
    if d is None:
        return y, kit.zero_for(y)
    return y, kit.fit_output(np.polyder(d, *args, **kwargs), y)


@rrule.register(np.polyder, object, ...)
def polyder_rrule(p: Any, *args: Any, **kwargs: Any) -> Any:
    (c,) = _coefficients(np.polyder, p)
    y = np.polyder(p, *args, **kwargs)
    m = _options(np.polyder, args, kwargs)["m"]
    project_p = kit.array_projector(p)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(p), *_tail(args)))
    def polyder_pullback(y_bar: Any) -> tuple:
        # y[j] = c[j] * s[j] with s = polyder(ones): the adjoint scales and pads
        scale = np.polyder(np.ones(len(c)), m)
        y_bar = np.asarray(y_bar)
        p_bar = np.zeros(len(c), np.result_type(y_bar, np.float64))
        p_bar[:len(scale)] = scale * y_bar
        return (NoTangent(), project_p(p_bar.reshape(np.shape(p))), *_tail(args))

    return y, polyder_pullback


def _polyint_parts(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The matrices ``A`` and ``B`` of ``polyint(c, m, k) = A @ c + B @ k`` for ``n``
    coefficients ``c`` and the vector ``k`` of the ``m`` constants."""
    a = np.zeros((n + m, n))
    for j in range(n):
        a[:, j] = np.polyint(np.eye(n)[j], m, np.zeros(m))
    b = np.zeros((n + m, m))
    for j in range(m):
        b[:, j] = np.polyint(np.zeros(n), m, np.eye(m)[j])
    return a, b


@frule.register(np.polyint, object, ...)
def polyint_frule(dargs: tuple, p: Any, *args: Any, **kwargs: Any) -> Any:
    (c,) = _coefficients(np.polyint, p)
    y = np.polyint(p, *args, **kwargs)
    opts = _options(np.polyint, args, kwargs)
    m, k = int(opts["m"]), opts["k"]
    d = _tangent(dargs[1], p)
    # k gets a tangent only when passed positionally (keyword arguments have none)
    dk = _tangent(dargs[3], k) if len(dargs) > 3 and k is not None else None
    if d is None and dk is None:
        return y, kit.zero_for(y)
    a, b = _polyint_parts(len(c), m)
    y_dot = 0 if d is None else a @ d
    if dk is not None:
        y_dot = y_dot + b @ np.broadcast_to(dk, (m,))
    return y, kit.fit_output(y_dot, y)


@rrule.register(np.polyint, object, ...)
def polyint_rrule(p: Any, *args: Any, **kwargs: Any) -> Any:
    (c,) = _coefficients(np.polyint, p)
    y = np.polyint(p, *args, **kwargs)
    opts = _options(np.polyint, args, kwargs)
    m, k = int(opts["m"]), opts["k"]
    project_p = kit.array_projector(p)

    def zeros() -> tuple:
        out = (NoTangent(), kit.zero_for(p), *_tail(args))
        return out[:3] + ((kit.zero_for(k),) if len(args) > 1 else ())

    @kit.zero_guard(zeros)
    def polyint_pullback(y_bar: Any) -> tuple:
        a, b = _polyint_parts(len(c), m)
        y_bar = np.asarray(y_bar)
        out = (NoTangent(), project_p((a.T @ y_bar).reshape(np.shape(p))), *_tail(args))
        if len(args) > 1:  # k given positionally
            k_bar = b.T @ y_bar
            if np.size(k) == 1:
                k_bar = np.sum(k_bar).reshape(np.shape(k))
            out = (*out[:3], kit.array_projector(k)(k_bar))
        return out

    return y, polyint_pullback


# --------------------------------------------------------------------------------- poly


def _poly_columns(r: np.ndarray) -> np.ndarray:
    """``d poly(r) / d r``: column ``i`` is ``-[0, poly(r without r_i)]``."""
    n = len(r)
    cols = [np.concatenate([[0], -np.atleast_1d(np.poly(np.delete(r, i)))]) for i in range(n)]
    return np.stack(cols, axis=1) if n else np.zeros((1, 0))


def _check_roots(r: np.ndarray) -> None:
    if r.ndim != 1:
        raise NotImplementedError(
            "the rule for numpy.poly takes a 1-d sequence of roots; for the characteristic "
            "polynomial of a matrix A differentiate np.poly(np.linalg.eigvals(A))")


@frule.register(np.poly, object)
def poly_frule(dargs: tuple, seq_of_zeros: Any) -> Any:
    (r,) = _coefficients(np.poly, seq_of_zeros)
    _check_roots(r)
    y = np.poly(seq_of_zeros)
    d = _tangent(dargs[1], seq_of_zeros)
    if d is None:
        return y, kit.zero_for(y)
    return y, kit.fit_output(_poly_columns(r) @ d, y)


@rrule.register(np.poly, object)
def poly_rrule(seq_of_zeros: Any) -> Any:
    (r,) = _coefficients(np.poly, seq_of_zeros)
    _check_roots(r)
    y = np.poly(seq_of_zeros)
    project_r = kit.array_projector(seq_of_zeros)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(seq_of_zeros)))
    def poly_pullback(y_bar: Any) -> tuple:
        # no roots: poly is the number 1 (its cotangent a scalar), r_bar is empty
        r_bar = _poly_columns(r).conj().T @ np.atleast_1d(y_bar)
        return NoTangent(), project_r(r_bar.reshape(np.shape(seq_of_zeros)))

    return y, poly_pullback


# -------------------------------------------------------------------------------- roots


def _root_sensitivities(c: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``d z_i / d c_j = -z_i^(n-1-j) / p'(z_i)`` as a matrix (roots by coefficients)."""
    n = len(c)
    powers = z[:, None] ** np.arange(n - 1, -1, -1)
    slope = np.polyval(np.polyder(c), z) if n > 1 else np.zeros(len(z))
    with np.errstate(divide="ignore", invalid="ignore"):
        return -powers / slope[:, None]


@frule.register(np.roots, object)
def roots_frule(dargs: tuple, p: Any) -> Any:
    (c,) = _coefficients(np.roots, p)
    z = np.roots(p)
    d = _tangent(dargs[1], p)
    if d is None or len(z) == 0:
        return z, kit.zero_for(z)
    return z, kit.fit_output(_root_sensitivities(c, z) @ d.reshape(len(c)), z)


@rrule.register(np.roots, object)
def roots_rrule(p: Any) -> Any:
    (c,) = _coefficients(np.roots, p)
    z = np.roots(p)
    project_p = kit.array_projector(p)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(p)))
    def roots_pullback(z_bar: Any) -> tuple:
        if len(z) == 0:
            return NoTangent(), kit.zero_for(p)
        p_bar = _root_sensitivities(c, z).conj().T @ np.asarray(z_bar)
        return NoTangent(), project_p(p_bar.reshape(np.shape(p)))

    return z, roots_pullback


# ------------------------------------------------------------------------------- vander


def _vander_slope(x: np.ndarray, n: int, increasing: bool) -> np.ndarray:
    """``d x_i^e / d x_i`` for the exponents of ``vander``'s columns."""
    e = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    # e * x^(e-1), with the e = 0 column exactly zero (never 0 * x^-1)
    return np.where(e > 0, e * x[:, None] ** np.maximum(e - 1, 0), 0)


@frule.register(np.vander, object, ...)
def vander_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.vander(x, *args, **kwargs)
    d = _tangent(dargs[1], x)
    if d is None:
        return y, kit.zero_for(y)
    opts = _options(np.vander, args, kwargs)
    slope = _vander_slope(np.asarray(x), y.shape[1], opts["increasing"])
    return y, kit.fit_output(slope * d[:, None], y)


@rrule.register(np.vander, object, ...)
def vander_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.vander(x, *args, **kwargs)
    opts = _options(np.vander, args, kwargs)
    project_x = kit.array_projector(x)

    @kit.zero_guard(lambda: (NoTangent(), kit.zero_for(x), *_tail(args)))
    def vander_pullback(y_bar: Any) -> tuple:
        slope = _vander_slope(np.asarray(x), y.shape[1], opts["increasing"])
        x_bar = np.sum(kit.conj(slope) * np.asarray(y_bar), axis=1)
        return (NoTangent(), project_x(x_bar), *_tail(args))

    return y, vander_pullback


# --------------------------------------------------------------------------- polyval


def _powers(x: np.ndarray, n: int) -> np.ndarray:
    """x[..., None] ** [n-1, ..., 1, 0]."""
    return x[..., None] ** np.arange(n - 1, -1, -1)


@rrule.register(np.polyval)
def polyval_rrule(p, x):
    y = np.polyval(p, x)
    coefs, xs = np.asarray(p), np.asarray(x)
    if coefs.ndim != 1:
        raise NotImplementedError("the rule for numpy.polyval supports 1-d coefficients only")
    project_p, project_x = kit.array_projector(p), kit.array_projector(x)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
    def polyval_pullback(y_bar):
        y_bar = np.broadcast_to(np.asarray(y_bar), np.shape(y))

        def p_bar_thunk():
            v = np.conj(_powers(xs, len(coefs))) * y_bar[..., None]
            # (reshape(-1, 0) of no coefficients is ambiguous to NumPy)
            return project_p(v.reshape(int(np.prod(v.shape[:-1])), len(coefs)).sum(axis=0))

        def x_bar_thunk():
            slope = np.polyval(np.polyder(coefs), xs) if len(coefs) > 1 else np.zeros(xs.shape)
            return project_x(np.conj(slope) * y_bar)

        return (NoTangent(), Thunk(p_bar_thunk), Thunk(x_bar_thunk))

    return y, polyval_pullback


@frule.register(np.polyval)
def polyval_frule(dargs, p, x):
    y = np.polyval(p, x)
    coefs, xs = np.asarray(p), np.asarray(x)
    if coefs.ndim != 1:
        raise NotImplementedError("the rule for numpy.polyval supports 1-d coefficients only")
    p_dot = kit.dense_tangent(dargs[1], p, zeros=False)
    x_dot = kit.dense_tangent(dargs[2], x, zeros=False)
    if p_dot is None and x_dot is None:
        return y, ZeroTangent()
    y_dot: Any = 0
    if p_dot is not None:
        y_dot = y_dot + np.polyval(p_dot, xs)
    if x_dot is not None and len(coefs) > 1:
        y_dot = y_dot + np.polyval(np.polyder(coefs), xs) * x_dot
    return y, kit.fit_output(np.broadcast_to(y_dot, np.shape(y)), y)
