"""Tests of the ``scipy.signal`` rules: the case table, plus what a table cannot express."""

from __future__ import annotations

import re

import numpy as np
import pytest

ss = pytest.importorskip("scipy.signal")

from chainrules import (  # noqa: E402
    NoTangent,
    NotImplementedTangent,
    Thunk,
    ZeroTangent,
    frule,
    frule_via_ad,
    rrule,
    rrule_via_ad,
    unthunk,
)
from chainrules.ad import ADConfig, grad  # noqa: E402
from chainrules.rules.scipy._errors import UnsupportedOptionError  # noqa: E402
from chainrules.testing import test_frule, test_rrule  # noqa: E402
from chainrules.testing.cases.scipy_signal import CASES  # noqa: E402
from chainrules.testing.pytest_plugin import catalog_params, check_case  # noqa: E402


@pytest.mark.parametrize(("case", "dtype", "mode"), catalog_params("scipy_signal"))
def test_rule(case, dtype, mode):
    check_case(case, dtype, mode)


def test_case_names_are_unique():
    names = [c.display_name for c in CASES]
    assert len(names) == len(set(names))


COVERED = ["convolve", "correlate", "fftconvolve", "oaconvolve", "convolve2d", "correlate2d",
           "lfilter", "sosfilt", "detrend", "stft", "istft", "welch"]


@pytest.mark.parametrize("name", COVERED)
def test_coverage(name):
    f = getattr(ss, name)
    assert rrule.has_rules(f) and frule.has_rules(f), f"no rules for scipy.signal.{name}"


def sosfilt_of_free_coefficients(free, x):
    """sosfilt with the fixed ``sos[:, 3] == 1`` column put back: every input of this
    function can be perturbed, so the testers can check the ``sos`` cotangent."""
    ones = np.ones((free.shape[0], 1))
    return ss.sosfilt(np.concatenate([free[:, :3], ones, free[:, 3:]], axis=1), x)


@pytest.mark.parametrize("n", [9, 2])
def test_sosfilt_coefficients_through_the_ad(n):
    free = np.delete(ss.butter(4, 0.3, output="sos"), 3, axis=1)
    x = np.random.default_rng(0).normal(size=(2, n))
    test_rrule(sosfilt_of_free_coefficients, free, x, rrule_f=rrule_via_ad, config=ADConfig())
    test_frule(sosfilt_of_free_coefficients, free, x, frule_f=frule_via_ad, config=ADConfig())


def test_sosfilt_fixed_column_gets_zero_cotangent():
    sos = ss.butter(2, 0.3, output="sos")
    y, pullback = rrule(ss.sosfilt, sos, np.arange(5.0))
    sos_bar = pullback(np.ones(5))[1]
    assert np.all(sos_bar[:, 3] == 0.0) and np.any(sos_bar[:, 4:] != 0.0)


@pytest.mark.parametrize("f", [ss.convolve2d, ss.correlate2d])
def test_convolve2d_boundary_aliases(f):
    # SciPy's aliases reach the same extension as the names the catalog uses
    a, b = np.arange(12.0).reshape(3, 4), np.array([[1.0, -2.0], [0.5, 3.0]])
    y_bar = np.ones((4, 5))
    for name, alias in (("wrap", "circular"), ("symm", "symmetric"), ("fill", "pad")):
        ours = rrule(f, a, b, boundary=name)[1](y_bar)
        theirs = rrule(f, a, b, boundary=alias)[1](y_bar)
        for t, u in zip(ours[1:], theirs[1:]):
            np.testing.assert_allclose(unthunk(t), unthunk(u))


def test_lfilter_keyword_zi_gets_no_entry_and_positional_zi_a_cotangent():
    b, a, x, zi = np.array([1.0, 0.5]), np.array([1.0, -0.3]), np.arange(4.0), np.array([0.2])
    (y, zf), pullback = rrule(ss.lfilter, b, a, x, zi=zi)
    assert len(pullback((np.ones(4), np.ones(1)))) == 4
    _, pullback = rrule(ss.lfilter, b, a, x, -1, zi)
    bars = pullback((np.ones(4), ZeroTangent()))
    assert bars[4] == NoTangent() and bars[5].shape == (1,)


def test_zero_and_thunk_cotangents_and_no_mutation():
    a, b = np.arange(5.0), np.array([1.0, -1.0, 2.0])
    y, pullback = rrule(ss.convolve, a, b, mode="same")
    assert pullback(ZeroTangent()) == (NoTangent(), ZeroTangent(), ZeroTangent())
    y_bar = np.ones_like(y)
    bars = pullback(Thunk(lambda: y_bar))
    assert all(isinstance(t, Thunk) for t in bars[1:])
    np.testing.assert_array_equal(y_bar, np.ones_like(y))
    np.testing.assert_array_equal(a, np.arange(5.0))
    assert frule((NoTangent(), ZeroTangent(), ZeroTangent()), ss.convolve, a, b)[1] == \
        ZeroTangent()


