"""Every explorer of the series, moved over the whole range of each of its controls (Python side,
headless): no claim fails and no error panel appears at any setting a student can reach.

Each control is moved alone from the lesson's quick start (the others stay there), to both ends
of a slider, a point inside, and every option of a menu; the explorer's own update runs, as on a
release in the browser. A claim that cannot be meaningful at a setting must say "not checked"
with its reason, never ✘. A combination of in-range controls that the lesson does not take (a
crop larger than the image) shows a calm note naming what it takes, not an error panel.

The special views (the float-bits view, the addition trees, the random-bits view, the three GPU
record views, the divergence explorer) have each control moved alone over a cheap sample of its
range (a menu's options, a slider's ends and middle, a number box's ends, typical typed text):
no error shows in the view's status line and its output is drawn. Together they take under
`SPECIAL_BUDGET_S`; the divergence explorer's Keras side (Keras's import alone takes 10 to 20 s)
is a separate slow case.
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
    "training_drift": {"steps": 100},  # 13
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
    # a sweep of every control over its range (cpu_dispatch: a fresh interpreter per
    # configuration) is the slow tier's: `make check` keeps each explorer's quick checks
    [pytest.param(n, marks=[pytest.mark.slow, pytest.mark.reusable]) for n in EXPLORERS],
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


# --------------------------------------------------------------------------------------------
# the special views: the other widgets the notebooks show, each control sampled over its range

#: seconds all the special views may take together (the lessons they run included)
SPECIAL_BUDGET_S = 60
#: the float-bits view's text box: a sample of what a student types (each form it reads)
FLOAT_TEXTS = ("0.1", "-0", "1/3", "65520", "0x1.8p3", "1e-40", "-inf", "nan", "16_777_217")
_ERROR = "<p style='color:#d62728'>"


def _sample(control, stride=None):
    """A cheap sample of a control's range: a menu's or toggle's every option (every
    ``stride``-th and the last, where given), a slider's ends and middle, a number box's ends
    (a seed box: its middle is one seed like any other)."""
    if hasattr(control, "options"):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return values if stride is None else [*values[::stride], values[-1]]
    low, high = control.min, control.max
    if "Text" in type(control).__name__:
        return [low, high]
    if hasattr(control, "base"):  # FloatLogSlider: min and max are exponents
        return [control.base**low, control.base**high, control.base ** ((low + high) / 2)]
    return sorted({low, high, (low + high) // 2 if isinstance(low, int) else (low + high) / 2})


def _float_bits():
    from fpexplore.widgets import float_bits

    view = float_bits("0.1")
    text, slider, out = view.children

    def moves():
        for value in _sample(slider):
            yield "|value|", slider, value
        for value in FLOAT_TEXTS:
            yield "value", text, value

    return view, moves(), lambda: [_ERROR + "…"] if out.value.startswith(_ERROR) else []


def _tree_view():
    from fpexplore.widgets.order_tree import tree_view

    view = tree_view()
    controls = view.children[1].children
    moves = ((c.description, c, v) for c in controls for v in _sample(c))
    return view, moves, lambda: [] if "<svg" in view.children[2].value else ["no tree drawn"]


def _bits_view():
    from fpexplore.widgets import bits_view
    from fpexplore.widgets.rng_bits import _JAVA, _TF

    view = bits_view()
    (seed, k), (a, b) = view.children[0].children, view.children[1].children
    status, out = view.children[2], view.children[3]

    def moves():
        for control in (seed, k):
            for value in _sample(control):
                yield control.description, control, value
        for control in (a, b):  # the streams that start TensorFlow or a JVM run elsewhere
            for value in [s for s in _sample(control) if s not in _TF + _JAVA]:
                yield control.description, control, value

    return view, moves(), lambda: [status.value[:300]] if status.value or not out.value else []


def _gpu_view(name, stride=None):
    def build():
        from fpexplore.widgets import gpu_views

        view = getattr(gpu_views, name)()
        status, out = view.children[2], view.children[3]
        controls = view.children[1].children
        moves = (
            (c.description, c, v)
            for c in controls
            for v in _sample(c, stride if c.description == "op" else None)
        )
        return view, moves, lambda: [status.value[:300]] if status.value or not out.value else []

    return build


def _divergence(against_keras=False):
    from fpexplore.diverge import zoo
    from fpexplore.diverge.widget import explore

    view = explore("cnn", "torch", "epsilon")
    (model, plant), against = view.children[1].children, view.children[2]
    verdict, image = view.children[3], view.children[4]

    def moves():
        if against_keras:  # Keras's side (its import alone takes 10 to 20 s here): once
            yield "against", against, "keras"
            return
        for value in zoo.MODELS:  # the plant menu follows the model
            yield "model", model, value
        model.value = "cnn"
        for value in _sample(plant):
            yield "plant", plant, value

    def failures():
        bad = verdict.value.startswith(_ERROR) or "please report this" in verdict.value
        return [verdict.value[:300]] if bad or "<svg" not in image.value else []

    return view, moves(), failures


#: the special views the notebooks show (notebook: builder); the explorers are covered above
SPECIAL_VIEWS = {
    "float_bits": _float_bits,  # 00
    "tree_view": _tree_view,  # 01 (below the summation explorer)
    "bits_view": _bits_view,  # 02
    "determinism_view": _gpu_view("determinism_view", stride=4),  # 04
    "tf32_view": _gpu_view("tf32_view"),  # 07
    "accelerator_view": _gpu_view("accelerator_view"),  # 08
    "divergence": _divergence,  # 10
    "divergence_keras": lambda: _divergence(against_keras=True),  # 10, slow: not in the budget
}
_special_s: dict[str, float] = {}


@pytest.mark.timeout(SPECIAL_BUDGET_S + 120)
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[pytest.mark.slow, pytest.mark.reusable])
        if n.endswith("keras")
        else n
        for n in SPECIAL_VIEWS
    ],
)
def test_every_special_view_over_a_sample_of_its_range(name):
    t0 = time.perf_counter()
    _view, moves, failures = SPECIAL_VIEWS[name]()  # the view kept alive while it moves
    problems = [f"at the start: {p}" for p in failures()]
    visited = 0
    for label, control, value in moves:
        if value == control.value:
            continue
        control.value = value  # the view's update runs on the change, as on a release
        visited += 1
        problems += [f"{label}={value!r}: {p}" for p in failures()]
    assert visited >= 1, f"{name}: nothing moved"
    assert not problems, f"{name}:\n" + "\n".join(problems)
    if name.endswith("keras"):
        return
    _special_s[name] = time.perf_counter() - t0
    assert sum(_special_s.values()) < SPECIAL_BUDGET_S, _special_s
