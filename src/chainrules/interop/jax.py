"""Use chainrules rules from JAX, and JAX's AD from chainrules.

- `jax_function` wraps a function that has an ``rrule`` / ``frule`` into one
  that ``jax.grad``, ``jax.vjp``, ``jax.jvp``, ``jax.jit`` and ``jax.vmap`` accept.
- `JaxConfig` is a ``RuleConfig`` whose ``rrule_via_ad`` / ``frule_via_ad``
  are ``jax.vjp`` / ``jax.jvp``.
- `as_numpy_function` makes a jax function NumPy-in, NumPy-out, so that
  ``chainrules.testing`` can check jax's derivatives of it against finite
  differences (``test_rrule(as_numpy_function(g), x, rrule_f=rrule_via_ad,
  config=JaxConfig())``).

Importing this module does not import JAX; the first call does, and raises
`FrameworkNotInstalledError` ("install chainrules[jax]")
if it is missing.
"""

from ._jax import jax_function
from ._jax_config import JaxConfig, as_numpy_function

__all__ = ["JaxConfig", "as_numpy_function", "jax_function"]
