"""The native path of the JAX bridge: the function and its rules run on JAX values.

With ``backend="native"`` nothing leaves JAX: ``f``, its ``frule`` or ``rrule`` and
the pullback are called with JAX arrays or tracers, so the traced program holds
only JAX operations (no host callback) and every transformation composes: ``jit``,
``vmap`` (batched natively, not element by element), ``grad`` of ``grad``,
``hessian``, ``jacfwd``/``jacrev``, sharding, GPU. Rules written with
``xp = chainrules.array_namespace(x)`` (or with operators and methods only) trace.

Two constructions, because a JAX function has a custom JVP or a custom VJP, not both:

- ``"forward"`` (the default when ``f`` has an frule): ``jax.custom_jvp`` whose JVP
  rule is the frule run on tracers. JAX linearizes it and transposes the tangent
  map for reverse mode, so ``grad``, ``jvp``, ``hessian`` and ``vmap`` of any of
  them work. What the frule computes from the primal alone (a factorisation, an
  exponential) is a residual, computed once in the forward pass and reused by the
  backward pass.
- ``"reverse"`` (the default with only an rrule): ``jax.custom_vjp`` whose forward
  pass runs the rrule and whose residual is the pullback itself: the pullback is
  closure-converted (every array it captured, integer ones too, becomes one of the
  residuals) and the converted function travels as a ``jax.tree_util.Partial``.
  ``grad``, ``jacrev``, ``vmap`` and forward-over-reverse (``jax.hessian``) work,
  since forward and backward passes are JAX code; ``jax.jvp`` of the function
  itself does not (JAX's rule for ``custom_vjp``).

Complex numbers: JAX's cotangent is the conjugate of the ChainRules one, so the
``"reverse"`` construction conjugates cotangents on the way in and out; tangents
(the ``"forward"`` construction) need no conversion, and JAX's own transposition
of the frule is already in JAX's convention.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from chainrules.core import (
    ChainRulesError,
    NoTangent,
    ProjectionError,
    ProjectTo,
    ZeroTangent,
    _debug,
    unthunk,
)

from . import _compat
from ._bridge import (
    argument_cotangents,
    call_frule,
    call_rrule,
    check_pullback_entries,
    framework_equivalent,
    frule_tangents,
    is_differentiable_dtype,
    numpy_met_framework_value,
    rule_call_site,
    tangent_leaf,
)
from ._errors import NumPyOnlyRuleError, TangentConversionError, UnsupportedTransformError
from ._tree import format_path, tangent_like

__all__ = ["NativeCall"]

_BRIDGE = "jax_function"


class NativeCall:
    """One call of a natively bridged function: its static parts and its JAX-array leaves.

    Positional arguments and keyword arguments are flattened together as one JAX
    pytree; every ``jax.Array`` leaf (concrete or traced) is an operand of the
    custom-derivative function, so nothing traced is closed over. Leaves of keyword
    arguments are operands too but are never differentiated (they get zero
    cotangents), as everywhere in chainrules.
    """

    def __init__(self, f: Callable, config: Any, args: tuple, kwargs: dict) -> None:
        jax = _compat.import_jax()
        self.f = f
        self.config = config
        self.nargs = len(args)
        flat, self.treedef = jax.tree_util.tree_flatten_with_path((args, kwargs))
        self.template: list = []
        self.dyn: list = []
        # (position, path): position is 1-based for positional arguments, 0 for kwargs
        self.where: list[tuple[int, tuple]] = []
        self.slots: list[int] = []
        for keypath, leaf in flat:
            if isinstance(leaf, jax.Array):
                position = keypath[1].idx + 1 if keypath[0].idx == 0 else 0
                # a keyword argument's path starts with its name: ("key", name)
                path = tuple(_compat.jax_key_step(k)
                             for k in keypath[2 if position else 1:])
                self.where.append((position, path))
                self.slots.append(len(self.template))
                self.dyn.append(leaf)
                self.template.append(None)
            else:
                self.template.append(leaf)
        self.dtypes = [d.dtype for d in self.dyn]
        self.out_treedef: Any = None
        self.out_paths: list[tuple] = []
        # whether a rule returned a tangent that is not a structural zero (see probe)
        self.nonzero_tangent = False
        # whether a plan cache keeps this call for later calls of its structure, and f
        # is a function that compiling cannot freeze state of (see _Hot, compilable)
        self.cached = False
        # the function on concrete operands, outside any transformation (see _Hot)
        self.eager_primal = _Hot(self, self.run_primal)

    def forget_operands(self) -> None:
        """Drop this call's operands (arrays, or tracers of a trace that will end), so the
        call can serve later calls of the same structure from a cache."""
        self.dyn = []

    # -- structure -----------------------------------------------------------------------

    def rebuild(self, dyn: Any) -> tuple[tuple, dict]:
        leaves = list(self.template)
        for slot, v in zip(self.slots, dyn):
            leaves[slot] = v
        args, kwargs = self.treedef.unflatten(leaves)
        return tuple(args), kwargs

    def signature(self) -> Any:
        """A hashable key of what the backend decision depends on, or None if there is none."""
        static = []
        for leaf in self.template:
            if isinstance(leaf, np.ndarray):
                static.append(("ndarray", leaf.shape, leaf.dtype.str))
            else:
                static.append((type(leaf), leaf))
        key = (self.treedef, tuple(static),
               tuple((tuple(d.shape), str(d.dtype), bool(getattr(d, "weak_type", False)))
                     for d in self.dyn))
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def flatten_output(self, y: Any) -> tuple:
        """The output's leaves as JAX arrays; remembers the output's structure."""
        jax = _compat.import_jax()
        leaves, treedef = jax.tree_util.tree_flatten(y)
        if self.out_treedef is None or treedef != self.out_treedef:
            # paths only for a new structure: a cached call sees the same one every time
            flat, _ = jax.tree_util.tree_flatten_with_path(y)
            self.out_paths = [tuple(_compat.jax_key_step(k) for k in kp) for kp, _ in flat]
            self.out_treedef = treedef
        array = jax.Array
        return tuple(leaf if isinstance(leaf, array) else jax.numpy.asarray(leaf)
                     for leaf in leaves)

    def unflatten_output(self, leaves: Any) -> Any:
        return self.out_treedef.unflatten(list(leaves))

    def differentiable(self, i: int) -> bool:
        return self.where[i][0] > 0 and is_differentiable_dtype(self.dtypes[i])

    def refuse_keyword_derivative(self, perturbed: list[bool]) -> None:
        """A derivative with respect to a keyword argument is an error, never a silent zero."""
        for i, p in enumerate(perturbed):
            position, path = self.where[i]
            if p and position == 0 and is_differentiable_dtype(self.dtypes[i]):
                name = path[0][1]
                raise UnsupportedTransformError(
                    _BRIDGE, self.f, f"differentiating the keyword argument {name!r}",
                    "keyword arguments are never differentiated (rules have no tangent "
                    "for them)",
                    f"Pass {name} positionally (if the rule gives it a tangent), or "
                    f"wrap it in jax.lax.stop_gradient")

    # -- running the user's code on JAX values ----------------------------------------

    def run_primal(self, dyn: tuple) -> tuple:
        args, kwargs = self.rebuild(dyn)
        with numpy_only_guard(self.f, "the function itself"):
            y = self.f(*args, **kwargs)
        return self.flatten_output(y)

    def arg_tangents(self, dyn: tuple, tangents: dict) -> tuple:
        """``(NoTangent(), *arg_dots)`` for an frule; ``tangents``: leaf index -> tangent.

        An argument with no float leaf gets ``NoTangent()``; one whose float leaves
        all have zero tangents gets ``ZeroTangent()``, so rules can skip it.
        """
        args, _ = self.rebuild(dyn)
        return frule_tangents(args, self.where, tangents, self.differentiable)

    def output_cotangent(self, y: Any, cts: dict) -> Any:
        """The ChainRules cotangent of output ``y``; ``cts``: output leaf -> JAX cotangent."""
        jnp = _compat.import_jax().numpy
        index = {p: k for k, p in enumerate(self.out_paths)}

        def leaf(path: tuple, y_leaf: Any) -> Any:
            k = index.get(path)
            if k is None or not is_differentiable_dtype(jnp.result_type(y_leaf)):
                return NoTangent()
            ct = cts.get(k)
            return ZeroTangent() if ct is None else conj(ct)

        return tangent_like(y, leaf)

    def leaf_tangent(self, what: str, position: int, path: tuple, primal: Any,
                     tangent: Any) -> Any:
        """The part of ``tangent`` at ``path`` as a JAX array like ``primal``; None for zero."""
        t = tangent_leaf(_BRIDGE, self.f, what, position, path, primal, tangent,
                         framework="JAX", structure=f"the {what}'s")
        if t is None:
            return None
        try:
            return project(primal, t)
        except (ProjectionError, TypeError, ValueError) as e:
            raise TangentConversionError(_BRIDGE, self.f, what, position, format_path(path),
                                         primal, t, str(e)) from None


def conj(x: Any) -> Any:
    jnp = _compat.import_jax().numpy
    return jnp.conj(x) if jnp.iscomplexobj(x) else x


def project(primal: Any, t: Any) -> Any:
    """``t`` as a JAX array of ``primal``'s shape and dtype, by ``ProjectTo`` (which traces)."""
    jnp = _compat.import_jax().numpy
    if isinstance(t, (str, bytes)) or t is None:
        raise TypeError(f"a {type(t).__qualname__} is not a tangent of an array")
    if getattr(t, "shape", None) == primal.shape and getattr(t, "dtype", None) == primal.dtype:
        return t
    out = jnp.asarray(ProjectTo(primal)(t))
    if not is_differentiable_dtype(out.dtype):
        raise TypeError(f"its dtype {out.dtype} is not a float or complex dtype")
    return out


