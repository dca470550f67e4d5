"""Tests of the ``numpy.fft`` rules: the case table, plus what a table cannot express."""

from __future__ import annotations

import numpy as np
import pytest

import chainrules
from chainrules import NoTangent, OutArgumentError, Thunk, ZeroTangent, frule, rrule
from chainrules.testing.cases.numpy_fft import CASES
from chainrules.testing.pytest_plugin import catalog_params, check_case


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("numpy_fft"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


def test_case_names_are_unique():
    names = [c.display_name for c in CASES]
    assert len(names) == len(set(names))


FUNCTIONS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
             "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq",
             "rfftfreq"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_coverage(name):
    f = getattr(np.fft, name)
    assert chainrules.rrule.has_rules(f), f"no rrule for numpy.fft.{name}"
    assert chainrules.frule.has_rules(f), f"no frule for numpy.fft.{name}"


@pytest.mark.parametrize("name", FUNCTIONS[:14])
def test_out_argument_is_refused(name):
    f = getattr(np.fft, name)
    x = np.ones((4, 4))
    out = np.empty_like(f(x))
    with pytest.raises(OutArgumentError):
        rrule(f, x, out=out)
    with pytest.raises(OutArgumentError):
        frule((NoTangent(), np.ones((4, 4))), f, x, out=out)


def test_positional_parameters_get_no_tangent():
    x = np.arange(5.0)
    y, pullback = rrule(np.fft.fft, x, 4, 0, "ortho")
    bars = pullback(np.ones(4, dtype=complex))
    assert bars[0] == NoTangent() and bars[2:] == (NoTangent(),) * 3
    assert bars[1].dtype == np.float64


def test_real_input_gets_real_float32_cotangent():
    x = np.ones(6, dtype=np.float32)
    _, x_bar = rrule(np.fft.fft, x)[1](np.ones(6, dtype=np.complex64) * 1j)
    assert x_bar.dtype == np.float32


def test_irfft_discards_imaginary_parts_of_dc_and_nyquist():
    # the primal ignores Im X_0 and (even n) Im X_{n/2}: their gradient is exactly 0
    x = np.array([1.0 + 2.0j, 3.0 - 1.0j, 2.0 + 5.0j])
    _, x_bar = rrule(np.fft.irfft, x)[1](np.arange(4.0))
    assert x_bar[0].imag == 0.0 and x_bar[-1].imag == 0.0


def test_zero_and_thunk_cotangents_and_no_mutation():
    x = np.arange(6.0)
    y, pullback = rrule(np.fft.rfft, x)
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent())
    y_bar = np.ones_like(y)
    np.testing.assert_allclose(pullback(Thunk(lambda: y_bar))[1], pullback(y_bar)[1])
    np.testing.assert_array_equal(y_bar, np.ones_like(y))
    np.testing.assert_array_equal(x, np.arange(6.0))
    assert frule((NoTangent(), ZeroTangent()), np.fft.fft, x)[1] == ZeroTangent()


def test_fftfreq_count_gets_no_tangent():
    y, pullback = rrule(np.fft.fftfreq, 4)
    assert pullback(np.ones(4)) == (NoTangent(), NoTangent())
    y, pullback = rrule(np.fft.rfftfreq, 4, 0.5)
    assert pullback(np.ones(3))[1] == NoTangent()


@pytest.mark.parametrize(("f", "shape", "out"), [(np.fft.irfft, (4,), (6,)),
                                                 (np.fft.irfftn, (2, 3), (2, 4))])
def test_irfft_complex_cotangent_error(f, shape, out):
    _, pullback = rrule(f, np.ones(shape, complex))
    with pytest.raises(chainrules.InvalidTangentError,
                       match=r"y_bar of the output is ndarray\(shape=.*complex128\); expected a "
                             r"real array .* \(the primal is real\)"):
        pullback(np.ones(out) * 1j)
