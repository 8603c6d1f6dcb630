"""The pages for the day of a class: the run sheet (each plan as clock times, goals, notebooks
and the exercises to take), the pre-flight checklist, and what a laptop without Java, a GPU,
the C++ build or AVX-512 shows, rendered by running the lessons with that part hidden."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..page import render
from ..series import notebook
from .plan import PLANS, Plan


def _exercise_count(key: str, notebooks: Path) -> int:
    from .pages import exercises

    return len(exercises(notebooks / notebook(key).file))


def runsheet(plans: tuple[Plan, ...] = PLANS, notebooks: Path | None = None) -> str:
    """Every plan as a timed run sheet: start and end minute, what, goal, which notebooks and
    which exercises (all of them at full time; the first at core time)."""
    from .pages import ROOT

    folder = notebooks or ROOT / "notebooks"
    sheets = []
    for plan in plans:
        plan.check()
        rows, start = [], 0
        for slot in plan.slots:
            nbs = [notebook(k) for k in slot.notebooks]
            take = []
            for nb in nbs:
                n = _exercise_count(nb.key, folder)
                take.append(f"{nb.key}: " + (f"exercises 1–{n}" if slot.time == "full" and n > 1
                                             else "exercise 1"))  # fmt: skip
            rows.append((start, start + slot.minutes, slot, nbs, take))
            start += slot.minutes
        sheets.append((plan, rows, [notebook(k) for k in plan.after]))
    return render("kit_runsheet.html", title="Run sheet", body_class="fpx-kit", sheets=sheets)


#: what to do before the day: (when, what, the command or the place that shows it)
CHECKLIST: tuple[tuple[str, str, str], ...] = (
    ("a week before", "each laptop: install, then the check of what runs there",
     "make setup && fpexplore doctor --workshop"),
    ("a week before", "laptops that should show DJL: Java 17 and the pinned jars", "make djl"),
    ("a week before", "laptops that should show LibTorch: the C++ program", "make libtorch"),
    ("a week before", "the kit: handouts, notes, slides, run sheet", "make slides"),
    ("the day before", "the widgets' first clicks computed once", "fpexplore warm"),
    ("the day before", "print the handouts (one A4 page each) of the notebooks you take",
     "build/workshop/NN-handout.html"),
    ("on the day", "projector: slides open, a notebook run to its end", "make lab"),
    ("on the day", "Binder or a spare laptop for anyone whose check said NO",
     "fpexplore doctor --workshop"),
)  # fmt: skip


def preflight() -> str:
    """The pre-flight checklist page."""
    from .plan import binder_note

    return render("kit_preflight.html", title="Pre-flight checklist", body_class="fpx-kit",
                  items=CHECKLIST, binder=binder_note())  # fmt: skip


@dataclass(frozen=True)
class Missing:
    """A part a laptop may lack: the parts `hidden` hides, and the lessons that show it."""

    what: str
    parts: tuple[str, ...]
    lessons: tuple[str, ...]


MISSING: tuple[Missing, ...] = (
    Missing("Java (no JVM, no DJL jars)", ("java", "djl", "java run", "djl run", "java bound"),
            ("summation_order",)),
    Missing("a GPU (CUDA)", ("cuda", "tf32 card"), ("tf32",)),
    Missing("the C++ build (LibTorch program)", ("libtorch",), ("libtorch_vs_pytorch",)),
)  # fmt: skip


def troubleshooting(run: Callable[[str, dict[str, Any]], Any] | None = None) -> str:
    """What a laptop without each of `MISSING` shows: each lesson run at its quick parameters
    with the part hidden, and the rows and claims that say it is missing."""
    from ..lessons import get
    from ..lessons._base import hidden

    def quick(name: str, params: dict[str, Any]) -> Any:
        return get(name).run(**params)

    run = run or quick
    sections = []
    for m in MISSING:
        for name in m.lessons:
            with hidden(*m.parts):
                c = run(name, dict(get(name).quick))
            rows = [(o.implementation, o.unavailable) for o in c.outcomes if not o.ran]
            claims = [(cl.text, cl.reason) for cl in c.claims.values() if cl.holds is None]
            sections.append((m, name, notebook_of(name), rows, claims))
    return render("kit_troubleshooting.html", title="Troubleshooting", body_class="fpx-kit",
                  sections=sections)  # fmt: skip


def notebook_of(lesson: str) -> str:
    """The key ("01") of the notebook narrating ``lesson``."""
    from ..series import narrating

    return narrating(lesson)[:2]


def build(out: Path, keys: list[str] | None = None, slides: bool = False) -> Path:
    """The whole kit: `pages.build`'s pages and, for the whole series (no ``keys``), the run
    sheet, the pre-flight checklist and the troubleshooting page (it runs lessons)."""
    from .pages import build as build_pages

    index = build_pages(out, keys, slides)
    if not keys:
        for name, make in (("runsheet", runsheet), ("preflight", preflight),
                           ("troubleshooting", troubleshooting)):  # fmt: skip
            (out / f"{name}.html").write_text(make(), encoding="utf-8")
    return index


def command(args: argparse.Namespace) -> int:
    """``fpexplore workshop``: write the kit, print the index's path."""
    keys = [k.strip() for k in args.only.split(",")] if args.only else None
    print(build(Path(args.out), keys, slides=args.slides))
    return 0
