"""The HIPS autograd bridge: a function with rules becomes an autograd primitive.

The primitive's VJP comes from the rrule (``defvjp_argnums``: one pullback call
gives the cotangents of all the arguments autograd asks for, and only those are
unthunked) and its JVP from the frule (``defjvp_argnums``).

autograd calls the primitive and then, right away, asks for its VJP with the
output it just got. When an argument is being differentiated the primitive runs
the rrule instead of ``f`` and keeps the pullback for that request, found by the
identity of the output; otherwise it runs plain ``f``. A missing pullback (say,
after forward mode only) is recomputed.

autograd's complex cotangents are the conjugate of ChainRules' (like JAX's); they
are conjugated on the way in and out. Tangents need no conversion.

Second derivatives (``autograd.hessian``, grad of grad): autograd differentiates a
VJP by tracing it, and a pullback run on NumPy arrays is invisible to it (it would
give silent zeros). When the VJP is itself being differentiated (its arguments or
cotangent are boxed), it runs as a second primitive whose own VJP comes from
differentiating the rrule's code with ``chainrules.ad``. Third derivatives, and
structured arguments at second order, raise `UnsupportedTransformError`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import (
    NoTangent,
    ProjectTo,
    RuleConfig,
    Tangent,
    ZeroTangent,
    rrule,
    unthunk,
)
from chainrules.core._errors import func_name

from . import _compat
from ._bridge import (
    as_primal_form,
    call_frule,
    call_rrule,
    check_pullback_entries,
    is_differentiable_dtype,
    leaf_tangent,
    non_tangent_reason,
    numpy_conj,
    output_cotangent,
)
from ._errors import NoRuleError, TangentConversionError, UnsupportedTransformError
from ._tree import children, leaves_with_paths, map_leaves, tangent_like

__all__ = ["autograd_primitive"]

_BRIDGE = "autograd_primitive"


class _AutogradBridged:
    """The callable returned by `autograd_primitive`."""

    def __init__(self, f: Callable, config: RuleConfig | None) -> None:
        autograd = _compat.import_autograd()
        extend = autograd.extend
        self.f = f
        self.config = config
        self._local = threading.local()
        self._box_type = extend.Box
        self._vspace = extend.vspace
        self.primitive = extend.primitive(self._raw)
        extend.defvjp_argnums(self.primitive, self._make_vjp)
        extend.defjvp_argnums(self.primitive, self._jvp)
        # the VJP as a primitive of its own, for when autograd differentiates it again
        self.vjp_primitive = extend.primitive(self._vjp_raw)
        extend.defvjp_argnums(self.vjp_primitive, self._make_second_vjp)
        functools.update_wrapper(self, f, updated=())

    def __repr__(self) -> str:
        return f"autograd_primitive({func_name(self.f)})"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, self._box_type) for a in args):
            self._local.want_pullback = True
        return self.primitive(*args, **kwargs)

    def _raw(self, *args: Any, **kwargs: Any) -> Any:
        local = self._local
        if getattr(local, "want_pullback", False):
            local.want_pullback = False
            y, pullback = call_rrule(_BRIDGE, self.config, self.f, args, kwargs)
            out = _plain_containers(y)
            local.last = (out, y, pullback)
            return out
        return _plain_containers(self.f(*args, **kwargs))

    def _make_vjp(self, argnums: tuple, ans: Any, args: tuple, kwargs: dict) -> Callable:
        box = self._box_type
        if any(isinstance(leaf, box) for _, leaf in leaves_with_paths(args)):
            # an outer autograd trace differentiates this VJP (a Hessian): run it as the
            # VJP primitive, which that trace sees
            def autograd_vjp_traced(g: Any) -> tuple:
                return self._vjp_call(argnums, g, ans, args, kwargs)

            return autograd_vjp_traced
        last = getattr(self._local, "last", None)
        self._local.last = None
        if last is not None and last[0] is ans:
            _, y, pullback = last
        else:
            y, pullback = call_rrule(_BRIDGE, self.config, self.f, args, kwargs)
        vspace = self._vspace
        f = self.f

        def autograd_vjp(g: Any) -> tuple:
            if any(isinstance(leaf, self._box_type) for _, leaf in leaves_with_paths(g)):
                return self._vjp_call(argnums, g, ans, args, kwargs)
            # g has ans's layout (plain containers), y the function's own (namedtuples):
            # the leaves come in the same order
            cts = {path: numpy_conj(np.asarray(leaf))
                   for (path, _), (_, leaf) in zip(leaves_with_paths(y), leaves_with_paths(g))}
            bars = pullback(output_cotangent(y, cts))
            check_pullback_entries(_BRIDGE, f, bars, len(args))
            out = []
            for i in argnums:
                arg = args[i]
                bar = unthunk(bars[i + 1])

                def leaf(path: tuple, x: Any, i: int = i, bar: Any = bar) -> Any:
                    t = leaf_tangent(_BRIDGE, f, "argument", i + 1, path, x, bar)
                    if t is None:
                        return vspace(x).zeros()
                    return as_primal_form(numpy_conj(t), x)

                out.append(map_leaves(leaf, arg))
            return tuple(out)

        return autograd_vjp

    def _vjp_call(self, argnums: tuple, g: Any, ans: Any, args: tuple, kwargs: dict) -> tuple:
        """The VJP through ``vjp_primitive``, so that an outer autograd trace records it."""
        g_leaves = [leaf for _, leaf in leaves_with_paths(g)]
        out = self.vjp_primitive(tuple(argnums), len(g_leaves), *g_leaves, *args, **kwargs)
        return tuple(out)

    def _vjp_raw(self, argnums: tuple, n_g: int, *rest: Any, **kwargs: Any) -> tuple:
        g_leaves, args = rest[:n_g], rest[n_g:]
        y, _ = call_rrule(_BRIDGE, self.config, self.f, args, kwargs)
        g = _with_layout(_plain_containers(y), list(g_leaves))
        return tuple(self._make_vjp(argnums, None, args, kwargs)(g))

    def _make_second_vjp(self, argnums2: tuple, ans: Any, args2: tuple,
                         kwargs: dict) -> Callable:
        """The VJP of ``vjp_primitive``: ``chainrules.ad`` differentiates the rrule's code."""
        argnums, n_g = args2[0], args2[1]
        g_leaves, args = list(args2[2:2 + n_g]), args2[2 + n_g:]
        box = self._box_type
        if any(isinstance(leaf, box) for _, leaf in leaves_with_paths(args2)):
            raise UnsupportedTransformError(
                _BRIDGE, self.f, "a third derivative",
                "second derivatives come from differentiating the rrule's code with "
                "chainrules.ad on NumPy arrays, and that result is not differentiable again",
                f"Stop at second derivatives of autograd_primitive({func_name(self.f)})")
        for k in (*argnums2, *(2 + n_g + i for i in argnums)):
            if k >= 2 + n_g and children(args2[k]) is not None:
                raise _structured_error(self.f, k - 1 - n_g, args2[k])
        fn, diff = self._vjp_as_function(argnums, g_leaves, args, kwargs)
        values = [args2[k] for k in diff]
        f = self.f

        def autograd_second_vjp(gg: Any) -> tuple:
            import chainrules.ad as reference_ad

            try:
                _, pullback = reference_ad.vjp(fn, *values)
                cts = pullback(tuple(numpy_conj(np.asarray(c)) for c in gg))
            except Exception as e:
                raise UnsupportedTransformError(
                    _BRIDGE, f, "a second derivative",
                    f"it differentiates the rrule of {func_name(f)} with chainrules.ad, which "
                    f"failed: {type(e).__qualname__}: {e}",
                    "Make the rule's code differentiable by chainrules.ad (NumPy functions "
                    "with rules)") from e
            by_position = dict(zip(diff, cts))
            out = []
            for k in argnums2:
                ct = by_position.get(k)
                if ct is None or isinstance(ct, (ZeroTangent, NoTangent)):
                    out.append(self._vspace(args2[k]).zeros())
                else:
                    out.append(as_primal_form(numpy_conj(np.asarray(ct)), args2[k]))
            return tuple(out)

        return autograd_second_vjp

    def _vjp_as_function(self, argnums: tuple, g_leaves: list, args: tuple,
                         kwargs: dict) -> tuple[Callable, list[int]]:
        """The VJP as a function of its float inputs (positions in ``vjp_primitive``'s args).

        Integer and bool arguments (shifts, conditions, exponents) are held fixed. The
        rule is looked up for the NumPy argument types and called directly, so that
        the reference AD traces its code.
        """
        f, config = self.f, self.config
        types = tuple(map(type, args))
        hit = rrule.lookup(f, types, config)
        if hit is None:
            raise NoRuleError(_BRIDGE, f, "rrule", types, "a second derivative")
        rule, takes_config, takes_instance = hit
        prefix = ((config,) if takes_config else ()) + ((f,) if takes_instance else ())
        values = [*g_leaves, *args]
        diff = [k for k, v in enumerate(values) if _is_float_leaf(v)]
        n_g = len(g_leaves)

        def autograd_vjp_function(*leaves: Any) -> tuple:
            full = list(values)
            for k, v in zip(diff, leaves):
                full[k] = v
            g, primal = full[:n_g], full[n_g:]
            y, pullback = rule(*prefix, *primal, **kwargs)
            bars = pullback(_cotangent_of(y, [numpy_conj(v) for v in g]))
            check_pullback_entries(_BRIDGE, f, bars, len(primal))
            out = []
            for i in argnums:
                t = unthunk(bars[i + 1])
                reason = non_tangent_reason(t)
                if reason is not None:
                    raise TangentConversionError(_BRIDGE, f, "argument", i + 1, "", args[i], t,
                                                 reason)
                out.append(0.0 * primal[i] if isinstance(t, (ZeroTangent, NoTangent))
                           else numpy_conj(ProjectTo(args[i])(t)))
            return tuple(out)

        return autograd_vjp_function, [k + 2 for k in diff]

    def _jvp(self, argnums: tuple, gs: tuple, ans: Any, args: tuple, kwargs: dict) -> Any:
        dargs: list[Any] = [NoTangent()] + [ZeroTangent()] * len(args)
        for i, g in zip(argnums, gs):
            dargs[i + 1] = g if not isinstance(args[i], (tuple, list, dict)) else tangent_like(
                args[i], lambda path, x, g=g: _at(g, path))
        y, y_dot = call_frule(_BRIDGE, self.config, tuple(dargs), self.f, args, kwargs)
        vspace = self._vspace
        f = self.f

        def leaf(path: tuple, x: Any) -> Any:
            t = leaf_tangent(_BRIDGE, f, "output", 0, path, x, y_dot)
            return vspace(x).zeros() if t is None else as_primal_form(t, x)

        # walk the function's own output (namedtuples and all), then give it ans's layout
        return _plain_containers(map_leaves(leaf, y))


