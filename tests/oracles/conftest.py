"""JAX compares in float64 here: x64 mode on for each oracle test, restored after."""

import pytest


@pytest.fixture(autouse=True)
def _jax_x64():
    jax = pytest.importorskip("jax")
    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", before)
