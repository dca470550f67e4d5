"""JAX's AD as a RuleConfig, and JAX functions as NumPy functions for the testers."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import (
    HasForwardsMode,
    HasReverseMode,
    NoTangent,
    RuleConfig,
    ZeroTangent,
    unthunk,
)

from . import _compat
from ._bridge import is_differentiable_dtype, numpy_conj
from ._tree import leaves_with_paths, map_leaves, tangent_at, tangent_like

__all__ = ["JaxConfig", "as_numpy_function"]


def _to_numpy(x: Any) -> Any:
    """A NumPy view of a concrete JAX array; 0-d arrays become NumPy scalars."""
    a = np.asarray(x)
    return a[()] if a.ndim == 0 else a


class JaxConfig(RuleConfig, HasReverseMode, HasForwardsMode):
    """A ``RuleConfig`` whose ``rrule_via_ad`` / ``frule_via_ad`` are ``jax.vjp`` / ``jax.jvp``.

    Rules that call back into an AD can then use JAX's, and ``chainrules.testing``
    can check JAX's gradient of any JAX-traceable function against finite
    differences: ``test_rrule(f, x, rrule_f=rrule_via_ad, config=JaxConfig())``.

    Arguments and results are NumPy: float and complex leaves (arrays, NumPy and
    Python scalars) are differentiated, others are passed through unchanged. By
    default JAX computes in 64 bits inside these calls (``x64=True``), so that float64
    inputs are not silently rounded to float32.

    Examples:
        >>> import pytest; jax = pytest.importorskip("jax")  # skips this example without JAX
        >>> import numpy as np
        >>> from chainrules import rrule_via_ad
        >>> from chainrules.interop.jax import JaxConfig
        >>> y, pullback = rrule_via_ad(JaxConfig(), jax.numpy.sin, np.array([0.0, 1.0]))
        >>> pullback(np.ones(2))
        (NoTangent(), array([1.        , 0.54030231]))
    """

    __slots__ = ("x64",)

    def __init__(self, x64: bool = True) -> None:
        self.x64 = x64

    def _context(self) -> Any:
        import contextlib

        return _compat.jax_x64() if self.x64 else contextlib.nullcontext()

    def rrule_via_ad(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        """``(y, pullback)`` of ``f(*args, **kwargs)`` by ``jax.vjp``."""
        jax = _compat.import_jax()
        with self._context():
            dyn, rebuild = _split_differentiable(args, jax)
            y, vjp_fn = jax.vjp(lambda *d: f(*rebuild(d), **kwargs), *dyn)
            y_np = jax.tree_util.tree_map(_to_numpy, y)
        context = self._context

        def jax_vjp_pullback(y_bar: Any) -> tuple:
            with context():
                y_leaves, y_def = jax.tree_util.tree_flatten_with_path(y)
                cts = []
                for kp, leaf in y_leaves:
                    path = tuple(_compat.jax_key_step(k) for k in kp)
                    t = unthunk(tangent_at(y_bar, path))
                    if isinstance(t, (ZeroTangent, NoTangent)):
                        cts.append(_zero_cotangent(jax, leaf))
                    else:
                        cts.append(jax.numpy.asarray(numpy_conj(np.asarray(t)), dtype=leaf.dtype))
                d_bar = vjp_fn(y_def.unflatten(cts))
            return (NoTangent(), *rebuild.tangents([numpy_conj(_to_numpy(g)) for g in d_bar]))

        return y_np, jax_vjp_pullback

    def frule_via_ad(self, dargs: tuple, f: Any, *args: Any, **kwargs: Any) -> Any:
        """``(y, y_dot)`` of ``f(*args, **kwargs)`` along ``dargs[1:]`` by ``jax.jvp``."""
        jax = _compat.import_jax()
        with self._context():
            dyn, rebuild = _split_differentiable(args, jax)
            tangents = []
            for d, (position, path) in zip(dyn, rebuild.where):
                t = unthunk(tangent_at(dargs[position], path))
                if isinstance(t, (ZeroTangent, NoTangent)):
                    tangents.append(jax.numpy.zeros_like(d))
                else:
                    tangents.append(jax.numpy.asarray(t, dtype=d.dtype))
            y, y_dot = jax.jvp(lambda *d: f(*rebuild(d), **kwargs), tuple(dyn), tuple(tangents))
            y_np = jax.tree_util.tree_map(_to_numpy, y)
            y_dot_by_path = {
                tuple(_compat.jax_key_step(k) for k in kp): _to_numpy(v)
                for kp, v in jax.tree_util.tree_flatten_with_path(y_dot)[0]}
        return y_np, tangent_like(y_np, lambda path, leaf: y_dot_by_path.get(path, ZeroTangent()))


def as_numpy_function(f: Callable, *, x64: bool = True) -> Callable:
    """A NumPy-in, NumPy-out version of the JAX function ``f``, computed in 64 bits.

    Called with NumPy arrays and numbers it returns NumPy arrays; called with JAX
    arrays (as `JaxConfig` does when it differentiates it) it is ``f``. This is
    what ``chainrules.testing`` needs to check JAX's derivatives of ``f`` against
    finite differences, which need the primal in float64.

    Examples:
        >>> import pytest; jax = pytest.importorskip("jax")  # skips this example without JAX
        >>> import numpy as np
        >>> from chainrules.testing import test_rrule
        >>> from chainrules import rrule_via_ad
        >>> from chainrules.interop.jax import JaxConfig, as_numpy_function
        >>> sin = as_numpy_function(jax.numpy.sin)
        >>> sin(np.array([0.0, 1.0]))
        array([0.        , 0.84147098])
        >>> test_rrule(sin, np.array([0.2, 0.4]), rrule_f=rrule_via_ad, config=JaxConfig()).mode
        'rrule'
    """

    @functools.wraps(f)
    def numpy_function(*args: Any, **kwargs: Any) -> Any:
        jax = _compat.import_jax()
        leaves = jax.tree_util.tree_leaves((args, kwargs))
        if any(isinstance(x, jax.Array) for x in leaves):
            return f(*args, **kwargs)
        context = _compat.jax_x64() if x64 else _nullcontext()
        with context:
            out = f(*args, **kwargs)
            return jax.tree_util.tree_map(
                lambda a: _to_numpy(a) if isinstance(a, jax.Array) else a, out)

    return numpy_function


def _nullcontext() -> Any:
    import contextlib

    return contextlib.nullcontext()


def _zero_cotangent(jax: Any, leaf: Any) -> Any:
    if is_differentiable_dtype(leaf.dtype):
        return jax.numpy.zeros_like(leaf)
    return np.zeros(leaf.shape, _compat.jax_float0())


class _Rebuild:
    """Puts differentiated leaves back into the arguments' structure."""

    def __init__(self, args: tuple, where: list, convert: Callable) -> None:
        self.args = args
        self.where = where
        self.convert = convert

    def __call__(self, dyn: Any) -> tuple:
        index = {w: i for i, w in enumerate(self.where)}

        def put(path: tuple, leaf: Any) -> Any:
            i = index.get((path[0][1] + 1, path[1:]))
            return leaf if i is None else dyn[i]

        return tuple(map_leaves(put, self.args))

    def tangents(self, leaf_bars: list) -> list:
        """One tangent per argument, mirroring its structure, from the leaves' cotangents."""
        index = {w: i for i, w in enumerate(self.where)}
        out = []
        for position, arg in enumerate(self.args, start=1):
            def leaf(path: tuple, x: Any, position: int = position) -> Any:
                i = index.get((position, path))
                return NoTangent() if i is None else leaf_bars[i]

            out.append(tangent_like(arg, leaf))
        return out


def _split_differentiable(args: tuple, jax: Any) -> tuple[list, _Rebuild]:
    """The float and complex leaves of ``args`` as JAX arrays, and how to put them back."""
    dyn = []
    where = []
    for path, leaf in leaves_with_paths(args):
        if isinstance(leaf, (bool, np.bool_)):
            continue
        if isinstance(leaf, (float, complex, np.ndarray, np.generic)) and np.asarray(
                leaf).dtype.kind in "fc":
            dyn.append(jax.numpy.asarray(leaf))
            where.append((path[0][1] + 1, path[1:]))
    return dyn, _Rebuild(args, where, jax.numpy.asarray)
