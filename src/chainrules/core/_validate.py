"""Refusing tangents and cotangents that cannot belong to their primal.

``rrule(...)`` returns a pullback that checks ``y_bar`` against the primal output
``y`` before the rule's own pullback sees it, and ``frule(...)`` checks every
tangent in ``dargs`` against its argument before the rule runs. Checked once here,
at the entry points (both the Python ones and the C fast path, whose cache holds
the checked wrappers), instead of in every rule.

The policy, always on (it is cheap):

- ``ZeroTangent``, ``NoTangent``, ``NotImplementedTangent``, thunks: always accepted
  (a thunk is not evaluated to be checked).
- ``None`` and strings: refused (``ZeroTangent()`` is the zero cotangent).
- an array primal (anything with a ``shape``: NumPy, JAX, PyTorch, array-API arrays,
  NumPy scalars, SciPy sparse matrices): a cotangent with the same ``shape``; a
  Python number only for a 0-d primal. Shapes are read with ``.shape``, never
  through ``np.asarray``.
- a Python number primal: a number, a NumPy scalar or a 0-d array.
- a real primal (float or int, or a real or integer array) refuses a complex
  tangent: the tangent space of a real value is real.
- tuples, lists, dicts and objects with fields: a plain container or a ``Tangent``
  of the same structure (a ``Tangent`` field the primal lacks is refused),
  checked item by item.
- any other primal: only the ``None``/string rule applies.

Debug mode adds the costly type checks: the cotangent of an array must come from
the same array library as the array (its tracers and wrapped tensors included).

Cost: where the C extension ``_fastcall`` is built (and ``CHAINRULES_PURE_PYTHON`` is
not set), the wrappers are its ``Checked`` and ``CheckedPullback`` objects, which decide
the common pairs (a tangent type that always passes, Python numbers, NumPy arrays)
without a Python frame and hand every other pair to `tangent_mismatch`: an rrule hit
then costs one small object more than an unchecked one, instead of two Python frames
and a closure. The Python wrappers below are the reference and the fallback.
"""

from __future__ import annotations

import importlib
import numbers
import os
from typing import Any

import numpy as np

from ._debug import state as _state
from ._errors import InvalidTangentError
from ._tangent_types import (
    InplaceableThunk,
    NoTangent,
    NotImplementedTangent,
    Tangent,
    Thunk,
    ZeroTangent,
)
from ._tangent_types.structural import primal_fields

__all__ = ["check_dargs_fit", "checked_frule", "checked_pullback_result", "checked_rrule",
           "tangent_mismatch", "unwrap_pullback"]

_ndarray = np.ndarray
_PASS = frozenset({ZeroTangent, NoTangent, Thunk, InplaceableThunk, NotImplementedTangent})
_REAL_SCALARS = (int, float, np.integer, np.floating, np.bool_)
_NUMBERS = (numbers.Number, np.number, np.bool_)


def _is_complex(a: Any) -> bool:
    t = type(a)
    if t is complex:
        return True
    if t is float or t is int:
        return False
    dtype = getattr(a, "dtype", None)
    if dtype is None:
        return isinstance(a, (complex, np.complexfloating))
    kind = getattr(dtype, "kind", None)
    if kind is not None:
        return kind == "c"
    is_complex = getattr(dtype, "is_complex", None)  # torch
    if isinstance(is_complex, bool):
        return is_complex
    return "complex" in str(dtype)


def _shape(a: Any) -> tuple | None:
    """The shape of an array-like (read from the type, so a structural tangent, which
    answers any attribute, has none)."""
    if not hasattr(type(a), "shape"):
        return None
    s = a.shape
    try:
        return tuple(s)
    except TypeError:
        return None


def _describe_primal(x: Any) -> str:
    s = _shape(x)
    if s is not None:
        dtype = getattr(x, "dtype", None)
        return f"{type(x).__qualname__}(shape={s}, dtype={dtype})"
    return type(x).__qualname__


def _kind_word(x: Any) -> str:
    return "a real" if not _is_complex(x) else "a"


def _fields_of(x: Any) -> tuple | None:
    known = primal_fields(type(x))
    if known is None:
        d = getattr(x, "__dict__", None)
        if isinstance(d, dict):
            known = tuple(d)
    return known


