"""One printable page per notebook, generated from the notebook itself: the handout (what
you'll see, three commands, the exercise questions) and the facilitator notes (the answers, the
cell that checks each, and numbers recorded on the reference machines, read from
``data/fingerprints``, ``data/machines`` and ``data/gpu``, with the lesson's claims that a real
machine broke); with ``--slides``, each lesson's page made by
`fpexplore export`, and an index of everything."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..page import render
from ..series import NOTEBOOKS, Notebook
from ..templates import part, trusted
from .plan import binder_note

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"^\*\*\d+\.\*\*\s*")
#: an exercise's number anywhere in a cell ("**1.**" at a line's start)
MARKER = re.compile(r"^\*\*\d+\.\*\*", re.M)
ANSWER = re.compile(r"<details><summary>Answer</summary>(.*?)</details>", re.S)
#: the reference machines' recorded ops each notebook's facts rest on (fingerprint op names)
OPS = {
    "01": ("sum", "sum_large"),
    "02": ("randn", "dropout"),
    "03": ("dropout", "layer_norm"),
    "06": ("softmax", "exp", "tanh", "layer_norm"),
    "09": ("sum", "matmul", "randn"),
    "10": ("conv2d", "matmul", "layer_norm"),
    "11": ("sum_large",),
    "12": ("sum", "dot", "matmul", "exp"),
}
#: the experiment of the recorded GPU runs each GPU notebook shows
GPU_EXPERIMENT = {"01": "sum", "04": "determinism", "07": "tf32", "08": "cpu_vs_accelerator"}


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


def _records(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


_NOT_RESULTS = {"settings", "seeds", "input_digests", "configs", "defaults", "device", "n"}


def _scalars(d: Any, prefix: str = "", limit: int = 10) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if isinstance(d, dict):
        for k, v in d.items():
            if k in _NOT_RESULTS:
                continue
            out += _scalars(v, f"{prefix}.{k}" if prefix else str(k), limit - len(out))
            if len(out) >= limit:
                break
    elif isinstance(d, int | float) and not isinstance(d, bool):
        out.append((prefix, d))
    return out[:limit]


def _table(head: tuple[str, ...], rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """A table of ``kit_numbers.html``: its head and rows."""
    return {"head": head, "rows": rows}


def _generic(body: dict[str, Any]) -> dict[str, Any]:
    return _table(("value", ""), [(k, f"{v:.6g}") for k, v in _scalars(body)])


def _sum(body: dict[str, Any]) -> dict[str, Any]:
    rows = [(c["name"], f"{c['cpu_bits']:#010x}", f"{c['cuda_bits']:#010x}", c["exact"])
            for c in body.get("cases", [])]  # fmt: skip
    return _table(("case", "CPU bits", "GPU bits", "exact"), rows)


def _determinism(body: dict[str, Any]) -> dict[str, Any]:
    by: dict[str, list[int]] = {}
    for r in body.get("rows", []):
        if r.get("raised"):
            continue
        varied, total = by.setdefault(r["config"], [0, 0])
        by[r["config"]] = [varied + (r.get("distinct", 1) > 1), total + 1]
    runs = body.get("n_runs", "?")
    rows = [(c, f"{v} of {t}") for c, (v, t) in by.items()]
    return _table(("settings", f"outputs that varied over {runs} runs"), rows)


def _tf32(body: dict[str, Any]) -> dict[str, Any]:
    rows = [r for r in body.get("rows", []) if r.get("op") == "matmul" and not r.get("raised")]
    if not rows:
        return _generic(body)
    top = max(r["size"] for r in rows)
    return _table(
        (f"matmul {top}×{top}: mode", "median error (float32 ULPs)", "relative error"),
        [(r["mode"], f"{r['median_abs_ulp32']:.3g}", f"{r['rel_error']:.3g}")
         for r in rows if r["size"] == top],
    )  # fmt: skip


def _cpu_vs_accelerator(body: dict[str, Any]) -> dict[str, Any]:
    truth = body.get("truth", {})
    rows = [
        (x.get("device"), x.get("mode"), f"{x.get('sum_uniform', float('nan')):.9g}",
         f"{x.get('sum_tenthousand', float('nan')):.9g}")
        for x in body.get("sides", [])
    ]  # fmt: skip
    rows.append(("exact", "", f"{truth.get('sum_uniform', float('nan')):.9g}",
                 f"{truth.get('sum_tenthousand', float('nan')):.9g}"))  # fmt: skip
    return _table(("device", "mode", "sum of 1e6 uniform", "sum of 10000 × 0.0001"), rows)


_SUMMARIES = {"sum": _sum, "determinism": _determinism, "tf32": _tf32,
              "cpu_vs_accelerator": _cpu_vs_accelerator}  # fmt: skip


def _op_cell(op: dict[str, Any] | None) -> str:
    """An op's largest error in ULPs, or (no truth for it: random draws) its bits' digest."""
    if not op:
        return "—"
    if op.get("max_ulp") is not None:
        return f"{op['max_ulp']:.3g}"
    return f"bits {op.get('digest', '?')}"


def reference_numbers(nb: Notebook, root: Path = ROOT) -> str:
    """What the reference machines recorded for this notebook (HTML), read from the records."""
    sections = []
    ops = OPS.get(nb.key, ())
    prints = _records(root / "data/fingerprints") + [
        json.loads(p.read_text())
        for p in sorted((root / "data/machines").glob("*/fingerprint.json"))
    ]
    if ops and prints:
        keys = sorted({k for f in prints for k in f["ops"] if k.split(":")[-1] in ops})
        rows = [(k, *(_op_cell(f["ops"].get(k)) for f in prints)) for k in keys]
        sections.append(_table(("op", *(f.get("label", "?") for f in prints)), rows))
    exp = GPU_EXPERIMENT.get(nb.key)
    for rec in _records(root / "data/gpu") if exp else []:
        prov = rec.get("provenance", {})
        table = _SUMMARIES.get(exp, _generic)(rec.get("experiments", {}).get(exp) or {})
        card = f"{prov.get('gpu_name', '?')}, torch {prov.get('torch', '?')}"
        sections.append({**table, "card": card, "date": prov.get("date", "?"), "experiment": exp})
    if nb.lesson:
        from .. import machines
        from ..lessons import all_lessons

        fleet = machines.load_all(root / "data/machines")
        rows = machines.broken_rows(fleet, all_lessons(), nb.lesson)
        head = ("claim", "fails on", "holds on", "not checked on", "first failure")
        sections += [{**_table(head, rows), "claims": True}] if rows else []
    return render("kit_numbers.html", sections=sections)


def facilitator_html(nb: Notebook, notebooks: Path | None = None, root: Path = ROOT) -> str:
    path = (notebooks or root / "notebooks") / nb.file
    shown = [
        Exercise(_md(NUMBER.sub("", x.question)), _md(x.answer), x.check) for x in exercises(path)
    ]
    return _page("kit_facilitator.html", f"Facilitator notes: {nb.key}", nb=nb, exercises=shown,
                 numbers=trusted(reference_numbers(nb, root)))  # fmt: skip


def build(out: Path, keys: list[str] | None = None, slides: bool = False, day: bool = True) -> Path:
    """Write every handout, every facilitator page, (with ``slides``) every lesson's exported
    page, the glossary, (with ``day``) the run sheet, the pre-flight checklist and the
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
        if slides and nb.lesson:
            from ..export import export
            from ..lessons import get

            lesson = get(nb.lesson)
            export(nb.lesson, out / f"{nb.key}-slides.html", dict(lesson.quick),
                   interactive=False, progress=False)  # fmt: skip
            slide = True
        rows.append((nb, slide))
    (out / "glossary.html").write_text(glossary_html(), encoding="utf-8")
    index = out / "index.html"
    index.write_text(_page("kit_index.html", "fpexplore workshop kit", rows=rows), "utf-8")
    return index
