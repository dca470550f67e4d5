"""Oracle check of the catalog's own rows: every `Case` that names an ``oracle``
(``Case(np.sin, ..., oracle="jax.numpy.sin")``) is compared with JAX at the case's inputs
(seed 0): the primal, the pullback against ``jax.vjp`` and the pushforward against
``jax.jvp``, as for the rows of ``_jax_table.py`` (checker and complex convention:
``_harness.py``). The catalog is then the one table of inputs for these functions."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("scipy")

from chainrules.testing import iter_catalog
from chainrules.testing._cases import resolve_oracle
from chainrules.testing._pairs import PrimalAndTangent

from . import _jax_table as jt
from ._harness import Row

_DT = {"float64": "f8", "float32": "f4", "complex128": "c16", "complex64": "c8"}
_CASES = [c for c in iter_catalog() if c.oracle is not None and c.skip is None]


def _fixed(value, constant):
    def build(r, dt):
        return value

    build.constant = constant
    return build


def _row(case, dtype: str) -> Row:
    """The case at seed 0 as an oracle row: its arguments fixed, those it holds fixed
    (``no_tangent``) constant."""
    args = case.args(np.random.default_rng(0), np.dtype(dtype))
    builders = []
    for a in args:
        if isinstance(a, PrimalAndTangent):
            builders.append(_fixed(a.x, constant=True))
        else:
            builders.append(_fixed(a, constant=False))
    return Row(case.display_name, case.f, resolve_oracle(case), tuple(builders),
               kw=dict(case.kwargs), dtypes=(_DT[dtype],))


PARAMS = [pytest.param(case, dtype, mode, id=f"{case.display_name}-{_DT[dtype]}-{mode}")
          for case in _CASES for dtype in case.dtypes for mode in "vj"
          if (mode == "v" and case.rrule) or (mode == "j" and case.frule)]


@pytest.mark.parametrize(("case", "dtype", "mode"), PARAMS)
def test_catalog_row_against_its_oracle(case, dtype, mode):
    jt.check(_row(case, dtype), _DT[dtype], mode)


def test_the_catalog_names_oracles():
    """The ufunc table names its oracles (a refactor that drops them would silently
    shrink the oracle check to nothing)."""
    names = {c.display_name for c in _CASES}
    assert {"numpy.sin", "numpy.power", "numpy.maximum", "numpy.absolute",
            "scipy.special.gammaln", "scipy.special.xlogy"} <= names
