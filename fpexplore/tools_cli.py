"""Command-line faces of the tools for your own models: ``fpexplore diverge``, ``fpexplore
tolerance``, ``fpexplore check-determinism``, and for your own machines: ``fpexplore
fingerprint`` and ``fpexplore compare`` (registered by `fpexplore.cli`)."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any


def add_commands(sub: Any) -> None:
    """Add the three subcommands to the ``fpexplore`` parser's subparsers."""
    from .determinism_check import FLAG_SETS
    from .diverge import AGAINST
    from .diverge.zoo import MODELS, PLANTS

    plants = sorted({p for ps in PLANTS.values() for p in ps})
    d = sub.add_parser(
        "diverge",
        help="compare a zoo model in two implementations layer by layer against the exact "
        "result; name the first layer where they part",
    )
    d.add_argument("model", choices=MODELS)
    d.add_argument(
        "--against",
        default="torch",
        choices=AGAINST,
        help="the second implementation (default: torch): a torch variant, the Keras build with "
        "the same weights, or the torch model's TorchScript export run by DJL (djl) or by the "
        "C++ LibTorch program (libtorch)",
    )
    d.add_argument(
        "--plant",
        default=None,
        choices=plants,
        help="put one mistake into the second implementation",
    )
    d.add_argument("--json", action="store_true", help="print JSON for scripts")
    d.add_argument("--plot", default=None, metavar="PNG", help="also save the error plot")

    t = sub.add_parser(
        "tolerance",
        help="a-priori error bound, measured error and the "
        "rtol/atol to use for an op, format and size",
    )
    from .tolerance import OPS, size_help

    t.add_argument("op", choices=OPS)
    t.add_argument("--fmt", default="float32", help="float16, bfloat16, float32 or float64")
    t.add_argument(
        "--size",
        type=int,
        default=1024,
        help="reduction length (see the output); accepted per op: " + size_help(),
    )
    t.add_argument("--json", action="store_true", help="print JSON for scripts")

    c = sub.add_parser(
        "check-determinism",
        help="run a forward (and backward) K times under "
        "flag sets; which make it deterministic, at what cost (exit status 1 when the target "
        "raised under every flag set)",
    )
    c.add_argument("target", help="script.py[:function] or package.module:function")
    c.add_argument("--runs", type=int, default=5, help="runs per flag set (default 5)")
    c.add_argument("--device", default="cpu", help="torch device string (default: cpu)")
    c.add_argument("--backward", action="store_true", help="hash the gradients too")
    c.add_argument(
        "--flags",
        default=None,
        help="comma-separated flag sets (default: all): " + ", ".join(FLAG_SETS),
    )
    c.add_argument("--no-seed", action="store_true", help="do not seed torch before each run")
    c.add_argument("--json", action="store_true", help="print JSON for scripts")

    f = sub.add_parser(
        "fingerprint",
        help="this machine's numerical fingerprint: a fixed battery's bits and exact-truth "
        "errors, and the path each library takes (seconds, no network)",
    )
    f.add_argument("--out", default=None, metavar="NAME.json", help="write it here (or print)")
    f.add_argument("--label", default="", help="a name for this machine in class tables")
    m = sub.add_parser(
        "compare",
        help="two fingerprints: which results differ, how far each is from the truth, and the "
        "likely causes, ranked",
    )
    m.add_argument("a", metavar="A.json")
    m.add_argument("b", metavar="B.json")
    m.add_argument("--json", action="store_true", help="print JSON for scripts")
    m.add_argument("--html", default=None, metavar="OUT.html", help="also write an HTML page")


def _diverge(args: argparse.Namespace) -> int:
    from . import diverge
    from .paths import check_out

    if args.plot is not None:
        check_out(args.plot, "--plot", "fpexplore diverge")
    report = diverge.run_zoo(args.model, args.against, args.plant)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.table())
    if args.plot is not None:
        fig = diverge.plot(report)
        kind = os.path.splitext(args.plot)[1][1:].lower()
        if kind not in fig.canvas.get_supported_filetypes():
            kind = "png"  # the name is kept as given: no ".png" appended to it
        fig.savefig(args.plot, dpi=110, format=kind)
    return 0


def _tolerance(args: argparse.Namespace) -> int:
    from . import tolerance

    advice = tolerance.advise(args.op, args.fmt, args.size)
    print(json.dumps(advice.to_dict(), indent=2) if args.json else advice.text())
    return 0


def _check_determinism(args: argparse.Namespace) -> int:
    from . import determinism_check

    flags = None if args.flags is None else [f.strip() for f in args.flags.split(",") if f]
    report = determinism_check.check(
        args.target,
        runs=args.runs,
        flag_sets=flags,
        device=args.device,
        backward=args.backward,
        seed=None if args.no_seed else 0,
    )
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.table())
    return 0 if report.ran() else 1  # no flag set ran: the target raised under each


def _fingerprint(args: argparse.Namespace) -> int:
    from .dispatch import fingerprint

    return fingerprint.main_take(args.out, args.label)


def _compare(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from .dispatch import fingerprint
    from .dispatch.compare import compare
    from .paths import check_out

    if args.html is not None:
        check_out(args.html, "--html", "fpexplore compare")
    diff = compare(fingerprint.load(args.a), fingerprint.load(args.b))
    print(json.dumps(asdict(diff), indent=2) if args.json else diff.text())
    if args.html is not None:
        from .page import document

        check_out(args.html, "--html", "fpexplore compare").write_text(
            document("fpexplore compare", diff.html()), encoding="utf-8"
        )
    return 0


COMMANDS = {
    "diverge": _diverge,
    "tolerance": _tolerance,
    "check-determinism": _check_determinism,
    "fingerprint": _fingerprint,
    "compare": _compare,
}
