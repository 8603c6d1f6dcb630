"""What each exercise's answer cell prints, recorded by running the notebook top to bottom
(``fpexplore record answers``): the facilitator notes show these texts as the expected numbers,
per machine, beside the answers. A record holds, per notebook, one entry per exercise in the
order of `pages.exercises`: the text the check printed (collapsed in the notebook) and, when the
cell raised, the error's first line."""

from __future__ import annotations

import argparse
import html
import json
import re
import time
from pathlib import Path
from typing import Any

from ..series import NOTEBOOKS, Notebook

#: the file a machine's record is written to, inside its folder of ``data/machines``
FILE = "answers.json"
_COLLAPSED = re.compile(r"^<details><summary>.*?</summary><pre[^>]*>(.*?)</pre></details>$", re.S)


def _src(cell: dict[str, Any]) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def answer_cells(cells: list[dict[str, Any]]) -> list[int]:
    """The index of each exercise's check cell: the first code cell after a collapsed answer
    (the cells `pages.exercises` reads its checks from)."""
    from .plan import ANSWER

    out = []
    for i, c in enumerate(cells):
        if c["cell_type"] == "markdown" and ANSWER.search(_src(c)):
            j = next((k for k in range(i + 1, len(cells)) if cells[k]["cell_type"] == "code"), None)
            if j is not None:
                out.append(j)
    return out


def printed_by(cell: dict[str, Any]) -> dict[str, str]:
    """What an executed check cell showed: the collapsed text it printed, and the error's first
    line if it raised."""
    texts, error = [], ""
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            texts.append(_src({"source": o.get("text", "")}))
        elif o.get("output_type") == "error":
            error = f"{o.get('ename', '')}: {o.get('evalue', '')}".splitlines()[0]
        else:
            shown = _src({"source": o.get("data", {}).get("text/html", "")})
            m = _COLLAPSED.match(shown.strip())
            if m:
                texts.append(html.unescape(m.group(1)))
    return {"printed": "".join(texts).rstrip("\n"), "error": error}


def run_notebook(path: Path, timeout: int = 900) -> list[dict[str, str]]:
    """Execute ``path`` in its folder (errors kept, not raised) and return what each exercise's
    check cell showed, in order."""
    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=timeout, allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )  # fmt: skip
    client.execute()
    cells = [dict(c) for c in nb.cells]
    return [printed_by(cells[j]) for j in answer_cells(cells)]


def record(notebooks: Path, label: str, keys: list[str] | None = None,
           previous: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """A record of every notebook's answer cells (``keys`` only: the others kept from
    ``previous``), with its provenance."""
    import platform

    from .. import __version__

    got = dict((previous or {}).get("notebooks", {}))
    for nb in NOTEBOOKS:
        if keys and nb.key not in keys:
            continue
        got[nb.key] = run_notebook(notebooks / nb.file)
    return {
        "label": label,
        "date": time.strftime("%Y-%m-%d"),
        "fpexplore": __version__,
        "python": platform.python_version(),
        "notebooks": got,
    }


def load_all(root: Path) -> list[dict[str, Any]]:
    """Every machine's record of answer cells under ``root/data/machines``, by folder name."""
    out = []
    for p in sorted((root / "data/machines").glob(f"*/{FILE}")):
        rec = json.loads(p.read_text(encoding="utf-8"))
        out.append({**rec, "label": rec.get("label") or p.parent.name})
    return out


def expected(nb: Notebook, records: list[dict[str, Any]]) -> list[list[tuple[str, dict[str, str]]]]:
    """Per exercise of ``nb``: (machine, what its answer cell showed) for every record."""
    n = max((len(r["notebooks"].get(nb.key, [])) for r in records), default=0)
    return [
        [(r["label"], r["notebooks"][nb.key][i]) for r in records
         if i < len(r["notebooks"].get(nb.key, []))]
        for i in range(n)
    ]  # fmt: skip


def command(args: argparse.Namespace) -> int:
    """``fpexplore record answers``: run the notebooks, write what their answer cells print."""
    from .plan import ROOT

    out = Path(args.out)
    keys = [k.strip() for k in args.only.split(",")] if args.only else None
    previous = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    rec = record(Path(args.notebooks or ROOT / "notebooks"), args.label, keys, previous)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(out)
    return 0
