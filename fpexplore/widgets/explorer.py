"""The generic lesson explorer, and the controls of every view, built from declared parameters.

`controls_for(params)` (or a lesson's) gives a `ControlSpec` (pure data) per parameter;
`Controls` builds the ipywidgets of a lesson or a view; `explore(lesson)` reruns the lesson
when a control is released and shows its table and figure.
While the kernel waits, the settings one step away are computed ahead (`Ahead`), so a move
usually only swaps in a result already drawn.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import FpexploreError, InvalidParameter, UnknownParameter
from ..figures import figure_png
from ..lessons import Lesson, get
from ..params import Flag, Interval, Options, Param, Text, follows, resolved, settle, validate_all
from ..result.html import comparison_html
from ..templates import part, render

#: results (comparison and picture) an explorer keeps, per parameter setting
KEEP_RESULTS = 24
#: settings computed ahead per view in idle time, at most
AHEAD_MAX = 16
#: a menu with at most this many options has every option computed ahead, not only its neighbours
AHEAD_ALL_OPTIONS = 6
#: seconds no widget heard from the browser before the kernel computes ahead again
AHEAD_IDLE_S = 3.0
#: seconds a view's first display may spend computing its nearest settings in its cell
AHEAD_IN_CELL_S = 4.0
#: an integer interval wider than this gets a number box instead of a linear slider
SLIDER_SPAN = 10_000
#: the controls that do not update while dragged; their neighbours are computed ahead first
_STEPPED = (
    "IntSlider",
    "FloatSlider",
    "FloatLogSlider",
    "NotchedIntSlider",
    "BoundedIntText",
)


def notched_int_slider(value: int, options: tuple[int, ...], low: int, high: int, **kw: Any) -> Any:
    """A slider over ``options`` (1-2-5 notches) beside a number box for any integer in
    [``low``, ``high``]; its ``value`` is the one run. Dragging picks a notch; typing a number
    and pressing Enter runs that number (a `SelectionSlider`'s own readout can be typed into
    but changes only its label), and moves the slider to the nearest notch."""
    import ipywidgets as w
    import traitlets

    class NotchedIntSlider(w.HBox):
        value = traitlets.Int()

        def __init__(self) -> None:
            self.slider = w.SelectionSlider(
                options=list(options),
                value=_nearest(options, value),
                readout=False,
                continuous_update=False,
                **kw,
            )
            self.box = w.BoundedIntText(
                value=value,
                min=low,
                max=high,
                continuous_update=False,
                tooltip=kw.get("tooltip", ""),
                disabled=kw.get("disabled", False),
                layout=w.Layout(width="9em"),
            )
            super().__init__([self.slider, self.box])
            self.options = tuple(options)
            self.description = kw.get("description", "")
            self.placing = False  # the slider moved to a typed number's notch: not a move
            self.value = value
            self.slider.observe(self._slid, names="value")
            self.box.observe(lambda ch: setattr(self, "value", int(ch.new)), names="value")

        def _slid(self, change: Any) -> None:
            if not self.placing:
                self.value = int(change.new)

        @traitlets.observe("value")
        def _show(self, change: Any) -> None:
            self.box.value = change.new
            self.placing = True
            try:
                self.slider.value = _nearest(self.options, change.new)
            finally:
                self.placing = False

    return NotchedIntSlider()


def _nearest(options: tuple[int, ...], v: int) -> int:
    """The option nearest ``v`` on a log scale (options are positive)."""
    return min(options, key=lambda o: abs(math.log(o) - math.log(max(v, 1))))


@dataclass(frozen=True)
class ControlSpec:
    """Which ipywidgets control stands for one parameter, and its settings."""

    name: str
    widget: str  # an ipywidgets class name
    value: Any
    description: str
    tooltip: str = ""
    options: tuple[Any, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    labels: tuple[str, ...] = ()  # a menu's, one per option (default: ``str`` of each)

    def menu(self) -> list[tuple[str, Any]]:
        """A menu's ``(label, value)`` options."""
        return list(zip(self.labels or map(str, self.options), self.options, strict=True))

    def index(self) -> int:
        """The position of ``value`` among the options (a menu set by its index: a value of
        None would leave it blank)."""
        v = self.value
        return next(i for i, o in enumerate(self.options) if type(o) is type(v) and o == v)

    def build(self) -> Any:
        """The ipywidgets control (imports ipywidgets)."""
        import ipywidgets as w

        kw: dict[str, Any] = {
            "description": self.description,
            "tooltip": self.tooltip,
            "style": {"description_width": "initial"},
            **self.settings,
        }
        if self.widget == "NotchedIntSlider":
            low, high = self.settings["min"], self.settings["max"]
            kw = {k: v for k, v in kw.items() if k not in ("min", "max")}
            return notched_int_slider(self.value, self.options, low, high, **kw)
        cls = getattr(w, self.widget)
        if self.options:
            kw["options"] = self.menu()
        if self.widget in (*_STEPPED, "Text"):
            kw["continuous_update"] = False
        if self.widget == "Dropdown":  # as wide as its longest choice, within the output
            kw.setdefault("layout", w.Layout(width="max-content", max_width="100%"))
            return cls(index=self.index(), **kw)
        return cls(value=self.value, **kw)


