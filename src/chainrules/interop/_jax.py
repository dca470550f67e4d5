"""The JAX bridge: functions with rules become JAX-differentiable.

Two backends. ``backend="native"`` (``_jax_native``): ``f`` and its rules run on JAX
values, and every JAX transformation composes. ``backend="callback"`` (this module):
``f`` and its rules run on NumPy arrays, under tracing in ``jax.pure_callback``.
``backend="auto"`` traces ``f`` and its rules on abstract values once per input
signature and takes the native path when that works (``_JaxBridged.backend_for``).
The rest of this docstring is about the callback path.

How a bridged call runs on the callback path. The arguments are flattened as a JAX
pytree; leaves that are ``jax.Array`` (concrete or traced) are the differentiable
inputs, every other leaf (Python numbers, NumPy arrays, strings) is passed to the
function as it is.

- Concrete inputs (eager mode): the function and its rules run directly on NumPy
  views of the arrays; the rrule's pullback is kept from the forward pass for the
  backward pass.
- Traced inputs (``jax.jit``, ``jax.vmap``): the NumPy code runs in
  ``jax.pure_callback``. The forward callback keeps the pullback in a small table
  and returns a token; the backward callback uses it if it is still there, and
  otherwise recomputes ``rrule`` from the inputs, which are always saved as
  residuals. The table is a cache, never needed for correctness: XLA may drop,
  repeat or reorder callbacks. Under ``vmap`` callbacks run once per batch element
  (``vmap_method="sequential"``), which is right for any function.

Three modes, because JAX lets a function have a custom VJP or a custom JVP, not
both, and because the one JAX primitive that carries a custom transpose
(``linear_call``) has no batching rule:

============  ==========================================  ==============================
mode          works                                       does not work
============  ==========================================  ==============================
"reverse"     grad, vjp, jacrev, jit, vmap (of all these)  jvp, jacfwd (clear error)
"forward"     jvp, jacfwd, jit, vmap (of all these)        grad, vjp (JAX cannot
                                                           transpose a callback)
"both"        grad, vjp, jvp, jit                          vmap of any derivative
                                                           (clear error)
============  ==========================================  ==============================

"reverse" is a ``jax.custom_vjp`` built from the rrule; "forward" a
``jax.custom_jvp`` whose tangent is the frule's, computed in a callback; "both" the
same ``custom_jvp`` with the tangent map wrapped in ``linear_call`` and transposed
by the rrule's pullback.

Complex numbers: JAX's cotangent of ``z`` is the conjugate of the ChainRules one
(``jax.grad(lambda z: abs(z)**2)(z) == 2*conj(z)``); cotangents are conjugated on
the way in and out. Tangents (forward mode) need no conversion.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np

from chainrules.core import (
    RuleConfig,
    ZeroTangent,
    frule,
    rrule,
)
from chainrules.core._errors import func_name

from . import _compat
from . import _jax_native as _native
from ._bridge import (
    argument_cotangents,
    call_frule,
    call_rrule,
    check_pullback_entries,
    frule_tangents,
    is_differentiable_dtype,
    leaf_tangent,
    numpy_conj,
    output_cotangent,
)
from ._errors import (
    NoRuleError,
    NumPyOnlyRuleError,
    ResultShapeError,
    UnsupportedTransformError,
)
from ._jax_cache import _CALLBACK, _CHOICES, _PLANS, _STASH, BackendChoice, _plan_key, _remember
from ._tree import leaves_with_paths

__all__ = ["jax_function"]

_BRIDGE = "jax_function"
_MODES = ("reverse", "forward", "both")
_BACKENDS = ("auto", "native", "callback")




def _to_numpy(x: Any) -> Any:
    """A NumPy view of a concrete JAX array; 0-d arrays become NumPy scalars."""
    a = np.asarray(x)
    return a[()] if a.ndim == 0 else a


def _example_input(shape: tuple, dtype: Any) -> np.ndarray:
    """A harmless input for probing the result's shape: 0.5, times the identity for matrices."""
    dt = np.dtype(dtype)
    if dt.kind not in "fc":
        return np.zeros(shape, dtype=dt)
    x = np.full(shape, 0.5, dtype=dt)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        x = x * np.eye(shape[-1], dtype=dt)
    return x


