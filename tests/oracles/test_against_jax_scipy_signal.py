"""Oracle check against JAX: scipy.signal convolutions and detrend, scipy.fft DCTs.

``jax.scipy.signal`` and ``jax.scipy.fft`` differentiate their own implementations;
ours come from the rules. Rows, checker and complex convention: ``_jax_table.py`` /
``_harness.py``; x64 mode comes from tests/oracles/conftest.py.
"""

from __future__ import annotations

import os
import sys

import pytest

pytest.importorskip("jax")
pytest.importorskip("scipy")
sys.path.insert(0, os.path.dirname(__file__))
import _jax_table as jt
import jax.scipy.fft as jsf
import jax.scipy.signal as jsig
import scipy.fft as sf
import scipy.signal as ss
from _harness import N, R

FC = ("f8", "c16")

SIGNAL = [
    R("convolve_full", ss.convolve, jsig.convolve, N(7), N(3), dtypes=FC),
    R("convolve_same_even", ss.convolve, jsig.convolve, N(6), N(4), kw=dict(mode="same"),
      dtypes=FC),
    R("convolve_valid_2d", ss.convolve, jsig.convolve, N(5, 4), N(2, 3),
      kw=dict(mode="valid"), dtypes=FC),
    R("correlate_full", ss.correlate, jsig.correlate, N(6), N(3), dtypes=FC),
    R("correlate_same_2d", ss.correlate, jsig.correlate, N(4, 5), N(3, 2),
      kw=dict(mode="same"), dtypes=FC),
    R("correlate_valid", ss.correlate, jsig.correlate, N(8), N(3), kw=dict(mode="valid"),
      dtypes=FC),
    R("fftconvolve_same", ss.fftconvolve, jsig.fftconvolve, N(9), N(4), kw=dict(mode="same"),
      dtypes=FC),
    R("fftconvolve_axes", ss.fftconvolve, jsig.fftconvolve, N(3, 7), N(3, 3),
      kw=dict(axes=1)),
    R("convolve2d_full", ss.convolve2d, jsig.convolve2d, N(4, 5), N(2, 3), dtypes=FC),
    R("convolve2d_same", ss.convolve2d, jsig.convolve2d, N(4, 5), N(3, 2),
      kw=dict(mode="same"), dtypes=FC),
    R("correlate2d_valid", ss.correlate2d, jsig.correlate2d, N(5, 4), N(2, 3),
      kw=dict(mode="valid"), dtypes=FC),
    R("correlate2d_full", ss.correlate2d, jsig.correlate2d, N(3, 4), N(2, 2), dtypes=FC),
    R("detrend_linear", ss.detrend, jsig.detrend, N(3, 8)),
    R("detrend_constant_axis0", ss.detrend, jsig.detrend, N(6, 3),
      kw=dict(axis=0, type="constant")),
    # the window named explicitly: SciPy's default name ("hann_periodic") is newer than JAX's
    R("stft", ss.stft, jsig.stft, N(2, 30), kw=dict(nperseg=8, window="hann")),
    R("stft_even", ss.stft, jsig.stft, N(30), kw=dict(nperseg=7, noverlap=3,
                                                      boundary="even", window="hann")),
    R("istft", ss.istft, jsig.istft, N(5, 9), kw=dict(window="hann"), dtypes=FC),
    R("istft_overlap", ss.istft, jsig.istft, N(4, 8), kw=dict(nperseg=6, noverlap=2,
                                                              window="hann"), dtypes=FC),
    R("welch", ss.welch, jsig.welch, N(2, 30), kw=dict(nperseg=8, window="hann")),
    R("welch_linear_nfft", ss.welch, jsig.welch, N(30), kw=dict(nperseg=8, nfft=10,
                                                               detrend="linear",
                                                               window="hann")),
]

# jax.scipy.fft has the type-2 transforms only
FFT = [
    R(f"{name}_{norm}", getattr(sf, name), getattr(jsf, name), N(*shape), kw=dict(norm=norm))
    for name, shape in (("dct", (7,)), ("idct", (6,)), ("dctn", (3, 4)), ("idctn", (4, 3)))
    for norm in (None, "ortho")
] + [
    R("dct_n_axis0", sf.dct, jsf.dct, N(5, 3), kw=dict(n=7, axis=0)),
    R("dctn_s", sf.dctn, jsf.dctn, N(3, 4), kw=dict(s=(5, 2), norm="ortho")),
]


@pytest.mark.parametrize(("row", "dt", "mode"), jt.params(SIGNAL + FFT, pytest))
def test_against_jax(row, dt, mode):
    jt.check(row, dt, mode)
