"""Oracle check against JAX: NumPy ufuncs and operators (plus the complex convention itself).

Rows, checker and complex convention: ``_jax_table.py`` / ``_harness.py``.
Rows marked ``xfail(strict=True)`` are confirmed bugs or coverage gaps of our
rules (see the oracle report); they turn red once fixed.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

pytest.importorskip("jax")
sys.path.insert(0, os.path.dirname(__file__))
import _jax_table as jt


@pytest.mark.parametrize(("row", "dt", "mode"), jt.params(jt.UFUNCS, pytest))
def test_against_jax(row, dt, mode):
    jt.check(row, dt, mode)


def test_complex_convention_abs2():
    """Our gradient of |z|^2 is 2z; JAX's vjp gives 2 conj(z); the harness conjugates."""
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    y, pullback = jt.rrule(np.abs, z)
    # L = sum(|z|^2) = sum(y^2): y_bar = 2y
    ours = jt.dense(pullback(2 * y)[1], z)
    np.testing.assert_allclose(ours, 2 * z)
    _, vjp_fn = jt.jax.vjp(lambda x: jt.jnp.abs(x) ** 2, jt.jnp.asarray(z))
    (theirs,) = vjp_fn(jt.jnp.ones(2))
    np.testing.assert_allclose(np.asarray(theirs), 2 * np.conj(z))
    np.testing.assert_allclose(np.conj(np.asarray(theirs)), ours)