def test_integer_inputs_get_no_tangent():
    y, pullback = rrule(ss.convolve, np.arange(4), np.array([1.0, 2.0]))
    bars = pullback(np.ones_like(y))
    assert bars[1] == NoTangent() and bars[2].dtype == np.float64


def test_detrend_overwrite_data_never_destroys_the_input():
    x = np.arange(6.0) ** 2
    y, pullback = rrule(ss.detrend, x, overwrite_data=True)
    pullback(np.ones(6))
    np.testing.assert_array_equal(x, np.arange(6.0) ** 2)


def test_second_derivative_of_a_convolution_through_the_ad():
    # d/da sum(convolve(a, a)**2) through the pullback's own (ruled) correlate calls
    def loss(a):
        return np.sum(ss.convolve(a, a, mode="same") ** 2)

    def grad_loss(a):
        return grad(loss)(a)

    a = np.array([0.3, -1.2, 0.8, 0.5])
    test_rrule(grad_loss, a, rrule_f=rrule_via_ad, config=ADConfig())


@pytest.mark.parametrize("f", [ss.stft, ss.welch])
def test_spectral_custom_detrend_error(f):
    x = np.arange(16.0)
    match = "does not support detrend=<function"
    with pytest.raises(UnsupportedOptionError, match=match):
        rrule(f, x, nperseg=8, detrend=lambda d: d)
    with pytest.raises(UnsupportedOptionError, match="the derivative of a custom detrend"):
        frule((NoTangent(), x), f, x, nperseg=8, detrend=lambda d: d)


def test_welch_median_error():
    x = np.arange(16.0)
    with pytest.raises(UnsupportedOptionError, match=re.escape("average='median'")):
        rrule(ss.welch, x, nperseg=8, average="median")


@pytest.mark.parametrize("f", [ss.stft, ss.welch])
def test_spectral_window_array_is_not_implemented(f):
    x = np.random.default_rng(0).normal(size=16)
    out, pullback = rrule(f, x, 1.0, np.hanning(8), nperseg=8)
    bars = pullback(tuple(np.ones_like(o) for o in out))
    assert isinstance(bars[3], NotImplementedTangent) and "window array" in bars[3].info
    assert bars[1].shape == (16,)


def test_spectral_check_refuses_a_mismatched_rebuild(monkeypatch):
    # the guard that turns a SciPy change in the segmentation into an error
    from chainrules.rules.scipy import signal_spectral

    monkeypatch.setattr(signal_spectral._Segments, "__init__", _shifted_init(
        signal_spectral._Segments.__init__))
    with pytest.raises(UnsupportedOptionError, match="rebuilt segment spectra do not match"):
        rrule(ss.stft, np.arange(20.0), nperseg=8)


