"""``fpexplore export LESSON [--param value ...] --html out.html``: one lesson as one standalone
page for slides and course sites: the run, and a control for one parameter (``--vary``) that
picks among views pre-computed for each of its values (ipywidgets' embedding, a ``jslink`` to
a ``Stack``): no kernel, no server and, with `widget_bundle`, no network.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import page, templates
from .errors import InvalidParameter
from .params import Flag, Interval, Options, Param, resolved, settle

if TYPE_CHECKING:
    from .lessons import Lesson

__all__ = ["export", "grid", "switch"]

#: the most pre-computed values of the varied parameter
MAX_POINTS = 12


def grid(param: Param, current: Any, points: int = 5) -> tuple[Any, ...]:
    """The values of ``param`` to pre-compute, ``current`` among them: every choice of options
    and flags; ``current`` times powers of ten in a log interval; ``points`` values evenly
    spread in a linear one; none for free text."""
    if not isinstance(param, Param):
        raise InvalidParameter("param", param, "a declared parameter (fpexplore.params)", "grid")
    if isinstance(param, Interval):
        current = param.validate(current, "export.grid")  # names the parameter
        if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= 50:
            raise InvalidParameter("points", points, "an int in [2, 50]", "export.grid")
    if isinstance(param, Options):
        return tuple(param.choices)
    if isinstance(param, Flag):
        return (False, True)
    if not isinstance(param, Interval):
        return ()
    low, high = param.low, param.high
    if param.log and low > 0:
        values = {current}
        k = 1
        while len(values) < points and (current / 10**k >= low or current * 10**k <= high):
            for v in (current / 10**k, current * 10**k):
                if low <= v <= high and len(values) < points:
                    values.add(v)
            k += 1
    else:
        values = {current, *(low + (high - low) * i / (points - 1) for i in range(points))}
    if param.integer:
        values = {round(v) for v in values}
    return tuple(sorted(values))


def _pick_vary(lesson: Lesson, vary: str | None, values: dict[str, Any]) -> Param | None:
    """The parameter the page's control varies, as declared at ``values`` (a parameter that
    depends on another's value: the case that applies)."""
    params = resolved(lesson.params, values)
    if vary is not None:
        for p in params:
            if p.name == vary:
                return p
        known = "one of " + ", ".join(p.name for p in lesson.params)
        raise InvalidParameter("vary", vary, known, f"lesson '{lesson.name}'")
    for p in params:
        if isinstance(p, Options | Flag) and 1 < len(grid(p, p.default)) <= MAX_POINTS:
            return p
    for p in params:
        if isinstance(p, Interval) and p.low < p.high:
            return p
    return None


def _view(lesson: Lesson, params: dict[str, Any]) -> str:
    """One pre-computed view: the figure and the comparison of ``lesson`` at ``params``."""
    comparison = lesson.run(**params)
    return page.render("view.html", fig=page.figure(lesson, comparison), comparison=comparison)


def _label(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}" if math.isfinite(value) else str(value)
    return str(value)


def switch(
    name: str,
    help: str,
    labels: Sequence[str],
    views: Sequence[str],
    start: int = 0,
    dropdown: bool = True,
) -> tuple[str, dict[str, Any]]:
    """A control over pre-computed HTML ``views`` (one per label), embedded for a page with no
    kernel: the HTML for the page's head, and what a template shows of it (``name``,
    ``help``, ``runs``, ``offline``, ``spec``, ``cdn``)."""
    import ipywidgets as w
    from ipywidgets.embed import embed_data

    from . import widget_bundle

    kind = w.Dropdown if dropdown else w.SelectionSlider
    control = kind(
        options=list(labels),
        index=start,
        description=name,
        tooltip=help,
        style={"description_width": "initial"},
        layout={"width": "480px"},
    )
    stack = w.Stack([w.HTML(v) for v in views], selected_index=start)
    w.jslink((control, "index"), (stack, "selected_index"))
    box = w.VBox([control, stack])
    data = embed_data(views=[box])
    scripts, offline = widget_bundle.script_tags()
    state = json.dumps(data["manager_state"]).replace("</", "<\\/")
    head = f'{scripts}<script type="application/vnd.jupyter.widget-state+json">{state}</script>'
    spec = templates.trusted(json.dumps(data["view_specs"][0]).replace("</", "<\\/"))
    shown = {"name": name, "help": help, "runs": len(views), "offline": offline, "spec": spec}
    return head, {**shown, "cdn": widget_bundle.CDN}


