"""Rules for the standard library's ``math`` module (a first few; the full set is coming)."""

import math

from chainrules.core import scalar_rule

scalar_rule(math.sin, lambda x: math.cos(x))
scalar_rule(math.cos, lambda x: -math.sin(x))
scalar_rule(math.exp, lambda x, *, y: y)
