"""Flatten any primal (and its tangents) to a real float64 vector and rebuild it.

ℂ is ℝ²: a complex entry takes two slots (real, imaginary), so the plain dot
product of two packed tangents is the real inner product Re<a, b>.
Non-differentiable parts (ints, bools, strings, index arrays, functions) take
no slot and are rebuilt as the very same object.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import types
from typing import Any, cast

import numpy as np

__all__ = ["Spec", "TangentLayoutError", "spec_of"]

_CONST_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    type,
    np.ufunc,
    str,
    bytes,
    type(None),
    bool,
    np.bool_,
    range,
    slice,
)


def _core() -> Any:
    import chainrules.core as core

    return core


class TangentLayoutError(Exception):
    """A tangent does not fit its primal (wrong shape, type, field); ``path`` says where."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class Spec:
    """Layout of one primal as a real vector; ``size`` real slots."""

    size: int = 0
    path: str = ""
    #: whether the primal can be perturbed at all (an empty float array can, an int cannot)
    perturbable: bool = True

    def pack(self, x: Any, out: np.ndarray, o: int) -> None:
        raise NotImplementedError

    def unpack(self, vec: np.ndarray, o: int) -> Any:
        raise NotImplementedError

    def pack_tangent(self, t: Any, out: np.ndarray, o: int, strict: bool = False) -> None:
        raise NotImplementedError

    def unpack_tangent(self, vec: np.ndarray, o: int) -> Any:
        raise NotImplementedError

    def leaves(self) -> list[tuple[int, Spec]]:
        """(offset, leaf spec) for every leaf with slots."""
        out: list[tuple[int, Spec]] = []
        self._leaves(0, out)
        return out

    def _leaves(self, o: int, out: list) -> None:
        if self.size:
            out.append((o, self))

    def eps(self) -> float:
        """Machine epsilon of the least precise leaf (float32 arguments -> float32 eps)."""
        e = 0.0
        for _, leaf in self.leaves():
            e = max(e, leaf._eps())
        return e or float(np.finfo(np.float64).eps)

    def _eps(self) -> float:
        return float(np.finfo(np.float64).eps)

    def element_name(self, index: int) -> str:
        """Human path of slot ``index``, e.g. ``x.w[1, 2].imag``."""
        for o, leaf in self.leaves():
            if o <= index < o + leaf.size:
                return leaf._element_name(index - o)
        raise IndexError(index)

    def _element_name(self, k: int) -> str:
        return self.path

    # convenience ----------------------------------------------------------
    def to_vec(self, x: Any) -> np.ndarray:
        out = np.zeros(self.size)
        self.pack(x, out, 0)
        return out

    def from_vec(self, vec: np.ndarray) -> Any:
        return self.unpack(vec, 0)

    def tangent_to_vec(self, t: Any, strict: bool = False) -> np.ndarray:
        """Pack tangent ``t``; ``strict`` also demands array cotangents of the primal's
        dtype (float32 stays float32) and raises `TangentLayoutError` otherwise."""
        out = np.zeros(self.size)
        self.pack_tangent(t, out, 0, strict)
        return out

    def vec_to_tangent(self, vec: np.ndarray) -> Any:
        if not self.perturbable:
            return _core().NoTangent()
        return self.unpack_tangent(vec, 0)


def _is_zero_like(t: Any) -> bool:
    core = _core()
    return isinstance(t, (core.ZeroTangent, core.NoTangent))


def _prepare(t: Any, path: str) -> Any:
    core = _core()
    while isinstance(t, core.Thunk):
        t = core.unthunk(t)
    if isinstance(t, core.NotImplementedTangent):
        raise TangentLayoutError(path, f"is a NotImplementedTangent ({t!r})")
    return t


class _Const(Spec):
    perturbable = False

    def __init__(self, x: Any, path: str) -> None:
        self.x = x
        self.path = path

    def pack(self, x: Any, out: np.ndarray, o: int) -> None:
        pass

    def unpack(self, vec: np.ndarray, o: int) -> Any:
        return self.x

    def pack_tangent(self, t: Any, out: np.ndarray, o: int, strict: bool = False) -> None:
        pass

    def unpack_tangent(self, vec: np.ndarray, o: int) -> Any:
        return _core().NoTangent()


