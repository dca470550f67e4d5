"""Approximate equality of tangents, with messages that say where they differ."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from chainrules.testing._outcome import xfail

__all__ = ["default_tolerances", "test_approx"]

# (rtol, atol) per precision. FD estimates in float64 are good to ~1e-10 of the
# function's scale and in float32 to ~1e-5 (see docs/guide/testing.md); the margins
# are wide enough for 20 seeds of the tricky-rule suite and far below the error of
# any wrong rule in the meta-test suite.
_TOLERANCES = {
    "float64": (1e-7, 1e-9),
    "float32": (2e-3, 1e-5),
    "float16": (3e-2, 1e-3),
}


def default_tolerances(*values: Any) -> tuple[float, float]:
    """``(rtol, atol)`` for the least precise float dtype among ``values``.

    >>> import numpy as np
    >>> from chainrules.testing import default_tolerances
    >>> default_tolerances(1.0)
    (1e-07, 1e-09)
    >>> default_tolerances(np.float32(1.0), 1.0)
    (0.002, 1e-05)
    """
    worst = "float64"
    order = ["float64", "float32", "float16"]
    for v in values:
        for dt in _float_dtypes(v):
            name = np.dtype(dt).name.replace("complex128", "float64").replace(
                "complex64", "float32")
            if name in order and order.index(name) > order.index(worst):
                worst = name
    return _TOLERANCES[worst]


def _float_dtypes(v: Any, depth: int = 0) -> list:
    from chainrules.core import Tangent, unthunk

    if depth > 20:
        return []
    v = unthunk(v)
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "fc":
        return [v.dtype]
    if isinstance(v, Tangent):
        return [d for item in v for d in _float_dtypes(item, depth + 1)]
    if isinstance(v, (tuple, list)):
        return [d for item in v for d in _float_dtypes(item, depth + 1)]
    if isinstance(v, dict):
        return [d for item in v.values() for d in _float_dtypes(item, depth + 1)]
    return []


def _is_zero_tangent(v: Any) -> bool:
    from chainrules.core import NoTangent, ZeroTangent

    return isinstance(v, (ZeroTangent, NoTangent))


def _is_numeric(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float, complex, np.number)):
        return True
    return isinstance(v, np.ndarray) and v.dtype.kind in "fciub"


def _compare_numeric(a: Any, b: Any, path: str, rtol: float, atol: float) -> str | None:
    aa = np.asarray(a)
    bb = np.asarray(b)
    if aa.shape != bb.shape:
        if aa.size == 1 and bb.size == 1:
            aa, bb = aa.reshape(()), bb.reshape(())
        else:
            return f"{path}: shapes differ: {aa.shape} vs {bb.shape}"
    return _compare_arrays(aa, bb, path, rtol, atol)


def _compare_arrays(aa: np.ndarray, bb: np.ndarray, path: str, rtol: float,
                    atol: float) -> str | None:
    a64 = aa.astype(np.complex128 if (aa.dtype.kind == "c" or bb.dtype.kind == "c")
                    else np.float64)
    b64 = bb.astype(a64.dtype)
    fa, fb = np.isfinite(a64), np.isfinite(b64)
    if not np.array_equal(fa, fb) or not np.array_equal(a64[~fa], b64[~fb], equal_nan=True):
        bad = np.argwhere(fa != fb)
        where = _index_str(tuple(bad[0])) if bad.size else ""
        return f"{path}{where}: non-finite entries differ"
    a64, b64 = np.where(fa, a64, 0), np.where(fb, b64, 0)
    diff = np.abs(a64 - b64)
    err = float(np.linalg.norm(diff.ravel()))
    scale = max(float(np.linalg.norm(a64.ravel())), float(np.linalg.norm(b64.ravel())))
    tol = atol + rtol * scale
    if err <= tol:
        return None
    lines = [
        f"{path}: not approximately equal: ‖a - b‖ = {err:.3g} > atol + rtol·max(‖a‖, ‖b‖)"
        f" = {atol:.1g} + {rtol:.1g}·{scale:.3g} = {tol:.3g}"
    ]
    if a64.ndim == 0:
        lines.append(f"  a = {aa.item()!r}, b = {bb.item()!r}")
    else:
        lines.append(f"  shape {aa.shape}; worst elements (index: a vs b):")
        flat = np.argsort(diff.ravel())[::-1][:5]
        for k in flat:
            idx = np.unravel_index(k, diff.shape)
            lines.append(f"    {_index_str(idx)}: {aa[idx].item()!r} vs {bb[idx].item()!r}")
        n_bad = int(np.sum(diff > atol + rtol * np.max(np.abs(b64))))
        lines.append(f"  {n_bad} of {diff.size} elements differ by more than the tolerance")
    return "\n".join(lines)


def _index_str(idx: tuple) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _zero_of(v: Any, path: str, rtol: float, atol: float) -> str | None:
    """Check that ``v`` is a zero tangent (the other side was ZeroTangent/NoTangent)."""
    from chainrules.core import Tangent

    if _is_zero_tangent(v):
        return None
    if _is_numeric(v):
        arr = np.asarray(v)
        if arr.size == 0 or (np.all(np.isfinite(arr)) and float(np.max(np.abs(arr))) <= atol):
            return None
        return (f"{path}: one side is a zero tangent, the other is not zero "
                f"(max |entry| = {float(np.max(np.abs(arr))):.3g})")
    if isinstance(v, Tangent):
        for k, item in v.items():
            msg = _zero_of(_unthunk(item), _child(path, v, k), rtol, atol)
            if msg:
                return msg
        return None
    if isinstance(v, (tuple, list)):
        for k, item in enumerate(v):
            msg = _zero_of(_unthunk(item), f"{path}[{k}]", rtol, atol)
            if msg:
                return msg
        return None
    return f"{path}: one side is a zero tangent, the other is {type(v).__name__} {v!r}"


def _unthunk(v: Any) -> Any:
    from chainrules.core import Thunk, unthunk

    while isinstance(v, Thunk):
        v = unthunk(v)
    return v


def _object_fields(v: Any) -> dict | None:
    """The fields of a dataclass, attrs class or plain data object; None otherwise."""
    import dataclasses

    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: getattr(v, f.name) for f in dataclasses.fields(v)}
    if hasattr(type(v), "__attrs_attrs__"):
        return {a.name: getattr(v, a.name) for a in cast(Any, type(v)).__attrs_attrs__}
    d = getattr(v, "__dict__", None)
    if isinstance(d, dict) and d and not callable(v) and not isinstance(v, type):
        return dict(d)
    return None


def _densify_sparse(v: Any) -> Any:
    """Sparse tangents compare as the dense arrays they stand for."""
    if type(v).__module__.startswith("scipy.sparse"):
        import scipy.sparse as sp

        if sp.issparse(v):
            return v.toarray()
    return v


def _child(path: str, t: Any, k: Any) -> str:
    if isinstance(t.backing, dict) and not (t.primal_type is not None
                                            and issubclass(t.primal_type, dict)):
        return f"{path}.{k}"
    return f"{path}[{k!r}]"


def _compare(a: Any, b: Any, path: str, rtol: float, atol: float) -> str | None:
    from chainrules.core import NotImplementedTangent, Tangent

    a, b = _unthunk(a), _unthunk(b)
    if isinstance(a, NotImplementedTangent) or isinstance(b, NotImplementedTangent):
        nit = a if isinstance(a, NotImplementedTangent) else b
        xfail(f"{path}: derivative not implemented: {nit!r}")
    a, b = _densify_sparse(a), _densify_sparse(b)
    if _is_zero_tangent(a):
        return _zero_of(b, path, rtol, atol)
    if _is_zero_tangent(b):
        return _zero_of(a, path, rtol, atol)
    if _is_numeric(a) and _is_numeric(b):
        return _compare_numeric(a, b, path, rtol, atol)
    if isinstance(a, Tangent) or isinstance(b, Tangent):
        return _compare_structural(a, b, path, rtol, atol)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if len(a) != len(b):
            return f"{path}: lengths differ: {len(a)} vs {len(b)}"
        for k, (x, y) in enumerate(zip(a, b)):
            msg = _compare(x, y, f"{path}[{k}]", rtol, atol)
            if msg:
                return msg
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            from chainrules.core import ZeroTangent

            msg = _compare(a.get(k, ZeroTangent()), b.get(k, ZeroTangent()),
                           f"{path}[{k!r}]", rtol, atol)
            if msg:
                return msg
        return None
    if type(a) is not type(b):
        return f"{path}: types differ: {type(a).__name__} vs {type(b).__name__}"
    fields_a, fields_b = _object_fields(a), _object_fields(b)
    if fields_a is not None and fields_b is not None:
        # Objects holding arrays (dataclasses, plain objects): `==` is ambiguous there,
        # so compare field by field.
        for k in list(fields_a) + [k for k in fields_b if k not in fields_a]:
            if k not in fields_a or k not in fields_b:
                return f"{path}.{k}: present on one side only"
            msg = _compare(fields_a[k], fields_b[k], f"{path}.{k}", rtol, atol)
            if msg:
                return msg
        return None
    try:
        same = bool(a == b)
    except Exception:
        same = a is b
    return None if same else f"{path}: {a!r} != {b!r}"


def _compare_structural(a: Any, b: Any, path: str, rtol: float, atol: float) -> str | None:
    from chainrules.core import Tangent, ZeroTangent

    def items(t: Any) -> tuple[dict, Any]:
        if isinstance(t, Tangent):
            back = t.backing
            return (dict(back) if isinstance(back, dict) else dict(enumerate(back))), t.primal_type
        if isinstance(t, (tuple, list)):
            return dict(enumerate(t)), type(t)
        if isinstance(t, dict):
            return dict(t), dict
        return {}, None

    ia, pa = items(a)
    ib, pb = items(b)
    if pa is None or pb is None:
        return (f"{path}: a structural tangent cannot be compared with "
                f"{type(a if pa is None else b).__name__}")
    if isinstance(a, Tangent) and isinstance(b, Tangent) and pa is not pb:
        return (f"{path}: tangents of different primal types: Tangent[{pa.__qualname__}] vs "
                f"Tangent[{pb.__qualname__}]")
    dict_like = isinstance(a, Tangent) and isinstance(a.backing, dict) and not (
        pa is not None and issubclass(pa, dict))
    for k in list(ia) + [k for k in ib if k not in ia]:
        sub = f"{path}.{k}" if dict_like else f"{path}[{k!r}]"
        msg = _compare(ia.get(k, ZeroTangent()), ib.get(k, ZeroTangent()), sub, rtol, atol)
        if msg:
            return msg
    return None


def test_approx(a: Any, b: Any, msg: str = "", *, rtol: float | None = None,
                atol: float | None = None) -> None:
    """Assert that tangents ``a`` and ``b`` are approximately equal; say where if not.

    Thunks are evaluated; ``ZeroTangent()`` / ``NoTangent()`` on one side
    equals an all-zero value of any kind on the other; structural tangents
    (``Tangent[P]``, tuples, dicts) are compared field by field (absent fields
    are zero); arrays compare norm-wise, ``‖a - b‖ ≤ atol + rtol·max(‖a‖, ‖b‖)``,
    with the worst elements listed on failure. A ``NotImplementedTangent`` on
    either side is an expected failure (``pytest.xfail`` under pytest).
    ``rtol`` / ``atol`` default to `default_tolerances` of the dtypes involved.

    Raises ``AssertionError`` whose message starts with ``msg``.

    >>> import numpy as np
    >>> from chainrules import Tangent, ZeroTangent, Thunk
    >>> from chainrules.testing import test_approx
    >>> test_approx(Thunk(lambda: np.zeros(3)), ZeroTangent())
    >>> test_approx(np.array([1.0, 2.0]), np.array([1.0, 2.5]))
    Traceback (most recent call last):
    ...
    AssertionError: value: not approximately equal: ...
    """
    __tracebackhide__ = True
    r, t = default_tolerances(a, b)
    rtol = r if rtol is None else rtol
    atol = t if atol is None else atol
    problem = _compare(a, b, "value", rtol, atol)
    if problem is not None:
        raise AssertionError(f"{msg}: {problem}" if msg else problem)


test_approx.__test__ = False  # type: ignore[attr-defined]  # not a pytest test function