def _interactive(
    lesson: Lesson, params: dict[str, Any], param: Param, values: Sequence[Any], progress: bool
) -> tuple[str, dict[str, Any]]:
    """The embedded control: the HTML for the page's head, and what the template shows."""
    from tqdm.auto import tqdm

    shown = tqdm(values, desc=f"{lesson.name}: {param.name}", disable=not progress, leave=False)
    views = [_view(lesson, settle(lesson.params, {**params, param.name: v})) for v in shown]
    start = list(values).index(params[param.name])
    labels = [_label(v) for v in values]
    return switch(param.name, param.help, labels, views, start, isinstance(param, Options | Flag))


def export(
    lesson_name: str,
    out: str | Path,
    params: dict[str, Any] | None = None,
    *,
    vary: str | None = None,
    values: Sequence[Any] | None = None,
    interactive: bool = True,
    progress: bool = True,
) -> Path:
    """Write ``lesson_name`` run at ``params`` as one standalone HTML page; returns its path.
    ``vary``: the parameter the control changes (default: the first with few values);
    ``values``: which of its values are pre-computed."""
    from .lessons import get
    from .params import validate_all
    from .paths import check_out

    lesson = get(lesson_name)
    path = check_out(out, "out", "export")
    if params is not None and not isinstance(params, dict):
        raise InvalidParameter("params", params, "None or a dict of parameter values", "export")
    if vary is not None and not isinstance(vary, str):
        raise InvalidParameter("vary", vary, "None or a parameter's name", "export")
    if values is not None and not isinstance(values, list | tuple):
        raise InvalidParameter("values", values, "None or a list of values", "export")
    for flag, value in (("interactive", interactive), ("progress", progress)):
        if not isinstance(value, bool):
            raise InvalidParameter(flag, value, "True or False", "export")
    where = f"lesson '{lesson.name}'"
    full = validate_all(lesson.params, dict(params or {}), where)
    comparison = lesson.run(**full)
    head, control = "", None
    param = _pick_vary(lesson, vary, full) if interactive else None
    if param is not None:
        if values is not None:
            picked = tuple(param.validate(v, where) for v in values)
        else:
            picked = grid(param, full[param.name])
        if len(picked) > MAX_POINTS:
            raise InvalidParameter(
                "values", len(picked), f"at most {MAX_POINTS} values to pre-compute", where
            )
        if full[param.name] not in picked:
            picked = (full[param.name], *picked)
        if len(picked) > 1:
            head, control = _interactive(lesson, full, param, list(picked), progress)
    html = page.render(
        "export.html",
        title=lesson.title,
        head=templates.trusted(head),
        lesson=lesson,
        comparison=comparison,
        fig=page.figure(lesson, comparison),
        machine=page.machine(),
        control=control,
    )
    path.write_text(html, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- command line
def add_arguments(cmd: Any) -> None:
    """The options of ``fpexplore export`` (declared in `fpexplore.cli.subcommands`; lesson
    parameters follow as ``--name value`` pairs, parsed like ``fpexplore run``'s)."""
    cmd.add_argument("lesson")
    cmd.add_argument("--html", required=True, help="the HTML file to write")
    cmd.add_argument("--vary", help="the parameter the page's control changes")
    cmd.add_argument("--values", help="comma-separated values of --vary to pre-compute")
    cmd.add_argument("--static", action="store_true", help="no control, just this run")


def command(args: Any, params: dict[str, Any]) -> int:
    """``fpexplore export``: ``params`` are the lesson's, already parsed."""
    import os

    from .lessons import get
    from .paths import check_out

    check_out(args.html, "--html", "fpexplore export")
    os.environ.setdefault("MPLBACKEND", "Agg")
    values = None
    if args.values:
        lesson = get(args.lesson)
        param = _pick_vary(lesson, args.vary, params)
        if param is None:
            raise InvalidParameter("values", args.values, "a lesson with parameters")
        values = [param.parse(v.strip()) for v in args.values.split(",") if v.strip()]
    path = export(
        args.lesson, args.html, params, vary=args.vary, values=values, interactive=not args.static
    )
    print(f"wrote {path}")
    return 0
