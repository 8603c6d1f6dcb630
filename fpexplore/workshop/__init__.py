"""The workshop kit: the series' map and the plans that are timed from it, one page per
notebook (handout and facilitator notes), slides made by `fpexplore export`, the pre-workshop
check (``fpexplore doctor --workshop``), and exercise checks that Run All keeps collapsed.

The timings are declared once, in `NOTEBOOKS` (minutes to work a notebook through, and the
shorter "core": the motivating example and its widget). A plan's slots name notebooks and which
of the two times they take; a slot's minutes are summed from the map, never typed beside it.
"""

from __future__ import annotations

from ..series import NOTEBOOKS, Notebook
from .answers import hidden_answer
from .plan import PLANS, Plan, Slot, binder_note, map_html, plan_html

__all__ = [
    "NOTEBOOKS",
    "PLANS",
    "Notebook",
    "Plan",
    "Slot",
    "binder_note",
    "hidden_answer",
    "map_html",
    "plan_html",
]