class _Call:
    """One call of a bridged function: its structure, its static leaves, its dynamic ones."""

    def __init__(self, bridged: _JaxBridged, args: tuple, kwargs: dict) -> None:
        jax = _compat.import_jax()
        self.bridged = bridged
        self.f = bridged.f
        self.kwargs = kwargs
        flat, self.treedef = jax.tree_util.tree_flatten_with_path(args)
        self.template: list = []
        self.dyn: list = []
        self.dyn_where: list[tuple[int, tuple]] = []
        self.dyn_slots: list[int] = []
        for keypath, leaf in flat:
            if isinstance(leaf, jax.Array):
                position = keypath[0].idx + 1
                path = tuple(_compat.jax_key_step(k) for k in keypath[1:])
                self.dyn_where.append((position, path))
                self.dyn_slots.append(len(self.template))
                self.dyn.append(leaf)
                self.template.append(None)
            else:
                self.template.append(leaf)
        self.nargs = len(args)
        self.out_treedef: Any = None
        self.out_paths: list[tuple] = []
        self.perturbed: tuple = ()

    # -- the NumPy side ----------------------------------------------------------------

    def numpy_args(self, dyn_np: list) -> tuple:
        leaves = list(self.template)
        for slot, v in zip(self.dyn_slots, dyn_np):
            leaves[slot] = v
        return self.treedef.unflatten(leaves)

    def flatten_output(self, y: Any) -> list[np.ndarray]:
        """The output's leaves as arrays of JAX's dtypes; remembers the output's structure."""
        jax = _compat.import_jax()
        flat, treedef = jax.tree_util.tree_flatten_with_path(y)
        self.out_treedef = treedef
        self.out_paths = [tuple(_compat.jax_key_step(k) for k in kp) for kp, _ in flat]
        out = []
        for _, leaf in flat:
            a = np.asarray(leaf)
            out.append(a.astype(jax.dtypes.canonicalize_dtype(a.dtype), copy=False))
        return out

    def run_primal(self, dyn_np: list) -> list[np.ndarray]:
        return self.flatten_output(self.f(*self.numpy_args(dyn_np), **self.kwargs))

    def run_rrule(self, dyn_np: list) -> tuple[list[np.ndarray], int]:
        y, pullback = call_rrule(_BRIDGE, self.bridged.config, self.f,
                                 self.numpy_args(dyn_np), self.kwargs)
        token = _STASH.put((pullback, y))
        return self.flatten_output(y), token

    def run_pullback(self, token: int, dyn_np: list, cts: dict, need: list[int]) -> list:
        """Cotangents (JAX convention) of the dynamic leaves ``need``; None for zeros.

        ``cts`` maps an output leaf's index to its cotangent (JAX convention).
        """
        entry = _STASH.pop(int(token))
        if entry is not None and cts:
            # under vmap_method="expand_dims" a batched cotangent (jax.jacrev) may meet a
            # pullback kept from an unbatched forward pass: recompute it for this batch
            y_shapes = [np.shape(a) for a in self.flatten_output(entry[1])]
            if any(y_shapes[k] != np.shape(c) for k, c in cts.items()):
                entry = None
        args = self.numpy_args(dyn_np)
        if entry is None:
            y, pullback = call_rrule(_BRIDGE, self.bridged.config, self.f, args, self.kwargs)
        else:
            pullback, y = entry
        if self.out_treedef is None:
            self.flatten_output(y)
        y_bar = output_cotangent(y, {self.out_paths[k]: numpy_conj(ct)
                                     for k, ct in cts.items()})
        bars = pullback(y_bar)
        check_pullback_entries(_BRIDGE, self.f, bars, len(args))

        def to_numpy(i: int, position: int, path: tuple, bar: Any) -> Any:
            g = leaf_tangent(_BRIDGE, self.f, "argument", position, path, dyn_np[i], bar)
            return None if g is None else numpy_conj(g)

        return argument_cotangents(bars, self.dyn_where, need, to_numpy)

    def run_frule(self, dyn_np: list, lin: list[int], tangents_np: list) -> list:
        """Output tangents (arrays; None for zero) along the tangents of dynamic leaves ``lin``."""
        args = self.numpy_args(dyn_np)
        dargs = frule_tangents(args, self.dyn_where, dict(zip(lin, tangents_np)),
                               constant=ZeroTangent(), convert=_np_tangent)
        y, y_dot = call_frule(_BRIDGE, self.bridged.config, dargs, self.f, args,
                              self.kwargs)
        y_leaves = self.flatten_output(y)
        y_np = list(leaves_with_paths(y))
        by_out = dict(y_np)
        out = []
        for k, path in enumerate(self.out_paths):
            g = leaf_tangent(_BRIDGE, self.f, "output", 0, path, by_out.get(path, y_leaves[k]),
                             y_dot)
            out.append(g)
        return out

    # -- shapes for tracing ------------------------------------------------------------

    def out_spec(self, dyn: list) -> list:
        """ShapeDtypeStructs of the output leaves, for ``pure_callback``."""
        jax = _compat.import_jax()
        b = self.bridged
        key = None
        try:
            key = (self.treedef, tuple(self.template), tuple(sorted(self.kwargs.items())),
                   tuple((tuple(d.shape), str(d.dtype)) for d in dyn),
                   str(jax.dtypes.canonicalize_dtype(np.float64)))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in b._spec_cache:
            spec, self.out_treedef, self.out_paths = b._spec_cache[key]
            return spec
        if b.result_shape is not None:
            rs = b.result_shape
            if callable(rs):
                structs = [jax.ShapeDtypeStruct(d.shape, d.dtype) for d in dyn]
                rs = rs(*self.numpy_args(structs), **self.kwargs)
            flat, treedef = jax.tree_util.tree_flatten_with_path(rs)
            self.out_treedef = treedef
            self.out_paths = [tuple(_compat.jax_key_step(k) for k in kp) for kp, _ in flat]
            spec = [jax.ShapeDtypeStruct(s.shape, jax.dtypes.canonicalize_dtype(s.dtype))
                    for _, s in flat]
        else:
            examples = [_example_input(tuple(d.shape), d.dtype) for d in dyn]
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    leaves = self.run_primal([_to_numpy(e) for e in examples])
            except Exception as e:
                raise ResultShapeError(_BRIDGE, self.f, f"{type(e).__qualname__}: {e}") from e
            spec = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in leaves]
        if key is not None:
            b._spec_cache[key] = (spec, self.out_treedef, self.out_paths)
        return spec


