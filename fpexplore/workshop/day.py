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
    """A part a laptop may lack: how a child interpreter is made to lack it (``env``: variables
    set, ``"PATH"`` without ``java``), the claim parts `hidden` hides, and the lessons that show
    it."""

    what: str
    parts: tuple[str, ...]
    lessons: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    no_java: bool = False


MISSING: tuple[Missing, ...] = (
    Missing("Java (no JVM, no DJL jars)", ("java", "djl", "java run", "djl run", "java bound"),
            ("summation_order",), no_java=True),
    Missing("a GPU (CUDA)", ("cuda", "tf32 card"), ("tf32",), (("CUDA_VISIBLE_DEVICES", ""),)),
    Missing("the C++ build (LibTorch program)", ("libtorch",), ("libtorch_vs_pytorch",),
            (("FPEXPLORE_LIBTORCH_EXE", "/nonexistent/fpexplore-libtorch"),)),
)  # fmt: skip

#: what a section shows: (rows that did not run: (row, why and the fix); the number of rows
#: that ran; claims "not checked": (text, why))
Shown = tuple[list[tuple[str, str]], int, list[tuple[str, str]]]


def shown_by(comparison: Any) -> Shown:
    """The rows a run could not give (each ``Unavailable`` with its fix), how many it gave, and
    its claims "not checked"."""
    rows = [(o.implementation, o.unavailable or "") for o in comparison.outcomes if not o.ran]
    ran = sum(1 for o in comparison.outcomes if o.ran)
    claims = [(c.text, c.reason) for c in comparison.claims.values() if c.holds is None]
    return rows, ran, claims


def _path_without_java(folder: Path) -> str:
    """A PATH with every command of this one except ``java`` (links in ``folder``)."""
    import os

    folder.mkdir(parents=True, exist_ok=True)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for name in os.listdir(entry):
            link = folder / name
            if name != "java" and not link.exists() and not link.is_symlink():
                link.symlink_to(Path(entry) / name)
    return str(folder)


def without(m: Missing, lesson: str, timeout: float = 600.0) -> Shown:
    """``lesson`` at its quick parameters in a fresh interpreter that lacks ``m`` (its
    environment, and `hidden` for the claims' parts): what a laptop without it shows."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    script = (
        "import json, sys\n"
        "from fpexplore.lessons import get\n"
        "from fpexplore.lessons._base import hidden\n"
        "from fpexplore.workshop.day import shown_by\n"
        "name, parts = sys.argv[1], sys.argv[2:]\n"
        "with hidden(*parts):\n"
        "    c = get(name).run(**dict(get(name).quick))\n"
        "print(json.dumps(shown_by(c)))\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MPLBACKEND="Agg", **dict(m.env))
        if m.no_java:
            env["PATH"] = _path_without_java(Path(tmp) / "bin")
            env.pop("JAVA_HOME", None)
        argv = [sys.executable, "-c", script, lesson, *m.parts]
        proc = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=timeout, check=True
        )
    rows, ran, claims = json.loads(proc.stdout.strip().splitlines()[-1])
    return [tuple(r) for r in rows], ran, [tuple(c) for c in claims]


def no_avx512(flags: frozenset[str] | None = None) -> dict[str, Any]:
    """What notebook 12 shows on a CPU without AVX-512: this CPU's flags with every
    ``avx512*`` flag taken out, and the configurations it can and cannot take (`lacking`)."""
    from ..lessons.cpu_dispatch import configs_here, not_taken
    from ..probe.cpu import cpu_flags

    here = cpu_flags() if flags is None else flags
    less = frozenset(f for f in here if not f.startswith("avx512"))
    return {"taken": configs_here(less), "not_taken": not_taken(less),
            "here_has": any(f.startswith("avx512") for f in here)}  # fmt: skip


def troubleshooting(run: Callable[[Missing, str], Shown] | None = None) -> str:
    """What a laptop without each of `MISSING` shows: each lesson run at its quick parameters
    in a fresh interpreter that lacks the part: the rows it gets (Unavailable, with the fix)
    and the claims that say it is missing; then notebook 12's configurations on a CPU
    without AVX-512."""
    run = run or without
    sections = []
    for m in MISSING:
        for name in m.lessons:
            rows, ran, claims = run(m, name)
            sections.append((m, name, notebook_of(name), rows, ran, claims))
    return render("kit_troubleshooting.html", title="Troubleshooting", body_class="fpx-kit",
                  sections=sections, avx=no_avx512())  # fmt: skip


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
