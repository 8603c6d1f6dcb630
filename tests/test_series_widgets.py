"""The series' widgets and command line: figures as images, menus with a value, views shown once,
updates that reuse what did not change, the table width on the command line."""

import io
from contextlib import redirect_stdout

import pytest

from fpexplore import Claim, Comparison, cli
from fpexplore.lessons import Lesson
from fpexplore.params import Interval


def _figure_lesson(calls):
    def compute(n):
        calls.append(n)
        return Comparison("fig", {"n": n}, None, (), {"even": Claim("n is even", n % 2 == 0)})

    def figure(c):
        from matplotlib.figure import Figure

        fig = Figure(figsize=(2, 1.5))
        ax = fig.add_subplot()
        ax.plot([0, c.params["n"]], [0, 1])
        ax.set_xlabel("n")
        return fig

    return Lesson(
        "fig",
        "Figure",
        "a toy with a figure",
        (Interval("n", 2, "n", low=1, high=9, integer=True),),
        compute,
        figure=figure,
    )


def test_explorer_figure_is_a_png_image_and_claims_show_what_changed():
    from fpexplore.widgets import explore

    calls = []
    box = explore(_figure_lesson(calls))
    table, plot = box.children[3], box.children[4]
    assert type(plot).__name__ == "Image" and plot.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "n is even" in table.value
    first = plot.value
    box.children[1].children[0].value = 3  # the claim changes: it is listed
    assert plot.value != first and "✘</span> n is even" in table.value
    box.children[1].children[0].value = 5  # the claim stays failed: still listed
    assert "Every one changed since the last update, is new or fails" in table.value
    assert "✘</span> n is even" in table.value
    box.children[1].children[0].value = 6  # it holds again: listed as changed
    box.children[1].children[0].value = 8  # it stays held: only counted
    assert "1 unchanged" in table.value and "n is even" not in table.value.split("Claims")[1]


def test_order_tree_menu_starts_on_all_frameworks():
    from fpexplore.widgets import order_tree

    view = order_tree.tree_view(n=8)
    which = view.children[1].children[1]
    assert which.value == order_tree.ALL and which.label == "all frameworks"
    before = view.children[2].value
    which.value = "java"
    assert view.children[2].value != before


def test_bits_view_is_returned_once_and_reuses_its_run(monkeypatch):
    import IPython.display

    from fpexplore.widgets import rng_bits

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **k: shown.append(a))
    view = rng_bits.bits_view()
    assert shown == []  # the cell that returns it displays it, once
    (seed, k), (_, b) = (h.children for h in view.children[:2])
    out = view.children[3]
    assert "torch CPU" in out.value and "Same random words?</b> yes" in out.value
    runs = len(view.cache._runs)
    k.value = 9
    b.value = "Python random"
    assert len(view.cache._runs) == runs  # k and stream changes re-read the kept run
    assert out.value.count("<tr>") == 1 + 2 * 9 and "Same random words?</b> no" in out.value
    seed.value = 7
    assert len(view.cache._runs) == runs + 1


@pytest.mark.parametrize("wide", [False, True])
def test_cli_table_width(wide):
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert cli.main(["run", "gpu_determinism", "--brief", *(["--wide"] if wide else [])]) == 0
    widest = max(len(line) for line in buf.getvalue().splitlines())
    assert (widest > 100) if wide else (widest <= 100)


def _growth_comparison():
    from types import SimpleNamespace

    from fpexplore.lessons.summation_order.growth import Growth, Point

    ns = [10, 100, 1000, 10_000]
    errors = {"sequential": [1e-8, 1e-7, float("nan"), 1e-5], "pairwise": [1e-8] * 4}
    bounds = {"sequential bound (n-1)·u": [(n - 1) * 6e-8 for n in ns]}
    growth = Growth(ns, errors, {}, bounds, 6e-8, 0, 1, "uniform", "float32", "")
    runs = {"np.sum": 2e-8, "torch.sum": 2e-8, "Java float loop": 3e-6}
    current = Point(500, runs, {}, {})
    params = SimpleNamespace(distribution="uniform", dtype="float32")
    return SimpleNamespace(data=SimpleNamespace(growth=growth, current=current), params=params)


def test_summation_figure_as_svg_marks_each_distinct_result_once():
    from fpexplore.widgets.growth_svg import growth_svg

    svg = growth_svg(_growth_comparison())
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "sequential (emulated)" in svg and "pairwise (emulated)" in svg
    # two distinct errors: two markers on the axes and two in the legend, each named
    assert svg.count("<title>np.sum = torch.sum: 2e-08</title>") == 2
    assert svg.count("<title>Java float loop: 3e-06</title>") == 2
    assert "this run (n = 500)" in svg


def test_order_tree_svg_draws_every_addition():
    from fpexplore.errors import InvalidParameter
    from fpexplore.widgets import order_tree

    svg = order_tree.tree_svg(8, "java")
    assert "7 additions, depth 7" in svg and svg.count("<title>x") == 8
    assert order_tree.tree_svg(8).count("additions, depth") == 4  # every framework order
    with pytest.raises(InvalidParameter, match="'n'"):
        order_tree.tree_svg(65)


def test_divergence_explorer_computes_cheap_neighbours_first():
    from fpexplore.diverge.widget import nearby

    plants = {"a": ("p", "q"), "b": ("q",)}
    near = nearby(
        {"model": "a", "against": "torch", "plant": "p"}, ("a", "b"), plants, ("torch", "keras")
    )
    assert near == [
        {"model": "a", "against": "torch", "plant": None},
        {"model": "a", "against": "torch", "plant": "q"},
        {"model": "b", "against": "torch", "plant": None},  # b has no "p": the menu shows none
        {"model": "a", "against": "keras", "plant": "p"},
    ]


def test_divergence_figure_as_svg_points_at_the_culprit():
    from fpexplore.diverge.report import DivergenceReport, LayerRow, Side
    from fpexplore.diverge.widget import plot_svg

    ok = Side(0.5, 2.0, 0.25, True, 0, 4, float("inf"))
    bad = Side(900.0, 2.0, 450.0, False, 3, 4, float("inf"))
    rows = (
        LayerRow("fc1", "linear", "x @ W", (4,), 8, ok, ok, 0.0, 0.0),
        LayerRow("norm", "layernorm", "eps", (4,), 4, ok, bad, 700.0, 0.0),
    )
    report = DivergenceReport(("torch", "mine"), ("1", "1"), "binary32", rows, 0.0, "toy")
    svg = plot_svg(report)
    assert svg.startswith("<svg") and "toy — diverge" in svg
    assert "first divergence: norm" in svg and "(mine)" in svg
    assert "mine at norm: adds 900 ULP, bound 2 (3 of 4 elements outside)" in svg
    agree = DivergenceReport(("torch", "mine"), ("1", "1"), "binary32", rows[:1], 0.0, "toy")
    assert "agree within rounding" in plot_svg(agree) and "first divergence" not in plot_svg(agree)
