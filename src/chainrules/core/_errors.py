"""Exceptions raised by chainrules.

Every exception carries its facts as attributes (so tools can inspect them) and
builds a message that names what went wrong, what was expected, and how to fix it.
"""

from __future__ import annotations

from typing import Any


def describe(x: Any) -> str:
    """A short description of a value for error messages: type, and shape/dtype for arrays."""
    name = type(x).__qualname__
    # Only real arrays: a structural tangent answers any attribute with ZeroTangent().
    shape = getattr(x, "shape", None) if hasattr(type(x), "shape") else None
    dtype = getattr(x, "dtype", None) if hasattr(type(x), "dtype") else None
    if isinstance(shape, tuple) and dtype is not None:
        return f"{name}(shape={shape}, dtype={dtype})"
    return repr(type(x)) if name == "Tangent" else name


def func_name(f: Any) -> str:
    """A readable qualified name for a function, class or callable object."""
    owner = getattr(f, "__self__", None)
    if owner is not None and type(owner).__name__ == "ufunc":  # np.add.reduce
        return f"numpy.{owner.__name__}.{f.__name__}"
    objclass = getattr(f, "__objclass__", None)
    if objclass is not None:  # np.ndarray.sum
        return f"{_public_module(objclass.__module__)}.{objclass.__name__}.{f.__name__}"
    module = getattr(f, "__module__", None)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if name is None:
        return f"<{type(f).__qualname__} instance>"
    if module in (None, "builtins"):
        return name
    return f"{_public_module(module)}.{name}"


def _public_module(module: str) -> str:
    """numpy._core.fromnumeric -> numpy, _operator -> operator, scipy.special._basic ->
    scipy.special."""
    if module == "_operator":
        return "operator"
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and i > 0:
            return ".".join(parts[:i])
    return module


class ChainRulesError(Exception):
    """Base class of every error raised by chainrules."""


class RuleRegistrationError(ChainRulesError, TypeError):
    """A rule could not be registered as asked (bad target, bad annotation, bad config)."""


class AmbiguityError(ChainRulesError, TypeError):
    """Two or more registered signatures match a call equally well.

    Attributes:
        function: the function called.
        arg_types: the types of the positional arguments of the call.
        candidates: the matching signatures, none more specific than the others.
    """

    def __init__(self, table: str, function: Any, arg_types: tuple, candidates: list) -> None:
        self.table = table
        self.function = function
        self.arg_types = arg_types
        self.candidates = candidates
        got = ", ".join(t.__qualname__ for t in arg_types)
        lines = "\n".join(f"  - {c}" for c in candidates)
        super().__init__(
            f"{table} for {func_name(function)}({got}) is ambiguous: these registered signatures "
            f"all match and none is more specific than the others:\n{lines}\n"
            f"Register a rule for the exact signature ({got}) to break the tie."
        )


class TangentFieldError(ChainRulesError, AttributeError, TypeError):
    """A structural tangent was given a field that its primal type does not have."""

    def __init__(self, primal_type: type, field: Any, fields: tuple) -> None:
        self.primal_type = primal_type
        self.field = field
        self.fields = fields
        super().__init__(
            f"Tangent[{primal_type.__qualname__}] got field {field!r}, but "
            f"{primal_type.__qualname__} has fields {fields!r}. A tangent can only have the "
            f"fields of its primal; absent fields already read as ZeroTangent()."
        )


class TangentTypeMismatchError(ChainRulesError, TypeError):
    """Two structural tangents of different primal types were combined."""

    def __init__(self, op: str, a: Any, b: Any) -> None:
        self.op = op
        self.a = a
        self.b = b
        super().__init__(
            f"cannot {op} {type(a).__qualname__} and {type(b).__qualname__}: structural "
            f"tangents combine only when they describe the same primal type."
        )


class PrimalAdditionError(ChainRulesError, TypeError):
    """`primal + tangent` could not build a new primal."""

    def __init__(self, primal: Any, tangent: Any, reason: str) -> None:
        self.primal = primal
        self.tangent = tangent
        self.reason = reason
        cls = type(primal).__name__
        super().__init__(
            f"cannot add {type(tangent)!r} to a {cls}: {reason}. Define a constructor "
            f"{cls}(**fields) that accepts every field as a keyword argument, or define "
            f"{cls}.__add__ to handle a Tangent."
        )


