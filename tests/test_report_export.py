"""`fpexplore report` and `fpexplore export` without a browser: grids, refusals, crashes, pages."""

from __future__ import annotations

import re

import pytest

from fpexplore import export, page, report
from fpexplore.errors import BackendUnavailable, InvalidParameter
from fpexplore.lessons import Lesson
from fpexplore.params import Flag, Interval, Options, Text
from fpexplore.result import Claim, Comparison, Outcome


def _compute(x: int = 3) -> Comparison:
    return Comparison(
        lesson="toy",
        params={"x": x},
        truth=None,
        outcomes=(
            Outcome("ran", "numpy", value=float(x)),
            Outcome.missing("absent", "torch", "install torch: pip install torch"),
        ),
        claims={
            "a": Claim("x is positive", x > 0),
            "b": Claim("x is large", x > 100),
            "c": Claim("torch agrees", None, "torch is missing: pip install torch"),
        },
        explanation="Toy explanation paragraph.",
    )


def _figure(c: Comparison):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, c.params["x"]])
    return fig


TOY = Lesson(
    "toy",
    "A toy lesson",
    "for the page tests",
    (Interval("x", 3, "a number", 1, 1000, integer=True, log=True),),
    _compute,
    figure=_figure,
)


MISSING_FIX = "pip install torch"


def _raises(exc: Exception):
    def compute(**_):
        raise exc

    return Lesson("broken", "Broken", "raises", (), compute)


def test_grid_per_kind_of_parameter() -> None:
    assert export.grid(Options("o", "b", "", ("a", "b", "c")), "b") == ("a", "b", "c")
    assert export.grid(Flag("f", False, ""), False) == (False, True)
    assert export.grid(Text("t", "x", ""), "x") == ()
    log = export.grid(Interval("n", 1000, "", 1, 10**7, integer=True, log=True), 1000)
    assert 1000 in log and min(log) >= 1 and max(log) <= 10**7
    assert all(isinstance(v, int) for v in log) and len(log) == 5
    lin = export.grid(Interval("p", 0.5, "", 0.0, 1.0), 0.3, points=5)
    assert lin == (0.0, 0.25, 0.3, 0.5, 0.75, 1.0)


def test_report_page_counts_claims_and_survives_refusals_and_crashes() -> None:
    runs = [
        report._run_one(TOY, {"x": 5}),
        report._run_one(_raises(BackendUnavailable("torch", "not installed", MISSING_FIX)), {}),
        report._run_one(_raises(ValueError("a bug")), {}),
    ]
    assert [r.crashed for r in runs] == [False, False, True]
    assert runs[0].counts == {"holds": 1, "fails": 1, "not checked": 1}
    html = report.build(runs)
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    assert "1 holds" in html and "1 fails" in html and "1 not checked" in html
    assert "2 lesson run(s) did not run" in html
    assert "torch is unavailable: not installed To fix it, run: pip install torch" in html
    assert "ValueError: a bug" in html and "crashed" in html
    assert "Toy explanation paragraph." in html
    assert html.count("data:image/png;base64,") == 1
    assert not re.search(r"""(src|href)=['"]https?:""", html)  # self-contained
    # this machine's fingerprint, and what separates it from the machines the series ships
    assert "This machine's fingerprint" in html and "torch:cpu:softmax" in html
    assert html.count("<h3>against ") >= 3


def test_report_command_fails_only_on_a_crash(tmp_path, monkeypatch) -> None:
    broken = _raises(ValueError("a bug"))
    lessons = {"toy": TOY, "broken": broken}
    monkeypatch.setattr("fpexplore.lessons.get", lessons.__getitem__)
    monkeypatch.setattr("fpexplore.backends.probe_all", list)

    import argparse

    args = argparse.Namespace(
        out=str(tmp_path / "r.html"), lesson=["toy"], newest_record_only=True, no_progress=True
    )
    assert report.command(args) == 0
    args.lesson = ["toy", "broken"]
    assert report.command(args) == 1
    assert "ValueError: a bug" in (tmp_path / "r.html").read_text()


def test_export_refuses_an_unknown_vary_and_too_many_values(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("fpexplore.lessons.get", {"toy": TOY}.__getitem__)
    with pytest.raises(InvalidParameter, match="vary") as err:
        export.export("toy", tmp_path / "p.html", vary="nope")
    assert "nope" in str(err.value) and "x" in str(err.value)
    with pytest.raises(InvalidParameter, match="values"):
        export.export("toy", tmp_path / "p.html", values=list(range(1, 20)))
    with pytest.raises(InvalidParameter, match="x"):
        export.export("toy", tmp_path / "p.html", {"x": 0})


def test_export_static_page_is_self_contained(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("fpexplore.lessons.get", {"toy": TOY}.__getitem__)
    path = export.export("toy", tmp_path / "p.html", {"x": 7}, interactive=False)
    html = path.read_text()
    assert "x=7" in html and page.claim_counts(_compute(7))["holds"] == 1
    assert html.count("data:image/png;base64,") == 1 and "widget-state" not in html
    assert "Toy explanation paragraph." in html


def test_export_embeds_one_precomputed_view_per_value(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("fpexplore.lessons.get", {"toy": TOY}.__getitem__)
    path = export.export("toy", tmp_path / "p.html", {"x": 10}, values=[1, 10, 100], progress=False)
    html = path.read_text()
    assert "application/vnd.jupyter.widget-state+json" in html
    assert "application/vnd.jupyter.widget-view+json" in html
    # the static run plus one figure per pre-computed value (inside the widget state)
    assert html.count("data:image/png;base64,") == 4
    assert "SelectionSliderModel" in html and "StackModel" in html and "LinkModel" in html
