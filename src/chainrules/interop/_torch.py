"""The PyTorch bridge: ``torch_function``, and its callback path (NumPy views of tensors).

``torch_function(f, backend=...)`` picks the path: the native one (``_torch_native``:
the rules run on tensors) or the callback one, here. ``TorchConfig`` is in
``_torch_config``.

A bridged call on the callback path flattens its arguments (tuples, lists, dicts, namedtuples,
dataclasses); the tensor leaves are the inputs of an ``autograd.Function``, every
other leaf is passed to the function unchanged and is not differentiated. The
function runs on NumPy views of the tensors (no copy for CPU tensors), its
outputs come back as tensors on the inputs' device.

The Function is written the way ``torch.func`` needs (``forward`` without ``ctx``,
``setup_context``, a ``vmap`` staticmethod), so ``torch.func.grad``, ``vjp``,
``jvp``, ``jacrev``, ``jacfwd`` and ``vmap`` work as well as ``.backward()`` and
``torch.autograd.forward_ad``:

- ``backward`` is the rrule's pullback. It runs as a second Function
  (``_Pullback``) whose inputs include the primal inputs, so PyTorch knows that
  the cotangents depend on them; it unthunks only the cotangents that
  ``ctx.needs_input_grad`` asks for.
- ``jvp`` is the frule's pushforward, also its own Function (``_Pushforward``).
- Second derivatives: both of these are linear in the cotangent (tangent) they
  carry, and that part of their derivative is exact (the pushforward is the
  transpose of the pullback). The part that differentiates the rule itself with
  respect to the primal inputs (needed for a Hessian) comes from the reference AD,
  ``chainrules.ad``, which differentiates the rrule's own code (NumPy functions with
  rules, operators, thunks), in a third Function (``_SecondOrder``). So
  ``create_graph=True``, ``torch.autograd.functional.hessian``,
  ``torch.func.hessian`` and Hessian-vector products work when the rule's code is
  differentiable by it; otherwise, and for third derivatives,
  `UnsupportedTransformError` is raised, never a silent zero.
- ``vmap`` runs the function once per batch element.

PyTorch's complex convention is ChainRules' (``grad(abs(z)**2) == 2z``): nothing to convert.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import weakref
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from chainrules.core import (
    NoTangent,
    RuleConfig,
    ZeroTangent,
)
from chainrules.core._errors import func_name
from chainrules.core._tangent_types.structural import _is_zero as is_zero_tangent

from . import _compat
from ._bridge import (
    argument_cotangents,
    is_differentiable_dtype,
    leaf_tangent,
    output_cotangent,
)
from ._errors import TangentConversionError, UnsupportedTransformError
from ._torch_native import (
    call_frule,
    call_rrule,
    check_pullback_result,
    choose_backend,
    native_call,
    prepare,
    refuse_none,
    refuse_numpy_only,
)
from ._torch_second import _pullback_as_function, _second_order_error, _third_order_error
from ._tree import leaves_with_paths, map_leaves, tangent_like

__all__ = ["numpy_to_tensor", "tensor_to_numpy", "torch_function"]

_BRIDGE = "torch_function"


def tensor_to_numpy(t: Any) -> Any:
    """A NumPy view of a tensor's values (a copy only for non-CPU tensors); 0-d gives a scalar."""
    t = t.detach()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    if t.device.type != "cpu":
        t = t.cpu()
    a = t.numpy()
    return a[()] if a.ndim == 0 else a


def numpy_to_tensor(a: Any, device: Any) -> Any:
    """A tensor sharing ``a``'s memory when PyTorch can (writable, non-negative strides)."""
    torch = _compat.import_torch()
    a = np.asarray(a)
    if not a.flags.writeable or any(s < 0 for s in a.strides):
        a = a.copy()
    t = torch.from_numpy(a)
    if device is not None and t.device != device:
        t = t.to(device)
    return t


def _is_array_leaf(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, float, int, complex))


