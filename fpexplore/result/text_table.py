"""A `Comparison` as plain text: at most `COLUMNS` columns unless asked to be wide.

`COLUMNS` is what a notebook's output area shows without wrapping at 1000 px with JupyterLab's
file browser open (and what a terminal shows). The narrow layout keeps four columns
(implementation, value, ULP error, bits): a long name wraps inside its column, a long value is
shortened with "…", and each row's note goes on indented lines under it. The wide layout
prints every column of `Comparison.rows` in full.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import Comparison

__all__ = ["COLUMNS", "comparison_text"]

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


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    ) or [first.rstrip()]


def _claim_lines(c: Comparison, width: int | None) -> list[str]:
    lines = []
    for key, claim in c.claims.items():
        if hasattr(claim, "line"):  # with the reason when it failed or was not checked
            line = claim.line(key)
        else:
            holds = getattr(claim, "holds", None)
            mark = "holds" if holds is True else "FAILS" if holds is False else "not checked"
            line = f"[{mark}] {key}: {claim.text}"
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
    name_w = cols[0][2]
    for r in rows:
        # a long name wraps inside its column (never printed twice); the rest on its first line
        names = textwrap.wrap(r["implementation"], name_w, break_on_hyphens=False) or [""]
        names = [_cut(n, name_w) for n in names]
        cells = [names[0].ljust(name_w), *(_cut(r[key], w).ljust(w) for key, _, w in cols[1:])]
        lines.append("  ".join(cells).rstrip())
        lines += names[1:]
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
    for key, obs in dict(getattr(c, "observations", {}) or {}).items():
        text = obs.line(key) if hasattr(obs, "line") else f"[observed] {key}: {obs}"
        lines += _wrap(text, width, "", "    ")
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


def wrapped(line: str, width: int = COLUMNS) -> str:
    """One printed line (a claim, an observation) wrapped at spaces to ``width`` columns,
    its continuation indented: a browser would otherwise break it inside a word."""
    return "\n".join(_wrap(line, width, "", "    "))
