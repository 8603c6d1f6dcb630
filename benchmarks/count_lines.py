"""Lines of the package at a git revision: its Python's lines and code lines (no blank,
comment-only or docstring lines), and the lines of its other files (templates, C++, Java).

    python3 benchmarks/count_lines.py [REV]      # default HEAD
"""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize

SKIP = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)


def _docstring_lines(src: str) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(ast.parse(src)):
        kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if isinstance(node, kinds) and node.body:
            first = node.body[0]
            value = first.value if isinstance(first, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def count(rev: str = "HEAD") -> tuple[int, int, int, int]:
    """(Python files, their lines, their code lines, lines of the other files) of
    ``fpexplore/`` at ``rev``."""
    names = subprocess.check_output(["git", "ls-tree", "-r", "--name-only", rev, "fpexplore"])
    files = names.decode().split()
    total = code = other = 0
    for f in files:
        src = subprocess.check_output(["git", "show", f"{rev}:{f}"]).decode()
        if not f.endswith(".py"):
            other += src.count("\n")
            continue
        total += src.count("\n")
        doc, seen = _docstring_lines(src), set()
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type not in SKIP and tok.type != tokenize.ENDMARKER:
                seen.update(n for n in range(tok.start[0], tok.end[0] + 1) if n not in doc)
        code += len(seen)
    return sum(f.endswith(".py") for f in files), total, code, other


if __name__ == "__main__":
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    files, total, code, other = count(rev)
    print(
        f"{rev}: {files} Python files, {total} lines, {code} code lines; "
        f"other files {other} lines; all {total + other} lines"
    )
