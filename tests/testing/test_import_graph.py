"""The testing package's modules import each other without a cycle (lazy imports
inside functions included): a cycle is what made the testers and the catalog
import each other inside functions, hiding the dependency."""

import ast
from pathlib import Path

import chainrules.testing

PACKAGE = Path(chainrules.testing.__file__).parent


def _imports(path: Path) -> set[str]:
    """The ``chainrules.testing`` modules a file imports, anywhere in it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "chainrules.testing":
                out.update(f"chainrules.testing.{a.name}" for a in node.names
                           if (PACKAGE / f"{a.name}.py").exists())
            elif node.module.startswith("chainrules.testing."):
                out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("chainrules.testing."))
    return out


def _graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(PACKAGE.glob("_*.py")):
        if path.name == "__init__.py":
            continue
        name = f"chainrules.testing.{path.stem}"
        graph[name] = {m for m in _imports(path) if m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt in graph and nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_testing_modules_have_no_import_cycle():
    graph = _graph()
    assert "chainrules.testing._runner" in graph
    assert _cycle(graph) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
