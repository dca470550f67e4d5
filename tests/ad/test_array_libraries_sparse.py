"""Sparse arrays keep their structure in cotangents (issue 27): with respect to a
sparse matrix, a cotangent with its pattern; with respect to a dense array, a dense one.
pydata ``sparse`` COO arrays (an array-API library) and SciPy sparse matrices."""

from __future__ import annotations

import re

import numpy as np
import pytest

from chainrules import ProjectTo, ZeroTangent, ad

sparse = pytest.importorskip("sparse")
sp = pytest.importorskip("scipy.sparse")

rng = np.random.default_rng(0)
D = np.where(rng.random((20, 10)) < 0.1, rng.standard_normal((20, 10)), 0.0)
V = rng.standard_normal(10)


def loss(s, v):
    return np.sum((s @ v) ** 2)


def _on_pattern(dense, pattern):
    return np.where(pattern != 0, dense, 0.0)


def test_pydata_sparse_matmul_gradients_keep_structure():
    s = sparse.COO.from_numpy(D)
    ref_s, ref_v = ad.grad(loss, argnums=(0, 1))(D, V)
    g_v = ad.grad(loss, argnums=1)(s, V)
    assert type(g_v) is np.ndarray  # w.r.t. a dense array: dense
    np.testing.assert_allclose(g_v, ref_v, rtol=1e-12)
    g_s, g_v2 = ad.grad(loss, argnums=(0, 1))(s, V)
    assert isinstance(g_s, sparse.COO) and g_s.nnz == s.nnz  # the pattern, no more
    np.testing.assert_array_equal(g_s.coords, s.coords)
    np.testing.assert_allclose(g_s.todense(), _on_pattern(ref_s, D), rtol=1e-12)
    np.testing.assert_allclose(g_v2, ref_v, rtol=1e-12)


def test_scipy_sparse_gradient_with_respect_to_the_matrix_keeps_its_pattern():
    a = sp.csr_matrix(D)
    ref_s, ref_v = ad.grad(loss, argnums=(0, 1))(D, V)
    g_a, g_v = ad.grad(loss, argnums=(0, 1))(a, V)
    assert sp.issparse(g_a) and g_a.format == "csr" and g_a.nnz == a.nnz
    np.testing.assert_allclose(g_a.toarray(), _on_pattern(ref_s, D), rtol=1e-12)
    assert type(g_v) is np.ndarray
    np.testing.assert_allclose(g_v, ref_v, rtol=1e-12)


def test_project_to_a_coo_array_keeps_its_pattern():
    s = sparse.COO.from_numpy(D)
    dense = rng.standard_normal(D.shape)
    from_dense = ProjectTo(s)(dense)
    from_sparse = ProjectTo(s)(sparse.COO.from_numpy(dense))
    for got in (from_dense, from_sparse):
        assert isinstance(got, sparse.COO) and got.nnz == s.nnz
        np.testing.assert_allclose(got.todense(), _on_pattern(dense, D))
    assert ProjectTo(s)(ZeroTangent()) == ZeroTangent()
    # a dense primal's sparse tangent comes back dense
    assert type(ProjectTo(D)(sparse.COO.from_numpy(dense))) is np.ndarray


def test_building_a_scipy_sparse_matrix_from_traced_values_is_refused_by_name():
    rows, cols = np.array([0, 1, 2]), np.array([1, 0, 2])

    def f(vals):
        a = sp.csr_matrix((vals, (rows, cols)), shape=(3, 3))
        return np.sum(a @ np.ones(3))

    with pytest.raises(ad.TracerConversionError,
                       match=re.escape("converting a traced value to a NumPy array")):
        ad.grad(f)(np.array([1.0, 2.0, 3.0]))
