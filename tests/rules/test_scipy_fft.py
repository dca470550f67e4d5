"""Tests of the ``scipy.fft`` rules: the case table, plus what a table cannot express."""

from __future__ import annotations

import numpy as np
import pytest

sf = pytest.importorskip("scipy.fft")

from chainrules import NoTangent, frule, rrule  # noqa: E402
from chainrules.testing.cases.scipy_fft import CASES  # noqa: E402
from chainrules.testing.pytest_plugin import catalog_params, check_case  # noqa: E402


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("scipy_fft"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


def test_case_names_are_unique():
    names = [c.display_name for c in CASES]
    assert len(names) == len(set(names))


DIFFERENTIABLE = [
    "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
    "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftshift",
    "ifftshift", "fftfreq", "rfftfreq", "dct", "idct", "dst", "idst", "dctn", "idctn",
    "dstn", "idstn",
]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_coverage(name):
    f = getattr(sf, name)
    assert rrule.has_rules(f), f"no rrule for scipy.fft.{name}"
    assert frule.has_rules(f), f"no frule for scipy.fft.{name}"


@pytest.mark.parametrize("name", ["fft", "dct", "dstn", "irfft2"])
def test_overwrite_x_never_destroys_input_or_tangent(name):
    f = getattr(sf, name)
    x = np.arange(16.0).reshape(4, 4) + 1.0
    x_dot = np.ones((4, 4))
    y, y_dot = frule((NoTangent(), x_dot), f, x, overwrite_x=True)
    np.testing.assert_array_equal(x, np.arange(16.0).reshape(4, 4) + 1.0)
    np.testing.assert_array_equal(x_dot, np.ones((4, 4)))
    np.testing.assert_allclose(y, f(x.copy()))
    np.testing.assert_allclose(y_dot, frule((NoTangent(), x_dot), f, x)[1])
    y, pullback = rrule(f, x, overwrite_x=True)
    x_bar = pullback(np.ones_like(y))[1]
    np.testing.assert_array_equal(x, np.arange(16.0).reshape(4, 4) + 1.0)
    np.testing.assert_allclose(x_bar, rrule(f, x)[1](np.ones_like(y))[1])


def test_overwrite_x_positional_gets_no_tangent():
    x = np.arange(5.0)
    y, pullback = rrule(sf.dct, x, 2, None, -1, "ortho", True)
    bars = pullback(np.ones(5))
    assert bars[2:] == (NoTangent(),) * 5
    np.testing.assert_array_equal(x, np.arange(5.0))


def test_plan_is_refused_by_scipy():
    with pytest.raises(NotImplementedError, match="plan"):
        rrule(sf.fft, np.ones(4), plan=object())


def test_dct_ortho_pullback_is_the_inverse():
    # an orthogonal matrix's adjoint is its inverse: a cheap cross-check of the scalings
    x = np.random.default_rng(0).normal(size=7)
    for t in (1, 2, 3, 4):
        y, pullback = rrule(sf.dct, x, type=t, norm="ortho")
        np.testing.assert_allclose(pullback(y)[1], x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["next_fast_len", "prev_fast_len"])
def test_lengths_are_non_differentiable(name):
    f = getattr(sf, name)
    y, pullback = rrule(f, 7)
    assert pullback(1.0) == (NoTangent(), NoTangent())


@pytest.mark.parametrize("name", ["dct", "idst", "dctn"])
def test_non_default_orthogonalize_of_complex_input_error(name):
    from chainrules.rules.scipy._errors import UnsupportedOptionError

    f = getattr(sf, name)
    z = np.ones(4) + 1j
    match = "does not support orthogonalize=False: SciPy does not apply"
    with pytest.raises(UnsupportedOptionError, match=match):
        rrule(f, z, norm="ortho", orthogonalize=False)
    with pytest.raises(UnsupportedOptionError, match="orthogonalize=True"):
        frule((NoTangent(), z), f, z, orthogonalize=True)
    assert rrule(f, z, norm="ortho", orthogonalize=True) is not None  # the default is fine


def _dct_cubes(x):
    return np.sum(sf.dct(x, type=3, norm="ortho") ** 3)


def test_second_derivative_of_a_dct_through_the_ad():
    from chainrules import rrule_via_ad
    from chainrules.ad import ADConfig, grad
    from chainrules.testing import test_rrule

    def grad_loss(x):
        return grad(_dct_cubes)(x)

    test_rrule(grad_loss, np.arange(5.0) / 3 - 0.5, rrule_f=rrule_via_ad, config=ADConfig())
