"""Widgets: controls from declared parameters (every lesson), the float-bits table, the views."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from fpexplore import Claim, Comparison, formats
from fpexplore.errors import InvalidParameter
from fpexplore.lessons import Lesson, all_lessons
from fpexplore.params import Flag, Interval, Options, Text
from fpexplore.widgets.explorer import control_for, controls_for
from fpexplore.widgets.float_bits_view import float_bits_html, float_bits_table, parse_exact

LESSONS = all_lessons()


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_every_lesson_gets_a_control_per_parameter(name):
    lesson = LESSONS[name]
    specs = controls_for(lesson)
    assert [s.name for s in specs] == [p.name for p in lesson.params]
    for spec, param in zip(specs, lesson.params, strict=True):
        assert param.validate(spec.value) == spec.value
        if spec.options:
            assert spec.value in spec.options
        if "min" in spec.settings and spec.widget != "FloatLogSlider":
            assert spec.settings["min"] <= spec.value <= spec.settings["max"]
        spec.build()  # ipywidgets accepts the settings


def test_control_kinds():
    assert control_for(Flag("f", True)).widget == "Checkbox"
    dd = control_for(Options("o", "b", choices=("a", "b", 1)))
    assert dd.widget == "Dropdown" and dd.options == ("a", "b", 1)
    assert control_for(Text("t", "cpu")).widget == "Text"
    assert control_for(Interval("k", 3, low=1, high=64, integer=True)).widget == "IntSlider"
    seed = control_for(Interval("seed", 42, low=0, high=2**32 - 1, integer=True))
    assert seed.widget == "BoundedIntText"
    n = control_for(Interval("n", 300, low=1, high=10**7, integer=True, log=True))
    assert n.widget == "NotchedIntSlider"
    assert n.options[0] == 1 and n.options[-1] == 10**7 and 300 in n.options
    assert {10, 20, 50, 1000} <= set(n.options) and list(n.options) == sorted(n.options)
    x = control_for(Interval("x", 1e-3, low=1e-6, high=1.0, log=True))
    assert x.widget == "FloatLogSlider" and x.settings["min"] == pytest.approx(-6)
    lin = control_for(Interval("p", 0.5, low=0, high=1))
    assert lin.widget == "FloatSlider" and lin.settings["max"] == 1
    for spec in (dd, n, x, lin, seed):
        widget = spec.build()
        assert widget.value == spec.value
        if hasattr(widget, "continuous_update"):
            assert widget.continuous_update is False


def _toy_lesson(calls: list[dict]) -> Lesson:
    def compute(n: int, mode: str, loud: bool) -> Comparison:
        calls.append({"n": n, "mode": mode, "loud": loud})
        return Comparison("toy", {"n": n}, None, (), {"n": Claim(f"n is {n}", n > 0)})

    return Lesson(
        "toy",
        "A toy",
        "for tests",
        (
            Interval("n", 10, "count", low=1, high=1000, integer=True, log=True),
            Options("mode", "a", "mode", choices=("a", "b")),
            Flag("loud", False, "flag"),
        ),
        compute,
    )


def test_overrides_are_validated():
    lesson = _toy_lesson([])
    assert controls_for(lesson, n=200)[0].value == 200
    with pytest.raises(InvalidParameter, match="'n'"):
        controls_for(lesson, n=0)
    with pytest.raises(InvalidParameter, match="its parameters are n, mode, loud"):
        controls_for(lesson, m=3)


def test_explore_reruns_the_lesson_when_a_control_changes():
    from fpexplore.widgets import explore

    calls: list[dict] = []
    box = explore(_toy_lesson(calls), n=20)
    assert calls == [{"n": 20, "mode": "a", "loud": False}]
    controls = {c.description: c for c in box.children[1].children}
    controls["mode"].value = "b"
    controls["n"].value = 50
    assert calls[-1] == {"n": 50, "mode": "b", "loud": False}
    assert "n is 50" in box.children[3].value
    assert box.state["comparison"].params == {"n": 50, "mode": "b", "loud": False}


def test_a_number_typed_into_a_log_slider_reruns_the_lesson():
    """A log-scale integer (notebook 01's n) is a slider over 1-2-5 notches beside a number
    box: a number typed there and entered reruns the table at that number (a SelectionSlider's
    own readout only relabels itself), and the slider moves to the nearest notch."""
    from fpexplore.widgets import explore

    calls: list[dict] = []
    box = explore(_toy_lesson(calls), n=20)
    n = {c.description: c for c in box.children[1].children}["n"]
    assert n.slider.readout is False and n.box.continuous_update is False
    n.box.value = 300  # typed, then Enter: not one of the notches
    assert calls[-1]["n"] == 300 and n.value == 300 and "n is 300" in box.children[3].value
    assert n.slider.value == 200 and len(calls) == 2  # nearest notch shown, nothing else run
    n.slider.value = 500  # a drag to a notch runs it and shows it in the box
    assert calls[-1]["n"] == 500 and n.box.value == 500 and "n is 500" in box.children[3].value


def test_explore_computes_the_next_settings_ahead(monkeypatch):
    """In a kernel (an event loop), the settings one step away are computed ahead, nearest
    first (in the cell, for a few seconds; the rest once the views were idle);
    moving there runs nothing and shows the same result as computing it."""
    import asyncio

    from fpexplore.widgets import explore, explorer

    monkeypatch.setattr(explorer, "AHEAD_IDLE_S", 0.2)
    monkeypatch.setattr(explorer, "AHEAD_IN_CELL_S", 0.0)  # all in idle time
    monkeypatch.setattr(explorer, "_heard", [True])  # a browser has moved a widget
    calls: list[dict] = []

    async def session() -> tuple[str, int, int]:
        box = explore(_toy_lesson(calls), n=20)
        in_cell = len(calls)
        await asyncio.sleep(0.8)  # idle: the farther neighbours are computed
        ahead = len(calls)
        controls = {c.description: c for c in box.children[1].children}
        controls["n"].value = 50  # the slider's next notch (1-2-5 steps)
        shown = box.children[3].value
        controls["loud"].value = True  # not computed ahead (two controls away)
        return shown, in_cell, ahead

    shown, in_cell, ahead = asyncio.run(session())
    first = {"n": 20, "mode": "a", "loud": False}
    assert calls[:4] == [
        first,
        {**first, "n": 50},  # every control's step forward, then its step back
        {**first, "mode": "b"},
        {**first, "loud": True},
    ]
    assert in_cell == 1 and calls[4] == {**first, "n": 10} and ahead == 5
    assert calls[5:] == [{"n": 50, "mode": "a", "loud": True}]  # only the new setting ran
    assert "n is 50" in shown


def test_headless_kernel_computes_nothing_ahead_in_idle_time(monkeypatch):
    """With no browser moving widgets (a notebook run headless), idle time stays idle."""
    import asyncio

    from fpexplore.widgets import explore, explorer

    monkeypatch.setattr(explorer, "AHEAD_IDLE_S", 0.2)
    monkeypatch.setattr(explorer, "AHEAD_IN_CELL_S", 0.0)
    monkeypatch.setattr(explorer, "_heard", [False])
    calls: list[dict] = []

    async def session() -> None:
        explore(_toy_lesson(calls), n=20)
        await asyncio.sleep(0.8)

    asyncio.run(session())
    assert calls == [{"n": 20, "mode": "a", "loud": False}]


def test_moves_between_cells_say_a_browser_is_there(monkeypatch):
    """`hear` uses the controls' public observe (ipywidgets' message handling is not
    replaced): a change between cells (a browser's message) is a browser's move; a change
    made by a running cell delays computing ahead but says nothing about a browser."""
    import ipywidgets

    from fpexplore.widgets import explorer

    handle = ipywidgets.Widget._handle_msg
    monkeypatch.setattr(explorer, "_heard", [False])
    monkeypatch.setattr(explorer, "_activity", [0.0])
    monkeypatch.setattr(explorer, "_in_cell", [True])
    slider = ipywidgets.IntSlider(value=1, min=0, max=9)
    explorer.hear(slider)
    slider.value = 2  # a cell sets it
    assert explorer._activity[0] > 0 and explorer._heard == [False]
    explorer._in_cell[0] = False
    slider.value = 3  # between cells: from the browser
    assert explorer._heard == [True]
    assert ipywidgets.Widget._handle_msg is handle


def test_cells_are_told_apart_through_ipython_events(monkeypatch):
    from IPython.core.events import EventManager

    from fpexplore.widgets import explorer

    class Shell:
        def __init__(self):
            self.events = EventManager(self, {"pre_run_cell": None, "post_run_cell": None})

    shell = Shell()
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    monkeypatch.setattr(explorer, "_in_cell", [None])
    explorer._watch_cells()
    assert explorer._in_cell == [True]  # the cell building the view runs
    shell.events.trigger("post_run_cell", None)
    assert explorer._in_cell == [False]
    shell.events.trigger("pre_run_cell", None)
    assert explorer._in_cell == [True]
    explorer._watch_cells()  # once per shell
    assert len(shell.events.callbacks["post_run_cell"]) == 1


# --------------------------------------------------------------------------------------------
# the float-bits table


def test_parse_exact():
    assert parse_exact("0.1") == Fraction(1, 10)
    assert parse_exact(" 1/3 ") == Fraction(1, 3)
    assert parse_exact("1e-40") == Fraction(1, 10**40)
    assert parse_exact("0x1.8p3") == 12
    assert parse_exact("16_777_217") == 16777217
    assert math.copysign(1, parse_exact("-0")) == -1
    assert math.isnan(parse_exact("nan")) and parse_exact("-inf") == -math.inf
    for bad in ("abc", "1/0", "", "1e", None):
        with pytest.raises(InvalidParameter, match="'text'"):
            parse_exact(bad)


def test_float_bits_table_point_one():
    rows = float_bits_table("0.1")
    assert [r.format for r in rows] == list(formats.names())
    for r in rows:
        f = formats.get(r.format)
        assert len(r.sign) == 1 and len(r.exponent) == f.ebits and len(r.mantissa) == f.mbits
        assert int(r.sign + r.exponent + r.mantissa, 2) == formats.round_bits(Fraction(1, 10), f)
        assert not r.exact and abs(r.ulp_error) <= 0.5 and r.kind == "normal"
        exact_err = Fraction(r.stored) - Fraction(1, 10)
        assert float(r.error) == pytest.approx(float(exact_err), rel=1e-5)
        assert r.ulp_error == pytest.approx(float(exact_err / Fraction(r.ulp)), rel=1e-9)
        assert r.next_down < r.stored < r.next_up
        assert r.next_up - r.stored == r.ulp
        assert formats.round_exact(Fraction(r.shortest), f) == r.stored
    assert rows[-1].shortest == "0.1" and rows[-1].stored == 0.1


def test_float_bits_table_classic_values():
    by = {r.format: r for r in float_bits_table("16777217")}
    assert by["binary32"].stored == 16777216 and "tie" in by["binary32"].note
    assert by["binary64"].exact and by["binary16"].stored == math.inf
    assert "overflow" in by["binary16"].note and by["binary16"].ulp_error == math.inf
    by = {r.format: r for r in float_bits_table("65504")}
    assert by["binary16"].exact and by["binary16"].shortest == "65504"
    assert by["binary16"].mantissa == "1" * 10 and by["binary16"].exponent == "11110"
    by = {r.format: r for r in float_bits_table("1e-40")}
    assert by["binary16"].stored == 0 and "underflow" in by["binary16"].note
    assert by["binary32"].kind == "subnormal" and by["bfloat16"].kind == "subnormal"
    assert by["binary64"].kind == "normal"
    by = {r.format: r for r in float_bits_table("nan")}
    assert all(r.kind == "nan" and r.exact for r in by.values())
    by = {r.format: r for r in float_bits_table("-0")}
    assert all(r.sign == "1" and r.kind == "zero" for r in by.values())


def test_float_bits_html_and_widget():
    rows = float_bits_table("1/3")
    page = float_bits_html(rows)
    assert page.count("<tr>") == 6 and rows[0].exponent in page
    from fpexplore.widgets import float_bits

    box = float_bits("0.1")
    text, slider, out = box.children
    assert "binary64" in out.value and "1001100110011001100110011001100110011001100110011010" in (
        out.value.replace("</span> ", "")
        .replace('<span class="fpx-bit2">', "")
        .replace("<wbr>", "")
    )
    assert "10011001<wbr>10011001" in out.value  # a long field wraps between its bytes
    text.value = "not a number"
    assert "The &#39;text&#39; parameter" in out.value  # the message, not a traceback
    slider.value = 1e-40
    assert text.value == repr(float(slider.value)) and "subnormal" in out.value
    assert np.isclose(float(text.value), 1e-40, rtol=1e-2)


def test_float_bits_widget_text_and_slider_stay_in_step():
    from fpexplore.widgets import float_bits

    text, slider, out = float_bits("0.1").children
    assert slider.value == pytest.approx(0.1)
    text.value = "1/3"  # typing moves the slider and keeps the exact text
    assert slider.value == pytest.approx(1 / 3) and text.value == "1/3"
    assert "0.333251953125" in out.value  # binary16's stored value, exact decimal
    text.value = "-2.5e5"
    assert slider.value == pytest.approx(2.5e5)
    slider.value = 1000.0  # sliding types the float64 the slider holds, keeping the sign
    assert text.value == "-1000.0"
    assert float_bits_html(float_bits_table("-1000.0")) == out.value
    text.value = "inf"  # nothing to slide to: the slider stays, the table shows inf
    assert slider.value == 1000.0 and "inf" in out.value


def test_float_bits_neighbours_are_named_by_distinct_decimals():
    for text in ("0.1", "1/3", "16777217", "1e-40", "65504"):
        for r in float_bits_table(text):
            f = formats.get(r.format)
            down, up = r.neighbours
            assert float(formats.round_exact(Fraction(down), f)) == r.next_down
            if math.isfinite(r.next_up):
                assert float(formats.round_exact(Fraction(up), f)) == r.next_up
            if math.isfinite(r.stored):
                assert down != r.shortest != up
    rows = float_bits_table("0.1")
    page = float_bits_html(rows)
    for r in rows:
        assert f"{r.neighbours[0]} &lt; · &lt; {r.neighbours[1]}" in page
    down, up = rows[-1].neighbours
    assert (down, up) == ("0.09999999999999999", "0.10000000000000002")
