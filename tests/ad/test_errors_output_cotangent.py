"""The pullback returned by vjp refuses a cotangent that does not fit the output."""

import re

import numpy as np
import pytest

from chainrules.ad import InputTypeError, vjp


def test_vjp_pullback_wrong_shape_error():
    _, pullback = vjp(lambda x: np.sin(x) * 2, np.ones(3))
    msg = "vjp pullback: the output cotangent y_bar: expected shape (3,) (the output's), got shape (2, 3)"
    with pytest.raises(InputTypeError, match=re.escape(msg)):
        pullback(np.ones((2, 3)))  # would broadcast and be summed silently
    with pytest.raises(InputTypeError, match=re.escape("got shape (1,)")):
        pullback(np.ones(1))


def test_vjp_pullback_complex_for_real_error():
    _, pullback = vjp(np.sin, np.ones(2))
    with pytest.raises(InputTypeError, match="a real cotangent for a real output"):
        pullback(np.ones(2) * 1j)


def test_vjp_pullback_right_cotangent():
    _, pullback = vjp(lambda x: np.sin(x) * 2, np.zeros(3))
    (x_bar,) = pullback(np.ones(3))
    np.testing.assert_allclose(x_bar, 2 * np.ones(3))
    _, pullback = vjp(lambda x: x * x, 3.0)
    assert pullback(1.0) == (6.0,)