def _np_tangent(t: Any, leaf: Any) -> Any:
    if isinstance(leaf, np.generic) or np.ndim(leaf) == 0:
        return np.asarray(t)[()]
    return t


def _fit(leaves: list, spec: list) -> tuple:
    """The callback's results in the dtypes announced to JAX (a rule may compute in another)."""
    if len(leaves) != len(spec):
        raise ValueError(
            f"{_BRIDGE}: the function returned {len(leaves)} arrays under tracing, but "
            f"{len(spec)} were expected from its result_shape / example call. Pass "
            f"result_shape= matching what the function returns."
        )
    return tuple(a if a.dtype == s.dtype else a.astype(s.dtype) for a, s in zip(leaves, spec))


def _is_concrete(xs: Any) -> bool:
    return not any(_compat.is_jax_tracer(x) for x in xs)


class _JaxBridged:
    """The callable returned by `jax_function`."""

    def __init__(self, f: Callable, mode: str | None, config: RuleConfig | None,
                 result_shape: Any, vmap_method: str, backend: str) -> None:
        self.f = f
        self.mode = mode
        self.config = config
        self.result_shape = result_shape
        self.vmap_method = vmap_method
        self.backend = backend
        self._spec_cache: dict = {}
        self._choices: dict = {}
        functools.update_wrapper(self, f, updated=())

    def __repr__(self) -> str:
        return (f"jax_function({func_name(self.f)}, backend={self.backend!r}, "
                f"mode={self.mode!r})")

    def backend_for(self, *args: Any, **kwargs: Any) -> BackendChoice:
        """How a call with these arguments runs: backend, mode, why (once per signature).

        Examples:
            >>> import pytest; jax = pytest.importorskip("jax")  # skips without JAX
            >>> import chainrules
            >>> from chainrules.interop.jax import jax_function
            >>> def cube(x):
            ...     return x**3
            >>> @chainrules.frule.register(cube)
            ... def cube_frule(dargs, x):
            ...     return x**3, 3 * x**2 * dargs[1]
            >>> jax_function(cube).backend_for(jax.numpy.ones(3))
            BackendChoice(backend='native', mode='forward', reason=None)
        """
        if self.backend == "callback":
            return BackendChoice("callback", self._callback_mode(), None)
        return self._choose(_native.NativeCall(self.f, self.config, args, kwargs), args, kwargs)

    def _choose(self, call: _native.NativeCall, args: tuple, kwargs: dict) -> BackendChoice:
        key = call.signature()
        shared = None
        if key is not None:
            shared = (self.f, self.mode, self.backend, self.config,
                      self.result_shape is None, key)
            try:
                hash(shared)
            except TypeError:
                shared = None
        choice = _CHOICES.get(shared) if shared is not None else None
        if choice is None:
            choice = self._probe(call, args, kwargs)
            if shared is not None:
                _remember(_CHOICES, shared, choice)
        if key is not None:
            self._choices[key] = choice
        return choice

    def _probe(self, call: _native.NativeCall, args: tuple, kwargs: dict) -> BackendChoice:
        """Trace ``f`` and its rules once on abstract values; what that says decides.

        Only NumPy meeting a tracer (`NumPyOnlyRuleError`) or a rule answering zero for
        JAX values sends ``"auto"`` to the callback path; any other error of the native
        attempt is the user's, and is raised as it is. ``"native"`` raises the
        NumPy-only error here, at the first call, eager or traced.
        """
        if self.mode is not None:
            modes = ["reverse" if self.mode == "reverse" else "forward"]
        elif frule.has_rules(self.f):
            modes = ["forward", "reverse"] if rrule.has_rules(self.f) else ["forward"]
        else:
            modes = ["reverse"]
        reason: str | None = None
        numpy_only: Exception | None = None
        for mode in modes:
            try:
                if not _native.probe(call, mode):
                    reason = reason or (
                        f"the {'frule' if mode == 'forward' else 'rrule'} of "
                        f"{func_name(self.f)} returned only zero tangents for JAX inputs (a "
                        f"rule that tests for NumPy arrays?), so the callback path is used")
                    if self.backend == "native":
                        return BackendChoice("native", mode, None)
                    continue
            except NumPyOnlyRuleError as e:
                numpy_only = numpy_only or e
                reason = reason or f"{type(e).__name__}: {e}"
                continue
            except NoRuleError as e:
                # rules registered for NumPy types only (np.fft.fft's): NumPy-only too, but
                # not a call that no rule serves, nor a keyword that should be positional
                if self.backend == "native" or e.hint or not (
                        frule if e.kind == "frule" else rrule).has_rules(self.f):
                    raise
                numpy_only = numpy_only or e
                reason = reason or f"{type(e).__name__}: {e}"
                continue
            return BackendChoice("native", mode, None)
        if numpy_only is not None and self.backend == "native":
            raise numpy_only
        if numpy_only is not None:
            self._check_primal_runs_on_numpy(numpy_only, args, kwargs)
        return BackendChoice("callback", self._callback_mode(), reason)

    def _check_primal_runs_on_numpy(self, error: Exception, args: tuple,
                                    kwargs: dict) -> None:
        """Raise ``error`` (the native attempt's) unless ``f`` runs on NumPy values, which
        the callback path needs: on the call's own values when they are concrete, else on
        the example inputs the callback path probes shapes with."""
        if self.result_shape is not None:
            return
        call = _Call(self, args, kwargs)
        if _is_concrete(call.dyn) and _is_concrete(
                _compat.import_jax().tree_util.tree_leaves(kwargs)):
            values = [_to_numpy(d) for d in call.dyn]
        else:
            values = [_to_numpy(_example_input(tuple(d.shape), d.dtype)) for d in call.dyn]
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                call.run_primal(values)
        except Exception as e:
            if not isinstance(error, NumPyOnlyRuleError):
                raise error from e
            both = NumPyOnlyRuleError(
                error.bridge, error.function,
                f"{error} The callback path cannot take over either: {func_name(self.f)} "
                f"itself fails on NumPy arrays ({type(e).__qualname__}: {e}).")
            both.__dict__.update({k: v for k, v in vars(error).items() if k != "args"})
            raise both from e

    def _callback_mode(self) -> str:
        if self.mode is not None:
            return self.mode
        # "reverse" unless only an frule exists, with which reverse mode cannot work
        return "forward" if frule.has_rules(self.f) and not rrule.has_rules(self.f) \
            else "reverse"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        jax = _compat.import_jax()
        if self.backend != "callback":
            leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
            key = _plan_key(self, treedef, leaves, jax.Array)
            plan = _PLANS.get(key) if key is not None else None
            if plan is None:
                plan = self._plan(args, kwargs, key)
            if plan is not _CALLBACK:
                fn, ncall = plan
                dyn = tuple(x for x in leaves if isinstance(x, jax.Array))
                if any(map(_compat.is_jax_tracer, dyn)):
                    out = self._apply(fn, dyn)
                else:  # nothing to differentiate: the function itself, compiled when hot
                    out = ncall.eager_primal(dyn)
                return ncall.unflatten_output(out)
        call = _Call(self, args, kwargs)
        if not call.dyn:
            out = call.run_primal([])
            return call.out_treedef.unflatten([jax.numpy.asarray(a) for a in out])
        mode = self._callback_mode()
        if mode == "reverse":
            fn = _reverse_mode(call)
        else:
            fn = _forward_mode(call, transposable=mode == "both")
        out = self._apply(fn, call.dyn)
        return call.out_treedef.unflatten(list(out))

    def _plan(self, args: tuple, kwargs: dict, key: Any) -> Any:
        """How calls of this structure run: ``(fn, call)`` for the native path (``fn`` the
        custom-derivative function, ``call`` the structure it closes over, holding no
        operand), or ``_CALLBACK``; kept in ``_PLANS`` under ``key`` unless it is None."""
        ncall = _native.NativeCall(self.f, self.config, args, kwargs)
        plan: Any = _CALLBACK
        if ncall.dyn:
            choice = self._choose(ncall, args, kwargs)
            if choice.backend == "native":
                fn = (_native.forward_function(ncall) if choice.mode == "forward"
                      else _native.reverse_function(ncall))
                plan = (fn, ncall)
        ncall.forget_operands()
        ncall.cached = key is not None and _native.compilable(self.f)
        if key is not None:
            _remember(_PLANS, key, plan)
        return plan

    def _apply(self, fn: Callable, dyn: list | tuple) -> Any:
        try:
            return fn(*dyn)
        except TypeError as e:
            if "forward-mode" in str(e) and "custom_vjp" in str(e):
                raise UnsupportedTransformError(
                    _BRIDGE, self.f, "jax.jvp (forward mode)",
                    "a JAX function has either a custom VJP or a custom JVP, and this one was "
                    "bridged in reverse mode (jax.custom_vjp from the rrule)",
                    f"Register an frule and use jax_function({func_name(self.f)}) (native) or "
                    f"mode='forward' / 'both', or use reverse mode (jax.grad, jax.vjp, "
                    f"jax.jacrev)."
                ) from None
            raise