def _structured_error(f: Any, position: int, arg: Any) -> UnsupportedTransformError:
    return UnsupportedTransformError(
        _BRIDGE, f, f"a second derivative with respect to a structured argument (argument "
                    f"{position}, a {type(arg).__qualname__})",
        "chainrules.ad differentiates the rule with respect to array arguments only",
        "Pass the arrays as separate positional arguments")


def _is_float_leaf(x: Any) -> bool:
    if isinstance(x, (bool, int)):
        return False
    if isinstance(x, (float, complex)):
        return True
    return isinstance(x, (np.ndarray, np.generic)) and is_differentiable_dtype(x.dtype)


def _with_layout(y: Any, leaves: list) -> Any:
    """``y``'s containers with ``leaves`` (in order) in place of its leaves."""
    it = iter(leaves)
    return map_leaves(lambda path, leaf: next(it), y)


def _cotangent_of(y: Any, leaves: list) -> Any:
    """The ChainRules cotangent of ``y`` (an array, or a tuple or list of them) from its leaves."""
    if isinstance(y, (tuple, list)):
        return Tangent[type(y)](*leaves)
    return leaves[0]


def _plain_containers(y: Any) -> Any:
    """``y`` with namedtuples turned into tuples: autograd knows only tuple, list and dict."""
    if isinstance(y, tuple):
        return tuple(_plain_containers(v) for v in y)
    if isinstance(y, list):
        return [_plain_containers(v) for v in y]
    if isinstance(y, dict):
        return {k: _plain_containers(v) for k, v in y.items()}
    return y