class _Call:
    """One call of a bridged function: structure, static leaves, tensor leaves, and its rules."""

    def __init__(self, bridged: _TorchBridged, args: tuple, kwargs: dict) -> None:
        torch = _compat.import_torch()
        self.bridged = bridged
        self.f = bridged.f
        self.args = args
        self.kwargs = kwargs
        self.where: list[tuple[int, tuple]] = []
        self.tensors: list = []
        for path, leaf in leaves_with_paths(args):
            if isinstance(leaf, torch.Tensor):
                self.where.append((path[0][1] + 1, path[1:]))
                self.tensors.append(leaf)
        self.device = self.tensors[0].device if self.tensors else None
        self.need_pullback = False
        self.pullback: Any = None
        self.y: Any = None
        self.np_inputs: list = []
        self.out_paths: list[tuple] = []

    def fresh(self) -> _Call:
        """A new call with the same structure (for one element of a batch)."""
        new = object.__new__(_Call)
        new.__dict__.update(self.__dict__)
        new.pullback = None
        new.y = None
        return new

    def numpy_args(self, np_leaves: list) -> tuple:
        index = {w: i for i, w in enumerate(self.where)}

        def put(path: tuple, leaf: Any) -> Any:
            i = index.get((path[0][1] + 1, path[1:]))
            return leaf if i is None else np_leaves[i]

        return tuple(map_leaves(put, self.args))

    def run(self, tensors: tuple) -> tuple:
        """Run ``f`` (through its rrule if a pullback will be needed); the output leaves."""
        return self.run_numpy([tensor_to_numpy(t) for t in tensors])

    def run_numpy(self, np_inputs: list) -> tuple:
        self.np_inputs = np_inputs
        args = self.numpy_args(self.np_inputs)
        if self.need_pullback:
            self.y, self.pullback = call_rrule(_BRIDGE, self.bridged.config, self.f, args,
                                               self.kwargs)
        else:
            self.y = self.f(*args, **self.kwargs)
        return self._output_leaves(self.y)

    def _output_leaves(self, y: Any) -> tuple:
        self.out_paths = []
        out = []
        for path, leaf in leaves_with_paths(y):
            if leaf is None:
                continue
            if not _is_array_leaf(leaf):
                raise TangentConversionError(
                    _BRIDGE, self.f, "output", 0, "".join(f"[{s[1]!r}]" for s in path), leaf,
                    leaf, "the output leaves of a bridged function must be arrays or numbers")
            self.out_paths.append(path)
            out.append(numpy_to_tensor(leaf, self.device))
        return tuple(out)

    def rebuild_output(self, flat: tuple) -> Any:
        by_path = dict(zip(self.out_paths, flat))
        return map_leaves(lambda path, leaf: by_path.get(path, leaf), self.y)

    def pull(self, grads: tuple, needs: tuple) -> list:
        """Cotangents (arrays, or None) of the tensor inputs flagged in ``needs``."""
        if self.pullback is None:  # the forward pass did not expect a backward pass
            args = self.numpy_args(self.np_inputs)
            self.y, self.pullback = call_rrule(_BRIDGE, self.bridged.config, self.f, args,
                                               self.kwargs)
        cts = {p: None if g is None else tensor_to_numpy(g)
               for p, g in zip(self.out_paths, grads)}
        bars = self.pullback(output_cotangent(self.y, cts))
        check_pullback_result(self.f, bars, len(self.args))

        def to_numpy(i: int, position: int, path: tuple, bar: Any) -> Any:
            x_bar = leaf_tangent(_BRIDGE, self.f, "argument", position, path,
                                 self.np_inputs[i], bar)
            if x_bar is None:
                refuse_none(self.f, "argument", position, path, self.np_inputs[i], bar)
            return x_bar

        wanted = [i for i, need in enumerate(needs) if need]
        out: list = [None] * len(needs)
        for i, x_bar in zip(wanted, argument_cotangents(bars, self.where, wanted, to_numpy)):
            out[i] = x_bar
        return out

    def push(self, tangents: tuple) -> list:
        """Output tangents (zeros for integer outputs) along one tangent (or None) per input."""
        args = self.numpy_args(self.np_inputs)
        dargs: list[Any] = [NoTangent()]
        for position in range(1, len(args) + 1):
            leaves = {self.where[i][1]: tangent_to_numpy_or_none(t)
                      for i, t in enumerate(tangents) if self.where[i][0] == position}
            if all(v is None for v in leaves.values()):
                dargs.append(ZeroTangent())
                continue
            dargs.append(tangent_like(
                args[position - 1],
                lambda path, leaf, leaves=leaves: _leaf_or_zero(leaves.get(path))))
        y, y_dot = call_frule(_BRIDGE, self.bridged.config, tuple(dargs), self.f, args,
                              self.kwargs)
        if self.y is None:
            self.y = y
            self._output_leaves(y)
        y_leaves = dict(leaves_with_paths(y))
        out = []
        for path in self.out_paths:
            y_leaf = y_leaves[path]
            t = None
            if np.asarray(y_leaf).dtype.kind in "fc":
                t = leaf_tangent(_BRIDGE, self.f, "output", 0, path, y_leaf, y_dot)
                if t is None:
                    refuse_none(self.f, "output", 0, path, y_leaf, y_dot)
            out.append(np.zeros(np.shape(y_leaf), np.asarray(y_leaf).dtype) if t is None else t)
        return out


