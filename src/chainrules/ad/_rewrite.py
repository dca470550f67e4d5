"""Source rewriting: every call in a traced function goes through one dispatch point.

Operator overloading sees ``x + y`` but not ``math.sin(x)`` or ``mse(y, y_hat)``:
a call is just a call. So the first time the AD enters a Python function it parses
the function's source, turns every call ``f(a, *b, k=c)`` into
``__chainrules_call__(f, a, *b, k=c)`` and compiles the result with the same
filename and line numbers. The dispatch point then decides, per call, whether a
registered rule applies or whether to trace into ``f`` in turn.

The rewritten code object is cached per original code object, in memory and on disk
(``_rewrite_cache.py``, like Python's bytecode cache). It is compiled
inside a factory function whose local variables stand for the original free
variables, so it has the same free variables (plus the dispatch point), and the
function is rebuilt with the original closure cells, globals and defaults: closures,
``nonlocal``, ``global`` and default arguments behave as in the original. Methods
are compiled inside a class of the same name (``super()`` and name mangling).
"""

from __future__ import annotations

import ast
import dis
import linecache
import os
import types
from typing import Any, cast

from . import _rewrite_cache
from ._errors import StaleSourceError

__all__ = ["CALL_NAME", "is_rewritten", "rewritten_function"]

CALL_NAME = "__chainrules_call__"

# Builtins that inspect the calling frame: routing them through the dispatch point
# would make them look at the wrong frame, so they are left alone.
_FRAME_BUILTINS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec",
                             "breakpoint"})

# Keyed by (code, file name): equal code objects from two files compare equal (the file
# name is not part of a code object's equality), but one may be stale and the other not.
_code_cache: dict[tuple[types.CodeType, str], types.CodeType | None] = {}
_rewritten_codes: set[types.CodeType] = set()
_file_trees: dict[tuple[str, int], ast.Module | None] = {}
_stale: dict[tuple[types.CodeType, str], StaleSourceError] = {}


