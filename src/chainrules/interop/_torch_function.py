"""The native path's ``autograd.Function``, defined at module level (see ``_torch_native``).

A class defined at module level, not inside a function, so that ``torch.compile``
could trace it; this module imports torch, and is imported when the first native call
is made, not with ``chainrules.interop.torch``.
"""

from __future__ import annotations

import inspect
from typing import Any

from . import _compat
from ._torch_native import _is_float, _NativeCall

__all__ = ["Native"]

torch: Any = _compat.import_torch()


class Native(torch.autograd.Function):
    """One bridged call: ``forward`` runs ``f`` (or its rrule), ``backward`` the pullback,
    ``jvp`` the frule; ``vmap`` is generated from the rule's torch operations."""

    generate_vmap_rule = True

    @staticmethod
    def forward(call: _NativeCall, *tensors: Any) -> tuple:  # type: ignore[override]
        return call.run(tensors)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
        ctx.call = inputs[0]
        ctx.save_for_backward(*inputs[1:])
        ctx.save_for_forward(*inputs[1:])
        # a None cotangent stays None (a ZeroTangent for the rule), not a tensor of zeros
        ctx.set_materialize_grads(False)
        ctx.mark_non_differentiable(*(o for o in output if not _is_float(o)))

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        needs = ctx.needs_input_grad[1:]
        if not any(needs):
            return (None,) * (1 + len(needs))
        inputs = ctx.saved_tensors
        # the pullback made in forward has no graph: only a backward pass that nothing
        # differentiates may reuse it
        reuse = not (torch.is_grad_enabled() or _compat.torch_transforms_active()
                     or _compat.torch_has_dual(inputs))
        return (None, *ctx.call.pull(inputs, grads, needs, reuse))

    @staticmethod
    def jvp(ctx: Any, _call_dot: Any, *tangents: Any) -> tuple:
        return ctx.call.push(ctx.saved_tensors, tangents)


# Function.apply binds its arguments to forward's signature on every call (under
# torch.func transforms; outside them the C apply is called directly): a precomputed
# __signature__ spares it recomputing one.
Native.forward.__signature__ = inspect.signature(Native.forward)  # type: ignore[attr-defined]