def _log_ints(low: int, high: int, default: int) -> tuple[int, ...]:
    """1-2-5 steps per decade in [low, high], plus the ends and the default."""
    values = {low, high, default}
    decade = 1
    while decade <= high:
        for m in (1, 2, 5):
            if low <= m * decade <= high:
                values.add(m * decade)
        decade *= 10
    return tuple(sorted(values))


def _decimals(x: float, most: int = 6) -> int:
    """The fewest decimals (up to ``most``) that write ``x`` exactly as it reads."""
    for d in range(most + 1):
        if abs(round(x, d) - x) <= 1e-12 * max(1.0, abs(x)):
            return d
    return most


def _float_slider(low: float, high: float, value: float) -> dict[str, Any]:
    """A linear slider's settings: a 1-2-5 step giving 100 to 250 notches, and a readout with
    every decimal of the notches, ends and start (the number shown is the one run: 0.855)."""
    span = high - low
    step = 10.0 ** math.floor(math.log10(span / 100)) if span > 0 else 1.0
    for m in (5, 2):
        if span / (m * step) >= 100:
            step *= m
            break
    step = float(f"{step:.1g}")
    digits = max(_decimals(step), _decimals(low), _decimals(high), _decimals(value))
    return {"min": low, "max": high, "step": step, "readout_format": f".{digits}f"}


def control_for(param: Param, value: Any = None) -> ControlSpec:
    """The control of one declared parameter, set to ``value`` (default: its default)."""
    value = param.default if value is None else value
    if isinstance(param, Interval):
        value = int(value) if param.integer else float(value)

    def spec(widget: str, tooltip: str = param.help, **kw: Any) -> ControlSpec:
        return ControlSpec(param.name, widget, value, param.name, tooltip, **kw)

    if isinstance(param, Flag):
        return spec("Checkbox", settings={"indent": False})
    if isinstance(param, Options):
        return spec("Dropdown", options=param.choices, labels=param.labels)
    if isinstance(param, Text):
        return spec("Text", param.help or param.pattern_help)
    if isinstance(param, Interval):
        low, high = param.low, param.high
        if param.integer:
            low, high = int(low), int(high)
            if param.log and low >= 1:  # 1-2-5 notches, and a box for any value
                notches = _log_ints(low, high, value)
                return spec("NotchedIntSlider", options=notches, settings={"min": low, "max": high})
            if high - low > SLIDER_SPAN:
                return spec("BoundedIntText", settings={"min": low, "max": high})
            return spec("IntSlider", settings={"min": low, "max": high, "step": 1})
        if param.log and low > 0:
            log_range = {"min": math.log10(low), "max": math.log10(high)}
            return spec("FloatLogSlider", settings={"base": 10, **log_range, "step": 0.01})
        return spec("FloatSlider", settings=_float_slider(low, high, value))
    raise InvalidParameter("param", param, "an Interval, Options, Flag or Text declaration")


