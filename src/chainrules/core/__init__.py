"""chainrules.core: the rule-definition kit (tangents, rule tables, helpers, projection, configs).

Contains no maths rules: those live in `chainrules.rules`.
"""

from ._config import (
    HasForwardsMode,
    HasReverseMode,
    NoForwardsMode,
    NoReverseMode,
    RuleConfig,
    frule_via_ad,
    rrule_via_ad,
)
from ._debug import debug_mode
from ._dispatch import RuleInfo, RuleOverwriteWarning, RuleTable
from ._errors import (
    AmbiguityError,
    ChainRulesError,
    InvalidTangentError,
    MissingCapabilityError,
    NoMatchingRuleError,
    NotImplementedDerivativeError,
    OutArgumentError,
    PrimalAdditionError,
    ProjectionError,
    PullbackError,
    RuleRegistrationError,
    TangentFieldError,
    TangentTypeMismatchError,
)
from ._helpers import (
    derivatives_given_output,
    has_scalar_rule,
    ignore_derivatives,
    non_differentiable,
    not_implemented,
    scalar_rule,
)
from ._lookup import cached_lookup, namespace_of, registered_functions, scalar_partials
from ._projection import ProjectTo
from ._rules import frule, rrule, scoped_rules
from ._tangents import (
    AbstractTangent,
    InplaceableThunk,
    MutableTangent,
    NoTangent,
    NotImplementedTangent,
    Tangent,
    Thunk,
    ZeroTangent,
    backing,
    canonicalize,
    iadd,
    unthunk,
    zero_tangent,
)
from ._xp import array_namespace, is_foreign_array

__all__ = [
    "AbstractTangent",
    "AmbiguityError",
    "ChainRulesError",
    "HasForwardsMode",
    "HasReverseMode",
    "InplaceableThunk",
    "InvalidTangentError",
    "MissingCapabilityError",
    "MutableTangent",
    "NoForwardsMode",
    "NoMatchingRuleError",
    "NoReverseMode",
    "NoTangent",
    "NotImplementedDerivativeError",
    "NotImplementedTangent",
    "OutArgumentError",
    "PrimalAdditionError",
    "ProjectTo",
    "ProjectionError",
    "PullbackError",
    "RuleConfig",
    "RuleInfo",
    "RuleOverwriteWarning",
    "RuleRegistrationError",
    "RuleTable",
    "Tangent",
    "TangentFieldError",
    "TangentTypeMismatchError",
    "Thunk",
    "ZeroTangent",
    "array_namespace",
    "backing",
    "cached_lookup",
    "canonicalize",
    "debug_mode",
    "derivatives_given_output",
    "frule",
    "frule_via_ad",
    "has_scalar_rule",
    "iadd",
    "ignore_derivatives",
    "is_foreign_array",
    "namespace_of",
    "non_differentiable",
    "not_implemented",
    "registered_functions",
    "rrule",
    "rrule_via_ad",
    "scalar_partials",
    "scalar_rule",
    "scoped_rules",
    "unthunk",
    "zero_tangent",
]
