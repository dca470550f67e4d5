"""Rules for NumPy's elementwise functions: the ufuncs, their ``reduce``/``accumulate``
methods for ``add``, ``multiply``, ``maximum``, ``minimum``, and the elementwise
functions ``np.real``, ``np.imag``, ``np.angle``, ``np.clip``, ``np.sinc``,
``np.nan_to_num``.

Covered with frule and rrule (broadcasting, 0-d and empty arrays, Python and
NumPy scalars, float32 kept float32, complex wherever NumPy accepts it):

- arithmetic: ``add``, ``subtract``, ``multiply``, ``divide`` (``true_divide``),
  ``negative``, ``positive``, ``power`` (``pow``), ``float_power``, ``reciprocal``,
  ``square``, ``sqrt``, ``cbrt``, ``fmod``, ``remainder`` (``mod``),
  ``floor_divide``, ``divmod``, ``absolute`` (``abs``), ``fabs``, ``sign``,
  ``conjugate`` (``conj``);
- exponentials and logarithms: ``exp``, ``exp2``, ``expm1``, ``log``, ``log2``,
  ``log10``, ``log1p``, ``logaddexp``, ``logaddexp2``;
- trigonometric and hyperbolic functions and their inverses, ``arctan2``,
  ``hypot``, ``deg2rad``/``radians``, ``rad2deg``/``degrees``;
- piecewise: ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``copysign``, ``ldexp``,
  ``frexp``, ``modf``, ``heaviside``, ``floor``, ``ceil``, ``trunc``, ``rint``, and
  the functions ``np.round`` (``np.around``) and ``np.fix``;
- ``np.add.reduce``, ``np.add.accumulate`` and the same for ``multiply``,
  ``maximum``, ``minimum``.

Declared non-differentiable: comparisons, logical and bitwise ufuncs, ``isnan``,
``isinf``, ``isfinite``, ``isnat``, ``signbit``, ``spacing``, ``nextafter``,
``gcd``, ``lcm``. ``matmul``, ``vecdot``, ``matvec``, ``vecmat`` are contractions
and live with the reductions.

Conventions:

- the elementwise rules are ``scalar_rule`` definitions (an AD can fuse them
  through ``derivatives_given_output``); lists and tuples used as arrays and a
  positional ``out`` are taken by more specific local rules;
- complex numbers follow DESIGN §2 (the gradient of a real loss is
  ``dL/dRe z + i dL/dIm z``); holomorphic functions use ``conj(partial)`` in the
  pullback, ``abs``, ``sign``, ``conj``, ``real``, ``imag``, ``angle`` and
  ``nan_to_num`` are written out as real-linear maps;
- non-smooth points: ``abs``/``fabs`` at 0, ``hypot`` and ``arctan2`` at the
  origin, ``copysign`` at ``x1 == 0`` and complex ``sign`` at 0 give 0; ``sign``
  (real), ``floor``, ``ceil``, ``trunc``, ``rint``, ``round``, ``fix``,
  ``floor_divide`` have zero
  derivative (a ``ZeroTangent()``); ``fmod`` and ``remainder`` have derivative 1
  in ``x1`` and ``-k`` in ``x2`` where ``x1 = k*x2 + y``, the jumps ignored;
  ``heaviside(x1, x2)`` has derivative 0 in ``x1`` and ``x1 == 0`` in ``x2``;
- ties: ``maximum``, ``minimum``, ``fmax``, ``fmin`` split the cotangent equally
  between equal arguments (as JAX and PyTorch do); their ``reduce`` and
  ``accumulate`` split it equally among all the tied maximisers (an ``initial``
  value counts as one of them and absorbs its share). ``clip`` gives ties to ``x``
  (``x == a_min`` or ``x == a_max`` propagates to ``x``);
- NaN: ``maximum``/``minimum`` send the cotangent to the NaN argument they
  propagate, ``fmax``/``fmin`` to the non-NaN argument they keep;
- ``power(x, p)``: ``d/dp`` is 0 where ``x == 0`` (the limit from ``p > 0``) and
  ``Re(y log x) = y log|x|`` for real ``x < 0``, as in ChainRules.jl; ``d/dx`` is 0
  where ``p == 0``;
- integer and bool arrays, ``ldexp``'s exponent and the exponent output of
  ``frexp`` get ``NoTangent()``; a Python ``int`` argument projects like a float
  (DESIGN §2);
- ``out=`` and ``where=`` are refused with `OutArgumentError`,
  and so is ``nan_to_num(x, copy=False)`` on an array (it writes into ``x``);
- the derivative formulas run under ``np.errstate(all="ignore")``: an infinite
  derivative (``sqrt`` at 0) is returned as ``inf`` without a warning;
- ``reduce``/``accumulate``: ``initial``, ``axis`` and ``dtype`` are never
  differentiated (positional ones get ``NoTangent()``); ``multiply.reduce`` and
  ``multiply.accumulate`` are exact with zeros in the input (exclusive products
  and a scan, never ``y / x``).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from chainrules.core import (
    NoTangent,
    NotImplementedTangent,
    OutArgumentError,
    ProjectTo,
    Tangent,
    Thunk,
    ZeroTangent,
    frule,
    non_differentiable,
    rrule,
    scalar_rule,
    unthunk,
)
from chainrules.rules.array_api.elementwise import PARTIALS

_ZERO_LIKE = (ZeroTangent, NoTangent)
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


# ------------------------------------------------------------------------ local helpers


def _no_tangent(dx: Any) -> NoTangent:
    return NoTangent()


def _is_inexact(x: Any) -> bool:
    """Whether ``x`` (a primal or an output) has a tangent: float or complex."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (float, complex, int)):
        return True
    return np.asarray(x).dtype.kind in "fc"


def _projector(x: Any) -> Callable[[Any], Any]:
    """``ProjectTo(x)``, except that non-differentiable arguments (integer and bool
    arrays and scalars, None) always get ``NoTangent()``, even for a zero cotangent,
    and lists and tuples used as arrays get a ``Tangent`` of their items."""
    if isinstance(x, (bool, np.bool_)) or x is None:
        return _no_tangent
    if isinstance(x, np.ndarray):
        return ProjectTo(x) if x.dtype.kind in "fc" else _no_tangent
    if isinstance(x, np.generic):
        return ProjectTo(x) if x.dtype.kind in "fc" else _no_tangent
    if isinstance(x, (int, float, complex)):
        return ProjectTo(x)
    arr = np.asarray(x)
    if arr.dtype.kind not in "fc":
        return _no_tangent
    return _array_like_projector(x, arr)


def _array_like_projector(x: Any, arr: np.ndarray) -> Callable[[Any], Any]:
    """Lists and tuples used as arrays: the cotangent is their ``Tangent``, item by item."""
    project_arr = ProjectTo(arr)
    project_x = ProjectTo(x)

    def project_array_like(dx: Any) -> Any:
        if isinstance(dx, _ZERO_LIKE):
            return dx
        return project_x(_nested(project_arr(dx)))

    return project_array_like