def controls_for(
    params: Lesson | tuple[Param, ...], where: str = "", /, **overrides: Any
) -> tuple[ControlSpec, ...]:
    """One `ControlSpec` per declared parameter (a lesson's, or ``params``, validated as
    ``where``'s); ``overrides`` set start values."""
    if isinstance(params, Lesson):
        params, where = params.params, f"lesson '{params.name}'"
    return _specs(params, validate_all(params, overrides, where))


def _specs(params: tuple[Param, ...], values: dict[str, Any]) -> tuple[ControlSpec, ...]:
    """The controls at valid ``values``: a parameter declared by the value of another (`follows`)
    gets the control of the case that applies, greyed out where that case takes one value."""
    specs = []
    for p in resolved(params, values):
        spec = control_for(p, values[p.name])
        one = isinstance(p, Options) and len(p.choices) == 1
        if one or (isinstance(p, Interval) and p.low == p.high):
            spec = replace(spec, settings={**spec.settings, "disabled": True})
        specs.append(spec)
    return tuple(specs)


class Controls:
    """The ipywidgets controls of declared ``params`` set to valid ``values`` (``widgets`` by
    name, in ``row``), each move calling ``on_change`` (if set) and delaying the computing
    ahead (`hear`). `refit` fits a control declared by the value of another (`follows`) to the
    case that applies now: a menu in place (its options and value), any other one rebuilt."""

    def __init__(
        self,
        params: tuple[Param, ...],
        values: dict[str, Any],
        on_change: Callable[..., Any] | None = None,
    ) -> None:
        import ipywidgets as w

        self.params, self.on_change, self.fitting = params, on_change, False
        self.specs = {s.name: s for s in _specs(params, values)}
        self.widgets = {name: spec.build() for name, spec in self.specs.items()}
        self.followers = {p.name: follows(p) for p in params if follows(p)}
        self.built_at = {name: values[on] for name, on in self.followers.items()}
        for control in self.widgets.values():
            self._watch(control)
        self.row = w.HBox(list(self.widgets.values()), layout=w.Layout(flex_flow="row wrap"))

    @property
    def values(self) -> dict[str, Any]:
        """Each control's value, by name."""
        return {name: c.value for name, c in self.widgets.items()}

    def _watch(self, control: Any) -> None:
        control.observe(self._moved, names="value")
        hear(control)

    def _moved(self, change: Any) -> None:
        if not self.fitting and self.on_change is not None:  # a menu refilled is no move
            self.on_change(change)

    def refit(self) -> None:
        """Fit each control that follows another whose value changed to the case now."""
        now = self.values
        stale = [n for n, on in self.followers.items() if self.built_at[n] != now[on]]
        if not stale:
            return
        self.fitting = True
        try:
            for spec in _specs(self.params, settle(self.params, now)):
                if spec.name in stale:
                    self._fit(spec)
                    self.built_at[spec.name] = now[self.followers[spec.name]]
        finally:
            self.fitting = False
        self.row.children = list(self.widgets.values())

    def _fit(self, spec: ControlSpec) -> None:
        control = self.widgets[spec.name]
        if spec.widget == self.specs[spec.name].widget == "Dropdown":
            control.options = spec.menu()
            control.index = spec.index()
            control.disabled = spec.settings.get("disabled", False)
        else:
            self.widgets[spec.name] = control = spec.build()
            self._watch(control)
        self.specs[spec.name] = spec