class _CallRewriter(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute):
            # a method or module function being called (np.sum(x)): the call itself goes
            # through the dispatch point, so only the object it is looked up on is visited
            func.value = self.visit(func.value)
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
        else:
            self.generic_visit(node)
        if isinstance(func, ast.Name) and func.id in _FRAME_BUILTINS:
            return node
        new = ast.Call(
            func=ast.Name(id=CALL_NAME, ctx=ast.Load()),
            args=[func, *node.args],
            keywords=node.keywords,
        )
        return ast.copy_location(new, node)


    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        # ``a @ b`` goes through the dispatch point's ``matmul``: Python asks the left
        # operand first, and a foreign one (a SciPy sparse matrix) would convert a traced
        # right operand to a plain array instead of deferring to its rule
        self.generic_visit(node)
        if not isinstance(node.op, ast.MatMult):
            return node
        new = ast.Call(
            func=ast.Attribute(value=ast.Name(id=CALL_NAME, ctx=ast.Load()), attr="matmul",
                               ctx=ast.Load()),
            args=[node.left, node.right], keywords=[])
        return ast.copy_location(new, node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        # A value read as an attribute (obj.prop, not obj.method(...)): it may be a
        # property whose getter computes with traced fields, so it goes through the
        # dispatch point's ``attr``, which traces Python property getters. Private names
        # stay as they are (the compiler mangles them; a string would not be).
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or (
                node.attr.startswith("__") and not node.attr.endswith("__")):
            return node
        new = ast.Call(
            func=ast.Attribute(value=ast.Name(id=CALL_NAME, ctx=ast.Load()), attr="attr",
                               ctx=ast.Load()),
            args=[node.value, ast.Constant(node.attr)], keywords=[])
        return ast.copy_location(new, node)


def _index_expr(node: ast.expr) -> ast.expr:
    """A subscript's index as an ordinary expression (slices become ``slice(...)`` calls)."""
    if isinstance(node, ast.Slice):
        parts = [node.lower, node.upper, node.step]
        return ast.copy_location(ast.Call(
            func=ast.Attribute(value=ast.Name(id=CALL_NAME, ctx=ast.Load()), attr="slice",
                               ctx=ast.Load()),
            args=[p if p is not None else ast.Constant(None) for p in parts], keywords=[]),
            node)
    if isinstance(node, ast.Tuple):
        return ast.copy_location(
            ast.Tuple(elts=[_index_expr(e) for e in node.elts], ctx=ast.Load()), node)
    return node


class _StoreRewriter(_CallRewriter):
    """Also routes ``a[i] = v`` and ``a[i] op= v`` through the dispatch point's ``setitem``
    (see ``_inplace``). Where ``a`` is a local variable of the function, the statement
    binds the result back to it (``a = call.setitem_rebind(a, i, v)``), so a plain array
    receiving a traced value becomes traced; likewise a statement calling a NumPy
    function that writes into a local array (``np.add.at(acc, i, v)``, ``f(..., out=y)``)
    becomes ``acc = call.mutating(0, np.add.at, acc, i, v)``."""

    def __init__(self) -> None:
        self._locals: list[frozenset[str]] = []

    def visit_FunctionDef(self, node: Any) -> ast.AST:
        self._locals.append(_bound_names(node))
        self.generic_visit(node)
        self._locals.pop()
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self.visit_FunctionDef(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self._locals.append(frozenset())
        self.generic_visit(node)
        self._locals.pop()
        return node

    def _local(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name) and self._locals and node.id in self._locals[-1]:
            return node.id
        return None

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
            return node
        target = node.targets[0]
        name = self._local(target.value)
        call = ast.Call(
            func=ast.Attribute(value=ast.Name(id=CALL_NAME, ctx=ast.Load()),
                               attr="setitem_rebind" if name else "setitem", ctx=ast.Load()),
            args=[target.value, _index_expr(target.slice), node.value], keywords=[])
        return _statement(name, call, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.target, ast.Subscript):
            return node
        target = node.target
        op_name = _AUG_OPS.get(type(node.op))
        if op_name is None:
            return node
        name = self._local(target.value)
        call = ast.Call(
            func=ast.Attribute(value=ast.Name(id=CALL_NAME, ctx=ast.Load()),
                               attr="setitem_inplace_rebind" if name else "setitem_inplace",
                               ctx=ast.Load()),
            args=[target.value, _index_expr(target.slice), ast.Constant(op_name), node.value],
            keywords=[])
        return _statement(name, call, node)

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        original = node.value
        where: Any = None
        name = None
        if isinstance(original, ast.Call):
            out = [k for k in original.keywords if k.arg == "out"]
            if out and self._local(out[0].value):
                where, name = "out", self._local(out[0].value)
            elif (isinstance(original.func, ast.Attribute)
                  and original.func.attr in _WRITING_FUNCTIONS and original.args
                  and self._local(original.args[0])):
                where, name = 0, self._local(original.args[0])
        self.generic_visit(node)
        new = node.value
        if name is None or not (isinstance(new, ast.Call) and isinstance(new.func, ast.Name)
                                and new.func.id == CALL_NAME):
            return node
        call = ast.Call(
            func=ast.Attribute(value=ast.Name(id=CALL_NAME, ctx=ast.Load()), attr="mutating",
                               ctx=ast.Load()),
            args=[ast.Constant(where), *new.args], keywords=new.keywords)
        return _statement(name, call, node)


# NumPy functions (and ufunc methods) that write into their first argument
_WRITING_FUNCTIONS = frozenset({"at", "copyto", "put", "place", "putmask", "put_along_axis",
                                "fill_diagonal"})


def _statement(name: str | None, call: ast.Call, node: ast.stmt) -> ast.stmt:
    """``name = call`` (rebinding a local variable), or the call as a statement."""
    call = ast.copy_location(call, node)
    if name is None:
        return ast.copy_location(ast.Expr(value=call), node)
    return ast.copy_location(
        ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=call), node)


def _bound_names(fn: Any) -> frozenset[str]:
    """The names a function binds in its own scope (parameters, assignment targets,
    imports, ``global`` / ``nonlocal`` declarations): those its code may rebind."""
    a = fn.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
    todo: list = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
        elif isinstance(n, ast.alias):
            names.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            todo.extend(n.decorator_list)
            continue
        elif isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                            ast.GeneratorExp)):
            continue
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        todo.extend(ast.iter_child_nodes(n))
    return frozenset(names)


_AUG_OPS = {ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv",
            ast.Pow: "ipow", ast.MatMult: "imatmul"}


def _module_tree(filename: str) -> ast.Module | None:
    # the file as it is now: linecache would keep the text of before an edit and a
    # reload, and the reloaded code would not match it
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return None
    key = (filename, hash(tuple(lines)))
    if key not in _file_trees:
        try:
            _file_trees[key] = ast.parse("".join(lines), filename)
        except (SyntaxError, ValueError):
            _file_trees[key] = None
    return _file_trees[key]


