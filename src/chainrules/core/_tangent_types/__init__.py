"""Tangent types and their algebra, one module per kind (as ChainRulesCore's
``tangent_types/``).

Natural tangents need no wrapper (``float`` for ``float``, a same-shape array for an
array). The types here cover the rest: hard zeros and "cannot be perturbed"
(`.zeros`), structural tangents of objects (`.structural`), deferred computations
(`.thunks`) and derivatives not written yet (`.notimplemented`), all derived from
`.abstract.AbstractTangent`; `.algebra` says what their operators do.
"""

from .abstract import AbstractTangent
from .algebra import iadd, zero_tangent
from .notimplemented import NotImplementedTangent
from .structural import MutableTangent, Tangent, backing, canonicalize
from .thunks import InplaceableThunk, Thunk, unthunk
from .zeros import NoTangent, ZeroTangent

__all__ = [
    "AbstractTangent",
    "InplaceableThunk",
    "MutableTangent",
    "NoTangent",
    "NotImplementedTangent",
    "Tangent",
    "Thunk",
    "ZeroTangent",
    "backing",
    "canonicalize",
    "iadd",
    "unthunk",
    "zero_tangent",
]
