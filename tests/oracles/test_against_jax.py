"""Oracle check against JAX: every table of ``_jax_table.py`` (ufuncs, scalars,
reductions, contractions, shape, linalg, fft, special, harder variants, mixed
arguments, scipy.signal and scipy.fft), one test id per row, dtype and mode:
``<table>/<row>-<dtype>-<mode>``, e.g. ``-k "linalg/"`` runs one table
(``CHAINRULES_ORACLE_FAMILIES=linalg,fft`` collects only those).

Checker and complex convention: ``_harness.py``. Rows marked
``xfail(strict=True)`` are confirmed bugs or coverage gaps of our rules (see the
oracle report); they turn red once fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("scipy")
from . import _jax_table as jt

PARAMS = [p for family, rows in jt.FAMILIES.items()
          for p in jt.params(rows, pytest, family=family)]


@pytest.mark.parametrize(("row", "dt", "mode"), PARAMS)
def test_against_jax(row, dt, mode):
    jt.check(row, dt, mode)


def test_every_table_is_collected():
    tables = {p.id.partition("/")[0] for p in PARAMS}
    assert tables == set(jt.FAMILIES)
    assert len(PARAMS) == len({p.id for p in PARAMS})  # ids unique across tables


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
