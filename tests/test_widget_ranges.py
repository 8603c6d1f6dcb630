"""Every explorer of the series, moved over the whole range of each of its controls (Python side,
headless): no claim fails and no error panel appears at any setting a student can reach.

Each control is moved alone from the lesson's quick start (the others stay there), to both ends
of a slider, a point inside, and every option of a menu; the explorer's own update runs, as on a
release in the browser. A claim that cannot be meaningful at a setting must say "not checked"
with its reason, never ✘. A combination of in-range controls that the lesson does not take (a
crop larger than the image) shows a calm note naming what it takes, not an error panel.
"""

from __future__ import annotations

import time

import pytest

from fpexplore.lessons import get
from fpexplore.widgets import explore
from fpexplore.widgets.explorer import controls_for

#: the explorers the notebooks show, with the start values they are shown with
EXPLORERS = {
    "summation_order": {},  # 01
    "rng_seeds": {},  # 02
    "train_vs_eval": {"runs": 5},  # 03
    "djl_normalization": {},  # 05
    "tf_vs_torch": {},  # 06
    "cpu_dispatch": {},  # 12
}
#: options visited per control where each option starts a fresh interpreter: the first ones
#: (this machine, then switches); every switch's claims run in test_claims_any_machine
OPTION_SAMPLE = {"cpu_dispatch": 4}
BUDGET_S = 240  # one explorer, on a slow shared CPU (each but cpu_dispatch takes < 30 s)


def _positions(spec, control, sample=None):
    """The settings to visit: every option (the first ``sample`` of them where given), or the
    ends of a slider and points inside."""
    if spec.options:
        return list(spec.options)[:sample]
    if spec.widget == "Checkbox":
        return [True, False]
    if spec.widget == "Text":
        return []
    low, high = control.min, control.max
    if spec.widget == "FloatLogSlider":
        return [control.base**low, control.base**high, control.base ** ((low + high) / 2)]
    if spec.widget in ("IntSlider", "BoundedIntText"):
        mid = (low + high) // 2
        return sorted({low, low + 1, min(low + 4, high), mid, high})
    step = getattr(control, "step", 0) or 0
    inside = round((low + 0.855 * (high - low)) / step) * step if step else (low + high) / 2
    return [low, high, min(max(inside, low), high)]


def _failures(box):
    status, table = box.children[2], box.children[3]
    comparison = box.state["comparison"]
    bad = []
    if status.value.strip() and "fpx-limit" not in status.value:
        bad.append(f"error panel: {status.value[:300]}")
    if comparison is not None:
        for key, claim in comparison.claims.items():
            if claim.holds is False:
                bad.append(f"claim {key} fails: {claim.text[:200]}")
    if "FAILS" in table.value and not bad:
        bad.append("the table reports a failure")
    return bad


@pytest.mark.timeout(BUDGET_S + 120)
@pytest.mark.parametrize(
    "name",
    # cpu_dispatch starts a fresh interpreter per configuration
    [pytest.param(n, marks=pytest.mark.slow) if n == "cpu_dispatch" else n for n in EXPLORERS],
)
def test_every_control_over_its_range(name):
    lesson = get(name)
    start = {**(lesson.quick or {}), **EXPLORERS[name]}
    start = {k: v for k, v in start.items() if k in {p.name for p in lesson.params}}
    box = explore(lesson, **start)
    specs = controls_for(lesson, **start)
    assert len(specs) == len(box.children[1].children)
    problems = []
    t0 = time.perf_counter()
    for i, spec in enumerate(specs):
        # a control declared per value of another is rebuilt when that one moves: fetch it anew
        control = box.children[1].children[i]
        home = control.value
        for value in _positions(spec, control, OPTION_SAMPLE.get(name)):
            if value == control.value:
                continue
            control.value = value  # the explorer's update runs on the change
            if control.value != value and not spec.options:
                value = control.value  # the widget snapped it to a notch
            problems += [f"{spec.name}={value!r}: {p}" for p in _failures(box)]
        control.value = home
    assert not problems, f"{name}:\n" + "\n".join(problems)
    assert time.perf_counter() - t0 < BUDGET_S
