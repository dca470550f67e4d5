"""Cases for the rules of ``scipy.sparse`` (``chainrules/rules/scipy/sparse.py``).

A sparse argument is perturbed through its stored entries only: its sparsity pattern
is part of the primal, as ``ProjectTo`` has it.
"""

from __future__ import annotations

import operator

import numpy as np

from chainrules.testing._cases import Case, arr

try:
    import scipy.sparse as sp
except ImportError:  # the rules exist only with SciPy
    CASES: list[Case] = []
else:
    RC = ("float64", "float32", "complex128")

    def sparse(rng, dtype, shape=(4, 3), fmt="csr", array=False, density=0.5):
        m = sp.random(*shape, density=density, format="coo", random_state=rng,
                      dtype=np.float64)
        data = m.data * 2 - 1
        if np.dtype(dtype).kind == "c":
            data = data + 1j * rng.uniform(-1, 1, size=data.shape)
        make = sp.coo_array if array else sp.coo_matrix
        return make((data.astype(dtype), (m.row, m.col)), shape=shape).asformat(fmt)

    def pattern(fmt, rng, dtype):
        template = sparse(rng, dtype, fmt=fmt)
        if fmt == "coo":
            return (template.data, (template.row, template.col))
        return (template.data, template.indices, template.indptr)

    CASES = [
        Case(operator.matmul, lambda rng, dt: (sparse(rng, dt), arr(rng, dt, (3,))),
             dtypes=RC, name="operator.matmul(csr_matrix, vector)"),
        Case(operator.matmul, lambda rng, dt: (sparse(rng, dt, fmt="csc", array=True),
                                               arr(rng, dt, (3, 2))),
             dtypes=RC, name="operator.matmul(csc_array, matrix)"),
        Case(operator.matmul, lambda rng, dt: (sparse(rng, dt, fmt="coo"), arr(rng, dt, (3,))),
             dtypes=RC, name="operator.matmul(coo_matrix, vector)"),
        Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (2, 4)), sparse(rng, dt)),
             dtypes=RC, name="operator.matmul(matrix, csr_matrix)"),
        Case(operator.matmul, lambda rng, dt: (arr(rng, dt, (4,)), sparse(rng, dt, array=True)),
             dtypes=RC, name="operator.matmul(vector, csr_array)"),
        Case(sp.csr_matrix.sum, lambda rng, dt: (sparse(rng, dt),), dtypes=RC,
             name="scipy.sparse.csr_matrix.sum"),
        Case(sp.csr_matrix.sum, lambda rng, dt: (sparse(rng, dt), 0), dtypes=RC,
             name="scipy.sparse.csr_matrix.sum(axis=0)"),
        Case(sp.coo_array.sum, lambda rng, dt: (sparse(rng, dt, fmt="coo", array=True), -1),
             dtypes=RC, name="scipy.sparse.coo_array.sum(axis=-1)"),
    ]
    for _cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix,
                 sp.csr_array, sp.csc_array, sp.coo_array):
        _fmt = _cls.__name__[:3]
        CASES.append(Case(_cls, lambda rng, dt, fmt=_fmt: (pattern(fmt, rng, dt),),
                          kwargs={"shape": (4, 3)}, dtypes=RC,
                          name=f"scipy.sparse.{_cls.__name__}(data, ...)"))
