"""The workshop's slides: one standalone page per notebook, 00 to 13, each with a live control
(`fpexplore.export.switch`: a control over views pre-computed when the page was made, no
kernel needed).

A lesson's slide runs the lesson at the notebook's own parameters, read from the notebook's
first call of it (``fpexplore.run("summation_order", n=10_000, ...)``): never typed here. Its
control switches the parameter the notebook itself varies most (the values its calls pass),
or, where the notebook calls the lesson once, a few values of the lesson's first parameter with
a short list. The headline is a claim that holds in this run: a failing claim is shown in the
table below, never as the slide's headline. Notebook 12's slide compares this machine with a
configuration whose bits differ (or says that none differs here). Notebook 00's slide switches
between the values the notebook types into its float table; notebook 10's between the planted
bugs of its CNN.
"""

from __future__ import annotations

import ast
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..series import NOTEBOOKS, Notebook

#: the most values a slide's control pre-computes where the notebook calls its lesson once
FALLBACK_POINTS = 4


def _code(path: Path) -> list[ast.Module]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for c in cells:
        if c["cell_type"] == "code":
            with contextlib.suppress(SyntaxError):
                out.append(ast.parse("".join(c["source"])))
    return out


def _bound(trees: list[ast.Module]) -> dict[str, Any]:
    """The notebook's names bound to a literal (``SEED = 42``)."""
    out: dict[str, Any] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    with contextlib.suppress(ValueError):
                        out[target.id] = ast.literal_eval(node.value)
    return out


_UNKNOWN = object()