def tangent_to_numpy_or_none(t: Any) -> Any:
    return None if t is None else tensor_to_numpy(t)


def _leaf_or_zero(x: Any) -> Any:
    return ZeroTangent() if x is None else x


def _any_dual(tensors: list) -> bool:
    """Whether any tensor carries a forward-mode tangent (``torch.autograd.forward_ad``)."""
    if not tensors:
        return False
    fwad = _compat.import_torch().autograd.forward_ad
    return any(fwad.unpack_dual(t).tangent is not None for t in tensors)


def _is_zero(t: Any) -> bool:
    # torch.func materializes the tangents of inputs it does not differentiate as zeros;
    # an exactly-zero direction contributes nothing, so the rule's own derivative is not
    # needed. The core's test is False for values it cannot inspect (under vmap).
    return t is None or is_zero_tangent(t)


@functools.cache
def _functions() -> tuple[type, type, type]:
    """The three autograd.Function classes, defined once torch is imported."""
    torch = _compat.import_torch()

    def tensors_from(arrays: list, like: list) -> tuple:
        out = []
        for a, ref in zip(arrays, like):
            if a is None:
                out.append(None)
            else:
                t = numpy_to_tensor(a, ref.device)
                out.append(t.to(ref.dtype) if t.dtype != ref.dtype else t)
        return tuple(out)

    def batched_apply(fn: Callable, batch_size: int, in_dims: tuple, args: tuple) -> tuple:
        """Apply ``fn`` once per batch element; stack the (tensor) outputs on dim 0."""
        results = []
        for b in range(batch_size):
            sliced = [a if d is None or a is None else a.select(d, b)
                      for a, d in zip(args, in_dims)]
            results.append(fn(b, sliced))
        n_out = len(results[0])
        outs = []
        for k in range(n_out):
            items = [r[k] for r in results]
            outs.append(None if items[0] is None else torch.stack(items))
        return tuple(outs), tuple(None if o is None else 0 for o in outs)

    class _Primal(torch.autograd.Function):
        @staticmethod
        def forward(call: _Call, *tensors: Any) -> tuple:  # type: ignore[override]
            return call.run(tensors)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
            call = inputs[0]
            ctx.call = call
            ctx.save_for_backward(*inputs[1:])
            ctx.save_for_forward(*inputs[1:])
            ctx.mark_non_differentiable(
                *(o for o in output if not (o.is_floating_point() or o.is_complex())))

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> tuple:
            needs = ctx.needs_input_grad[1:]
            inputs = ctx.saved_tensors
            if not any(needs):
                return (None,) * (1 + len(needs))
            if not torch.is_grad_enabled():
                # a plain backward pass (no create_graph, no torch.func level above):
                # nothing differentiates the cotangents, so skip the second Function
                arrays = ctx.call.pull(grads, needs)
                return (None, *tensors_from(arrays, list(inputs)))
            n_g = len(grads)
            out = _Pullback.apply(ctx.call, needs, n_g, *grads, *inputs)
            return (None, *out)

        @staticmethod
        def jvp(ctx: Any, _call_tangent: Any, *tangents: Any) -> Any:
            call = ctx.call
            out = _Pushforward.apply(call, len(tangents), *tangents, *ctx.saved_tensors)
            out = out if isinstance(out, tuple) else (out,)
            # integer outputs (np.frexp's exponent) are non-differentiable: PyTorch wants
            # None for their tangent, not zeros
            y_leaves = dict(leaves_with_paths(call.y))
            out = tuple(t if is_differentiable_dtype(np.asarray(y_leaves[p]).dtype) else None
                        for t, p in zip(out, call.out_paths))
            return out if len(out) != 1 else out[0]

        @staticmethod
        def vmap(info: Any, in_dims: tuple, call: _Call, *tensors: Any) -> tuple:
            first: list = []

            def one(b: int, sliced: list) -> tuple:
                c = call.fresh()
                res = _Primal.apply(c, *sliced)
                if not first:
                    first.append(c)
                return res if isinstance(res, tuple) else (res,)

            outs, dims = batched_apply(one, info.batch_size, in_dims[1:], tensors)
            if first:
                call.out_paths = first[0].out_paths
                call.y = first[0].y
            return outs, dims

    class _Pullback(torch.autograd.Function):
        """``(grads, inputs) -> input cotangents``: linear in ``grads``."""

        @staticmethod
        def forward(call: _Call, needs: tuple, n_g: int, *rest: Any) -> tuple:  # type: ignore[override]
            grads, inputs = rest[:n_g], rest[n_g:]
            arrays = call.pull(grads, needs)
            out = tensors_from(arrays, list(inputs))
            # A zero cotangent is returned as None; autograd treats it as zero.
            return out

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
            ctx.call, ctx.needs, ctx.n_g = inputs[0], inputs[1], inputs[2]
            ctx.save_for_backward(*inputs[3:])
            ctx.save_for_forward(*inputs[3:])

        @staticmethod
        def backward(ctx: Any, *vs: Any) -> tuple:
            call, n_g = ctx.call, ctx.n_g
            needs = ctx.needs_input_grad[3:]
            if any(needs[n_g:]):
                # the rule itself must be differentiated: the reference AD can, when the
                # rule's code is differentiable (NumPy functions with rules, operators)
                saved = ctx.saved_tensors
                second = _SecondOrder.apply(call, "vjp", ctx.needs, needs, n_g, *saved, *vs)
                second = second if isinstance(second, tuple) else (second,)
                return (None, None, None, *second)
            inputs = ctx.saved_tensors[n_g:]
            g_needs = needs[:n_g]
            out: list = [None] * n_g
            if any(g_needs):
                # d<x_bar(y_bar), v>/d y_bar = J v: the pushforward along v
                tangents = [v if need else None for need, v in zip(ctx.needs, vs)]
                y_dot = _Pushforward.apply(call, len(inputs), *tangents, *inputs)
                y_dot = y_dot if isinstance(y_dot, tuple) else (y_dot,)
                out = [y_dot[k] if g_needs[k] else None for k in range(n_g)]
            return (None, None, None, *out, *([None] * len(inputs)))

        @staticmethod
        def jvp(ctx: Any, _c: Any, _n: Any, _k: Any, *tangents: Any) -> tuple:
            call, n_g = ctx.call, ctx.n_g
            if not all(_is_zero(t) for t in tangents[n_g:]):
                saved = ctx.saved_tensors
                out = _SecondOrder.apply(call, "jvp", ctx.needs, None, n_g, *saved, *tangents)
                out = out if isinstance(out, tuple) else (out,)
                return out
            g_dots = tangents[:n_g]
            if all(t is None for t in g_dots):
                return tuple(None for _ in ctx.needs)
            return _Pullback.apply(call, ctx.needs, n_g, *g_dots, *ctx.saved_tensors[n_g:])

        @staticmethod
        def vmap(info: Any, in_dims: tuple, call: _Call, needs: tuple, n_g: int,
                 *rest: Any) -> tuple:
            inputs_batched = any(d is not None for d in in_dims[3 + n_g:])

            def one(b: int, sliced: list) -> tuple:
                c = call
                if inputs_batched:
                    c = call.fresh()
                    c.np_inputs = [tensor_to_numpy(t) for t in sliced[n_g:]]
                    c.pullback = None
                return _Pullback.apply(c, needs, n_g, *sliced)

            return batched_apply(one, info.batch_size, in_dims[3:], rest)

    class _SecondOrder(torch.autograd.Function):
        """Second derivatives of the pullback, computed by chainrules.ad on NumPy arrays.

        ``mode="vjp"``: inputs ``(*grads, *inputs, *vs)``, outputs the cotangents of
        ``(*grads, *inputs)``; ``mode="jvp"``: inputs ``(*grads, *inputs, *g_dots,
        *x_dots)``, outputs the tangents of the pullback's outputs. Not differentiable
        again: its own derivatives raise.
        """

        @staticmethod
        def forward(call: _Call, mode: str, pull_needs: tuple, needs: tuple | None, n_g: int,
                    *rest: Any) -> tuple:  # type: ignore[override]
            n_in = len(pull_needs)
            grads, inputs = rest[:n_g], rest[n_g:n_g + n_in]
            seeds = rest[n_g + n_in:]
            if mode == "vjp":
                # vjp mode always passes needs (only jvp mode passes None)
                return tuple(_second_order_by_reference_ad(call, pull_needs,
                                                           cast(tuple, needs), grads,
                                                           inputs, seeds))
            return tuple(_second_order_jvp(call, pull_needs, grads, inputs, seeds[:n_g],
                                           seeds[n_g:]))

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
            ctx.call = inputs[0]

        @staticmethod
        def backward(ctx: Any, *gs: Any) -> tuple:
            raise _third_order_error(ctx.call)

        @staticmethod
        def jvp(ctx: Any, *ts: Any) -> tuple:
            raise _third_order_error(ctx.call)

        @staticmethod
        def vmap(info: Any, in_dims: tuple, call: _Call, mode: str, pull_needs: tuple,
                 needs: tuple | None, n_g: int, *rest: Any) -> tuple:
            def one(b: int, sliced: list) -> tuple:
                res = _SecondOrder.apply(call, mode, pull_needs, needs, n_g, *sliced)
                return res if isinstance(res, tuple) else (res,)

            return batched_apply(one, info.batch_size, in_dims[5:], rest)

    def _second_order_by_reference_ad(call: _Call, pull_needs: tuple, needs: tuple,
                                      grads: tuple, inputs: tuple, vs: tuple) -> list:
        """Cotangents of (grads, inputs) of ``x_bar = pullback(grads)`` along ``vs``."""
        try:
            import chainrules.ad as reference_ad
        except ImportError as e:  # pragma: no cover - chainrules.ad ships with chainrules
            raise _second_order_error(call, "a second derivative with respect to the "
                                            "inputs") from e
        n_in = len(inputs)
        np_inputs = [tensor_to_numpy(t) for t in inputs]
        y_leaves = dict(leaves_with_paths(call.y))
        np_grads = [np.zeros(np.shape(y_leaves[p]), np.asarray(y_leaves[p]).dtype)
                    if g is None else tensor_to_numpy(g) for p, g in zip(call.out_paths, grads)]
        need_idx = [i for i, n in enumerate(pull_needs) if n]
        fn, diff_idx = _pullback_as_function(call, need_idx, np_inputs)
        try:
            _, pullback = reference_ad.vjp(fn, *(np_inputs[i] for i in diff_idx), *np_grads)
            seeds = tuple(np.zeros(np.shape(np_inputs[i]), np.asarray(np_inputs[i]).dtype)
                          if vs[i] is None else tensor_to_numpy(vs[i]) for i in need_idx)
            cts_diff = pullback(seeds)
        except Exception as e:
            raise UnsupportedTransformError(
                _BRIDGE, call.f, "a second derivative with respect to the inputs",
                f"it differentiates the rrule of {func_name(call.f)} with chainrules.ad, "
                f"which failed: {type(e).__qualname__}: {e}",
                f"Make the rule's code differentiable by chainrules.ad (NumPy functions "
                f"with rules), or differentiate once through "
                f"torch_function({func_name(call.f)})") from e
        cts: list = [ZeroTangent()] * n_in + list(cts_diff[len(diff_idx):])
        for k, i in enumerate(diff_idx):
            cts[i] = cts_diff[k]
        out: list = []
        like = [*grads, *inputs]
        for k, need in enumerate(needs):
            if not need or like[k] is None:
                out.append(None)
                continue
            ct = cts[n_in + k] if k < len(grads) else cts[k - len(grads)]
            if isinstance(ct, (ZeroTangent, NoTangent)):
                out.append(None)
                continue
            ref = like[k]
            t = numpy_to_tensor(np.asarray(ct), ref.device)
            out.append(t.to(ref.dtype) if t.dtype != ref.dtype else t)
        return out

    def _second_order_jvp(call: _Call, pull_needs: tuple, grads: tuple, inputs: tuple,
                          g_dots: tuple, x_dots: tuple) -> list:
        """Tangent of ``x_bar = pullback(grads)`` along (g_dots, x_dots), by chainrules.ad."""
        import chainrules.ad as reference_ad

        n_in = len(inputs)
        y_leaves = dict(leaves_with_paths(call.y))
        zeros_y = [np.zeros(np.shape(y_leaves[p]), np.asarray(y_leaves[p]).dtype)
                   for p in call.out_paths]
        np_inputs = [tensor_to_numpy(t) for t in inputs]
        np_grads = [z if g is None else tensor_to_numpy(g) for z, g in zip(zeros_y, grads)]
        t_in = [np.zeros_like(a) if t is None else tensor_to_numpy(t)
                for a, t in zip(np_inputs, x_dots)]
        t_g = [z if t is None else tensor_to_numpy(t) for z, t in zip(zeros_y, g_dots)]
        need_idx = [i for i, n in enumerate(pull_needs) if n]
        fn, diff_idx = _pullback_as_function(call, need_idx, np_inputs)
        try:
            _, out_dot = reference_ad.jvp(fn, (*(np_inputs[i] for i in diff_idx), *np_grads),
                                          (*(t_in[i] for i in diff_idx), *t_g))
        except Exception as e:
            raise UnsupportedTransformError(
                _BRIDGE, call.f, "forward mode over reverse mode with respect to the inputs",
                f"it differentiates the rrule of {func_name(call.f)} with chainrules.ad, "
                f"which failed: {type(e).__qualname__}: {e}",
                f"Make the rule's code differentiable by chainrules.ad, or differentiate "
                f"once through torch_function({func_name(call.f)})") from e
        result: list = [None] * n_in
        for i, t in zip(need_idx, out_dot):
            if not isinstance(t, (ZeroTangent, NoTangent)):
                ref = inputs[i]
                tt = numpy_to_tensor(np.asarray(t), ref.device)
                result[i] = tt.to(ref.dtype) if tt.dtype != ref.dtype else tt
        return result

    class _Pushforward(torch.autograd.Function):
        """``(tangents, inputs) -> output tangents``: linear in ``tangents``."""

        @staticmethod
        def forward(call: _Call, n_t: int, *rest: Any) -> tuple:  # type: ignore[override]
            tangents = rest[:n_t]
            if not call.np_inputs:
                call.np_inputs = [tensor_to_numpy(t) for t in rest[n_t:]]
            return tuple(numpy_to_tensor(a, call.device) for a in call.push(tangents))

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
            ctx.call, ctx.n_t = inputs[0], inputs[1]
            ctx.save_for_backward(*inputs[2:])
            ctx.save_for_forward(*inputs[2:])

        @staticmethod
        def backward(ctx: Any, *gs: Any) -> tuple:
            call, n_t = ctx.call, ctx.n_t
            needs = ctx.needs_input_grad[2:]
            if any(needs[n_t:]):
                raise _second_order_error(call, "reverse mode over forward mode with respect "
                                                "to the inputs")
            inputs = ctx.saved_tensors[n_t:]
            t_needs = tuple(bool(n) for n in needs[:n_t])
            out = (_Pullback.apply(call, t_needs, len(gs), *gs, *inputs)
                   if any(t_needs) else (None,) * n_t)
            return (None, None, *out, *([None] * len(inputs)))

        @staticmethod
        def jvp(ctx: Any, _c: Any, _n: Any, *tangents: Any) -> tuple:
            call, n_t = ctx.call, ctx.n_t
            if not all(_is_zero(t) for t in tangents[n_t:]):
                raise _second_order_error(call, "a second forward-mode derivative")
            return _Pushforward.apply(call, n_t, *tangents[:n_t], *ctx.saved_tensors[n_t:])

        @staticmethod
        def vmap(info: Any, in_dims: tuple, call: _Call, n_t: int, *rest: Any) -> tuple:
            inputs_batched = any(d is not None for d in in_dims[2 + n_t:])

            def one(b: int, sliced: list) -> tuple:
                c = call
                if inputs_batched:
                    c = call.fresh()
                    c.np_inputs = [tensor_to_numpy(t) for t in sliced[n_t:]]
                res = _Pushforward.apply(c, n_t, *sliced)
                return res if isinstance(res, tuple) else (res,)

            return batched_apply(one, info.batch_size, in_dims[2:], rest)

    # Function.apply binds its arguments to forward's signature on every call (for
    # setup_context-style Functions); a precomputed __signature__ spares it recomputing.
    for cls in (_Primal, _Pullback, _Pushforward):
        cls.forward.__signature__ = inspect.signature(cls.forward)
    return _Primal, _Pullback, _Pushforward


