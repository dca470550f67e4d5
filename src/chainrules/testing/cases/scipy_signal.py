"""Rule cases for ``scipy.signal``: convolutions and correlations in every mode and
method (odd and even lengths, the larger array second, n-D, 0-d, ``axes`` with
broadcasting, ``fillvalue``, the ``wrap`` and ``symm`` boundaries), ``lfilter`` in
``b``, ``a``, ``x`` and ``zi`` (with ``a[0] != 1``, short signals, ``axis``),
``sosfilt`` in ``x`` and ``zi`` (its ``sos`` in tests/rules/test_scipy_signal.py),
``detrend``, and ``stft`` / ``istft`` / ``welch`` (boundaries, padding, overlaps, ``nfft``,
detrending, scalings, two-sided spectra, ``fs``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from chainrules.testing import Case, arr, no_tangent

try:
    import scipy.signal as ss
except ImportError:  # pragma: no cover - SciPy is an optional extra
    ss = None

_ALL = ("float64", "float32", "complex128")
_DOUBLE = ("float64", "complex128")
_NS = "scipy.signal"


def _pair(sa: tuple, sb: tuple) -> Any:
    return lambda rng, dt: (arr(rng, dt, sa), arr(rng, dt, sb))


def _conv_cases() -> list[Case]:
    cases: list[Case] = []
    shapes = (((7,), (3,)), ((6,), (4,)), ((3,), (6,)), ((4, 5), (2, 3)), ((2, 3), (3, 4)))
    for f in (ss.convolve, ss.correlate):
        for sa, sb in shapes:
            for mode in ("full", "same", "valid"):
                if mode == "valid" and not (all(p >= q for p, q in zip(sa, sb))
                                            or all(p <= q for p, q in zip(sa, sb))):
                    continue
                methods = ("direct", "fft") if len(sa) == 1 else ("auto",)
                for method in methods:
                    cases.append(Case(f, _pair(sa, sb), kwargs={"mode": mode, "method": method},
                                      dtypes=_ALL,
                                      name=f"{_NS}.{f.__name__}({sa}*{sb}, {mode}, {method})"))
        cases += [
            Case(f, _pair((3, 2, 4), (2, 2, 3)), kwargs={"mode": "same"}, dtypes=_DOUBLE,
                 name=f"{_NS}.{f.__name__}(3-d, same)"),
            Case(f, _pair((), ()), dtypes=_ALL, name=f"{_NS}.{f.__name__}(0-d)"),
            Case(f, lambda rng, dt: (arr(rng, dt, (5,)), 0.5 + arr(rng, dt, (2,)), "valid"),
                 dtypes=_DOUBLE, name=f"{_NS}.{f.__name__}(positional mode)"),
        ]
    for f in (ss.fftconvolve, ss.oaconvolve):
        for mode in ("full", "same", "valid"):
            cases += [
                Case(f, _pair((9,), (4,)), kwargs={"mode": mode}, dtypes=_ALL,
                     name=f"{_NS}.{f.__name__}(1-d, {mode})"),
                Case(f, _pair((4, 5), (3, 2)), kwargs={"mode": mode}, dtypes=_DOUBLE,
                     name=f"{_NS}.{f.__name__}(2-d, {mode})"),
                Case(f, _pair((3, 1, 7), (1, 4, 3)), kwargs={"mode": mode, "axes": -1},
                     dtypes=_ALL, name=f"{_NS}.{f.__name__}(broadcast, axes=-1, {mode})"),
                Case(f, _pair((3, 5, 6), (3, 2, 3)), kwargs={"mode": mode, "axes": [2, 1]},
                     dtypes=_DOUBLE, name=f"{_NS}.{f.__name__}(axes=[2, 1], {mode})"),
            ]
    for f in (ss.convolve2d, ss.correlate2d):
        for sa, sb in (((5, 4), (2, 3)), ((4, 5), (3, 3)), ((2, 3), (4, 5))):
            for mode in ("full", "same", "valid"):
                cases.append(Case(f, _pair(sa, sb), kwargs={"mode": mode}, dtypes=_ALL,
                                  name=f"{_NS}.{f.__name__}({sa}*{sb}, {mode})"))
                cases.append(Case(f, _pair(sa, sb), kwargs={"mode": mode, "fillvalue": 1.5},
                                  dtypes=_DOUBLE,
                                  name=f"{_NS}.{f.__name__}({sa}*{sb}, {mode}, fillvalue)"))
            for boundary in ("wrap", "symm"):
                for mode in ("full", "same"):
                    cases.append(Case(f, _pair(sa, sb), kwargs={"mode": mode,
                                                                 "boundary": boundary},
                                      dtypes=_ALL if mode == "same" else _DOUBLE,
                                      name=f"{_NS}.{f.__name__}({sa}*{sb}, {mode}, {boundary})"))
        cases.append(Case(f, _pair((4, 4), (2, 2)), kwargs={"fillvalue": 0.5 - 1.0j},
                          dtypes=("complex128",), name=f"{_NS}.{f.__name__}(complex fillvalue)"))
    return cases


def _coefficients(rng: Any, dt: Any, m: int, a0: float = 1.0) -> Any:
    """Filter denominators with small tails: poles well inside the unit circle."""
    a = arr(rng, dt, (m,), low=-0.3, high=0.3)
    return np.concatenate([np.asarray([a0], dtype=a.dtype), a[1:]])


def _lfilter(nb: int, na: int, shape: tuple, a0: float = 1.0, zi: bool = False,
             axis: int = -1) -> Any:
    def args(rng: Any, dt: Any) -> tuple:
        b = arr(rng, dt, (nb,))
        a = _coefficients(rng, dt, na, a0)
        x = arr(rng, dt, shape)
        if not zi:
            return (b, a, x) if axis == -1 else (b, a, x, axis)
        state = list(shape)
        state[axis] = max(na, nb) - 1
        return b, a, x, axis, arr(rng, dt, tuple(state))

    return args


def _filter_cases() -> list[Case]:
    f = ss.lfilter
    cases = [
        Case(f, _lfilter(3, 2, (8,)), dtypes=_ALL, name=f"{_NS}.lfilter(b 3, a 2)"),
        Case(f, _lfilter(2, 4, (3, 7)), dtypes=_ALL, name=f"{_NS}.lfilter(b 2, a 4, 2-d)"),
        Case(f, _lfilter(3, 3, (6, 2), axis=0), dtypes=_ALL, name=f"{_NS}.lfilter(axis=0)"),
        Case(f, _lfilter(4, 1, (7,), a0=2.0), dtypes=_ALL, name=f"{_NS}.lfilter(FIR, a0=2)"),
        Case(f, _lfilter(3, 3, (9,), a0=1.7), dtypes=_ALL, name=f"{_NS}.lfilter(a0=1.7)"),
        Case(f, _lfilter(1, 1, (5,), a0=0.5), dtypes=_DOUBLE, name=f"{_NS}.lfilter(gain)"),
        Case(f, _lfilter(3, 2, (2, 8), zi=True), dtypes=_ALL, name=f"{_NS}.lfilter(zi)"),
        Case(f, _lfilter(2, 4, (7, 2), zi=True, axis=0, a0=1.5), dtypes=_ALL,
             name=f"{_NS}.lfilter(zi, axis=0, a0=1.5)"),
        Case(f, _lfilter(5, 3, (2,), zi=True, a0=1.2), dtypes=_DOUBLE,
             name=f"{_NS}.lfilter(zi, signal shorter than the state)"),
        Case(f, lambda rng, dt: (arr(rng, dt, (3,)), _coefficients(rng, dt, 3),
                                 arr(rng, dt, (6,))),
             kwargs={"zi": np.array([0.3, -0.2])}, dtypes=("float64",),
             name=f"{_NS}.lfilter(keyword zi)"),
    ]

    def sos_args(n: int, zi: bool, axis: int = -1) -> Any:
        def args(rng: Any, dt: Any) -> tuple:
            sos = ss.butter(4, 0.3, output="sos").astype(dt)
            shape = (2, n) if axis == -1 else (n, 2)
            x = arr(rng, dt, shape)
            if not zi:
                return no_tangent(sos), x
            state = (2, 2, 2)
            return no_tangent(sos), x, axis, arr(rng, dt, state)

        return args

    g = ss.sosfilt
    cases += [
        Case(g, sos_args(9, False), dtypes=_ALL, name=f"{_NS}.sosfilt(x)"),
        Case(g, sos_args(9, True), dtypes=_ALL, name=f"{_NS}.sosfilt(x, zi)"),
        Case(g, sos_args(7, True, 0), dtypes=_DOUBLE, name=f"{_NS}.sosfilt(axis=0, zi)"),
        Case(g, sos_args(1, True), dtypes=_DOUBLE, name=f"{_NS}.sosfilt(one sample, zi)"),
    ]
    return cases


def _detrend_cases() -> list[Case]:
    f = ss.detrend
    return [
        Case(f, lambda rng, dt: (arr(rng, dt, (9,)),), dtypes=_ALL, name=f"{_NS}.detrend"),
        Case(f, lambda rng, dt: (arr(rng, dt, (4, 6)),), kwargs={"type": "constant"},
             dtypes=_ALL, name=f"{_NS}.detrend(constant)"),
        Case(f, lambda rng, dt: (arr(rng, dt, (7, 3)),), kwargs={"axis": 0}, dtypes=_ALL,
             name=f"{_NS}.detrend(axis=0)"),
        Case(f, lambda rng, dt: (arr(rng, dt, (12,)),), kwargs={"bp": [4, 8]}, dtypes=_ALL,
             name=f"{_NS}.detrend(bp=[4, 8])"),
        Case(f, lambda rng, dt: (arr(rng, dt, (3, 5)), 0, "constant"), dtypes=_DOUBLE,
             name=f"{_NS}.detrend(positional)"),
    ]


def _spectral_cases() -> list[Case]:
    cases: list[Case] = []

    def signal(shape: tuple, fs: bool = False) -> Any:
        def args(rng: Any, dt: Any) -> tuple:
            x = arr(rng, dt, shape)
            return (x, float(rng.uniform(0.5, 3.0))) if fs else (x,)

        return args

    for f, variants in (
        (ss.stft, ({"nperseg": 8}, {"nperseg": 8, "boundary": "even"},
                   {"nperseg": 7, "noverlap": 3, "boundary": "odd", "nfft": 10},
                   {"nperseg": 8, "boundary": "constant", "padded": False},
                   {"nperseg": 6, "boundary": None, "detrend": "linear", "scaling": "psd"},
                   {"nperseg": 4, "noverlap": 0, "detrend": "constant"},
                   {"nperseg": 8, "return_onesided": False})),
        (ss.welch, ({"nperseg": 8}, {"nperseg": 7, "noverlap": 3, "nfft": 10},
                    {"nperseg": 8, "scaling": "spectrum", "detrend": "linear"},
                    {"nperseg": 6, "detrend": False, "nfft": 9},
                    {"nperseg": 8, "return_onesided": False})),
    ):
        for kw in variants:
            tag = ", ".join(f"{k}={v}" for k, v in kw.items())
            dtypes = _ALL if kw.get("return_onesided") is False else ("float64", "float32")
            cases.append(Case(f, signal((2, 30)), kwargs=kw, dtypes=dtypes,
                              name=f"{_NS}.{f.__name__}({tag})"))
        cases += [
            Case(f, signal((25, 2)), kwargs={"nperseg": 5, "noverlap": 1, "axis": 0},
                 dtypes=("float64",), name=f"{_NS}.{f.__name__}(axis=0)"),
            Case(f, signal((20,), fs=True), kwargs={"nperseg": 8}, dtypes=("float64",),
                 name=f"{_NS}.{f.__name__}(fs positional)"),
            Case(f, signal((20,), fs=True),
                 kwargs={"nperseg": 8, "scaling": "psd" if f is ss.stft else "density"},
                 dtypes=("float64",), name=f"{_NS}.{f.__name__}(fs positional, density)"),
        ]
    for kw, shape in (({}, (5, 9)), ({}, (2, 5, 9)), ({"nperseg": 7, "noverlap": 3}, (4, 8)),
                      ({"scaling": "psd"}, (5, 9)), ({"nperseg": 8, "nfft": 10}, (5, 9)),
                      ({"input_onesided": False}, (8, 9)),
                      ({"time_axis": 0, "freq_axis": 1}, (9, 5)),
                      ({"freq_axis": 0, "time_axis": 2}, (5, 3, 9)),
                      ({"boundary": False, "window": "hamming"}, (5, 9))):
        tag = ", ".join(f"{k}={v}" for k, v in kw.items()) or "default"
        cases.append(Case(ss.istft, lambda rng, dt, shape=shape: (arr(rng, dt, shape),),
                          kwargs=kw, dtypes=("complex128", "complex64", "float64"),
                          name=f"{_NS}.istft({tag}, {shape})"))
    cases.append(Case(ss.istft, signal((5, 9), fs=True), kwargs={"scaling": "psd"},
                      dtypes=("float64", "complex128"),
                      name=f"{_NS}.istft(fs positional, psd)"))
    return cases


CASES: list[Case] = [] if ss is None else [*_conv_cases(), *_filter_cases(),
                                            *_detrend_cases(), *_spectral_cases()]