def _callback(call: _Call, fn: Callable, spec: list, *operands: Any) -> Any:
    jax = _compat.import_jax()
    if call.bridged.vmap_method == "expand_dims":
        fn = _broadcast_batch(fn, [tuple(np.shape(o)) for o in operands])
    try:
        return jax.pure_callback(fn, spec, *operands, vmap_method=call.bridged.vmap_method)
    except ValueError as e:
        if "Pure callbacks do not support JVP" not in str(e):
            raise
        raise UnsupportedTransformError(
            _BRIDGE, call.f, "differentiating its derivative (jax.hessian, jax.jvp of "
            "jax.grad, jax.jacfwd of jax.jacrev)",
            "its rules run on NumPy arrays in jax.pure_callback (the callback backend), "
            "which JAX cannot differentiate",
            f"Write {func_name(call.f)} and its rules with xp = chainrules.array_namespace(x) "
            f"so that jax_function's backend='native' applies (see backend_for)") from None


def _batch_lead(d: tuple, shapes: list) -> tuple:
    """The batch dimensions ``vmap_method="expand_dims"`` put in front of the operands."""
    return np.broadcast_shapes(*(np.shape(x)[: np.ndim(x) - len(s)] for x, s in zip(d, shapes)))


def _broadcast_batch(fn: Callable, shapes: list) -> Callable:
    """``fn`` seeing every operand with the full batch dimensions (unbatched ones have size 1).

    Without it a rule would see an unbatched input of size 1 next to a batched
    cotangent, and the projection onto the input would sum over the batch.
    """

    def batched(*d: Any) -> Any:
        lead = _batch_lead(d, shapes)
        if lead:
            d = tuple(np.broadcast_to(x, lead + s) for x, s in zip(d, shapes))
        return fn(*d)

    return batched


