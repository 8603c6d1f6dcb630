"""``fpexplore report``: what does my stack do? Every lesson run on this machine, plus the
recorded GPU runs, in one self-contained HTML page.

Each lesson runs with its default parameters through the same `Lesson.run` as the notebooks,
widgets and CLI; parts missing here (a framework, Java, a GPU) show as Unavailable rows and
claims not checked. Lessons that read recorded GPU runs are run again on each older record, so
every card recorded in ``data/gpu`` is in the report.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import page
from .errors import FpexploreError

if TYPE_CHECKING:
    from .lessons import Lesson
    from .result import Comparison

__all__ = ["LessonRun", "build", "run_lessons", "write"]


@dataclass
class LessonRun:
    """One lesson run for the report: its comparison and figure, or why it could not run."""

    lesson: Lesson
    params: dict[str, Any]
    seconds: float = 0.0
    comparison: Comparison | None = None
    figure: str = ""
    error: str = ""
    crashed: bool = False  # an unexpected exception (a bug), not a documented refusal
    label: str = ""
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def anchor(self) -> str:
        return "lesson-" + "-".join(
            filter(None, [self.lesson.name, self.label.replace(".", "-").replace(" ", "-")])
        )


def _run_one(lesson: Lesson, params: dict[str, Any], label: str = "") -> LessonRun:
    out = LessonRun(lesson, params, label=label)
    t0 = time.perf_counter()
    try:
        out.comparison = lesson.run(**params)
        out.counts = page.claim_counts(out.comparison)
        out.figure = page.figure_html(lesson, out.comparison)
    except FpexploreError as exc:
        out.error = f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        out.crashed = True
        last = traceback.extract_tb(exc.__traceback__)[-1]
        out.error = f"{type(exc).__name__}: {exc} (at {Path(last.filename).name}:{last.lineno})"
    out.seconds = time.perf_counter() - t0
    return out


def _record_variants(lessons: dict[str, Lesson]) -> list[tuple[Lesson, dict[str, Any], str]]:
    """(lesson, params, label) for each older GPU record and each lesson with a ``record``
    parameter: the newest record is already shown by the lessons' default run."""
    from . import records

    older = records.available()[1:]
    out = []
    for path in older:
        for lesson in lessons.values():
            names = [p.name for p in lesson.params]
            if "record" in names:
                out.append((lesson, {"record": path.name}, path.stem))
    return out


def run_lessons(
    names: Sequence[str] | None = None, *, all_records: bool = True, progress: bool = True
) -> list[LessonRun]:
    """Run the lessons (all, or ``names``) with their defaults, then on each older record."""
    from tqdm.auto import tqdm

    from .errors import InvalidParameter
    from .lessons import all_lessons, get

    if names is not None and (
        not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names)
    ):
        raise InvalidParameter("names", names, "None (every lesson) or a list of lesson names")
    for flag, value in (("all_records", all_records), ("progress", progress)):
        if not isinstance(value, bool):
            raise InvalidParameter(flag, value, "True or False", "report")
    lessons = {n: get(n) for n in names} if names else all_lessons()
    jobs: list[tuple[Lesson, dict[str, Any], str]] = [(ls, {}, "") for ls in lessons.values()]
    if all_records:
        jobs += _record_variants(lessons)
    runs = []
    bar = tqdm(jobs, desc="lessons", unit="lesson", disable=not progress, leave=False)
    for lesson, params, label in bar:
        bar.set_postfix_str(lesson.name + (f" on {label}" if label else ""))
        runs.append(_run_one(lesson, params, label))
    return runs


def _backends_html() -> str:
    from . import backends

    rows = []
    for info in backends.probe_all():
        rows.append(
            "<tr>"
            f"<td>{page.esc(info.name)}</td>"
            f"<td>{'yes' if info.available else '<b>no</b>'}</td>"
            f"<td>{page.esc(info.version or '—')}</td>"
            f"<td>{page.esc(', '.join(info.devices) or '—')}</td>"
            f"<td>{page.esc('' if info.threads is None else info.threads)}</td>"
            f"<td>{page.esc((info.fix and f'fix: {info.fix}') or info.detail)}</td></tr>"
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("backend", "available", "version", "devices", "threads", "")
    )
    return f"<table class='fpx-meta'><tr>{head}</tr>{''.join(rows)}</table>"


