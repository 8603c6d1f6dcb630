"""The code's own shape: no function runs over `MAX_LINES` lines (an explicit allow-list that
may only shrink), and no private API of another library is used."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import fpexplore

PKG = Path(fpexplore.__file__).resolve().parent
MAX_LINES = 80
#: ``path:function`` still over `MAX_LINES` lines, with no more than these lines: split each
#: and drop its entry (the test fails on an entry that no longer needs to be here)
ALLOWED: dict[str, int] = {}
#: private names of other libraries' APIs, and what to use instead
PRIVATE_APIS = {
    "_run_exitfuncs": "end the process through `fresh.reply` (its own clean-up, then os._exit)",
    "_choices_actions": "change a subcommand's help where it is added (`add_parser`)",
    "_split_lines": "wrap the help text before argparse gets it (RawTextHelpFormatter)",
    "_fill_text": "wrap the help text before argparse gets it (RawTextHelpFormatter)",
    "_SubParsersAction": "the object `add_subparsers` returns",
}


def function_lengths(root: Path = PKG) -> dict[str, int]:
    """``path:function`` -> lines of every function (nested ones included) over `MAX_LINES`."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if lines > MAX_LINES:
                    found[f"{rel}:{node.name}"] = max(lines, found.get(f"{rel}:{node.name}", 0))
    return found


def private_uses(root: Path = PKG) -> list[str]:
    """``file:line: name`` of every use of a name in `PRIVATE_APIS`."""
    pattern = re.compile(r"\b(" + "|".join(PRIVATE_APIS) + r")\b")
    return [
        f"{p.relative_to(root).as_posix()}:{i}: {m.group(1)}"
        for p in sorted(root.rglob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        for m in pattern.finditer(line)
    ]


def test_no_function_over_the_limit():
    found = function_lengths()
    over = {k: n for k, n in found.items() if n > ALLOWED.get(k, MAX_LINES)}
    assert not over, f"functions over {MAX_LINES} lines (or longer than allowed): {over}"
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, f"now short enough or gone: drop from ALLOWED: {stale}"


def test_no_private_api_of_another_library():
    assert private_uses() == []


def test_the_checks_find_what_they_look_for(tmp_path):
    body = "\n".join(f"    x = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(
        f"import atexit\n\ndef long():\n{body}\n\ndef short():\n    atexit._run_exitfuncs()\n"
    )
    assert function_lengths(tmp_path) == {"m.py:long": MAX_LINES + 1}
    assert private_uses(tmp_path) == [f"m.py:{MAX_LINES + 6}: _run_exitfuncs"]