def _shifted_init(init):
    def shifted(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.win = self.win[::-1] + 1.0

    return shifted


def test_discrete_outputs_are_non_differentiable():
    x = np.array([0.0, 2.0, 1.0, 3.0, 0.5])
    _, pullback = rrule(ss.argrelmax, x)
    assert pullback((np.zeros(2),)) == (NoTangent(), NoTangent())
    _, pullback = rrule(ss.correlation_lags, 5, 3)
    assert pullback(np.ones(7)) == (NoTangent(),) * 3
    assert frule((NoTangent(), NoTangent()), ss.unit_impulse, 4)[1] == NoTangent()


def test_list_inputs_get_list_cotangents():
    test_rrule(ss.convolve, [1.0, 2.0, 3.0], [0.5, -1.0])
    test_frule(ss.convolve, [1.0, 2.0, 3.0], [0.5, -1.0])
    test_rrule(ss.lfilter, [1.0, 0.5], [1.0, -0.3], [1.0, 2.0, 0.5, 1.5])
    test_rrule(ss.detrend, [1.0, 2.0, 0.5, 1.5])


def _lfilter_energy(x):
    return np.sum(ss.lfilter(np.array([1.0, 0.5]), np.array([1.0, -0.3]), x) ** 2)


def _stft_energy(x):
    return np.sum(np.abs(ss.stft(x, nperseg=4)[2]) ** 2)


def _wrapped_autocorrelation_energy(x):
    return np.sum(ss.correlate2d(x, x, mode="same", boundary="wrap") ** 2)


@pytest.mark.parametrize(("loss", "x"), [
    (_lfilter_energy, np.arange(5.0) / 3),
    (_stft_energy, np.cos(np.arange(8.0))),
    (_wrapped_autocorrelation_energy, np.cos(np.arange(9.0)).reshape(3, 3)),
], ids=["lfilter", "stft", "correlate2d-wrap"])
def test_second_derivatives_through_the_ad(loss, x):
    # the pullbacks call ruled functions only, so the AD differentiates them again
    def grad_loss(x):
        return grad(loss)(x)

    test_rrule(grad_loss, x, rrule_f=rrule_via_ad, config=ADConfig())


@pytest.mark.parametrize(("mode", "n", "before", "after"), [
    ("constant", 5, 2, 3), ("edge", 4, 3, 1), ("wrap", 3, 7, 4), ("symmetric", 3, 5, 8),
    ("reflect", 4, 6, 2), ("reflect", 1, 2, 2), ("odd", 5, 4, 2),
])
def test_extension_adjoint_is_the_adjoint_of_np_pad(mode, n, before, after):
    # the fold that replaces np.pad's pullback (an n x n matrix per axis) on long signals
    from chainrules.rules.scipy._padding import extension_adjoint as _extension_adjoint

    def extend(x):
        kwargs = {"mode": "reflect", "reflect_type": "odd"} if mode == "odd" else {"mode": mode}
        return np.pad(x, ((0, 0), (before, after)), **kwargs)

    rng = np.random.default_rng(1)
    x, e = rng.normal(size=(2, n)), rng.normal(size=(2, n + before + after))
    np.testing.assert_allclose(np.vdot(_extension_adjoint(e, n, before, mode), x),
                               np.vdot(e, extend(x)), rtol=1e-12)


def test_odd_extension_past_one_length_error():
    from chainrules.rules.scipy._padding import extension_adjoint as _extension_adjoint

    with pytest.raises(ValueError, match=re.escape("odd extension by 3 of a length-3 axis")):
        _extension_adjoint(np.ones(9), 3, 3, "odd")


def test_coverage_counts_the_lazy_signal_rules():
    # issue #29: in a fresh process the rules of scipy.signal are registered when it is
    # first imported; coverage counted before that (lfilter under "no rule" and under
    # "rules for callables that are not module attributes")
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "chainrules", "coverage", "scipy.signal",
                          "--json"], capture_output=True, text=True, env=env, timeout=300,
                         check=True)
    report = json.loads(out.stdout)
    assert "lfilter" in report["frule_and_rrule"] and "lfilter" not in report["no_rule"]
    assert report["check_counts"]["not_module_attributes"] == []


# ------------------------------------------------------------------------- savgol_filter
# issue 29: savgol_filter ended in a TracerConversionError inside ndimage.correlate1d


# (SciPy requires an odd window for mode='interp')
@pytest.mark.parametrize(("mode", "n", "window", "order", "deriv"), [
    (mode, *shape) for mode in ("interp", "mirror", "nearest", "wrap", "constant")
    for shape in ((9, 5, 2, 0), (30, 7, 3, 1), (80, 5, 2, 2), (40, 6, 2, 0))
    if mode != "interp" or shape[1] % 2])
def test_savgol_filter_rules(mode, n, window, order, deriv):
    x = np.random.default_rng(n).standard_normal(n)
    # delta and cval differentiated too (positional: the rules see them)
    test_rrule(ss.savgol_filter, x, window, order, deriv, 0.5, -1, mode, 0.3)
    test_frule(ss.savgol_filter, x, window, order, deriv, 0.5, -1, mode, 0.3)


def test_savgol_filter_axis_and_float32():
    x = np.random.default_rng(1).standard_normal((3, 40)).astype(np.float32)
    test_rrule(ss.savgol_filter, x, 5, 2, fkwargs={"axis": 1})
    test_rrule(ss.savgol_filter, x.T.copy(), 7, 2, fkwargs={"axis": 0, "mode": "wrap"})
    test_frule(ss.savgol_filter, x.T.copy(), 7, 2, fkwargs={"axis": 0, "mode": "wrap"})


def test_savgol_filter_in_a_program_against_finite_differences():
    t = np.linspace(0.0, 3.0, 60)

    def loss(p):
        signal = p[0] * np.sin(p[1] * t)
        smooth = ss.savgol_filter(signal, window_length=11, polyorder=3)
        return np.sum((smooth - np.cos(t)) ** 2)

    p = np.array([1.2, 0.9])
    eps = 1e-6
    fd = [(loss(p + e) - loss(p - e)) / (2 * eps) for e in np.eye(2) * eps]
    np.testing.assert_allclose(grad(loss)(p), fd, rtol=1e-6)
