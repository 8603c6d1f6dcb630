"""Every notebook's code reads at 1000 px with JupyterLab's file browser open: a code cell then
shows about 70 characters before it scrolls sideways (`fpexplore.result.text_table.COLUMNS`, the
width `fpexplore.wrapped` and the text tables print at).

Fast: reads the notebooks' JSON, executes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpexplore.result.text_table import COLUMNS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: the widest code line a notebook may hold
WIDTH = 70


def long_lines(path: Path, width: int = WIDTH) -> list[str]:
    """One message per code line of ``path`` wider than ``width``: cell index, line, text."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    found = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        for n, line in enumerate("".join(cell["source"]).splitlines(), 1):
            if len(line) > width:
                found.append(f"{path.name} cell {i} line {n} ({len(line)} chars): {line.strip()}")
    return found


def test_the_width_is_what_the_output_wraps_at():
    assert WIDTH == COLUMNS


def test_the_notebooks_are_read():
    assert len(NOTEBOOKS) >= 14


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_lines_fit_the_narrow_lab(path):
    """No code line is longer than 70 characters."""
    found = long_lines(path)
    fix = (
        f"fix: .venv/bin/ruff format --isolated --line-length {WIDTH} notebooks/{path.name}, "
        "then split what it leaves by hand (long strings, comments, aligned columns)"
    )
    assert not found, "\n".join([*found, fix])


def test_the_check_finds_a_long_line(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["x" * 200]},
            {"cell_type": "code", "source": ["a = 1\n", "b = '" + "y" * 80 + "'\n"]},
        ]
    }
    path = tmp_path / "wide.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    (message,) = long_lines(path)
    assert message.startswith("wide.ipynb cell 1 line 2 (86 chars)")
