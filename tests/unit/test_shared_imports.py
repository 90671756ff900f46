"""The import graph drawn from the code: the modules of ``shared`` import each other in one
direction, so do its folders (infra, contracts, pagetext, sheet, …), and no service imports
another (what two services share lives in ``shared``)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "shared"
SERVICES = ROOT / "services"


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports (at run time or for type checking), and for ``from m
    import n`` also ``m.n``, which may be a module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def _imports(package: Path) -> dict[str, set[str]]:
    modules = {_module(p): p for p in package.rglob("*.py")}
    return {
        name: {m for m in _imported(path) if m in modules and m != name}
        for name, path in modules.items()
    }


def _folder(module: str) -> str:
    """``shared.sheet.reader`` → ``shared.sheet``."""
    return ".".join(module.split(".")[:2])


def _folders(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    folders: dict[str, set[str]] = {}
    for name, deps in graph.items():
        here = _folder(name)
        folders.setdefault(here, set()).update(_folder(d) for d in deps if _folder(d) != here)
    return folders


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str] | None:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return None
        for dep in sorted(graph.get(name, ())):
            if found := visit(dep, [*path, name]):
                return found
        done.add(name)
        return None

    return next((c for name in sorted(graph) if (c := visit(name, []))), None)


def test_no_module_of_shared_imports_itself_back():
    """The import graph of ``shared`` has no cycle (the page-text model once had one)."""
    graph = _imports(SHARED)
    assert "shared.pagetext.model" in graph and graph["shared.contracts.models"]
    assert _cycle(graph) is None


def test_no_folder_of_shared_imports_itself_back():
    """The folders of ``shared`` form layers: pagetext below sheet, sheet below the contracts
    that carry its readings, contracts below infra; no folder reaches back up."""
    folders = _folders(_imports(SHARED))
    assert {"shared.infra", "shared.contracts", "shared.pagetext", "shared.sheet"} <= set(folders)
    assert "shared.sheet" in folders["shared.contracts"]
    assert _cycle(folders) is None


def test_no_service_imports_another():
    """A service's modules import ``shared`` and their own service, never another service."""
    crossings = [
        f"{name} imports {dep}"
        for path in SERVICES.rglob("*.py")
        for name in [_module(path)]
        for dep in _imported(path)
        if dep.startswith("services.") and dep.split(".")[1] != name.split(".")[1]
    ]
    assert crossings == []


def test_the_checks_find_a_cycle_and_a_crossing():
    """The checks themselves see a loop between modules and between folders when there is one."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    folders = _folders({"shared.x.m": {"shared.y.n"}, "shared.y.n": {"shared.x.o"}})
    assert _cycle(folders) == ["shared.x", "shared.y", "shared.x"]