def _value(node: ast.expr, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return names.get(node.id, _UNKNOWN)
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _UNKNOWN


def lesson_calls(nb: Notebook, notebooks: Path) -> list[dict[str, Any]]:
    """The parameters of every call of the notebook's lesson in its code, in order:
    ``fpexplore.run("<lesson>", ...)`` or ``lesson.run(...)`` (a name bound to
    ``get("<lesson>")``); arguments that are not literals are left out."""
    trees = _code(notebooks / nb.file)
    names = _bound(trees)
    receivers = {"fpexplore"}
    for tree in trees:
        for node in ast.walk(tree):
            call = getattr(node, "value", None)
            if (isinstance(node, ast.Assign) and isinstance(call, ast.Call)
                    and getattr(call.func, "id", "") == "get"
                    and call.args and _value(call.args[0], {}) == nb.lesson):  # fmt: skip
                receivers |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    calls = []
    for tree in trees:
        for node in ast.walk(tree):
            f = getattr(node, "func", None)
            if not (isinstance(node, ast.Call) and isinstance(f, ast.Attribute)
                    and f.attr == "run" and isinstance(f.value, ast.Name)
                    and f.value.id in receivers):  # fmt: skip
                continue
            args = node.args
            if f.value.id == "fpexplore":
                if not args or _value(args[0], {}) != nb.lesson:
                    continue
                args = args[1:]
            if args:
                continue
            kw = {k.arg: _value(k.value, names) for k in node.keywords if k.arg}
            calls.append({k: v for k, v in kw.items() if v is not _UNKNOWN})
    return calls


@dataclass(frozen=True)
class Plan:
    """A lesson's slide: its parameters (the notebook's first call), the parameter its control
    switches and the values pre-computed."""

    lesson: str
    params: dict[str, Any]
    vary: str
    values: tuple[Any, ...]


def plan(nb: Notebook, notebooks: Path) -> Plan:
    """The slide of ``nb``'s lesson, from the notebook's own calls."""
    from ..export import _pick_vary, grid
    from ..lessons import get
    from ..params import Interval, Options, validate_all

    lesson = get(nb.lesson or "")
    calls = lesson_calls(nb, notebooks)
    first = calls[0] if calls else {}
    params = validate_all(lesson.params, dict(first), f"lesson '{lesson.name}'")
    declared = {p.name: p for p in lesson.params}
    seen: dict[str, list[Any]] = {}
    for call in calls:
        for k, v in call.items():
            if isinstance(declared.get(k), Options | Interval) and v not in seen.get(k, []):
                seen.setdefault(k, []).append(v)
    varied = {k: vs for k, vs in seen.items() if len(vs) > 1}
    if varied:
        name = max(varied, key=lambda k: len(varied[k]))  # the first of the most varied
        values = (params[name], *(v for v in varied[name] if v != params[name]))
        return Plan(lesson.name, params, name, values)
    if "record" in declared:  # a GPU lesson off a GPU: switch between the recorded cards
        from .plan import ROOT

        cards = tuple(f.stem for f in sorted((ROOT / "data/gpu").glob("*.json")))
        if cards:
            return Plan(lesson.name, params, "record", (params["record"], *cards))
    param = _pick_vary(lesson, None, params)
    if param is None:
        return Plan(lesson.name, params, "", ())
    values = list(grid(param, params[param.name]))
    if params[param.name] in values:
        values.remove(params[param.name])
    return Plan(lesson.name, params, param.name,
                (params[param.name], *values[: FALLBACK_POINTS - 1]))  # fmt: skip


def headline(comparison: Any) -> tuple[str, str]:
    """The slide's headline: (its key, its text): the first claim that holds in this run, else
    the first observation; never a failing claim ("" where there is neither)."""
    for key, c in comparison.claims.items():
        if c.holds is True:
            return key, c.text
    for key, o in getattr(comparison, "observations", {}).items():
        return key, o.line(key)
    return "", ""


Run = Callable[[str, dict[str, Any]], Any]


def _run(lesson: str, params: dict[str, Any]) -> Any:
    from ..lessons import get

    return get(lesson).run(**params)


def _view(lesson: str, comparison: Any) -> str:
    from .. import page
    from ..lessons import get

    fig = page.figure(get(lesson), comparison)
    return page.render("view.html", fig=fig, comparison=comparison)


def _label(value: Any) -> str:
    from ..export import _label as label

    return label(value)


def lesson_slide(nb: Notebook, notebooks: Path, run: Run = _run,
                 view: Callable[[str, Any], str] = _view) -> dict[str, Any]:  # fmt: skip
    """What a lesson's slide shows: the run at the notebook's parameters, its headline, and a
    control over the runs at the other values of the varied parameter."""
    from ..lessons import get
    from ..params import settle

    p = plan(nb, notebooks)
    lesson = get(p.lesson)
    if p.lesson == "cpu_dispatch":
        return dispatch_slide(nb, p, run, view)
    runs = [run(p.lesson, settle(lesson.params, {**p.params, p.vary: v})) for v in p.values]
    main = runs[0] if runs else run(p.lesson, p.params)
    views = [view(p.lesson, c) for c in runs] or [view(p.lesson, main)]
    labels = [f"{p.vary} = {_label(v)}" for v in p.values] or ["the notebook's run"]
    return {"params": p.params, "headline": headline(main), "vary": p.vary or "run",
            "help": _help(lesson, p.vary), "labels": labels, "views": views,
            "note": ""}  # fmt: skip


def _help(lesson: Any, name: str) -> str:
    return next((p.help for p in lesson.params if p.name == name), "the notebook's run")


def dispatch_slide(nb: Notebook, p: Plan, run: Run = _run,
                   view: Callable[[str, Any], str] = _view) -> dict[str, Any]:  # fmt: skip
    """Notebook 12's slide: this machine against each configuration this CPU can take, the
    control starting at the first whose results differ; where none differs, the slide says so
    (it never headlines this machine against itself)."""
    from ..lessons.cpu_dispatch import HERE, configs_here

    others = [c for c in configs_here() if c != HERE]
    runs = [run(p.lesson, {**p.params, "a": HERE, "b": b}) for b in others]
    differ = [i for i, c in enumerate(runs) if _differs(c)]
    start = differ[0] if differ else 0
    if differ:
        main = runs[start]
        note = (f"{len(differ)} of the {len(others)} configurations this CPU can take give "
                f"other bits than {HERE!r}; the control starts at the first, "
                f"{others[start]!r}.")  # fmt: skip
    else:
        main = None
        note = (f"None of the {len(others)} configurations this CPU can take gives other bits "
                f"than {HERE!r} for this battery: on this machine the switches change nothing "
                "(the recorded machines of data/machines show what differs "
                "elsewhere).")  # fmt: skip
    return {"params": {**p.params, "a": HERE, "b": others[start] if others else HERE},
            "headline": headline(main) if main is not None else ("", note),
            "vary": "b", "help": "the second configuration (the first is this machine)",
            "labels": [f"{HERE} vs {b}" for b in others],
            "views": [view(p.lesson, c) for c in runs], "start": start, "note": note}  # fmt: skip


def _differs(comparison: Any) -> bool:
    data = comparison.data
    return bool(data is not None and data.diff is not None and data.diff.rows)


def formats_slide(notebooks: Path) -> dict[str, Any]:
    """Notebook 00's slide: the float table of each value the notebook shows (its
    ``show("...")`` calls), switched by a control."""
    from ..widgets.float_bits_view import explain, float_bits_html

    values = []
    for tree in _code(notebooks / "00_floating_point_formats.ipynb"):
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "show"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value not in values):  # fmt: skip
                values.append(node.args[0].value)
    shown = [explain(v) for v in values]
    first = shown[0]
    holds = [(k, c.text) for k, c in first.claims.items() if c.holds is True]
    return {"params": {"value": values[0]}, "headline": holds[0] if holds else ("", ""),
            "vary": "value", "help": "a value the notebook shows, in all five formats",
            "labels": values, "views": [float_bits_html(list(e.rows)) for e in shown],
            "note": ""}  # fmt: skip


