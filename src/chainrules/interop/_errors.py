"""Exceptions raised by the bridges.

Each carries its facts as attributes and builds a message that names the bridge,
the function, the argument, what was expected and what was got, and how to fix it.
"""

from __future__ import annotations

from typing import Any

from chainrules.core._errors import ChainRulesError, func_name
from chainrules.core._errors import NoRuleError as _CoreNoRuleError
from chainrules.core._errors import describe as _core_describe

__all__ = [
    "FrameworkNotInstalledError",
    "NoRuleError",
    "NumPyOnlyRuleError",
    "ResultShapeError",
    "TangentConversionError",
    "UnsupportedTransformError",
]


def describe(x: Any) -> str:
    """Type (with shape and dtype for arrays); ``Tangent[P]`` for structural tangents."""
    from chainrules.core import AbstractTangent

    if isinstance(x, AbstractTangent):
        # not the core's describe: a Tangent reads absent fields such as .shape as zeros
        return repr(type(x))
    return _core_describe(x)


class FrameworkNotInstalledError(ChainRulesError, ImportError):
    """A bridge was used but its framework (jax, torch, autograd) cannot be imported.

    Attributes:
        framework: the module that could not be imported, e.g. ``"jax"``.
        extra: the chainrules extra that installs it, e.g. ``"jax"``.

    Examples:
        >>> from chainrules.interop import FrameworkNotInstalledError
        >>> print(FrameworkNotInstalledError("jax", "jax"))
        chainrules.interop.jax needs jax, which cannot be imported. Install it with: ...
    """

    def __init__(self, framework: str, extra: str, cause: BaseException | None = None) -> None:
        self.framework = framework
        self.extra = extra
        reason = f" ({cause})" if cause is not None else ""
        super().__init__(
            f"chainrules.interop.{extra} needs {framework}, which cannot be imported{reason}. "
            f"Install it with: pip install 'chainrules[{extra}]'"
        )


class NoRuleError(_CoreNoRuleError):
    """A bridged function was called with arguments for which no rule is registered.

    A ``chainrules.NoRuleError`` (as the reference AD's one is): ``except
    chainrules.NoRuleError`` catches both.

    Attributes:
        bridge: the bridge's name, e.g. ``"jax_function"``.
        function: the function that has no rule.
        kind: ``"rrule"`` or ``"frule"``; also ``table``.
        arg_types: the types of the positional arguments of the call.

    Examples:
        >>> import numpy as np
        >>> from chainrules.interop import NoRuleError
        >>> print(NoRuleError("torch_function", np.sinc, "rrule", (np.ndarray,), "a gradient"))
        torch_function(numpy.sinc): no rrule is registered for numpy.sinc(ndarray), and ...
    """

    def __init__(self, bridge: str, function: Any, kind: str, arg_types: tuple,
                 needed_for: str, hint: str = "") -> None:
        self.bridge = bridge
        self.kind = kind
        self.hint = hint
        name = func_name(function)
        got = ", ".join(t.__qualname__ for t in arg_types)
        if hint:
            # rules exist: the call's form, not the registry, is what to fix
            message = (f"{bridge}({name}): no {kind} of {name} applies to the call "
                       f"{name}({got}), and {needed_for} needs one. {hint}")
        else:
            message = (
                f"{bridge}({name}): no {kind} is registered for {name}({got}), and "
                f"{needed_for} needs one. Register it with @chainrules.{kind}.register({name}) "
                f"(or chainrules.scalar_rule for a scalar function), or check the argument "
                f"types.")
        super().__init__(function, kind, arg_types, message)


class TangentConversionError(ChainRulesError, TypeError):
    """A rule returned a tangent that the framework cannot take for that argument.

    Attributes:
        bridge: the bridge's name.
        function: the function whose rule returned the tangent.
        position: 1-based position of the argument (0 for an output).
        path: where inside a structured argument, e.g. ``"['w']"`` (empty at top level).
        primal: the primal (leaf) the tangent was for.
        got: the offending tangent.

    Examples:
        >>> import numpy as np
        >>> from chainrules.interop import TangentConversionError
        >>> print(TangentConversionError("jax_function", np.sin, "argument", 1, "", np.ones(2),
        ...                              "oops", "not a number"))
        jax_function(numpy.sin): cannot convert the tangent for argument 1: expected ...
        got str; not a number. ...
    """

    def __init__(self, bridge: str, function: Any, what: str, position: int, path: str,
                 primal: Any, got: Any, reason: str) -> None:
        self.bridge = bridge
        self.function = function
        self.position = position
        self.path = path
        self.primal = primal
        self.got = got
        where = f"{what} {position}{path}" if position else f"{what}{path}"
        super().__init__(
            f"{bridge}({func_name(function)}): cannot convert the tangent for {where}: "
            f"expected a tangent of {describe(primal)}, got {describe(got)}; {reason}. "
            f"Fix the rule so that it returns a tangent of the primal's type "
            f"(wrapping it in ProjectTo(x) does this for arrays), or ZeroTangent()/NoTangent()."
        )