# -- NumPy-only rules --------------------------------------------------------------------

#: where JAX's own version of a NumPy or SciPy function lives (suggested by the errors)
_JAX_EQUIVALENTS = {"numpy.": "jax.numpy.", "scipy.": "jax.scipy."}


def _tracer_errors() -> tuple[type[BaseException], ...]:
    errors = _compat.import_jax().errors
    return (errors.TracerArrayConversionError, errors.TracerBoolConversionError,
            errors.TracerIntegerConversionError, errors.ConcretizationTypeError)


@contextlib.contextmanager
def numpy_only_guard(f: Any, stage: str) -> Iterator[None]:
    """NumPy meeting a tracer inside ``stage`` becomes NumPyOnlyRuleError: JAX's "cannot
    convert a tracer" errors, and any error raised by NumPy or SciPy code called on
    tracers (see `numpy_met_framework_value`); every other error passes as it is."""
    try:
        yield
    except Exception as e:
        if not isinstance(e, _tracer_errors()) and (
                isinstance(e, ChainRulesError) or not numpy_met_framework_value(e)):
            raise  # the user's own error (or a rule's, named by chainrules): as it is
        filename, line, source = rule_call_site(e)
        raise NumPyOnlyRuleError.on_tracers(
            _BRIDGE, f, stage, filename, line, source, type(e).__name__,
            alternative=framework_equivalent(f, _JAX_EQUIVALENTS)) from e


