"""Command-line faces of the tools for your own models: ``fpexplore diverge``, ``fpexplore
tolerance``, ``fpexplore check-determinism``, and for your own machines: ``fpexplore
fingerprint``, ``fpexplore compare`` and ``fpexplore verify`` (registered by `fpexplore.cli`).

Each tool declares its parameters as a lesson does (`fpexplore.params`); its command line is
generated from them and every value given is parsed and validated by its declaration."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import InvalidParameter
from .params import Depends, Flag, Interval, Options, Param, Text, help_line


@dataclass(frozen=True)
class Tool:
    """A tool's command: ``positional`` parameters are given bare, in order, the others as
    ``--name value`` and a `Flag` as a bare switch; one left out is its default (None: not
    asked for). ``does`` is called with every parameter by name."""

    name: str
    help: str
    params: tuple[Param, ...]
    does: Callable[..., int]
    positional: tuple[str, ...] = ()

    def add_to(self, sub: Any) -> None:
        parser = sub.add_parser(self.name, help=self.help)
        for p in self.params:
            text = help_line(p) if p.default is not None else f"{p.help} [{p.accepted()}]"
            option = f"--{p.name.replace('_', '-')}"
            if p.name in self.positional:
                parser.add_argument(p.name, metavar=p.name.upper(), help=text)
            elif isinstance(p, Flag):
                parser.add_argument(option, dest=p.name, action="store_true", help=p.help)
            else:
                parser.add_argument(option, dest=p.name, metavar="VALUE", help=text)
        parser.set_defaults(_command=self)

    def run(self, args: argparse.Namespace) -> int:
        where, values = f"fpexplore {self.name}", {}
        for p in self.params:
            given = getattr(args, p.name)
            try:
                if isinstance(p, Depends):  # the case its other parameter's value picks
                    case = p.case(values[p.on])
                    given = case.default if given is None else case.parse(given)
                    values[p.name] = p.validate_case(values[p.on], given, where)
                elif isinstance(given, str):
                    values[p.name] = p.validate(p.parse(given), where)
                else:
                    values[p.name] = given if isinstance(p, Flag) else p.default
            except InvalidParameter as exc:  # named as it is spelled on the command line
                name = p.name if p.name in self.positional else f"--{p.name.replace('_', '-')}"
                raise InvalidParameter(name, exc.given, exc.accepted, where) from None
        return self.does(**values)


_JSON = Flag("json", False, "print JSON for scripts")


def _tools() -> tuple[Tool, ...]:
    """The tools' declarations (read when the command line is built)."""
    from .determinism_check import FLAG_SETS
    from .diverge import AGAINST
    from .diverge.zoo import MODELS, PLANTS
    from .tolerance import OPS, SIZES

    plants = tuple(sorted({p for ps in PLANTS.values() for p in ps}))
    sizes = tuple(  # default 1024, or the nearest size the op takes
        (
            op,
            Interval(
                "size", min(max(1024 // step * step, low), high), low=low, high=high, integer=True
            ),
        )
        for op, (low, high, step) in SIZES.items()
    )
    steps = "; ".join(f"{op} takes multiples of {s}" for op, (_, _, s) in SIZES.items() if s > 1)
    file = "a file name"
    return (
        Tool(
            "diverge",
            "compare a zoo model in two implementations layer by layer against the exact "
            "result; name the first layer where they part",
            (
                Options("model", "mlp", "the zoo model", choices=MODELS),
                Options(
                    "against",
                    "torch",
                    "the second implementation: a torch variant, the Keras build with the same "
                    "weights, or the torch model's TorchScript export run by DJL (djl) or by the "
                    "C++ LibTorch program (libtorch)",
                    choices=AGAINST,
                ),
                Options("plant", None, "put one mistake into the second one", choices=plants),
                _JSON,
                Text("plot", None, "also save the error plot", f"{file} (PNG)"),
            ),
            _diverge,
            positional=("model",),
        ),
        Tool(
            "tolerance",
            "a-priori error bound, measured error and the rtol/atol to use for an op, format "
            "and size",
            (
                Options("op", "sum", "the operation", choices=OPS),
                Options(
                    "fmt", "float32", "the format", ("float16", "bfloat16", "float32", "float64")
                ),
                Depends("size", 1024, f"reduction length (see the output); {steps}", "op", sizes),
                _JSON,
            ),
            _tolerance,
            positional=("op",),
        ),
        Tool(
            "check-determinism",
            "run a forward (and backward) K times under flag sets; which make it "
            "deterministic, at what cost (exit status 1 when the target raised under every "
            "flag set)",
            (
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
            ),
            _check_determinism,
            positional=("target",),
        ),
        Tool(
            "fingerprint",
            "this machine's numerical fingerprint: a fixed battery's bits and exact-truth "
            "errors, and the path each library takes (seconds, no network)",
            (
                Text("out", None, "write it here (or print)", f"{file} (.json)"),
                Text("label", "", "a name for this machine in class tables"),
            ),
            _fingerprint,
        ),
        Tool(
            "compare",
            "two fingerprints: which results differ, how far each is from the truth, the "
            "causes the fingerprints show (versions first), and what they do not explain",
            (
                Text("a", "", "one fingerprint", f"{file} (.json)"),
                Text("b", "", "the other fingerprint", f"{file} (.json)"),
                _JSON,
                Text("html", None, "also write an HTML page", f"{file} (.html)"),
                Flag(
                    "check",
                    False,
                    "take the fingerprint again here, in a fresh process under the suggested "
                    "environment, and say which differences it removed",
                ),
            ),
            _compare,
            positional=("a", "b"),
        ),
        Tool(
            "verify",
            "every lesson's claims on this machine at quick and edge parameters, with CUDA runs "
            "where torch sees a card (minutes): a summary and a record for data/machines "
            "(exit status 1 when a claim failed or a run raised)",
            (
                Text("out", None, "write the record here", f"{file} (.json)"),
                Text("label", "", "a name for this machine in class tables"),
            ),
            _verify,
        ),
    )


def add_commands(sub: Any) -> None:
    """Add the tools' subcommands to the ``fpexplore`` parser's subparsers."""
    for tool in _tools():
        tool.add_to(sub)


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


def _fingerprint(out: str | None, label: str) -> int:
    from .dispatch import fingerprint

    return fingerprint.main_take(out, label)


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


def _verify(out: str | None, label: str) -> int:
    from . import verify

    return verify.command(out, label)
