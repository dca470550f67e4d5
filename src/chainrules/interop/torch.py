"""Use chainrules rules from PyTorch, and PyTorch's AD (``torch.func``) from chainrules.

- `torch_function` wraps a function that has an ``rrule`` / ``frule`` into a
  ``torch.autograd.Function``-backed callable: ``.backward()``, ``torch.func.grad``,
  ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``vmap`` work.
- `TorchConfig` is a ``RuleConfig`` whose ``rrule_via_ad`` / ``frule_via_ad``
  are ``torch.func.vjp`` / ``torch.func.jvp``.
- `as_numpy_function` makes a torch function NumPy-in, NumPy-out, so that
  ``chainrules.testing`` can check torch's derivatives of it against finite
  differences (``test_rrule(as_numpy_function(g), x, rrule_f=rrule_via_ad,
  config=TorchConfig())``).

Importing this module does not import PyTorch; the first ``torch_function(f)`` (or
call of ``TorchConfig`` / ``as_numpy_function``) does, and raises
`FrameworkNotInstalledError` ("install chainrules[torch]") if it is missing.

Under ``torch.compile`` and ``torch.export`` a bridged call is one opaque graph node
(the custom op ``chainrules::call``): one graph, no break, gradients from the rrule.
"""

from ._torch import torch_function
from ._torch_config import TorchConfig, as_numpy_function

__all__ = ["TorchConfig", "as_numpy_function", "torch_function"]