def _records_html() -> str:
    from . import records

    paths = records.available()
    if not paths:
        return (
            "<p>No recorded GPU run in this installation. Record one on a CUDA machine with "
            f"<code>{page.esc(records.RECORD_FIX)}</code>.</p>"
        )
    rows = []
    for i, path in enumerate(paths):
        try:
            rec = records.load(path)
        except FpexploreError as exc:
            rows.append(f"<tr><td>{page.esc(path.name)}</td><td colspan=5>{page.esc(exc)}</td>")
            continue
        p = rec.provenance
        rows.append(
            "<tr>"
            f"<td>{page.esc(path.name)}{' (newest: used by default)' if i == 0 else ''}</td>"
            f"<td>{page.esc(rec.card)}</td><td>{page.esc(rec.date)}</td>"
            f"<td>torch {page.esc(p.get('torch'))}, CUDA {page.esc(p.get('cuda'))}, "
            f"cuDNN {page.esc(p.get('cudnn'))}, driver {page.esc(p.get('driver'))}</td>"
            f"<td>{page.esc(', '.join(rec.experiments))}</td></tr>"
        )
    head = "".join(f"<th>{h}</th>" for h in ("file", "card", "date", "versions", "experiments"))
    return f"<table class='fpx-meta'><tr>{head}</tr>{''.join(rows)}</table>"


def _ulp_text(v: float | None) -> str:
    return "— (a random stream: no truth)" if v is None else f"{v:.3g}"


def _fingerprint_html() -> str:
    """This machine's fingerprint (`fpexplore fingerprint`), compared with the shipped ones."""
    from .dispatch import classroom, fingerprint
    from .dispatch.compare import compare
    from .errors import FpexploreError
    from .paths import data_dir

    here = fingerprint.take("this machine")
    m = here["machine"]
    rows = [
        ("CPU", f"{m['cpu']} ({m['arch']}); path flags: {', '.join(m['cpu_flags']) or 'none'}"),
        ("numpy", f"{m['numpy']['version']}; SIMD {', '.join(m['numpy']['simd_targets'])}"),
    ]
    if "torch" in m:
        rows.append(("torch", f"{m['torch']['version']}; ATen path {m['torch']['capability']}"))
    if "tensorflow" in m:
        tf = m["tensorflow"]
        rows.append(("TensorFlow", f"{tf['version']}; {tf['onednn_reason']}"))
    ops = "".join(
        f"<tr><td>{page.esc(k)}</td><td><code>{op['digest']}</code></td>"
        f"<td>{_ulp_text(op['max_ulp'])}</td></tr>"
        for k, op in here["ops"].items()
    )
    parts = [
        page.meta_table(rows),
        "<table><tr><th>result</th><th>bits</th><th>max ULPs from the exact truth</th></tr>"
        f"{ops}</table>",
    ]
    try:
        shipped = classroom.load_folder(data_dir() / "fingerprints")
    except FpexploreError:
        shipped = []
    for other in shipped:
        parts.append(f"<h3>against {page.esc(other.get('label', ''))}</h3>")
        parts.append(compare(here, other).html())
    return "".join(parts)


def _summary_html(runs: list[LessonRun]) -> str:
    rows = []
    for r in runs:
        if r.comparison is None:
            state = f"<span class='s-fails'>{'crashed' if r.crashed else 'did not run'}</span>"
        else:
            ran = sum(o.ran for o in r.comparison.outcomes)
            state = (
                f"{page.counts_html(r.counts) or 'no claims'}; "
                f"{ran} of {len(r.comparison.outcomes)} implementations ran"
            )
        name = r.lesson.name + (f" on {r.label}" if r.label else "")
        rows.append(
            f"<tr><td><a href='#{r.anchor}'>{page.esc(name)}</a></td>"
            f"<td>{page.esc(r.lesson.title)}</td><td>{state}</td><td>{r.seconds:.1f} s</td></tr>"
        )
    head = "<tr><th>lesson</th><th>question</th><th>claims</th><th>time</th></tr>"
    return f"<table class='fpx-meta'>{head}{''.join(rows)}</table>"


