"""Rules for ``numpy.random``: the ``Generator`` methods, the legacy ``RandomState``
methods and the legacy module functions (``np.random.normal`` …, which are methods of
a hidden ``RandomState``).

A random sample is not a function of its arguments in the sense of calculus, so none of
these rules gives a derivative, but they never give a silent zero either:

- arguments that cannot carry a tangent (sizes, integer counts, seeds, dtypes) and
  integer-valued samples (``integers``, ``binomial``, ``poisson``, …) get
  ``NoTangent()``: there is nothing to differentiate;
- a floating parameter of a continuous distribution (``loc`` and ``scale`` of
  ``normal``, ``a`` of ``gamma``, …) and an array that ``permutation``/``choice``/
  ``shuffle`` rearrange get ``not_implemented``: the pathwise derivative of a sample
  depends on how the sampler consumes its random stream. An AD raises
  (``NotImplementedError``) if such a derivative is ever needed, with the reason and the
  way out: write the sample as a transformation of a parameter-free one
  (``loc + scale * rng.standard_normal(size)``) or index with random indices
  (``x[rng.permutation(len(x))]``).

Examples:
    >>> import numpy as np
    >>> from chainrules import rrule
    >>> rng = np.random.default_rng(0)
    >>> z, pullback = rrule(rng.standard_normal, 3)
    >>> pullback(np.ones(3))
    (NoTangent(), NoTangent())
    >>> _, pullback = rrule(rng.normal, 1.0, 2.0)
    >>> pullback(1.0)[1].info.startswith("numpy.random.Generator.normal")
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules import core
from chainrules.core import NoTangent, NotImplementedTangent, non_differentiable, not_implemented
from chainrules.rules import _kit as kit

#: Samplers whose samples are integers (or bools, bytes): no tangent at all.
_DISCRETE = (
    "integers", "binomial", "negative_binomial", "poisson", "geometric", "hypergeometric",
    "logseries", "multinomial", "multivariate_hypergeometric", "zipf", "randint",
    "random_integers", "bytes",
)

#: Methods that rearrange or pick from a given array: its values pass into the output.
_REARRANGING = ("permutation", "choice", "shuffle", "permuted")

#: Methods that sample nothing, or only from fixed parameter-free distributions.
_STATE = ("seed", "get_state", "set_state", "spawn", "bit_generator", "jumped",
          "__getstate__", "__setstate__", "__reduce__")


def _reason(name: str, rearranging: bool) -> str:
    if rearranging:
        return (f"numpy.random.{name}: the derivative of a random rearrangement of an array "
                f"with respect to its values depends on the permutation drawn, which the "
                f"rule cannot see; draw indices instead and index the array, e.g. "
                f"x[rng.permutation(len(x))]")
    return (f"numpy.random.{name}: the derivative of a sample with respect to its "
            f"distribution's parameters (the pathwise derivative) depends on how the "
            f"sampler uses its random stream; write the sample as a transformation of a "
            f"parameter-free one, e.g. loc + scale * rng.standard_normal(size)")


def _sampler_rules(f: Any, name: str, rearranging: bool) -> None:
    reason = _reason(name, rearranging)

    def sampler_rrule(*args: Any, **kwargs: Any) -> Any:
        y = f(*args, **kwargs)
        discrete = not kit.is_differentiable(y)
        bars = tuple(
            NoTangent() if discrete or not kit.is_differentiable(x) else not_implemented(reason)
            for x in args)

        def sampler_pullback(y_bar: Any) -> tuple:
            return (NoTangent(), *bars)

        return y, sampler_pullback

    def sampler_frule(dargs: tuple, *args: Any, **kwargs: Any) -> Any:
        y = f(*args, **kwargs)
        if not kit.is_differentiable(y):
            return y, NoTangent()
        for t, x in zip(dargs[1:], args):
            t = core.unthunk(t)
            if isinstance(t, NotImplementedTangent):
                return y, t
            if not isinstance(t, kit.ZEROS) and kit.is_differentiable(x):
                return y, not_implemented(reason)
        return y, NoTangent()

    sampler_rrule.__qualname__ = f"{name.replace('.', '_')}_rrule"
    sampler_frule.__qualname__ = f"{name.replace('.', '_')}_frule"
    # listed as non-differentiable in reports: a sample has no derivative (these rules
    # only say why, where `non_differentiable` would answer NoTangent silently)
    core.rrule.add_rule(f, sampler_rrule, (...,), kind="non_differentiable")
    core.frule.add_rule(f, sampler_frule, (...,), kind="non_differentiable")


def _register(cls: type) -> None:
    for attr in dir(cls):
        if attr.startswith("_") or attr in _STATE:
            continue
        method = getattr(cls, attr)
        if not callable(method) or isinstance(method, type):
            continue
        name = f"{cls.__name__}.{attr}"
        if attr in _DISCRETE:
            non_differentiable(method)
        else:
            _sampler_rules(method, name, attr in _REARRANGING)


_register(np.random.Generator)
_register(np.random.RandomState)
for _f in (np.random.default_rng, np.random.seed, np.random.get_state, np.random.set_state):
    non_differentiable(_f)