def _nested(a: np.ndarray) -> Any:
    if a.ndim == 0:
        return a[()]
    return tuple(_nested(b) for b in a)


def _tangent_array(x_dot: Any) -> Any:
    """A tangent as something NumPy can multiply (a Tangent of a list becomes an array)."""
    if isinstance(x_dot, Thunk):
        x_dot = unthunk(x_dot)
    if isinstance(x_dot, Tangent):
        return np.asarray(_plain(x_dot))
    return x_dot


def _plain(t: Any) -> Any:
    if isinstance(t, Thunk):
        t = unthunk(t)
    if isinstance(t, Tangent):
        return [_plain(v) for v in t.backing]
    if isinstance(t, _ZERO_LIKE):
        return 0.0
    return t


def _conj(p: Any) -> Any:
    if isinstance(p, (complex, np.complexfloating)) or (
            isinstance(p, np.ndarray) and p.dtype.kind == "c"):
        return np.conj(p)
    return p


def _fit(y_dot: Any, y: Any) -> Any:
    """A pushforward broadcast to the output's shape, in the output's precision."""
    if isinstance(y_dot, _ZERO_LIKE):
        return y_dot
    if isinstance(y, np.ndarray):
        y_dot = np.asarray(y_dot)
        if y_dot.shape != y.shape:
            y_dot = np.broadcast_to(y_dot, y.shape).copy()
        kind = "c" if y_dot.dtype.kind == "c" and y.dtype.kind == "f" else y.dtype.kind
        if y_dot.dtype != y.dtype and kind == y.dtype.kind:
            y_dot = y_dot.astype(y.dtype)
        return y_dot
    if isinstance(y, np.generic):
        y_dot = np.asarray(y_dot)
        if y_dot.ndim:
            y_dot = y_dot.reshape(())
        if y.dtype.kind == "f" and y_dot.dtype.kind == "c":
            return y_dot[()]
        # astype and [()] rather than y.dtype.type(y_dot): a traced tangent stays traced
        if y_dot.dtype != y.dtype:
            y_dot = y_dot.astype(y.dtype)
        return y_dot[()]
    return y_dot


def _refuse_out(f: Any, kwargs: dict) -> None:
    if kwargs.get("out") is not None:
        raise OutArgumentError(f)
    where = kwargs.get("where", True)
    if where is not True:
        raise OutArgumentError(f, "where")


def _check_nargs(f: Any, args: tuple, nargs: int) -> None:
    if len(args) > nargs:  # a positional `out` array
        raise OutArgumentError(f)


def _name(f: Any) -> str:
    return getattr(f, "__name__", "f")


def _elementwise(f: Any, partials: Callable[..., Any], *, nargs: int | None = None) -> None:
    """Define the frule and rrule of an elementwise function from its partials.

    ``scalar_rule(f, partials)`` with the partials computed under
    ``np.errstate(all="ignore")``, so an AD can fuse elementwise chains
    (``derivatives_given_output``). The core's scalar rules cannot project onto lists
    and tuples used as arrays, nor see a positional ``out``: more specific rules
    registered here take those calls.
    """
    if nargs is None:
        nargs = f.nin
    quiet = _quiet(partials)
    scalar_rule(f, quiet)
    elementwise_frule, elementwise_rrule = _elementwise_rules(f, quiet, nargs)
    for types in itertools.product((object, list, tuple), repeat=nargs):
        if any(t is not object for t in types):
            frule.register(f, *types)(elementwise_frule)
            rrule.register(f, *types)(elementwise_rrule)
    out_types = (object,) * (nargs + 1) + (...,)
    frule.register(f, *out_types)(elementwise_frule)
    rrule.register(f, *out_types)(elementwise_rrule)


