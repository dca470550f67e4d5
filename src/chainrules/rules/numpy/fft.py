"""Rules for ``numpy.fft``.

Covered with frule + rrule, for ``np.ndarray`` inputs (real or complex, float32
kept), with every form of ``n`` / ``s`` (padding or truncation), ``axis`` /
``axes`` and ``norm`` (``"backward"``, ``"ortho"``, ``"forward"``):
``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft``, ``fft2``, ``ifft2``,
``rfft2``, ``irfft2``, ``fftn``, ``ifftn``, ``rfftn``, ``irfftn``, and the
permutations ``fftshift`` and ``ifftshift``. ``out=`` is refused
(`OutArgumentError`). Also ``fftfreq(n, d)`` and
``rfftfreq(n, d)``: differentiable in the sample spacing ``d`` (``n`` is a count).

The rule builders and the adjoints (derived in their module's docstring) live in
``rules/numpy/_fft.py``, shared with ``scipy.fft`` (``rules/scipy/fft.py``).
"""

from __future__ import annotations

import numpy as np

from chainrules.rules.numpy import _fft

_fft.transform_rules(np.fft.fft, _fft.fft_adjoint, _fft.cook_1d)
_fft.transform_rules(np.fft.ifft, _fft.ifft_adjoint, _fft.cook_1d)
_fft.transform_rules(np.fft.rfft, _fft.rfft_adjoint, _fft.cook_1d)
_fft.transform_rules(np.fft.irfft, _fft.irfft_adjoint, _fft.cook_1d_inverse_real)
_fft.transform_rules(np.fft.hfft, _fft.hfft_adjoint, _fft.cook_1d_inverse_real)
_fft.transform_rules(np.fft.ihfft, _fft.ihfft_adjoint, _fft.cook_1d)
_fft.transform_rules(np.fft.fft2, _fft.fftn_adjoint, _fft.cook_nd)
_fft.transform_rules(np.fft.ifft2, _fft.ifftn_adjoint, _fft.cook_nd)
_fft.transform_rules(np.fft.fftn, _fft.fftn_adjoint, _fft.cook_nd)
_fft.transform_rules(np.fft.ifftn, _fft.ifftn_adjoint, _fft.cook_nd)
_fft.transform_rules(np.fft.rfft2, _fft.rfftn_adjoint, _fft.cook_nd)
_fft.transform_rules(np.fft.irfft2, _fft.irfftn_adjoint, _fft.cook_nd_inverse_real)
_fft.transform_rules(np.fft.rfftn, _fft.rfftn_adjoint, _fft.cook_nd)
_fft.transform_rules(np.fft.irfftn, _fft.irfftn_adjoint, _fft.cook_nd_inverse_real)

_fft.shift_rules(np.fft.fftshift, np.fft.ifftshift)
_fft.shift_rules(np.fft.ifftshift, np.fft.fftshift)

_fft.freq_rules(np.fft.fftfreq)
_fft.freq_rules(np.fft.rfftfreq)