def _lesson_html(r: LessonRun) -> str:
    title = r.lesson.title + (f" — recorded on {r.label}" if r.label else "")
    notebook = r.lesson.notebook and f", notebook <code>{page.esc(r.lesson.notebook)}</code>"
    params = page.params_text(r.comparison.params if r.comparison else r.params)
    parts = [
        f"<h2 id='{r.anchor}'>{page.esc(title)}</h2>",
        f"<p>{page.esc(r.lesson.summary)}</p>",
        f"<p class='fpx-muted'>lesson <code>{page.esc(r.lesson.name)}</code>{notebook}; "
        f"parameters: {page.esc(params)}; {r.seconds:.1f} s</p>",
    ]
    if r.comparison is None:
        parts.append(f"<p class='fpx-error'>{page.esc(r.error)}</p>")
        if r.lesson.explanation:
            parts.append(f"<p>{page.esc(r.lesson.explanation)}</p>")
        return "".join(parts)
    parts.append(r.figure)
    parts.append(page.comparison_html(r.comparison))
    if not r.comparison.explanation and r.lesson.explanation:
        parts.append(f"<h3>Why</h3><p>{page.esc(r.lesson.explanation)}</p>")
    return "".join(parts)


def build(runs: list[LessonRun]) -> str:
    """The report page of ``runs`` (see `run_lessons`) on this machine."""
    totals = {"holds": 0, "fails": 0, "not checked": 0}
    for r in runs:
        for k, n in r.counts.items():
            totals[k] += n
    not_run = [r for r in runs if r.comparison is None]
    body = [
        "<h1>What does my stack do?</h1>",
        "<p>Every lesson of fpexplore run on this machine against an exact or certified "
        "ground truth, and the recorded GPU runs. Claims hold on every machine; a claim "
        "that fails is a finding (or a bug); one not checked names what was missing.</p>",
        f"<p><b>Claims:</b> {page.counts_html(totals) or 'none'}"
        + (
            f"; <span class='s-fails'>{len(not_run)} lesson run(s) did not run</span>"
            if not_run
            else ""
        )
        + "</p>",
        "<h2>This machine</h2>",
        page.meta_table(page.machine()),
        _backends_html(),
        "<h2>This machine's fingerprint</h2>",
        "<p>The same fixed computations as <code>fpexplore fingerprint</code>: their bits, their "
        "errors against the exact truth, and what separates them from the machines the series "
        "ships (<code>fpexplore compare</code>).</p>",
        _fingerprint_html(),
        "<h2>Recorded GPU runs</h2>",
        _records_html(),
        "<h2>Lessons</h2>",
        _summary_html(runs),
        *(_lesson_html(r) for r in runs),
    ]
    return page.document("fpexplore report", "".join(body))


def write(
    out: str | Path,
    names: Sequence[str] | None = None,
    *,
    all_records: bool = True,
    progress: bool = True,
) -> tuple[Path, list[LessonRun]]:
    """Run the lessons and write the report to ``out`` (checked first: a file whose folder
    exists); returns the path and the runs."""
    from .paths import check_out

    path = check_out(out, "out", "report")
    runs = run_lessons(names, all_records=all_records, progress=progress)
    path.write_text(build(runs), encoding="utf-8")
    return path, runs


# ----------------------------------------------------------------------------- command line
def add_command(sub: Any) -> None:
    """Register ``fpexplore report`` on the CLI's subparsers."""
    cmd = sub.add_parser("report", help="run every lesson here, write one HTML report")
    cmd.add_argument("--out", default="report.html", help="the HTML file (default report.html)")
    cmd.add_argument(
        "--lesson", action="append", default=None, help="only this lesson (repeatable)"
    )
    cmd.add_argument(
        "--newest-record-only", action="store_true", help="skip runs on older GPU records"
    )
    cmd.add_argument("--no-progress", action="store_true", help="no progress bars")


def command(args: Any) -> int:
    """``fpexplore report``: 0 when every lesson ran or refused cleanly, 1 if one crashed."""
    import os
    import sys

    from .paths import check_out

    check_out(args.out, "--out", "fpexplore report")
    os.environ.setdefault("MPLBACKEND", "Agg")
    path, runs = write(
        args.out,
        args.lesson,
        all_records=not args.newest_record_only,
        progress=not args.no_progress,
    )
    crashed = [r for r in runs if r.crashed]
    print(f"wrote {path} ({len(runs)} lesson runs)")
    for r in crashed:
        print(f"fpexplore: {r.lesson.name} crashed: {r.error}", file=sys.stderr)
    return 1 if crashed else 0
