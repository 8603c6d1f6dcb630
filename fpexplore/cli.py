"""The ``fpexplore`` command: doctor, list, run, record-gpu."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from . import __version__
from .errors import FpexploreError

_START = time.perf_counter()
# `fpexplore doctor` answers within about this many seconds of the command starting.
DOCTOR_DEADLINE_S = 3.5


def _since_start() -> float:
    return time.perf_counter() - _START


def _doctor(_: argparse.Namespace) -> int:
    from . import backends

    rows = []
    for info in backends.probe_all(deadline_s=max(0.5, DOCTOR_DEADLINE_S - _since_start())):
        rows.append(
            (
                info.name,
                "yes" if info.available else "NO",
                info.version or "—",
                ", ".join(info.devices) or "—",
                "—" if info.threads is None else str(info.threads),
                (info.fix and f"fix: {info.fix}") or info.detail,
            )
        )
    head = ("backend", "available", "version", "devices", "threads", "")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return 0


def _list(_: argparse.Namespace) -> int:
    from .lessons import all_lessons

    lessons = all_lessons()
    width = max((len(n) for n in lessons), default=0)
    for name, lesson in lessons.items():
        print(f"{name.ljust(width)}  {lesson.summary}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from .lessons import get

    lesson = get(args.lesson)
    params = _parse_params(lesson, args.params)
    comparison = lesson.run(**params)
    print(comparison.to_json(indent=2) if args.json else comparison.table())
    return 0


def _parse_params(lesson: Any, tokens: Sequence[str]) -> dict[str, Any]:
    """``--name value`` pairs (``--name=value`` too), parsed by each declared parameter."""
    from .errors import InvalidParameter

    out: dict[str, Any] = {}
    items = list(tokens)
    while items:
        token = items.pop(0)
        if not token.startswith("--"):
            raise InvalidParameter("parameter", token, "--name value pairs")
        name, _, value = token[2:].partition("=")
        name = name.replace("-", "_")
        if not value:
            if not items:
                raise InvalidParameter(name, None, "a value after --" + name)
            value = items.pop(0)
        try:
            param = lesson.param(name)
        except KeyError:
            known = ", ".join("--" + p.name for p in lesson.params)
            raise InvalidParameter(
                name, value, f"one of {known}", f"lesson '{lesson.name}'"
            ) from None
        try:
            out[name] = param.parse(value)
        except InvalidParameter as exc:  # say which lesson, as validation does
            raise InvalidParameter(
                exc.name, exc.given, exc.accepted, f"lesson '{lesson.name}'"
            ) from None
    return out


def _record_gpu(args: argparse.Namespace) -> int:
    from . import recorder

    path = recorder.record_gpu(out_dir=args.out, device=args.device, quick=args.quick)
    print(f"wrote {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fpexplore", description=__doc__)
    parser.add_argument("--version", action="version", version=f"fpexplore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("doctor", help="which backends are available, and how to fix the missing")
    sub.add_parser("list", help="the lessons, one line each")
    run = sub.add_parser("run", help="run a lesson and print its comparison")
    run.add_argument("lesson")
    run.add_argument("--json", action="store_true", help="print JSON for scripts")
    rec = sub.add_parser("record-gpu", help="run every GPU experiment and record it to data/gpu")
    rec.add_argument("--out", default=None, help="output folder (default: data/gpu)")
    rec.add_argument("--device", default="cuda", help="torch device string (default: cuda)")
    rec.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    _add_delivery_commands(sub)
    _add_tool_commands(sub)
    return parser


_COMMANDS = {"doctor": _doctor, "list": _list, "run": _run, "record-gpu": _record_gpu}


# `fpexplore report` and `fpexplore export` keep their options in their own modules.
def _add_delivery_commands(sub: Any) -> None:
    from . import export, report

    report.add_command(sub)
    export.add_command(sub)


def _report(args: argparse.Namespace) -> int:
    from . import report

    return report.command(args)


def _export(args: argparse.Namespace) -> int:
    from . import export
    from .lessons import get

    return export.command(args, _parse_params(get(args.lesson), args.params))


_COMMANDS.update(report=_report, export=_export)


# `fpexplore diverge`, `tolerance` and `check-determinism` live in their own module.
def _add_tool_commands(sub: Any) -> None:
    from . import tools_cli

    tools_cli.add_commands(sub)
    _COMMANDS.update(tools_cli.COMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command in ("run", "export"):
        args.params = extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return _COMMANDS[args.command](args)
    except FpexploreError as exc:
        print(f"fpexplore: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
