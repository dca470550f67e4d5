"""Fixtures for the reference AD's tests.

Every test runs inside ``scoped_rules()`` so the rules it registers (and the
stop-gap rules of ``stopgap_rules``, used only where the built-in rule set has
none yet) disappear afterwards and never leak into other packages' tests.
"""

from __future__ import annotations

import importlib.util
import pathlib
from collections.abc import Iterator

import pytest

from chainrules import scoped_rules

try:
    import scipy  # noqa: F401
except ImportError:  # pragma: no cover - scipy is a test dependency
    pass
else:
    # SciPy's rules register when a SciPy module is first imported. A first import
    # inside a test (JAX imports scipy lazily) would register them inside that test's
    # scoped_rules, whose end removes them for every later test: register them now.
    from chainrules.rules import load_scipy_rules

    load_scipy_rules()

_spec = importlib.util.spec_from_file_location(
    "chainrules_ad_stopgap_rules", pathlib.Path(__file__).with_name("stopgap_rules.py"))
stopgap = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stopgap)


@pytest.fixture(autouse=True)
def _rules() -> Iterator[None]:
    with scoped_rules():
        stopgap.ensure()
        yield


@pytest.fixture
def jax():
    """JAX with 64-bit floats for this test only (the flag is global: restore it)."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before)
