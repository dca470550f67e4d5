"""chainrules: AD-independent differentiation rules for Python.

Write the derivative of a function once, as a forward rule (``frule``) and a
reverse rule (``rrule``), test it against finite differences with one call
(`chainrules.testing`), and use it from the reference AD
(`chainrules.ad`), JAX, PyTorch or HIPS autograd (`chainrules.interop`).

``import chainrules`` gives the core API (`chainrules.core`) and registers the
built-in rule set (`chainrules.rules`).

Examples:
    >>> import math
    >>> import chainrules
    >>> y, pullback = chainrules.rrule(math.sin, 0.0)
    >>> pullback(1.0)
    (NoTangent(), 1.0)
"""

from .core import *  # noqa: F403 -- the core's public names are this package's
from .core import __all__ as _core_all

__version__ = "0.1.0"
__all__ = [*_core_all, "__version__"]

from . import rules as _rules  # noqa: F401 -- importing registers the built-in rule set