_OP_IDS = itertools.count()
# op_id -> bridged function, for the compiled path's ops (which name calls by integers)
_BRIDGED: weakref.WeakValueDictionary[int, _TorchBridged] = weakref.WeakValueDictionary()


def _is_compiling() -> bool:  # replaced by torch.compiler.is_compiling once torch is imported
    return False


def _compiled_call(bridged: _TorchBridged, args: tuple, kwargs: dict) -> Any:
    raise AssertionError("replaced by _torch_compile.compiled_call")  # pragma: no cover


def _load_compiled_path() -> None:
    # done when a function is bridged, not in __call__: an import there would be traced
    # by dynamo (and break the graph) when the first call happens under torch.compile
    global _is_compiling, _compiled_call
    if _is_compiling is _not_compiling:
        torch = _compat.import_torch()
        from ._torch_compile import compiled_call

        _is_compiling = torch.compiler.is_compiling
        _compiled_call = compiled_call


_not_compiling = _is_compiling


def bridged_by_id(op_id: int) -> _TorchBridged:
    """The bridged function with this ``op_id``."""
    return _BRIDGED[op_id]


class _TorchBridged:
    """The callable returned by `torch_function`."""

    def __init__(self, f: Callable, config: RuleConfig | None, backend: str) -> None:
        self.f = f
        self.config = config
        self.backend = backend
        # input signature -> (backend, why not native): the choices of backend="auto"
        self.backends: dict[tuple, tuple[str, str]] = {}
        _load_compiled_path()
        self.op_id = next(_OP_IDS)
        _BRIDGED[self.op_id] = self
        functools.update_wrapper(self, f, updated=())

    def __repr__(self) -> str:
        return f"torch_function({func_name(self.f)})"

    def backend_for(self, *args: Any, **kwargs: Any) -> str:
        """``"native"`` or ``"callback"``: the path a call with these arguments takes."""
        if self.backend != "auto":
            return self.backend
        return choose_backend(self, prepare(self, args, kwargs))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _is_compiling():
            return _compiled_call(self, args, kwargs)
        if self.backend != "callback":
            native = prepare(self, args, kwargs)
            if self.backend == "native":
                result = native_call(native)
                if native.key not in self.backends:  # the first call with this signature
                    refuse_numpy_only(self, native)
                return result
            if choose_backend(self, native) == "native":
                return native_call(native)
        torch = _compat.import_torch()
        primal_fn = _functions()[0]
        call = _Call(self, args, kwargs)
        call.need_pullback = torch.is_grad_enabled() and any(
            t.requires_grad for t in call.tensors)
        if not call.need_pullback and not _any_dual(call.tensors):
            # Nothing to differentiate: skip autograd.Function (its apply costs more than
            # a small f). torch.func's wrapped tensors have no storage and refuse .numpy();
            # they take the Function path, whose jvp/vmap they need.
            try:
                np_inputs = [tensor_to_numpy(t) for t in call.tensors]
            except RuntimeError:
                pass
            else:
                return call.rebuild_output(call.run_numpy(np_inputs))
        flat = primal_fn.apply(call, *call.tensors)
        if not isinstance(flat, tuple):
            flat = (flat,)
        return call.rebuild_output(flat)