def _quiet(partials: Callable[..., Any]) -> Callable[..., Any]:
    """``partials`` under ``np.errstate(all="ignore")``: an infinite derivative (``sqrt``
    at 0) is a value, not a warning. Keeps the signature ``scalar_rule`` reads."""

    @functools.wraps(partials)
    def quiet_partials(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return partials(*args, **kwargs)

    return quiet_partials


def _elementwise_rules(f: Any, partials: Callable[..., Any], nargs: int) -> tuple:
    """A frule and an rrule from ``partials`` for any argument types (array-likes too)."""
    name = _name(f)
    params = inspect.signature(partials).parameters
    uses_output = "y" in params
    extra: dict[str, Any] = {"xp": np} if "xp" in params else {}

    def call_partials(args: tuple, y: Any) -> tuple:
        arrays = tuple(np.asarray(x) if isinstance(x, (list, tuple)) else x for x in args)
        p = partials(*arrays, y=y, **extra) if uses_output else partials(*arrays, **extra)
        return (p,) if nargs == 1 else p

    def elementwise_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
        _check_nargs(f, args, nargs)
        if kwargs:
            _refuse_out(f, kwargs)
        y = f(*args, **kwargs)
        if not _is_inexact(y):
            return y, NoTangent()
        x_dots = [_tangent_array(t) for t in dargs[1:]]
        if any(isinstance(t, NotImplementedTangent) for t in x_dots):
            return y, next(t for t in x_dots if isinstance(t, NotImplementedTangent))
        live = [i for i, (x, t) in enumerate(zip(args, x_dots))
                if not isinstance(t, _ZERO_LIKE) and _is_inexact(x)]
        if not live:
            return y, ZeroTangent()
        ps = call_partials(args, y)
        y_dot: Any = ZeroTangent()
        for i in live:
            p = ps[i]
            if isinstance(p, ZeroTangent):
                continue
            term = p * x_dots[i]
            y_dot = term if isinstance(y_dot, ZeroTangent) else y_dot + term
        return y, _fit(y_dot, y)

    def elementwise_rrule(*args: Any, **kwargs: Any) -> Any:
        _check_nargs(f, args, nargs)
        if kwargs:
            _refuse_out(f, kwargs)
        y = f(*args, **kwargs)
        projectors = [_projector(x) for x in args]
        cache: list = []

        def partials_once() -> tuple:
            if not cache:
                cache.append(call_partials(args, y))
            return cache[0]

        def elementwise_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            if isinstance(y_bar, NotImplementedTangent):
                return (NoTangent(), *(y_bar for _ in projectors))
            zero = isinstance(y_bar, _ZERO_LIKE) or not _is_inexact(y)
            x_bars: list = [NoTangent()]
            for i, project in enumerate(projectors):
                if project is _no_tangent:
                    x_bars.append(NoTangent())
                elif zero:
                    x_bars.append(ZeroTangent())
                elif nargs > 1:
                    x_bars.append(Thunk(_cotangent_thunk(partials_once, i, project, y_bar)))
                else:
                    x_bars.append(_cotangent(partials_once()[i], project, y_bar))
            return tuple(x_bars)

        elementwise_pullback.__qualname__ = f"{name}_pullback"
        return y, elementwise_pullback

    elementwise_frule.__qualname__ = f"{name}_frule"
    elementwise_rrule.__qualname__ = f"{name}_rrule"
    return elementwise_frule, elementwise_rrule


def _cotangent(p: Any, project: Callable[[Any], Any], y_bar: Any) -> Any:
    if isinstance(p, ZeroTangent):
        return ZeroTangent()
    return project(_conj(p) * y_bar)


def _cotangent_thunk(partials_once: Callable[[], tuple], i: int,
                     project: Callable[[Any], Any], y_bar: Any) -> Callable[[], Any]:
    def cotangent() -> Any:
        return _cotangent(partials_once()[i], project, y_bar)

    cotangent.__qualname__ = f"cotangent_{i}"
    return cotangent


def _quotient(x1: Any, x2: Any, y: Any) -> Any:
    """The integer ``k`` with ``x1 == k * x2 + y`` (exact: ``x1 - y`` is a multiple)."""
    return np.rint((x1 - y) / x2)


# ----------------------------------------------------------------------------- arithmetic


_elementwise(np.add, PARTIALS["add"])


_elementwise(np.subtract, PARTIALS["subtract"])


_elementwise(np.multiply, PARTIALS["multiply"])


_elementwise(np.divide, PARTIALS["divide"])


_elementwise(np.negative, PARTIALS["negative"])


_elementwise(np.positive, PARTIALS["positive"])


_elementwise(np.power, PARTIALS["pow"])


def _float_power_partials(x: Any, p: Any, *, y: Any) -> tuple:
    # float_power computes in double precision: so do its partials
    wide = np.result_type(x, p, np.float64)
    return PARTIALS["pow"](np.asarray(x, dtype=wide), np.asarray(p, dtype=wide), y=y, xp=np)


_elementwise(np.float_power, _float_power_partials)


_elementwise(np.reciprocal, PARTIALS["reciprocal"])


_elementwise(np.square, PARTIALS["square"])


_elementwise(np.sqrt, PARTIALS["sqrt"])


def _cbrt_partial(x: Any, *, y: Any) -> Any:
    return 1 / (3 * y * y)


_elementwise(np.cbrt, _cbrt_partial)


# fmod and remainder: x1 == k * x2 + y with an integer k in both
_elementwise(np.fmod, PARTIALS["remainder"])
_elementwise(np.remainder, PARTIALS["remainder"])
_elementwise(np.floor_divide, PARTIALS["floor_divide"])


@rrule.register(np.divmod, object, object, ...)
def divmod_rrule(x1: Any, x2: Any, *args: Any, **kwargs: Any) -> Any:
    _check_nargs(np.divmod, (x1, x2, *args), 2)
    _refuse_out(np.divmod, kwargs)
    y = np.divmod(x1, x2, **kwargs)
    project_x1 = _projector(x1)
    project_x2 = _projector(x2)

    def divmod_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        mod_bar = ZeroTangent()
        if not isinstance(y_bar, _ZERO_LIKE):
            mod_bar = unthunk(y_bar[1])
        if isinstance(mod_bar, _ZERO_LIKE) or not _is_inexact(y[1]):
            return NoTangent(), _zero_or_none(project_x1), _zero_or_none(project_x2)

        def divmod_x2_bar() -> Any:
            with np.errstate(all="ignore"):
                k = _quotient(x1, x2, y[1])
            return project_x2(-k * mod_bar)

        x1_bar = project_x1(mod_bar)
        x2_bar = NoTangent() if project_x2 is _no_tangent else Thunk(divmod_x2_bar)
        return NoTangent(), x1_bar, x2_bar

    return y, divmod_pullback


@frule.register(np.divmod, object, object, ...)
def divmod_frule(dargs: tuple, x1: Any, x2: Any, *args: Any, **kwargs: Any) -> Any:
    _check_nargs(np.divmod, (x1, x2, *args), 2)
    _refuse_out(np.divmod, kwargs)
    y = np.divmod(x1, x2, **kwargs)
    if not _is_inexact(y[1]):
        return y, Tangent[tuple](NoTangent(), NoTangent())
    x1_dot, x2_dot = (_tangent_array(t) for t in dargs[1:3])
    mod_dot: Any = ZeroTangent()
    if not isinstance(x1_dot, _ZERO_LIKE) and _is_inexact(x1):
        mod_dot = x1_dot
    if not isinstance(x2_dot, _ZERO_LIKE) and _is_inexact(x2):
        with np.errstate(all="ignore"):
            term = -_quotient(x1, x2, y[1]) * x2_dot
        mod_dot = term if isinstance(mod_dot, ZeroTangent) else mod_dot + term
    return y, Tangent[tuple](ZeroTangent(), _fit(mod_dot, y[1]))


# ------------------------------------------------------------ non-holomorphic functions


def _unary_guard(f: Any, args: tuple, kwargs: dict) -> None:
    _check_nargs(f, args, 1)
    _refuse_out(f, kwargs)


@rrule.register(np.absolute, object, ...)
def absolute_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.absolute, (x, *args), kwargs)
    y = np.absolute(x, **kwargs)
    project_x = _projector(x)

    def absolute_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if project_x is _no_tangent:
            return NoTangent(), NoTangent()
        if isinstance(y_bar, _ZERO_LIKE):
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_x(_abs_direction(x, y) * np.real(y_bar))

    return y, absolute_pullback


def _abs_direction(x: Any, y: Any) -> Any:
    """``x / |x|`` (0 at 0): the gradient of ``|x|``, real or complex."""
    if np.iscomplexobj(x):
        with np.errstate(all="ignore"):
            return np.where(y == 0, 0, x / np.where(y == 0, 1, y))
    return np.sign(x)


@frule.register(np.absolute, object, ...)
def absolute_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.absolute, (x, *args), kwargs)
    y = np.absolute(x, **kwargs)
    x_dot = _tangent_array(dargs[1])
    if isinstance(x_dot, _ZERO_LIKE) or not _is_inexact(x):
        return y, ZeroTangent() if _is_inexact(y) else NoTangent()
    # d|z| = Re(conj(z / |z|) dz)
    return y, _fit(np.real(np.conj(_abs_direction(x, y)) * x_dot), y)


def _fabs_partial(x: Any) -> Any:
    return np.sign(x)


_elementwise(np.fabs, _fabs_partial)


