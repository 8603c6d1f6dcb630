"""The command line generated from the lessons' declarations: help, unknown parameters,
the explanation (hidden by --brief)."""

from __future__ import annotations

import pytest

from fpexplore import cli
from fpexplore.lessons import all_lessons
from fpexplore.params import Depends, Interval, Options

LESSONS = all_lessons()


def _out(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_lesson_help_lists_every_parameter(name, capsys):
    code, out, _ = _out(capsys, "run", name, "--help")
    assert code == 0 and f"fpexplore run {name}" in out
    text = " ".join(out.split())  # help wraps lines
    for p in LESSONS[name].params:
        assert f"--{p.name}" in out, p.name
        default = f"by {p.on}" if isinstance(p, Depends) else repr(p.default)  # per case
        assert f"default: {default}" in text, p.name
        if isinstance(p, Interval | Options | Depends):  # a Depends: every case's range
            assert " ".join(p.accepted().split()) in text, p.name
    assert "`" not in out


def test_run_help_lists_the_lessons_and_top_help_has_no_backticks(capsys):
    code, out, _ = _out(capsys, "run", "--help")
    assert code == 0 and all(name in out for name in LESSONS)
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "`" not in capsys.readouterr().out


def test_unknown_parameter_names_the_lesson_and_its_parameters(capsys):
    name = "summation_order"
    for argv in (["--stage", "3"], ["--bogus", "3"], ["--stage=3"]):
        code, out, err = _out(capsys, "run", name, *argv)
        assert code == 2 and out == ""
        bad = argv[0].lstrip("-").partition("=")[0]
        assert f"lesson '{name}' has no parameter '{bad}'; its parameters are" in err
        assert all(f"--{p.name}" in err for p in LESSONS[name].params)
    code, _, err = _out(capsys, "run", "rng_seeds", "--b", "nope")  # no abbreviation
    assert code == 2 and "'b'" in err and "nope" in err


def test_explanation_printed_unless_brief(capsys):
    lesson = LESSONS["gpu_determinism"]
    first = lesson.explanation.strip().splitlines()[0]
    code, out, _ = _out(capsys, "run", "gpu_determinism", "--device", "recorded")
    assert code == 0 and "Why:" in out and first in out
    code, out, _ = _out(capsys, "run", "gpu_determinism", "--device", "recorded", "--brief")
    assert code == 0 and "Why:" not in out and first not in out


def _tools():
    from fpexplore import tools_cli

    return tools_cli.tools()


@pytest.mark.parametrize("tool", _tools(), ids=lambda t: t.name)
def test_a_tools_command_line_is_its_declaration(tool, capsys):
    """Every declared parameter is on the tool's command line with its help, and an option
    given a value outside its declaration is refused naming the option and what it accepts,
    before anything runs."""
    with pytest.raises(SystemExit):
        cli.main([tool.name, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    declared = {p.name: p for p in tool.params}
    bare = [declared[name].default or "x" for name in tool.positional]  # valid where it can be
    for p in tool.params:
        assert (p.name.upper() if p.name in tool.positional else p.name.replace("_", "-")) in text
        if p.name in tool.positional or not isinstance(p, Interval | Options):
            continue
        args = [tool.name, *bare, f"--{p.name}", "999999999999"]
        assert cli.main(args) == 2
        err = capsys.readouterr().err
        assert f"'--{p.name}'" in err and p.accepted()[:20] in err, err