class ProjectionError(ChainRulesError, ValueError):
    """A tangent does not fit the space of its primal (shape, type)."""

    def __init__(self, primal_desc: str, got: Any, reason: str) -> None:
        self.primal_desc = primal_desc
        self.got = got
        self.reason = reason
        super().__init__(
            f"cannot project {describe(got)} onto the tangent space of {primal_desc}: {reason}"
        )


class NotImplementedDerivativeError(ChainRulesError, NotImplementedError):
    """A `NotImplementedTangent` was used where its value matters."""

    def __init__(self, tangent: Any, op: str) -> None:
        self.tangent = tangent
        self.op = op
        super().__init__(
            f"cannot {op} a NotImplementedTangent ({tangent.info}; defined at {tangent.where}): "
            f"this derivative is not implemented, so its value is unknown."
        )


class MissingCapabilityError(ChainRulesError, TypeError):
    """A RuleConfig was asked to call back into AD in a mode it does not support."""

    def __init__(self, config: Any, method: str, feature: str) -> None:
        self.config = config
        self.method = method
        self.feature = feature
        cls = type(config).__qualname__
        super().__init__(
            f"{cls} cannot {method}: it does not define {cls}.{method}. An AD supporting this "
            f"declares the {feature} feature (class {cls}(RuleConfig, {feature})) and implements "
            f"{method}."
        )


class PullbackError(ChainRulesError, TypeError):
    """A rule returned something of the wrong form (checked in debug mode)."""


class OutArgumentError(ChainRulesError, TypeError):
    """A rule was called with an ``out=`` array (or a ``where=`` mask), which it cannot track.

    Attributes:
        function: the function called.
        argument: ``"out"`` or ``"where"``.
    """

    def __init__(self, function: Any, argument: str = "out") -> None:
        self.function = function
        self.argument = argument
        name = func_name(function)
        if argument == "where":
            why = (f"where= leaves the unselected elements of the result undefined. Call "
                   f"{name} without where= and select with np.where afterwards.")
        else:
            why = (f"writing into a preallocated array hides the result from "
                   f"differentiation. Call {name} without out= and assign the result.")
        super().__init__(f"the rule for {name} does not support {argument}=: {why}")


class InvalidTangentError(ChainRulesError, ValueError, TypeError):
    """A tangent or cotangent that cannot belong to its primal was passed to a rule.

    Raised by the pullbacks ``rrule`` returns (for ``y_bar``) and by ``frule`` (for the
    tangents in ``dargs``): a wrong shape, a complex tangent of a real primal, a field the
    primal lacks, ``None``, a string.

    Attributes:
        table: ``"rrule"`` or ``"frule"``.
        function: the function whose rule was called.
        rule: the rule's function (frule) or pullback (rrule).
        where: which tangent, e.g. ``"the tangent of argument 1"`` (with a path into a
            structure, e.g. ``"... of the output[1]"``).
        expected: what a tangent there must be.
        got: what was given.
    """

    def __init__(self, table: str, function: Any, rule: Any, where: str, expected: str,
                 got: Any, got_text: str | None = None) -> None:
        self.table = table
        self.function = function
        self.rule = rule
        self.where = where
        self.expected = expected
        self.got = got
        code = getattr(rule, "__code__", None)
        name = getattr(rule, "__qualname__", None)
        src = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
        rule_text = f" ({name}{src})" if name else ""
        given = got_text or ("None" if got is None else repr(got) if isinstance(got, str)
                             else describe(got))
        super().__init__(
            f"{table} for {func_name(function)}{rule_text}: {where} is {given}; expected "
            f"{expected}."
        )


