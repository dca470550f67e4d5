"""The native path of ``torch_function``: the function and its rules run on tensors.

A rule written against the array API (``xp = chainrules.array_namespace(x)``) runs
on tensors as well as on NumPy arrays. Run that way, everything a rule computes is
a torch operation, so PyTorch can differentiate the rule itself: the backward pass
is differentiable (double backward, Hessians), and ``torch.func.vmap`` batches the
rule's operations (``generate_vmap_rule``) instead of looping in Python.

One ``autograd.Function`` (``_Native``) carries the call:

- ``forward`` runs ``f`` (or its rrule, keeping the pullback, when an ordinary
  backward pass is expected) on the tensors; ``setup_context`` saves the inputs.
- ``backward`` calls the pullback. Inside ``forward`` grad mode is off, so a pullback
  made there closes over values with no graph: reused by a backward pass that is
  itself differentiated (``create_graph=True``, a ``torch.func`` transform above us,
  forward-mode tangents on the inputs), it would silently drop second derivatives.
  So it is reused only when grad mode is off in ``backward`` and no transform or
  dual tensor is around; otherwise the rrule is run again, in ``backward``, on the
  saved inputs, where PyTorch records it. Only the cotangents of inputs in
  ``ctx.needs_input_grad`` are unthunked.
- ``jvp`` is the frule, on the saved inputs; a function with no frule for tensors
  has its own (torch) code differentiated by ``torch.func.jvp`` instead.

A NumPy-only rule does not work here: NumPy turns plain tensors into arrays (under
``torch.func`` the forward pass sees plain tensors) and fails on tensors that need
grad. A NumPy value where a tensor was due, or NumPy refusing a tensor, raises
`NumPyOnlyRuleError`. ``backend="auto"`` avoids it by trying the rules once
per input signature on meta tensors (shapes and dtypes, no data) first.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import (
    NoTangent,
    ProjectionError,
    ProjectTo,
    ZeroTangent,
    frule,
    rrule,
    unthunk,
)
from chainrules.core._errors import func_name

from . import _compat
from ._bridge import (
    argument_cotangents,
    check_pullback_entries,
    non_tangent_reason,
    tangent_leaf,
)
from ._bridge import call_frule as _call_frule
from ._bridge import call_rrule as _call_rrule
from ._errors import (
    NoRuleError,
    NumPyOnlyRuleError,
    PositionalByKeywordError,
    TangentConversionError,
)
from ._tree import format_path, leaves_with_paths, map_leaves, tangent_at, tangent_like

__all__ = [
    "call_frule",
    "call_rrule",
    "check_pullback_result",
    "choose_backend",
    "native_call",
    "prepare",
    "refuse_none",
    "refuse_numpy_only",
]

_BRIDGE = "torch_function"


def _is_float(t: Any) -> bool:
    return t.is_floating_point() or t.is_complex()


_NUMPY_DIR = os.path.dirname(np.__file__)


def _numpy_refused(e: BaseException) -> bool:
    """Whether an exception is NumPy failing on a tensor (or a tensor refusing NumPy)."""
    text = str(e)
    if "__array_wrap__" in text or (isinstance(e, (TypeError, RuntimeError)) and (
            "numpy" in text.lower() or "doesn't have storage" in text)):
        return True
    tb = e.__traceback__
    while tb is not None:  # raised inside NumPy's own Python code
        if tb.tb_frame.f_code.co_filename.startswith(_NUMPY_DIR):
            return True
        tb = tb.tb_next
    return False


_SCALARS = frozenset({bool, int, float, complex, str, type(None)})
_TORCH: Any = None


def _torch() -> Any:
    """``torch`` (imported once; ``_compat.import_torch`` costs a few lookups per call)."""
    global _TORCH
    if _TORCH is None:
        _TORCH = _compat.import_torch()
    return _TORCH


class _NativeCall:
    """One call: the structure of the arguments, their tensor leaves, and the rules' state."""

    def __init__(self, bridged: Any, args: tuple, kwargs: dict) -> None:
        tensor_t = _torch().Tensor
        self.f = bridged.f
        self.config = bridged.config
        self.args = args
        self.kwargs = kwargs
        self.where: list[tuple[int, tuple]] = []
        self.tensors: list = []
        # the input signature that backend="auto" decides on
        key: list = [tuple(sorted((k, type(v)) for k, v in kwargs.items())) if kwargs else ()]
        self.flat = all(type(a) in _SCALARS or isinstance(a, tensor_t) for a in args)
        if self.flat:  # the common case: no containers to walk
            for i, a in enumerate(args):
                if isinstance(a, tensor_t):
                    self.where.append((i + 1, ()))
                    self.tensors.append(a)
                    key.append((a.dtype, a.shape, a.device))
                else:
                    key.append(type(a))
        else:
            for path, leaf in leaves_with_paths(args):
                if isinstance(leaf, tensor_t):
                    self.where.append((path[0][1] + 1, path[1:]))
                    self.tensors.append(leaf)
                    key.append((path, leaf.dtype, leaf.shape, leaf.device))
                else:
                    key.append((path, type(leaf)))
        self.key = tuple(key)
        self.index = {w: i for i, w in enumerate(self.where)}
        self.need_pullback = False
        self.run_inputs: tuple | list = self.tensors
        self.pullback: Any = None
        self.y: Any = None
        self.out_paths: list[tuple] = []

    def build_args(self, tensors: tuple | list) -> tuple:
        if self.flat:
            args = list(self.args)
            for (position, _), t in zip(self.where, tensors):
                args[position - 1] = t
            return tuple(args)

        def put(path: tuple, leaf: Any) -> Any:
            i = self.index.get((path[0][1] + 1, path[1:]))
            return leaf if i is None else tensors[i]

        return tuple(map_leaves(put, self.args))

    def guarded(self, what: str, fn: Callable, *a: Any, **kw: Any) -> Any:
        """``fn(*a, **kw)``, with NumPy refusing a tensor reported as a NumPy-only rule."""
        try:
            return fn(*a, **kw)
        except Exception as e:
            if _numpy_refused(e):
                raise numpy_only_error(self.f, what, "", e) from e
            raise

    def run(self, tensors: tuple) -> tuple:
        """Run ``f`` (its rrule, when the pullback will be reused); the output tensors."""
        self.run_inputs = tensors
        args = self.build_args(tensors)
        if self.need_pullback:
            self.y, self.pullback = self.guarded(
                "rrule", call_rrule, _BRIDGE, self.config, self.f, args, self.kwargs)
            return self.output_leaves(self.y, "rrule", alias=True)
        self.y = self.guarded("function", self.f, *args, **self.kwargs)
        return self.output_leaves(self.y, "function", alias=True)

    def output_leaves(self, y: Any, what: str, alias: bool = False) -> tuple:
        """The output's tensors (numbers made tensors), flat; ``self.out_paths`` their paths.

        With ``alias``, a tensor the rule made is returned as a detached alias (same
        memory, same version counter), not as itself: the Function's output gets the
        ``grad_fn``, which holds this call, whose pullback (the core's checked pullback,
        and often the rule's own closure) holds the rule's ``y``. Were that ``y`` the
        output itself, every output would sit in a reference cycle and outlive its last
        use until the cyclic garbage collector ran (measured: a softplus of 65,536
        elements 2.5x slower forward, its memory never reused).
        """
        torch = _torch()
        device = self.tensors[0].device if self.tensors else None
        self.out_paths = []
        out = []
        for path, leaf in leaves_with_paths(y):
            if leaf is None:
                continue
            if isinstance(leaf, (np.ndarray, np.generic)):
                raise numpy_only_error(self.f, what,
                                         f"output{format_path(path)}", leaf)
            if isinstance(leaf, (bool, int, float, complex)):
                leaf = torch.as_tensor(leaf, device=device)
            elif not isinstance(leaf, torch.Tensor):
                raise TangentConversionError(
                    _BRIDGE, self.f, "output", 0, format_path(path), leaf, leaf,
                    "the output leaves of a bridged function must be tensors or numbers")
            elif any(leaf is t for t in self.run_inputs):
                # an input returned as is (xp.positive, xp.real of a real tensor): a
                # Function may not save for backward an input it also returns; a view may
                leaf = leaf.view_as(leaf)
            elif not leaf.is_contiguous():
                # e.g. xp.real of a complex tensor: forward mode wants a tangent of the
                # same layout as such a view, and the frule's tangent has its own layout
                leaf = leaf.contiguous()
            elif alias:
                leaf = leaf.detach()
            self.out_paths.append(path)
            out.append(leaf)
        return tuple(out)

    def rebuild_output(self, flat: tuple) -> Any:
        if self.out_paths == [()]:
            return flat[0]
        by_path = dict(zip(self.out_paths, flat))
        return map_leaves(lambda path, leaf: by_path.get(path, leaf), self.y)

    def output_cotangent(self, grads: tuple) -> Any:
        torch = _torch()
        if self.out_paths == [()] and isinstance(self.y, torch.Tensor) and _is_float(self.y):
            return ZeroTangent() if grads[0] is None else grads[0]
        by_path = dict(zip(self.out_paths, grads))

        def leaf(path: tuple, y_leaf: Any) -> Any:
            if isinstance(y_leaf, (bool, int)) or (
                    isinstance(y_leaf, torch.Tensor) and not _is_float(y_leaf)):
                return NoTangent()
            g = by_path.get(path)
            return ZeroTangent() if g is None else g

        return tangent_like(self.y, leaf)

    def pull(self, inputs: tuple, grads: tuple, needs: tuple, reuse: bool) -> list:
        """Cotangents (tensors, or None for zero) of the inputs flagged in ``needs``."""
        if all(g is None for g in grads):
            # a pullback is linear: zero in, zero out, without running (or recomputing) it
            return [None] * len(needs)
        pullback = self.pullback if reuse else None
        if pullback is None:
            _, pullback = self.guarded("rrule", call_rrule, _BRIDGE, self.config, self.f,
                                       self.build_args(inputs), self.kwargs)
        bars = self.guarded("rrule's pullback", pullback, self.output_cotangent(grads))
        check_pullback_result(self.f, bars, len(self.args))

        def to_tensor(i: int, position: int, path: tuple, x_bar: Any) -> Any:
            x = inputs[i]
            if (not path and type(x_bar) is type(x) and x_bar.shape == x.shape
                    and x_bar.dtype == x.dtype):
                return x_bar  # the common case, already a tangent of x
            return self.project(x, x_bar, "argument", position, path, "rrule's pullback")

        def guarded_unthunk(bar: Any) -> Any:
            return self.guarded("rrule's pullback", unthunk, bar)

        wanted = [i for i, need in enumerate(needs) if need]
        out: list = [None] * len(needs)
        for i, x_bar in zip(wanted, argument_cotangents(bars, self.where, wanted, to_tensor,
                                                        guarded_unthunk)):
            out[i] = x_bar
        return out

    def push(self, inputs: tuple, tangents: tuple) -> tuple:
        """Output tangents along one tangent (or None) per input, by the frule.

        Without an frule for tensors, ``f``'s own code (which runs on tensors here) is
        differentiated by ``torch.func.jvp``.
        """
        torch = _torch()
        args = self.build_args(inputs)
        if frule.lookup(self.f, tuple(map(type, args)), self.config) is None:
            return self._push_by_torch(inputs, tangents)
        dargs: list[Any] = [NoTangent()]
        for position in range(1, len(args) + 1):
            leaves = {self.where[i][1]: t for i, t in enumerate(tangents)
                      if self.where[i][0] == position and t is not None}
            if not leaves:
                dargs.append(ZeroTangent())
                continue
            dargs.append(tangent_like(
                args[position - 1],
                lambda path, leaf, leaves=leaves: leaves.get(path, ZeroTangent())))
        y, y_dot = self.guarded("frule", call_frule, _BRIDGE, self.config, tuple(dargs),
                                self.f, args, self.kwargs)
        y_leaves = dict(leaves_with_paths(y))
        out = []
        for path in self.out_paths:
            y_leaf = y_leaves[path]
            if not isinstance(y_leaf, torch.Tensor):
                y_leaf = torch.as_tensor(y_leaf)
            if not _is_float(y_leaf):  # PyTorch wants None for a non-differentiable output
                out.append(None)
                continue
            t = self.project(y_leaf, y_dot, "output", 0, path, "frule")
            out.append(torch.zeros_like(y_leaf) if t is None else t.contiguous())
        return tuple(out)

    def _push_by_torch(self, inputs: tuple, tangents: tuple) -> tuple:
        torch = _torch()

        def f_of_tensors(*tensors: Any) -> tuple:
            y = self.guarded("function", self.f, *self.build_args(tensors), **self.kwargs)
            return self.output_leaves(y, "function")

        x_dots = tuple(torch.zeros_like(x) if t is None else t
                       for x, t in zip(inputs, tangents))
        _, y_dots = torch.func.jvp(f_of_tensors, tuple(inputs), x_dots)
        return tuple(t.contiguous() if _is_float(t) else None for t in y_dots)

    def project(self, x: Any, tangent: Any, what: str, position: int, path: tuple,
                source: str) -> Any:
        """The part of ``tangent`` at ``path`` as a tensor shaped like ``x``, or None for zero.

        Dimensions added by broadcasting are summed away, the imaginary part of a
        tangent of a real tensor is dropped, and the dtype becomes ``x``'s.
        """
        torch = _torch()
        where = f"{what} {position}{format_path(path)}" if position else f"{what}"
        t = tangent_leaf(_BRIDGE, self.f, what, position, path, x, tangent,
                         framework="torch", array="a tensor", where=where)
        if t is None:
            return refuse_none(self.f, what, position, path, x, tangent)
        if isinstance(t, (np.ndarray, np.generic)):
            raise numpy_only_error(self.f, source, where, t)
        if isinstance(t, torch.Tensor) and t.dtype == x.dtype and t.shape == x.shape:
            return t
        if not isinstance(t, (torch.Tensor, int, float, complex)) or isinstance(t, bool):
            raise TangentConversionError(_BRIDGE, self.f, what, position, format_path(path),
                                         x, t, "expected a tensor or a number")
        try:
            # sums dimensions added by broadcasting, drops the imaginary part of a
            # tangent of a real tensor, casts to x's dtype
            return ProjectTo(x)(t)
        except ProjectionError as e:
            raise TangentConversionError(_BRIDGE, self.f, what, position, format_path(path),
                                         x, t, str(e)) from None