# -- the two constructions ---------------------------------------------------------------


def forward_function(call: NativeCall) -> Callable:
    """``jax.custom_jvp`` over the operands, with the frule as its JVP rule."""
    jax = _compat.import_jax()
    jnp = jax.numpy
    symbolic_zero = _compat.jax_symbolic_zero_type()

    def primal(*dyn: Any) -> tuple:
        return call.run_primal(dyn)

    def jvp_outputs(primals: tuple, tangents: tuple) -> tuple:
        """The outputs and the tangents of the differentiable ones (None for the others);
        ``tangents``: None for a zero."""
        given = {i: t for i, t in enumerate(tangents) if t is not None}
        args, kwargs = call.rebuild(primals)
        dargs = call.arg_tangents(primals, given)
        with numpy_only_guard(call.f, "its frule"):
            y, y_dot = call_frule(_BRIDGE, call.config, dargs, call.f, args, kwargs)
        y_leaves = call.flatten_output(y)
        out: list[Any] = []
        for path, y_leaf in zip(call.out_paths, y_leaves):
            if not is_differentiable_dtype(y_leaf.dtype):
                out.append(None)
                continue
            t = call.leaf_tangent("output", 0, path, y_leaf, y_dot)
            call.nonzero_tangent |= t is not None
            out.append(jnp.zeros_like(y_leaf) if t is None else t)
        return y_leaves, tuple(out)

    hot = _Hot(call, jvp_outputs)

    def frule_jvp(primals: tuple, tangents: tuple) -> tuple:
        primals = tuple(jnp.asarray(p) for p in primals)
        call.refuse_keyword_derivative([not isinstance(t, symbolic_zero) for t in tangents])
        given = tuple(t if call.differentiable(i) and not isinstance(t, symbolic_zero)
                      else None for i, t in enumerate(tangents))
        y_leaves, out = hot(primals, given)
        return y_leaves, tuple(np.zeros(y.shape, _compat.jax_float0()) if t is None else t
                               for y, t in zip(y_leaves, out))

    fn = jax.custom_jvp(primal)
    fn.defjvp(frule_jvp, symbolic_zeros=True)
    return fn


