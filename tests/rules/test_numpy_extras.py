"""The catalog rows of the smaller NumPy rule modules (sorting, building, special,
nanquantiles, histograms), and their errors."""

import numpy as np
import pytest

from chainrules import NoTangent, NotImplementedTangent, frule, rrule
from chainrules.testing import test_rrule
from chainrules.testing.pytest_plugin import catalog_params, check_case

PARAMS = [p for ns in ("numpy_sorting", "numpy_building", "numpy_special",
                       "numpy_nanquantiles", "numpy_histograms") for p in catalog_params(ns)]


@pytest.mark.parametrize(("case", "dtype", "mode"), PARAMS)
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode, seed=0)


def test_histogram_estimated_edges_are_not_implemented():
    a = np.array([0.1, 0.4, 0.45, 0.9])
    (h, edges), pullback = rrule(np.histogram, a, "auto")
    bars = pullback((np.ones(h.shape), np.ones_like(edges)))
    assert isinstance(bars[1], NotImplementedTangent)
    assert "bins given as a string" in bars[1].info
    _, dy = frule((NoTangent(), np.ones(4), NoTangent()), np.histogram, a, "auto")
    assert isinstance(dy.backing[1], NotImplementedTangent)


def test_histogram_weights_given_by_keyword_reach_the_rule_positionally():
    # the rule differentiates positional arguments; weights= by keyword has no tangent
    test_rrule(np.histogram, np.array([0.1, 0.6, 0.3]), 2, (0.0, 1.0), None,
               np.array([1.0, 2.0, 0.5]))


@pytest.mark.parametrize(("f", "kwargs"), [(np.nanquantile, {"method": "lower"}),
                                           (np.nanpercentile, {"method": "nearest"})])
def test_nanquantile_methods_other_than_linear_are_refused(f, kwargs):
    with pytest.raises(NotImplementedError, match=r"supports method='linear' without weights"):
        rrule(f, np.array([1.0, np.nan, 2.0]), 0.5, **kwargs)


def test_partition_of_structured_arrays_is_refused():
    with pytest.raises(NotImplementedError, match="order="):
        rrule(np.partition, np.array([2.0, 1.0]), 0, order="x")


def test_nanquantile_all_nan_slice_has_zero_derivative():
    a = np.array([[np.nan, np.nan], [1.0, 2.0]])
    with pytest.warns(RuntimeWarning, match="All-NaN slice"):
        y, pullback = rrule(np.nanquantile, a, 0.5, 1)
    np.testing.assert_allclose(pullback(np.ones(2))[1], [[0.0, 0.0], [0.5, 0.5]])
