"""Rule cases for ``scipy.fft``: the ``numpy.fft`` twins with the rows of
``numpy_fft`` (n / s, axes, norms, odd and even lengths, single precision), the
SciPy-only ``hfft2`` / ``hfftn`` / ``ihfft2`` / ``ihfftn``, ``workers`` and
``overwrite_x=True`` (the tester checks the input is not overwritten), and the
DCT / DST family over every type, norm and ``orthogonalize``."""

from __future__ import annotations

from typing import Any

from chainrules.testing import Case, arr
from chainrules.testing.cases.numpy_fft import n_d_cases, one_d_cases

try:
    import scipy.fft as sf
except ImportError:  # pragma: no cover - SciPy is an optional extra
    sf = None

_ALL = ("float64", "float32", "complex128")
_REAL = ("float64", "float32")
_NS = "scipy.fft"


def _a(shape: tuple) -> Any:
    return lambda rng, dt: (arr(rng, dt, shape),)


def _extras(f: Any, dtypes: tuple, shape: tuple = (4, 6)) -> list[Case]:
    # no overwrite_x=True rows: the primal itself may overwrite its input, which the
    # tester reports; tests/rules/test_scipy_fft.py checks that the rules do not
    return [Case(f, _a(shape), kwargs={"workers": 2}, dtypes=dtypes,
                 name=f"{_NS}.{f.__name__}(workers=2)")]


def _fft_cases() -> list[Case]:
    cases: list[Case] = []
    for name, dtypes in (("fft", _ALL), ("ifft", _ALL), ("rfft", _REAL), ("irfft", _ALL),
                         ("hfft", _ALL), ("ihfft", _REAL)):
        f = getattr(sf, name)
        cases += one_d_cases(f, dtypes, ns=_NS) + _extras(f, dtypes)
    for name, dtypes, default_axes in (
            ("fft2", _ALL, True), ("ifft2", _ALL, True), ("rfft2", _REAL, True),
            ("irfft2", _ALL, True), ("hfft2", _ALL, True), ("ihfft2", _REAL, True),
            ("fftn", _ALL, False), ("ifftn", _ALL, False), ("rfftn", _REAL, False),
            ("irfftn", _ALL, False), ("hfftn", _ALL, False), ("ihfftn", _REAL, False)):
        f = getattr(sf, name)
        cases += n_d_cases(f, dtypes, default_axes, ns=_NS) + _extras(f, dtypes)
    cases += [
        Case(sf.fftshift, _a((5,)), dtypes=_ALL),
        Case(sf.fftshift, _a((3, 4)), kwargs={"axes": 0}, dtypes=_ALL,
             name="scipy.fft.fftshift(axes=0)"),
        Case(sf.ifftshift, _a((4, 5)), dtypes=_ALL),
        Case(sf.fftfreq, lambda rng, dt: (5, float(rng.uniform(0.2, 2.0))), dtypes=("float64",)),
        Case(sf.rfftfreq, lambda rng, dt: (6, float(rng.uniform(0.2, 2.0))),
             dtypes=("float64",)),
    ]
    return cases


def _trig_cases() -> list[Case]:
    cases: list[Case] = []
    for name in ("dct", "idct", "dst", "idst"):
        f = getattr(sf, name)
        fn = getattr(sf, name + "n")
        tag = f"{_NS}.{name}"
        for t in (1, 2, 3, 4):
            for norm in (None, "ortho", "forward", "backward"):
                cases.append(Case(f, _a((5,)), kwargs={"type": t, "norm": norm}, dtypes=_ALL,
                                  name=f"{tag}(type={t}, norm={norm}, odd)"))
            for orth in (True, False):  # the non-default orthogonalize of each norm
                norm = "backward" if orth else "ortho"
                cases.append(Case(f, _a((6,)),
                                  kwargs={"type": t, "norm": norm, "orthogonalize": orth},
                                  dtypes=_REAL,  # SciPy ignores it for complex inputs
                                  name=f"{tag}(type={t}, norm={norm}, orthogonalize={orth})"))
            cases += [
                Case(f, _a((3, 6)), kwargs={"type": t, "n": 4, "axis": 1}, dtypes=_ALL,
                     name=f"{tag}(type={t}, n=4 truncates)"),
                Case(f, _a((5, 3)), kwargs={"type": t, "n": 8, "axis": 0, "norm": "ortho"},
                     dtypes=_ALL, name=f"{tag}(type={t}, n=8 pads, axis=0, ortho)"),
                Case(f, lambda rng, dt, t=t: (arr(rng, dt, (4, 6)), t, None, 0, "forward"),
                     dtypes=_REAL, name=f"{tag}(type={t}, positional)"),
                Case(fn, _a((3, 4)), kwargs={"type": t}, dtypes=_ALL,
                     name=f"{tag}n(type={t})"),
                Case(fn, _a((2, 3, 4)), kwargs={"type": t, "axes": (0, 2), "norm": "ortho"},
                     dtypes=_ALL, name=f"{tag}n(type={t}, axes=(0, 2), ortho)"),
                Case(fn, _a((3, 4)), kwargs={"type": t, "s": (5, 3), "norm": "forward"},
                     dtypes=_ALL, name=f"{tag}n(type={t}, s=(5, 3), forward)"),
            ]
        cases += [
            Case(f, _a((6,)), kwargs={"workers": 2}, dtypes=_ALL, name=f"{tag}(workers=2)"),
            Case(f, _a((6,)), dtypes=("float32",), name=f"{tag}(float32 kept)"),
            Case(f, _a((0, 4)), dtypes=_REAL, name=f"{tag}(empty batch)"),
            Case(fn, _a((3, 4)), kwargs={"workers": 2}, dtypes=_REAL, name=f"{tag}n(workers=2)"),
        ]
    return cases


CASES: list[Case] = [] if sf is None else [*_fft_cases(), *_trig_cases()]