class _Shown:
    """What a lesson view shows below its controls: a status line, the comparison's table
    and its figure (a PNG, or SVG where ``svg`` draws it), the results shown kept in ``seen``."""

    def __init__(self, lesson: Lesson, svg: Callable[[Any], str] | None, seen: OrderedDict) -> None:
        import ipywidgets as w

        self.lesson, self.svg, self.seen = lesson, svg, seen
        self.status, self.table = w.HTML(), w.HTML()
        # a figure is a PNG (or SVG) updated in place, never a bare Figure
        self.plot = w.HTML() if svg is not None else w.Image(format="png")
        self.plot.layout.display = "none"  # until the first figure arrives
        self.state: dict[str, Any] = {"figure": None, "comparison": None}

    def show(self, params: dict[str, Any], work: Callable[..., None] | None, names: Any) -> bool:
        """Show the lesson at ``params`` (kept, else run after ``work``); False, with a note
        or an error panel in the status line, where it failed."""
        key = setting_key(params)
        self.status.value = part("running")
        try:
            if key in self.seen:
                self.seen.move_to_end(key)
                comparison, png = self.seen[key]
            else:
                if work is not None:
                    work(params, lambda *at: setattr(self.status, "value", part("progress", *at)))
                comparison, png = self.lesson.run(**params), None
            previous, self.state["comparison"] = self.state["comparison"], comparison
            # claims: what changed, what fails
            self.table.value = comparison_html(comparison, previous)
            self.status.value = ""
            if png is None:
                png = _picture(self.lesson, comparison, self.svg, self.state)
            if png is not None:  # in place: the browser swaps one picture, no output is cleared
                self.plot.value, self.plot.layout.display = png, ""
            self.seen[key] = (comparison, png)
            while len(self.seen) > KEEP_RESULTS:
                self.seen.popitem(last=False)
        except Exception as exc:  # any failure ends "running…" with a panel saying why
            self.status.value = _failure(exc, names)
            return False
        return True


def explore(
    lesson_or_name: Lesson | str,
    *,
    svg: Callable[[Any], str] | None = None,
    work: Callable[[dict[str, Any], Callable[[int, int, str], None]], None] | None = None,
    **overrides: Any,
) -> Any:
    """An interactive view of a lesson (an ipywidgets ``VBox``): its controls, its comparison
    table and its figure, rerun when a control is released. ``svg``: draws a comparison's
    figure as SVG markup, shown instead of the matplotlib figure (no PNG per move).
    ``work(params, report)``: computes what a setting lacks before the lesson runs (nothing
    where it is cached), calling ``report(done, total, what)`` as it goes; the status line
    shows each report as a progress bar."""
    import ipywidgets as w

    lesson = lesson_or_name if isinstance(lesson_or_name, Lesson) else get(lesson_or_name)
    values = validate_all(lesson.params, overrides, f"lesson '{lesson.name}'")
    # Results already shown, by parameters: going back to a setting (a stage, a mode) is
    # instant; a lesson's result depends on its parameters alone.
    ahead = Ahead(lambda params: _result(lesson, params, svg))
    shown = _Shown(lesson, svg, ahead.seen)

    def update(change: Any = None) -> None:
        controls.refit()
        params = controls.values
        if shown.show(params, work, controls.widgets):
            near = neighbours(tuple(controls.specs.values()), controls.widgets, params)
            ahead.plan([settle(lesson.params, p) for p in near], first=change is None)

    controls = Controls(lesson.params, values, update)
    title = w.HTML(part("title", lesson.title, lesson.summary))
    box = w.VBox([title, controls.row, shown.status, shown.table, shown.plot])
    box.state = shown.state  # the last comparison, for notebooks that want the numbers
    update()
    return box


def _picture(
    lesson: Lesson, comparison: Any, svg: Callable[[Any], str] | None, state: dict[str, Any]
) -> bytes | str | None:
    """A comparison's figure: SVG markup where ``svg`` draws it, else the lesson's figure as a
    PNG (kept in ``state``), else None."""
    if svg is not None:
        return svg(comparison)
    if lesson.figure is None:
        return None
    state["figure"] = lesson.figure(comparison)
    return figure_png(state["figure"])


def _failure(exc: Exception, controls: dict[str, Any]) -> str:
    """What the status line says when a run fails: a calm note where each control is in range
    and their combination is not, else an error panel."""
    if (
        isinstance(exc, InvalidParameter)
        and exc.name in controls
        and not isinstance(exc, UnknownParameter)
    ):
        return render("limit_notice.html", exc=exc)
    return error_panel(exc)


