"""The fpexplore command: doctor, list, run, report, export, the tools for your own models,
and the set-up, recording and upkeep commands (setup, record, warm, myths).

Each lesson's options are generated from its declared parameters: ``fpexplore run LESSON
--help`` lists them with their type, range or choices, default and help.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
import time
from collections.abc import Sequence
from typing import Any

from . import __version__
from .errors import FpexploreError

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
    params = _parse_params(lesson, args.params)
    comparison = lesson.run(**params)
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


def _plain(text: str | None) -> str | None:
    """Help as plain text: no reST backticks."""
    return text.replace("``", "").replace("`", "") if text else text


def _wrapped(text: str | None, width: int) -> str | None:
    """``text`` `_plain`, wrapped at spaces only to ``width``: choices such as 'onednn-off'
    stay whole."""
    if not text:
        return text
    words = " ".join(str(_plain(text)).split())
    return "\n".join(textwrap.wrap(words, max(width, 20), break_on_hyphens=False))


def _help_wrapped(kwargs: dict[str, Any]) -> dict[str, Any]:
    """An argument's keywords with its help `_wrapped` for the help column (as argparse lays
    it out: the terminal's width less 2, less 24 for the options)."""
    if isinstance(kwargs.get("help"), str) and kwargs["help"] != argparse.SUPPRESS:
        kwargs["help"] = _wrapped(kwargs["help"], shutil.get_terminal_size().columns - 26)
    return kwargs


class _Plain(argparse.ArgumentParser):
    """The ``fpexplore`` parser: its subcommands' help and descriptions are `_plain`."""

    def add_subparsers(self, **kwargs: Any) -> Any:
        action = super().add_subparsers(**kwargs)
        add = action.add_parser

        def add_parser(name: str, **kw: Any) -> Any:
            for key in ("help", "description"):
                kw[key] = _plain(kw.get(key))
            return add(name, **kw)

        action.add_parser = add_parser
        return action


class _Refusing(argparse.ArgumentParser):
    """An argument parser whose errors are the package's own (one line, exit 2), and whose help
    wraps at spaces only (`_wrapped`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawTextHelpFormatter)
        kwargs["description"] = _wrapped(
            kwargs.get("description"), shutil.get_terminal_size().columns - 2
        )
        super().__init__(*args, **kwargs)
        self.given: Sequence[str] = ()  # the tokens being parsed, quoted by errors

    def add_argument(self, *args: Any, **kwargs: Any) -> Any:
        return super().add_argument(*args, **_help_wrapped(kwargs))

    def add_argument_group(self, *args: Any, **kwargs: Any) -> Any:
        group = super().add_argument_group(*args, **kwargs)
        add = group.add_argument
        group.add_argument = lambda *a, **kw: add(*a, **_help_wrapped(kw))
        return group

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        self.given = tuple(args or ())
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> Any:  # type: ignore[override]
        from .errors import InvalidParameter

        raise InvalidParameter("arguments", " ".join(self.given), message)


def lesson_parser(lesson: Any) -> argparse.ArgumentParser:
    """The command-line options of ``lesson``, generated from its declared parameters."""
    from .params import Flag, help_line

    parser = _Refusing(
        prog=f"fpexplore run {lesson.name}",
        description=f"{lesson.title}: {lesson.summary}".replace("`", ""),
        add_help=False,
        allow_abbrev=False,
    )
    group = parser.add_argument_group("parameters")
    for p in lesson.params:
        names = [f"--{p.name}"] + ([f"--{p.name.replace('_', '-')}"] if "_" in p.name else [])
        extra: dict[str, Any] = {"nargs": "?", "const": "true"} if isinstance(p, Flag) else {}
        group.add_argument(*names, dest=p.name, metavar="VALUE", help=help_line(p), **extra)
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
    from .errors import InvalidParameter, UnknownParameter

    parser = lesson_parser(lesson)
    given, extra = parser.parse_known_args(list(tokens))
    where = f"lesson '{lesson.name}'"
    for token in extra:
        if token.startswith("-"):
            name, _, value = token.lstrip("-").partition("=")
            known = tuple("--" + p.name for p in lesson.params)
            raise UnknownParameter(name.replace("-", "_"), value, known, where)
        raise InvalidParameter("parameter", token, "--name value pairs", where)
    out: dict[str, Any] = {}
    for p in lesson.params:
        value = getattr(given, p.name)
        if value is None:
            continue
        try:
            out[p.name] = p.parse(value)
        except InvalidParameter as exc:  # say which lesson, as validation does
            raise InvalidParameter(exc.name, exc.given, exc.accepted, where) from None
    return out


def build_parser() -> argparse.ArgumentParser:
    doc = (__doc__ or "").replace("``", "")
    parser = _Plain(prog="fpexplore", description=doc)
    parser.add_argument("--version", action="version", version=f"fpexplore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    doctor = sub.add_parser(
        "doctor", help="which backends are available, and how to fix the missing"
    )
    doctor.add_argument(
        "--workshop",
        action="store_true",
        help="also before a workshop: which notebooks run here, which cannot (with the fix), "
        "and an estimate of how long the series takes here from a short timed probe",
    )
    sub.add_parser("list", help="the lessons, one line each")
    run = sub.add_parser(
        "run", help="run a lesson and print its comparison", add_help=False, allow_abbrev=False
    )
    run.add_argument("lesson", nargs="?")
    run.add_argument("-h", "--help", action="store_true")
    _add_output_options(run)
    from . import commands, export, report, tools_cli

    commands.add_commands(sub)
    report.add_command(sub)  # `report` and `export` keep their options in their own modules
    export.add_command(sub)
    tools_cli.add_commands(sub)
    return parser


def _report(args: argparse.Namespace) -> int:
    from . import report

    return report.command(args)


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
    if args.command in ("run", "export"):
        args.params = extra
    elif extra:  # one line naming them, as every refusal of the package
        print(f"fpexplore: error: unrecognized arguments: {' '.join(extra)}", file=sys.stderr)
        return 2
    try:
        command = getattr(args, "_command", None)
        if command is not None:
            return command.run(args)
        handlers = dict(doctor=_doctor, list=_list, run=_run, report=_report, export=_export)
        return handlers[args.command](args)
    except FpexploreError as exc:
        print(f"fpexplore: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
