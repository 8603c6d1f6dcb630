"""The workshop plans, whose every slot is timed from the series' map (`fpexplore.series`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..series import INDEX_MINUTES, NOTEBOOKS, notebook
from ..templates import render

#: the checkout (the notebooks, data/ and the recorded runs are read from it)
ROOT = Path(__file__).resolve().parents[2]
#: a notebook's collapsed answer (markdown)
ANSWER = re.compile(r"<details><summary>Answer</summary>(.*?)</details>", re.S)


def binder_note() -> str:
    """Where Binder is, in words: the placeholder is said to be one (no public copy yet)."""
    from ..paths import BINDER_PLACEHOLDER, BINDER_URL

    if BINDER_URL == BINDER_PLACEHOLDER:
        return (
            "Binder: not published yet (the link in the README is a placeholder; a course copy "
            "sets its own with FPEXPLORE_BINDER_URL): until a course publishes one, use laptops"
        )
    return f"Binder: {BINDER_URL}"


@dataclass(frozen=True)
class Slot:
    """A slot of a plan: notebooks at their core or full time ("pick" takes one of them: the
    slot lasts as long as the longest), the index's parts, or a break."""

    what: str
    notebooks: tuple[str, ...] = ()
    time: str = "core"  # "core" or "full"
    pick: bool = False
    index: tuple[str, ...] = ()
    break_minutes: int = 0
    goal: str = ""  # what the class can do after the slot (the run sheet says it)

    @property
    def minutes(self) -> int:
        times = [getattr(notebook(k), "minutes" if self.time == "full" else "core")
                 for k in self.notebooks]  # fmt: skip
        work = (max(times) if self.pick else sum(times)) if times else 0
        return work + sum(INDEX_MINUTES[p] for p in self.index) + self.break_minutes


@dataclass(frozen=True)
class Plan:
    title: str
    minutes: int  # the length the plan promises; `check` holds the slots to it
    slots: tuple[Slot, ...]
    after: tuple[str, ...] = ()  # notebooks for afterwards (not timed)

    def check(self) -> None:
        total = sum(s.minutes for s in self.slots)
        if total != self.minutes:
            raise ValueError(f"{self.title}: slots sum to {total} min, not {self.minutes}")


PLANS: tuple[Plan, ...] = (
    Plan(
        "2 hours (one 10-minute break, on laptops)",
        120,
        (
            Slot("the question, the shape of a Comparison, the myths table", index=("intro",),
                 goal="say what a result is measured against, and in which unit"),
            Slot("bits, rounding, ULPs: type numbers into the float-bits widget", ("00",),
                 goal="read a float's bits and count an error in ULPs"),
            Slot("summation order: 10,000 × 0.0001, emulators, error growth", ("01",),
                 goal="explain why np, torch and a Java loop give different sums"),
            Slot("seeds across stacks, or train vs eval (pick one by audience)", ("02", "03"),
                 pick=True, goal="tell a different algorithm from a different seed or mode"),
            Slot("break", break_minutes=10),
            Slot("TensorFlow vs PyTorch: operator defaults", ("06",),
                 goal="find the default that makes two frameworks differ"),
            Slot("GPU effects from the recorded runs: TF32, or CPU vs accelerator (pick one)",
                 ("07", "08"), pick=True, goal="say which GPU differences a flag removes"),
            Slot("which myths held; the tools for your own models", index=("myths",),
                 goal="name the tool to run on their own model tomorrow"),
        ),
        after=("04", "05", "09", "10", "11", "12", "13"),
    ),
    Plan(
        "90 minutes (one framework at a time, on laptops)",
        90,
        (
            Slot("the question, the shape of a Comparison, this page's myths table",
                 index=("intro",), goal="say what a result is measured against, and in which unit"),
            Slot("bits, rounding, ULPs: type numbers into the float-bits widget", ("00",),
                 goal="read a float's bits and count an error in ULPs"),
            Slot("summation order: the classic 10,000 × 0.0001, emulators, error growth",
                 ("01",), goal="explain why np, torch and a Java loop give different sums"),
            Slot("seeds across stacks, or train vs eval (pick one by audience)", ("02", "03"),
                 pick=True, goal="tell a different algorithm from a different seed or mode"),
            Slot("GPU effects from the recorded runs: TF32, or CPU vs accelerator (pick one)",
                 ("07", "08"), pick=True, goal="say which GPU differences a flag removes"),
            Slot('"in practice" summaries; which myths held', index=("myths",),
                 goal="say which of the myths held here, and why"),
        ),
        after=("04", "05", "06", "09", "10", "11", "12", "13"),
    ),
    Plan(
        "Half a day (3.5 hours with two 15-minute breaks)",
        210,
        (
            Slot("floats and sums: the question, formats, rounding, summation order",
                 ("00", "01"), index=("intro",),
                 goal="count an error in ULPs; explain why two sums of the same numbers differ"),
            Slot("randomness and modes: seeds, weight init, dropout, BatchNorm", ("02", "03"),
                 goal="tell a different algorithm from a different seed or mode"),
            Slot("break", break_minutes=15),
            Slot("porting between stacks: DJL preprocessing, TensorFlow vs PyTorch",
                 ("05", "06"), goal="find the stage or default where two stacks part, and fix it"),
            Slot("break", break_minutes=15),
            Slot("accelerators: determinism flags, TF32, then CPU vs GPU or LibTorch (pick)",
                 ("04", "07"), goal="say which GPU differences a flag removes, and at what cost"),
            Slot("", ("08", "09"), pick=True,
                 goal="tell a device or build difference from a bug, within a rounding bound"),
            Slot("wrap-up: which myths held; the tools for your own models", index=("myths",),
                 goal="name the tool to run on their own model tomorrow"),
        ),
        after=("10", "11", "12", "13"),
    ),
)  # fmt: skip


def map_html(here: Path | None = None) -> str:
    """The index's map: every notebook, what it teaches, what it needs, how long it takes."""
    here = Path.cwd() if here is None else here
    notebooks = [(nb, (here / nb.file).exists()) for nb in NOTEBOOKS]
    return render("workshop_map.html", notebooks=notebooks)


def plan_html(plan: Plan) -> str:
    """One plan as a table whose times run from the map's estimates."""
    plan.check()
    slots, start = [], 0
    for s in plan.slots:
        slots.append((s, start, start + s.minutes, [notebook(k) for k in s.notebooks]))
        start += s.minutes
    after = [notebook(k) for k in plan.after]
    return render("workshop_plan.html", plan=plan, slots=slots, after=after)