def _result(
    lesson: Lesson, params: dict[str, Any], svg: Callable[[Any], str] | None = None
) -> tuple[Any, bytes | str | None]:
    """A lesson's comparison at ``params`` and its figure (SVG, PNG bytes or None)."""
    comparison = lesson.run(**params)
    return comparison, _picture(lesson, comparison, svg, {})


def setting_key(params: dict[str, Any]) -> tuple[Any, ...]:
    """A parameter setting as a cache key (floats to 12 digits: a slider's value sent back by
    the browser may differ from the one computed here in its last bits)."""
    return tuple(
        sorted((k, f"{v:.12g}" if isinstance(v, float) else repr(v)) for k, v in params.items())
    )


def neighbours(
    specs: tuple[ControlSpec, ...], controls: dict[str, Any], params: dict[str, Any]
) -> list[dict[str, Any]]:
    """The settings one control step away from ``params`` (a menu's neighbours, or every option
    of a short menu; a slider's or number box's next notch either way; a checkbox flipped; no
    text guessed). Every control's step forward, then back, then farther options; in each
    round sliders and number boxes first (what a student moves most)."""
    per_control: list[list[dict[str, Any]]] = []
    for spec in sorted(specs, key=lambda s: s.widget not in _STEPPED):  # stable: in order
        control, value = controls[spec.name], params[spec.name]
        values: list[Any] = []
        if spec.widget == "Checkbox":
            values = [not value]
        elif spec.widget in ("Dropdown", "NotchedIntSlider"):
            opts = [o[1] if isinstance(o, tuple) else o for o in control.options]
            if value in opts:
                i = opts.index(value)
                if spec.widget == "Dropdown" and len(opts) <= AHEAD_ALL_OPTIONS:
                    values = opts[i + 1 :] + opts[:i]
                else:
                    values = [opts[j] for j in (i + 1, i - 1) if 0 <= j < len(opts)]
        elif spec.widget in ("IntSlider", "BoundedIntText"):
            step = getattr(control, "step", 1) or 1
            values = [v for v in (value + step, value - step) if control.min <= v <= control.max]
        elif spec.widget in ("FloatSlider", "FloatLogSlider"):
            log = spec.widget == "FloatLogSlider"
            at = math.log(value, control.base) if log else value
            values = [
                control.base**x if log else x
                for x in _notches(at, control.min, control.max, control.step)
            ]
        per_control.append([{**params, spec.name: v} for v in values])
    rounds = max((len(c) for c in per_control), default=0)
    return [c[i] for i in range(rounds) for c in per_control if i < len(c)]


def _notches(at: float, low: float, high: float, step: float) -> list[float]:
    """A float slider's next notch up, then down, from ``at``, both one ``step`` away and on
    the grid ``low`` + k ``step`` (where the browser puts an off-grid value), in range."""
    k = round((at - low) / step)
    up = [at + step, low + (k + 1) * step]
    down = [at - step, low + (k - 1) * step]
    out: list[float] = []
    for x in (*up, *down):
        x = round(x, 12)
        if low <= x <= high and all(f"{x:.10g}" != f"{y:.10g}" for y in out):
            out.append(x)
    return out


