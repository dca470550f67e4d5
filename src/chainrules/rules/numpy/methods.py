"""Rules for the methods of ``np.ndarray``, registered on the method descriptors.

An AD that sees ``x.sum(axis=0)`` sees a call of ``np.ndarray.sum`` with ``x`` first.
Most methods take the same positional arguments as the NumPy function of the same
name, and their rules delegate to that function's rules (``np.ndarray.sum`` ->
``np.sum`` in ``reductions.py``): ``sum``, ``mean``, ``prod``, ``max``, ``min``,
``std``, ``var``, ``cumsum``, ``cumprod``, ``dot``, ``conj``, ``conjugate``, ``clip``,
``trace``, ``diagonal``, ``take``, ``repeat``, ``squeeze``, ``swapaxes``, ``ravel``.
If the function has no rule for the arguments, the method's rule raises
`MissingDelegateRuleError` (an error, not ``None``: the method has rules registered).

Methods whose arguments differ from the function's have their own rules:
``reshape`` and ``transpose`` (shape and axes as separate ints or one tuple),
``flatten`` (a copy), ``copy`` (order ``"C"``), ``astype``, ``compress``
(the condition after the array) and ``item`` (a Python scalar).
``__getitem__`` is in ``indexing.py``.

Non-differentiable: ``argmax``, ``argmin``, ``argsort``, ``argpartition``, ``nonzero``,
``searchsorted``, ``all``, ``any``. Mutating methods (``sort``, ``fill``, ``put``,
``partition``, ``resize``, ``setfield``, ``itemset``) have no rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from chainrules.core import ChainRulesError, NoTangent, frule, non_differentiable, rrule
from chainrules.rules import _kit as kit
from chainrules.rules.numpy import _linear as linear


class MissingDelegateRuleError(ChainRulesError, LookupError):
    """A method's rule delegates to a function that has no rule for these arguments.

    Attributes:
        method: the method descriptor called (e.g. ``np.ndarray.sum``).
        function: the function its rule delegates to (e.g. ``np.sum``).
        table: ``"rrule"`` or ``"frule"``.
    """

    def __init__(self, table: str, method: Any, function: Any, args: tuple) -> None:
        self.table = table
        self.method = method
        self.function = function
        types = ", ".join(type(a).__qualname__ for a in args)
        name = f"numpy.{function.__name__}"
        super().__init__(
            f"the {table} of ndarray.{method.__name__} delegates to {name}, which has no "
            f"{table} for ({types}). Register one with @{table}.register({name}) (the "
            f"method's rule then works unchanged), or call {name} instead of the method."
        )


def _delegate(method: Any, function: Any) -> None:
    """Rules for ``method(x, *args)`` equal to ``function(x, *args)``: the same positional
    arguments, so the function's results (and cotangent tuples) serve as they are."""
    def delegating_rrule(x: Any, *args: Any, **kwargs: Any) -> Any:
        res = kit.delegate(rrule, function, (), (x, *args), kwargs)
        if res is None:
            raise MissingDelegateRuleError("rrule", method, function, (x, *args))
        return res

    def delegating_frule(dargs: tuple, x: Any, *args: Any, **kwargs: Any) -> Any:
        res = kit.delegate(frule, function, (dargs,), (x, *args), kwargs)
        if res is None:
            raise MissingDelegateRuleError("frule", method, function, (x, *args))
        return res

    kit.define_rules(method, np.ndarray, ..., frule_fn=delegating_frule,
                     rrule_fn=delegating_rrule, name=f"ndarray_{method.__name__}")


for _method, _function in [
    (np.ndarray.sum, np.sum), (np.ndarray.mean, np.mean), (np.ndarray.prod, np.prod),
    (np.ndarray.max, np.max), (np.ndarray.min, np.min), (np.ndarray.std, np.std),
    (np.ndarray.var, np.var), (np.ndarray.cumsum, np.cumsum),
    (np.ndarray.cumprod, np.cumprod), (np.ndarray.dot, np.dot),
    (np.ndarray.conj, np.conjugate), (np.ndarray.conjugate, np.conjugate),
    (np.ndarray.clip, np.clip), (np.ndarray.trace, np.trace),
    (np.ndarray.diagonal, np.diagonal), (np.ndarray.take, np.take),
    (np.ndarray.repeat, np.repeat), (np.ndarray.squeeze, np.squeeze),
    (np.ndarray.swapaxes, np.swapaxes), (np.ndarray.ravel, np.ravel),
]:
    _delegate(_method, _function)


