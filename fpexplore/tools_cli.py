"""Command-line faces of the tools for your own models: ``fpexplore diverge``, ``fpexplore
tolerance``, ``fpexplore check-determinism``, and for your own machines: ``fpexplore
fingerprint``, ``fpexplore compare`` and ``fpexplore verify`` (registered by `fpexplore.cli`).

Each tool declares its parameters as a lesson does (`fpexplore.params`); its command line is
generated from them (`fpexplore.commands.parser_for`) and every value given is parsed and
validated by its declaration."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from .commands import Command
from .params import Depends, Flag, Interval, Options, Text

_JSON = Flag("json", False, "print JSON for scripts")
_FILE = "a file name"
_LABEL = Text("label", "", "a name for this machine in class tables")


def _tool(
    name: str, help: str, *params: Any, positional: tuple[str, ...] = (), target: str = ""
) -> Command:
    """The command ``fpexplore NAME``, run by ``target`` (default: this module's ``_NAME``)."""
    target = target or f"fpexplore.tools_cli:_{name.replace('-', '_')}"
    return Command((name,), help, target=target, params=params, positional=positional)


def _diverge_tool() -> Command:
    from .diverge.widget import zoo_params

    return _tool(
        "diverge",
        "compare a zoo model in two implementations layer by layer against the exact "
        "result; name the first layer where they part",
        *zoo_params(),
        _JSON,
        Text("plot", None, "also save the error plot", f"{_FILE} (PNG)"),
        positional=("model",),
    )


def _tolerance_tool() -> Command:
    from .tolerance import OPS, SIZES

    sizes = tuple(  # default 1024, or the nearest size the op takes
        (op, Interval("size", min(max(1024 // s * s, lo), hi), low=lo, high=hi, integer=True))
        for op, (lo, hi, s) in SIZES.items()
    )
    steps = "; ".join(f"{op} takes multiples of {s}" for op, (_, _, s) in SIZES.items() if s > 1)
    return _tool(
        "tolerance",
        "a-priori error bound, measured error and the rtol/atol to use for an op, format and size",
        Options("op", "sum", "the operation", choices=OPS),
        Options("fmt", "float32", "the format", ("float16", "bfloat16", "float32", "float64")),
        Depends("size", 1024, f"reduction length (see the output); {steps}", "op", sizes),
        _JSON,
        positional=("op",),
    )


def _determinism_tool() -> Command:
    from .determinism_check import FLAG_SETS

    return _tool(
        "check-determinism",
        "run a forward (and backward) K times under flag sets; which make it "
        "deterministic, at what cost (exit status 1 when the target raised under every "
        "flag set)",
        Text("target", "", "what runs", "script.py[:function] or package.module:function"),
        Interval("runs", 5, "runs per flag set", low=2, high=1000, integer=True),
        Text("device", "cpu", "torch device string", "a torch device, e.g. cpu or cuda"),
        Flag("backward", False, "hash the gradients too"),
        Text(
            "flags",
            None,
            "comma-separated flag sets (default: all)",
            "some of " + ", ".join(FLAG_SETS),
        ),
        Flag("no_seed", False, "do not seed torch before each run"),
        _JSON,
        positional=("target",),
    )


def _machine_tools() -> tuple[Command, ...]:
    fingerprint = _tool(
        "fingerprint",
        "this machine's numerical fingerprint: a fixed battery's bits and exact-truth "
        "errors, and the path each library takes (seconds, no network)",
        Text("out", None, "write it here (or print)", f"{_FILE} (.json)"),
        _LABEL,
        target="fpexplore.dispatch.fingerprint:main_take",
    )
    compare = _tool(
        "compare",
        "two fingerprints: which results differ, how far each is from the truth, the "
        "causes the fingerprints show (versions first), and what they do not explain",
        Text("a", "", "one fingerprint", f"{_FILE} (.json)"),
        Text("b", "", "the other fingerprint", f"{_FILE} (.json)"),
        _JSON,
        Text("html", None, "also write an HTML page", f"{_FILE} (.html)"),
        Flag(
            "check",
            False,
            "take the fingerprint again here, in a fresh process under the suggested "
            "environment, and say which differences it removed",
        ),
        positional=("a", "b"),
    )
    verify = _tool(
        "verify",
        "every lesson's claims on this machine at quick and edge parameters, with CUDA runs "
        "where torch sees a card (minutes): a summary and a record for data/machines "
        "(exit status 1 when a claim failed or a run raised)",
        Text("out", None, "write the record here", f"{_FILE} (.json)"),
        _LABEL,
        target="fpexplore.verify:command",
    )
    return fingerprint, compare, verify


def tools() -> tuple[Command, ...]:
    """The tools' commands (declared when the command line is built)."""
    return _diverge_tool(), _tolerance_tool(), _determinism_tool(), *_machine_tools()


def _print(data: Callable[[], dict[str, Any]], text: Callable[[], str], as_json: bool) -> None:
    """The result as JSON or as text (only the one asked for is computed)."""
    print(json.dumps(data(), indent=2) if as_json else text())


def _diverge(model: str, against: str, plant: str | None, json: bool, plot: str | None) -> int:
    from . import diverge
    from .paths import check_out

    if plot is not None:
        check_out(plot, "--plot", "fpexplore diverge")
    report = diverge.run_zoo(model, against, plant)
    _print(report.to_dict, report.table, json)
    if plot is not None:
        fig = diverge.plot(report)
        kind = os.path.splitext(plot)[1][1:].lower()
        if kind not in fig.canvas.get_supported_filetypes():
            kind = "png"  # the name is kept as given: no ".png" appended to it
        fig.savefig(plot, dpi=110, format=kind)
    return 0


def _tolerance(op: str, fmt: str, size: int, json: bool) -> int:
    from . import tolerance

    advice = tolerance.advise(op, fmt, size)
    _print(advice.to_dict, advice.text, json)
    return 0


def _check_determinism(
    target: str,
    runs: int,
    device: str,
    backward: bool,
    flags: str | None,
    no_seed: bool,
    json: bool,
) -> int:
    from . import determinism_check

    report = determinism_check.check(
        target,
        runs=runs,
        flag_sets=None if flags is None else [f.strip() for f in flags.split(",") if f],
        device=device,
        backward=backward,
        seed=None if no_seed else 0,
    )
    _print(report.to_dict, report.table, json)
    return 0 if report.ran() else 1  # no flag set ran: the target raised under each


def _compare(a: str, b: str, json: bool, html: str | None, check: bool) -> int:
    from dataclasses import asdict

    from .dispatch import fingerprint
    from .dispatch.compare import compare
    from .errors import InvalidInput
    from .paths import check_out

    page = None if html is None else check_out(html, "--html", "fpexplore compare")
    diff = compare(fingerprint.load(a, "a"), fingerprint.load(b, "b"), check_here=check)
    _print(lambda: asdict(diff), diff.text, json)
    if page is not None:
        from .page import document

        try:
            page.write_text(document("fpexplore compare", diff.html()), encoding="utf-8")
        except OSError as exc:  # a full disk, a folder that became read-only
            raise InvalidInput(f"--html {html!r} could not be written: {exc}") from None
    return 0