@rrule.register(np.sign, object, ...)
def sign_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.sign, (x, *args), kwargs)
    y = np.sign(x, **kwargs)
    project_x = _projector(x)
    complex_x = np.iscomplexobj(x)

    def sign_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if project_x is _no_tangent:
            return NoTangent(), NoTangent()
        if isinstance(y_bar, _ZERO_LIKE) or not complex_x:
            return NoTangent(), ZeroTangent()
        # y = z/|z| is the real-linear map dz -> (dz - y Re(conj(y) dz)) / |z|, self-adjoint
        with np.errstate(all="ignore"):
            r = np.abs(x)
            x_bar = np.where(r == 0, 0, (y_bar - y * np.real(np.conj(y) * y_bar))
                             / np.where(r == 0, 1, r))
        return NoTangent(), project_x(x_bar)

    return y, sign_pullback


@frule.register(np.sign, object, ...)
def sign_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.sign, (x, *args), kwargs)
    y = np.sign(x, **kwargs)
    x_dot = _tangent_array(dargs[1])
    if not _is_inexact(x):
        return y, NoTangent()
    if isinstance(x_dot, _ZERO_LIKE) or not np.iscomplexobj(x):
        return y, ZeroTangent()
    with np.errstate(all="ignore"):
        r = np.abs(x)
        y_dot = np.where(r == 0, 0, (x_dot - y * np.real(np.conj(y) * x_dot))
                         / np.where(r == 0, 1, r))
    return y, _fit(y_dot, y)


@rrule.register(np.conjugate, object, ...)
def conjugate_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.conjugate, (x, *args), kwargs)
    y = np.conjugate(x, **kwargs)
    project_x = _projector(x)

    def conjugate_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if project_x is _no_tangent:
            return NoTangent(), NoTangent()
        if isinstance(y_bar, _ZERO_LIKE):
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_x(np.conj(y_bar))

    return y, conjugate_pullback


@frule.register(np.conjugate, object, ...)
def conjugate_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.conjugate, (x, *args), kwargs)
    y = np.conjugate(x, **kwargs)
    x_dot = _tangent_array(dargs[1])
    if not _is_inexact(x):
        return y, NoTangent()
    if isinstance(x_dot, _ZERO_LIKE):
        return y, ZeroTangent()
    return y, _fit(np.conj(x_dot), y)


@rrule.register(np.real, object)
def real_rrule(val: Any) -> Any:
    y = np.real(val)
    project_val = _projector(val)

    def real_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if project_val is _no_tangent:
            return NoTangent(), NoTangent()
        if isinstance(y_bar, _ZERO_LIKE):
            return NoTangent(), ZeroTangent()
        return NoTangent(), project_val(np.real(y_bar))

    return y, real_pullback


@frule.register(np.real, object)
def real_frule(dargs: tuple, val: Any) -> Any:
    y = np.real(val)
    val_dot = _tangent_array(dargs[1])
    if not _is_inexact(val):
        return y, NoTangent()
    if isinstance(val_dot, _ZERO_LIKE):
        return y, ZeroTangent()
    return y, _fit(np.real(val_dot), y)


@rrule.register(np.imag, object)
def imag_rrule(val: Any) -> Any:
    y = np.imag(val)
    project_val = _projector(val)

    def imag_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if project_val is _no_tangent:
            return NoTangent(), NoTangent()
        if isinstance(y_bar, _ZERO_LIKE):
            return NoTangent(), ZeroTangent()
        # Im is dz -> Im(dz); its adjoint maps a real y_bar to i*y_bar
        return NoTangent(), project_val(1j * np.real(y_bar))

    return y, imag_pullback


@frule.register(np.imag, object)
def imag_frule(dargs: tuple, val: Any) -> Any:
    y = np.imag(val)
    val_dot = _tangent_array(dargs[1])
    if not _is_inexact(val):
        return y, NoTangent()
    if isinstance(val_dot, _ZERO_LIKE):
        return y, ZeroTangent()
    return y, _fit(np.imag(val_dot), y)


def _angle_scale(args: tuple, kwargs: dict) -> float:
    deg = args[0] if args else kwargs.get("deg", False)
    return 180.0 / np.pi if deg else 1.0


