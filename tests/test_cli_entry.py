"""One way in: ``python -m fpexplore`` is ``fpexplore``; the set-up, recording and upkeep
commands are subcommands of it (and their ``python -m MODULE`` forms are the same command)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from fpexplore import cli, commands


def python_m(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, timeout=120
    )


def test_python_m_fpexplore_is_the_command():
    done = python_m("fpexplore", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: fpexplore")
    for c in commands.COMMANDS:
        assert c.words[0] in done.stdout
    assert "record-gpu" in done.stdout  # the old name still works


def _subparser(*words: str) -> argparse.ArgumentParser:
    parser = cli.build_parser()
    for w in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[w]
    return parser


@pytest.mark.parametrize("command", commands.COMMANDS, ids=lambda c: c.name)
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main([*command.words, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: fpexplore {command.name}")
    # the options are the ones declared once in fpexplore.commands
    p = argparse.ArgumentParser()
    command.add_arguments(p)
    for action in p._actions:
        for flag in action.option_strings:
            assert flag in out


def test_help_of_the_groups_and_the_alias(capsys):
    for words in (("setup",), ("record",), ("record-gpu",)):
        with pytest.raises(SystemExit) as exc:
            cli.main([*words, "--help"])
        assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "djl" in out and "cuda-kernels" in out and "nccl" in out and "--device" in out


def test_python_m_fpexplore_subcommand_help_in_a_fresh_process():
    done = python_m("fpexplore", "setup", "djl", "--help")
    assert done.returncode == 0, done.stderr
    assert "--no-warm" in done.stdout


#: modules that still run as ``python -m``: the processes fpexplore starts itself, and the
#: maintainers' generator of data/images
OWN_ENTRIES = {
    "__main__.py",
    "cli.py",
    "images.py",
    "jvm/worker.py",
    "dispatch/worker.py",
    "lessons/summation_order/blas_worker.py",
    "testing/runner.py",
    "lessons/distributed_reduction/worker.py",
}


def test_one_way_in_no_module_has_its_own_entry():
    """Set-up, recording, warm-up and myths are subcommands of ``fpexplore``, not modules run
    with ``python -m``."""
    import fpexplore

    root = Path(fpexplore.__file__).parent
    entries = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if 'if __name__ == "__main__"' in p.read_text(encoding="utf-8")
    }
    assert entries <= OWN_ENTRIES, sorted(entries - OWN_ENTRIES)


def test_commands_dispatch_to_their_function(monkeypatch, capsys):
    """The parsed namespace reaches the command's function as it is: the line is read once."""
    seen = []
    monkeypatch.setattr(
        "fpexplore.myths.command", lambda args: seen.append(args) or 0, raising=True
    )
    assert cli.main(["myths", "--json"]) == 0
    assert len(seen) == 1 and seen[0].json is True


def test_alias_runs_the_same_function(monkeypatch):
    seen = []
    monkeypatch.setattr("fpexplore.recorder.command", lambda args: seen.append(args) or 0)
    assert cli.main(["record-gpu", "--quick", "--device", "cpu"]) == 0
    assert cli.main(["record", "gpu", "--quick", "--device", "cpu"]) == 0
    assert [(a.quick, a.device, a.out) for a in seen] == [(True, "cpu", None)] * 2


def test_argument_errors_quote_the_argv_given_to_main_not_sys_argv(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["fpexplore", "something", "else", "entirely"])
    assert cli.main(["run", "summation_order", "--n"]) == 2
    err = capsys.readouterr().err
    assert "--n" in err and "entirely" not in err and "else" not in err


def test_the_command_line_is_parsed_once(monkeypatch):
    """main reads its argv once: the top parser sees it one time, and a lesson's parser sees
    only the tokens the top parser left (the lesson's parameters)."""
    calls: list[tuple[str, ...]] = []
    real = argparse.ArgumentParser.parse_known_args

    def spy(self, args=None, namespace=None):
        calls.append((self.prog, tuple(args) if args is not None else None))
        return real(self, args, namespace)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", spy)
    monkeypatch.setattr("fpexplore.cli._run", lambda args: 0)
    assert cli.main(["run", "summation_order", "--n", "10"]) == 0
    top = [c for c in calls if c[0] == "fpexplore"]
    assert top == [("fpexplore", ("run", "summation_order", "--n", "10"))]
    assert all(c[1] is not None for c in calls)  # never sys.argv behind main's back


def test_unknown_subcommand_is_refused():
    with pytest.raises(SystemExit) as exc:
        cli.main(["record", "tpu"])
    assert exc.value.code == 2


def test_bad_lesson_parameter_error_is_one_line(capsys):
    assert cli.main(["run", "summation_order", "--n", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fpexplore: error:")