class _Hot:
    """``body(*args)``, compiled with ``jax.jit`` once the same cached structure has run it
    eagerly ``_HOT_AFTER`` times.

    Eager ``jax.grad`` calls a custom JVP rule with concrete primals under JAX's
    linearize trace, where every operation of the rule is partially evaluated by
    itself: 10 small operations cost more than the maths by far (and a custom VJP's
    forward pass closure-converts its pullback, a trace, on every call). Compiled, the
    rule is one operation, partially evaluated and transposed once per structure (JAX
    caches both). Only for a call that a plan cache keeps (``NativeCall.cached``):
    compiling the rule of a call that is never seen again would cost more than it
    saves; only for a function that compiling cannot freeze (`compilable`); not in
    debug mode, whose checks then run on every call; and only on concrete arrays:
    under ``jit``, ``vmap`` or an outer derivative the rule is traced into the
    enclosing program anyway.
    """

    __slots__ = ("body", "call", "concrete", "jitted", "static", "uses")

    def __init__(self, call: NativeCall, body: Callable, static_argnums: tuple = (),
                 concrete_argnums: tuple = (0,)) -> None:
        self.call, self.body = call, body
        self.static, self.concrete = static_argnums, concrete_argnums
        self.jitted: Any = None
        self.uses = 0

    def __call__(self, *args: Any) -> Any:
        if (not self.call.cached or _debug.state.debug
                or _has_tracer([args[i] for i in self.concrete])):
            return self.body(*args)
        if self.jitted is None:
            self.uses += 1
            if self.uses < _HOT_AFTER:
                return self.body(*args)
            self.jitted = _compat.import_jax().jit(self.body, static_argnums=self.static)
        return self.jitted(*args)


#: Eager runs of a cached structure's rule before it is compiled (see ``_Hot``).
_HOT_AFTER = 2


#: What a compiled function may find in its closure: values that cannot change later.
_FROZEN = (int, float, complex, str, bytes, bool, type(None), type, types.ModuleType,
           types.FunctionType, types.BuiltinFunctionType, np.ufunc, np.dtype)


def compilable(f: Any) -> bool:
    """Whether ``f`` can be compiled once and called again without freezing state that may
    change between calls: a NumPy ufunc, a builtin, or a plain function whose closure
    holds only immutable values and whose own code reads no global but modules, classes
    and functions. A callable object (its fields may be reassigned), a closure over a
    list, a dict or an array, or a function reading a global number or array (which
    may be reassigned) is run as it is on every call."""
    if isinstance(f, (np.ufunc, types.BuiltinFunctionType)):
        return True
    if not isinstance(f, types.FunctionType):
        return False
    cells = f.__closure__ or ()
    try:
        values = [c.cell_contents for c in cells]
    except ValueError:  # an empty cell: a name assigned after the function was made
        return False
    return all(_frozen(v) for v in values) and _reads_static_globals(f.__code__, f.__globals__)


def _frozen(v: Any) -> bool:
    if isinstance(v, tuple):
        return all(_frozen(item) for item in v)
    return isinstance(v, _FROZEN) and (not isinstance(v, types.FunctionType)
                                       or compilable(v))


#: What a compiled function may read from its module's globals: names bound once.
_STATIC_GLOBALS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                   np.ufunc)


def _reads_static_globals(code: types.CodeType, globals_: dict) -> bool:
    """Whether ``code`` (and the functions defined inside it) reads only globals of
    `_STATIC_GLOBALS` types; names that are not globals (attributes, builtins) pass."""
    for name in code.co_names:
        if name in globals_ and not isinstance(globals_[name], _STATIC_GLOBALS):
            return False
    return all(_reads_static_globals(c, globals_) for c in code.co_consts
               if isinstance(c, types.CodeType))


def _has_tracer(tree: Any) -> bool:
    return any(map(_compat.is_jax_tracer, _compat.import_jax().tree_util.tree_leaves(tree)))


