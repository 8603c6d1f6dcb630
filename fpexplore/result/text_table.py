"""A `Comparison` as plain text, at most `COLUMNS` wide unless asked to be wide.

The narrow layout keeps four columns (implementation, value, ULP error, bits): names and values
in words wrap in their column, numbers are shortened with "…", each row's note goes on indented
lines under it. The wide layout prints every column of `Comparison.rows` in full.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import Comparison

__all__ = ["COLUMNS", "comparison_text", "wrapped"]

#: the widest plain-text line a notebook prints: JupyterLab's output area at 1000 px with the
#: file browser open is about 555 px, 71 characters of its 13 px monospace font
COLUMNS = 70

#: narrow layout: (column, header, widest) — the note goes under the row
_NARROW = (
    ("implementation", "implementation", 22),
    ("value", "value", 22),
    ("ulp error", "ulp error", 10),
    ("bits", "bits", 5),
)
_MIN_WIDTH = 60


def cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    ) or [first.rstrip()]


def _claim_lines(c: Comparison, width: int | None) -> list[str]:
    lines = []
    for key, claim in c.claims.items():
        line = claim.line(key)  # with the reason when it failed or was not checked
        lines += [line] if width is None else _wrap(line, width, "", "    ")
    return lines


def _truth_line(c: Comparison) -> str:
    if c.truth is None:
        return ""
    from .html import truth_text

    return "truth: " + truth_text(c.truth)[0]


def comparison_text(
    c: Comparison, wide: bool = False, width: int = COLUMNS, claims: bool = True
) -> str:
    """The comparison as text; every line fits ``width`` columns unless ``wide``. With
    ``claims=False`` only the truth and the rows (the claims and observations left out, for a
    cell that checks its own claims)."""
    rows = c.rows()
    if wide:
        return _wide(c, rows, claims)
    width = max(int(width), _MIN_WIDTH)
    cols = [
        (key, head, min(w, max([len(head), *(len(r[key]) for r in rows)])))
        for key, head, w in _NARROW
    ]
    lines: list[str] = []
    truth = _truth_line(c)
    if truth:
        lines += _wrap(truth, width, "", "    ")
    lines.append("  ".join(head.ljust(w) for _, head, w in cols).rstrip())
    lines.append("  ".join("-" * w for _, _, w in cols))
    name_w, value_w = cols[0][2], cols[1][2]
    for r, o in zip(rows, c.outcomes, strict=True):
        # a long name, and a value in words, wrap inside their columns (never printed twice);
        # the other cells on the first line
        names = textwrap.wrap(r["implementation"], name_w, break_on_hyphens=False) or [""]
        names = [cut(n, name_w) for n in names]
        if o.ran and isinstance(o.value, str):
            values = textwrap.wrap(r["value"], value_w, break_on_hyphens=False) or [""]
        else:
            values = [cut(r["value"], value_w)]
        rest = [cut(r[key], w).ljust(w) for key, _, w in cols[2:]]
        for i in range(max(len(names), len(values))):
            name = names[i] if i < len(names) else ""
            value = values[i] if i < len(values) else ""
            cells = [name.ljust(name_w), value.ljust(value_w), *(rest if i == 0 else [])]
            lines.append("  ".join(cells).rstrip())
        extra = []
        if r["kind"] not in ("framework",) or r["device"] not in ("cpu", ""):
            extra.append(f"{r['kind']}, {r['device']}")
        if r["note"] and r["note"] != r["implementation"]:
            extra.append(r["note"])
        if extra:
            lines += _wrap(" · ".join(extra), width, "    ", "    ")
    if not claims:
        return "\n".join(lines)
    lines += _claim_lines(c, width)
    for key, obs in c.observations.items():
        lines += _wrap(obs.line(key), width, "", "    ")
    return "\n".join(lines)


def _wide(c: Comparison, rows: list[dict[str, str]], claims: bool = True) -> str:
    cols = list(rows[0]) if rows else []
    widths = {col: max(len(col), *(len(r[col]) for r in rows)) for col in cols}
    if cols:  # the last column is not padded: its rule need not span the longest note
        widths[cols[-1]] = len(cols[-1])
    cells = [dict(zip(cols, cols, strict=True)), {col: "-" * widths[col] for col in cols}, *rows]
    lines = ["  ".join(r[col].ljust(widths[col]) for col in cols).rstrip() for r in cells]
    truth = _truth_line(c)
    if truth:
        lines.insert(0, truth)
    return "\n".join([*lines, *(_claim_lines(c, None) if claims else [])])


def wrapped(text: str, width: int = COLUMNS) -> str:
    """``text`` as a notebook should print it (as `Comparison.check` prints a claim): each line
    wrapped at spaces to ``width`` columns, a continuation indented four spaces past the line's
    own indent (a longer word is split). A browser would otherwise break a line inside a word,
    or make the output scroll sideways."""
    width = max(int(width), 20)
    out: list[str] = []
    for line in str(text).splitlines() or [""]:
        indent = line[: len(line) - len(line.lstrip())]
        if len(line) <= width or not line.strip():
            out.append(line.rstrip())
            continue
        out += _wrap(line.strip(), width, indent, indent + "    ")
    return "\n".join(out)
