"""numpy.random: samples carry no derivative, and never a silent zero one."""

import numpy as np
import pytest

from chainrules import NoTangent, NotImplementedTangent, frule, rrule
from chainrules.ad import grad

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("sample", [
    lambda: rrule(RNG.standard_normal, 3),
    lambda: rrule(RNG.random, (2, 2)),
    lambda: rrule(RNG.integers, 0, 10, 4),
    lambda: rrule(RNG.binomial, 5, 0.3),
    lambda: rrule(np.random.randint, 4),
    lambda: rrule(np.random.rand, 2),
])
def test_parameter_free_or_discrete_samples_give_no_tangent(sample):
    y, pullback = sample()
    bars = pullback(np.ones_like(np.asarray(y), dtype=float))
    assert all(type(b) is NoTangent for b in bars)


@pytest.mark.parametrize(("f", "args", "name"), [
    (RNG.normal, (1.0, 2.0), "Generator.normal"),
    (RNG.gamma, (np.array([1.0, 2.0]),), "Generator.gamma"),
    (np.random.normal, (1.0,), "RandomState.normal"),
    (np.random.uniform, (0.0, np.array([1.0, 2.0])), "RandomState.uniform"),
])
def test_floating_parameters_are_not_implemented_with_the_way_out(f, args, name):
    _, pullback = rrule(f, *args)
    bars = pullback(np.ones(np.shape(f(*args))))[1:]
    assert len(bars) == len(args)
    for b in bars:
        assert isinstance(b, NotImplementedTangent)
        assert name in b.info and "loc + scale * rng.standard_normal(size)" in b.info
    y, y_dot = frule((NoTangent(), *(np.ones_like(np.asarray(x)) for x in args)), f, *args)
    assert isinstance(y_dot, NotImplementedTangent)


def test_rearranging_an_array_says_to_index_instead():
    _, pullback = rrule(RNG.permutation, np.arange(3.0))
    (_, x_bar) = pullback(np.ones(3))
    assert isinstance(x_bar, NotImplementedTangent)
    assert "x[rng.permutation(len(x))]" in x_bar.info
    _, pullback = rrule(RNG.permutation, 5)  # an integer: a permutation of range(5)
    assert pullback(np.ones(5)) == (NoTangent(), NoTangent())


def reparametrised(mu):
    return np.sum(mu + RNG.standard_normal(3))


def sampled_with_parameter(mu):
    return np.sum(RNG.normal(mu, 1.0, 3))


def test_ad_through_a_reparametrised_sample():
    assert grad(reparametrised)(1.0) == pytest.approx(3.0)


def test_ad_refuses_the_pathwise_derivative_it_cannot_know():
    with pytest.raises(NotImplementedError, match=r"numpy\.random\.Generator\.normal"):
        grad(sampled_with_parameter)(1.0)
