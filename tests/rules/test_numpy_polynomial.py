"""NumPy's polynomial functions: the catalog rows, and the errors of the rules."""

import numpy as np
import pytest

from chainrules import NoTangent, frule, rrule
from chainrules.rules.numpy.polynomial import Poly1dArgumentError
from chainrules.testing import test_frule, test_rrule
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_polynomial"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode, seed=0)


@pytest.mark.parametrize("f", [np.polyadd, np.polysub, np.polymul, np.polydiv])
def test_poly1d_is_refused_by_name(f):
    with pytest.raises(Poly1dArgumentError, match=rf"numpy\.{f.__name__} takes coefficient "
                                                   r"arrays, not numpy\.poly1d.*p\.coeffs"):
        rrule(f, np.poly1d([1.0, 2.0]), np.array([1.0, 3.0]))


def test_poly_of_a_matrix_says_how():
    with pytest.raises(NotImplementedError, match=r"np\.poly\(np\.linalg\.eigvals\(A\)\)"):
        rrule(np.poly, np.eye(2))


def test_polyint_constant_passed_by_keyword_has_no_tangent():
    # keyword arguments carry no tangent: only p's is pushed forward
    p, k = np.array([1.0, 2.0]), np.array([3.0])
    y, y_dot = frule((NoTangent(), np.array([1.0, 0.0])), np.polyint, p, k=k)
    np.testing.assert_allclose(y_dot, np.polyint(np.array([1.0, 0.0])))


def test_roots_with_leading_zero_coefficient_move_to_first_order():
    # np.roots strips the zero leading coefficient, but a perturbation of it still moves
    # the remaining roots (and adds one far away): the rule keeps that first-order term
    p = np.array([0.0, 1.0, -3.0, 2.0])
    direction = np.array([1.0, 0.5, -0.25, 2.0])

    def near_roots(q):  # the roots that stay finite as q[0] -> 0, in ascending order
        z = np.real_if_close(np.roots(q))
        return np.sort(z[np.abs(z) < 10])

    z, z_dot = frule((NoTangent(), direction), np.roots, p)
    h = 1e-6
    central = (near_roots(p + h * direction) - near_roots(p - h * direction)) / (2 * h)
    np.testing.assert_allclose(np.asarray(z_dot)[np.argsort(z)], central, rtol=1e-5)


def test_roots_with_trailing_zero_coefficient():
    test_rrule(np.roots, np.array([1.0, -1.5, 0.0]))
    test_frule(np.roots, np.array([1.0, -1.5, 0.0]))
