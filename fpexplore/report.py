"""``fpexplore report``: what does my stack do? Every lesson run here with its defaults (parts
missing here show as unavailable rows and claims not checked), and again on each older GPU
record, in one self-contained HTML page.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import page, templates
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
    figure: dict[str, str] | None = None  # `page.figure`
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
        out.figure = page.figure(lesson, out.comparison)
    except FpexploreError as exc:
        out.error = f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        out.crashed = True
        last = traceback.extract_tb(exc.__traceback__)[-1]
        out.error = f"{type(exc).__name__}: {exc} (at {Path(last.filename).name}:{last.lineno})"
    out.seconds = time.perf_counter() - t0
    return out


def _record_variants(lessons: dict[str, Lesson]) -> list[tuple[Lesson, dict[str, Any], str]]:
    """(lesson, params, label) for each older GPU record (the default run shows the newest)
    and each lesson with a ``record`` parameter."""
    from . import records

    return [
        (lesson, {"record": path.name}, path.stem)
        for path in records.available()[1:]
        for lesson in lessons.values()
        if any(p.name == "record" for p in lesson.params)
    ]


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


def _records() -> list[dict[str, Any]]:
    """The recorded GPU runs, newest first: what each file holds, or why it can't be read."""
    from . import records

    rows: list[dict[str, Any]] = []
    for path in records.available():
        try:
            rec = records.load(path)
        except FpexploreError as exc:
            rows.append({"name": path.name, "error": str(exc)})
            continue
        p = rec.provenance
        versions = (
            f"torch {p.get('torch')}, CUDA {p.get('cuda')}, cuDNN {p.get('cudnn')}, "
            f"driver {p.get('driver')}"
        )
        rows.append({"name": path.name, "card": rec.card, "date": rec.date,
                     "versions": versions, "experiments": rec.experiments})  # fmt: skip
    return rows


def _ulp_text(v: float | None) -> str:
    return "— (a random stream: no truth)" if v is None else f"{v:.3g}"


def _fingerprint() -> dict[str, Any]:
    """This machine's fingerprint (`fpexplore fingerprint`), compared with the shipped ones."""
    from .dispatch import classroom, fingerprint
    from .dispatch.compare import compare
    from .paths import shipped_data_dir

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
    try:
        shipped = classroom.shipped(shipped_data_dir())
    except FpexploreError:
        shipped = []
    return {
        "rows": rows,
        "ops": [(k, op["digest"], _ulp_text(op["max_ulp"])) for k, op in here["ops"].items()],
        "against": [
            (other.label or "", templates.trusted(compare(here, other).html())) for other in shipped
        ],
    }


def _fleet() -> dict[str, Any]:
    """The real machines' records (``data/machines``): each machine, and which claim each
    broke; or why they could not be read."""
    from . import machines
    from .lessons import all_lessons

    found, error = machines.try_load_all()
    return {
        "machines": [machines.summary_row(m) for m in found],
        "broken": machines.broken_rows(found, all_lessons()),
        "error": error,
    }


def build(runs: list[LessonRun]) -> str:
    """The report page of ``runs`` (see `run_lessons`) on this machine."""
    from .backends import probe_all
    from .records import RECORD_FIX
    from .result import State

    totals = State.counts()
    for r in runs:
        for k, n in r.counts.items():
            totals[k] += n
    return page.render(
        "report.html",
        title="fpexplore report",
        totals=totals,
        not_run=sum(r.comparison is None for r in runs),
        machine=page.machine(),
        backends=probe_all(),
        fingerprint=_fingerprint(),
        fleet=_fleet(),
        records=_records(),
        record_fix=RECORD_FIX,
        runs=runs,
    )


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
def add_arguments(cmd: Any) -> None:
    """The options of ``fpexplore report`` (declared in `fpexplore.cli.subcommands`)."""
    cmd.add_argument("--out", default="report.html", help="the HTML file (default report.html)")
    cmd.add_argument("--lesson", action="append", help="only this lesson (repeatable)")
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