def tangent_mismatch(x: Any, dx: Any, path: str = "") -> tuple[str, str, Any] | None:
    """Why ``dx`` cannot be a tangent of ``x``: ``(path, expected, got)``, or None if it can.

    ``path`` locates the offending part inside a structure (``"[1]"``, ``".a"``).

    Examples:
        >>> import numpy as np
        >>> from chainrules.core._validate import tangent_mismatch
        >>> tangent_mismatch(np.ones(3), np.ones(3)) is None
        True
        >>> tangent_mismatch(0.3, np.ones(5))[1]
        'a real number (float, int, NumPy real scalar or 0-d array)'
    """
    tx, tdx = type(x), type(dx)
    # the common cases first, for speed
    if tdx in _PASS:
        return None
    if tx is _ndarray and tdx is _ndarray:
        if dx.shape != x.shape:
            return path, f"{_kind_word(x)} array of shape {x.shape}", dx
        if dx.dtype.kind == "c" and x.dtype.kind != "c":
            return path, f"a real array of shape {x.shape} (the primal is real)", dx
        return None
    if tx is float and (tdx is float or tdx is int):
        return None
    if dx is None:
        return path, _expected(x) + "; ZeroTangent() is the zero cotangent, not None", dx
    if isinstance(dx, (str, bytes)):
        return path, _expected(x), dx
    if isinstance(dx, (ZeroTangent, NoTangent, Thunk, NotImplementedTangent)):
        return None
    if isinstance(x, (tuple, list)):
        return _sequence_mismatch(x, dx, path)
    if isinstance(x, dict):
        return _dict_mismatch(x, dx, path)
    if isinstance(x, (bool, str, bytes)) or x is None:
        return None  # not differentiable: the rule gives NoTangent, whatever came in
    xs = _shape(x)
    if xs is not None:
        if isinstance(dx, Tangent):
            return path, _expected(x), dx
        ds = _shape(dx)
        if ds is None:
            if xs == () and isinstance(dx, _NUMBERS):
                ds = ()
            else:
                return path, _expected(x), dx
        if ds != xs:
            return path, _expected(x), dx
        if _is_complex(dx) and not _is_complex(x):
            return path, _expected(x) + " (the primal is real)", dx
        if _state.debug and not _same_library(x, dx):
            return path, _expected(x) + " from the same array library as the primal", dx
        return None
    if isinstance(x, _NUMBERS):
        ds = _shape(dx)
        if not (isinstance(dx, _NUMBERS) or ds == ()):
            return path, _expected(x), dx
        if _is_complex(dx) and not _is_complex(x):
            return path, _expected(x) + " (the primal is real)", dx
        return None
    if isinstance(dx, Tangent):
        return _fields_mismatch(x, dx, path)
    return None


def _expected(x: Any) -> str:
    if isinstance(x, (tuple, list, dict)):
        return f"a {type(x).__qualname__} or a Tangent of the same structure"
    xs = _shape(x)
    if xs is not None:
        what = "a real array" if not _is_complex(x) else "an array"
        if xs == ():
            return f"{what} of shape () or a {'real ' if not _is_complex(x) else ''}number"
        return f"{what} of shape {xs}"
    if isinstance(x, _REAL_SCALARS):
        return "a real number (float, int, NumPy real scalar or 0-d array)"
    if isinstance(x, _NUMBERS):
        return "a number (complex, float, int, NumPy scalar or 0-d array)"
    return f"a tangent of a {type(x).__qualname__} (e.g. Tangent[{type(x).__qualname__}])"


#: packages whose array types belong to another's library: JAX's concrete arrays are
#: ``jaxlib`` classes, its tracers ``jax`` ones, and either is a tangent of the other
_LIBRARY_OF = {"jaxlib": "jax"}


def _library(a: Any) -> str:
    root = type(a).__module__.partition(".")[0]
    return _LIBRARY_OF.get(root, root)


def _same_library(x: Any, dx: Any) -> bool:
    """Whether ``dx`` comes from ``x``'s array library. Tracers and wrapped tensors of
    that library (a JAX ``JVPTracer`` for a concrete ``jax.Array``, a functorch or
    fake tensor for a ``torch.Tensor``) are its own: their classes live in its package."""
    if isinstance(x, (np.ndarray, np.generic)):
        return isinstance(dx, (np.ndarray, np.generic, numbers.Number))
    return _library(dx) == _library(x) or isinstance(dx, numbers.Number)


