"""Rules for the solves, inverses and determinants of ``numpy.linalg``: ``inv``, ``solve``,
``det``, ``slogdet``, ``pinv``, ``lstsq``, ``matrix_power``, ``multi_dot``, ``tensorsolve``
and ``tensorinv`` (conventions: ``chainrules.rules.numpy.linalg``).

``solve``, ``det``, ``slogdet`` factor the matrix once (LU via SciPy for a single matrix
when SciPy is installed) and reuse the factors in the pullback.

>>> import numpy as np
>>> from chainrules import rrule
>>> y, inv_pullback = rrule(np.linalg.inv, np.array([[2.0, 0.0], [0.0, 4.0]]))
>>> inv_pullback(np.eye(2))[1]  # -A^-H A^-H
array([[-0.25  , -0.    ],
       [-0.    , -0.0625]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, ProjectTo, Thunk, ZeroTangent, frule, rrule
from chainrules.rules import _kit as kit
from chainrules.rules import _linalg_derivatives as deriv
from chainrules.rules import _linalg_kernel as kernel
from chainrules.rules.array_api.decompositions import adjugate, slogdet_inv_h, slogdet_trace

_SlogdetResult = type(np.linalg.slogdet(np.eye(1)))


class _LU:
    """Factorization of a square matrix (stack), solving with ``A`` and ``A^H``.

    A single matrix is LU-factored once with LAPACK (via SciPy, when installed)
    and the factors are reused: each later solve costs O(n^2) per right-hand
    side. A stack falls back to ``np.linalg.solve`` per call. ``strict``:
    raise ``LinAlgError`` for an exactly singular matrix (as ``np.linalg.solve``).
    """

    def __init__(self, a: np.ndarray, strict: bool = True) -> None:
        self.a = a
        self.factors = None
        self.singular = False
        sla = kernel.scipy_linalg()
        # Factor plain arrays only: the methods' fallbacks (np.linalg.solve, det, inv)
        # have rules themselves, so a rule run again on an AD's traced values (for a
        # second derivative) stays differentiable.
        if type(a) is np.ndarray and a.ndim == 2 and sla is not None and a.shape[0] > 0:
            # LAPACK directly: SciPy's lu_factor/lu_solve wrappers cost more than an
            # O(n^2) solve for n ~ 100
            getrf, self.getrs, self.getri = sla.lapack.get_lapack_funcs(
                ("getrf", "getrs", "getri"), (a,))
            lu, piv, info = getrf(a)
            self.singular = info > 0
            if self.singular and strict:
                raise np.linalg.LinAlgError("Singular matrix")
            self.factors = (lu, piv)

    def slogdet(self) -> Any:
        if self.factors is None:
            return np.linalg.slogdet(self.a)
        lu, piv = self.factors
        d = np.diagonal(lu)
        swaps = np.count_nonzero(piv != np.arange(piv.shape[0]))
        ad = np.abs(d)
        if self.singular:
            sign, logabsdet = d.dtype.type(0), ad.dtype.type(-np.inf)
        else:
            sign = np.prod(d / ad) * (-1 if swaps % 2 else 1)
            logabsdet = np.sum(np.log(ad))
        return _SlogdetResult(sign, logabsdet)

    def solve(self, b: np.ndarray, adjoint: bool = False) -> np.ndarray:
        """``A^-1 b`` (``A^-H b``) for ``b`` of shape ``(..., n, k)``."""
        if self.factors is None or type(b) is not np.ndarray:
            # (a right-hand side that is an AD's traced value, in a second derivative:
            # np.linalg.solve has a rule, LAPACK's getrs would need a plain array)
            return np.linalg.solve(kernel.H(self.a) if adjoint else self.a, b)
        lu = self.factors[0]
        n = self.a.shape[-1]
        batch = b.shape[:-2]
        k = b.shape[-1]
        flat = b if not batch else np.moveaxis(b, -2, 0).reshape(n, -1)
        if np.iscomplexobj(flat) and not np.iscomplexobj(lu):
            # real factors: solve for the real and imaginary parts
            x = self._getrs(flat.real, adjoint) + 1j * self._getrs(flat.imag, adjoint)
        else:
            x = self._getrs(flat, adjoint)
        return self._unflat(x, batch, k)

    def _getrs(self, b: np.ndarray, adjoint: bool) -> np.ndarray:
        lu, piv = self.factors
        x, info = self.getrs(lu, piv, np.asarray(b, dtype=lu.dtype), trans=2 if adjoint else 0)
        if info != 0:  # pragma: no cover - argument errors only
            raise np.linalg.LinAlgError(f"getrs failed (info={info})")
        return x

    def _unflat(self, x: np.ndarray, batch: tuple, k: int) -> np.ndarray:
        if not batch:
            return x
        n = self.a.shape[-1]
        return np.moveaxis(x.reshape((n, *batch, k)), 0, -2)

    def det(self) -> Any:
        if self.factors is None:
            return np.linalg.det(self.a)
        lu, piv = self.factors
        swaps = np.count_nonzero(piv != np.arange(piv.shape[0]))
        d = np.prod(np.diagonal(lu))
        return -d if swaps % 2 else d

    def inv_h(self) -> np.ndarray:
        """``A^-H`` (from the stored factors with LAPACK ``getri`` when there are some)."""
        if self.factors is None:
            return kernel.H(np.linalg.inv(self.a))
        lu, piv = self.factors
        inv, info = self.getri(lu, piv)
        if info != 0:
            raise np.linalg.LinAlgError("Singular matrix")
        return kernel.H(inv)


# ----------------------------------------------------------------------------------- inv


@frule.register(np.linalg.inv)
def inv_frule(dargs, a):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.inv(a)
    if a_dot is None:
        return y, ZeroTangent()
    return y, ProjectTo(y)(-(y @ a_dot @ y))


@rrule.register(np.linalg.inv)
def inv_rrule(a):
    y = np.linalg.inv(a)
    project_a = ProjectTo(a)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def inv_pullback(y_bar):
        y_h = kernel.H(y)
        return NoTangent(), project_a(-(y_h @ y_bar @ y_h))

    return y, inv_pullback


# --------------------------------------------------------------------------------- solve


def _solve_parts(a: np.ndarray, b: np.ndarray) -> tuple:
    """(factor, b as a matrix stack, whether b is a vector)."""
    vec = np.ndim(b) == 1
    bm = b[:, None] if vec else b
    dtype = np.result_type(
        kernel.as_float(a), kernel.as_float(b)
    )  # NumPy solves in the common type
    return _LU(kernel.as_float(a).astype(dtype, copy=False)), bm, vec


@frule.register(np.linalg.solve)
def solve_frule(dargs, a, b):
    if (delegated := kit.foreign_rule(frule, np.linalg.solve, (a, b), {}, dargs)) is not False:
        return delegated  # dask / torch / JAX operands: their namespace's rule
    a_dot, b_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    lu, bm, vec = _solve_parts(a, b)
    ym = lu.solve(kernel.as_float(bm))
    y = ym[..., 0] if vec else ym
    project_y = ProjectTo(y)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    rhs = 0
    if b_dot is not None:
        rhs = b_dot[:, None] if vec else b_dot
    if a_dot is not None:
        rhs = rhs - a_dot @ ym
    y_dot = lu.solve(np.asarray(rhs))
    return y, project_y(y_dot[..., 0] if vec else y_dot)


@rrule.register(np.linalg.solve)
def solve_rrule(a, b):
    if (delegated := kit.foreign_rule(rrule, np.linalg.solve, (a, b), {})) is not False:
        return delegated
    lu, bm, vec = _solve_parts(a, b)
    ym = lu.solve(kernel.as_float(bm))
    y = ym[..., 0] if vec else ym
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    @kit.zero_guard((NoTangent(), ZeroTangent(), ZeroTangent()))
    def solve_pullback(y_bar):
        g = lu.solve(y_bar[..., None] if vec else y_bar, adjoint=True)
        b_bar = project_b(g[..., 0] if vec else g)
        a_bar = Thunk(lambda: project_a(-kernel.outer_h(g, ym)))
        return NoTangent(), a_bar, b_bar

    return y, solve_pullback


# -------------------------------------------------------------------------- det, slogdet


def _adjugate(lu: _LU) -> np.ndarray:
    """``adj(A)``: ``det(A) A^-1`` from the LU factors; from the SVD where ``A`` (or a
    matrix of the stack) is singular and ``A^-1`` does not exist (JAX's value there)."""
    if not lu.singular:
        try:
            return np.asarray(lu.det())[..., None, None] * kernel.H(lu.inv_h())
        except np.linalg.LinAlgError:
            pass  # a singular matrix in a stack: np.linalg.inv refuses it
    return adjugate(np, lu.a)


@frule.register(np.linalg.det)
def det_frule(dargs, a):
    a_dot = kit.nonzero(dargs[1])
    lu = _LU(kernel.as_float(a), strict=False)
    y = lu.det()
    if a_dot is None:
        return y, ZeroTangent()
    if not lu.singular:
        try:
            return y, ProjectTo(y)(y * kernel.mtrace(lu.solve(a_dot)))
        except np.linalg.LinAlgError:
            pass  # a singular matrix in a stack
    return y, ProjectTo(y)(kernel.mtrace(adjugate(np, lu.a) @ a_dot))


@rrule.register(np.linalg.det)
def det_rrule(a):
    lu = _LU(kernel.as_float(a), strict=False)
    y = lu.det()
    project_a = ProjectTo(a)

    @kit.zero_guard((NoTangent(), ZeroTangent()))
    def det_pullback(y_bar):
        # d det = tr(adj(A) dA): the adjoint is y_bar adj(A)^H (= conj(det) y_bar A^-H)
        c = np.asarray(y_bar)[..., None, None]
        return NoTangent(), project_a(c * kernel.H(_adjugate(lu)))

    return y, det_pullback


def _slogdet_tangent(y: Any, t: Any) -> Any:
    """Tangent of ``slogdet`` given ``t = tr(A^-1 dA)``."""
    t = np.asarray(t)
    sign_dot: Any
    if np.iscomplexobj(y.sign):
        sign_dot = ProjectTo(y.sign)(y.sign * 1j * t.imag)
    else:
        sign_dot = ZeroTangent()
    logabsdet_dot = ProjectTo(y.logabsdet)(t.real)
    return core.Tangent[type(y)](sign=sign_dot, logabsdet=logabsdet_dot)


@frule.register(np.linalg.slogdet)
def slogdet_frule(dargs, a):
    a_dot = kit.nonzero(dargs[1])
    lu = _LU(kernel.as_float(a), strict=False)
    y = lu.slogdet()
    if a_dot is None:
        return y, ZeroTangent()
    if lu.singular or np.any(y.sign == 0):
        return y, _slogdet_tangent(y, slogdet_trace(np, lu.a, y.sign, a_dot))
    return y, _slogdet_tangent(y, kernel.mtrace(lu.solve(a_dot)))


@rrule.register(np.linalg.slogdet)
def slogdet_rrule(a):
    lu = _LU(kernel.as_float(a), strict=False)
    y = lu.slogdet()
    project_a = ProjectTo(a)
    complex_sign = np.iscomplexobj(y.sign)

    def slogdet_pullback(y_bar):
        sign_bar = kernel.field(y_bar, "sign", 0)
        logabsdet_bar = kernel.field(y_bar, "logabsdet", 1)
        if logabsdet_bar is None and (sign_bar is None or not complex_sign):
            return NoTangent(), ZeroTangent()
        # the loss is Re(g * tr(A^-1 dA)) with g below; its gradient is conj(g) A^-H
        g = np.zeros(np.shape(y.logabsdet), dtype=np.result_type(lu.a.dtype, np.complex64))
        if logabsdet_bar is not None:
            g = g + np.real(logabsdet_bar)
        if complex_sign and sign_bar is not None:
            g = g + 1j * np.imag(np.conj(sign_bar) * y.sign)
        if lu.singular or np.any(y.sign == 0):
            inv_h = slogdet_inv_h(np, lu.a, y.sign)
        else:
            inv_h = lu.inv_h()
        # a real g for a real matrix: (1 + 0j) inf would put a NaN in the imaginary part
        g = np.conj(g) if complex_sign else np.real(g)
        return NoTangent(), project_a(g[..., None, None] * inv_h)

    return y, slogdet_pullback


# ---------------------------------------------------------------------------------- pinv


@frule.register(np.linalg.pinv)
def pinv_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.pinv(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    if np.size(a) == 0:  # an empty matrix (hermitian=True accepts a (0, n) one)
        return y, ProjectTo(y)(np.zeros(np.shape(y)))
    herm = kernel.options(args, kwargs, ("rcond", None), ("hermitian", False))["hermitian"]
    a_eff = kernel.her_input(a, "L") if herm else a
    a_dot = kernel.her_input(a_dot, "L") if herm else a_dot
    return y, ProjectTo(y)(deriv.pinv_tangent(a_eff, y, a_dot))


@rrule.register(np.linalg.pinv)
def pinv_rrule(a, *args, **kwargs):
    y = np.linalg.pinv(a, *args, **kwargs)
    herm = kernel.options(args, kwargs, ("rcond", None), ("hermitian", False))["hermitian"]
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def pinv_pullback(y_bar):
        if np.size(a) == 0:  # an empty matrix (hermitian=True accepts a (0, n) one)
            return NoTangent(), project_a(np.zeros(np.shape(a))), *kernel.nots(args)
        if herm:
            s = deriv.pinv_cotangent(kernel.her_input(a, "L"), y, y_bar)
            return NoTangent(), project_a(kernel.her_cotangent(s, "L")), *kernel.nots(args)
        return NoTangent(), project_a(deriv.pinv_cotangent(a, y, y_bar)), *kernel.nots(args)

    return y, pinv_pullback


# --------------------------------------------------------------------------------- lstsq


def _lstsq_parts(a: np.ndarray, b: np.ndarray, args: tuple, kwargs: dict) -> tuple:
    y = np.linalg.lstsq(a, b, *args, **kwargs)
    x, residuals, rank, s = y
    p = np.linalg.pinv(a)
    return y, x, residuals, rank, s, p


@frule.register(np.linalg.lstsq)
def lstsq_frule(dargs, a, b, *args, **kwargs):
    a_dot, b_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    y, x, residuals, _rank, s, p = _lstsq_parts(a, b, args, kwargs)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    vec = np.ndim(b) == 1
    xm = x[:, None] if vec else x
    bm = b[:, None] if vec else b
    r = bm - a @ xm
    rhs = 0
    if b_dot is not None:
        rhs = b_dot[:, None] if vec else b_dot
    if a_dot is not None:
        rhs = rhs - a_dot @ xm
    x_dot = p @ rhs
    res_dot: Any = ZeroTangent()
    s_dot: Any = ZeroTangent()
    if a_dot is not None:
        # d x = A+ (db - dA x) + A+ A+^H dA^H r + (I - A+ A) dA^H A+^H x
        n = a.shape[-1]
        x_dot = x_dot + p @ (kernel.H(p) @ (kernel.H(a_dot) @ r))
        x_dot = x_dot + (np.eye(n, dtype=p.dtype) - p @ a) @ (kernel.H(a_dot) @ (kernel.H(p) @ xm))
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        s_dot = ProjectTo(s)(kernel.diag(kernel.H(u) @ a_dot @ kernel.H(vh)).real)
    if residuals.size:
        # residuals = |b - A x|^2 per column; A^H r = 0 removes the dx term
        res_dot = ProjectTo(residuals)(2 * kernel.rdot(r, np.asarray(rhs), axis=0))
    x_dot = ProjectTo(x)(x_dot[:, 0] if vec else x_dot)
    return y, core.Tangent[tuple](x_dot, res_dot, NoTangent(), s_dot)


@rrule.register(np.linalg.lstsq)
def lstsq_rrule(a, b, *args, **kwargs):
    y, x, residuals, _rank, _s, p = _lstsq_parts(a, b, args, kwargs)
    project_a, project_b = ProjectTo(a), ProjectTo(b)
    vec = np.ndim(b) == 1
    xm = x[:, None] if vec else x
    bm = b[:, None] if vec else b

    def lstsq_pullback(y_bar):
        x_bar = kernel.field(y_bar, "x", 0)
        res_bar = kernel.field(y_bar, "residuals", 1)
        s_bar = kernel.field(y_bar, "s", 3)
        if x_bar is None and res_bar is None and s_bar is None:
            return NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)
        r = bm - a @ xm
        # cotangent of the right-hand side rhs = db - dA x (x part, then residuals part)
        g = 0
        xm_bar = None
        if x_bar is not None:
            xm_bar = x_bar[:, None] if vec else x_bar
            g = kernel.H(p) @ xm_bar
        if res_bar is not None and residuals.size:
            g = g + 2 * np.real(res_bar) * r
        g = np.asarray(g)

        def a_cotangent():
            a_bar = np.zeros(np.shape(a), dtype=np.result_type(a, xm, np.float32))
            if g.ndim:
                a_bar = a_bar - g @ kernel.H(xm)
            if xm_bar is not None:
                n = a.shape[-1]
                # adjoints of A+ A+^H dA^H r and (I - A+ A) dA^H A+^H x
                a_bar = a_bar + r @ kernel.H(xm_bar) @ (p @ kernel.H(p))
                proj_cols = np.eye(n, dtype=p.dtype) - p @ a
                a_bar = a_bar + (kernel.H(p) @ xm) @ kernel.H(xm_bar) @ proj_cols
            if s_bar is not None:
                u, _, vh = np.linalg.svd(a, full_matrices=False)
                a_bar = a_bar + (u * np.real(s_bar)[None, :]) @ vh
            return project_a(a_bar)

        if g.ndim:
            b_bar: Any = project_b(g[:, 0] if vec else g)
        else:
            b_bar = ZeroTangent()
        return NoTangent(), Thunk(a_cotangent), b_bar, *kernel.nots(args)

    return y, lstsq_pullback


# -------------------------------------------------------------------------- matrix_power


def _powers(a: np.ndarray, n: int) -> tuple:
    """(base, [base^0 .. base^|n|]) with base = A or inv(A) for negative n."""
    base = np.linalg.inv(a) if n < 0 else a
    out = [kernel.eye_like(base)]
    for _ in range(abs(n)):
        out.append(out[-1] @ base)
    return base, out


def _power_tangent(base: np.ndarray, pw: list, base_dot: np.ndarray) -> np.ndarray:
    k = len(pw) - 1
    return sum((pw[i] @ base_dot @ pw[k - 1 - i] for i in range(k)), np.zeros_like(pw[0]))


@frule.register(np.linalg.matrix_power)
def matrix_power_frule(dargs, a, n):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.matrix_power(a, n)
    if a_dot is None or n == 0:
        return y, ZeroTangent()
    base, pw = _powers(kernel.as_float(a), n)
    base_dot = -(base @ a_dot @ base) if n < 0 else a_dot
    return y, ProjectTo(y)(_power_tangent(base, pw, base_dot))


@rrule.register(np.linalg.matrix_power)
def matrix_power_rrule(a, n):
    y = np.linalg.matrix_power(a, n)
    project_a = ProjectTo(a)

    def matrix_power_pullback(y_bar):
        y_bar = kit.nonzero(y_bar)
        if y_bar is None or n == 0:
            return NoTangent(), ZeroTangent(), NoTangent()
        base, pw = _powers(kernel.as_float(a), n)
        k = abs(n)
        base_bar = sum((kernel.H(pw[i]) @ y_bar @ kernel.H(pw[k - 1 - i]) for i in range(k)),
                       np.zeros_like(pw[0]))
        if n < 0:
            base_bar = -(kernel.H(base) @ base_bar @ kernel.H(base))
        return NoTangent(), project_a(base_bar), NoTangent()

    return y, matrix_power_pullback


# ----------------------------------------------------------------------------- multi_dot


def _as_chain(arrays: list) -> tuple:
    """Matrices of the chain (1-D ends promoted) and whether each end was a vector."""
    mats = [np.asarray(m) for m in arrays]
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = mats[0][None, :]
    if last_vec:
        mats[-1] = mats[-1][:, None]
    return mats, first_vec, last_vec


def _chain(mats: list) -> np.ndarray:
    return mats[0] if len(mats) == 1 else np.linalg.multi_dot(mats)


@frule.register(np.linalg.multi_dot)
def multi_dot_frule(dargs, arrays, *args, **kwargs):
    y = np.linalg.multi_dot(arrays, *args, **kwargs)
    dots = core.unthunk(dargs[1])
    if kit.is_zero(dots):
        return y, ZeroTangent()
    mats, first_vec, last_vec = _as_chain(list(arrays))
    total: Any = 0
    for i in range(len(mats)):
        d = kit.nonzero(dots[i])
        if d is None:
            continue
        d = np.asarray(d)
        if i == 0 and first_vec:
            d = d[None, :]
        if i == len(mats) - 1 and last_vec:
            d = d[:, None]
        total = total + _chain([*mats[:i], d, *mats[i + 1:]])
    if isinstance(total, int):
        return y, ZeroTangent()
    if first_vec:
        total = total[0]
    if last_vec:
        total = total[..., 0]
    return y, ProjectTo(y)(total)


@rrule.register(np.linalg.multi_dot)
def multi_dot_rrule(arrays, *args, **kwargs):
    y = np.linalg.multi_dot(arrays, *args, **kwargs)
    project_arrays = ProjectTo(list(arrays))
    mats, first_vec, last_vec = _as_chain(list(arrays))

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def multi_dot_pullback(y_bar):
        y_bar = np.asarray(y_bar)
        if first_vec:
            y_bar = y_bar[None, ...]
        if last_vec:
            y_bar = y_bar[..., None]
        k = len(mats)
        bars = []
        for i in range(k):
            left = y_bar if i == 0 else kernel.H(_chain(mats[:i])) @ y_bar
            bar = left if i == k - 1 else left @ kernel.H(_chain(mats[i + 1:]))
            if i == 0 and first_vec:
                bar = bar[0]
            if i == k - 1 and last_vec:
                bar = bar[:, 0]
            bars.append(bar)
        return NoTangent(), project_arrays(bars), *kernel.nots(args)

    return y, multi_dot_pullback


# ---------------------------------------------------------------- tensorsolve, tensorinv


def _tensorsolve_layout(a: np.ndarray, b: np.ndarray, axes: Any) -> tuple:
    """(permutation NumPy applies to a, matrix shape, x shape)."""
    perm = list(range(a.ndim))
    if axes is not None:
        for k in axes:
            perm.remove(k)
            perm.insert(a.ndim, k)
    shape = tuple(a.shape[i] for i in perm)
    x_shape = shape[-(a.ndim - b.ndim):]
    n = int(np.prod(x_shape))
    return perm, (int(np.prod(b.shape)), n), x_shape


@frule.register(np.linalg.tensorsolve)
def tensorsolve_frule(dargs, a, b, *args, **kwargs):
    a_dot, b_dot = kit.nonzero(dargs[1]), kit.nonzero(dargs[2])
    y = np.linalg.tensorsolve(a, b, *args, **kwargs)
    if a_dot is None and b_dot is None:
        return y, ZeroTangent()
    perm, mshape, _ = _tensorsolve_layout(
        a, b, kernel.options(args, kwargs, ("axes", None))["axes"]
    )
    am = np.transpose(a, perm).reshape(mshape)
    rhs = np.zeros(mshape[0], dtype=np.result_type(y, np.float32))
    if b_dot is not None:
        rhs = rhs + np.reshape(b_dot, -1)
    if a_dot is not None:
        rhs = rhs - np.transpose(a_dot, perm).reshape(mshape) @ y.reshape(-1)
    return y, ProjectTo(y)(np.linalg.solve(am, rhs).reshape(y.shape))


@rrule.register(np.linalg.tensorsolve)
def tensorsolve_rrule(a, b, *args, **kwargs):
    y = np.linalg.tensorsolve(a, b, *args, **kwargs)
    perm, mshape, _ = _tensorsolve_layout(
        a, b, kernel.options(args, kwargs, ("axes", None))["axes"]
    )
    lu = _LU(kernel.as_float(np.transpose(a, perm).reshape(mshape)))
    project_a, project_b = ProjectTo(a), ProjectTo(b)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), ZeroTangent(), *kernel.nots(args)))
    def tensorsolve_pullback(y_bar):
        g = lu.solve(np.reshape(y_bar, (-1, 1)), adjoint=True)[:, 0]

        def a_cotangent() -> Any:
            am_bar = -np.outer(g, np.conj(y.reshape(-1)))
            shape = tuple(a.shape[i] for i in perm)
            return project_a(np.transpose(am_bar.reshape(shape), np.argsort(perm)))

        return (NoTangent(), Thunk(a_cotangent), project_b(g.reshape(np.shape(b))),
                *kernel.nots(args))

    return y, tensorsolve_pullback


