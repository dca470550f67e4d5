"""The edge-input sweep (issue #26) over the catalog's NumPy and array API cases: every
floating input replaced by an empty array, all-NaN and all-inf values that the primal
accepts; the rules must give a value or a named chainrules error, never a raw crash.

The failures that remain are listed in KNOWN with their reason; the test fails when the
sweep finds a new one, and when a listed one no longer fails (remove it from the list).
"""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

from chainrules.testing import iter_catalog, test_frule, test_rrule

_spec = importlib.util.spec_from_file_location(
    "chainrules_edge_sweep", pathlib.Path(__file__).with_name("_sweep.py"))
assert _spec is not None and _spec.loader is not None
sweep = importlib.util.module_from_spec(_spec)
sys.modules["chainrules_edge_sweep"] = sweep
_spec.loader.exec_module(sweep)

pytest.importorskip("array_api_strict")

KNOWN: dict[str, str] = {}  # (none left: a new raw crash goes here with its reason)


@pytest.mark.filterwarnings("ignore")  # the primals warn on NaN, inf and empty inputs
@pytest.mark.parametrize("area", ["numpy", "array_api"])
def test_edge_inputs_give_a_value_or_a_named_error(area):
    found = {}
    for case in iter_catalog(area):
        if "float64" in case.dtypes:
            found.update(sweep.probe(case))
    known = {k for k in KNOWN if k.startswith("numpy.") == (area == "numpy")}
    new = {k: v for k, v in found.items() if k not in known}
    assert not new, "raw crashes on edge inputs:\n" + "\n".join(
        f"  {k}: {v}" for k, v in new.items())
    assert known <= set(found), f"no longer failing, remove from KNOWN: {known - set(found)}"


_RNG = np.random.default_rng(26)
_X = _RNG.normal(size=(2, 3))


@pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning")
@pytest.mark.parametrize(("f", "args", "kwargs"), [
    # NumPy multiplies by poly1d([]) = [0]: the other polynomial's derivative is 0
    (np.polymul, (np.array([]), np.array([1.0, 2.0])), {}),
    (np.polymul, (np.array([1.0, 2.0, 3.0]), np.array([])), {}),
    # an empty q: an empty result
    (np.quantile, (_X, np.array([])), {"axis": 1}),
    (np.percentile, (_X, np.array([])), {"axis": 1}),
    # an empty m: NumPy returns an empty covariance whatever y is
    (np.cov, (np.zeros((0, 3)), _X), {}),
    # an empty axis beside the differentiated one
    (np.gradient, (np.zeros((0, 5)),), {"axis": 1}),
    (np.gradient, (np.zeros((0, 5)),), {"axis": 1, "edge_order": 2}),
], ids=["polymul-empty-1", "polymul-empty-2", "quantile-empty-q", "percentile-empty-q",
        "cov-empty-m", "gradient-empty-batch", "gradient-empty-batch-order-2"])
def test_once_known_edge_crashes_follow_the_primal(f, args, kwargs):
    test_rrule(f, *args, fkwargs=kwargs)
    test_frule(f, *args, fkwargs=kwargs)
