"""A `Comparison` as plain text for terminals: at most 100 columns unless asked to be wide.

The narrow layout keeps four columns (implementation, value, ULP error, bits) and puts each
row's note on indented lines under it; names and values too long for their column are
shortened with "…". The wide layout prints every column of `Comparison.rows` in full.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import Comparison

__all__ = ["comparison_text"]

#: narrow layout: (column, header, widest) — the note goes under the row
_NARROW = (
    ("implementation", "implementation", 30),
    ("value", "value", 26),
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


def comparison_text(c: Comparison, wide: bool = False, width: int = 100) -> str:
    """The comparison as text; every line fits ``width`` columns unless ``wide``."""
    rows = c.rows()
    if wide:
        return _wide(c, rows)
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
    for r in rows:
        cells = [_cut(r[key], w).ljust(w) for key, _, w in cols]
        lines.append("  ".join(cells).rstrip())
        extra = []
        if r["kind"] not in ("framework",) or r["device"] not in ("cpu", ""):
            extra.append(f"{r['kind']}, {r['device']}")
        if r["note"]:
            extra.append(r["note"])
        if len(r["implementation"]) > cols[0][2]:
            extra.insert(0, r["implementation"])
        if extra:
            lines += _wrap(" · ".join(extra), width, "    ", "    ")
    lines += _claim_lines(c, width)
    for key, obs in dict(getattr(c, "observations", {}) or {}).items():
        text = obs.line(key) if hasattr(obs, "line") else f"[observed] {key}: {obs}"
        lines += _wrap(text, width, "", "    ")
    return "\n".join(lines)


def _wide(c: Comparison, rows: list[dict[str, str]]) -> str:
    cols = list(rows[0]) if rows else []
    widths = {col: max(len(col), *(len(r[col]) for r in rows)) for col in cols}
    if cols:  # the last column is not padded: its rule need not span the longest note
        widths[cols[-1]] = len(cols[-1])
    cells = [dict(zip(cols, cols, strict=True)), {col: "-" * widths[col] for col in cols}, *rows]
    lines = ["  ".join(r[col].ljust(widths[col]) for col in cols).rstrip() for r in cells]
    truth = _truth_line(c)
    if truth:
        lines.insert(0, truth)
    return "\n".join([*lines, *_claim_lines(c, None)])
