"""JAX compares in float64 here: x64 mode on for each oracle module, restored after.

Per module rather than per test: switching the mode clears JAX's compilation caches.
"""

import pytest


@pytest.fixture(autouse=True, scope="module")
def _jax_x64():
    jax = pytest.importorskip("jax")
    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)
