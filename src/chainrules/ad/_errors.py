"""Exceptions of the reference AD.

Each names the operation that could not be differentiated, what was expected and
what was found, and how to fix it (usually: write a rule for the enclosing function,
so the AD never has to look inside it).
"""

from __future__ import annotations

from typing import Any

from chainrules.core import ChainRulesError
from chainrules.core import NoRuleError as _CoreNoRuleError
from chainrules.core import frule as _frule
from chainrules.core import rrule as _rrule

__all__ = [
    "ADError",
    "ClosureTangentError",
    "ControlFlowError",
    "DeadTracerError",
    "InputTypeError",
    "MutationError",
    "NoRuleError",
    "NonScalarOutputError",
    "OpaqueArrayError",
    "StaleSourceError",
    "TracerConversionError",
    "UntrackedOutputError",
    "func_name",
]



def _public_name(f: Any) -> str | None:
    """The name users call ``f`` by in a namespace rules are grouped by, if it has one."""
    from chainrules import _naming

    _naming._refresh()
    try:
        hit = _naming._index.get(id(f))
    except TypeError:
        return None
    if hit is None or not _naming._resolves(hit, f):
        return None
    return f"{hit[0]}.{hit[1]}"


def func_name(f: Any) -> str:
    """A readable name for a function, class or callable object (for messages).

    Example:
        >>> import math, operator
        >>> from chainrules.ad._errors import func_name
        >>> func_name(math.sin), func_name(operator.add)
        ('math.sin', 'operator.add')
        >>> import numpy as np
        >>> func_name(np.sum)
        'numpy.sum'
    """
    owner: Any = getattr(f, "__self__", None)
    if type(owner).__name__ == "ufunc" and type(owner).__module__ == "numpy":
        return f"numpy.{owner.__name__}.{f.__name__}"  # a ufunc's method: numpy.add.at
    public = _public_name(f)
    if public is not None:
        return public  # scipy.linalg.expm, not scipy.linalg._matfuncs.expm
    module = getattr(f, "__module__", None)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
    if name is None:
        return f"<{type(f).__qualname__} instance>"
    if module in (None, "builtins"):
        return name
    if module == "_operator":
        module = "operator"
    if module.split(".")[0] in ("numpy", "scipy"):
        from chainrules import _naming

        # numpy._core.fromnumeric.sum -> numpy.sum, scipy.integrate._odepack_py.odeint
        # -> scipy.integrate.odeint; numpy.linalg stays
        module = _naming._clean_module(module)
    return f"{module}.{name}"


_FIX = "write a rule for the enclosing function (rrule.register / frule.register)"


class ADError(ChainRulesError):
    """Base class of the reference AD's errors.

    Example:
        >>> from chainrules import ChainRulesError
        >>> from chainrules.ad import ADError, MutationError
        >>> issubclass(MutationError, ADError) and issubclass(ADError, ChainRulesError)
        True
    """


class TracerConversionError(ADError, TypeError):
    """A traced value was turned into a plain Python or NumPy number.

    That would drop its derivative silently (``float(x)``, ``math.sin`` of a value
    without a rule, writing into a NumPy array), so the AD refuses.

    Attributes:
        operation: what was attempted, e.g. ``"float()"``.
        primal: a description of the traced value.
        function: the function that asked for the conversion, when known.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import grad, TracerConversionError
        >>> try:
        ...     grad(lambda x: x.item())(np.array([1.0]))
        ... except TracerConversionError as e:
        ...     print(e.operation)
        x.item()
    """

    def __init__(self, operation: str, primal: Any, function: str | None = None,
                 source_unreadable: bool = False) -> None:
        self.operation = operation
        self.primal = primal
        self.function = function
        where = f" inside {function}" if function else ""
        if source_unreadable:
            super().__init__(
                f"{operation}{where} would turn a traced value ({primal}) into a plain number "
                f"and lose its derivative: the source of {function} could not be read "
                f"(a function defined in the REPL, with `python -c` or by exec), so the calls "
                f"inside it cannot be intercepted and reach their rules. To fix it, define "
                f"{function} in a file (a module or script), or {_FIX}"
            )
            return
        super().__init__(
            f"{operation}{where} would turn a traced value ({primal}) into a plain number and "
            f"lose its derivative; expected an operation the AD can follow (a registered rule, "
            f"an operator, a NumPy function with a rule). To fix it, {_FIX}"
        )