class _Scalar(Spec):
    """Python or NumPy real/complex scalar."""

    def __init__(self, x: Any, path: str) -> None:
        self.path = path
        self.complex = isinstance(x, (complex, np.complexfloating))
        self.size = 2 if self.complex else 1
        # float, complex or the NumPy scalar type of x
        self.type: Any
        if isinstance(x, np.generic):
            self.type = type(x)
        else:
            self.type = complex if self.complex else float

    def _eps(self) -> float:
        if issubclass(self.type, np.generic):
            # an inexact NumPy scalar type here, which the stubs of finfo do not list
            return float(np.finfo(cast(Any, self.type)).eps)
        return float(np.finfo(np.float64).eps)

    def _element_name(self, k: int) -> str:
        if self.complex:
            return f"{self.path}.{'real' if k == 0 else 'imag'}"
        return self.path

    def pack(self, x: Any, out: np.ndarray, o: int) -> None:
        if self.complex:
            z = complex(x)
            out[o], out[o + 1] = z.real, z.imag
        else:
            out[o] = float(x)

    def unpack(self, vec: np.ndarray, o: int) -> Any:
        if self.complex:
            return self.type(complex(vec[o], vec[o + 1]))
        return self.type(vec[o])

    def pack_tangent(self, t: Any, out: np.ndarray, o: int, strict: bool = False) -> None:
        t = _prepare(t, self.path)
        if _is_zero_like(t):
            return
        if isinstance(t, np.ndarray) and t.size == 1:
            t = t.reshape(())[()]
        if not isinstance(t, (int, float, complex, np.number)) or isinstance(t, bool):
            raise TangentLayoutError(
                self.path, f"expected a number for a {self.type.__name__} primal, got "
                f"{_describe(t)}")
        if self.complex:
            z = complex(t)
            out[o], out[o + 1] = z.real, z.imag
        else:
            if isinstance(t, (complex, np.complexfloating)):
                raise TangentLayoutError(
                    self.path, f"got a complex tangent {t!r} for a real primal; "
                    "project it to the real line (ProjectTo(x)) in the rule")
            out[o] = float(t)

    def unpack_tangent(self, vec: np.ndarray, o: int) -> Any:
        return self.unpack(vec, o)


class _Array(Spec):
    def __init__(self, x: np.ndarray, path: str) -> None:
        self.path = path
        self.shape = x.shape
        self.dtype = x.dtype
        self.complex = x.dtype.kind == "c"
        self.n = int(math.prod(x.shape))
        self.size = self.n * (2 if self.complex else 1)
        self.type = type(x)
        # rebuild perturbed inputs with the primal's memory layout (F order, negative
        # strides, strided views): layout-dependent functions (reshape order='A',
        # ravel order='K') must see the same function of their input
        item = x.dtype.itemsize
        self.strides = None
        if (self.n > 1 and not x.flags.c_contiguous
                and all(st % item == 0 for st in x.strides)):
            self.strides = x.strides

    def _eps(self) -> float:
        return float(np.finfo(self.dtype).eps)

    def _element_name(self, k: int) -> str:
        part = ""
        if self.complex:
            k, r = divmod(k, 2)
            part = ".real" if r == 0 else ".imag"
        idx = np.unravel_index(k, self.shape) if self.shape else ()
        inner = ", ".join(str(int(i)) for i in idx)
        return f"{self.path}[{inner}]{part}"

    def pack(self, x: Any, out: np.ndarray, o: int) -> None:
        a = np.asarray(x)
        if self.complex:
            out[o:o + self.size] = a.astype(np.complex128).reshape(-1).view(np.float64)
        else:
            out[o:o + self.size] = a.reshape(-1)

    def unpack(self, vec: np.ndarray, o: int) -> Any:
        part = vec[o:o + self.size]
        if self.complex:
            a = part.view(np.complex128)
        else:
            a = part
        values = a.astype(self.dtype).reshape(self.shape)
        if self.strides is None:
            return values
        return _with_strides(values, self.strides)

    def pack_tangent(self, t: Any, out: np.ndarray, o: int, strict: bool = False) -> None:
        t = _prepare(t, self.path)
        if _is_zero_like(t):
            return
        if isinstance(t, (int, float, complex, np.number)) and not isinstance(t, bool):
            a = np.asarray(t)
        elif isinstance(t, np.ndarray):
            a = t
        else:
            raise TangentLayoutError(
                self.path, f"expected an ndarray of shape {self.shape}, got {_describe(t)}")
        if a.shape != self.shape:
            raise TangentLayoutError(
                self.path, f"expected shape {self.shape}, got shape {a.shape}; "
                "sum broadcast dimensions away (ProjectTo(x) does it)")
        if a.dtype.kind not in "fciu":
            raise TangentLayoutError(
                self.path, f"expected a float or complex array, got dtype {a.dtype}")
        if strict and isinstance(t, np.ndarray) and a.dtype != self.dtype:
            raise TangentLayoutError(
                self.path, f"expected dtype {self.dtype} (the primal's), got {a.dtype}; "
                + ("a real primal has real tangents: project the cotangent with "
                   "ProjectTo(x), which takes the real part"
                   if a.dtype.kind == "c" and self.dtype.kind == "f" else
                   "project the cotangent with ProjectTo(x), which keeps the primal's "
                   "dtype (float32 stays float32)"))
        if self.complex:
            out[o:o + self.size] = a.astype(np.complex128).reshape(-1).view(np.float64)
        else:
            if a.dtype.kind == "c":
                raise TangentLayoutError(
                    self.path, f"got a complex ({a.dtype}) tangent for a real "
                    f"{self.dtype} primal; project it to the real line (ProjectTo(x))")
            out[o:o + self.size] = a.reshape(-1)

    def unpack_tangent(self, vec: np.ndarray, o: int) -> Any:
        return self.unpack(vec, o)


