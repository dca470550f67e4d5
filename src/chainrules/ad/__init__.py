"""chainrules.ad: a small reference AD that differentiates ordinary Python + NumPy code
with the registered rules.

Every call the differentiated code makes -- to a user function, ``math.sin``, a
constructor, a method -- goes through one dispatch point (the function's source is
rewritten once, cached per code object). When a rule is registered for the call,
the rule is used; otherwise Python functions are traced into, and operators and
NumPy functions work on traced values through the operator methods and NumPy's
``__array_ufunc__`` / ``__array_function__``. What cannot be differentiated
(``float()`` of a traced value, writing it into an array, a NumPy function with no
rule) raises an error that names the operation.

Modules, one job each: ``_tracer`` (the `Tracer` and its operators), ``_tree``
(structures around traced values), ``_dispatch`` (the dispatch point: how a call
finds its rule), ``_syntax`` (attribute and subscript access in rewritten code),
``_rewrite`` (the source rewriting), ``_reverse`` (tape and backward pass),
``_forward`` (forward mode), ``_closures`` (closures and watched calls), ``_api`` and
``_jacobian`` (the transformations), ``_ad_rules`` and ``_higher_order`` (rules the AD
defines), ``_errors``.

Example:
    >>> import math
    >>> from chainrules.ad import grad
    >>> grad(lambda x: math.asin(0.2 + math.sin(x)))(3.0)
    -1.0531613736418153
"""

from . import _ad_rules as _ad_rules
from . import _higher_order as _higher_order
from . import _higher_order_forward as _higher_order_forward
from . import _syntax as _syntax  # the dispatch point's attribute and subscript helpers
from ._api import ADConfig, grad, jvp, value_and_grad, vjp
from ._checkpoint import checkpoint
from ._errors import (
    ADError,
    ClosureTangentError,
    ControlFlowError,
    DeadTracerError,
    InputTypeError,
    MutationError,
    NonScalarOutputError,
    NoRuleError,
    OpaqueArrayError,
    StaleSourceError,
    TracerConversionError,
    UntrackedOutputError,
)
from ._jacobian import hessian, jacobian
from ._tape_setup import configure_native as _configure_native
from ._tracer import Tracer

_configure_native()  # the optional C fast paths, once both modes exist

__all__ = [
    "ADConfig",
    "ADError",
    "ClosureTangentError",
    "ControlFlowError",
    "DeadTracerError",
    "InputTypeError",
    "MutationError",
    "NoRuleError",
    "NonScalarOutputError",
    "OpaqueArrayError",
    "StaleSourceError",
    "Tracer",
    "TracerConversionError",
    "UntrackedOutputError",
    "checkpoint",
    "grad",
    "hessian",
    "jacobian",
    "jvp",
    "value_and_grad",
    "vjp",
]