@rrule.register(np.angle, object, ...)
def angle_rrule(z: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.angle(z, *args, **kwargs)
    project_z = _projector(z)
    scale = _angle_scale(args, kwargs)
    n_extra = len(args)

    def angle_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        rest = (NoTangent(),) * n_extra
        if project_z is _no_tangent:
            return NoTangent(), NoTangent(), *rest
        if isinstance(y_bar, _ZERO_LIKE) or not np.iscomplexobj(z):
            # a real z has angle 0 or pi: locally constant
            return NoTangent(), ZeroTangent(), *rest
        # d angle = Im(conj(z) dz) / |z|^2, whose adjoint is y_bar * i z / |z|^2
        with np.errstate(all="ignore"):
            r2 = np.real(z * np.conj(z))
            z_bar = np.where(r2 == 0, 0, 1j * z / np.where(r2 == 0, 1, r2)) * (
                scale * np.real(y_bar))
        return NoTangent(), project_z(z_bar), *rest

    return y, angle_pullback


@frule.register(np.angle, object, ...)
def angle_frule(dargs: tuple, z: Any, *args: Any, **kwargs: Any) -> Any:
    y = np.angle(z, *args, **kwargs)
    z_dot = _tangent_array(dargs[1])
    if not _is_inexact(z):
        return y, NoTangent()
    if isinstance(z_dot, _ZERO_LIKE) or not np.iscomplexobj(z):
        return y, ZeroTangent()
    scale = _angle_scale(args, kwargs)
    with np.errstate(all="ignore"):
        r2 = np.real(z * np.conj(z))
        y_dot = np.where(r2 == 0, 0, np.imag(np.conj(z) * z_dot) / np.where(r2 == 0, 1, r2))
    return y, _fit(scale * y_dot, y)


# -------------------------------------------------------------- exponentials, logarithms


_elementwise(np.exp, PARTIALS["exp"])


def _exp2_partial(x: Any, *, y: Any) -> Any:
    return y * _LN2


_elementwise(np.exp2, _exp2_partial)


_elementwise(np.expm1, PARTIALS["expm1"])


_elementwise(np.log, PARTIALS["log"])


_elementwise(np.log2, PARTIALS["log2"])


_elementwise(np.log10, PARTIALS["log10"])


_elementwise(np.log1p, PARTIALS["log1p"])


_elementwise(np.logaddexp, PARTIALS["logaddexp"])


def _logaddexp2_partials(x1: Any, x2: Any, *, y: Any) -> tuple:
    return np.exp2(x1 - y), np.exp2(x2 - y)


_elementwise(np.logaddexp2, _logaddexp2_partials)


# --------------------------------------------------------------- trigonometric, hyperbolic


_elementwise(np.sin, PARTIALS["sin"])
_elementwise(np.cos, PARTIALS["cos"])
_elementwise(np.tan, PARTIALS["tan"])
_elementwise(np.arcsin, PARTIALS["asin"])
_elementwise(np.arccos, PARTIALS["acos"])
_elementwise(np.arctan, PARTIALS["atan"])
_elementwise(np.sinh, PARTIALS["sinh"])
_elementwise(np.cosh, PARTIALS["cosh"])
_elementwise(np.tanh, PARTIALS["tanh"])
_elementwise(np.arcsinh, PARTIALS["asinh"])
_elementwise(np.arccosh, PARTIALS["acosh"])
_elementwise(np.arctanh, PARTIALS["atanh"])


_elementwise(np.arctan2, PARTIALS["atan2"])


_elementwise(np.hypot, PARTIALS["hypot"])


def _deg2rad_partial(x: Any) -> float:
    return np.pi / 180


def _rad2deg_partial(x: Any) -> float:
    return 180 / np.pi


_elementwise(np.deg2rad, _deg2rad_partial)
_elementwise(np.radians, _deg2rad_partial)
_elementwise(np.rad2deg, _rad2deg_partial)
_elementwise(np.degrees, _rad2deg_partial)


def _sinc_partial(x: Any) -> Any:
    # d/dx sin(pi x)/(pi x) = pi g(pi x), g(t) = (t cos t - sin t) / t^2, computed in
    # double precision with its Taylor series near 0 (the direct form cancels there)
    x = np.asarray(x)
    t = np.pi * x.astype(np.result_type(x, np.float64))
    small = np.abs(t) < 0.1
    ts = np.where(small, t, 0)
    t2 = ts * ts
    series = ts * (-1 / 3 + t2 * (1 / 30 + t2 * (-1 / 840 + t2 * (1 / 45360
                                                                   - t2 / 3991680))))
    tl = np.where(small, 1, t)
    direct = (tl * np.cos(tl) - np.sin(tl)) / (tl * tl)
    return np.pi * np.where(small, series, direct)


_elementwise(np.sinc, _sinc_partial, nargs=1)


# ---------------------------------------------------------------------- piecewise functions


def _first_weight(x1: Any, x2: Any, greater: bool, keep_nan: bool) -> Any:
    """The share of the cotangent of ``maximum``-like selections that goes to ``x1``.

    1 where ``x1`` is selected, 0 where ``x2`` is, 1/2 at ties; ``keep_nan``: NaN
    is propagated (``maximum``) rather than ignored (``fmax``)."""
    x1 = np.asarray(x1)
    x2 = np.asarray(x2)
    wins = (x1 > x2) if greater else (x1 < x2)
    w = np.where(wins, 1.0, np.where(x1 == x2, 0.5, 0.0))
    if x1.dtype.kind in "fc" or x2.dtype.kind in "fc":
        nan1 = np.isnan(x1)
        nan2 = np.isnan(x2)
        if keep_nan:
            w = np.where(nan1, 1.0, np.where(nan2, 0.0, w))
        else:
            w = np.where(nan2, 1.0, np.where(nan1, 0.0, w))
    return w


def _fmax_partials(x1: Any, x2: Any) -> tuple:
    w = _first_weight(x1, x2, greater=True, keep_nan=False)
    return w, 1 - w


def _fmin_partials(x1: Any, x2: Any) -> tuple:
    w = _first_weight(x1, x2, greater=False, keep_nan=False)
    return w, 1 - w


_elementwise(np.maximum, PARTIALS["maximum"])
_elementwise(np.minimum, PARTIALS["minimum"])
_elementwise(np.fmax, _fmax_partials)
_elementwise(np.fmin, _fmin_partials)


_elementwise(np.copysign, PARTIALS["copysign"])


def _heaviside_partials(x1: Any, x2: Any) -> tuple:
    return ZeroTangent(), (np.asarray(x1) == 0).astype(np.result_type(x1, x2, np.float16))


_elementwise(np.heaviside, _heaviside_partials)

for _f in (np.floor, np.ceil, np.trunc):
    _elementwise(_f, PARTIALS[_f.__name__])
_elementwise(np.rint, PARTIALS["round"])


def _register_rounding(f: Any, max_args: int) -> None:
    """Rules for a rounding function (``np.round``, ``np.fix``): zero derivative away
    from the jumps; at most ``max_args`` positional arguments (a further one is ``out``)."""
    name = _name(f)

    def rounding_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        _check_nargs(f, (x, *args), max_args)
        _refuse_out(f, kwargs)
        y = f(x, *args, **kwargs)
        x_bar = NoTangent() if _projector(x) is _no_tangent else ZeroTangent()
        n_extra = len(args)

        def rounding_pullback(y_bar: Any) -> tuple:
            return NoTangent(), x_bar, *((NoTangent(),) * n_extra)

        rounding_pullback.__qualname__ = f"{name}_pullback"
        return y, rounding_pullback

    def rounding_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        _check_nargs(f, (x, *args), max_args)
        _refuse_out(f, kwargs)
        y = f(x, *args, **kwargs)
        return y, ZeroTangent() if _is_inexact(y) else NoTangent()

    rounding_rrule.__qualname__ = f"{name}_rrule"
    rounding_frule.__qualname__ = f"{name}_frule"
    rrule.register(f, object, ...)(rounding_rrule)
    frule.register(f, object, ...)(rounding_frule)


_register_rounding(np.round, 2)
_register_rounding(np.around, 2)
_register_rounding(np.fix, 1)


@rrule.register(np.ldexp, object, object, ...)
def ldexp_rrule(x1: Any, x2: Any, *args: Any, **kwargs: Any) -> Any:
    _check_nargs(np.ldexp, (x1, x2, *args), 2)
    _refuse_out(np.ldexp, kwargs)
    y = np.ldexp(x1, x2, **kwargs)
    project_x1 = _projector(x1)

    def ldexp_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if project_x1 is _no_tangent:
            return NoTangent(), NoTangent(), NoTangent()
        if isinstance(y_bar, _ZERO_LIKE):
            return NoTangent(), ZeroTangent(), NoTangent()
        # the exponent is an integer: it gets NoTangent(), whatever its Python type
        return NoTangent(), project_x1(np.ldexp(y_bar, x2)), NoTangent()

    return y, ldexp_pullback


@frule.register(np.ldexp, object, object, ...)
def ldexp_frule(dargs: tuple, x1: Any, x2: Any, *args: Any, **kwargs: Any) -> Any:
    _check_nargs(np.ldexp, (x1, x2, *args), 2)
    _refuse_out(np.ldexp, kwargs)
    y = np.ldexp(x1, x2, **kwargs)
    x1_dot = _tangent_array(dargs[1])
    if isinstance(x1_dot, _ZERO_LIKE) or not _is_inexact(x1):
        return y, ZeroTangent()
    return y, _fit(np.ldexp(x1_dot, x2), y)


@rrule.register(np.frexp, object, ...)
def frexp_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.frexp, (x, *args), kwargs)
    y = np.frexp(x, **kwargs)
    project_x = _projector(x)

    def frexp_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if project_x is _no_tangent:
            return NoTangent(), NoTangent()
        m_bar = ZeroTangent() if isinstance(y_bar, _ZERO_LIKE) else unthunk(y_bar[0])
        if isinstance(m_bar, _ZERO_LIKE):
            return NoTangent(), ZeroTangent()
        # mantissa = x * 2**-e with e piecewise constant
        return NoTangent(), project_x(np.ldexp(m_bar, -y[1]))

    return y, frexp_pullback


