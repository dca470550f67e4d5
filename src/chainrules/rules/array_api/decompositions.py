"""Rules for the matrix functions and decompositions of the array API ``linalg`` extension.

``inv``, ``solve``, ``det``, ``slogdet``, ``cholesky``, ``eigh``, ``eigvalsh``, ``svd``,
``svdvals``, ``qr`` and ``pinv``, written once against ``xp`` (the pullbacks call only
``xp.linalg`` functions that have rules themselves, so they are differentiable again). The
formulas and conventions are those of ``rules/numpy/linalg.py``, without NumPy's LAPACK
shortcuts: ``cholesky`` and ``eigh``/``eigvalsh`` are differentiated as functions of
the part of the matrix the library reads, and the cotangent lands on it: the lower
triangle for ``array_api_strict`` and PyTorch (the upper one for ``cholesky(upper=True)``
in PyTorch), the symmetrized matrix ``(A + A^H) / 2`` for JAX (`triangle_read` asks each
library once, on a constant matrix); for a Hermitian tangent all agree. Eigenvector
and singular-vector gauges are LAPACK's (``diag(V^H dV) = 0``, complex phases split evenly
between ``U`` and
``V``), degenerate eigen- or singular values drop the ill-defined terms.
``svd(full_matrices=True)`` of a non-square matrix: the pullback takes the cotangent of
the extra columns of ``U`` (rows of ``Vh``), which are not a function of ``A``, as zero
(PyTorch's convention); its pushforward is not written (nor in JAX or PyTorch). ``qr`` of
a wide matrix: ``A = [X Y] = Q [R1 R2]`` with ``X`` square (PyTorch's derivation).
``qr(mode="complete")`` of a tall matrix: the derivative of LAPACK's Householder
completion of ``Q`` (JAX's, arXiv:2409.13374; PyTorch refuses; another backend's
completion may differ).
``det``'s derivative is the adjugate, from the SVD (`adjugate`), so it is finite and
right at a singular matrix too, as JAX's; the other derivatives at a singular matrix
(``inv``, ``slogdet``, ``solve``) come out as inf or NaN, never as a finite wrong value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from chainrules import core
from chainrules.core import NoTangent, Tangent, ZeroTangent, array_namespace, not_implemented
from chainrules.rules import _kit as kit
from chainrules.rules.array_api._common import conj, is_complex, mH
from chainrules.rules.array_api.statistical import others_product

__all__ = ["register"]


def _diag(xp: Any, x: Any) -> Any:
    return xp.linalg.diagonal(x)


def _diag_embed(xp: Any, v: Any) -> Any:
    return xp.expand_dims(v, axis=-1) * xp.eye(v.shape[-1], dtype=v.dtype)


def _imag_diag(xp: Any, d: Any, dtype: Any) -> Any:
    """``diag(1j * Im(d))`` as a matrix of the complex ``dtype``."""
    return _diag_embed(xp, xp.astype(xp.imag(d), dtype) * 1j)


def _her_input(xp: Any, a: Any) -> Any:
    """The Hermitian matrix LAPACK sees when it reads the lower triangle of ``a``."""
    out = xp.tril(a) + mH(xp, xp.tril(a, k=-1))
    if is_complex(xp, out):
        out = out - _imag_diag(xp, _diag(xp, out), out.dtype)
    return out


def _her_cotangent(xp: Any, s: Any) -> Any:
    """Adjoint of ``_her_input``: the cotangent on the lower triangle."""
    d = _diag(xp, s)
    d = xp.real(d) if is_complex(xp, d) else d
    return xp.tril(s, k=-1) + xp.tril(mH(xp, s), k=-1) + _diag_embed(xp, xp.astype(d, s.dtype))


def _inv_gaps(xp: Any, gaps: Any, scale: Any, dtype: Any) -> Any:
    """``1 / gaps`` off the diagonal; 0 on it and where the gap is at round-off level."""
    n = gaps.shape[-1]
    tol = n * xp.finfo(dtype).eps * xp.expand_dims(xp.expand_dims(scale, axis=-1), axis=-1)
    keep = xp.logical_and(xp.abs(gaps) > tol,
                          xp.logical_not(xp.eye(n, dtype=xp.bool)))
    safe = xp.where(keep, gaps, xp.ones_like(gaps))
    return xp.where(keep, 1 / safe, xp.zeros_like(gaps))


def _max_abs(xp: Any, v: Any) -> Any:
    return xp.maximum(xp.max(xp.abs(v), axis=-1), xp.finfo(xp.float64).smallest_normal)


def _field(t: Any, name: str, index: int) -> Any:
    """Field ``name`` (item ``index``) of a structured cotangent; None when zero."""
    t = core.unthunk(t)
    if kit.is_zero(t):
        return None
    if isinstance(t, Tangent):
        backing = t.backing
        value = backing.get(name, ZeroTangent()) if isinstance(backing, dict) else backing[index]
        return kit.nonzero(value)
    return kit.nonzero(t[index])


def _result_tangent(y: Any, **fields: Any) -> Tangent:
    """The tangent of a decomposition's result: a namedtuple (NumPy, JAX,
    array_api_strict) by field, a structseq (PyTorch's ``torch.return_types``) by
    position, ``fields`` given in the result's order."""
    if hasattr(type(y), "_fields"):
        return Tangent[type(y)](**fields)
    return Tangent[type(y)](*fields.values())


def _zero_tangent_of(xp: Any, y: Any) -> Any:
    """A zero tangent shaped like the result ``y`` (an array or a tuple of arrays)."""
    if isinstance(y, tuple):
        fields = getattr(type(y), "_fields", None) or range(len(y))
        return _result_tangent(y, **{str(k): xp.zeros_like(v) for k, v in zip(fields, y)})
    return xp.zeros_like(y)


def _rows(v: Any) -> Any:
    """``v[..., None, :]``: scales the columns of a matrix."""
    return v[..., None, :]


def _cols(v: Any) -> Any:
    """``v[..., :, None]``: scales the rows of a matrix."""
    return v[..., :, None]


def _unary_rules(f: Any, name: str, pushforward: Callable[..., Any],
                 pullback: Callable[..., Any]) -> None:
    """Rules for a one-matrix function ``f(a, **kw)``: ``pushforward(xp, a, y, a_dot, kw)``
    and ``pullback(xp, a, y, y_bar, kw)`` (``y_bar`` as given: structured for
    namedtuple outputs); either may return a NotImplementedTangent."""

    def matrix_rrule(a: Any, **kw: Any) -> Any:
        y = f(a, **kw)
        project_a = core.ProjectTo(a)

        @kit.zero_guard(lambda: (NoTangent(), project_a(ZeroTangent())))
        def matrix_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(a)
            if math.prod(a.shape) == 0:  # a 0x0 matrix or an empty stack: nothing to move
                return NoTangent(), project_a(xp.zeros_like(a))
            a_bar = pullback(xp, a, y, y_bar, kw)
            if a_bar is None:
                return NoTangent(), project_a(ZeroTangent())
            return NoTangent(), project_a(a_bar) if hasattr(a_bar, "shape") else a_bar

        return y, matrix_pullback

    def matrix_frule(dargs: tuple, a: Any, **kw: Any) -> Any:
        y = f(a, **kw)
        a_dot = kit.nonzero(dargs[1])
        if a_dot is None:
            return y, ZeroTangent()
        xp = array_namespace(a)
        if math.prod(a.shape) == 0:
            return y, _zero_tangent_of(xp, y)
        return y, pushforward(xp, a, y, a_dot, kw)

    kit.define_rules(f, object, frule_fn=matrix_frule, rrule_fn=matrix_rrule, name=name)


# ------------------------------------------------------------------ inv, det, slogdet


def _inv_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    return -xp.matmul(xp.matmul(y, a_dot), y)


def _inv_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    y_h = mH(xp, y)
    return -xp.matmul(xp.matmul(y_h, y_bar), y_h)


def _trace_of_solve(xp: Any, a: Any, a_dot: Any) -> Any:
    """``tr(A^-1 dA)``."""
    return xp.sum(_diag(xp, xp.linalg.solve(a, a_dot)), axis=-1)


def finite_svd(xp: Any, a: Any) -> tuple:
    """``xp.linalg.svd(a, full_matrices=False)`` of the finite matrices of a stack, and NaN
    factors for the others: LAPACK's SVD does not converge on inf or NaN (a raw
    ``LinAlgError``), where the functions and the peers' derivatives give NaN."""
    keep = xp.all(xp.isfinite(a), axis=(-2, -1))
    safe = xp.where(keep[..., None, None], a, xp.zeros_like(a))
    u, s, vh = xp.linalg.svd(safe, full_matrices=False)
    nan = float("nan")
    return (xp.where(keep[..., None, None], u, xp.full_like(u, nan)),
            xp.where(keep[..., None], s, xp.full_like(s, nan)),
            xp.where(keep[..., None, None], vh, xp.full_like(vh, nan)))


def adjugate(xp: Any, a: Any) -> Any:
    """``adj(A)`` (``det(A) A^-1`` where ``A`` is invertible), continuous through singular
    matrices: from ``A = U S V^H``, ``adj(A) = det(U) conj(det(V)) V diag(prod_{j!=i} s_j)
    U^H``, the products of the other singular values taken without dividing."""
    u, s, vh = finite_svd(xp, a)
    others = xp.astype(others_product(xp, s, (s.ndim - 1,)), u.dtype)
    phase = xp.linalg.det(u) * xp.linalg.det(vh)  # det(U) det(V^H): a unit scalar
    phase = xp.expand_dims(xp.expand_dims(phase, axis=-1), axis=-1)
    return phase * xp.matmul(mH(xp, vh) * _rows(others), mH(xp, u))


def _det_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    # d det = tr(adj(A) dA): at a singular matrix too (JAX's value; det(A) tr(A^-1 dA)
    # would be 0 * inf there)
    return xp.sum(_diag(xp, xp.matmul(adjugate(xp, a), a_dot)), axis=-1)


def _det_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    # the adjoint of tr(adj(A) dA): y_bar adj(A)^H
    return xp.expand_dims(xp.expand_dims(y_bar, axis=-1), axis=-1) * mH(xp, adjugate(xp, a))


def _undefined_at_singular(xp: Any, sign: Any, regular: Callable[[Any], Any], a: Any,
                           shape: tuple) -> Any:
    """``regular(a)``, NaN of ``shape`` where ``sign == 0`` (run on I there)."""
    is_singular = sign == 0
    nan = complex(math.nan, math.nan) if is_complex(xp, a) else math.nan
    try:
        # no `if` on the mask: the rule runs under jax.jit too
        safe = xp.where(is_singular[..., None, None], xp.eye(a.shape[-1], dtype=a.dtype), a)
        out = regular(safe)
    except Exception as error:
        # the library's slogdet found the matrix invertible (a round-off pivot) and its
        # inv or solve found it singular (PyTorch): no derivative there either
        if "LinAlgError" not in type(error).__name__:
            raise
        return xp.full(shape, nan, dtype=a.dtype)
    mask = is_singular if len(shape) == sign.ndim else is_singular[..., None, None]
    return xp.where(mask, xp.full(shape, nan, dtype=a.dtype), out)


def slogdet_trace(xp: Any, a: Any, sign: Any, a_dot: Any) -> Any:
    """``tr(A^-1 dA)``; NaN at a singular matrix (see `slogdet_inv_h`)."""
    return _undefined_at_singular(xp, sign, lambda m: _trace_of_solve(xp, m, a_dot), a,
                                  tuple(sign.shape))


def slogdet_inv_h(xp: Any, a: Any, sign: Any) -> Any:
    """``A^-H``, the gradient of ``log det``; NaN at a singular matrix (``sign == 0``):
    ``adj(A)^H / det(A)`` tends to ``+inf adj(A)^H`` on one side of the singular matrices
    and to ``-inf adj(A)^H`` on the other (JAX and PyTorch: NaN or +-inf, the signs from
    LAPACK's zero pivot, and they disagree)."""
    return _undefined_at_singular(xp, sign, lambda m: mH(xp, xp.linalg.inv(m)), a,
                                  tuple(a.shape))


def _slogdet_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    t = slogdet_trace(xp, a, y.sign, a_dot)
    if is_complex(xp, t):
        sign_dot = y.sign * xp.astype(xp.imag(t), y.sign.dtype) * 1j
        return _result_tangent(y, sign=sign_dot, logabsdet=xp.real(t))
    return _result_tangent(y, sign=ZeroTangent(), logabsdet=t)


def _slogdet_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    sign_bar = _field(y_bar, "sign", 0)
    logabsdet_bar = _field(y_bar, "logabsdet", 1)
    complex_sign = is_complex(xp, y.sign)
    if logabsdet_bar is None and (sign_bar is None or not complex_sign):
        return None
    # the loss is Re(conj(g) tr(A^-1 dA)): its gradient is g A^-H
    g = xp.zeros_like(y.logabsdet) if logabsdet_bar is None else logabsdet_bar
    if complex_sign:
        g = xp.astype(g, y.sign.dtype)
        if sign_bar is not None:
            g = g - xp.astype(xp.imag(conj(xp, sign_bar) * y.sign), g.dtype) * 1j
    return xp.expand_dims(xp.expand_dims(g, axis=-1), axis=-1) * slogdet_inv_h(xp, a, y.sign)


# --------------------------------------------------------------------------- cholesky


def _phi(xp: Any, x: Any) -> Any:
    """Lower triangle with the diagonal halved."""
    return xp.tril(x) - 0.5 * _diag_embed(xp, _diag(xp, x))


def _lower(xp: Any, y: Any, upper: bool) -> Any:
    return mH(xp, y) if upper else y


_TRIANGLE: dict[tuple, str] = {}


def triangle_read(xp: Any, name: str, **kw: Any) -> str:
    """Which part of its input ``xp.linalg.<name>(a, **kw)`` reads: ``"lower"``
    (``array_api_strict``, LAPACK's default), ``"upper"`` (``cholesky(upper=True)`` in
    NumPy 2 and PyTorch) or ``"both"`` (JAX symmetrizes: ``(A + A^H) / 2``). Asked once
    per library and function, of constant 2x2 matrices (never of a rule's input)."""
    if getattr(xp, "__name__", "").startswith("jax"):
        # documented (lax.linalg's symmetrize_input); a probe under jax.jit would be traced
        return "both"
    f = getattr(xp.linalg, name)
    key = (id(f), tuple(sorted(kw.items())))
    known = _TRIANGLE.get(key)
    if known is None:
        a = f(xp.asarray([[4.0, 1.0], [1.0, 3.0]]), **kw)
        low = f(xp.asarray([[4.0, 1.0], [1.5, 3.0]]), **kw)  # only the lower part differs
        up = f(xp.asarray([[4.0, 1.5], [1.0, 3.0]]), **kw)  # only the upper part differs
        if isinstance(a, tuple):
            a, low, up = a[0], low[0], up[0]
        lower_read = not bool(xp.all(a == low))
        upper_read = not bool(xp.all(a == up))
        known = "both" if lower_read and upper_read else "upper" if upper_read else "lower"
        _TRIANGLE[key] = known
    return known


def _read_input(xp: Any, a_dot: Any, part: str) -> Any:
    """The Hermitian matrix the function sees, from the part of ``a_dot`` it reads."""
    if part == "both":
        return (a_dot + mH(xp, a_dot)) / 2
    return _her_input(xp, mH(xp, a_dot) if part == "upper" else a_dot)


def _read_cotangent(xp: Any, s: Any, part: str) -> Any:
    """The adjoint of `_read_input`: the cotangent on the part that was read."""
    if part == "both":
        return (s + mH(xp, s)) / 2
    if part == "upper":
        return mH(xp, _her_cotangent(xp, s))
    return _her_cotangent(xp, s)


def _cholesky_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    upper = kw.get("upper", False)
    low = _lower(xp, y, upper)
    # the part the library reads (for upper=True it depends on the library)
    m = _read_input(xp, a_dot, triangle_read(xp, "cholesky", upper=upper))
    # dL = L Phi(L^-1 dA L^-H)
    m = xp.linalg.solve(low, m)
    m = mH(xp, xp.linalg.solve(low, mH(xp, m)))
    low_dot = xp.matmul(low, _phi(xp, m))
    return mH(xp, low_dot) if upper else low_dot


def _cholesky_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    upper = kw.get("upper", False)
    low = _lower(xp, y, upper)
    low_bar = kit.nonzero(y_bar)
    low_bar = mH(xp, low_bar) if upper else low_bar
    # S = L^-H Phi(L^H L_bar) L^-1, then onto the triangle that was read
    s = _phi(xp, xp.matmul(mH(xp, low), low_bar))
    s = xp.linalg.solve(mH(xp, low), s)
    s = mH(xp, xp.linalg.solve(mH(xp, low), mH(xp, s)))
    return _read_cotangent(xp, s, triangle_read(xp, "cholesky", upper=upper))


# ------------------------------------------------------------------------------- eigh


def _eigh_f(xp: Any, w: Any) -> Any:
    return _inv_gaps(xp, _rows(w) - _cols(w), _max_abs(xp, w), w.dtype)


def _eigh_parts(xp: Any, w: Any, v: Any, a_dot: Any) -> tuple:
    seen = _read_input(xp, a_dot, triangle_read(xp, "eigvalsh"))
    m = xp.matmul(xp.matmul(mH(xp, v), seen), v)
    d = _diag(xp, m)
    return (xp.real(d) if is_complex(xp, d) else d), m


def _eigh_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    w, v = y
    w_dot, m = _eigh_parts(xp, w, v, a_dot)
    v_dot = xp.matmul(v, xp.astype(_eigh_f(xp, w), m.dtype) * m)
    return _result_tangent(y, eigenvalues=w_dot, eigenvectors=v_dot)


def _eigh_cotangent(xp: Any, w: Any, v: Any, w_bar: Any, v_bar: Any) -> Any:
    middle = xp.zeros_like(v)
    if w_bar is not None:
        w_bar = xp.real(w_bar) if is_complex(xp, w_bar) else w_bar
        middle = middle + _diag_embed(xp, xp.astype(w_bar, v.dtype))
    if v_bar is not None:
        middle = middle + xp.astype(_eigh_f(xp, w), v.dtype) * xp.matmul(mH(xp, v), v_bar)
    return _read_cotangent(xp, xp.matmul(xp.matmul(v, middle), mH(xp, v)),
                           triangle_read(xp, "eigvalsh"))


def _eigh_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    w_bar, v_bar = _field(y_bar, "eigenvalues", 0), _field(y_bar, "eigenvectors", 1)
    if w_bar is None and v_bar is None:
        return None
    return _eigh_cotangent(xp, y[0], y[1], w_bar, v_bar)


def _eigvalsh_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    _, v = xp.linalg.eigh(a)
    return _eigh_parts(xp, y, v, a_dot)[0]


def _eigvalsh_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    _, v = xp.linalg.eigh(a)
    return _eigh_cotangent(xp, y, v, kit.nonzero(y_bar), None)


# -------------------------------------------------------------------------- eig, eigvals


def _eig_f(xp: Any, w: Any) -> Any:
    gaps = _rows(w) - _cols(w)
    return _inv_gaps(xp, gaps, _max_abs(xp, w), xp.real(w).dtype if is_complex(xp, w)
                     else w.dtype)


def _largest(xp: Any, v: Any) -> tuple:
    """Row of each column's largest component (LAPACK via NumPy makes it real), and its
    value."""
    k = xp.argmax(xp.abs(v), axis=-2, keepdims=True)
    return k, xp.real(xp.take_along_axis(v, k, axis=-2)[..., 0, :])


def _rdot_columns(xp: Any, a: Any, b: Any) -> Any:
    """``Re sum(conj(a) * b)`` over each column."""
    p = conj(xp, a) * b
    return xp.sum(xp.real(p) if is_complex(xp, p) else p, axis=-2)


def _eig_tangent(xp: Any, w: Any, v: Any, a_dot: Any) -> tuple:
    m = xp.linalg.solve(v, xp.matmul(xp.astype(a_dot, v.dtype), v))  # V^-1 dA V
    w_dot = _diag(xp, m)
    x = xp.matmul(v, xp.astype(_eig_f(xp, w), m.dtype) * m)
    # unit 2-norm and the "largest component real" gauge
    dv = x - v * xp.astype(_rows(_rdot_columns(xp, v, x)), v.dtype)
    if is_complex(xp, dv):
        k, vk = _largest(xp, v)
        im = -xp.imag(xp.take_along_axis(dv, k, axis=-2)[..., 0, :]) / vk
        dv = dv + v * (xp.astype(_rows(im), dv.dtype) * 1j)
    return w_dot, dv


def _eig_cotangent(xp: Any, w: Any, v: Any, w_bar: Any, v_bar: Any) -> Any:
    dtype = xp.result_type(v, w)
    middle = xp.zeros(tuple(v.shape), dtype=dtype)
    if w_bar is not None:
        middle = middle + _diag_embed(xp, xp.astype(w_bar, dtype))
    if v_bar is not None:
        v_bar = xp.astype(v_bar, dtype)
        x_bar = v_bar - v * xp.astype(_rows(_rdot_columns(xp, v, v_bar)), dtype)
        if is_complex(xp, x_bar):
            tau = xp.imag(xp.sum(conj(xp, v_bar) * v, axis=-2))
            k, vk = _largest(xp, v)
            col = (xp.take_along_axis(x_bar, k, axis=-2)
                   + xp.astype(_rows(tau / vk), dtype) * 1j)
            # put col at row k of each column: a select, not an in-place write
            rows = xp.reshape(xp.arange(v.shape[-2]), (v.shape[-2], 1))
            x_bar = xp.where(rows == k, col, x_bar)
        f = xp.astype(_eig_f(xp, w), dtype)
        middle = middle + conj(xp, f) * xp.matmul(mH(xp, v), x_bar)
    return xp.linalg.solve(mH(xp, v), xp.matmul(middle, mH(xp, v)))


def _eig_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    w_dot, v_dot = _eig_tangent(xp, y[0], y[1], a_dot)
    return _result_tangent(y, eigenvalues=w_dot, eigenvectors=v_dot)


def _eig_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    w_bar, v_bar = _field(y_bar, "eigenvalues", 0), _field(y_bar, "eigenvectors", 1)
    if w_bar is None and v_bar is None:
        return None
    return _eig_cotangent(xp, y[0], y[1], w_bar, v_bar)


def _eig_matching(xp: Any, a: Any, y: Any) -> tuple:
    """Eigenvalues and vectors of ``eig(a)`` ordered like ``eigvals(a)`` = ``y``."""
    w, v = xp.linalg.eig(a)
    order = xp.argmin(xp.abs(_cols(y) - _rows(w)), axis=-1)
    return (xp.take_along_axis(w, order, axis=-1),
            xp.take_along_axis(v, _rows(order), axis=-1))


def _eigvals_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    _, v = _eig_matching(xp, a, y)
    return _diag(xp, xp.linalg.solve(v, xp.matmul(xp.astype(a_dot, v.dtype), v)))


def _eigvals_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    w, v = _eig_matching(xp, a, y)
    return _eig_cotangent(xp, w, v, kit.nonzero(y_bar), None)


# -------------------------------------------------------------------------------- svd


def _svd_f(xp: Any, s: Any) -> Any:
    s2 = s * s
    return _inv_gaps(xp, _rows(s2) - _cols(s2), _max_abs(xp, s2), s.dtype)


def _svd_tangent(xp: Any, u: Any, s: Any, vh: Any, a_dot: Any) -> tuple:
    """(dU, ds, dVh) of the thin SVD; complex phases split evenly between U and V."""
    v = mH(xp, vh)
    p = xp.matmul(xp.matmul(mH(xp, u), a_dot), v)
    d = _diag(xp, p)
    s_dot = xp.real(d) if is_complex(xp, d) else d
    f = xp.astype(_svd_f(xp, s), p.dtype)
    sm, sc = _rows(s), _cols(s)
    ph = mH(xp, p)
    omega_u = f * (p * sm + sc * ph)
    omega_v = f * (sc * p + ph * sm)
    if is_complex(xp, p):
        half = _imag_diag(xp, d / xp.astype(2 * s, d.dtype), p.dtype)
        omega_u = omega_u + half
        omega_v = omega_v - half
    inv_s = 1 / sm
    u_dot = xp.matmul(u, omega_u) + (xp.matmul(a_dot, v) - xp.matmul(u, p)) * inv_s
    v_dot = xp.matmul(v, omega_v) + (xp.matmul(mH(xp, a_dot), u) - xp.matmul(v, ph)) * inv_s
    return u_dot, s_dot, mH(xp, v_dot)


def _svd_cotangent(xp: Any, u: Any, s: Any, vh: Any, u_bar: Any, s_bar: Any,
                   vh_bar: Any) -> Any:
    v = mH(xp, vh)
    sm, sc = _rows(s), _cols(s)
    middle = xp.zeros((*u.shape[:-2], s.shape[-1], s.shape[-1]), dtype=u.dtype)
    if s_bar is not None:
        s_bar = xp.real(s_bar) if is_complex(xp, s_bar) else s_bar
        middle = middle + _diag_embed(xp, xp.astype(s_bar, u.dtype))
    out: Any = 0
    if u_bar is not None or vh_bar is not None:
        f = xp.astype(_svd_f(xp, s), u.dtype)
        inv_s = 1 / sm
        if u_bar is not None:
            g = xp.matmul(mH(xp, u), u_bar)
            middle = middle + (f * (g - mH(xp, g))) * sm
            if is_complex(xp, g):
                middle = middle + _imag_diag(xp, _diag(xp, g) / xp.astype(2 * s, g.dtype), g.dtype)
            out = out + xp.matmul((u_bar - xp.matmul(u, g)) * inv_s, vh)
        if vh_bar is not None:
            v_bar = mH(xp, vh_bar)
            k = xp.matmul(mH(xp, v), v_bar)
            middle = middle + sc * (f * (k - mH(xp, k)))
            if is_complex(xp, k):
                middle = middle - _imag_diag(xp, _diag(xp, k) / xp.astype(2 * s, k.dtype), k.dtype)
            out = out + xp.matmul(u, mH(xp, (v_bar - xp.matmul(v, k)) * inv_s))
    return xp.matmul(xp.matmul(u, middle), vh) + out


_SVD_FULL = ("svd(full_matrices=True) of a non-square matrix: the extra singular vectors "
             "span the complement of the range and are not a function of A; use "
             "full_matrices=False")


def _svd_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    if kw.get("full_matrices", True) and a.shape[-1] != a.shape[-2]:
        return not_implemented(_SVD_FULL)
    u_dot, s_dot, vh_dot = _svd_tangent(xp, y[0], y[1], y[2], a_dot)
    return _result_tangent(y, U=u_dot, S=s_dot, Vh=vh_dot)


def _svd_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    u_bar, s_bar, vh_bar = (_field(y_bar, "U", 0), _field(y_bar, "S", 1),
                            _field(y_bar, "Vh", 2))
    if u_bar is None and s_bar is None and vh_bar is None:
        return None
    u, s, vh = y[0], y[1], y[2]
    k = s.shape[-1]
    if u.shape[-1] > k or vh.shape[-2] > k:
        # full_matrices=True of a non-square matrix: the extra columns of U (rows of Vh)
        # are not a function of A; their cotangent is taken as zero, as PyTorch does
        u, vh = u[..., :, :k], vh[..., :k, :]
        u_bar = None if u_bar is None else u_bar[..., :, :k]
        vh_bar = None if vh_bar is None else vh_bar[..., :k, :]
    return _svd_cotangent(xp, u, s, vh, u_bar, s_bar, vh_bar)


def _svdvals_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    u, _, vh = finite_svd(xp, a)
    d = _diag(xp, xp.matmul(xp.matmul(mH(xp, u), a_dot), mH(xp, vh)))
    return xp.real(d) if is_complex(xp, d) else d


def _svdvals_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    u, _, vh = finite_svd(xp, a)
    y_bar = kit.nonzero(y_bar)
    y_bar = xp.real(y_bar) if is_complex(xp, y_bar) else y_bar
    return xp.matmul(u * xp.astype(_rows(y_bar), u.dtype), vh)


# --------------------------------------------------------------------------------- qr


def _right_solve(xp: Any, b: Any, r: Any, adjoint: bool = False) -> Any:
    """``B R^-1`` (``B R^-H`` with ``adjoint``)."""
    rr = r if adjoint else mH(xp, r)
    return mH(xp, xp.linalg.solve(rr, mH(xp, b)))


def _qr_tall_tangent(xp: Any, q: Any, r: Any, a_dot: Any) -> tuple:
    """(dQ, dR) of the reduced QR of a tall or square matrix (m >= n)."""
    x = _right_solve(xp, a_dot, r)  # dA R^-1
    c = xp.matmul(mH(xp, q), x)
    low = xp.tril(c, k=-1)
    omega = low - mH(xp, low)
    if is_complex(xp, omega):
        omega = omega + _imag_diag(xp, _diag(xp, c), c.dtype)
    return xp.matmul(q, omega - c) + x, xp.matmul(c - omega, r)


def _qr_tall_cotangent(xp: Any, q: Any, r: Any, q_bar: Any, r_bar: Any) -> Any:
    """A_bar of the reduced QR of a tall or square matrix (m >= n)."""
    m = xp.zeros((*r.shape[:-2], r.shape[-1], r.shape[-1]), dtype=q.dtype)
    if r_bar is not None:
        m = m + xp.matmul(r_bar, mH(xp, r))
    if q_bar is not None:
        m = m - xp.matmul(mH(xp, q), q_bar)
    # M - Omega^*(M): upper triangle of M with a real diagonal, mirrored below
    d = _diag(xp, m)
    d = xp.real(d) if is_complex(xp, d) else d
    k = xp.triu(m, k=1) + mH(xp, xp.triu(m, k=1)) + _diag_embed(xp, xp.astype(d, m.dtype))
    x_bar = xp.matmul(q, k)
    if q_bar is not None:
        x_bar = x_bar + q_bar
    return _right_solve(xp, x_bar, r, adjoint=True)  # X_bar R^-H


def _qr_completion(xp: Any, q: Any, n: int) -> Any:
    """``Z^H = (Q_nn - I)^-H Q_pn^H`` of a complete Householder ``Q`` (m x m, m > n)."""
    q_nn_minus_i = q[..., :n, :n] - xp.eye(n, dtype=q.dtype)
    return xp.linalg.solve(mH(xp, q_nn_minus_i), mH(xp, q[..., n:, :n]))


def _qr_complete_tangent(xp: Any, q: Any, r: Any, a_dot: Any) -> tuple:
    """(dQ, dR) of ``qr(mode="complete")``, m > n (arXiv:2409.13374, eqs. 32-33)."""
    m, n = a_dot.shape[-2:]
    if n == 0:  # no reflector: Q = I whatever A is
        return xp.zeros_like(q), xp.zeros_like(r)
    q_mn, q_mp = q[..., :, :n], q[..., :, n:]
    dq_mn, dr_nn = _qr_tall_tangent(xp, q_mn, r[..., :n, :], a_dot)
    z_h = _qr_completion(xp, q, n)
    z = mH(xp, z_h)
    s_dq = dq_mn[..., n:, :] - xp.matmul(z, dq_mn[..., :n, :])
    dq_mp = (xp.matmul(dq_mn, z_h)
             - xp.matmul(q_mn + xp.matmul(q_mp, z), mH(xp, s_dq)))
    below = xp.zeros((*dr_nn.shape[:-2], m - n, n), dtype=dr_nn.dtype)
    return xp.concat([dq_mn, dq_mp], axis=-1), xp.concat([dr_nn, below], axis=-2)


def _qr_complete_cotangent(xp: Any, q: Any, r: Any, q_bar: Any, r_bar: Any) -> Any:
    """Adjoint of `_qr_complete_tangent`."""
    n = r.shape[-1]
    if n == 0:
        return xp.zeros((*q.shape[:-1], 0), dtype=q.dtype)
    q_mn, q_mp = q[..., :, :n], q[..., :, n:]
    r_nn_bar = None if r_bar is None else r_bar[..., :n, :]
    q_mn_bar = None
    if q_bar is not None:
        z_h = _qr_completion(xp, q, n)
        g = q_bar[..., :, n:]
        # dQ_mp = dQ_mn Z^H - C (S dQ_mn)^H with C = Q_mn + Q_mp Z, S = [-Z I]
        x = xp.matmul(mH(xp, g), q_mn + xp.matmul(q_mp, mH(xp, z_h)))
        s_h_x = xp.concat([-xp.matmul(z_h, x), x], axis=-2)
        q_mn_bar = q_bar[..., :, :n] + xp.matmul(g, mH(xp, z_h)) - s_h_x
    return _qr_tall_cotangent(xp, q_mn, r[..., :n, :], q_mn_bar, r_nn_bar)


def _qr_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    q, r = y
    m, n = a.shape[-2:]
    if m > n and q.shape[-1] == m:
        q_dot, r_dot = _qr_complete_tangent(xp, q, r, a_dot)
        return _result_tangent(y, Q=q_dot, R=r_dot)
    if m >= n:
        q_dot, r_dot = _qr_tall_tangent(xp, q, r, a_dot)
        return _result_tangent(y, Q=q_dot, R=r_dot)
    # wide: A = [X Y] = Q [R1 R2] with X square, R2 = Q^H Y (PyTorch's derivation)
    q_dot, r1_dot = _qr_tall_tangent(xp, q, r[..., :, :m], a_dot[..., :, :m])
    r2_dot = (xp.matmul(mH(xp, q_dot), a[..., :, m:])
              + xp.matmul(mH(xp, q), a_dot[..., :, m:]))
    return _result_tangent(y, Q=q_dot, R=xp.concat([r1_dot, r2_dot], axis=-1))


def _qr_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    q, r = y
    q_bar, r_bar = _field(y_bar, "Q", 0), _field(y_bar, "R", 1)
    if q_bar is None and r_bar is None:
        return None
    m, n = a.shape[-2:]
    if m > n and q.shape[-1] == m:
        return _qr_complete_cotangent(xp, q, r, q_bar, r_bar)
    if m >= n:
        return _qr_tall_cotangent(xp, q, r, q_bar, r_bar)
    # wide: R2 = Q^H Y gives Y_bar = Q R2_bar and adds Y R2_bar^H to Q's cotangent
    r1_bar = None if r_bar is None else r_bar[..., :, :m]
    r2_bar = None if r_bar is None else r_bar[..., :, m:]
    if r2_bar is not None:
        extra = xp.matmul(a[..., :, m:], mH(xp, r2_bar))
        q_bar = extra if q_bar is None else q_bar + extra
    x_bar = _qr_tall_cotangent(xp, q, r[..., :, :m], q_bar, r1_bar)
    y_bar_ = (xp.zeros_like(a[..., :, m:]) if r2_bar is None
              else xp.matmul(q, r2_bar))
    return xp.concat([x_bar, xp.astype(y_bar_, x_bar.dtype)], axis=-1)


# ------------------------------------------------------------------------------- pinv


def _pinv_projectors(xp: Any, a: Any, y: Any) -> tuple:
    m, n = a.shape[-2:]
    return (xp.eye(m, dtype=y.dtype) - xp.matmul(a, y),  # I - A A+
            xp.eye(n, dtype=y.dtype) - xp.matmul(y, a))  # I - A+ A


def _pinv_pushforward(xp: Any, a: Any, y: Any, a_dot: Any, kw: dict) -> Any:
    """Golub-Pereyra: the derivative of the pseudo-inverse at constant rank."""
    rows, cols = _pinv_projectors(xp, a, y)
    a_dot_h = mH(xp, a_dot)
    mm = xp.matmul
    return (-mm(mm(y, a_dot), y) + mm(mm(mm(y, mH(xp, y)), a_dot_h), rows)
            + mm(mm(cols, a_dot_h), mm(mH(xp, y), y)))


def _pinv_pullback(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
    rows, cols = _pinv_projectors(xp, a, y)
    y_bar = kit.nonzero(y_bar)
    y_h, y_bar_h = mH(xp, y), mH(xp, y_bar)
    mm = xp.matmul
    return (-mm(mm(y_h, y_bar), y_h) + mm(mm(rows, y_bar_h), mm(y, y_h))
            + mm(mm(mm(y_h, y), y_bar_h), cols))


def _dense_pullback(pullback: Callable[..., Any]) -> Callable[..., Any]:
    def with_dense_y_bar(xp: Any, a: Any, y: Any, y_bar: Any, kw: dict) -> Any:
        return pullback(xp, a, y, kit.nonzero(y_bar), kw)

    return with_dense_y_bar


# ------------------------------------------------------------------------------ solve


def _solve_rules(f: Any) -> None:
    """``solve(x1, x2)``: ``Y = A^-1 B``; ``B_bar = A^-H Y_bar``, ``A_bar = -B_bar Y^H``
    (a 1-D ``x2`` is one column)."""

    def columns(xp: Any, v: Any, x2: Any) -> Any:
        return xp.expand_dims(v, axis=-1) if x2.ndim == 1 else v

    def solve_rrule(x1: Any, x2: Any) -> Any:
        y = f(x1, x2)
        project_x1, project_x2 = core.ProjectTo(x1), core.ProjectTo(x2)

        @kit.zero_guard(lambda: (NoTangent(), project_x1(ZeroTangent()), project_x2(ZeroTangent())))
        def solve_pullback(y_bar: Any) -> tuple:
            xp = array_namespace(x1, x2)
            b_bar = f(mH(xp, x1), columns(xp, y_bar, x2))
            a_bar = -xp.matmul(b_bar, mH(xp, columns(xp, y, x2)))
            b_bar = b_bar[..., 0] if x2.ndim == 1 else b_bar
            return NoTangent(), project_x1(a_bar), project_x2(b_bar)

        return y, solve_pullback

    def solve_frule(dargs: tuple, x1: Any, x2: Any) -> Any:
        y = f(x1, x2)
        a_dot, b_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
        if a_dot is None and b_dot is None:
            return y, ZeroTangent()
        xp = array_namespace(x1, x2)
        rhs = xp.zeros_like(columns(xp, y, x2)) if b_dot is None else columns(xp, b_dot, x2)
        if a_dot is not None:
            rhs = rhs - xp.matmul(a_dot, columns(xp, y, x2))
        y_dot = f(x1, rhs)
        return y, y_dot[..., 0] if x2.ndim == 1 else y_dot

    kit.define_rules(f, object, object, frule_fn=solve_frule, rrule_fn=solve_rrule)


_UNARY = {
    "inv": (_inv_pushforward, _dense_pullback(_inv_pullback)),
    "det": (_det_pushforward, _dense_pullback(_det_pullback)),
    "slogdet": (_slogdet_pushforward, _slogdet_pullback),
    "cholesky": (_cholesky_pushforward, _cholesky_pullback),
    "eigh": (_eigh_pushforward, _eigh_pullback),
    "eigvalsh": (_eigvalsh_pushforward, _eigvalsh_pullback),
    "eig": (_eig_pushforward, _eig_pullback),
    "eigvals": (_eigvals_pushforward, _eigvals_pullback),
    "svd": (_svd_pushforward, _svd_pullback),
    "svdvals": (_svdvals_pushforward, _svdvals_pullback),
    "qr": (_qr_pushforward, _qr_pullback),
    "pinv": (_pinv_pushforward, _pinv_pullback),
}


def register(xp: Any, fresh: Callable[[Any], bool]) -> list[str]:
    """Register the decomposition rules on ``xp.linalg``'s functions ``fresh`` accepts."""
    linalg = getattr(xp, "linalg", None)
    if linalg is None:
        return []
    done = []
    for name, (pushforward, pullback) in _UNARY.items():
        f = getattr(linalg, name, None)
        if f is not None and fresh(f):
            _unary_rules(f, name, pushforward, pullback)
            done.append("linalg." + name)
    f = getattr(linalg, "solve", None)
    if f is not None and fresh(f):
        _solve_rules(f)
        done.append("linalg.solve")
    return done