def _with_strides(values: np.ndarray, strides: tuple) -> np.ndarray:
    """A fresh array holding ``values`` with the given (byte) strides."""
    item = values.dtype.itemsize
    lo = sum(min(0, (n - 1) * st) for n, st in zip(values.shape, strides))
    hi = sum(max(0, (n - 1) * st) for n, st in zip(values.shape, strides))
    buf = np.empty((hi - lo) // item + 1, dtype=values.dtype)
    out = np.lib.stride_tricks.as_strided(buf[-lo // item:], values.shape, strides,
                                          writeable=True)
    out[...] = values
    return out


class _Container(Spec):
    """tuple, list, namedtuple, dict, dataclass, attrs class, plain object."""

    def __init__(self, x: Any, path: str, keys: list, children: list[Spec], kind: str) -> None:
        self.x = x
        self.path = path
        self.keys = keys
        self.children = children
        self.kind = kind
        self.type = type(x)
        self.size = sum(c.size for c in children)
        self.perturbable = any(c.perturbable for c in children)

    def _leaves(self, o: int, out: list) -> None:
        for c in self.children:
            c._leaves(o, out)
            o += c.size

    def _items(self, x: Any) -> list:
        if self.kind in ("seq", "namedtuple"):
            return list(x)
        if self.kind == "dict":
            return [x[k] for k in self.keys]
        return [getattr(x, k) for k in self.keys]

    def pack(self, x: Any, out: np.ndarray, o: int) -> None:
        for c, item in zip(self.children, self._items(x)):
            c.pack(item, out, o)
            o += c.size

    def unpack(self, vec: np.ndarray, o: int) -> Any:
        items = []
        for c in self.children:
            items.append(c.unpack(vec, o))
            o += c.size
        if self.kind == "seq":
            return self.type(items)
        if self.kind == "namedtuple":
            return self.type._make(items)
        if self.kind == "dict":
            new = copy.copy(self.x)
            for k, v in zip(self.keys, items):
                new[k] = v
            return new
        new = copy.copy(self.x)
        for k, v in zip(self.keys, items):
            object.__setattr__(new, k, v)
        return new

    def _tangent_items(self, t: Any) -> list:
        core = _core()
        if isinstance(t, core.Tangent):
            P = t.primal_type
            if P is not None and P is not self.type and not (
                self.kind == "seq" and P in (tuple, list)
            ):
                raise TangentLayoutError(
                    self.path, f"expected Tangent[{self.type.__qualname__}], got {t!r}")
            b = t.backing
            if isinstance(b, dict):
                extra = set(b) - set(self.keys)
                if extra:
                    raise TangentLayoutError(
                        self.path, f"tangent has fields {sorted(map(str, extra))} that "
                        f"the primal {self.type.__qualname__} lacks")
                return [b.get(k, core.ZeroTangent()) for k in self.keys]
            if len(b) != len(self.children):
                hint = ""
                if len(b) == 1 and isinstance(b[0], (tuple, list)) and \
                        len(b[0]) == len(self.children):
                    hint = (f" (a single {type(b[0]).__name__} of {len(b[0])}: "
                            f"Tangent[{self.type.__name__}] takes the items as separate "
                            f"arguments, Tangent[{self.type.__name__}](*items))")
                raise TangentLayoutError(
                    self.path, f"expected {len(self.children)} items, got {len(b)}{hint}")
            return list(b)
        if self.kind in ("seq", "namedtuple") and isinstance(t, (tuple, list)):
            if len(t) != len(self.children):
                raise TangentLayoutError(
                    self.path, f"expected {len(self.children)} items, got {len(t)}")
            return list(t)
        if self.kind == "dict" and isinstance(t, dict):
            return [t.get(k, core.ZeroTangent()) for k in self.keys]
        raise TangentLayoutError(
            self.path, f"expected Tangent[{self.type.__qualname__}] (a structural tangent), "
            f"got {_describe(t)}")

    def pack_tangent(self, t: Any, out: np.ndarray, o: int, strict: bool = False) -> None:
        t = _prepare(t, self.path)
        if _is_zero_like(t):
            return
        for c, item in zip(self.children, self._tangent_items(t)):
            c.pack_tangent(item, out, o, strict)
            o += c.size

    def unpack_tangent(self, vec: np.ndarray, o: int) -> Any:
        core = _core()
        if not self.perturbable:
            return core.NoTangent()
        items = []
        for c in self.children:
            items.append(c.unpack_tangent(vec, o) if c.perturbable else core.NoTangent())
            o += c.size
        if self.kind == "seq":
            return core.Tangent[self.type](*items)
        if self.kind == "dict":
            return core.Tangent[self.type](dict(zip(self.keys, items)))
        return core.Tangent[self.type](**dict(zip(self.keys, items)))


def _describe(x: Any) -> str:
    shape = getattr(x, "shape", None)
    dtype = getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(x).__name__}(shape={tuple(shape)}, dtype={dtype})"
    return f"{type(x).__name__} {x!r}" if len(repr(x)) < 60 else type(x).__name__


def _object_fields(x: Any) -> list[str] | None:
    P = type(x)
    if dataclasses.is_dataclass(P):
        return [f.name for f in dataclasses.fields(P)]
    if hasattr(P, "__attrs_attrs__"):
        return [a.name for a in P.__attrs_attrs__]
    d = getattr(x, "__dict__", None)
    if isinstance(d, dict) and d:
        return list(d)
    return None


class _Sparse(Spec):
    """A scipy.sparse matrix or array: its stored entries are its coordinates.

    The sparsity pattern is part of the primal, so tangents are sparse matrices of the
    same pattern (what ``ProjectTo`` makes); a dense tangent is read at the pattern,
    and, with ``strict``, must be zero elsewhere.
    """

    def __init__(self, x: Any, path: str) -> None:
        import scipy.sparse as sp

        self.path = path
        coo = x.tocoo()
        self.rows, self.cols = coo.row.copy(), coo.col.copy()
        self.shape = x.shape
        self.dtype = x.dtype
        self.format = x.format
        self.make = sp.coo_array if isinstance(x, sp.sparray) else sp.coo_matrix
        # (the scipy stubs lack sparray.dtype)
        self.complex = cast(Any, x).dtype.kind == "c"
        self.n = len(self.rows)
        self.size = self.n * (2 if self.complex else 1)

    def _eps(self) -> float:
        return float(np.finfo(self.dtype).eps)

    def _element_name(self, k: int) -> str:
        part = ""
        if self.complex:
            k, r = divmod(k, 2)
            part = ".real" if r == 0 else ".imag"
        return f"{self.path}[{int(self.rows[k])}, {int(self.cols[k])}]{part}"

    def _values(self, m: Any, strict: bool = False) -> np.ndarray:
        import scipy.sparse as sp

        if sp.issparse(m):
            if m.shape != self.shape:
                raise TangentLayoutError(self.path, f"expected a sparse matrix of shape "
                                         f"{self.shape}, got shape {m.shape}")
            dense = m.toarray()
        else:
            dense = np.asarray(m)
            if dense.shape != self.shape:
                raise TangentLayoutError(self.path, f"expected shape {self.shape} for a "
                                         f"sparse primal, got {_describe(m)}")
        values = dense[self.rows, self.cols]
        if strict:
            outside = dense.copy()
            outside[self.rows, self.cols] = 0
            if np.any(outside):
                raise TangentLayoutError(
                    self.path, "the tangent has entries outside the primal's sparsity "
                    "pattern; project it with ProjectTo(x) in the rule")
        return values

    def _write(self, values: np.ndarray, out: np.ndarray, o: int) -> None:
        if self.complex:
            out[o:o + self.size] = values.astype(np.complex128).view(np.float64)
        else:
            if np.iscomplexobj(values) and np.any(np.imag(values)):
                raise TangentLayoutError(self.path, "got a complex tangent for a real "
                                         "sparse primal; project it with ProjectTo(x)")
            out[o:o + self.size] = np.real(values)

    def pack(self, x: Any, out: np.ndarray, o: int) -> None:
        self._write(self._values(x), out, o)

    def unpack(self, vec: np.ndarray, o: int) -> Any:
        part = vec[o:o + self.size]
        values = part.view(np.complex128) if self.complex else part
        built = self.make((values.astype(self.dtype), (self.rows, self.cols)),
                          shape=self.shape)
        return built.asformat(self.format)

    def pack_tangent(self, t: Any, out: np.ndarray, o: int, strict: bool = False) -> None:
        t = _prepare(t, self.path)
        if _is_zero_like(t):
            return
        self._write(self._values(t, strict), out, o)

    def unpack_tangent(self, vec: np.ndarray, o: int) -> Any:
        return self.unpack(vec, o)


def _is_sparse(x: Any) -> bool:
    if not type(x).__module__.startswith("scipy.sparse"):
        return False
    import scipy.sparse as sp

    return bool(sp.issparse(x))


def spec_of(x: Any, x_dot: Any = None, path: str = "x") -> Spec:
    """The layout of primal ``x``.

    ``x_dot`` (optional) is the tangent the caller means to use: a Python
    ``int`` with a numeric tangent is laid out like a ``float``; anything
    with ``NoTangent()`` takes no slots.
    """
    core = _core()
    if x_dot is not None and isinstance(x_dot, core.NoTangent):
        return _Const(x, path)
    if isinstance(x, _CONST_TYPES):
        return _Const(x, path)
    if isinstance(x, int) and not isinstance(x, bool):
        if x_dot is not None and isinstance(x_dot, (float, complex, np.floating,
                                                    np.complexfloating)):
            return _Scalar(float(x) if not isinstance(x_dot, (complex, np.complexfloating))
                           else complex(x), path)
        return _Const(x, path)
    if isinstance(x, (float, complex, np.floating, np.complexfloating)):
        return _Scalar(x, path)
    if isinstance(x, np.integer):
        return _Const(x, path)
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc":
            return _Array(x, path)
        return _Const(x, path)
    if isinstance(x, core.AbstractTangent):
        return _Const(x, path)
    if _is_sparse(x):
        return _Sparse(x, path) if cast(Any, x).dtype.kind in "fc" else _Const(x, path)
    sub = _sub_tangents(x_dot)
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        children = [spec_of(v, _pick(sub, i, k), f"{path}.{k}")
                    for i, (k, v) in enumerate(zip(cast(Any, x)._fields, x))]
        return _Container(x, path, list(cast(Any, x)._fields), children, "namedtuple")
    if isinstance(x, (tuple, list)):
        children = [spec_of(v, _pick(sub, i, None), f"{path}[{i}]") for i, v in enumerate(x)]
        return _Container(x, path, list(range(len(x))), children, "seq")
    if isinstance(x, dict):
        keys = list(x)
        children = [spec_of(x[k], _pick(sub, None, k), f"{path}[{k!r}]") for k in keys]
        return _Container(x, path, keys, children, "dict")
    if callable(x) and getattr(x, "__closure__", None) is not None:
        return _Const(x, path)
    fields = _object_fields(x)
    if fields is None:
        return _Const(x, path)
    children = [spec_of(getattr(x, k), _pick(sub, None, k), f"{path}.{k}") for k in fields]
    return _Container(x, path, fields, children, "object")


def _sub_tangents(x_dot: Any) -> Any:
    if x_dot is None:
        return None
    core = _core()
    if isinstance(x_dot, core.Tangent):
        return x_dot.backing
    if isinstance(x_dot, (tuple, list, dict)):
        return x_dot
    return None


def _pick(sub: Any, i: int | None, k: Any) -> Any:
    if sub is None:
        return None
    if isinstance(sub, dict):
        return sub.get(k if k is not None else i)
    if i is not None and i < len(sub):
        return sub[i]
    return None