def _primal(call: _Call, dyn: tuple) -> tuple:
    jnp = _compat.import_jax().numpy
    if _is_concrete(dyn):
        return tuple(jnp.asarray(a) for a in call.run_primal([_to_numpy(d) for d in dyn]))
    spec = call.out_spec(list(dyn))

    def primal_callback(*d: Any) -> tuple:
        return _fit(call.run_primal([_to_numpy(x) for x in d]), spec)

    return tuple(_callback(call, primal_callback, spec, *dyn))


def _check_has_rrule(call: _Call) -> None:
    # Under tracing the call fails inside XLA, where errors lose their type; say it now.
    if not rrule.has_rules(call.f):
        raise NoRuleError(_BRIDGE, call.f, "rrule", tuple(type(d) for d in call.dyn),
                          "reverse mode (a gradient or VJP)")


def _check_has_frule(call: _Call) -> None:
    if not frule.has_rules(call.f):
        raise NoRuleError(_BRIDGE, call.f, "frule", tuple(type(d) for d in call.dyn),
                          "forward mode (a JVP)")


def _reverse_mode(call: _Call) -> Callable:
    jax = _compat.import_jax()
    jnp = jax.numpy
    symbolic_zero = _compat.jax_symbolic_zero_type()

    def primal(*dyn: Any) -> tuple:
        return _primal(call, dyn)

    def fwd(*pdyn: Any) -> tuple:
        values = tuple(jnp.asarray(p.value) for p in pdyn)
        call.perturbed = tuple(p.perturbed for p in pdyn)
        if _is_concrete(values):
            leaves, token = call.run_rrule([_to_numpy(v) for v in values])
            out = tuple(jnp.asarray(a) for a in leaves)
            return out, (np.int32(token), *values)
        _check_has_rrule(call)
        spec = call.out_spec(list(values))

        shapes = [tuple(v.shape) for v in values]

        def fwd_callback(*d: Any) -> tuple:
            leaves, token = call.run_rrule([_to_numpy(x) for x in d])
            # one token per batch element under vmap_method="expand_dims"
            return (*_fit(leaves, spec), np.full(_batch_lead(d, shapes), token, np.int32))

        res = _callback(call, fwd_callback, [*spec, jax.ShapeDtypeStruct((), np.int32)],
                        *values)
        return tuple(res[:-1]), (res[-1], *values)

    def bwd(res: tuple, cts: tuple) -> tuple:
        token, values = res[0], res[1:]
        perturbed = call.perturbed or (True,) * len(values)
        need = [i for i, v in enumerate(values)
                if perturbed[i] and is_differentiable_dtype(v.dtype)]
        present = [k for k, c in enumerate(cts) if not isinstance(c, symbolic_zero)]
        grads: list[Any] = [None] * len(values)
        if not need:
            return tuple(grads)
        if _is_concrete((token, *values, *(cts[k] for k in present))):
            out = call.run_pullback(token, [_to_numpy(v) for v in values],
                                    {k: _to_numpy(cts[k]) for k in present}, need)
            for i, g in zip(need, out):
                if g is not None:
                    grads[i] = jnp.asarray(g, dtype=values[i].dtype)
            return tuple(grads)
        spec = [jax.ShapeDtypeStruct(values[i].shape, values[i].dtype) for i in need]

        def bwd_callback(tok: Any, *rest: Any) -> tuple:
            vals = [_to_numpy(x) for x in rest[: len(values)]]
            ct_vals = {k: _to_numpy(c) for k, c in zip(present, rest[len(values):])}
            out = call.run_pullback(np.asarray(tok).flat[0], vals, ct_vals, need)
            return tuple(
                np.zeros(s.shape, s.dtype) if g is None else np.asarray(g, dtype=s.dtype)
                for g, s in zip(out, spec))

        out = _callback(call, bwd_callback, spec, token, *values, *(cts[k] for k in present))
        for i, g in zip(need, out):
            grads[i] = g
        return tuple(grads)

    fn = jax.custom_vjp(primal)
    fn.defvjp(fwd, bwd, symbolic_zeros=True)
    return fn


