"""One printable page per notebook, generated from the notebook itself: the handout (what
you'll see, three commands, the exercise questions) and the facilitator notes (the answers, the
cell that checks each, and numbers recorded on the reference machines, read from
``data/fingerprints``, ``data/machines`` and ``data/gpu``, with the lesson's claims that a real
machine broke); with ``--slides``, every notebook's slide
(`slides`), and an index of everything."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..page import render
from ..series import NOTEBOOKS, Notebook
from ..templates import part, trusted
from .plan import ANSWER, ROOT, binder_note

NUMBER = re.compile(r"^\*\*\d+\.\*\*\s*")
#: an exercise's number anywhere in a cell ("**1.**" at a line's start)
MARKER = re.compile(r"^\*\*\d+\.\*\*", re.M)


@dataclass(frozen=True)
class Exercise:
    question: str  # markdown
    answer: str  # markdown
    check: str  # the code cell that checks the answer


#: the notebooks' links, as the kit's pages: a notebook's handout, the kit's glossary and index
_LINKS = (
    (re.compile(r'href="(\d\d)_[\w.-]*\.ipynb'), r'href="\1-handout.html'),
    (re.compile(r'href="glossary\.md'), 'href="glossary.html'),
    (re.compile(r'href="index\.ipynb'), 'href="index.html'),
)


def kit_links(html: str) -> str:
    """``html`` with the notebooks' relative links pointing at the kit's own pages."""
    for pattern, to in _LINKS:
        html = pattern.sub(to, html)
    return html


def _md(text: str) -> str:
    """Markdown as HTML for a template, its links the kit's (as text in ``<pre>`` where
    mistune is missing)."""
    try:
        import mistune
    except ImportError:  # pragma: no cover - nbconvert brings it
        return trusted(part("pre", text))
    return trusted(kit_links(str(mistune.html(text))))


def glossary_html(notebooks: Path | None = None) -> str:
    """The series' glossary (``notebooks/glossary.md``) as a page of the kit, its anchors kept:
    the handouts' ``glossary.md#term`` links land on it."""
    text = ((notebooks or ROOT / "notebooks") / "glossary.md").read_text(encoding="utf-8")
    return _page("kit_page.html", "Glossary", body=_md(text))


def _page(template: str, title: str, **context: Any) -> str:
    """A whole page of the kit, from its template."""
    return render(template, title=title, body_class="fpx-kit", **context)


def _cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell: dict[str, Any]) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def learn(path: Path) -> str:
    """The notebook's "What you'll learn" list (markdown), from its first cell."""
    first = _src(_cells(path)[0])
    m = re.search(r"\*\*What you'll learn\*\*\n(.*?)(?:\n\n|\Z)", first, re.S)
    return m.group(1).strip() if m else ""


def exercises(path: Path) -> list[Exercise]:
    """Every exercise: the question, its collapsed answer, the code cell that checks it."""
    cells = _cells(path)
    out = []
    for i, c in enumerate(cells):
        text = _src(c)
        m = ANSWER.search(text) if c["cell_type"] == "markdown" else None
        if m is None:
            continue
        check = next((_src(d) for d in cells[i + 1 :] if d["cell_type"] == "code"), "")
        question = text[: m.start()]
        numbered = list(MARKER.finditer(question))  # the question starts at its number
        question = question[numbered[-1].start() :] if numbered else question
        out.append(Exercise(question.strip(), m.group(1).strip(), check))
    return out


def commands(nb: Notebook) -> list[tuple[str, str]]:
    """The three commands of a handout: open the notebook, the same thing in a terminal, and
    the check (or the slides) for it."""
    where = binder_note()
    third = (
        (f"fpexplore export {nb.lesson} --static --html {nb.key}.html", "this lesson as a page")
        if nb.lesson
        else ("fpexplore doctor --workshop", "what this laptop can run, and how long it takes")
    )
    return [
        (f"make lab   # then open notebooks/{nb.file}", f"open the notebook ({where})"),
        (nb.command, "the same computation in a terminal"),
        third,
    ]


def handout_html(nb: Notebook, notebooks: Path | None = None) -> str:
    path = (notebooks or ROOT / "notebooks") / nb.file
    qs = [_md(NUMBER.sub("", e.question)) for e in exercises(path)]
    return _page("kit_handout.html", f"{nb.key} · {nb.title}", nb=nb, learn=_md(learn(path)),
                 commands=commands(nb), questions=qs)  # fmt: skip


def reference_numbers(nb: Notebook, root: Path = ROOT) -> str:
    """The lesson's claims that a real machine broke (HTML), read from ``data/machines``."""
    sections = []
    if nb.lesson:
        from .. import machines
        from ..lessons import all_lessons

        fleet = machines.load_all(root / "data/machines")
        rows = machines.broken_rows(fleet, all_lessons(), nb.lesson)
        head = ("claim", "fails on", "holds on", "not checked on", "first failure")
        sections += [{"head": head, "rows": rows}] if rows else []
    return render("kit_numbers.html", sections=sections)


def facilitator_html(nb: Notebook, notebooks: Path | None = None, root: Path = ROOT) -> str:
    """The answers, the cell that checks each, what that cell printed on each machine that
    recorded it (``data/machines/*/answers.json``, by `printed`), and the lesson's claims a
    real machine broke."""
    from . import printed

    path = (notebooks or root / "notebooks") / nb.file
    shown = [
        Exercise(_md(NUMBER.sub("", x.question)), _md(x.answer), x.check) for x in exercises(path)
    ]
    records = printed.load_all(root)
    got = printed.expected(nb, records)
    got += [[]] * (len(shown) - len(got))
    return _page("kit_facilitator.html", f"Facilitator notes: {nb.key}", nb=nb,
                 exercises=list(zip(shown, got, strict=False)),
                 machines=[r["label"] for r in records],
                 numbers=trusted(reference_numbers(nb, root)))  # fmt: skip


def build(out: Path, keys: list[str] | None = None, slides: bool = False, day: bool = True) -> Path:
    """Write every handout, every facilitator page, (with ``slides``) every notebook's slide,
    the glossary, (with ``day``) the run sheet, the pre-flight checklist and the
    troubleshooting page (it runs lessons), and ``index.html`` listing them; returns the
    index's path."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for nb in NOTEBOOKS:
        if keys and nb.key not in keys:
            continue
        (out / f"{nb.key}-handout.html").write_text(handout_html(nb), encoding="utf-8")
        (out / f"{nb.key}-facilitator.html").write_text(facilitator_html(nb), encoding="utf-8")
        slide = False
        if slides:
            from .slides import slide as make_slide

            text = make_slide(nb, ROOT / "notebooks")
            (out / f"{nb.key}-slides.html").write_text(text, encoding="utf-8")
            slide = True
        rows.append((nb, slide))
    (out / "glossary.html").write_text(glossary_html(), encoding="utf-8")
    index = out / "index.html"
    index.write_text(_page("kit_index.html", "fpexplore workshop kit", rows=rows), "utf-8")
    return index