def _at(g: Any, path: tuple) -> Any:
    for _, k in path:
        g = g[k]
    return g


def autograd_primitive(f: Callable, *, config: RuleConfig | None = None) -> Callable:
    """Make ``f``, a function with chainrules rules, an autograd primitive.

    ``autograd.grad``, ``autograd.make_vjp`` and the other reverse-mode functions
    use ``f``'s rrule; ``autograd.make_jvp`` (forward mode) uses its frule.
    Keyword arguments are passed to ``f`` and not differentiated. autograd knows
    tuples, lists and dicts but not namedtuples: a namedtuple output comes back as
    a plain tuple.

    Arguments:
        f: the function with rules.
        config: a ``RuleConfig`` passed to the rules.

    Returns:
        A function that autograd differentiates through the rules. Its
        ``.primitive`` attribute is the underlying ``autograd.extend.primitive``.

    Raises:
        NoRuleError: (when differentiated) ``f`` has no rrule (frule) for the arguments.
        TangentConversionError: a rule returned a tangent that does not fit its argument.
        FrameworkNotInstalledError: autograd is not installed.

    Examples:
        >>> import pytest; autograd = pytest.importorskip("autograd")  # skips without autograd
        >>> import chainrules
        >>> from chainrules.interop.autograd import autograd_primitive
        >>> def cube(x):
        ...     return x**3
        >>> @chainrules.rrule.register(cube)
        ... def cube_rrule(x):
        ...     def cube_pullback(y_bar):
        ...         return chainrules.NoTangent(), 3 * x**2 * y_bar
        ...     return x**3, cube_pullback
        >>> autograd.grad(autograd_primitive(cube))(2.0)
        12.0
    """
    if not callable(f):
        raise TypeError(
            f"autograd_primitive(f): f must be callable, got {type(f).__qualname__}. Pass the "
            f"function that has rules, e.g. autograd_primitive(np.sin)."
        )
    return _AutogradBridged(f, config)