_BACKENDS = ("auto", "native", "callback")


def torch_function(f: Callable, *, backend: str = "auto",
                   config: RuleConfig | None = None) -> Callable:
    """Make ``f``, a function with chainrules rules, differentiable by PyTorch.

    The result takes tensors (anywhere inside tuples, lists, dicts, namedtuples and
    dataclasses) and returns tensors; every other argument is passed to ``f``
    unchanged and is not differentiated, and so are keyword arguments. Gradients
    come from ``f``'s rrule, forward-mode tangents from its frule; integer and bool
    tensors are never differentiated.

    Two paths (``backend``): ``"native"`` runs ``f`` and its rules on the tensors
    themselves (rules written with ``xp = chainrules.array_namespace(x)``); the
    backward pass is then itself differentiable to any order and ``torch.func.vmap``
    batches the rule's torch operations. ``"callback"`` runs them on NumPy views of
    the tensors (for NumPy-only rules; outputs keep the dtype NumPy gives them and
    the inputs' device); second derivatives then come from ``chainrules.ad``. ``"auto"``
    tries the rules once per input signature on meta tensors and picks native when
    they return tensors; ``bridged.backend_for(*args)`` says which it picked and
    ``bridged.backends`` holds every choice with the reason for a callback one.

    Arguments:
        f: the function with rules.
        backend: ``"auto"`` (default), ``"native"`` or ``"callback"``.
        config: a ``RuleConfig`` passed to the rules (for rules that call back into an AD).

    Returns:
        A function taking and returning tensors, usable with ``.backward()``,
        ``torch.autograd.grad``, ``torch.autograd.forward_ad`` and ``torch.func``
        (``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``vmap``).

    Raises:
        NoRuleError: (when differentiated) ``f`` has no rrule (frule) for the arguments.
        TangentConversionError: a rule returned a tangent that does not fit its argument.
        UnsupportedTransformError: (callback) a derivative the rule's code cannot give.
        NumPyOnlyRuleError: (native) a rule returned NumPy values, or NumPy refused a tensor.
        ValueError: an unknown ``backend``.
        FrameworkNotInstalledError: PyTorch is not installed.

    Examples:
        >>> import pytest; torch = pytest.importorskip("torch")  # skips this example without torch
        >>> import chainrules
        >>> from chainrules.interop.torch import torch_function
        >>> def cube(x):
        ...     return x**3
        >>> @chainrules.rrule.register(cube)
        ... def cube_rrule(x):
        ...     def cube_pullback(y_bar):
        ...         return chainrules.NoTangent(), 3 * x**2 * y_bar
        ...     return x**3, cube_pullback
        >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> torch_function(cube)(x).sum().backward()
        >>> x.grad
        tensor([ 3., 12.])
        >>> torch.func.grad(lambda x: torch_function(cube)(x).sum())(torch.tensor([3.0]))
        tensor([27.])
        >>> torch_function(cube).backend_for(x)  # x**3 runs on tensors
        'native'
        >>> torch_function(cube, backend="callback").backend_for(x)
        'callback'
    """
    if not callable(f):
        raise TypeError(
            f"torch_function(f): f must be callable, got {type(f).__qualname__}. Pass the "
            f"function that has rules, e.g. torch_function(np.sin)."
        )
    if backend not in _BACKENDS:
        raise ValueError(
            f"torch_function({func_name(f)}): backend must be one of {_BACKENDS}, got "
            f"{backend!r}. 'native' runs f and its rules on tensors, 'callback' on NumPy "
            f"views of them, 'auto' picks native when the rules run on tensors.")
    return _TorchBridged(f, config, backend)
