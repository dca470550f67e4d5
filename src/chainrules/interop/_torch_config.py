"""PyTorch's AD as a ``RuleConfig`` (``torch.func``), and torch functions as NumPy functions.

`TorchConfig` lets rules that call back into an AD (``rrule_via_ad``) use
``torch.func.vjp`` / ``jvp``; `as_numpy_function` lets ``chainrules.testing``
check a torch function's derivatives against finite differences.
"""

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
from ._torch import tensor_to_numpy
from ._tree import leaves_with_paths, map_leaves, tangent_at, tangent_like

__all__ = ["TorchConfig", "as_numpy_function"]


class TorchConfig(RuleConfig, HasReverseMode, HasForwardsMode):
    """A ``RuleConfig`` whose ``rrule_via_ad`` / ``frule_via_ad`` are ``torch.func.vjp`` / ``jvp``.

    Arguments and results are NumPy: float and complex leaves (arrays, NumPy and
    Python scalars) become tensors (float64 stays float64) and are differentiated;
    other leaves are passed unchanged. ``f`` must be written in torch operations.

    Examples:
        >>> import pytest; torch = pytest.importorskip("torch")  # skips this example without torch
        >>> import numpy as np
        >>> from chainrules import rrule_via_ad
        >>> from chainrules.interop.torch import TorchConfig
        >>> y, pullback = rrule_via_ad(TorchConfig(), torch.sin, np.array([0.0, 1.0]))
        >>> pullback(np.ones(2))
        (NoTangent(), array([1.        , 0.54030231]))
    """

    __slots__ = ()

    def rrule_via_ad(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        """``(y, pullback)`` of ``f(*args, **kwargs)`` by ``torch.func.vjp``."""
        torch = _compat.import_torch()
        dyn, rebuild = _split_differentiable(args)
        y, vjp_fn = torch.func.vjp(lambda *d: f(*rebuild(d), **kwargs), *dyn)
        y_np = _tree_to_numpy(y)

        def torch_vjp_pullback(y_bar: Any) -> tuple:
            cts = map_leaves(
                lambda path, leaf: _cotangent_tensor(tangent_at(y_bar, path), leaf), y)
            d_bar = vjp_fn(cts)
            return (NoTangent(), *rebuild.tangents([tensor_to_numpy(g) for g in d_bar]))

        return y_np, torch_vjp_pullback

    def frule_via_ad(self, dargs: tuple, f: Any, *args: Any, **kwargs: Any) -> Any:
        """``(y, y_dot)`` of ``f(*args, **kwargs)`` along ``dargs[1:]`` by ``torch.func.jvp``."""
        torch = _compat.import_torch()
        dyn, rebuild = _split_differentiable(args)
        tangents = []
        for d, (position, path) in zip(dyn, rebuild.where):
            t = unthunk(tangent_at(dargs[position], path))
            tangents.append(torch.zeros_like(d) if isinstance(t, (ZeroTangent, NoTangent))
                            else torch.as_tensor(np.asarray(t), dtype=d.dtype))
        y, y_dot = torch.func.jvp(lambda *d: f(*rebuild(d), **kwargs), tuple(dyn),
                                  tuple(tangents))
        y_np = _tree_to_numpy(y)
        y_dot_by_path = {p: tensor_to_numpy(v) for p, v in leaves_with_paths(y_dot)}
        return y_np, tangent_like(y_np, lambda path, leaf: y_dot_by_path.get(path, ZeroTangent()))


def as_numpy_function(f: Callable) -> Callable:
    """A NumPy-in, NumPy-out version of the torch function ``f``.

    Called with NumPy arrays and numbers it converts float and complex leaves to
    tensors (float64 stays float64), calls ``f`` and returns NumPy arrays; called
    with tensors (as `TorchConfig` does when it differentiates it) it is
    ``f``. This is what ``chainrules.testing`` needs to check PyTorch's derivatives
    of ``f`` against finite differences.

    Examples:
        >>> import pytest; torch = pytest.importorskip("torch")  # skips this example without torch
        >>> import numpy as np
        >>> from chainrules.testing import test_rrule
        >>> from chainrules import rrule_via_ad
        >>> from chainrules.interop.torch import TorchConfig, as_numpy_function
        >>> sin = as_numpy_function(torch.sin)
        >>> sin(np.array([0.0, 1.0]))
        array([0.        , 0.84147098])
        >>> test_rrule(sin, np.array([0.2, 0.4]), rrule_f=rrule_via_ad, config=TorchConfig()).mode
        'rrule'
    """

    @functools.wraps(f)
    def numpy_function(*args: Any, **kwargs: Any) -> Any:
        torch = _compat.import_torch()
        if any(isinstance(x, torch.Tensor) for _, x in leaves_with_paths((args, kwargs))):
            return f(*args, **kwargs)
        dyn, rebuild = _split_differentiable(args)
        return _tree_to_numpy(f(*rebuild(dyn), **kwargs))

    return numpy_function


def _tree_to_numpy(y: Any) -> Any:
    torch = _compat.import_torch()
    return map_leaves(
        lambda path, leaf: tensor_to_numpy(leaf) if isinstance(leaf, torch.Tensor) else leaf, y)


def _cotangent_tensor(t: Any, like: Any) -> Any:
    torch = _compat.import_torch()
    t = unthunk(t)
    if isinstance(t, (ZeroTangent, NoTangent)):
        return torch.zeros_like(like)
    return torch.as_tensor(np.asarray(t), dtype=like.dtype, device=like.device)


class _Rebuild:
    def __init__(self, args: tuple, where: list) -> None:
        self.args = args
        self.where = where
        self.index = {w: i for i, w in enumerate(where)}

    def __call__(self, dyn: Any) -> tuple:
        def put(path: tuple, leaf: Any) -> Any:
            i = self.index.get((path[0][1] + 1, path[1:]))
            return leaf if i is None else dyn[i]

        return tuple(map_leaves(put, self.args))

    def tangents(self, leaf_bars: list) -> list:
        out = []
        for position, arg in enumerate(self.args, start=1):
            def leaf(path: tuple, x: Any, position: int = position) -> Any:
                i = self.index.get((position, path))
                return NoTangent() if i is None else leaf_bars[i]

            out.append(tangent_like(arg, leaf))
        return out


def _split_differentiable(args: tuple) -> tuple[list, _Rebuild]:
    torch = _compat.import_torch()
    dyn = []
    where = []
    for path, leaf in leaves_with_paths(args):
        if isinstance(leaf, (bool, np.bool_)):
            continue
        if isinstance(leaf, (float, complex, np.ndarray, np.generic)) and np.asarray(
                leaf).dtype.kind in "fc":
            dyn.append(torch.as_tensor(np.asarray(leaf)))
            where.append((path[0][1] + 1, path[1:]))
    return dyn, _Rebuild(args, where)