class UnsupportedTransformError(ChainRulesError, NotImplementedError):
    """A framework transformation that this bridge cannot support was applied.

    Attributes:
        bridge: the bridge's name.
        function: the bridged function.
        transform: what was asked, e.g. ``"jax.jvp"``.

    Examples:
        >>> import numpy as np
        >>> from chainrules.interop import UnsupportedTransformError
        >>> print(UnsupportedTransformError("jax_function", np.sin, "jax.jvp", "no frule",
        ...                                 "Register one."))
        jax_function(numpy.sin) does not support jax.jvp: no frule. Register one.
    """

    def __init__(self, bridge: str, function: Any, transform: str, reason: str,
                 fix: str) -> None:
        self.bridge = bridge
        self.function = function
        self.transform = transform
        super().__init__(
            f"{bridge}({func_name(function)}) does not support {transform}: {reason}. {fix}"
        )


class ResultShapeError(ChainRulesError, ValueError):
    """The shape and dtype of a bridged function's result could not be determined for tracing.

    Attributes:
        bridge: the bridge's name.
        function: the bridged function.

    Examples:
        >>> import numpy as np
        >>> from chainrules.interop import ResultShapeError
        >>> print(ResultShapeError("jax_function", np.sin, "ValueError: bad input"))
        jax_function(numpy.sin): under jax.jit the result's shape and dtype are needed ...
    """

    def __init__(self, bridge: str, function: Any, reason: str) -> None:
        self.bridge = bridge
        self.function = function
        super().__init__(
            f"{bridge}({func_name(function)}): under jax.jit the result's shape and dtype are "
            f"needed before {func_name(function)} runs, and probing it on example inputs "
            f"failed: {reason}. Pass result_shape= (a pytree of jax.ShapeDtypeStruct, or a "
            f"function of the arguments' ShapeDtypeStructs returning one)."
        )