# ------------------------------------------------------------------------------ own rules


def _method_shape(args: tuple) -> Any:
    """``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` both mean shape ``(2, 3)``."""
    return args[0] if len(args) == 1 else args


def _ndarray_reshape_adjoint(x: Any, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    shape = np.shape(x)
    order = linear.memory_order(x, kwargs.get("order", "C"))

    def ndarray_reshape_pullback(y_bar: Any) -> np.ndarray:
        return np.reshape(y_bar, shape, order=order)

    return ndarray_reshape_pullback


def _ndarray_reshape_pushforward(x: Any, x_dot: np.ndarray, *args: Any, **kwargs: Any) -> Any:
    kwargs = {**kwargs, "order": linear.memory_order(x, kwargs.get("order", "C"))}
    return np.ndarray.reshape(x_dot, *args, **kwargs)


linear.linear_rules(np.ndarray.reshape, _ndarray_reshape_adjoint, _ndarray_reshape_pushforward)


def _ndarray_transpose_adjoint(x: Any, *args: Any) -> Callable[[Any], Any]:
    axes = _method_shape(args) if args else None
    ndim = np.ndim(x)
    inverse = None if axes is None else tuple(np.argsort([a % ndim for a in axes]))

    def ndarray_transpose_pullback(y_bar: Any) -> np.ndarray:
        return np.transpose(y_bar, inverse)

    return ndarray_transpose_pullback


linear.linear_rules(np.ndarray.transpose, _ndarray_transpose_adjoint)
linear.linear_rules(np.ndarray.flatten, linear.ravel_adjoint, linear.ravel_pushforward)
linear.linear_rules(np.ndarray.copy, linear.reshape_back)

linear.astype_rules(np.ndarray.astype)


@frule.register(np.ndarray.compress)
def ndarray_compress_frule(dargs: tuple, x: Any, condition: Any, *args: Any,
                           **kwargs: Any) -> Any:
    kit.refuse_out(np.ndarray.compress, kwargs, args, 1)  # x.compress(condition, axis, out)
    y = x.compress(condition, *args, **kwargs)
    x_dot = kit.nonzero(dargs[1])
    if x_dot is None or not kit.is_differentiable(x) or not kit.is_differentiable(y):
        return y, kit.zero_for(y)
    return y, kit.fit_output(kit.dense_tangent(x_dot, x).compress(condition, *args, **kwargs), y)


@rrule.register(np.ndarray.compress)
def ndarray_compress_rrule(x: Any, condition: Any, *args: Any, **kwargs: Any) -> Any:
    kit.refuse_out(np.ndarray.compress, kwargs, args, 1)  # x.compress(condition, axis, out)
    y = x.compress(condition, *args, **kwargs)
    rest = (NoTangent(),) * len(args)
    diff = kit.is_differentiable(x) and kit.is_differentiable(y)
    project_x = kit.array_projector(x)
    scatter = linear.gather_adjoint(x, lambda pos: pos.compress(condition, *args))

    zeros = (NoTangent(), kit.zero_for(x), NoTangent(), *rest)

    @kit.zero_guard(zeros)
    def ndarray_compress_pullback(y_bar: Any) -> tuple:
        if not diff:
            return zeros
        return (NoTangent(), project_x(scatter(y_bar)), NoTangent(), *rest)

    return y, ndarray_compress_pullback


def _ndarray_item_adjoint(x: Any, *args: Any) -> Callable[[Any], Any]:
    return linear.gather_adjoint(x, lambda pos: np.asarray(pos.item(*args)))


linear.linear_rules(np.ndarray.item, _ndarray_item_adjoint)


for _method in (np.ndarray.argmax, np.ndarray.argmin, np.ndarray.argsort,
                np.ndarray.argpartition, np.ndarray.nonzero, np.ndarray.searchsorted,
                np.ndarray.all, np.ndarray.any):
    non_differentiable(_method)

del _method, _function