@frule.register(np.frexp, object, ...)
def frexp_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.frexp, (x, *args), kwargs)
    y = np.frexp(x, **kwargs)
    x_dot = _tangent_array(dargs[1])
    if isinstance(x_dot, _ZERO_LIKE) or not _is_inexact(x):
        return y, Tangent[tuple](ZeroTangent(), NoTangent())
    return y, Tangent[tuple](_fit(np.ldexp(x_dot, -y[1]), y[0]), NoTangent())


@rrule.register(np.modf, object, ...)
def modf_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.modf, (x, *args), kwargs)
    y = np.modf(x, **kwargs)
    project_x = _projector(x)

    def modf_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if project_x is _no_tangent:
            return NoTangent(), NoTangent()
        frac_bar = ZeroTangent() if isinstance(y_bar, _ZERO_LIKE) else unthunk(y_bar[0])
        # the integral part is piecewise constant; the fractional part is x minus it
        return NoTangent(), project_x(frac_bar)

    return y, modf_pullback


@frule.register(np.modf, object, ...)
def modf_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    _unary_guard(np.modf, (x, *args), kwargs)
    y = np.modf(x, **kwargs)
    x_dot = _tangent_array(dargs[1])
    if isinstance(x_dot, _ZERO_LIKE) or not _is_inexact(x):
        return y, Tangent[tuple](ZeroTangent(), ZeroTangent())
    return y, Tangent[tuple](_fit(x_dot, y[0]), ZeroTangent())


# ------------------------------------------------------------------------ clip, nan_to_num


def _clip_bounds(args: tuple, kwargs: dict) -> tuple:
    lo = args[0] if len(args) > 0 else kwargs.get("min", kwargs.get("a_min", np._NoValue))
    hi = args[1] if len(args) > 1 else kwargs.get("max", kwargs.get("a_max", np._NoValue))
    lo = None if lo is np._NoValue else lo
    hi = None if hi is np._NoValue else hi
    return lo, hi


def _clip_weights(a: Any, lo: Any, hi: Any) -> tuple:
    """Which of ``a``, ``lo``, ``hi`` each output element comes from (ties go to ``a``),
    following ``clip(a, lo, hi) == minimum(maximum(a, lo), hi)``."""
    a = np.asarray(a)
    t = a
    take_lo = np.zeros(a.shape, dtype=bool)
    if lo is not None:
        lo = np.asarray(lo)
        take_lo = (lo > a) | (np.isnan(lo) & ~np.isnan(a))
        t = np.where(take_lo, lo, a)
    take_hi = np.zeros(np.shape(t), dtype=bool)
    if hi is not None:
        hi = np.asarray(hi)
        take_hi = (hi < t) | (np.isnan(hi) & ~np.isnan(t))
    take_lo = take_lo & ~take_hi
    take_a = ~take_lo & ~take_hi
    return take_a, take_lo, take_hi


def _clip_guard(args: tuple, kwargs: dict) -> None:
    if len(args) > 2:
        raise OutArgumentError(np.clip)
    _refuse_out(np.clip, kwargs)


@rrule.register(np.clip, object, ...)
def clip_rrule(a: Any, *args: Any, **kwargs: Any) -> Any:
    _clip_guard(args, kwargs)
    y = np.clip(a, *args, **kwargs)
    lo, hi = _clip_bounds(args, kwargs)
    projectors = [_projector(v) for v in (a, *args)]

    def clip_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        if isinstance(y_bar, _ZERO_LIKE) or not _is_inexact(y):
            return NoTangent(), *(NoTangent() if p is _no_tangent else ZeroTangent()
                                  for p in projectors)
        cache: list = []

        def weights() -> tuple:
            if not cache:
                with np.errstate(invalid="ignore"):
                    cache.append(_clip_weights(a, lo, hi))
            return cache[0]

        def clip_bar(i: int, project: Callable) -> Callable[[], Any]:
            def clip_cotangent() -> Any:
                return project(np.where(weights()[i], y_bar, 0))

            return clip_cotangent

        return NoTangent(), *(NoTangent() if p is _no_tangent else Thunk(clip_bar(i, p))
                              for i, p in enumerate(projectors))

    return y, clip_pullback


@frule.register(np.clip, object, ...)
def clip_frule(dargs: tuple, a: Any, *args: Any, **kwargs: Any) -> Any:
    _clip_guard(args, kwargs)
    y = np.clip(a, *args, **kwargs)
    if not _is_inexact(y):
        return y, NoTangent()
    lo, hi = _clip_bounds(args, kwargs)
    with np.errstate(invalid="ignore"):
        ws = _clip_weights(a, lo, hi)
    y_dot: Any = ZeroTangent()
    for w, x, x_dot in zip(ws, (a, *args), dargs[1:]):
        x_dot = _tangent_array(x_dot)
        if x is None or isinstance(x_dot, _ZERO_LIKE) or not _is_inexact(x):
            continue
        term = np.where(w, x_dot, 0)
        y_dot = term if isinstance(y_dot, ZeroTangent) else y_dot + term
    return y, _fit(y_dot, y)


def _finite_parts(x: Any, x_dot: Any) -> Any:
    """``x_dot`` where the matching real or imaginary part of ``x`` is finite, else 0."""
    if np.iscomplexobj(x):
        re = np.where(np.isfinite(np.real(x)), np.real(x_dot), 0)
        im = np.where(np.isfinite(np.imag(x)), np.imag(x_dot), 0)
        return re + 1j * im
    return np.where(np.isfinite(x), x_dot, 0)


def _nan_to_num_guard(x: Any, args: tuple, kwargs: dict) -> None:
    copy = args[0] if args else kwargs.get("copy", True)
    if not copy and isinstance(x, np.ndarray):
        raise OutArgumentError(np.nan_to_num)


@rrule.register(np.nan_to_num, object, ...)
def nan_to_num_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
    _nan_to_num_guard(x, args, kwargs)
    y = np.nan_to_num(x, *args, **kwargs)
    project_x = _projector(x)
    n_extra = len(args)

    def nan_to_num_pullback(y_bar: Any) -> tuple:
        y_bar = unthunk(y_bar)
        rest = (NoTangent(),) * n_extra
        if project_x is _no_tangent:
            return NoTangent(), NoTangent(), *rest
        if isinstance(y_bar, _ZERO_LIKE):
            return NoTangent(), ZeroTangent(), *rest
        return NoTangent(), project_x(_finite_parts(x, y_bar)), *rest

    return y, nan_to_num_pullback


