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
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import NoTangent, PullbackError, RuleConfig, ZeroTangent, unthunk
from chainrules.core._errors import func_name

from . import _compat
from ._bridge import call_frule, call_rrule, leaf_tangent, output_cotangent
from ._tree import leaves_with_paths, map_leaves, tangent_like

__all__ = ["autograd_primitive"]

_BRIDGE = "autograd_primitive"


def _conj(x: Any) -> Any:
    return np.conj(x) if np.iscomplexobj(x) else x


def _as_primal_type(g: Any, primal: Any) -> Any:
    """``g`` (an array) in the form autograd's vector space of ``primal`` expects."""
    if isinstance(primal, complex):
        return complex(g)
    if isinstance(primal, float):
        return float(np.real(g))
    if isinstance(primal, np.generic):
        return primal.dtype.type(g)
    return g


class _AutogradBridged:
    """The callable returned by :func:`autograd_primitive`."""

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
        last = getattr(self._local, "last", None)
        self._local.last = None
        if last is not None and last[0] is ans:
            _, y, pullback = last
        else:
            y, pullback = call_rrule(_BRIDGE, self.config, self.f, args, kwargs)
        vspace = self._vspace
        f = self.f

        def autograd_vjp(g: Any) -> tuple:
            # g has ans's layout (plain containers), y the function's own (namedtuples):
            # the leaves come in the same order
            cts = {path: _conj(np.asarray(leaf))
                   for (path, _), (_, leaf) in zip(leaves_with_paths(y), leaves_with_paths(g))}
            bars = pullback(output_cotangent(y, cts))
            if not isinstance(bars, tuple) or len(bars) != 1 + len(args):
                got = len(bars) if isinstance(bars, tuple) else type(bars).__qualname__
                raise PullbackError(
                    f"{_BRIDGE}({func_name(f)}): the rrule's pullback returned {got} entries, "
                    f"expected {1 + len(args)} (one for the function, then one per positional "
                    f"argument). Fix the rule's pullback."
                )
            out = []
            for i in argnums:
                arg = args[i]
                bar = unthunk(bars[i + 1])

                def leaf(path: tuple, x: Any, i: int = i, bar: Any = bar) -> Any:
                    t = leaf_tangent(_BRIDGE, f, "argument", i + 1, path, x, bar)
                    if t is None:
                        return vspace(x).zeros()
                    return _as_primal_type(_conj(t), x)

                out.append(map_leaves(leaf, arg))
            return tuple(out)

        return autograd_vjp

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
            return vspace(x).zeros() if t is None else _as_primal_type(t, x)

        # walk the function's own output (namedtuples and all), then give it ans's layout
        return _plain_containers(map_leaves(leaf, y))


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
