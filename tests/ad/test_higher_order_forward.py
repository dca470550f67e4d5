"""Forward rules of the higher-order functions, checked with the project's testers
(``frule_via_ad`` of the reference AD against finite differences)."""

import functools
import itertools

import numpy as np
import pytest

from chainrules import NoTangent, frule, rrule
from chainrules.ad import ADConfig
from chainrules.testing import test_frule, test_rrule

CONFIG = ADConfig()


def square_plus(a, x):
    return a * a + np.sin(x)


def cube(x):
    return x ** 3


def normalise(v):
    return v / np.sqrt(np.sum(v * v))


def head_and_sum(v):
    return np.array([v[0] * v[1], np.sum(v)])


def map_list(f, *xs):
    """``map`` as the rules return it: a list (an iterator cannot be differentiated)."""
    return list(map(f, *xs))


def accumulate_list(*args):
    return list(itertools.accumulate(*args))


# the rules under test of the list-returning wrappers
RULE_OF = {map_list: map, accumulate_list: itertools.accumulate}


def frule_with_config(config, dargs, f, *args, **kwargs):
    return frule(config, (dargs[0] if f not in RULE_OF else NoTangent(), *dargs[1:]),
                 RULE_OF.get(f, f), *args, **kwargs)


def rrule_with_config(config, f, *args, **kwargs):
    return rrule(config, RULE_OF.get(f, f), *args, **kwargs)


CASES = [
    ("map", map_list, (cube, [0.5, 1.5, -0.7])),
    ("map, two sequences", map_list, (square_plus, [0.5, 1.5], [0.2, -0.3])),
    ("reduce", functools.reduce, (square_plus, [0.5, 1.5, -0.2])),
    ("reduce, initial", functools.reduce, (square_plus, [0.5, 1.5], 0.3)),
    ("accumulate", accumulate_list, ([0.5, 1.5, -0.2],)),
    ("accumulate, func", accumulate_list, ([0.5, 1.5, -0.2], square_plus)),
    ("vectorize", np.vectorize(cube), (np.array([0.5, 1.5, -0.7]),)),
    ("apply_along_axis", np.apply_along_axis, (normalise, 1, np.array([[1.0, 2.0], [0.5, -1.0]]))),
    ("apply_along_axis, vector out", np.apply_along_axis,
     (head_and_sum, 0, np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]]))),
    ("piecewise", np.piecewise, (np.array([-1.5, 0.5, 2.0]),
                                 [np.array([True, False, False]),
                                  np.array([False, True, True])], [cube, np.sin])),
    ("piecewise, otherwise", np.piecewise, (np.array([-1.5, 0.5, 2.0]),
                                            [np.array([True, False, False])], [cube, 2.0])),
]


@pytest.mark.parametrize(("name", "f", "args"), CASES, ids=[c[0] for c in CASES])
def test_frule_matches_finite_differences(name, f, args):
    test_frule(f, *args, frule_f=frule_with_config, config=CONFIG)


@pytest.mark.parametrize(("name", "f", "args"), CASES, ids=[c[0] for c in CASES])
def test_rrule_matches_finite_differences(name, f, args):
    test_rrule(f, *args, rrule_f=rrule_with_config, config=CONFIG)
