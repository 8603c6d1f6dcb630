"""The fpexplore command: doctor, list, run, report, export, the tools for your own models,
and the set-up, recording and upkeep commands (setup, record, warm, myths).

Each lesson's options are generated from its declared parameters: ``fpexplore run LESSON
--help`` lists them with their type, range or choices, default and help.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from . import __version__
from .commands import Command, parser_for
from .errors import FpexploreError, InvalidParameter, UnknownParameter
from .params import parse_texts

_START = time.perf_counter()
# `fpexplore doctor` answers within about this many seconds of the command starting.
DOCTOR_DEADLINE_S = 3.5


def _doctor(args: argparse.Namespace) -> int:
    from . import backends

    spent = time.perf_counter() - _START
    infos = backends.probe_all(deadline_s=max(0.5, DOCTOR_DEADLINE_S - spent))
    rows = [
        (
            info.name,
            "yes" if info.available else "NO",
            info.version or "—",
            ", ".join(info.devices) or "—",
            "—" if info.threads is None else str(info.threads),
            (info.fix and f"fix: {info.fix}") or info.detail,
        )
        for info in infos
    ]
    head = ("backend", "available", "version", "devices", "threads", "")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    from .lock import report as lock_report

    print("\n" + "\n".join(lock_report()))  # after a blank line: the table ends there
    if getattr(args, "workshop", False):
        from .workshop import check

        return check.report(infos)
    return 0


def _lesson_lines(indent: str = "") -> list[str]:
    """One line per lesson: its name and summary."""
    from .lessons import all_lessons

    lessons = all_lessons()
    width = max((len(n) for n in lessons), default=0)
    return [f"{indent}{n.ljust(width)}  {lesson.summary}" for n, lesson in lessons.items()]


def _list(_: argparse.Namespace) -> int:
    print("\n".join(_lesson_lines()))
    return 0


def _run(args: argparse.Namespace) -> int:
    from .lessons import get

    if args.lesson is None:
        print(_run_help())
        return 0 if args.help else 2
    lesson = get(args.lesson)
    if args.help:
        print(lesson_parser(lesson).format_help().rstrip())
        return 0
    comparison = lesson.run(**_parse_params(lesson, args.params))
    if args.json:
        print(comparison.to_json(indent=2))
        return 0
    print(comparison.table(wide=getattr(args, "wide", False)))
    if not args.brief and comparison.explanation.strip():
        print("\nWhy:\n" + comparison.explanation.strip())
    return 0


def _run_help() -> str:
    lines = [
        "usage: fpexplore run LESSON [--PARAM VALUE ...] [--json] [--brief] [--wide]",
        "",
        "Run a lesson and print its comparison, claims and explanation.",
        "",
        "lessons (fpexplore run LESSON --help lists a lesson's parameters):",
        *_lesson_lines("  "),
        "",
        "options:",
        "  --json    print JSON for scripts",
        "  --brief   leave out the explanation",
        "  --wide    every table column in full (default: at most 100 columns)",
    ]
    return "\n".join(lines)


def lesson_parser(lesson: Any) -> argparse.ArgumentParser:
    """The command-line options of ``lesson``, generated from its declared parameters."""
    parser = parser_for(
        lesson.params,
        title="parameters",
        prog=f"fpexplore run {lesson.name}",
        description=f"{lesson.title}: {lesson.summary}".replace("`", ""),
        add_help=False,
        allow_abbrev=False,
    )
    other = parser.add_argument_group("options")
    other.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    _add_output_options(other)
    return parser


def _add_output_options(parser: Any) -> None:
    """``--json``, ``--brief`` and ``--wide`` of ``fpexplore run``."""
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument("--brief", action="store_true", help="leave out the explanation")
    parser.add_argument("--wide", action="store_true", help="every table column in full")


def _parse_params(lesson: Any, tokens: Sequence[str]) -> dict[str, Any]:
    """``--name value`` pairs (``--name=value`` too), parsed by each declared parameter."""
    parser = lesson_parser(lesson)
    given, extra = parser.parse_known_args(list(tokens))
    where = f"lesson '{lesson.name}'"
    for token in extra:
        if token.startswith("-"):
            name, _, value = token.lstrip("-").partition("=")
            known = tuple("--" + p.name for p in lesson.params)
            raise UnknownParameter(name.replace("-", "_"), value, known, where)
        raise InvalidParameter("parameter", token, "--name value pairs", where)
    try:
        return parse_texts(lesson.params, vars(given))
    except InvalidParameter as exc:  # say which lesson, as validation does
        raise InvalidParameter(exc.name, exc.given, exc.accepted, where) from None


def _doctor_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workshop",
        action="store_true",
        help="also before a workshop: which notebooks run here, which cannot (with the fix), "
        "and an estimate of how long the series takes here from a short timed probe",
    )


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lesson", nargs="?")
    parser.add_argument("-h", "--help", action="store_true")
    _add_output_options(parser)


def subcommands() -> tuple[Command, ...]:
    """Every subcommand of ``fpexplore``, in the order its help lists them."""
    from . import export, report, tools_cli
    from .commands import ALIASES, COMMANDS

    return (
        Command(
            ("doctor",),
            "which backends are available, and how to fix the missing",
            _doctor_options,
            "fpexplore.cli:_doctor",
        ),
        Command(("list",), "the lessons, one line each", target="fpexplore.cli:_list"),
        Command(
            ("run",),
            "run a lesson and print its comparison",
            _run_options,
            "fpexplore.cli:_run",
            lesson_params=True,
            help_option=False,
        ),
        *COMMANDS,
        *ALIASES,
        Command(
            ("report",),
            "run every lesson here, write one HTML report",
            report.add_arguments,
            "fpexplore.report:command",
        ),
        Command(
            ("export",),
            "one lesson as a standalone HTML page (for slides)",
            export.add_arguments,
            "fpexplore.cli:_export",
            lesson_params=True,
        ),
        *tools_cli.tools(),
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``fpexplore`` parser: each of `subcommands` added the one way (`Command.add_to`),
    those of two words under a group named by the first (``fpexplore record gpu``)."""
    doc = (__doc__ or "").replace("``", "")
    parser = argparse.ArgumentParser(prog="fpexplore", description=doc)
    parser.add_argument("--version", action="version", version=f"fpexplore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    every, groups = subcommands(), {}
    for c in every:
        *head, _ = c.words
        if head and head[0] not in groups:
            tails = ", ".join(x.words[-1] for x in every if x.words[:-1] == tuple(head))
            group = sub.add_parser(head[0], help=f"{head[0]}: {tails}")
            groups[head[0]] = group.add_subparsers(dest="what", required=True, metavar="WHAT")
        c.add_to(groups[head[0]] if head else sub)
    return parser


def _export(args: argparse.Namespace) -> int:
    from . import export
    from .lessons import get

    return export.command(args, _parse_params(get(args.lesson), args.params))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``), read once: the command's own
    options here, a lesson's parameters (run, export) from what is left, by the lesson's parser."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    command = args._command
    if command.lesson_params:
        args.params = extra
    elif extra:  # one line naming them, as every refusal of the package
        print(f"fpexplore: error: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    try:
        return command.run(args)
    except FpexploreError as exc:
        print(f"fpexplore: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