class NoRuleError(ADError, _CoreNoRuleError):
    """A function the AD cannot look inside was called on traced values and has no rule.

    A ``chainrules.NoRuleError`` (as the bridges' one is): ``except
    chainrules.NoRuleError`` catches both.

    Attributes:
        function: the function called.
        mode: ``"rrule"``, ``"frule"`` or ``"rule"`` (either); also ``table``.
        argtypes: the types of the positional arguments; also ``arg_types``.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import grad, NoRuleError
        >>> try:
        ...     grad(lambda x: np.sum(np.add.outer(x, x)))(np.ones(2))
        ... except NoRuleError as e:
        ...     print(e.mode)
        rule
    """

    def __init__(self, function: Any, mode: str, argtypes: tuple, detail: str = "") -> None:
        self.function = function
        self.mode = mode
        self.argtypes = argtypes
        types = ", ".join(t.__qualname__ for t in argtypes)
        extra = f" ({detail})" if detail else ""
        table = _frule if mode == "frule" else _rrule
        no_match = table.no_match_error(function, tuple(argtypes))
        if no_match is not None:
            # rules exist for other argument types: say which
            self.signatures = no_match.signatures
            extra += "; the registered signatures are " + ", ".join(no_match.signatures)
        super().__init__(
            function, mode, argtypes,
            f"no {mode} for {func_name(function)}({types}) and the AD cannot trace into it"
            f"{extra}; expected a registered {mode} for these argument types. To fix it, "
            f"register one ({mode}.register({func_name(function)})) or {_FIX}"
        )


class MutationError(ADError, TypeError):
    """Traced code wrote into an array in a way the AD cannot follow: into an argument
    of the differentiated function, into a plain array it cannot rebind, or through a
    view whose base it cannot find (``_inplace`` differentiates the other writes).

    Attributes:
        operation: the in-place operation.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import grad, MutationError
        >>> def addone(a):
        ...     a += 1
        ...     return np.sum(a)
        >>> try:
        ...     grad(addone)(np.ones(2))
        ... except MutationError as e:
        ...     print(e.operation)
        `x += ...` on a traced array
    """

    def __init__(self, operation: str, detail: str = "") -> None:
        self.operation = operation
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"{operation} mutates an array in place{extra}, which the AD cannot follow "
            f"here (it follows writes into traced arrays, their copies and views, and into "
            f"local arrays it can rebind: see the AD guide, 'In-place code'). Expected "
            f"out-of-place code (e.g. np.where, np.concatenate, x + 1). To fix it, rewrite "
            f"it out of place or {_FIX}"
        )


class NonScalarOutputError(ADError, TypeError):
    """``grad`` of a function whose output is not a real scalar.

    Attributes:
        output: a description of the output.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import grad, NonScalarOutputError
        >>> try:
        ...     grad(lambda x: x * np.ones(2))(1.0)
        ... except NonScalarOutputError as e:
        ...     print(e.output)
        ndarray(shape=(2,), dtype=float64)
    """

    def __init__(self, api: str, output: str) -> None:
        self.output = output
        super().__init__(
            f"{api} expects the function to return a real scalar (float, 0-d array), got "
            f"{output}; use jacobian or vjp with an explicit output cotangent instead"
        )


class InputTypeError(ADError, TypeError):
    """An input (or output cotangent) has a type the AD cannot differentiate.

    Attributes:
        what: which argument or field.
        got: a description of the value.

    Example:
        >>> from chainrules.ad import grad, InputTypeError
        >>> try:
        ...     grad(lambda x: x, argnums=2)(1.0)
        ... except InputTypeError as e:
        ...     print(e.what)
        grad(argnums=2)
    """

    def __init__(self, what: str, expected: str, got: str, fix: str) -> None:
        self.what = what
        self.got = got
        super().__init__(f"{what}: expected {expected}, got {got}; {fix}")


class UntrackedOutputError(ADError, TypeError):
    """A rule returned a value whose derivative the AD cannot follow.

    The AD tracks floats, complex numbers, float/complex arrays and tuples, lists,
    dicts, namedtuples, dataclasses and plain objects holding them.

    Attributes:
        function: the function whose rule returned the value.
        output: a description of the value.

    Example:
        >>> from chainrules import NoTangent, rrule, scoped_rules
        >>> from chainrules.ad import grad, UntrackedOutputError
        >>> class Box:
        ...     __slots__ = ("v",)
        ...     def __init__(self, v):
        ...         self.v = v
        >>> def wrap(x):
        ...     return Box(x)
        >>> with scoped_rules():
        ...     _ = rrule.register(wrap)(lambda x: (Box(x), lambda y_bar: (NoTangent(), 1.0)))
        ...     try:
        ...         grad(lambda x: wrap(x).v)(1.0)
        ...     except UntrackedOutputError as e:
        ...         print(e.output)
        a Box
    """

    def __init__(self, function: Any, output: str) -> None:
        self.function = function
        self.output = output
        super().__init__(
            f"the rule for {func_name(function)} returned {output}, which the AD cannot "
            f"follow (expected numbers, float/complex arrays, or tuples, lists, dicts, "
            f"dataclasses of them); its derivative would be lost. To fix it, {_FIX} that "
            f"returns one of those, or convert the value inside the rule"
        )


