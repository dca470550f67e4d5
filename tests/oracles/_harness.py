"""Shared machinery for the oracle checks: compare our rules with another AD.

A row names a NumPy/SciPy function, its counterpart in the oracle framework, an
input builder and keyword arguments.  For each row and dtype we compare

1. the primal output,
2. the pullback of a random cotangent with the oracle's vjp, and
3. the pushforward of a random tangent with the oracle's jvp.

Complex convention: our cotangent of a real loss ``L`` w.r.t. ``z`` is
``dL/dRe z + i dL/dIm z``.  JAX (and the raw output of ``torch.func.vjp``
for complex inputs, see the torch file) return its conjugate, so for a
cotangent ``y_bar`` we compare ``x_bar == conj(vjp_oracle(conj(y_bar)))``.
Pushforwards are real-linear maps and need no conversion.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

import chainrules
from chainrules import NoTangent, Tangent, ZeroTangent, unthunk

# ---------------------------------------------------------------- input builders


def _is_complex(dt: Any) -> bool:
    return np.dtype(dt).kind == "c"


def _real_dtype(dt: Any) -> Any:
    return np.finfo(np.dtype(dt)).dtype


def N(*shape: int, scale: float = 1.0) -> Callable:
    """Standard normal entries (complex: independent real and imaginary parts)."""

    def build(r: np.random.Generator, dt: Any) -> Any:
        x = scale * r.standard_normal(shape)
        if _is_complex(dt):
            x = x + 1j * scale * r.standard_normal(shape)
        return np.asarray(x, dtype=dt)

    return build


def U(lo: float, hi: float, *shape: int, im: float = 0.3) -> Callable:
    """Uniform real part in [lo, hi]; complex: imaginary part uniform in [-im, im]."""

    def build(r: np.random.Generator, dt: Any) -> Any:
        x = r.uniform(lo, hi, shape)
        if _is_complex(dt):
            x = x + 1j * r.uniform(-im, im, shape)
        return np.asarray(x, dtype=dt)

    return build


def P(*shape: int) -> Callable:
    """Entries with real part in [0.5, 2] (away from 0, poles and branch cuts)."""
    return U(0.5, 2.0, *shape)


def REAL(builder: Callable) -> Callable:
    """Force a real argument whatever the row's dtype."""

    def build(r: np.random.Generator, dt: Any) -> Any:
        return builder(r, _real_dtype(dt))

    return build


def WC(n: int, batch: tuple = ()) -> Callable:
    """A well-conditioned (diagonally dominant) square matrix."""

    def build(r: np.random.Generator, dt: Any) -> Any:
        return N(*batch, n, n, scale=0.4)(r, dt) + 2.0 * np.eye(n, dtype=dt)

    return build


def SPD(n: int, batch: tuple = ()) -> Callable:
    """Hermitian positive definite with well separated eigenvalues."""

    def build(r: np.random.Generator, dt: Any) -> Any:
        a = N(*batch, n, n)(r, dt)
        h = a @ np.conj(np.swapaxes(a, -1, -2)) / n
        return np.asarray(h + np.diag(np.arange(1.0, n + 1)), dtype=dt)

    return build


def HERM(n: int) -> Callable:
    """Hermitian with well separated eigenvalues (not necessarily definite)."""

    def build(r: np.random.Generator, dt: Any) -> Any:
        a = N(n, n, scale=0.2)(r, dt)
        h = (a + np.conj(a.T)) / 2
        return np.asarray(h + np.diag(np.arange(n) * 1.5 - n / 2), dtype=dt)

    return build


def TRI(n: int, lower: bool) -> Callable:
    def build(r: np.random.Generator, dt: Any) -> Any:
        a = WC(n)(r, dt)
        return np.tril(a) if lower else np.triu(a)

    return build


def C(value: Any) -> Callable:
    """A constant (non-differentiable) argument: indices, axes, masks, sizes."""

    def build(r: np.random.Generator, dt: Any) -> Any:
        return value

    build.constant = True  # type: ignore[attr-defined]
    return build


def SEQ(*builders: Callable) -> Callable:
    """A list of arrays (for concatenate, stack, ...)."""

    def build(r: np.random.Generator, dt: Any) -> Any:
        return [b(r, dt) for b in builders]

    build.sequence = True  # type: ignore[attr-defined]
    return build


# ---------------------------------------------------------------- rows


@dataclasses.dataclass
class Row:
    id: str
    f: Callable
    of: Callable  # oracle function, called with the same positional args
    args: tuple
    kw: dict = dataclasses.field(default_factory=dict)
    okw: dict | None = None  # oracle kwargs, default kw
    dtypes: tuple = ("f8",)
    cot: Callable | None = None  # (y_leaves, rng) -> list of cotangent leaves (None = zero)
    view: Callable | None = None  # (y_leaves, y_dot_leaves) -> list of arrays to compare
    rtol: float | None = None
    atol: float | None = None
    modes: str = "vj"  # v: primal and vjp, j: jvp
    herm: bool = False  # first argument is Hermitian (compare Hermitian parts)
    xfail: dict = dataclasses.field(default_factory=dict)  # dtype -> reason


