"""Use chainrules rules from JAX, and JAX's AD from chainrules.

- :func:`jax_function` wraps a function that has an ``rrule`` / ``frule`` into one
  that ``jax.grad``, ``jax.vjp``, ``jax.jvp``, ``jax.jit`` and ``jax.vmap`` accept.
- :class:`JaxConfig` is a ``RuleConfig`` whose ``rrule_via_ad`` / ``frule_via_ad``
  are ``jax.vjp`` / ``jax.jvp``.

Importing this module does not import JAX; the first call does, and raises
:class:`~chainrules.interop.FrameworkNotInstalledError` ("install chainrules[jax]")
if it is missing.
"""

from ._jax import JaxConfig, jax_function

__all__ = ["JaxConfig", "jax_function"]