class ControlFlowError(ADError):
    """A value depends on traced values only through comparisons, so its derivative is lost.

    A solver handed a function evaluates it (its values are traced, through a closure
    or its ``args``), compares the values and returns an answer built from plain
    floats. The AD sees only the comparisons, which have no derivative, so it would
    give the answer a zero derivative. The AD marks the plain float results of a call
    that was handed a function and branched on traced values; using one in a
    derivative raises this error.

    Attributes:
        function: the function that returned the value.
        calls: the calls that were handed a function, outermost first (the last is
            ``function``); a rule for one of them fixes it.
        where: which part of the result (``""`` for the result itself, ``".x"``).

    Example:
        >>> from chainrules.ad import grad, ControlFlowError
        >>> def bisect(f, lo, hi):
        ...     for _ in range(60):
        ...         mid = (lo + hi) / 2
        ...         lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
        ...     return lo
        >>> try:
        ...     grad(lambda a: bisect(lambda t: t - a, -5.0, 5.0))(1.0)
        ... except ControlFlowError as e:
        ...     print(e.function.__name__)
        bisect
    """

    def __init__(self, calls: tuple[Any, ...], where: str = "") -> None:
        self.calls = calls
        outer = calls[0]
        self.function = calls[-1]
        self.where = where
        name = func_name(self.function)
        chain = " > ".join(func_name(c) for c in calls)
        inside = f" (in the call chain {chain})" if len(calls) > 1 else ""
        super().__init__(
            f"the result{where} of {name}{inside} depends on the traced values only through "
            f"comparisons: it was handed a function, branched on the function's traced "
            f"values (as a solver does) and built the result from plain numbers, so the AD "
            f"cannot follow its derivative, which would silently be zero. Expected a rule "
            f"that differentiates the solution. To fix it, register an rrule/frule for "
            f"{func_name(outer)} (or another function of the chain), or {_FIX}; if the "
            f"value really is piecewise constant in the traced values (an argmax over fixed "
            f"candidates, a count), wrap it in ignore_derivatives(...)"
        )


class ClosureTangentError(ADError):
    """A rule returned ``NoTangent()`` for a function that closes over traced values.

    The AD hands a rule a function argument with its captured traced values replaced
    by their primals; the rule's pullback must return the function's cotangent (a
    ``Tangent`` with a field per captured variable, as ``rrule_via_ad`` returns it
    as ``self_bar``). ``NoTangent()`` would silently drop those derivatives.

    Attributes:
        pullback: the pullback that returned ``NoTangent()``.
        function: the closure.
        variable: the name of the captured variable whose derivative was dropped.

    Example:
        >>> from chainrules import NoTangent, rrule, scoped_rules
        >>> from chainrules.ad import grad, ClosureTangentError
        >>> def apply(f, x):
        ...     return f(x)
        >>> def apply_rrule(f, x):
        ...     return f(x), lambda y_bar: (NoTangent(), NoTangent(), y_bar)
        >>> with scoped_rules():
        ...     _ = rrule.register(apply)(apply_rrule)
        ...     try:
        ...         grad(lambda a: apply(lambda t: t * a, 2.0))(1.0)
        ...     except ClosureTangentError as e:
        ...         print(e.variable)
        a
    """

    def __init__(self, pullback: Any, function: Any, variable: str) -> None:
        self.pullback = pullback
        self.function = function
        self.variable = variable
        super().__init__(
            f"the pullback {func_name(pullback)} returned NoTangent() for the function "
            f"{func_name(function)}, which closes over the traced variable `{variable}`; "
            f"expected the function's cotangent, a Tangent with a field per captured "
            f"variable (rrule_via_ad returns it as self_bar). To fix it, return that "
            f"self_bar from the rule's pullback"
        )


