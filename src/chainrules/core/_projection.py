"""ProjectTo: map any plausible tangent into the tangent space of a primal.

Rules written for general arguments may produce cotangents outside the primal's
space: complex for a real input, float64 for a float32 input, a broadcast shape
for a smaller input, a dense matrix for a sparse one. ``ProjectTo(x)`` captures
what a tangent of ``x`` must look like (and nothing else: not ``x`` itself), and
maps such cotangents back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ._errors import ProjectionError, describe
from ._tangent_types import (
    AbstractTangent,
    NoTangent,
    NotImplementedTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    unthunk,
)
from ._tangent_types.structural import _is_attrs_type, _is_namedtuple_type, _object_fields
from ._xp import array_namespace, is_foreign_array

__all__ = ["ProjectTo"]

_REAL_SCALARS = (float, int, np.floating, np.integer)


def _passthrough(dx: Any) -> Any | None:
    """The result for tangents every projector passes through unchanged (or None)."""
    if isinstance(dx, (ZeroTangent, NoTangent, NotImplementedTangent)):
        return dx
    return None


class ProjectTo:
    """Capture the tangent space of ``x``; calling the result projects a tangent into it.

    ``project_x = ProjectTo(x)`` then ``project_x(dx)``:

    - real scalar (float, int, NumPy real): the real part, as the primal's float type
      (a Python ``int`` projects like ``float``); an array is summed, since a scalar
      broadcast against an array acts as a 0-d array;
    - complex scalar or array: complex, the primal's dtype;
    - real float array: the real part, the primal's dtype (float32 stays float32) and
      shape; dimensions added by broadcasting are summed away, size-1 dimensions are
      added or removed; any other shape mismatch raises `ProjectionError`
      naming both shapes;
    - bool, str, None, integer and bool arrays (indices): ``NoTangent()``;
    - tuple, list, dict, dataclass, namedtuple, attrs or plain object: item- or
      field-wise, giving a ``Tangent``;
    - ``scipy.sparse`` matrix or array: a sparse tangent with the same sparsity pattern;
    - ``ZeroTangent``, ``NoTangent`` and ``NotImplementedTangent`` pass through, a
      ``Thunk`` becomes a thunk of the projection.

    Examples:
        >>> import numpy as np
        >>> from chainrules import ProjectTo
        >>> project_x = ProjectTo(np.ones(3, dtype=np.float32))
        >>> project_x(np.ones((2, 3)) + 1j)   # summed over the broadcast dim, real, float32
        array([2., 2., 2.], dtype=float32)
        >>> ProjectTo(2)(1.5 + 2j)
        1.5
    """

    __slots__ = ("_fn", "_kind")

    def __init__(self, x: Any) -> None:
        t = type(x)
        if t is float or t is int:  # the hot cases first
            self._kind, self._fn = "float", _project_float
        elif t is np.ndarray and x.dtype.kind in "fc":
            self._kind, self._fn = "ndarray", _array_projector(x)
        else:
            self._kind, self._fn = _make_projector(x)

    def __call__(self, dx: Any) -> Any:
        t = type(dx)
        if t is np.ndarray or t is float:
            return self._fn(dx)
        passed = _passthrough(dx)
        if passed is not None:
            return passed
        if isinstance(dx, Thunk):
            fn = self._fn

            def projected_thunk() -> Any:
                return fn(unthunk(dx))

            return Thunk(projected_thunk)
        return self._fn(dx)

    def __repr__(self) -> str:
        return f"ProjectTo({self._kind})"


def _make_projector(x: Any) -> tuple[str, Callable[[Any], Any]]:
    if isinstance(x, (bool, np.bool_, str, bytes)) or x is None:
        return "NoTangent", _to_no_tangent
    if isinstance(x, float) or (isinstance(x, int)):
        return "float", _project_float
    if isinstance(x, complex):
        return "complex", _project_complex
    if isinstance(x, np.generic):
        kind = x.dtype.kind
        if kind == "f":
            return str(x.dtype), _scalar_projector(x.dtype.type, real=True)
        if kind == "c":
            return str(x.dtype), _scalar_projector(x.dtype.type, real=False)
        return "NoTangent", _to_no_tangent
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "fc":
            if x.dtype.kind == "O":
                return "object array", _identity
            return "NoTangent", _to_no_tangent
        return "ndarray", _array_projector(x)
    if is_foreign_array(x):
        pattern = _pydata_sparse_projector(x)
        return pattern if pattern is not None else _foreign_array_projector(x)
    if isinstance(x, AbstractTangent):
        return "identity", _identity
    sparse = _sparse_projector(x)
    if sparse is not None:
        return sparse
    if (isinstance(x, tuple) and not _is_namedtuple_type(type(x))) or isinstance(x, list):
        return _sequence_projector(x)
    if isinstance(x, dict):
        return _dict_projector(x)
    if (dataclasses.is_dataclass(x) and not isinstance(x, type)) or _is_namedtuple_type(
        type(x)
    ) or _is_attrs_type(type(x)) or (hasattr(x, "__dict__") and not callable(x)):
        return _object_projector(x)
    return "identity", _identity


def _identity(dx: Any) -> Any:
    return dx


def _to_no_tangent(dx: Any) -> Any:
    return NoTangent()


def _as_scalar(dx: Any, what: str) -> Any:
    if isinstance(dx, np.ndarray):
        if dx.dtype.kind not in "fciub":
            raise ProjectionError(what, dx, f"expected a number, got dtype {dx.dtype}")
        # A scalar is a 0-d array: every dimension of dx was added by broadcasting.
        return dx.sum() if dx.ndim else dx[()]
    if isinstance(dx, Tangent):
        raise ProjectionError(what, dx, "a scalar's tangent is a number")
    return dx


def _foreign_scalar(dx: Any, real: bool) -> Any:
    """A scalar primal's tangent given as another library's array: a 0-d array of it.

    Its value may be traced (``jax.jit``, ``torch.func``), so it is never converted to a
    Python number; broadcast dimensions are summed away.
    """
    xp = array_namespace(dx)
    if dx.ndim:
        dx = xp.sum(dx)
    if real and xp.isdtype(dx.dtype, "complex floating"):
        dx = xp.real(dx)
    return dx


def _project_float(dx: Any) -> Any:
    if type(dx) is float:
        return dx
    if is_foreign_array(dx):
        return _foreign_scalar(dx, real=True)
    dx = _as_scalar(dx, "a float")
    try:
        return float(dx.real)
    except (AttributeError, TypeError):
        raise ProjectionError("a float", dx, "expected a number") from None


def _project_complex(dx: Any) -> Any:
    if is_foreign_array(dx):
        return _foreign_scalar(dx, real=False)
    dx = _as_scalar(dx, "a complex")
    try:
        return complex(dx)
    except TypeError:
        raise ProjectionError("a complex", dx, "expected a number") from None


def _scalar_projector(T: type, real: bool) -> Callable[[Any], Any]:
    what = f"a {T.__name__} scalar"

    def project_scalar(dx: Any) -> Any:
        if is_foreign_array(dx):
            return _foreign_scalar(dx, real)
        dx = _as_scalar(dx, what)
        if real:
            dx = np.real(dx)
        return T(dx)

    return project_scalar


def _array_projector(x: np.ndarray) -> Callable[[Any], Any]:
    """The projector of a float or complex array (the caller checked the dtype)."""
    dtype = x.dtype
    shape = x.shape
    real = dtype.kind == "f"

    def describe_primal() -> str:
        # Only for error messages: str(dtype) is slow enough to matter on the hot path.
        return f"ndarray(shape={shape}, dtype={dtype})"

    def project_array(dx: Any) -> Any:
        if type(dx) is np.ndarray:
            dt = dx.dtype
            if dt is dtype and dx.shape == shape:  # the common case: nothing to do
                return dx
        elif isinstance(dx, AbstractTangent):
            raise ProjectionError(describe_primal(), dx, "an array's tangent is an array")
        elif _is_pydata_sparse(dx):
            # a dense primal's tangent is dense (S.T @ y_bar of a sparse S is sparse)
            dx = np.asarray(dx.todense())
            dt = dx.dtype
        elif is_foreign_array(dx):
            # A NumPy primal with another library's tangent (a rule run by a bridge on
            # traced values): fit it with that library, never convert it to NumPy.
            return _fit_foreign(dx, shape, dtype, real, describe_primal)
        else:
            dx = np.asarray(dx)
            dt = dx.dtype
        if dt.kind not in "fciub":
            raise ProjectionError(describe_primal(), dx,
                                  f"expected a numeric array, got dtype {dt}")
        if real and dt.kind == "c":
            dx = np.real(dx)
        if dx.shape != shape:
            dx = _fit_shape(dx, shape, describe_primal)
        if dx.dtype != dtype:
            dx = dx.astype(dtype)
        return dx

    return project_array


def _fit_shape(dx: np.ndarray, shape: tuple, desc: Any) -> np.ndarray:
    """Fit dx to shape; ``desc`` describes the primal (a string, or a function making one)."""
    if dx.size == int(np.prod(shape)) and _squeezed(dx.shape) == _squeezed(shape):
        return dx.reshape(shape)  # only size-1 dimensions differ
    # Sum away what broadcasting added: leading dims, and dims where the primal has 1.
    lead = dx.ndim - len(shape)
    if lead >= 0:
        axes = list(range(lead))
        ok = True
        for i, n in enumerate(shape):
            m = dx.shape[lead + i]
            if n == 1 and m != 1:
                axes.append(lead + i)
            elif n != m:
                ok = False
                break
        if ok:
            out = dx.sum(axis=tuple(axes), keepdims=True) if axes else dx
            return out.reshape(shape)
    raise ProjectionError(
        str(desc() if callable(desc) else desc), dx,
        f"shape {dx.shape} does not fit shape {shape} (neither equal up to size-1 dimensions "
        f"nor a broadcast of it)",
    )


def _foreign_array_projector(x: Any) -> tuple[str, Callable[[Any], Any]]:
    """The projector of a JAX / PyTorch / array_api_strict / … array, via its namespace."""
    xp = array_namespace(x)
    dtype = x.dtype
    if not xp.isdtype(dtype, ("real floating", "complex floating")):
        return "NoTangent", _to_no_tangent
    shape = tuple(x.shape)
    real = xp.isdtype(dtype, "real floating")
    kind = f"{type(x).__qualname__}(shape={shape}, dtype={dtype})"

    def describe_primal() -> str:
        return kind

    def project_foreign(dx: Any) -> Any:
        if isinstance(dx, AbstractTangent):
            raise ProjectionError(kind, dx, "an array's tangent is an array")
        if isinstance(dx, np.ndarray) and dx.dtype.kind not in "fciub":
            raise ProjectionError(kind, dx, f"expected a numeric array, got dtype {dx.dtype}")
        if not is_foreign_array(dx):
            dx = xp.asarray(dx)
        return _fit_foreign(dx, shape, dtype, real, describe_primal)

    return kind, project_foreign


def _fit_foreign(dx: Any, shape: tuple, dtype: Any, real: bool, desc: Any) -> Any:
    xp = array_namespace(dx)
    if real and xp.isdtype(dx.dtype, "complex floating"):
        dx = xp.real(dx)
    dx_shape = tuple(dx.shape)
    if dx_shape != shape:
        dx = _fit_shape_xp(xp, dx, dx_shape, shape, desc)
    if dx.dtype != dtype:
        try:
            dx = xp.astype(dx, dtype)
        except TypeError:  # a NumPy dtype for another library's array
            dx = xp.astype(dx, getattr(xp, np.dtype(dtype).name))
    return dx


def _fit_shape_xp(xp: Any, dx: Any, dx_shape: tuple, shape: tuple, desc: Any) -> Any:
    """`_fit_shape` for any namespace (no NumPy conversion)."""
    size = 1
    for n in shape:
        size *= n
    dx_size = 1
    for n in dx_shape:
        dx_size *= n
    if dx_size == size and _squeezed(dx_shape) == _squeezed(shape):
        return xp.reshape(dx, shape)
    lead = len(dx_shape) - len(shape)
    if lead >= 0:
        axes = list(range(lead))
        for i, n in enumerate(shape):
            m = dx_shape[lead + i]
            if n == 1 and m != 1:
                axes.append(lead + i)
            elif n != m:
                break
        else:
            out = xp.sum(dx, axis=tuple(axes), keepdims=True) if axes else dx
            return xp.reshape(out, shape)
    raise ProjectionError(
        str(desc() if callable(desc) else desc), dx,
        f"shape {dx_shape} does not fit shape {shape} (neither equal up to size-1 dimensions "
        f"nor a broadcast of it)",
    )


def _squeezed(shape: tuple) -> tuple:
    return tuple(n for n in shape if n != 1)


def _numeric_shape(x: Any) -> tuple | None:
    """The array shape of a (nested) list or tuple of numbers, or None."""
    try:
        a = np.asarray(x)
    except (ValueError, TypeError):
        return None
    return a.shape if a.dtype.kind in "biufc" else None


def _sequence_projector(x: Any) -> tuple[str, Callable[[Any], Any]]:
    projectors = [ProjectTo(i) for i in x]
    T = type(x)
    desc = f"{T.__qualname__} of length {len(x)}"
    array_shape = _numeric_shape(x)

    def project_sequence(dx: Any) -> Any:
        if isinstance(dx, np.ndarray) and array_shape is not None:
            # The sequence was used as an array (np.sin([0.1, 0.2])): fit the array
            # cotangent to its shape, then split it into items.
            if dx.shape != array_shape:
                dx = _fit_shape(dx, array_shape, desc)
            dx = tuple(dx)
        items = _items_of(dx, desc)
        if len(items) != len(projectors):
            raise ProjectionError(desc, dx, f"expected {len(projectors)} items, got "
                                  f"{len(items)}")
        return Tangent[T](*(p(i) for p, i in zip(projectors, items)))

    return desc, project_sequence


def _items_of(dx: Any, desc: str) -> tuple:
    if isinstance(dx, Tangent):
        b = dx.backing
        if isinstance(b, tuple):
            return b
    elif isinstance(dx, (tuple, list)):
        return tuple(dx)
    raise ProjectionError(desc, dx, "expected a tuple, list or Tangent of items")


def _dict_projector(x: dict) -> tuple[str, Callable[[Any], Any]]:
    projectors = {k: ProjectTo(v) for k, v in x.items()}
    T = type(x)
    desc = f"{T.__qualname__} with keys {list(x)!r}"

    def project_dict(dx: Any) -> Any:
        if isinstance(dx, Tangent):
            dx = dx.backing
        if not isinstance(dx, dict):
            raise ProjectionError(desc, dx, "expected a dict or a Tangent[dict]")
        out = {}
        for k, v in dx.items():
            if k not in projectors:
                raise ProjectionError(desc, dx, f"key {k!r} is not in the primal")
            out[k] = projectors[k](v)
        return Tangent[T](out)

    return desc, project_dict


def _object_projector(x: Any) -> tuple[str, Callable[[Any], Any]]:
    T = type(x)
    fields = _object_fields(x)
    projectors = {k: ProjectTo(v) for k, v in fields.items()}
    desc = f"{T.__qualname__} with fields {tuple(fields)!r}"

    def project_object(dx: Any) -> Any:
        if isinstance(dx, Tangent):
            if dx.primal_type not in (None, T):
                raise ProjectionError(desc, dx, f"it is a tangent of a "
                                      f"{dx.primal_type.__qualname__}")
            b = dx.backing
            if isinstance(b, tuple) and _is_namedtuple_type(T):
                b = dict(zip(T._fields, b))
        elif _is_namedtuple_type(T) and isinstance(dx, tuple):
            b = dict(zip(T._fields, dx))
        elif isinstance(dx, dict):
            b = dx
        else:
            b = None
        if not isinstance(b, dict):
            raise ProjectionError(desc, dx, "expected a Tangent of its fields")
        out = {}
        for k, v in b.items():
            if k not in projectors:
                raise ProjectionError(desc, dx, f"field {k!r} is not a field of the primal")
            out[k] = projectors[k](v)
        return Tangent[T](**out)

    return desc, project_object


def _sparse_projector(x: Any) -> tuple[str, Callable[[Any], Any]] | None:
    module = type(x).__module__
    if not module.startswith("scipy.sparse"):
        return None
    import scipy.sparse as sp

    if not sp.issparse(x):
        return None
    coo = x.tocoo()
    rows, cols = coo.row.copy(), coo.col.copy()
    shape = x.shape
    dtype = x.dtype
    fmt = x.format
    real = dtype.kind == "f"
    is_array = isinstance(x, sp.sparray)
    desc = f"scipy.sparse {fmt} {'array' if is_array else 'matrix'}(shape={shape}, dtype={dtype})"

    def project_sparse(dx: Any) -> Any:
        if sp.issparse(dx):
            if dx.shape != shape:
                raise ProjectionError(desc, dx, f"shape {dx.shape} differs from {shape}")
            values = np.asarray(dx.tocsr()[rows, cols]).ravel()
        else:
            dense = np.asarray(unthunk(dx))
            if dense.shape != shape:
                dense = _fit_shape(dense, shape, desc)
            values = dense[rows, cols]
        if real:
            values = np.real(values)
        values = values.astype(dtype, copy=False)
        make = sp.coo_array if is_array else sp.coo_matrix
        return make((values, (rows, cols)), shape=shape).asformat(fmt)

    return desc, project_sparse


def _is_pydata_sparse(x: Any) -> bool:
    return type(x).__module__.startswith("sparse.") and hasattr(x, "coords")


def _pydata_sparse_projector(x: Any) -> tuple[str, Callable[[Any], Any]] | None:
    """A pydata ``sparse`` COO array's tangents: COO arrays with its pattern (the values
    of the tangent at its stored positions), like SciPy sparse matrices'."""
    if not _is_pydata_sparse(x) or type(x).__name__ != "COO":
        return None
    if x.dtype.kind not in "fc":
        return "NoTangent", _to_no_tangent
    coords = np.array(x.coords, copy=True)
    shape, dtype, real = tuple(x.shape), x.dtype, x.dtype.kind == "f"
    linear = np.atleast_1d(np.ravel_multi_index(tuple(coords), shape)) if coords.size \
        else np.zeros(0, dtype=np.intp)
    desc = f"sparse.COO(shape={shape}, dtype={dtype}, nnz={coords.shape[1]})"
    cls = type(x)

    def project_pattern(dx: Any) -> Any:
        dx = unthunk(dx)
        if isinstance(dx, AbstractTangent):
            if isinstance(dx, ZeroTangent | NoTangent):
                return dx
            raise ProjectionError(desc, dx, "a sparse array's tangent is an array")
        if _is_pydata_sparse(dx):
            if tuple(dx.shape) != shape:
                raise ProjectionError(desc, dx, f"shape {tuple(dx.shape)} differs from {shape}")
            dx = dx.asformat("coo")
            at = np.atleast_1d(np.ravel_multi_index(tuple(dx.coords), shape))
            order = np.argsort(at)
            at, data = at[order], np.asarray(dx.data)[order]
            if at.size == 0:
                values = np.zeros(linear.size, dtype=dtype)
            else:
                # each stored position of x: the tangent's value there, or 0
                pos = np.minimum(np.searchsorted(at, linear), at.size - 1)
                values = np.where(at[pos] == linear, data[pos], 0)
        else:
            dense = np.asarray(dx)
            if dense.shape != shape:
                dense = _fit_shape(dense, shape, desc)
            values = dense[tuple(coords)]
        if real:
            values = np.real(values)
        return cls(coords.copy(), np.asarray(values, dtype=dtype), shape=shape,
                   has_duplicates=False, sorted=True)

    return desc, project_pattern


_ = describe
