"""Bridges between chainrules and other AD systems.

- `chainrules.interop.jax`: `jax_function`,
  `JaxConfig`,
  `as_numpy_function`;
- `chainrules.interop.torch`: `torch_function`,
  `TorchConfig`,
  `as_numpy_function`;
- `chainrules.interop.autograd`:
  `autograd_primitive`.

A rule written once (``rrule`` and/or ``frule``) makes a function differentiable in
each framework; the bridges translate the conventions for zeros (``ZeroTangent`` /
``NoTangent`` to ``None``, symbolic zeros, ``float0``), integers (never
differentiated), structured arguments (``Tangent`` to pytrees) and complex numbers
(JAX and autograd use the conjugate of the ChainRules / PyTorch cotangent).

The frameworks are optional: each submodule imports its framework on first use and
raises `FrameworkNotInstalledError` naming the extra to install.

Examples:
    >>> from chainrules.interop import FrameworkNotInstalledError
    >>> issubclass(FrameworkNotInstalledError, ImportError)
    True
"""

from ._errors import (
    FrameworkNotInstalledError,
    NoRuleError,
    NumPyOnlyRuleError,
    ResultShapeError,
    TangentConversionError,
    UnsupportedTransformError,
)

__all__ = [
    "FrameworkNotInstalledError",
    "NoRuleError",
    "NumPyOnlyRuleError",
    "ResultShapeError",
    "TangentConversionError",
    "UnsupportedTransformError",
]