def reverse_function(call: NativeCall) -> Callable:
    """``jax.custom_vjp`` over the operands: the rrule forward, its pullback as the residual."""
    jax = _compat.import_jax()
    jnp = jax.numpy
    symbolic_zero = _compat.jax_symbolic_zero_type()
    n_args = 1 + call.nargs

    def primal(*dyn: Any) -> tuple:
        return call.run_primal(dyn)

    def fwd_outputs(values: tuple, need: tuple) -> tuple:
        """The outputs, and the pullback closure-converted: a function of the outputs'
        cotangents and of the arrays it captured (returned, as residuals)."""
        args, kwargs = call.rebuild(values)
        with numpy_only_guard(call.f, "its rrule"):
            y, pullback = call_rrule(_BRIDGE, call.config, call.f, args, kwargs)
        y_leaves = call.flatten_output(y)
        diff_out = [k for k, a in enumerate(y_leaves) if is_differentiable_dtype(a.dtype)]

        def pullback_leaves(*cts: Any) -> tuple:
            y_bar = call.output_cotangent(y, dict(zip(diff_out, cts)))
            with numpy_only_guard(call.f, "its rrule's pullback"):
                bars = pullback(y_bar)
            check_pullback_entries(_BRIDGE, call.f, bars, n_args - 1)

            def guarded_unthunk(bar: Any) -> Any:
                with numpy_only_guard(call.f, "its rrule's pullback"):
                    return unthunk(bar)

            def to_jax(i: int, position: int, path: tuple, bar: Any) -> Any:
                g = call.leaf_tangent("argument", position, path, values[i], bar)
                call.nonzero_tangent |= g is not None
                return jnp.zeros_like(values[i]) if g is None else conj(g)

            return tuple(argument_cotangents(bars, call.where, need, to_jax, guarded_unthunk))

        examples = [jnp.zeros(y_leaves[k].shape, y_leaves[k].dtype) for k in diff_out]
        closed, consts = _compat.jax_closure_convert(pullback_leaves, *examples)
        return y_leaves, jax.tree_util.Partial(closed), tuple(consts)

    hot_fwd = _Hot(call, fwd_outputs, static_argnums=(1,))

    def rrule_fwd(*pdyn: Any) -> tuple:
        values = tuple(jnp.asarray(p.value) for p in pdyn)
        call.refuse_keyword_derivative([p.perturbed for p in pdyn])
        need = tuple(i for i, p in enumerate(pdyn) if p.perturbed and call.differentiable(i))
        y_leaves, closed, consts = hot_fwd(values, need)
        diff_out = tuple(k for k, a in enumerate(y_leaves) if is_differentiable_dtype(a.dtype))
        return y_leaves, (closed, consts, need, diff_out)

    def pull(closed: Any, consts: tuple, ct_in: list) -> tuple:
        return closed(*ct_in, *consts)

    hot_pull = _Hot(call, pull, concrete_argnums=(1, 2))

    def rrule_bwd(res: tuple, cts: tuple) -> tuple:
        closed, consts, need, diff_out = res
        grads: list[Any] = [None] * len(call.dtypes)
        if not need:
            return tuple(grads)
        ct_in = [jnp.zeros(c.shape, c.dtype) if isinstance(c, symbolic_zero) else c
                 for c in (cts[k] for k in diff_out)]
        for i, g in zip(need, hot_pull(closed, consts, ct_in)):
            grads[i] = g
        return tuple(grads)

    fn = jax.custom_vjp(primal)
    fn.defvjp(rrule_fwd, rrule_bwd, symbolic_zeros=True)
    return fn


def probe(call: NativeCall, mode: str) -> bool:
    """Trace ``f`` and the rules that ``mode`` uses on abstract values; raises what they raise.

    Returns whether the rule gave a tangent that is not a structural zero (or had
    nothing to differentiate). A rule written for NumPy arrays may trace and yet
    answer ``ZeroTangent()`` for anything that is not an ``ndarray``: a silently
    zero derivative, which ``backend="auto"`` avoids by taking the callback path.
    """
    jax = _compat.import_jax()
    jnp = jax.numpy
    avals = [jax.ShapeDtypeStruct(d.shape, d.dtype, weak_type=getattr(d, "weak_type", False))
             for d in call.dyn]
    fn = forward_function(call) if mode == "forward" else reverse_function(call)

    def exercise(*dyn: Any) -> Any:
        # the rule first: where a NumPy call stops it is what a user can act on
        derivative = differentiate(*dyn)
        call.run_primal(dyn)
        return derivative

    def differentiate(*dyn: Any) -> Any:
        # only what a user can differentiate: a keyword's leaves are never perturbed
        diff = [i for i in range(len(dyn)) if call.differentiable(i)]

        def of_diff(*x: Any) -> tuple:
            full = list(dyn)
            for i, v in zip(diff, x):
                full[i] = v
            return fn(*full)

        if mode == "forward":
            return jax.jvp(of_diff, tuple(dyn[i] for i in diff),
                           tuple(jnp.ones_like(dyn[i]) for i in diff))
        y, pullback = jax.vjp(of_diff, *(dyn[i] for i in diff))
        return pullback(tuple(jnp.ones_like(a) if is_differentiable_dtype(a.dtype)
                              else np.zeros(a.shape, _compat.jax_float0()) for a in y))

    call.nonzero_tangent = False
    out = jax.eval_shape(exercise, *avals)
    has_diff_in = any(call.differentiable(i) for i in range(len(call.dtypes)))
    has_diff_out = any(is_differentiable_dtype(a.dtype)
                       for a in jax.tree_util.tree_leaves(out))
    return call.nonzero_tangent or not (has_diff_in and has_diff_out)
