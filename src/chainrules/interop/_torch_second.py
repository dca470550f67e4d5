"""The callback path's second derivatives: the rrule as a function for ``chainrules.ad``.

Split from ``_torch`` (which stays the callback path's Functions); see its docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from chainrules.core import NoTangent, ZeroTangent
from chainrules.core._errors import func_name

from ._bridge import is_differentiable_dtype
from ._errors import NoRuleError, UnsupportedTransformError
from ._tree import tangent_at, tangent_like

if TYPE_CHECKING:
    from ._torch import _Call

_BRIDGE = "torch_function"


def _third_order_error(call: _Call) -> UnsupportedTransformError:
    return UnsupportedTransformError(
        _BRIDGE, call.f, "a third derivative",
        "second derivatives are computed by differentiating the rrule's code with "
        "chainrules.ad on NumPy arrays, and that result is not differentiable again",
        f"Stop at second derivatives of torch_function({func_name(call.f)}), or write "
        f"{func_name(call.f)} in torch operations")


def _pullback_as_function(call: _Call, need_idx: list[int],
                          np_inputs: list) -> tuple[Callable, list[int]]:
    """``(*float inputs, *grads) -> cotangents of inputs need_idx``, and those inputs' indices.

    The rule as a plain function for the reference AD to differentiate. Integer and
    bool inputs (``np.where``'s condition, indices) have no derivative and the reference
    AD refuses them as inputs: they are held fixed. Each cotangent is projected onto
    its input (a rule may return it in a broadcast shape). The rule is looked up for
    the NumPy argument types and called directly, so that the reference AD traces its
    code (with tracers as arguments, ``rrule(f, ...)`` would dispatch on the tracers'
    type).
    """
    from chainrules.core import ProjectTo, rrule

    f, config = call.f, call.bridged.config
    args_np = call.numpy_args(call.np_inputs)
    hit = rrule.lookup(f, tuple(map(type, args_np)), config)
    if hit is None:
        raise NoRuleError(_BRIDGE, f, "rrule", tuple(map(type, args_np)),
                          "a second derivative")
    rule, takes_config, takes_instance = hit
    prefix = ((config,) if takes_config else ()) + ((f,) if takes_instance else ())

    diff_idx = [i for i, a in enumerate(np_inputs) if is_differentiable_dtype(np.asarray(
        a).dtype)]

    def rule_pullback(*leaves: Any) -> tuple:
        inputs = list(np_inputs)
        for k, i in enumerate(diff_idx):
            inputs[i] = leaves[k]
        grads = leaves[len(diff_idx):]
        _, pullback = rule(*prefix, *call.numpy_args(inputs), **call.kwargs)
        by_path = dict(zip(call.out_paths, grads))
        y_bar = tangent_like(call.y, lambda path, leaf: by_path.get(path, ZeroTangent()))
        bars = pullback(y_bar)
        out = []
        for i in need_idx:
            position, path = call.where[i]
            t = tangent_at(bars[position], path)
            out.append(0.0 * inputs[i] if isinstance(t, (ZeroTangent, NoTangent))
                       else ProjectTo(np_inputs[i])(t))
        return tuple(out)

    return rule_pullback, diff_idx


def _second_order_error(call: _Call, transform: str) -> UnsupportedTransformError:
    return UnsupportedTransformError(
        _BRIDGE, call.f, transform,
        "it needs the derivative of the rule itself with respect to the primal inputs "
        "(a second derivative of the function), which first-order rrule/frule do not give",
        f"Differentiate once through torch_function({func_name(call.f)}), or write "
        f"{func_name(call.f)} in torch operations where second derivatives are needed; "
        f"for a Jacobian-vector product use torch.func.jvp, not the double-backward trick")