def _sequence_mismatch(x: Any, dx: Any, path: str) -> Any:
    fields = getattr(type(x), "_fields", None)
    if isinstance(dx, Tangent):
        P = dx.primal_type
        if P is not None and not isinstance(x, P):
            return path, _expected(x), dx
        b = dx._backing
        if isinstance(b, dict):
            if fields is None:
                return path, _expected(x), dx
            for k, v in b.items():
                if k not in fields:
                    return path, _expected(x) + f" (it has no field {k!r})", dx
                bad = tangent_mismatch(getattr(x, k), v, f"{path}.{k}")
                if bad is not None:
                    return bad
            return None
        items = b
    elif isinstance(dx, (tuple, list)):
        items = dx
    else:
        return path, _expected(x), dx
    if len(items) != len(x):
        return path, _expected(x) + f" (of {len(x)} items, got {len(items)})", dx
    for i, (xi, di) in enumerate(zip(x, items)):
        bad = tangent_mismatch(xi, di, f"{path}[{i}]")
        if bad is not None:
            return bad
    return None


def _dict_mismatch(x: dict, dx: Any, path: str) -> Any:
    if isinstance(dx, Tangent):
        P = dx.primal_type
        if P is not None and not isinstance(x, P):
            return path, _expected(x), dx
        b = dx._backing
    elif isinstance(dx, dict):
        b = dx
    else:
        return path, _expected(x), dx
    if not isinstance(b, dict):
        return path, _expected(x), dx
    for k, v in b.items():
        if k not in x:
            return path, _expected(x) + f" (it has no key {k!r})", dx
        bad = tangent_mismatch(x[k], v, f"{path}[{k!r}]")
        if bad is not None:
            return bad
    return None


def _fields_mismatch(x: Any, dx: Tangent, path: str) -> Any:
    P = dx.primal_type
    if P is not None and not isinstance(x, P):
        return path, _expected(x), dx
    b = dx._backing
    if not isinstance(b, dict):
        return None  # items of an object we cannot read: nothing to compare
    known = _fields_of(x)
    if known is None:
        return None
    for k, v in b.items():
        if k not in known:
            return path, _expected(x) + f" (it has no field {k!r}; fields: {known!r})", dx
        try:
            xk = getattr(x, k)
        except AttributeError:
            continue
        bad = tangent_mismatch(xk, v, f"{path}.{k}")
        if bad is not None:
            return bad
    return None


# ---------------------------------------------------------------------------------------
# The checked entry points


def _raise(table: str, f: Any, rule: Any, where: str, bad: tuple) -> None:
    path, expected, got = bad
    raise InvalidTangentError(table, f, rule, where + path, expected, got)


def _fits_fast(x: Any, dx: Any) -> bool:
    """Whether ``dx`` fits ``x``: the common cases inline, the rest by
    `tangent_mismatch` (check_dargs_fit then says why not)."""
    tdx = type(dx)
    if tdx in _PASS:
        return True
    tx = type(x)
    if tdx is _ndarray and tx is _ndarray:
        return dx.shape == x.shape and (dx.dtype.kind != "c" or x.dtype.kind == "c")
    if tdx is float and tx is float:
        return True
    return tangent_mismatch(x, dx) is None


def check_dargs_fit(f: Any, rule: Any, dargs: Any, args: tuple) -> None:
    """Raise `InvalidTangentError` unless ``dargs`` fit ``(f, *args)``."""
    if not isinstance(dargs, (tuple, list)) or len(dargs) != len(args) + 1:
        n = f"{len(dargs)} entries" if isinstance(dargs, (tuple, list)) else None
        raise InvalidTangentError(
            "frule", f, rule, "dargs",
            f"a tuple (self_dot, *arg_dots) of {len(args) + 1} entries: one for the "
            f"function itself, then one per positional argument", dargs, got_text=n)
    for i, x in enumerate(args):
        dx = dargs[i + 1]
        if type(dx) in _PASS:
            continue
        bad = tangent_mismatch(x, dx)
        if bad is not None:
            _raise("frule", f, rule, f"the tangent of argument {i + 1}", bad)