class Ahead:
    """Computes a view's next settings ahead of the student, in the kernel's main thread.

    In a kernel only: the first display computes its nearest settings in its cell (at most
    `AHEAD_IN_CELL_S`); the rest, one per event-loop turn, once a browser has moved a control
    and no control of any view moved for `AHEAD_IDLE_S` (a move waits at most for one
    setting), `AHEAD_MAX` per view. A headless run computes nothing in idle time."""

    def __init__(
        self,
        compute: Callable[[dict[str, Any]], Any],
        keep: int = KEEP_RESULTS,
    ) -> None:
        """``compute(params)``: what the view shows at ``params``, kept in ``seen`` under
        `setting_key` (at most ``keep`` settings, the oldest dropped first)."""
        self.compute, self.keep = compute, keep
        self.seen: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self.later: list[dict[str, Any]] = []
        self.done_later = 0
        self.pending = False
        try:
            self.loop: Any = asyncio.get_running_loop()  # the kernel's; none outside a kernel
        except RuntimeError:
            self.loop = None

    def plan(self, settings: list[dict[str, Any]], first: bool) -> None:
        """Compute ``settings`` ahead, nearest first (those not computed or queued yet)."""
        if self.loop is None:
            return
        _activity[0] = time.monotonic()
        queued = {setting_key(p) for p in self.later}
        fresh = [p for p in settings if setting_key(p) not in self.seen]
        if first:
            end = time.monotonic() + AHEAD_IN_CELL_S
            while fresh and time.monotonic() < end:
                self._one(fresh.pop(0))
        for p in fresh:
            k = setting_key(p)
            if k not in queued:
                self.later.append(p)
                queued.add(k)
        self._schedule(AHEAD_IDLE_S)

    def get(self, params: dict[str, Any]) -> Any:
        """What the view shows at ``params``: the kept result, else computed now and kept."""
        key = setting_key(params)
        if key in self.seen:
            self.seen.move_to_end(key)
        else:
            self.seen[key] = self.compute(params)
            while len(self.seen) > self.keep:
                self.seen.popitem(last=False)
        return self.seen[key]

    def _one(self, params: dict[str, Any]) -> None:
        if setting_key(params) not in self.seen:
            # a setting that fails shows its error when the student picks it
            with contextlib.suppress(Exception):
                self.get(params)

    def _schedule(self, delay: float) -> None:
        if not self.pending and self.later and self.done_later < AHEAD_MAX:
            self.pending = True
            self.loop.call_later(max(delay, 0.01), self._step)

    def _step(self) -> None:
        self.pending = False
        if not _heard[0]:  # no browser has moved a control yet (a headless run): nothing to await
            self._schedule(AHEAD_IDLE_S)
            return
        wait = _activity[0] + AHEAD_IDLE_S - time.monotonic()
        if wait > 0:
            self._schedule(wait)
            return
        if self.later:
            self.done_later += 1
            self._one(self.later.pop(0))
        self._schedule(0.01)


#: when a view computing ahead was last shown, or a student last moved a control of a view
_activity = [0.0]
#: whether a browser has moved a control in this kernel (idle work waits for one)
_heard = [False]
#: whether a cell is running now (None: not known, no IPython shell to tell)
_in_cell: list[bool | None] = [None]


def hear(*controls: Any) -> None:
    """Count every change of ``controls`` as a student's move, delaying the computing ahead of
    every view by `AHEAD_IDLE_S` (work for one view never delays a move in another). Only a
    change made between cells (a browser's message) says that a browser is there."""
    _watch_cells()
    for control in controls:
        control.observe(_moved, names="value")


def _moved(_: Any = None) -> None:
    _activity[0] = time.monotonic()
    if _in_cell[0] is False:
        _heard[0] = True


def _watch_cells() -> None:
    """Keep `_in_cell` up to date from the IPython shell's public ``pre_run_cell`` and
    ``post_run_cell`` events (registered once per shell; nothing outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets needs IPython
        return
    shell = get_ipython()
    if shell is None or getattr(shell, "_fpx_cells_watched", False):
        return
    shell.events.register("pre_run_cell", lambda *_: _in_cell.__setitem__(0, True))
    shell.events.register("post_run_cell", lambda *_: _in_cell.__setitem__(0, False))
    shell._fpx_cells_watched = True
    _in_cell[0] = True  # the cell that builds the first view is running


def error_panel(exc: BaseException) -> str:
    """HTML for an error: the package's own as their message, others (bugs) with a traceback."""
    if isinstance(exc, FpexploreError):
        return part("error_line", str(exc))
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-3:])
    return part("error_panel", type(exc).__name__, str(exc), tb)