def _tensorinv_ind(args: tuple, kwargs: dict) -> int:
    return kernel.options(args, kwargs, ("ind", 2))["ind"]


@frule.register(np.linalg.tensorinv)
def tensorinv_frule(dargs, a, *args, **kwargs):
    a_dot = kit.nonzero(dargs[1])
    y = np.linalg.tensorinv(a, *args, **kwargs)
    if a_dot is None:
        return y, ZeroTangent()
    ind = _tensorinv_ind(args, kwargs)
    n = int(np.prod(a.shape[:ind]))
    ym = y.reshape(-1, n)
    y_dot = -(ym @ np.reshape(a_dot, (n, -1)) @ ym)
    return y, ProjectTo(y)(y_dot.reshape(y.shape))


@rrule.register(np.linalg.tensorinv)
def tensorinv_rrule(a, *args, **kwargs):
    y = np.linalg.tensorinv(a, *args, **kwargs)
    ind = _tensorinv_ind(args, kwargs)
    n = int(np.prod(a.shape[:ind]))
    ym = y.reshape(-1, n)
    project_a = ProjectTo(a)

    @kit.zero_guard(lambda: (NoTangent(), ZeroTangent(), *kernel.nots(args)))
    def tensorinv_pullback(y_bar):
        a_bar = -(kernel.H(ym) @ np.reshape(y_bar, ym.shape) @ kernel.H(ym))
        return NoTangent(), project_a(a_bar.reshape(np.shape(a))), *kernel.nots(args)

    return y, tensorinv_pullback
