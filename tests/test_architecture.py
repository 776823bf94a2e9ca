"""The package keeps the shape docs/ARCHITECTURE.md draws: every folder it names exists and
every package folder is named there, no module outgrows one job (450 lines), and no two
modules import each other, directly or around a circle."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

MAX_MODULE_LINES = 450
# A folder named in the map: `gpustack/lint/input/` in backquotes, as the map writes them.
NAMED_FOLDER = re.compile(r"`((?:gpustack|tests|policies|specs|docs|examples|output|benchmarks)(?:/[\w.-]+)*/)`")


def package_folders(repo: Path) -> set[str]:
    return {
        f"{path.parent.relative_to(repo)}/"
        for path in (repo / "gpustack").rglob("__init__.py")
        if "__pycache__" not in path.parts
    }


def test_the_map_names_every_package_folder_and_only_folders_that_exist(repo: Path) -> None:
    named = set(NAMED_FOLDER.findall((repo / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")))
    assert named, "docs/ARCHITECTURE.md names no folder in backquotes"
    missing = sorted(folder for folder in named if not (repo / folder).is_dir())
    assert not missing, f"docs/ARCHITECTURE.md names folders that do not exist: {missing}"
    unnamed = sorted(package_folders(repo) - named)
    assert not unnamed, f"package folders docs/ARCHITECTURE.md does not name: {unnamed}"


def modules(repo: Path) -> dict[str, Path]:
    """Every module of the package by its dotted name."""
    found = {}
    for path in sorted((repo / "gpustack").rglob("*.py")):
        parts = path.relative_to(repo).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def test_no_module_has_more_than_one_jobs_worth_of_lines(repo: Path) -> None:
    long = {
        str(path.relative_to(repo)): count
        for path in modules(repo).values()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"


def _runtime_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that runs, at module level or in a function; not those under
    ``if TYPE_CHECKING:``, which only type checkers read."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def import_graph(repo: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from a import b`` is ``a.b`` where that is a
    module, else ``a``)."""
    known = modules(repo)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif node.module and node.level == 0:
                targets |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                            for alias in node.names}
        graph[name] = {target for target in targets if target in known and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle(repo: Path) -> None:
    graph = import_graph(repo)
    # A package's __init__ that imports its own modules is no cycle with them.
    for name, targets in graph.items():
        targets -= {target for target in targets if name.startswith(f"{target}.")}
    assert not cycles(graph), f"modules that import each other: {cycles(graph)}"


@pytest.mark.parametrize(
    ("graph", "expected"),
    [({"a": {"b"}, "b": {"a"}}, [["a", "b"]]), ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]), ({"a": {"b"}, "b": set()}, [])],
)
def test_the_cycle_finder_finds_circles_and_only_them(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert cycles(graph) == expected