def _forward_mode(call: _Call, transposable: bool) -> Callable:
    jax = _compat.import_jax()
    jnp = jax.numpy
    symbolic_zero = _compat.jax_symbolic_zero_type()
    linear_call = _compat.jax_linear_call()

    def primal(*dyn: Any) -> tuple:
        return _primal(call, dyn)

    def jvp_rule(primals: tuple, tangents: tuple) -> tuple:
        primals = tuple(jnp.asarray(p) for p in primals)
        tangents = tuple(t if isinstance(t, symbolic_zero) else jnp.asarray(t) for t in tangents)
        y = _primal(call, primals)
        lin = [i for i, t in enumerate(tangents)
               if not isinstance(t, symbolic_zero) and is_differentiable_dtype(primals[i].dtype)]
        diff_out = [k for k, a in enumerate(y) if is_differentiable_dtype(a.dtype)]
        y_dot: list[Any] = [np.zeros(a.shape, _compat.jax_float0()) for a in y]
        if not lin:
            for k in diff_out:
                y_dot[k] = jnp.zeros_like(y[k])
            return y, tuple(y_dot)
        out_spec = [jax.ShapeDtypeStruct(y[k].shape, y[k].dtype) for k in diff_out]
        lin_spec = [jax.ShapeDtypeStruct(primals[i].shape, primals[i].dtype) for i in lin]
        n = len(primals)

        def push_callback(*d: Any) -> tuple:
            vals = [_to_numpy(x) for x in d[:n]]
            out = call.run_frule(vals, lin, [np.asarray(t) for t in d[n:]])
            return tuple(
                np.zeros(s.shape, s.dtype) if out[k] is None
                else np.asarray(out[k], dtype=s.dtype)
                for k, s in zip(diff_out, out_spec))

        def pushforward(res: tuple, lin_tangents: tuple) -> tuple:
            if _is_concrete((*res, *lin_tangents)):
                return tuple(jnp.asarray(a) for a in push_callback(*res, *lin_tangents))
            _check_has_frule(call)
            return tuple(_callback(call, push_callback, out_spec, *res, *lin_tangents))

        def pullback(res: tuple, cts: tuple) -> tuple:
            _check_has_rrule(call)

            def pull_callback(*d: Any) -> tuple:
                vals = [_to_numpy(x) for x in d[:n]]
                ct_vals = {k: _to_numpy(c) for k, c in zip(diff_out, d[n:])}
                out = call.run_pullback(-1, vals, ct_vals, lin)
                return tuple(
                    np.zeros(s.shape, s.dtype) if g is None else np.asarray(g, dtype=s.dtype)
                    for g, s in zip(out, lin_spec))

            return tuple(_callback(call, pull_callback, lin_spec, *res, *cts))

        lin_tangents = tuple(tangents[i] for i in lin)
        if transposable and any(map(_compat.jax_is_batched, (*primals, *lin_tangents))):
            _both_mode_vmap_error(call)
        if not transposable:
            lin_out = pushforward(tuple(primals), lin_tangents)
        else:
            try:
                lin_out = linear_call(pushforward, pullback, tuple(primals), lin_tangents)
            except NotImplementedError as e:
                if "linear_call" not in str(e):
                    raise
                _both_mode_vmap_error(call)
        for k, t in zip(diff_out, lin_out):
            y_dot[k] = t
        return y, tuple(y_dot)

    fn = jax.custom_jvp(primal)
    fn.defjvp(jvp_rule, symbolic_zeros=True)
    return fn