class StaleSourceError(ADError, RuntimeError):
    """The source text the AD would rewrite is not the code of the function it was given.

    The AD intercepts calls by recompiling a function's source (read through
    ``linecache`` from its file). When the file changed after the module was imported
    (edited without a reload), or the code was compiled under another file's name, that
    text would differentiate other code than the one that runs: the AD refuses.

    Attributes:
        function: the qualified name of the function.
        filename: the file its code object names.

    Example:
        >>> import tempfile, types
        >>> from chainrules.ad import grad, StaleSourceError
        >>> with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        ...     _ = fh.write("def f(x):\\n    return 4 * x\\n")
        >>> mod = types.ModuleType("m")  # code compiled under that file's name
        >>> exec(compile("def f(x):\\n    return 3 * x\\n", fh.name, "exec"), mod.__dict__)
        >>> try:
        ...     grad(mod.f)(1.0)
        ... except StaleSourceError as e:
        ...     print(e.function)
        f
    """

    def __init__(self, function: str, filename: str) -> None:
        self.function = function
        self.filename = filename
        super().__init__(
            f"the source of {function} in {filename} does not compile to the code being "
            f"run (the file was edited after it was imported, or the code was compiled "
            f"under another file's name); differentiating that text would differentiate "
            f"other code. Expected the file's text to match the function. To fix it, "
            f"reload the module (importlib.reload) or restart, or {_FIX}"
        )


class DeadTracerError(ADError, RuntimeError):
    """A traced value was used after the differentiation that made it had returned.

    A tracer kept past its ``grad`` / ``jvp`` call (stored in a global, a list, an
    object's field) has no live trace to record on: using it would silently produce
    another tracer instead of a number. Keep ``ignore_derivatives(x)`` (the plain value)
    instead, or return the value from the function.

    Attributes:
        operation: what was attempted on the dead tracer.

    Example:
        >>> import numpy as np
        >>> from chainrules.ad import grad, DeadTracerError
        >>> kept = []
        >>> def f(x):
        ...     kept.append(x)
        ...     return x * x
        >>> grad(f)(2.0)
        4.0
        >>> try:
        ...     kept[0] + 1.0
        ... except DeadTracerError as e:
        ...     print(e.operation)
        calling operator.add
    """

    def __init__(self, operation: str, primal: str) -> None:
        self.operation = operation
        self.primal = primal
        super().__init__(
            f"{operation} on a traced value ({primal}) whose differentiation has already "
            f"returned: the tracer leaked out of grad/jvp/vjp (stored in a global, a list or "
            f"an object) and has no trace to record on. Expected plain values outside the "
            f"differentiated function. To fix it, keep ignore_derivatives(x) (the plain "
            f"value) or return the value from the function"
        )


class OpaqueArrayError(ADError, TypeError):
    """An array the AD cannot see inside holds a traced value.

    A dask array built by dask's own operators from a traced value (``xd * w`` with a
    dask constant ``xd``: dask takes the tracer for a NumPy chunk) hides the tracer in
    its task graph. Differentiated as a constant it would give a silently wrong or zero
    derivative, and computed later it would use a value of a trace that has ended (on a
    cluster, fail to serialize); the AD refuses it where it meets it.

    An array of another library built by its class from a traced value (a pydata
    ``sparse.COO(coords, data)`` with traced ``data``: its numba code cannot compute with
    a tracer) is refused where it is built, naming the constructor.

    Attributes:
        where: where the array was met (a rule's argument, the output, a constructor's
            result).
        array: a description of the array.

    Example:
        >>> import numpy as np, dask.array as da
        >>> from chainrules.ad import grad, OpaqueArrayError
        >>> xd = da.ones((4, 2), chunks=2)
        >>> try:  # dask's own `*` absorbs the tracer: the lazy output is refused
        ...     grad(lambda w: np.sum(xd * w))(np.ones(2))
        ... except Exception as e:  # (an OpaqueArrayError)
        ...     print(type(e).__name__, e.where)
        OpaqueArrayError the output
    """

    def __init__(self, where: str, array: str, constructor: str | None = None) -> None:
        self.where = where
        self.array = array
        if constructor is not None:  # an array class built around a traced value
            super().__init__(
                f"{where} is {array} holding a traced value in its fields: "
                f"{constructor} stored the traced value as it is, and the array's own "
                f"code (compiled, e.g. with numba) cannot compute with it, so its "
                f"derivative would be lost; expected plain values inside the array. To "
                f"fix it, build the array from plain values (a constant pattern and "
                f"data), multiply the traced values in outside it, or register an rrule "
                f"for {constructor}")
            return
        super().__init__(
            f"{where} is {array} whose task graph holds a traced value: the array's own "
            f"library built it from a traced value without the AD, so its derivative "
            f"would be lost; expected the traced value to reach the AD's rules. To fix "
            f"it, make the traced value the left operand (w * xd, w @ xd.T), convert the "
            f"traced inputs to dask arrays at the start (da.asarray(w)), or call the "
            f"array library's functions (xp = array_namespace(xd, w)) instead of its "
            f"operators"
        )


def refusal_in(e: BaseException) -> TracerConversionError | None:
    """The `TracerConversionError` among the causes of ``e`` (a ``SystemError`` from C
    code that ignored it), or None."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, TracerConversionError):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None
