"""What a setting of the lesson still has to compute, computed part by part with its progress
(the explorer's ``work``: ``explore(..., work=pending)`` shows it as a progress bar). A setting
whose parts are all cached reports nothing."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ...params import validate_all
from .. import _base
from . import experiment, growth, store, table


def _parts(params: dict[str, Any]) -> list[tuple[str, int, Callable[[Callable[[], None]], Any]]]:
    """The parts of ``params`` not cached yet: (what, units of work, compute(tick)), in the
    order the lesson computes them; a part of ``units`` > 1 calls ``tick`` after each unit."""
    from . import LESSON

    p = validate_all(LESSON.params, params, "lesson 'training_drift'")
    model, lr, steps, seed = p["model"], p["lr"], p["steps"], p["seed"]
    shown = "one-ulp" if experiment.unavailable(p["perturbation"]) else p["perturbation"]
    ref = (model, seed, lr, min(experiment.REFERENCE_STEPS[model], steps))
    traj = (model, shown, lr, steps, seed)
    out: list[tuple[str, int, Callable[[Callable[[], None]], Any]]] = []
    if not store.is_cached("reference", experiment.reference_key(*ref)):
        out.append(("the mpmath reference", 1, lambda _t: experiment.reference(*ref)))
    if not store.is_cached("trajectory", experiment.trajectory_key(*traj)):
        out.append(("the two runs", 1, lambda _t: experiment.trajectories(*traj)))
    if not store.is_cached("study", growth.STUDY_KEY):
        out.append(("the stability study", 1, lambda _t: growth.study()))
    if not store.is_cached("table", table.NUMPY_KEY):
        out.append(("the diversity table", table.work(), lambda t: table.numpy_rows(t)))
    if not _base.missing_part(("torch",)):
        torch = sys.modules.get("torch")
        if torch is None or not store.is_cached("framework", table.framework_key(torch)):
            out.append(("the framework row (torch)", 1, lambda _t: _framework()))
    return out


def _framework() -> Any:
    from ... import backends

    return table.framework_row(backends.load("torch"))


def pending(params: dict[str, Any], report: Callable[[int, int, str], None]) -> None:
    """Compute what ``params`` lacks, calling ``report(done, total, what)`` before each part
    and after each unit of work (never where every part is cached)."""
    parts = _parts(params)
    total, done = sum(units for _, units, _ in parts), 0
    for what, units, compute in parts:
        report(done, total, what)
        compute(_counter(report, done, total, what))
        done += units


def _counter(
    report: Callable[[int, int, str], None], done: int, total: int, what: str
) -> Callable[[], None]:
    """A tick that reports one more unit of ``what`` done each time it is called."""
    at = [done]

    def tick() -> None:
        at[0] += 1
        report(at[0], total, what)

    return tick
