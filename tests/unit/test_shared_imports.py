"""The modules of ``shared`` import each other in one direction: no module imports one that
(directly or not) imports it back, at run time or for type checking."""

import ast
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"


def _module(path: Path) -> str:
    parts = ["shared", *path.relative_to(SHARED).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    modules = {_module(p): p for p in SHARED.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str] | None:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return None
        for dep in sorted(graph[name]):
            if found := visit(dep, [*path, name]):
                return found
        done.add(name)
        return None

    return next((c for name in sorted(graph) if (c := visit(name, []))), None)


def test_no_module_of_shared_imports_itself_back():
    """The import graph of ``shared`` has no cycle (the page-text model once had one)."""
    graph = _imports()
    assert "shared.pagetext.model" in graph and graph["shared.models"]
    assert _cycle(graph) is None


def test_the_check_finds_a_cycle():
    """The check itself sees a loop when there is one."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