@frule.register(np.nan_to_num, object, ...)
def nan_to_num_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
    _nan_to_num_guard(x, args, kwargs)
    y = np.nan_to_num(x, *args, **kwargs)
    x_dot = _tangent_array(dargs[1])
    if not _is_inexact(x):
        return y, NoTangent()
    if isinstance(x_dot, _ZERO_LIKE):
        return y, ZeroTangent()
    return y, _fit(_finite_parts(x, x_dot), y)


# ------------------------------------------------------------------ non-differentiable


for _f in (
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift,
    np.right_shift, np.bitwise_count, np.gcd, np.lcm,
    np.isnan, np.isinf, np.isfinite, np.isnat, np.signbit, np.spacing, np.nextafter,
):
    non_differentiable(_f)


# -------------------------------------------------------------------- reduce, accumulate

_REDUCE_PARAMS = ("axis", "dtype", "out", "keepdims", "initial", "where")
_ACCUMULATE_PARAMS = ("axis", "dtype", "out")


def _bind(f: Any, names: tuple, args: tuple, kwargs: dict) -> dict:
    """The keyword view of a reduce/accumulate call; refuses ``out=`` and ``where=``."""
    if len(args) > len(names):
        raise TypeError(f"{_name(f)} takes at most {len(names) + 1} positional arguments")
    params = dict(zip(names, args))
    params.update(kwargs)
    if params.get("out") is not None:
        raise OutArgumentError(f)
    if params.get("where", True) is not True:
        raise OutArgumentError(f, "where")
    return params


def _reduce_axes(params: dict, ndim: int) -> tuple:
    axis = params.get("axis", 0)
    if axis is None:
        return tuple(range(ndim))
    return normalize_axis_tuple(axis, ndim)


def _expand(v: Any, axes: tuple, keepdims: bool) -> Any:
    """A reduced array with the reduced axes back as size-1 dimensions."""
    v = np.asarray(v)
    return v if keepdims else np.expand_dims(v, axes)


def _to_back(x: np.ndarray, axes: tuple) -> np.ndarray:
    """``x`` with the ``axes`` moved to the end and flattened into one."""
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    rest = moved.shape[: x.ndim - len(axes)]
    return moved.reshape(*rest, -1)


def _from_back(v: np.ndarray, axes: tuple, shape: tuple) -> np.ndarray:
    """Undo `_to_back`."""
    ndim = len(shape)
    back = tuple(range(ndim - len(axes), ndim))
    rest = [n for i, n in enumerate(shape) if i not in axes]
    moved_shape = (*rest, *(shape[i] for i in axes))
    return np.moveaxis(v.reshape(moved_shape), back, axes)


def _zero_or_none(project: Callable) -> Any:
    return NoTangent() if project is _no_tangent else ZeroTangent()


def _register_reduce(ufunc: np.ufunc, weights: Callable[..., Any]) -> None:
    """Rules for ``ufunc.reduce`` from ``weights(x, y_kept, axes, params)``: the array of
    partial derivatives of each output element with respect to each input element
    (``y_kept``: the output with the reduced axes kept)."""
    method = ufunc.reduce
    name = f"{ufunc.__name__}_reduce"

    def reduce_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        params = _bind(method, _REDUCE_PARAMS, args, kwargs)
        y = method(x, *args, **kwargs)
        project_x = _projector(x)
        n_extra = len(args)

        def reduce_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            rest = (NoTangent(),) * n_extra
            if project_x is _no_tangent:
                return NoTangent(), NoTangent(), *rest
            if isinstance(y_bar, _ZERO_LIKE) or not _is_inexact(y):
                return NoTangent(), ZeroTangent(), *rest
            xa = np.asarray(x)
            axes = _reduce_axes(params, xa.ndim)
            keep = bool(params.get("keepdims", False))
            y_bar_kept = _expand(y_bar, axes, keep)
            w = weights(xa, _expand(y, axes, keep), axes, params)
            if w is None:
                x_bar = np.broadcast_to(y_bar_kept, xa.shape).copy()
            else:
                x_bar = _conj(w) * y_bar_kept
            return NoTangent(), project_x(x_bar), *rest

        reduce_pullback.__qualname__ = f"{name}_pullback"
        return y, reduce_pullback

    def reduce_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        params = _bind(method, _REDUCE_PARAMS, args, kwargs)
        y = method(x, *args, **kwargs)
        if not _is_inexact(y):
            return y, NoTangent()
        x_dot = _tangent_array(dargs[1])
        if isinstance(x_dot, _ZERO_LIKE) or not _is_inexact(x):
            return y, ZeroTangent()
        xa = np.asarray(x)
        axes = _reduce_axes(params, xa.ndim)
        keep = bool(params.get("keepdims", False))
        w = weights(xa, _expand(y, axes, keep), axes, params)
        terms = x_dot if w is None else w * x_dot
        y_dot = np.sum(terms, axis=axes, keepdims=keep)
        return y, _fit(np.reshape(y_dot, np.shape(y)), y)

    reduce_rrule.__qualname__ = f"{name}_rrule"
    reduce_frule.__qualname__ = f"{name}_frule"
    rrule.register(method, object, ...)(reduce_rrule)
    frule.register(method, object, ...)(reduce_frule)


def _add_reduce_weights(x: np.ndarray, y: Any, axes: tuple, params: dict) -> None:
    return None  # all ones


