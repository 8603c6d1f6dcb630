"""The package's shape: no import cycles, lower layers never import upper ones, and
`fpexplore.catalog()` keeps working after a lesson ran."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import fpexplore

PKG = Path(fpexplore.__file__).resolve().parent
#: Layers that must not import lessons or widgets (they sit below them).
LOWER = ("backends", "records", "truth", "formats", "metrics", "orders", "rng", "jvm", "params")


def _modules() -> dict[str, Path]:
    mods = {}
    for path in PKG.rglob("*.py"):
        parts = ["fpexplore", *path.relative_to(PKG).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _imports(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports (at module level or inside functions)."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = mod.split(".") if is_pkg else mod.split(".")[:-1]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):  # `if TYPE_CHECKING:` imports are not run: left out
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - (node.level - 1)] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                targets = [f"{target}.{a.name}" for a in node.names] + [target]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != mod and not mod.startswith(t + "."):  # its own package: no edge
                    graph[mod].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert _cycles(_imports(_modules())) == []


def test_lower_layers_never_import_lessons_or_widgets():
    graph = _imports(_modules())
    for mod, targets in graph.items():
        layer = mod.split(".")[1] if mod.count(".") else ""
        if layer in LOWER:
            up = {t for t in targets if t.startswith(("fpexplore.lessons", "fpexplore.widgets"))}
            assert not up, (mod, up)


def test_catalog_after_a_run():
    before = fpexplore.catalog()
    fpexplore.run("gpu_determinism", device="recorded")
    after = fpexplore.catalog()
    assert list(after) == list(before) and "gpu_determinism" in after
    from fpexplore.lessons import get

    assert get("gpu_determinism") is after["gpu_determinism"]
