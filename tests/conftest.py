"""Guards for process-wide state that one test must not leak into the next."""

import os
import sys

import pytest

# chainrules.ad's on-disk cache of rewritten code stays off in the tests: they rewrite
# thousands of test functions (nothing for a user's ~/.cache), and a cache shared between
# runs would hide what a first run does. tests/ad/test_rewrite_cache.py turns it on.
os.environ["CHAINRULES_CACHE_DIR"] = ""

import chainrules


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    """Tests use tiny matrices: BLAS threads only oversubscribe a small CI machine."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1):
        yield


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Restore JAX's x64 flag and chainrules' debug mode after every test.

    Both are global switches: a test that turns on ``jax_enable_x64`` (to compare in
    float64) would otherwise change the dtypes every later JAX test sees.
    """
    debug = chainrules.debug_mode()
    jax = sys.modules.get("jax")
    x64 = bool(jax.config.jax_enable_x64) if jax is not None else False
    yield
    chainrules.debug_mode(debug)
    jax = sys.modules.get("jax")
    if jax is not None and bool(jax.config.jax_enable_x64) != x64:
        jax.config.update("jax_enable_x64", x64)
