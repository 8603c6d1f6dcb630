"""The package's shape: no import cycles, imports run one way down the layers, one way in
for frameworks (`fpexplore.backends`) and for lessons (`fpexplore.lessons`), and
`fpexplore.catalog()` keeps working after a lesson ran."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest

import fpexplore

PKG = Path(fpexplore.__file__).resolve().parent
ROOT = PKG.parent
#: The package's layers, lowest first, by top-level module or package: a module imports
#: (at module level or inside a function) only from its own layer or those below it. Every
#: top-level name is in exactly one layer (a new one must be placed).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("paths", "quiet", "lock", "memo", "series", "templates", "svg", "figures", "judging"),
    ("formats",),
    ("truth",),
    ("metrics",),
    ("params", "result", "records", "images"),
    ("jvm", "orders"),
    ("backends",),
    ("probe", "tolerance"),  # this machine probed; error bounds
    ("rng",),
    ("dispatch", "machines"),  # CPU switches, fingerprints; real machines' records
    ("lessons",),
    (  # the faces and tools over the lessons
        "testing",
        "widgets",
        "page",
        "export",
        "widget_bundle",
        "article_claims",
        "myths",
        "workshop",
        "report",
        "diverge",
        "verify",
        "recorder",
        "gpu_recheck",
        "warm",
        "determinism_check",
        "cards",
    ),
    ("cli", "commands", "tools_cli", "__main__"),
)
#: Imported only by ``fpexplore/backends`` (everything else calls ``backends.load``).
FRAMEWORKS = ("torch", "tensorflow", "keras", "tf_keras", "jpype")
#: Modules that run as their own process and import their framework there, and why.
SUBPROCESS_WORKERS = {
    "jvm/worker.py": "the JVM worker process (python -m fpexplore.jvm.worker) starts JPype",
    "lessons/distributed_reduction/worker.py": "the torch.distributed ranks, run by "
    "python -m on a bare machine with torch",
}
#: Modules that import a computed module name, and what they import.
DYNAMIC_IMPORTS = {
    "backends/__init__.py": "the backend registry: the frameworks",
    "lessons/__init__.py": "the lessons registry: the lessons",
    "quiet.py": "quiet_import, for the TensorFlow backend",
    "commands.py": "the CLI's command targets (a lesson's goes through lessons.module)",
    "determinism_check.py": "the user's module:function target",
    "widgets/__init__.py": "its own widget modules, on first use",
}
_IMPORTERS = ("import_module", "__import__")
_FINDERS = ("iter_modules", "walk_packages")


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


def upward_imports(
    graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS
) -> list[str]:
    """``module -> target`` for every import of a higher layer's module (the package's own
    ``__init__`` is above all: it is imported first anyway), and every top-level name that no
    layer places."""
    rank = {name: i for i, names in enumerate(layers) for name in names}
    found = []
    for mod, targets in sorted(graph.items()):
        top = mod.split(".")[1] if mod.count(".") else None
        if top is None:
            continue
        if top not in rank:
            found.append(f"{mod}: in no layer")
            continue
        for t in sorted(targets):
            up = t.split(".")[1] if t.count(".") else None
            if up is not None and rank.get(up, len(layers)) > rank[top]:
                found.append(f"{mod} -> {t}")
    return found


def test_imports_run_down_the_layers():
    assert upward_imports(_imports(_modules())) == []


def test_the_layer_check_finds_an_upward_import():
    graph = {
        "fpexplore.rng.torch_cpu": {"fpexplore.dispatch.paths", "fpexplore.backends"},
        "fpexplore.dispatch.worker": {"fpexplore.lessons.summation_order.layout"},
        "fpexplore.lessons._base": {"fpexplore.series"},
        "fpexplore.newthing": set(),
    }
    assert upward_imports(graph) == [
        "fpexplore.dispatch.worker -> fpexplore.lessons.summation_order.layout",
        "fpexplore.newthing: in no layer",
        "fpexplore.rng.torch_cpu -> fpexplore.dispatch.paths",
    ]


def _trees(root: Path = PKG) -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(root).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(root.rglob("*.py"))
    ]


def _absolute(rel: str, node: ast.ImportFrom) -> str:
    """The absolute module of ``from ... import`` in the module at ``rel``."""
    if not node.level:
        return node.module or ""
    here = ["fpexplore", *rel.removesuffix(".py").split("/")][: -node.level]
    return ".".join(here + ([node.module] if node.module else []))


def _called(node: ast.AST) -> str:
    if not isinstance(node, ast.Call):
        return ""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def framework_imports(root: Path = PKG) -> list[str]:
    """``file:line`` of every framework import outside ``backends`` and the subprocess workers
    (``import``, ``from``, and ``import_module`` of a literal name)."""
    found = []
    for rel, tree in _trees(root):
        if rel.startswith("backends/") or rel in SUBPROCESS_WORKERS:
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [_absolute(rel, node)]
            elif _called(node) in _IMPORTERS and node.args:  # type: ignore[attr-defined]
                arg = node.args[0]  # type: ignore[attr-defined]
                names = [arg.value] if isinstance(arg, ast.Constant) else []
            found += [
                f"fpexplore/{rel}:{node.lineno}: imports {n}"  # type: ignore[attr-defined]
                for n in names
                if isinstance(n, str) and n.split(".")[0] in FRAMEWORKS
            ]
    return found


def lesson_lookups(root: Path = PKG) -> list[str]:
    """``file:line`` of every lesson found other than through ``fpexplore.lessons`` (`get`,
    `run`, `all_lessons`, `module`): ``import_module`` or ``pkgutil`` over lesson modules, a
    ``LESSON`` imported from outside the lessons package, or any computed import outside
    `DYNAMIC_IMPORTS`."""
    found = []
    for rel, tree in _trees(root):
        if rel == "lessons/__init__.py":
            continue
        for node in ast.walk(tree):
            where = f"fpexplore/{rel}:{getattr(node, 'lineno', 0)}"
            call = _called(node)
            if call in _IMPORTERS + _FINDERS and "lessons" in ast.unparse(node):
                found.append(f"{where}: {call} of lessons, outside the lessons registry")
            elif call in _IMPORTERS and rel not in DYNAMIC_IMPORTS:
                arg = node.args[0] if node.args else None  # type: ignore[attr-defined]
                if not isinstance(arg, ast.Constant):
                    found.append(f"{where}: {call} of a computed name ({ast.unparse(node)})")
            elif (
                isinstance(node, ast.ImportFrom)
                and not rel.startswith("lessons/")
                and _absolute(rel, node).startswith("fpexplore.lessons")
                and any(a.name == "LESSON" for a in node.names)
            ):
                found.append(f"{where}: imports a LESSON, not through lessons.get")
    return found


def test_frameworks_are_imported_only_by_backends():
    assert framework_imports() == []


def test_lessons_are_found_only_through_the_lessons_registry():
    assert lesson_lookups() == []


def test_the_checks_find_the_side_doors(tmp_path):
    """Each check fails on a module that opens a side door (file and line named)."""
    (tmp_path / "backends").mkdir()
    (tmp_path / "backends" / "ok.py").write_text("import torch\n")
    (tmp_path / "side.py").write_text(
        "import importlib\n"
        "import keras\n"
        "from tensorflow.python.util import x\n"
        "m = importlib.import_module('jpype')\n"
        "def f(n):\n"
        "    importlib.import_module(f'fpexplore.lessons.{n}')\n"
        "    return importlib.import_module(n)\n"
        "from .lessons.rng_seeds import LESSON\n"
    )
    assert framework_imports(tmp_path) == [
        "fpexplore/side.py:2: imports keras",
        "fpexplore/side.py:3: imports tensorflow.python.util",
        "fpexplore/side.py:4: imports jpype",
    ]
    assert sorted(f.split(": ")[0] for f in lesson_lookups(tmp_path)) == [
        "fpexplore/side.py:6",
        "fpexplore/side.py:7",
        "fpexplore/side.py:8",
    ]


def test_catalog_after_a_run():
    before = fpexplore.catalog()
    fpexplore.run("gpu_determinism", device="recorded")
    after = fpexplore.catalog()
    assert list(after) == list(before) and "gpu_determinism" in after
    from fpexplore.lessons import get

    assert get("gpu_determinism") is after["gpu_determinism"]


def test_lesson_parts_are_reached_through_the_registry():
    """`lessons.module` reaches a lesson's parts (a myth's judge, a recording command) and
    nothing else."""
    from fpexplore import commands, lessons
    from fpexplore.errors import InvalidParameter

    for c in commands.COMMANDS:
        module, _, func = c.target.partition(":")
        if module.startswith("fpexplore.lessons."):
            part = lessons.module(module.removeprefix("fpexplore.lessons."))
            assert callable(getattr(part, func)), c.target
    with pytest.raises(InvalidParameter, match="lesson module"):
        lessons.module("os.path")


TRUTH_PRIVATE = ("_exact", "_mp", "_expansion", "_leveled")


def truth_internals(root: Path = PKG) -> list[str]:
    """Reads or writes of a `Truth`'s private fields outside `fpexplore.truth`."""
    found = []
    for rel, tree in _trees(root):
        if rel.startswith("truth/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in TRUTH_PRIVATE:
                found.append(f"{rel}:{node.lineno}: .{node.attr}")
    return found


def test_truth_internals_stay_in_the_truth_layer(tmp_path):
    assert truth_internals() == []
    (tmp_path / "lesson.py").write_text("def f(t):\n    return t._mp\n")
    assert truth_internals(tmp_path) == ["lesson.py:2: ._mp"]


def test_one_stylesheet():
    """Every CSS rule lives in ``templates/fpexplore.css``: no module writes its own ``<style``
    element (`fpexplore.templates.stylesheet` is the one that does), and the stylesheet's
    comparison width is `MAX_WIDTH_PX`."""
    from fpexplore.result.html import MAX_WIDTH_PX
    from fpexplore.templates import css

    loader = PKG / "templates" / "__init__.py"
    styled = [
        p.relative_to(PKG).as_posix()
        for p in sorted(PKG.rglob("*"))
        if p.suffix in (".py", ".html")
        and p != loader
        and "<style" in p.read_text(encoding="utf-8").lower()
    ]
    assert styled == []
    assert f".fpx{{max-width:{MAX_WIDTH_PX}px;" in css()


def test_every_lesson_declares_typed_data():
    """Each lesson's `Comparison.data` is a frozen dataclass it declares (`Lesson.data`)."""
    import dataclasses

    from fpexplore import lessons
    from fpexplore.result import NoData

    for name, lesson in lessons.all_lessons().items():
        types = lesson.data if isinstance(lesson.data, tuple) else (lesson.data,)
        assert lesson.data is not NoData, f"{name} declares no data type"
        for t in types:
            is_frozen = dataclasses.is_dataclass(t) and t.__dataclass_params__.frozen
            assert is_frozen or any(dataclasses.is_dataclass(sub) for sub in t.__subclasses__()), (
                f"{name}: {t.__name__} is not a frozen dataclass (or the base of some)"
            )


_KEY_READ = re.compile(r"\.data\s*(\[|\.get\()")


#: a read by string key: a subscript with a string literal, or ``.get("...")``
_STRING_KEY = re.compile(r"""\[\s*(['"])[^'"\n]*\1\s*\]|\.get\(\s*['"]""")


#: a private name reached through a module or object (``tolerance._sample``, ``lessons._gpu``)
_PRIVATE = re.compile(r"\b\w+\._[a-z]\w*")


def string_key_reads(source: str) -> list[str]:
    """The string-key reads in ``source``, one line each (a line once per read)."""
    return [
        line.strip()
        for line in source.splitlines()
        if not line.lstrip().startswith("#")
        for _ in _STRING_KEY.finditer(line)
    ]


def test_string_key_reads_are_found():
    src = 'a = r["x"]\nb = f"{m[\'cpu\']}"\nc = d.get("k", 1)\nd = x[0]\n# y["z"]\ne = t.k\n'
    assert len(string_key_reads(src)) == 3
    assert _PRIVATE.findall("from fpexplore.lessons._gpu import c\nt._sample(1)\n") == [
        "lessons._gpu",
        "t._sample",
    ]


def test_notebooks_read_attributes_only():
    """No notebook reads anything by string key: rows, records and claims are typed, and a
    notebook imports public names only."""
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                src = "".join(cell["source"])
                found += [f"{path.name}: {line}" for line in string_key_reads(src)]
                found += [f"{path.name}: {m}" for m in _PRIVATE.findall(src)]
    assert not found, f"{len(found)} string-key reads or private imports: {found}"


def test_lesson_data_is_read_by_attribute():
    """No judge, figure or test reads a comparison's data by string key."""
    found = []
    for path in sorted((ROOT / "fpexplore" / "lessons").rglob("*.py")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _KEY_READ.search(line):
                found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, found