def call_rrule(bridge: str, config: Any, f: Any, args: tuple, kwargs: dict) -> Any:
    """``_bridge.call_rrule``, saying so when a positional parameter came by keyword."""
    try:
        return _call_rrule(bridge, config, f, args, kwargs)
    except NoRuleError:
        _raise_if_positional_by_keyword(bridge, f, "rrule", args, kwargs)
        raise


def call_frule(bridge: str, config: Any, dargs: tuple, f: Any, args: tuple,
               kwargs: dict) -> Any:
    """``_bridge.call_frule``, saying so when a positional parameter came by keyword."""
    try:
        return _call_frule(bridge, config, dargs, f, args, kwargs)
    except NoRuleError:
        _raise_if_positional_by_keyword(bridge, f, "frule", args, kwargs)
        raise


def _raise_if_positional_by_keyword(bridge: str, f: Any, kind: str, args: tuple,
                                    kwargs: dict) -> None:
    if not kwargs:
        return
    try:
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):  # a builtin or ufunc without a signature
        return
    names = tuple(k for k in kwargs if k in params
                  and params[k].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if names:
        raise PositionalByKeywordError(bridge, f, kind, tuple(map(type, args)),
                                       names) from None


def check_pullback_result(f: Any, bars: Any, nargs: int) -> None:
    """Raise `PullbackError` unless ``bars`` is a tuple of ``1 + nargs`` entries (the
    check and wording every bridge shares: `check_pullback_entries`)."""
    check_pullback_entries(_BRIDGE, f, bars, nargs)


def refuse_none(f: Any, what: str, position: int, path: tuple, x: Any, tangent: Any) -> None:
    """None if ``tangent`` is a zero at ``path``; `TangentConversionError` if it is None there.

    A rule's None would otherwise read as a zero: a silent zero gradient.
    """
    if tangent_at(tangent, path) is None:
        raise TangentConversionError(_BRIDGE, f, what, position, format_path(path), x, None,
                                     non_tangent_reason(None) or "None is not a tangent")
    return None


def _function() -> type:
    """The ``autograd.Function`` of the native path (its module imports torch)."""
    from ._torch_function import Native

    return Native


@functools.cache
def _c_apply() -> Any:
    return _compat.torch_c_apply(_function())


def prepare(bridged: Any, args: tuple, kwargs: dict) -> _NativeCall:
    """The call's tensors, structure and input signature (for `choose_backend`)."""
    return _NativeCall(bridged, args, kwargs)


def native_call(call: _NativeCall) -> Any:
    """Run a call on tensors through the native ``autograd.Function``."""
    return call.rebuild_output(native_flat(call))


def native_flat(call: _NativeCall) -> tuple:
    """`native_call`'s output tensors, flat (before the output structure is rebuilt)."""
    torch = _torch()
    differentiated = torch.is_grad_enabled() and any(t.requires_grad for t in call.tensors)
    transformed = _compat.torch_transforms_active()
    if not (differentiated or transformed or _compat.torch_has_dual(call.tensors)):
        # nothing to differentiate: autograd.Function.apply costs more than a small f
        return call.run(tuple(call.tensors))
    # under torch.func the backward pass always runs with grad mode on and recomputes
    # the rrule, so forward need only run f
    call.need_pullback = differentiated and not transformed
    # (_function() imports a module: only under torch.func, where apply must bind)
    flat = (_function().apply(call, *call.tensors) if transformed
            else _c_apply()(call, *call.tensors))
    return flat if isinstance(flat, tuple) else (flat,)


def choose_backend(bridged: Any, call: _NativeCall) -> str:
    """``"native"`` if ``f`` and its rules run on tensors for this call, else ``"callback"``.

    Decided once per input signature (structure, dtypes, shapes, devices, the types
    of the other leaves and of keyword arguments) and cached in ``bridged.backends``
    with the reason for a ``"callback"`` choice. The callback path is chosen only when
    the native attempt failed because NumPy met a tensor (or no rule takes tensors) and
    ``f`` itself runs on NumPy arrays; any other failure is raised as it is.
    """
    hit = bridged.backends.get(call.key)
    if hit is not None:
        return hit[0]
    choice, _ = _probe(bridged, call.args, call.kwargs)
    bridged.backends[call.key] = choice
    return choice[0]


class _NoTensorRuleError(LookupError):
    """Neither an rrule nor an frule of ``f`` takes tensors (rules for NumPy types only)."""


# NumPy, the standard library, chainrules' core and bridges: not where a rule calls NumPy
_NOT_USER_CODE = (*(os.path.dirname(str(m.__file__)) for m in (np, warnings, inspect)),
                  os.path.join(os.path.dirname(os.path.dirname(__file__)), "core"),
                  os.path.dirname(__file__))


def _skipped_dirs() -> tuple[str, ...]:
    array_api_compat = importlib.import_module("array_api_compat")
    return (*_NOT_USER_CODE, os.path.dirname(str(_torch().__file__)),
            os.path.dirname(str(array_api_compat.__file__)))


def numpy_call_site(e: BaseException) -> str | None:
    """``"file:line (source)"``: the innermost line of the rule's (or user's) code that
    was running when ``e`` was raised, or None (NumPy, torch and the bridge skipped)."""
    import linecache

    skipped = _skipped_dirs()
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        site = None
        tb = e.__traceback__
        while tb is not None:
            filename = tb.tb_frame.f_code.co_filename
            if not filename.startswith(skipped) and not filename.startswith("<"):
                site = (filename, tb.tb_lineno)
            tb = tb.tb_next
        if site is not None:
            source = linecache.getline(*site).strip()
            return f"{site[0]}:{site[1]} ({source})" if source else f"{site[0]}:{site[1]}"
        e = e.__cause__ or e.__context__  # type: ignore[assignment]
    return None


def _numpy_met_tensor(e: BaseException) -> bool:
    """Whether a failure of the native attempt is NumPy meeting a tensor."""
    return (isinstance(e, (_NoTensorRuleError, NumPyOnlyRuleError, DeprecationWarning))
            or _numpy_refused(e))


def _probe(bridged: Any, args: tuple, kwargs: dict) -> tuple[tuple[str, str], Any]:
    """Run the rules once on meta tensors (no data), or on the real ones if that fails.

    Returns the choice with its reason, and the failure on the real tensors (or None).
    """
    torch = _torch()
    tensor_t = torch.Tensor

    def meta(path: tuple, leaf: Any) -> Any:
        return (torch.empty(leaf.shape, dtype=leaf.dtype, device="meta")
                if isinstance(leaf, tensor_t) else leaf)

    def detached(path: tuple, leaf: Any) -> Any:
        # requiring grad (with grad mode on), a float tensor refuses NumPy's
        # __array__: NumPy would otherwise convert it silently and np.linalg.inv, say,
        # would hand back a tensor through __array_wrap__, and then fail under torch.func
        return _refusing_numpy(leaf, tensor_t)

    failures: list[BaseException] = []
    for make in (meta, detached):
        try:
            # a NumPy ufunc returns a tensor through Tensor.__array_wrap__ with only a
            # DeprecationWarning: make that fail the probe
            with torch.set_grad_enabled(make is detached), warnings.catch_warnings():
                warnings.simplefilter("error", DeprecationWarning)
                _try_rules(bridged, tuple(map_leaves(make, args)), kwargs)
        except Exception as e:
            failures.append(e)
            continue
        return ("native", ""), None
    real = failures[-1]
    if not _numpy_met_tensor(real) or not _runs_on_numpy(bridged, args, kwargs):
        # not NumPy's doing (a user's broadcasting mistake, a wrong tangent...): as is
        raise real
    return ("callback", _fallback_reason(bridged.f, failures)), real


def _refusing_numpy(leaf: Any, tensor_t: type) -> Any:
    """A detached copy of a float tensor that requires grad (so that NumPy refuses it)."""
    if not isinstance(leaf, tensor_t):
        return leaf
    t = leaf.detach()
    if _is_float(t):
        try:
            t.requires_grad_()
        except RuntimeError:  # under torch.func: its tensors have no storage, refuse NumPy
            pass
    return t


def _fallback_reason(f: Any, failures: list[BaseException]) -> str:
    if isinstance(failures[-1], _NoTensorRuleError):
        return str(failures[-1])
    for e in failures:  # the meta attempt names NumPy's call best (its data is missing)
        if _numpy_met_tensor(e):
            site = numpy_call_site(e)
            if site is not None:
                return f"NumPy-only: a NumPy call met a tensor at {site}"
    return (f"NumPy-only: {func_name(f)} itself is a NumPy (or SciPy) function, or its rule "
            f"returned NumPy arrays")


# NumPy and SciPy functions whose PyTorch equivalent a user can call instead
_TORCH_EQUIVALENTS = {
    "scipy.linalg.expm": "torch.linalg.matrix_exp",
    "scipy.linalg.inv": "torch.linalg.inv",
    "scipy.linalg.det": "torch.linalg.det",
    "scipy.linalg.solve": "torch.linalg.solve",
    "scipy.linalg.cholesky": "torch.linalg.cholesky",
    "scipy.linalg.eigh": "torch.linalg.eigh",
    "scipy.linalg.svd": "torch.linalg.svd",
    "scipy.linalg.qr": "torch.linalg.qr",
    "scipy.linalg.solve_triangular": "torch.linalg.solve_triangular",
    "scipy.special.erf": "torch.special.erf",
    "scipy.special.erfc": "torch.special.erfc",
    "scipy.special.erfinv": "torch.special.erfinv",
    "scipy.special.expit": "torch.special.expit",
    "scipy.special.logit": "torch.special.logit",
    "scipy.special.gammaln": "torch.special.gammaln",
    "scipy.special.digamma": "torch.special.digamma",
    "scipy.special.psi": "torch.special.digamma",
    "scipy.special.polygamma": "torch.special.polygamma",
    "scipy.special.multigammaln": "torch.special.multigammaln",
    "scipy.special.i0": "torch.special.i0",
    "scipy.special.i0e": "torch.special.i0e",
    "scipy.special.i1": "torch.special.i1",
    "scipy.special.i1e": "torch.special.i1e",
    "scipy.special.ndtr": "torch.special.ndtr",
    "scipy.special.ndtri": "torch.special.ndtri",
    "scipy.special.log_ndtr": "torch.special.log_ndtr",
    "scipy.special.xlogy": "torch.special.xlogy",
    "scipy.special.xlog1py": "torch.special.xlog1py",
    "scipy.special.entr": "torch.special.entr",
    "scipy.special.sinc": "torch.special.sinc",
    "scipy.special.zeta": "torch.special.zeta",
    "scipy.special.logsumexp": "torch.logsumexp",
    "scipy.special.softmax": "torch.softmax",
    "scipy.special.log_softmax": "torch.log_softmax",
    "numpy.linalg.inv": "torch.linalg.inv (xp.linalg.inv in array-API code)",
    "numpy.linalg.det": "torch.linalg.det (xp.linalg.det in array-API code)",
    "numpy.linalg.solve": "torch.linalg.solve (xp.linalg.solve in array-API code)",
}


def torch_equivalent(f: Any) -> str | None:
    """The PyTorch function to call instead of the NumPy or SciPy function ``f``, if any."""
    module = getattr(f, "__module__", None) or ""
    name = getattr(f, "__name__", None)
    if name is None:
        return None
    if module.startswith("scipy.special") or isinstance(f, np.ufunc):
        for prefix in ("scipy.special.", "numpy."):
            hit = _TORCH_EQUIVALENTS.get(prefix + name)
            if hit is not None:
                return hit
    top = module.split(".")[0]
    sub = "linalg" if "linalg" in module else "special" if "special" in module else ""
    return _TORCH_EQUIVALENTS.get(f"{top}.{sub}.{name}") if sub else None


def numpy_only_error(f: Any, what: str, where: str, got: Any) -> NumPyOnlyRuleError:
    """``NumPyOnlyRuleError.on_tensors``, with where NumPy met the tensor and what to call
    instead (a NumPy ``DeprecationWarning`` is described, not quoted)."""
    site = numpy_call_site(got) if isinstance(got, BaseException) else None
    shown = got
    if isinstance(got, DeprecationWarning):
        shown = RuntimeError("NumPy converted a tensor to an array and wrapped its result "
                             "back into a tensor (Tensor.__array_wrap__)")
    error = NumPyOnlyRuleError.on_tensors(_BRIDGE, f, what, where, shown)
    extra = "" if site is None else f" NumPy met the tensor at {site}."
    equivalent = torch_equivalent(f)
    if equivalent is not None:
        extra += f" PyTorch's own equivalent of {func_name(f)} is {equivalent}."
    if extra:
        error.args = (str(error) + extra,)
    error.got = got
    return error


def refuse_numpy_only(bridged: Any, call: _NativeCall) -> None:
    """On the first native call of a signature: `NumPyOnlyRuleError` if ``f`` is NumPy-only.

    Eagerly, NumPy converts tensors that do not require grad and wraps its result back
    into a tensor, so a NumPy function (``np.linalg.inv``, ``scipy.special.erf``) seems
    to run natively; it then fails under ``torch.func``, ``torch.compile`` or with
    gradients. So ``f`` runs once more on copies that require grad, which NumPy
    refuses. (A NumPy-only rule fails by itself when it runs: its tensors require grad.)
    The check is recorded in ``bridged.backends``.
    """
    torch = _torch()
    tensor_t = torch.Tensor

    def refusing(path: tuple, leaf: Any) -> Any:
        return _refusing_numpy(leaf, tensor_t)

    bridged.backends[call.key] = ("native", "")
    try:
        with torch.enable_grad(), warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            bridged.f(*map_leaves(refusing, call.args), **call.kwargs)
    except Exception as e:
        if not _numpy_met_tensor(e):
            return  # not NumPy's doing, and the native call itself ran
        failure = e
    else:
        return
    choice = ("callback", _fallback_reason(bridged.f, [failure]))
    bridged.backends[call.key] = choice
    name = func_name(bridged.f)
    equivalent = torch_equivalent(bridged.f)
    fix = (f"call {equivalent} instead, or use torch_function({name}, backend=\"auto\")"
           if equivalent is not None else
           f'use torch_function({name}, backend="auto") (or "callback"), or write it with '
           f"xp = chainrules.array_namespace(x) so it runs on tensors")
    error = NumPyOnlyRuleError(
        _BRIDGE, bridged.f,
        f'{_BRIDGE}({name}, backend="native"): {name} does not run on tensors ({choice[1]}). '
        f"Eagerly it may seem to work (NumPy converts tensors that do not require grad and "
        f"wraps its result back), but it fails under torch.func, torch.compile or with "
        f"gradients. To run it on tensors, {fix}.")
    vars(error).update(what="function", where=choice[1])
    raise error


def _runs_on_numpy(bridged: Any, args: tuple, kwargs: dict) -> bool:
    """Whether ``f`` runs on NumPy copies of the tensors (what the callback path needs)."""
    tensor_t = _torch().Tensor

    def to_numpy(path: tuple, leaf: Any) -> Any:
        return leaf.detach().cpu().numpy() if isinstance(leaf, tensor_t) else leaf

    try:
        np_args = map_leaves(to_numpy, args)
    except RuntimeError:  # under torch.func: no values to try it on, the callback decides
        return True
    try:
        bridged.f(*np_args, **kwargs)
    except Exception:
        return False
    return True


def _try_rules(bridged: Any, args: tuple, kwargs: dict) -> None:
    """Raise unless ``f`` and its rrule (and frule, if any) give tensors for tensor arguments."""
    torch = _torch()
    call = _NativeCall(bridged, args, kwargs)
    f, config = call.f, call.config
    prefix = () if config is None else (config,)
    # f itself first: under torch.func (and without grad) the forward pass runs only f
    call.y = f(*args, **kwargs)
    call.output_leaves(call.y, "function")
    found = False
    if rrule.lookup(f, tuple(map(type, args)), config) is not None:
        found = True
        call.y, call.pullback = rrule(*prefix, f, *args, **kwargs)
        outs = call.output_leaves(call.y, "rrule")
        call.pull(tuple(call.tensors), tuple(torch.ones_like(o) if _is_float(o) else None
                                              for o in outs),
                  tuple(_is_float(t) for t in call.tensors), reuse=True)
    if frule.lookup(f, tuple(map(type, args)), config) is not None:
        found = True
        call.push(tuple(call.tensors), tuple(torch.ones_like(t) if _is_float(t) else None
                                            for t in call.tensors))
    if not found:
        raise _NoTensorRuleError(f"no rrule or frule of {func_name(f)} takes tensors")