class _TreeIndex:
    """A module tree's functions by name, lambdas by line, and methods' classes: built
    in one walk, so finding the node of each code object does not walk the whole module
    again (rule modules are long, and a second derivative rewrites dozens of rules)."""

    __slots__ = ("classes", "defs", "lambdas")

    def __init__(self, tree: ast.Module) -> None:
        self.defs: dict[str, list] = {}
        self.lambdas: dict[int, list] = {}
        self.classes: dict[int, str] = {}  # id(def node) -> the class defining it
        for node in ast.walk(tree):
            if isinstance(node, ast.Lambda):
                self.lambdas.setdefault(node.lineno, []).append(node)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.defs.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.ClassDef):
                for b in node.body:
                    self.classes.setdefault(id(b), node.name)


_tree_index: dict[int, _TreeIndex] = {}  # id(tree) -> index (the trees stay cached)


def _index(tree: ast.Module) -> _TreeIndex:
    found = _tree_index.get(id(tree))
    if found is None:
        found = _tree_index[id(tree)] = _TreeIndex(tree)
    return found


def _find_node(tree: ast.Module, code: types.CodeType) -> ast.AST | None:
    """The def or lambda node that compiled to ``code``."""
    is_lambda = code.co_name == "<lambda>"
    want_args = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    candidates = []
    index = _index(tree)
    nodes = (index.lambdas.get(code.co_firstlineno, []) if is_lambda
             else index.defs.get(code.co_name, []))
    for node in nodes:
        if is_lambda:
            first = node.lineno
        else:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        if first != code.co_firstlineno:
            continue
        a = node.args
        names = tuple(x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs])
        if names != want_args:
            continue
        candidates.append(node)
    if len(candidates) != 1:
        # Two lambdas with the same parameters on one line: tell them apart by column
        # (Python 3.11+ records columns; on 3.10, by the names they use).
        positions = getattr(code, "co_positions", None)
        if positions is None:
            return _by_names(candidates, code)
        cols = [p[2] for p in positions()
                if p[2] is not None and p[0] == code.co_firstlineno and p[3] != 0]
        if not cols:
            return None
        col = min(cols)
        best = [n for n in candidates if n.col_offset <= col <= (n.end_col_offset or 0)]
        if len(best) == 1:
            return best[0]
        return None
    return candidates[0]