def divergence_slide(notebooks: Path) -> dict[str, Any]:
    """Notebook 10's slide: the CNN against torch with each planted bug the notebook finds,
    the per-layer table of where the two first part, switched by a control."""
    from markupsafe import escape

    from .. import diverge
    from ..diverge import zoo

    plants = zoo.PLANTS["cnn"]
    reports = [diverge.run_zoo("cnn", against="torch", plant=p) for p in plants]
    views = [f"<p>{escape(r.verdict())}</p><pre>{escape(r.table())}</pre>" for r in reports]
    main = reports[0]
    holds = [(k, c.text) for k, c in main.claims.items() if c.holds is True]
    return {"params": {"model": "cnn", "against": "torch", "plant": plants[0]},
            "headline": holds[0] if holds else ("", main.verdict()), "vary": "plant",
            "help": "the bug planted in the second implementation",
            "labels": list(plants), "views": views, "note": ""}  # fmt: skip


def page_html(nb: Notebook, shown: dict[str, Any]) -> str:
    """The slide's whole page."""
    from .. import page
    from ..export import switch
    from ..templates import trusted

    head, control = switch(shown["vary"], shown["help"], shown["labels"], shown["views"],
                           shown.get("start", 0))  # fmt: skip
    return page.render("kit_slide.html", title=f"{nb.key} · {nb.title}", nb=nb,
                       head=trusted(head), control=control, shown=shown,
                       machine=page.machine())  # fmt: skip


def slide(nb: Notebook, notebooks: Path, run: Run = _run) -> str:
    """Notebook ``nb``'s slide (HTML)."""
    if nb.key == "00":
        shown = formats_slide(notebooks)
    elif nb.key == "10":
        shown = divergence_slide(notebooks)
    else:
        shown = lesson_slide(nb, notebooks, run)
    return page_html(nb, shown)


def build(out: Path, keys: list[str] | None = None, notebooks: Path | None = None) -> list[str]:
    """Write every notebook's slide (``NN-slides.html``); returns their keys."""
    from .plan import ROOT

    folder = notebooks or ROOT / "notebooks"
    made = []
    for nb in NOTEBOOKS:
        if keys and nb.key not in keys:
            continue
        (out / f"{nb.key}-slides.html").write_text(slide(nb, folder), encoding="utf-8")
        made.append(nb.key)
    return made