def _exclusive_products(x: np.ndarray, axes: tuple) -> np.ndarray:
    """For each element, the product of the others along ``axes``: exact with zeros."""
    if x.size == 0:
        return np.ones_like(x)
    xb = _to_back(x, axes)
    ones = np.ones((*xb.shape[:-1], 1), dtype=xb.dtype)
    left = np.cumprod(np.concatenate([ones, xb[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, xb[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return _from_back(left * right, axes, x.shape)


def _multiply_reduce_weights(x: np.ndarray, y: Any, axes: tuple, params: dict) -> Any:
    w = _exclusive_products(x, axes)
    initial = params.get("initial", np._NoValue)
    if initial is not np._NoValue:
        w = w * initial
    return w


def _selection_weights(x: np.ndarray, y: Any, axes: tuple, params: dict) -> Any:
    """Equal shares for the elements equal to the extremum (NaN matches a NaN output)."""
    y = np.asarray(y)
    hit = _matches(x, y)
    count = np.sum(hit, axis=axes, keepdims=True)
    initial = params.get("initial", np._NoValue)
    if initial is not np._NoValue:
        count = count + _matches(np.asarray(initial), y)
    return hit / np.maximum(count, 1)


def _matches(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    eq = a == b
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        eq = eq | (np.isnan(a) & np.isnan(b))
    return eq


_register_reduce(np.add, _add_reduce_weights)
_register_reduce(np.multiply, _multiply_reduce_weights)
_register_reduce(np.maximum, _selection_weights)
_register_reduce(np.minimum, _selection_weights)


def _scan_forward(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``t[k] = a[k] + b[k] * t[k-1]`` along the last axis (``t[0] = a[0]``)."""
    t = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.result_type(a, b))
    if t.shape[-1] == 0:
        return t
    t[..., 0] = a[..., 0]
    for k in range(1, t.shape[-1]):
        t[..., k] = a[..., k] + b[..., k] * t[..., k - 1]
    return t


def _scan_backward(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``s[k] = a[k] + b[k+1] * s[k+1]`` along the last axis (``s[-1] = a[-1]``)."""
    return _scan_forward(a[..., ::-1], np.concatenate(
        [np.zeros_like(b[..., :1]), b[..., :0:-1]], axis=-1))[..., ::-1]


def _accumulate_axis(params: dict, ndim: int) -> int:
    return normalize_axis_tuple(params.get("axis", 0), max(ndim, 1))[0]


def _register_accumulate(ufunc: np.ufunc, pullback: Callable[..., Any],
                         pushforward: Callable[..., Any]) -> None:
    """Rules for ``ufunc.accumulate``; ``pullback(x, y, y_bar)`` and
    ``pushforward(x, y, x_dot)`` work along the last axis."""
    method = ufunc.accumulate
    name = f"{ufunc.__name__}_accumulate"

    def accumulate_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        params = _bind(method, _ACCUMULATE_PARAMS, args, kwargs)
        y = method(x, *args, **kwargs)
        project_x = _projector(x)
        n_extra = len(args)

        def accumulate_pullback(y_bar: Any) -> tuple:
            y_bar = unthunk(y_bar)
            rest = (NoTangent(),) * n_extra
            if project_x is _no_tangent:
                return NoTangent(), NoTangent(), *rest
            if isinstance(y_bar, _ZERO_LIKE) or not _is_inexact(y):
                return NoTangent(), ZeroTangent(), *rest
            xa = np.asarray(x)
            axis = _accumulate_axis(params, xa.ndim)
            with np.errstate(all="ignore"):
                x_bar = np.moveaxis(pullback(
                    np.moveaxis(xa, axis, -1), np.moveaxis(np.asarray(y), axis, -1),
                    np.moveaxis(np.asarray(y_bar), axis, -1)), -1, axis)
            return NoTangent(), project_x(x_bar), *rest

        accumulate_pullback.__qualname__ = f"{name}_pullback"
        return y, accumulate_pullback

    def accumulate_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        params = _bind(method, _ACCUMULATE_PARAMS, args, kwargs)
        y = method(x, *args, **kwargs)
        if not _is_inexact(y):
            return y, NoTangent()
        x_dot = _tangent_array(dargs[1])
        if isinstance(x_dot, _ZERO_LIKE) or not _is_inexact(x):
            return y, ZeroTangent()
        xa = np.asarray(x)
        axis = _accumulate_axis(params, xa.ndim)
        with np.errstate(all="ignore"):
            y_dot = np.moveaxis(pushforward(
                np.moveaxis(xa, axis, -1), np.moveaxis(np.asarray(y), axis, -1),
                np.moveaxis(np.broadcast_to(x_dot, xa.shape), axis, -1)), -1, axis)
        return y, _fit(y_dot, y)

    accumulate_rrule.__qualname__ = f"{name}_rrule"
    accumulate_frule.__qualname__ = f"{name}_frule"
    rrule.register(method, object, ...)(accumulate_rrule)
    frule.register(method, object, ...)(accumulate_frule)


def _add_accumulate_pullback(x: np.ndarray, y: np.ndarray, y_bar: np.ndarray) -> np.ndarray:
    return np.cumsum(y_bar[..., ::-1], axis=-1)[..., ::-1]


def _add_accumulate_pushforward(x: np.ndarray, y: np.ndarray, x_dot: np.ndarray) -> Any:
    return np.cumsum(x_dot, axis=-1)


def _shifted_products(y: np.ndarray) -> np.ndarray:
    """``y[k-1]`` (1 for ``k = 0``): the product of the elements before ``k``."""
    return np.concatenate([np.ones_like(y[..., :1]), y[..., :-1]], axis=-1)


def _safe_to_divide(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.all(x != 0) and np.all(np.isfinite(y)) and np.all(y != 0))


def _multiply_accumulate_pullback(x: np.ndarray, y: np.ndarray, y_bar: np.ndarray) -> Any:
    # x_bar[i] = sum_{k>=i} conj(dy[k]/dx[i]) y_bar[k], dy[k]/dx[i] = y[i-1] * x[i+1..k]
    if _safe_to_divide(x, y):
        return np.cumsum((np.conj(y) * y_bar)[..., ::-1], axis=-1)[..., ::-1] / np.conj(x)
    s = _scan_backward(np.asarray(y_bar, dtype=np.result_type(y_bar, x)), np.conj(x))
    return np.conj(_shifted_products(y)) * s


def _multiply_accumulate_pushforward(x: np.ndarray, y: np.ndarray, x_dot: np.ndarray) -> Any:
    # y_dot[k] = y_dot[k-1] * x[k] + y[k-1] * x_dot[k]
    if _safe_to_divide(x, y):
        return y * np.cumsum(x_dot / x, axis=-1)
    return _scan_forward(_shifted_products(y) * x_dot, x)


def _run_structure(x: np.ndarray, y: np.ndarray) -> tuple:
    """For a running extremum: ``hit[k]`` (x[k] attains y[k]), ``same[k]`` (y[k] ==
    y[k-1]: still the same run) and ``count[k]`` (the tied maximisers behind y[k])."""
    hit = _matches(x, y)
    same = np.concatenate([np.zeros_like(hit[..., :1]), _matches(y[..., 1:], y[..., :-1])],
                          axis=-1)
    count = _scan_forward(hit.astype(np.int64), same.astype(np.int64))
    return hit, same, count


def _extremum_accumulate_pullback(x: np.ndarray, y: np.ndarray, y_bar: np.ndarray) -> Any:
    hit, same, count = _run_structure(x, y)
    shares = _scan_backward(y_bar / np.maximum(count, 1), same)
    return np.where(hit, shares, 0)


def _extremum_accumulate_pushforward(x: np.ndarray, y: np.ndarray, x_dot: np.ndarray) -> Any:
    hit, same, count = _run_structure(x, y)
    return _scan_forward(np.where(hit, x_dot, 0), same) / np.maximum(count, 1)


_register_accumulate(np.add, _add_accumulate_pullback, _add_accumulate_pushforward)
_register_accumulate(np.multiply, _multiply_accumulate_pullback,
                     _multiply_accumulate_pushforward)
_register_accumulate(np.maximum, _extremum_accumulate_pullback,
                     _extremum_accumulate_pushforward)
_register_accumulate(np.minimum, _extremum_accumulate_pullback,
                     _extremum_accumulate_pushforward)