class NumPyOnlyRuleError(ChainRulesError, TypeError):
    """``backend="native"`` met a function or rule that only works on NumPy arrays.

    The native paths run the function and its rules on the framework's own values: JAX
    tracers, which a NumPy call (``np.asarray``, a NumPy ufunc or linalg routine,
    ``float()`` or an ``if`` on an array) cannot take; PyTorch tensors, which NumPy
    turns into arrays (or fails to, for tensors that require grad or live under
    ``torch.func``), so PyTorch would lose track of them. The native path refuses
    either instead of silently dropping derivatives. Built by `on_tracers` (JAX) and
    `on_tensors` (PyTorch), which fill the attributes that apply.

    Attributes:
        bridge: the bridge's name.
        function: the bridged function.
        stage: what was running (JAX): ``"the function itself"``, ``"its frule"``,
            ``"its rrule"`` or ``"its rrule's pullback"``; ``filename``, ``lineno`` and
            ``source``: the innermost line of user code that was running; ``cause``: the
            name of JAX's exception, e.g. ``"TracerArrayConversionError"``;
            ``alternative``: JAX's own version of the function, if there is one.
        what: what returned the NumPy value (PyTorch), e.g. ``"rrule's pullback"``;
            ``where``: which output or argument it was for, e.g. ``"argument 1"``;
            ``got``: the offending value (or the exception NumPy raised).

    Examples:
        >>> import numpy as np
        >>> from chainrules.interop import NumPyOnlyRuleError
        >>> print(NumPyOnlyRuleError.on_tracers("jax_function", np.sin, "its rrule", "rules.py",
        ...                                     7, "s = np.sin(x)", "TracerArrayConversionError"))
        jax_function(numpy.sin): backend='native' runs numpy.sin and its rules on JAX ...
        >>> print(NumPyOnlyRuleError.on_tensors("torch_function", np.sin, "rrule", "output",
        ...                                     np.ones(2)))
        torch_function(numpy.sin, backend="native"): the rrule returned ndarray(...) for ...
    """

    stage = filename = source = cause = what = where = alternative = None
    lineno: int | None = None
    got: Any = None

    def __init__(self, bridge: str, function: Any, message: str) -> None:
        self.bridge = bridge
        self.function = function
        super().__init__(message)

    @classmethod
    def on_tracers(cls, bridge: str, function: Any, stage: str, filename: str, lineno: int,
                   source: str, cause: str,
                   alternative: str | None = None) -> NumPyOnlyRuleError:
        name = func_name(function)
        if alternative is not None:
            fix = (f"Use {alternative}, JAX's own version of {name}, which every JAX "
                   f"transformation handles; or {bridge}({name}, backend='callback') (or "
                   f"'auto', which picks it).")
        else:
            fix = (f"Use {bridge}({name}, backend='callback') (or 'auto', which picks it), "
                   f"or write it with xp = chainrules.array_namespace(x) and xp.* calls.")
        if filename == "<unknown>":
            # no frame of user code: the function is NumPy's or SciPy's own (compiled)
            at = f"{name} is a NumPy/SciPy routine, which needs a concrete array ({cause})"
        else:
            at = f"{filename}:{lineno} `{source}` needs a concrete array ({cause})"
        error = cls(
            bridge, function,
            f"{bridge}({name}): backend='native' runs {name} and its rules on JAX tracers, "
            f"but {stage} is NumPy-only: {at}. {fix}")
        error.stage, error.filename, error.lineno = stage, filename, lineno
        error.source, error.cause = source, cause
        error.alternative = alternative
        return error

    @classmethod
    def on_tensors(cls, bridge: str, function: Any, what: str, where: str,
                   got: Any) -> NumPyOnlyRuleError:
        name = func_name(function)
        got_text = (f"raised {type(got).__qualname__}: {got}" if isinstance(got, BaseException)
                    else f"returned {describe(got)} for {where}, where a torch.Tensor was due")
        error = cls(
            bridge, function,
            f'{bridge}({name}, backend="native"): the {what} {got_text}; the rule is '
            f"NumPy-only (it calls NumPy functions, which turn tensors into NumPy arrays). "
            f'Use {bridge}({name}, backend="callback") (or backend="auto", which picks it), '
            f"or write the rule with xp = chainrules.array_namespace(x) so it runs on tensors.")
        error.what, error.where, error.got = what, where, got
        return error


class PositionalByKeywordError(NoRuleError):
    """A bridged call passed by keyword a parameter that the function's rules take positionally.

    Rules dispatch on the types of the positional arguments, and keyword arguments
    are never differentiated: ``f(x, t=t)`` looks for a rule of ``f(x)``, which a rule
    written as ``def f_rrule(x, t)`` is not. A ``NoRuleError`` (``except NoRuleError``
    catches it).

    Attributes:
        names: the keyword arguments that name positional parameters of the function.

    Examples:
        >>> import numpy as np
        >>> from chainrules.interop._errors import PositionalByKeywordError
        >>> def lse_t(x, t): ...
        >>> print(PositionalByKeywordError("torch_function", lse_t, "rrule", (np.ndarray,),
        ...                                ("t",)))
        torch_function(...lse_t): no rrule is registered for ...lse_t(ndarray): t is a ...
    """

    def __init__(self, bridge: str, function: Any, kind: str, arg_types: tuple,
                 names: tuple) -> None:
        self.bridge = bridge
        self.kind = kind
        self.names = names
        name = func_name(function)
        got = ", ".join(t.__qualname__ for t in arg_types)
        listed = ", ".join(names)
        short = getattr(function, "__name__", name)
        _CoreNoRuleError.__init__(
            self, function, kind, arg_types,
            f"{bridge}({name}): no {kind} is registered for {name}({got}): {listed} "
            f"{'is a positional parameter' if len(names) == 1 else 'are positional parameters'}"
            f" of {name}, passed by keyword. Rules dispatch on positional arguments (keyword "
            f"arguments are never differentiated): pass {listed} positionally, e.g. "
            f"{short}(x, {names[0]}), or make {'it' if len(names) == 1 else 'them'} "
            f"keyword-only in {short} and its rules (def {short}(x, *, {names[0]}=...)).")