class LazyArrayError(ChainRulesError, TypeError):
    """A rule that computes with NumPy met a lazy array (dask) it would compute eagerly.

    A dask array may be larger than memory: a NumPy rule would load it whole, so a rule
    with no array-API counterpart in the array's namespace refuses it by name.

    Attributes:
        rule: what refused (the function whose rule it is).
        array: a description of the array.

    Examples:
        >>> from chainrules.core import LazyArrayError
        >>> print(LazyArrayError("numpy.linalg.eigh", "a dask array of shape (3, 3)"))
        ... # doctest: +ELLIPSIS
        the rule for numpy.linalg.eigh computes with NumPy and would compute a dask array ...
    """

    def __init__(self, rule: str, array: str) -> None:
        self.rule = rule
        self.array = array
        super().__init__(
            f"the rule for {rule} computes with NumPy and would compute {array} eagerly "
            f"(whole, in memory); expected a function with an array-API rule that keeps it "
            f"lazy. To fix it, use the array's namespace (xp = array_namespace(x), whose "
            f"functions keep dask arrays lazy), or compute the array first (x.compute()) if "
            f"it fits in memory"
        )


class NoRuleError(ChainRulesError, TypeError):
    """A rule was required for a call, and none applies.

    ``rrule``/``frule`` themselves return ``None`` for such a call (the protocol ADs
    rely on to trace through instead); whoever *needs* a rule raises a subclass of
    this error, so ``except chainrules.NoRuleError`` catches every one of them:

    - `NoMatchingRuleError` (the testers, the reference AD): rules are registered for
      the function, but none matches the argument types;
    - ``chainrules.ad.NoRuleError``: the reference AD met a function it cannot trace
      into and that has no rule;
    - ``chainrules.interop.NoRuleError``: a bridge (JAX, PyTorch, autograd) needs the
      rule of a function that has none.

    Attributes:
        function: the function called.
        table: ``"rrule"`` or ``"frule"`` (the reference AD says ``"rule"`` where either
            would do).
        arg_types: the types of the positional arguments of the call.

    Examples:
        >>> import math
        >>> from chainrules import NoRuleError
        >>> e = NoRuleError(math.gamma, "rrule", (float,))
        >>> print(e)
        no rrule for math.gamma(float); expected a registered rrule for these argument types. ...
        >>> e.arg_types
        (<class 'float'>,)
    """

    def __init__(self, function: Any, table: str, arg_types: tuple,
                 message: str | None = None) -> None:
        self.function = function
        self.table = table
        self.arg_types = tuple(arg_types)
        if message is None:
            name = func_name(function)
            message = (
                f"no {table} for {name}({_type_names(arg_types)}); expected a registered "
                f"{table} for these argument types. Register one with "
                f"@chainrules.{table}.register({name})."
            )
        super().__init__(message)


def _type_names(arg_types: tuple) -> str:
    return ", ".join(getattr(t, "__qualname__", repr(t)) for t in arg_types)


class NoMatchingRuleError(NoRuleError):
    """Rules are registered for a function, but none matches the argument types of a call.

    ``rrule``/``frule`` themselves return ``None`` then (the protocol ADs rely on to
    trace through instead); the testers and the reference AD raise this error where
    a rule was required. A `NoRuleError`.

    Attributes:
        table: ``"rrule"`` or ``"frule"``.
        function: the function called.
        arg_types: the types of the positional arguments of the call.
        signatures: the registered signatures, as text.

    Examples:
        >>> import math
        >>> from chainrules import NoMatchingRuleError, NoRuleError
        >>> e = NoMatchingRuleError("rrule", math.sin, (str,), ["(x: float)"])
        >>> isinstance(e, NoRuleError)
        True
        >>> print(e)  # doctest: +ELLIPSIS
        no rrule for math.sin(str): rules are registered for math.sin, but none matches ...
    """

    def __init__(self, table: str, function: Any, arg_types: tuple, signatures: list) -> None:
        self.signatures = signatures
        got = _type_names(arg_types)
        lines = "\n".join(f"  - {s}" for s in signatures)
        super().__init__(
            function, table, arg_types,
            f"no {table} for {func_name(function)}({got}): rules are registered for "
            f"{func_name(function)}, but none matches these argument types. Registered "
            f"signatures:\n{lines}\nConvert the arguments to one of these types, or register "
            f"a rule for ({got})."
        )