def checked_pullback_result(f: Any, rule: Any, result: Any) -> Any:
    """``result`` of an rrule with its pullback replaced by one checking ``y_bar``."""
    if type(result) is not tuple or len(result) != 2 or getattr(rule, "_chainrules_checked",
                                                                False):
        return result
    if native is not None:
        return native.checked_result(f, result)
    y, pullback = result
    if not callable(pullback):
        return result  # malformed; debug mode says so

    def checked_pullback(y_bar: Any) -> Any:
        if type(y_bar) not in _PASS:
            bad = tangent_mismatch(y, y_bar)
            if bad is not None:
                _raise_output(f, pullback, bad)
        return pullback(y_bar)

    return y, checked_pullback


def _raise_output(f: Any, pullback: Any, bad: tuple) -> None:
    _raise("rrule", f, unwrap_pullback(pullback), "the cotangent y_bar of the output", bad)


def checked_rrule(f: Any, rule: Any, nargs: int | None = None) -> Any:
    """``rule`` (an rrule function for ``f``) returning checked pullbacks; what the
    entry points' fast caches hold, specialised for ``nargs`` positional arguments (1 or
    2; None: any). The closure of ``checked_pullback_result`` is inlined: every
    Python call saved here is saved on every cached ``rrule`` hit. With the C extension,
    its ``Checked`` object instead."""
    if getattr(rule, "_chainrules_checked", False):
        return rule
    if native is not None:
        return native.checked(rule, f, 0)

    def checked_rrule(*args: Any, **kwargs: Any) -> Any:
        result = rule(*args, **kwargs)
        if type(result) is not tuple or len(result) != 2:
            return result
        y, pullback = result
        if not callable(pullback):
            return result

        def checked_pullback(y_bar: Any) -> Any:
            if type(y_bar) not in _PASS:
                bad = tangent_mismatch(y, y_bar)
                if bad is not None:
                    _raise_output(f, pullback, bad)
            return pullback(y_bar)

        return y, checked_pullback

    def checked_rrule1(x: Any, /, **kwargs: Any) -> Any:
        result = rule(x, **kwargs) if kwargs else rule(x)
        if type(result) is not tuple or len(result) != 2:
            return result
        y, pullback = result
        if not callable(pullback):
            return result

        def checked_pullback(y_bar: Any) -> Any:
            if type(y_bar) not in _PASS:
                bad = tangent_mismatch(y, y_bar)
                if bad is not None:
                    _raise_output(f, pullback, bad)
            return pullback(y_bar)

        return y, checked_pullback

    def checked_rrule2(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
        result = rule(x1, x2, **kwargs) if kwargs else rule(x1, x2)
        if type(result) is not tuple or len(result) != 2:
            return result
        y, pullback = result
        if not callable(pullback):
            return result

        def checked_pullback(y_bar: Any) -> Any:
            if type(y_bar) not in _PASS:
                bad = tangent_mismatch(y, y_bar)
                if bad is not None:
                    _raise_output(f, pullback, bad)
            return pullback(y_bar)

        return y, checked_pullback

    out = {1: checked_rrule1, 2: checked_rrule2}.get(nargs, checked_rrule)  # type: ignore[arg-type]
    out._chainrules_checked = True  # type: ignore[attr-defined]
    return out


def _pullback_codes(code: Any) -> dict:
    """The code objects of every ``checked_pullback`` closure in this module, with the
    index of their ``pullback`` cell."""
    found = {}
    for c in code.co_consts:
        if hasattr(c, "co_consts"):
            if c.co_name == "checked_pullback":
                found[c] = c.co_freevars.index("pullback")
            found.update(_pullback_codes(c))
    return found


_PULLBACK_CODES = {**_pullback_codes(checked_pullback_result.__code__),
                   **_pullback_codes(checked_rrule.__code__)}


def unwrap_pullback(pullback: Any) -> Any:
    """The rule's own pullback behind the checking wrapper ``rrule`` returns (for
    messages that name its source); any other callable is returned as is."""
    while True:
        if type(pullback) is _CheckedPullback:
            pullback = pullback.__wrapped__
            continue
        cell = _PULLBACK_CODES.get(getattr(pullback, "__code__", None))
        if cell is None:
            # a decorated pullback (the rule kit's zero_guard) names the function it wraps
            inner = getattr(pullback, "__wrapped__", None)
            if inner is None or not callable(inner):
                return pullback
            pullback = inner
            continue
        pullback = pullback.__closure__[cell].cell_contents


def checked_frule(f: Any, rule: Any, nargs: int | None = None) -> Any:
    """``rule`` (an frule function for ``f``, no config, no instance) checking its
    tangents first; what the entry points' fast caches hold, specialised for ``nargs``
    positional arguments (1 or 2; None: any). With the C extension, its ``Checked``
    object instead."""
    if getattr(rule, "_chainrules_checked", False):
        return rule
    if native is not None:
        return native.checked(rule, f, 1)

    def checked_frule(dargs: Any, *args: Any, **kwargs: Any) -> Any:
        if type(dargs) is not tuple or len(dargs) != len(args) + 1:
            check_dargs_fit(f, rule, dargs, args)
        else:
            i = 0
            for x in args:
                i += 1
                dx = dargs[i]
                if type(dx) not in _PASS and tangent_mismatch(x, dx) is not None:
                    check_dargs_fit(f, rule, dargs, args)  # raises, naming the argument
        return rule(dargs, *args, **kwargs)

    def checked_frule1(dargs: Any, x: Any, /, **kwargs: Any) -> Any:
        if type(dargs) is not tuple or len(dargs) != 2 or not _fits_fast(x, dargs[1]):
            check_dargs_fit(f, rule, dargs, (x,))
        return rule(dargs, x, **kwargs) if kwargs else rule(dargs, x)

    def checked_frule2(dargs: Any, x1: Any, x2: Any, /, **kwargs: Any) -> Any:
        if (type(dargs) is not tuple or len(dargs) != 3 or not _fits_fast(x1, dargs[1])
                or not _fits_fast(x2, dargs[2])):
            check_dargs_fit(f, rule, dargs, (x1, x2))
        return rule(dargs, x1, x2, **kwargs) if kwargs else rule(dargs, x1, x2)

    out = {1: checked_frule1, 2: checked_frule2}.get(nargs, checked_frule)  # type: ignore[arg-type]
    out._chainrules_checked = True  # type: ignore[attr-defined]
    return out


def _checked_pullback_call(self: Any, y_bar: Any) -> Any:
    """What calling a C ``CheckedPullback`` does, written in Python: its ``__call__`` as
    the class shows it (calls take the C slot). The reference AD, tracing a pullback for
    a higher-order derivative, reads it and follows the call into the rule's pullback."""
    pullback = self.__wrapped__
    if type(y_bar) not in _PASS:
        bad = tangent_mismatch(self.y, y_bar)
        if bad is not None:
            _raise_output(self.f, pullback, bad)
    return pullback(y_bar)


def native_module(name: str, attribute: str) -> Any:
    """The optional C extension ``name`` (a module's full name), or None where it is not
    built, was built from an older source (it lacks ``attribute``: rebuild it with
    ``setup.py build_ext``), or ``CHAINRULES_PURE_PYTHON`` is set to anything but 0."""
    if os.environ.get("CHAINRULES_PURE_PYTHON", "0") not in ("", "0"):
        return None
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    return module if hasattr(module, attribute) else None


def _load_native() -> tuple[Any, bool] | None:
    """The C extension ``_fastcall``, configured with the checks above, and whether it
    checks arrays itself; None where it is not built or ``CHAINRULES_PURE_PYTHON`` is
    set."""
    _fastcall = native_module("chainrules.core._fastcall", "configure")
    if _fastcall is None:
        return None
    # arrays the extension reads NumPy's array layout from, to confirm it before relying
    # on it (else arrays are checked by tangent_mismatch)
    samples = tuple((a, a.shape, a.dtype, a.dtype.kind) for a in (
        np.empty((2, 3), np.complex128), np.empty(5, np.float32), np.empty((), np.int64)))
    passes = (ZeroTangent, NoTangent, Thunk, InplaceableThunk, NotImplementedTangent)
    arrays_in_c = _fastcall.configure(passes, _ndarray, samples, tangent_mismatch,
                                      _raise_output, check_dargs_fit, _checked_pullback_call)
    return _fastcall, arrays_in_c


#: The configured C extension, or None (the Python wrappers above are used); and whether
#: it checks NumPy arrays itself (it read NumPy's array layout as expected).
native, native_checks_arrays = _load_native() or (None, False)
_CheckedPullback = native.CheckedPullback if native is not None else None