def _by_names(candidates: list, code: types.CodeType) -> ast.AST | None:
    """The one candidate whose attribute and variable names are the code's (Python 3.10,
    which records no columns, telling two lambdas on one line apart)."""
    names = set(code.co_names) | set(code.co_freevars) | set(code.co_varnames)
    found = []
    for node in candidates:
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        used |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        used |= {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
        if used == names:
            found.append(node)
    return found[0] if len(found) == 1 else None


def _class_name(tree: ast.Module, node: ast.AST) -> str | None:
    """The class whose body defines ``node`` directly (a method), or None."""
    return _index(tree).classes.get(id(node))


_SELF_NAME = "__chainrules_self__"
_CLASS_PREFIX = "_"


def _compile(code: types.CodeType) -> types.CodeType | None:
    tree = _module_tree(code.co_filename)
    if tree is None:
        return None
    node = _find_node(tree, code)
    if node is None:
        return None
    cls = _class_name(tree, node)
    # The text read from the file must be the code being run: compiled as it is (same
    # wrapper, no rewriting) it has to give the same code object, or the file changed
    # after the import (or the code was compiled under another file's name).
    plain = _factory_code(_copy(node), code, cls, _pytest_asserts(code))
    if plain is None:
        return None
    if not _same_code(plain, code):
        raise StaleSourceError(getattr(code, "co_qualname", code.co_name), code.co_filename)
    return _factory_code(_StoreRewriter().visit(_copy(node)), code, cls)


# CO_NESTED: set for every function compiled inside the factory, never compared
_CO_NESTED = 0x10


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether two code objects have the same instructions, names and constants
    (nested code objects compared the same way; line numbers, jump offsets and the
    compiler's choice between equivalent instructions ignored: a ``.pyc`` written by
    another patch release of the same Python may load a method with other opcodes)."""
    if (a.co_names != b.co_names and set(a.co_names) != set(b.co_names)) \
            or a.co_varnames != b.co_varnames \
            or a.co_freevars != b.co_freevars or a.co_cellvars != b.co_cellvars \
            or a.co_argcount != b.co_argcount \
            or a.co_posonlyargcount != b.co_posonlyargcount \
            or a.co_kwonlyargcount != b.co_kwonlyargcount \
            or (a.co_flags ^ b.co_flags) & ~_CO_NESTED:
        return False
    if a.co_code == b.co_code:
        return _same_consts(a.co_consts, b.co_consts)
    return _instructions(a) == _instructions(b)


def _same_consts(xs: tuple, ys: tuple) -> bool:
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        if isinstance(x, types.CodeType):
            if not isinstance(y, types.CodeType) or not _same_code(x, y):
                return False
        elif type(x) is not type(y) or (_const(x) != _const(y) and x == x):
            return False
    return True


def _const(x: Any) -> Any:
    # a class defined inside a function stores its __qualname__, which names the
    # enclosing functions: inside the factory they differ, so qualnames are not compared
    if type(x) is str and ".<locals>." in x:
        return "<qualname>"
    return x


_SKIP_OPS = frozenset({"CACHE", "NOP", "EXTENDED_ARG", "RESUME", "PRECALL", "PUSH_NULL"})
_SAME_OPS = {"LOAD_METHOD": "LOAD_ATTR", "CALL_METHOD": "CALL",
             "CALL_FUNCTION": "CALL", "CALL_FUNCTION_KW": "CALL"}


def _instructions(code: types.CodeType) -> list:
    """The instruction stream with names, constants and variables resolved (nested code
    as its own stream) and jump targets dropped."""
    out: list = []
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in _SKIP_OPS:
            continue
        op = _SAME_OPS.get(op, op)
        if ins.opcode in _JUMPS:
            out.append((op.replace("_FORWARD", "").replace("_BACKWARD", "")
                        .replace("_NO_INTERRUPT", ""), None))
        elif isinstance(ins.argval, types.CodeType):
            out.append((op, tuple(_instructions(ins.argval))))
        else:
            val = _const(ins.argval)
            out.append((op, (type(val), val) if val == val else "nan"))
    return out


_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _pytest_asserts(code: types.CodeType) -> bool:
    """Whether pytest rewrote the asserts of ``code`` (a test module's function): its
    names then include pytest's, which no Python source can spell."""
    names = (*code.co_names, *code.co_varnames)
    if any(n.startswith("@py") for n in names):
        return True
    return any(isinstance(c, types.CodeType) and _pytest_asserts(c) for c in code.co_consts)


def _factory_code(node: ast.AST, code: types.CodeType, cls: str | None,
                  pytest_asserts: bool = False) -> types.CodeType | None:
    """The code of def/lambda ``node`` compiled inside the factory (see the module
    docstring), or None when it does not compile. ``pytest_asserts``: rewrite the asserts
    as pytest does first (to compare with a test function's code)."""
    find_name = code.co_name
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        node.decorator_list = []
        body_stmt: ast.stmt = node
        if cls is None and node.name not in code.co_freevars:
            # Defined in the factory under its own name, a recursive function's calls
            # of itself would read the factory's local instead of the module global.
            node.name = find_name = _SELF_NAME
    else:
        name = "__chainrules_lambda__"
        body_stmt = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                               value=cast(ast.Lambda, node))
        ast.copy_location(body_stmt, node)
    freevars = [v for v in code.co_freevars if v not in ("__class__", CALL_NAME)]
    stmts: list[ast.stmt] = [
        ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())], value=ast.Constant(None))
        for v in [CALL_NAME, *freevars]
    ]
    if cls is not None:
        # The class only gives the method its name mangling (``__x`` -> ``_Model__x``),
        # which ignores leading underscores: named ``_Model`` it mangles the same, and
        # the method's own mention of ``Model`` (``Model.scale``) stays the module
        # global instead of becoming a cell of the factory's class.
        stmts.append(ast.ClassDef(name=_CLASS_PREFIX + cls, bases=[], keywords=[],
                                  body=[body_stmt], decorator_list=[]))
    else:
        stmts.append(body_stmt)
    # Keep every free variable alive as a cell of the factory.
    stmts.append(ast.Return(value=ast.Lambda(
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                           defaults=[]),
        body=ast.Tuple(elts=[ast.Name(id=v, ctx=ast.Load()) for v in [CALL_NAME, *freevars]],
                       ctx=ast.Load()),
    )))
    factory = ast.FunctionDef(
        name="__chainrules_factory__",
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                           defaults=[]),
        body=stmts, decorator_list=[], returns=None, type_comment=None,
    )
    module = ast.Module(body=[factory], type_ignores=[])
    # Position attributes exist only on some node classes (checked with hasattr/getattr).
    n: Any
    lineno = cast("ast.stmt | ast.expr", node).lineno
    for n in ast.walk(module):
        if not hasattr(n, "lineno") or getattr(n, "lineno", None) is None:
            n.lineno = lineno
            n.col_offset = 0
        if getattr(n, "end_lineno", None) is None and hasattr(n, "lineno"):
            n.end_lineno = n.lineno
            n.end_col_offset = 0
    ast.fix_missing_locations(module)
    if pytest_asserts:
        try:
            from _pytest.assertion.rewrite import rewrite_asserts
        except ImportError:  # pragma: no cover - rewritten by a pytest we cannot import
            return None
        rewrite_asserts(module, b"", None, None)
        ast.fix_missing_locations(module)
        for n in ast.walk(module):  # (pytest's new nodes carry partial positions)
            if getattr(n, "lineno", None) is None:
                continue
            if n.end_lineno is None or n.end_lineno < n.lineno:
                n.end_lineno = n.lineno
            if n.end_lineno == n.lineno and (n.end_col_offset is None
                                             or n.end_col_offset < n.col_offset):
                n.end_col_offset = n.col_offset
    try:
        compiled = compile(module, code.co_filename, "exec",
                           flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except SyntaxError:
        return None
    found = _find_code(compiled, find_name, lineno, cls)
    if found is not None and find_name != code.co_name:
        found = found.replace(co_name=code.co_name)
        if hasattr(found, "co_qualname"):
            # co_qualname is Python 3.11+ (guarded above); pyright checks against 3.10.
            found = found.replace(co_qualname=code.co_qualname)  # pyright: ignore[reportCallIssue, reportAttributeAccessIssue]
    return found


_FUTURE_FLAGS = 0
for _feature in ("annotations", "division", "generator_stop"):
    import __future__

    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def _copy(node: ast.AST) -> ast.AST:
    import copy

    return copy.deepcopy(node)


def _find_code(module: types.CodeType, name: str, lineno: int,
               cls: str | None) -> types.CodeType | None:
    """The code of the rewritten def (or lambda): a constant of the factory, or of the
    factory's one class body for a method."""
    scope = _const_code(module, "__chainrules_factory__", None)
    if scope is not None and cls is not None:
        scope = _const_code(scope, _CLASS_PREFIX + cls, None)
    if scope is None:
        return None
    return _const_code(scope, name, lineno)


def _const_code(code: types.CodeType, name: str, lineno: int | None) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name and (
                lineno is None or const.co_firstlineno == lineno):
            return const
    return None


_OPAQUE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def rewritten_code(code: types.CodeType) -> types.CodeType | None:
    """The rewritten twin of ``code`` (cached), or None when its source is unavailable.

    The AD's own functions (``grad`` of ``grad``...) are never rewritten: they run as
    they are, on whatever tracers they receive.
    """
    key = (code, code.co_filename)
    try:
        return _code_cache[key]
    except KeyError:
        pass
    stale = _stale.get(key)
    if stale is not None:
        raise stale
    if os.path.abspath(code.co_filename).startswith(_OPAQUE_DIR):
        _code_cache[key] = None
        return None
    new = _rewrite_cache.load(code)
    if new is None:
        try:
            new = _compile(code)
        except StaleSourceError as e:
            _stale[key] = e
            raise
        if new is not None:
            _rewrite_cache.store(code, new)
    _code_cache[key] = new
    if new is not None:
        _rewritten_codes.add(new)
        _mark_nested(new)
    return new


def _mark_nested(code: types.CodeType) -> None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _rewritten_codes.add(const)
            _mark_nested(const)


def is_rewritten(fn: types.FunctionType) -> bool:
    """Whether ``fn`` already runs rewritten code (defined inside traced code)."""
    return fn.__code__ in _rewritten_codes


def rewritten_function(fn: types.FunctionType, dispatch: Any) -> types.FunctionType | None:
    """``fn`` with its calls routed through ``dispatch``, or None if that is impossible."""
    code = fn.__code__
    if code in _rewritten_codes:
        return fn
    new = rewritten_code(code)
    if new is None:
        return None
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    closure = []
    for name in new.co_freevars:
        if name == CALL_NAME:
            closure.append(types.CellType(dispatch))
        else:
            cell = cells.get(name)
            if cell is None:
                return None
            closure.append(cell)
    out = types.FunctionType(new, fn.__globals__, fn.__name__, fn.__defaults__,
                             tuple(closure))
    if fn.__kwdefaults__:
        out.__kwdefaults__ = fn.__kwdefaults__
    return out