def R(id: str, f: Callable, of: Callable, *args: Callable, **opts: Any) -> Row:
    return Row(id, f, of, args, **opts)


def params(rows: list, pytest: Any, modes: str = "vj", family: str = "") -> list:
    """``pytest.param(row, dtype, mode)`` per row, dtype and mode; ids start with
    ``family/`` when given (the table a row comes from)."""
    prefix = f"{family}/" if family else ""
    out = []
    for row in rows:
        for dt in row.dtypes:
            for mode in modes:
                if mode not in row.modes:
                    continue
                reason = row.xfail.get((dt, mode)) or row.xfail.get(dt) or row.xfail.get(mode)
                marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
                out.append(pytest.param(row, dt, mode, id=f"{prefix}{row.id}-{dt}-{mode}", marks=marks))
    return out


# ---------------------------------------------------------------- tangent plumbing


def leaves(y: Any) -> list:
    if isinstance(y, (tuple, list)):
        return list(y)
    return [y]


def tangent_leaves(t: Any, y: Any) -> list:
    """Our (co)tangent of output ``y`` as a list matching ``leaves(y)``."""
    t = unthunk(t)
    ys = leaves(y)
    if not isinstance(y, (tuple, list)):
        return [dense(t, y)]
    if isinstance(t, (ZeroTangent, NoTangent)):
        return [dense(t, yi) for yi in ys]
    if isinstance(t, Tangent):
        b = chainrules.backing(t)
        if isinstance(b, dict):
            fields = getattr(type(y), "_fields", None)
            items = [b.get(k, ZeroTangent()) for k in fields] if fields else list(b.values())
        else:
            items = list(b)
    else:
        items = list(t)
    return [dense(ti, yi) for ti, yi in zip(items, ys)]


def dense(t: Any, like: Any) -> Any:
    t = unthunk(t)
    if isinstance(t, (ZeroTangent, NoTangent)):
        if isinstance(like, (list, tuple)):
            return [dense(t, li) for li in like]
        a = np.asarray(like)
        if a.dtype.kind in "biu":
            return None
        return np.zeros(a.shape, a.dtype)
    if isinstance(t, Tangent) or isinstance(like, (list, tuple)):
        return tangent_leaves(t, like)
    return np.asarray(t)


def is_diff(a: Any) -> bool:
    if isinstance(a, list):
        return all(is_diff(x) for x in a)
    return isinstance(a, (np.ndarray, float, complex, np.floating, np.complexfloating)) and \
        np.asarray(a).dtype.kind in "fc"


def rand_like(r: np.random.Generator, a: Any) -> Any:
    if isinstance(a, list):
        return [rand_like(r, x) for x in a]
    a = np.asarray(a)
    x = r.standard_normal(a.shape)
    if a.dtype.kind == "c":
        x = x + 1j * r.standard_normal(a.shape)
    return np.asarray(x, dtype=a.dtype)


def tols(row: Row, dt: str) -> tuple:
    if dt in ("f4", "c8"):
        rtol, atol = 2e-3, 2e-4
    else:
        rtol, atol = 1e-7, 1e-9
    return (row.rtol or rtol), (row.atol or atol)


def assert_close(ours: Any, theirs: Any, rtol: float, atol: float, what: str) -> None:
    if isinstance(ours, list) or isinstance(theirs, (list, tuple)):
        theirs = list(theirs)
        assert len(ours) == len(theirs), f"{what}: {len(ours)} leaves vs {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_close(a, b, rtol, atol, f"{what}[{i}]")
        return
    if ours is None:
        return
    a = np.asarray(ours)
    b = np.asarray(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs oracle {b.shape}"
    if b.dtype.kind in "fc":
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * scale, err_msg=what)
    elif b.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b, err_msg=what)


def build_args(row: Row, dt: str) -> tuple:
    r = np.random.default_rng(zlib.crc32(f"{row.id}-{dt}".encode()))
    args = tuple(b(r, np.dtype(dt)) for b in row.args)
    return r, args


def diff_positions(row: Row, args: tuple) -> list:
    return [i for i, (b, a) in enumerate(zip(row.args, args))
            if not getattr(b, "constant", False) and is_diff(a)]


def default_cot(y_leaves: list, r: np.random.Generator) -> list:
    out = []
    for y in y_leaves:
        a = np.asarray(y)
        out.append(rand_like(r, a) if a.dtype.kind in "fc" else None)
    return out


def ours_cot(y: Any, cots: list) -> Any:
    items = [ZeroTangent() if c is None else c for c in cots]
    if isinstance(y, (tuple, list)):
        return type(y)(items) if type(y) in (tuple, list) else tuple(items)
    return items[0]