def _both_mode_vmap_error(call: _Call) -> NoReturn:
    raise UnsupportedTransformError(
        _BRIDGE, call.f, "jax.vmap of a derivative in mode='both'",
        "JAX has no batching rule for linear_call, which carries the rrule's pullback in "
        "this mode",
        f"Use jax_function({func_name(call.f)}, mode='reverse') for jax.vmap of gradients "
        f"and jax.jacrev, mode='forward' for jax.vmap of JVPs and jax.jacfwd, or rules "
        f"written with chainrules.array_namespace (backend='native' does all of these)"
    ) from None


def jax_function(f: Callable, *, backend: str = "auto", mode: str | None = None,
                 config: RuleConfig | None = None, result_shape: Any = None,
                 vmap_method: str = "sequential") -> Callable:
    """Make ``f``, a function with chainrules rules, differentiable by JAX.

    ``f`` has an ``frule`` and/or an ``rrule`` registered. The result takes JAX
    arrays (anywhere inside tuples, lists, dicts and other pytrees) and returns JAX
    arrays; arguments that are not JAX arrays are passed to ``f`` unchanged and are
    not differentiated, and keyword arguments are never differentiated.

    Arguments:
        f: the function.
        backend: ``"native"``: ``f`` and its rules run on JAX values (tracers), so
            every transformation works (jit, vmap, grad of grad, hessian, jacfwd,
            jacrev, jvp, sharding) with no host callback; they must be written with
            ``chainrules.array_namespace`` (or operators only), not NumPy calls.
            ``"callback"``: ``f`` and its rules run on NumPy arrays, under tracing in
            ``jax.pure_callback`` (first derivatives only, host only, sequential
            vmap). ``"auto"`` (default): native when ``f`` and its rules trace with
            JAX values (tried once per input signature, see ``backend_for``),
            callback otherwise.
        mode: which rule JAX's custom derivative is built from. Native path:
            ``"forward"`` (``jax.custom_jvp`` from the frule; JAX transposes it for
            reverse mode: everything works), ``"reverse"`` (``jax.custom_vjp`` from
            the rrule: everything but ``jax.jvp``/``jacfwd`` of the function itself),
            ``"both"`` is ``"forward"``. Callback path: ``"reverse"`` (``grad``,
            ``vjp``, ``jacrev``, ``jit``, ``vmap``), ``"forward"`` (``jvp``,
            ``jacfwd``, ``jit``, ``vmap``), ``"both"`` (``grad``, ``vjp``, ``jvp``,
            ``jit``, no ``vmap`` of a derivative). Default: ``"forward"`` when ``f``
            has an frule that traces, else ``"reverse"``; ``"reverse"`` on the
            callback path.
        config: a ``RuleConfig`` passed to the rules (for rules that call back into an AD).
        result_shape: (callback path) under tracing, the shape and dtype of ``f``'s
            result: a pytree of ``jax.ShapeDtypeStruct``, or a function of the
            arguments (with ShapeDtypeStructs for the array leaves) returning one. By
            default it is found by calling ``f`` once on example inputs (0.5, times
            the identity for square matrices) per new input shape.
        vmap_method: (callback path) how ``jax.pure_callback`` runs under ``jax.vmap``;
            ``"sequential"`` (one call per batch element) is right for every function,
            ``"expand_dims"`` is faster for functions that broadcast over a leading axis.

    Returns:
        A function with the same signature as ``f``, taking and returning JAX arrays.
        On the native path, eager calls (no ``jit``) of a structure seen twice run
        compiled with ``jax.jit`` (the function, and the rule that ``grad``, ``vjp`` or
        ``jvp`` uses), as JAX's own functions do: ``f`` and its rules must then depend
        on their arguments only. A callable object, a function closing over a list,
        dict or array, or one reading a global number or array, is never compiled;
        nor is anything in debug mode.

    Raises:
        NoRuleError: (when called) ``f`` has no rule for the mode asked.
        NumPyOnlyRuleError: (``backend="native"``) ``f`` or a rule needs NumPy arrays.
        TangentConversionError: (when differentiated) a rule returned a tangent that
            does not fit its argument.
        UnsupportedTransformError: a transformation the chosen mode cannot do.
        FrameworkNotInstalledError: JAX is not installed.

    Examples:
        >>> import pytest; jax = pytest.importorskip("jax")  # skips this example without JAX
        >>> import chainrules
        >>> from chainrules.interop.jax import jax_function
        >>> def cube(x):
        ...     return x**3
        >>> @chainrules.rrule.register(cube)
        ... def cube_rrule(x):
        ...     def cube_pullback(y_bar):
        ...         return chainrules.NoTangent(), 3 * x**2 * y_bar
        ...     return x**3, cube_pullback
        >>> jcube = jax_function(cube)
        >>> jax.grad(jcube)(2.0)
        Array(12., dtype=float32)
        >>> jax.jit(jax.grad(jcube))(2.0)
        Array(12., dtype=float32)
        >>> jax.vmap(jax.grad(jcube))(jax.numpy.arange(3.0))
        Array([ 0.,  3., 12.], dtype=float32)
    """
    if mode is not None and mode not in _MODES:
        raise ValueError(
            f"jax_function({func_name(f)}, mode={mode!r}): mode must be one of {_MODES}; "
            f"'forward' for a custom_jvp from the frule, 'reverse' for a custom_vjp from the "
            f"rrule, or None to choose by which rules exist."
        )
    if backend not in _BACKENDS:
        raise ValueError(
            f"jax_function({func_name(f)}, backend={backend!r}): backend must be one of "
            f"{_BACKENDS}; 'native' for rules that trace with JAX values, 'callback' for "
            f"NumPy-only rules, 'auto' to choose per input signature."
        )
    if not callable(f):
        raise TypeError(
            f"jax_function(f): f must be callable, got {type(f).__qualname__}. Pass the "
            f"function that has rules, e.g. jax_function(np.sin)."
        )
    return _JaxBridged(f, mode, config, result_shape, vmap_method, backend)
