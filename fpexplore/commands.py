"""The set-up, recording and upkeep commands of the one ``fpexplore`` command line.

Each is declared once here (its options) and run by one function of its own module; the
modules have no ``python -m`` entries of their own (``python -m fpexplore`` is ``fpexplore``):

    fpexplore setup djl | libtorch | widgets
    fpexplore record gpu | cuda-kernels | nccl | training-drift
        (record-gpu is record gpu's old name)
    fpexplore warm
    fpexplore workshop [--slides]
    fpexplore myths

Declaring the options imports nothing heavy: the module that does the work is imported only
when its command runs.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    """One command: its words after ``fpexplore``, help, options and the function it runs."""

    words: tuple[str, ...]
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    target: str  # "module:function", the function takes the parsed namespace
    description: str = ""

    @property
    def name(self) -> str:
        return " ".join(self.words)

    def run(self, args: argparse.Namespace) -> int:
        module, _, func = self.target.partition(":")
        lesson_part = module.removeprefix("fpexplore.lessons.")
        if lesson_part != module:  # a lesson's command: through the lessons registry
            from . import lessons

            return int(getattr(lessons.module(lesson_part), func)(args) or 0)
        return int(getattr(importlib.import_module(module), func)(args) or 0)


def _djl(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="resolve and compile again")
    p.add_argument(
        "--no-warm",
        action="store_true",
        help="do not start the worker (libtorch is then extracted on first use)",
    )


def _libtorch(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="rebuild even if up to date")
    p.add_argument("--stamp", help="file to touch once the program is built and up to date")
    p.add_argument("--strict", action="store_true", help="exit 1 when tools are missing")


def _gpu(p: argparse.ArgumentParser) -> None:
    from .paths import RECORDINGS_HELP

    p.add_argument("--out", default=None, help=f"output folder (default: {RECORDINGS_HELP})")
    p.add_argument("--device", default="cuda", help="torch device string (default: cuda)")
    p.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")


def _cuda_kernels(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", help="folder to write the record into (default data/gpu/cuda_kernels)")
    p.add_argument("--quick", action="store_true", help="two sizes, five runs (a smoke test)")
    p.add_argument("--build-dir", help="where nvcc builds the extension")


def _nccl(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None, help="output folder (default: data/gpu/nccl)")
    p.add_argument("--backend", default="nccl", choices=("nccl", "gloo"))
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--worlds", default="2,3,4", help="world sizes, comma-separated")
    p.add_argument(
        "--sizes", default=f"1024,65536,{1 << 20},{1 << 24}", help="lengths, comma-separated"
    )
    p.add_argument("--algos", default="default,Ring,Tree", help="NCCL_ALGO values")
    p.add_argument("--timeout", type=float, default=150.0, help="seconds per launch")


def _myths(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.add_argument(
        "--articles",
        action="store_true",
        help="after the verdicts, every article claim with its evidence and what stays uncovered",
    )


def _gpu_drift(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default=None, help="output folder (default: data/gpu/training_drift)")
    p.add_argument("--device", default="cuda", help="torch device string (default: cuda)")


def _workshop(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="build/workshop", help="folder (default: build/workshop)")
    p.add_argument("--only", default=None, help="notebook numbers, comma-separated (00,01…)")
    p.add_argument(
        "--slides", action="store_true", help="also each lesson's page by fpexplore export"
    )


def _answers(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="data/machines/NAME/answers.json")
    p.add_argument("--label", required=True, help="the machine's name (its folder's)")
    p.add_argument("--only", default=None, help="notebook numbers, comma-separated (00,01…)")
    p.add_argument("--notebooks", default=None, help="folder (default: the checkout's)")


_RECORD_GPU_DESCRIPTION = (
    "Run every GPU experiment on a device and write one JSON record. Lessons read records "
    "from data/gpu (or $FPEXPLORE_DATA/gpu), then the user's recordings, then the package's own."
)

COMMANDS: tuple[Command, ...] = (
    Command(
        ("setup", "djl"),
        "resolve the pinned DJL jars, compile the helpers, warm the JVM worker (make djl)",
        _djl,
        "fpexplore.jvm.setup:command",
    ),
    Command(
        ("setup", "libtorch"),
        "build the LibTorch (C++) comparison program (make libtorch)",
        _libtorch,
        "fpexplore.backends.libtorch.build:command",
    ),
    Command(
        ("setup", "widgets"),
        "fetch the pinned widget manager bundle that exported pages inline (make widgets-js)",
        lambda _: None,
        "fpexplore.widget_bundle:command",
    ),
    Command(
        ("record", "gpu"),
        "run every GPU experiment and record it (to data/gpu in a checkout)",
        _gpu,
        "fpexplore.recorder:command",
        _RECORD_GPU_DESCRIPTION,
    ),
    Command(
        ("record", "cuda-kernels"),
        "record the hand-written CUDA reduction kernels against torch (needs nvcc and a GPU)",
        _cuda_kernels,
        "fpexplore.lessons.libtorch_vs_pytorch.cuda_kernels:command",
    ),
    Command(
        ("record", "nccl"),
        "record all-reduce sums over world sizes and NCCL algorithms (needs GPUs)",
        _nccl,
        "fpexplore.lessons.distributed_reduction.nccl_record:command",
    ),
    Command(
        ("record", "training-drift"),
        "record the training-drift table's model on CUDA, deterministic and with atomics "
        "(torch only; under a minute)",
        _gpu_drift,
        "fpexplore.lessons.training_drift.gpu_record:command",
    ),
    Command(
        ("record", "answers"),
        "run the notebooks and record what each exercise's answer cell prints (the "
        "facilitator notes' expected numbers; minutes per notebook)",
        _answers,
        "fpexplore.workshop.printed:command",
    ),
    Command(
        ("warm",),
        "compute the summation explorer's error-growth curves once into the cache (make warm)",
        lambda p: p.add_argument(
            "-v", "--verbose", action="store_true", help="say what is computed"
        ),
        "fpexplore.warm:command",
    ),
    Command(
        ("workshop",),
        "the workshop kit: a handout and facilitator notes per notebook, from the notebooks "
        "and the recorded runs; --slides adds each lesson's exported page (make slides)",
        _workshop,
        "fpexplore.workshop.day:command",
    ),
    Command(
        ("myths",),
        "judge every myth of the index by running its lesson; text or --json; --articles "
        "adds every article claim with the verdicts and lesson claims that judge it",
        _myths,
        "fpexplore.myths:command",
    ),
)

#: old command names that still work: name -> the command they are
ALIASES = {"record-gpu": ("record", "gpu")}


def _add(parent: Any, name: str, c: Command, help: str, description: str) -> None:
    p = parent.add_parser(name, help=help, description=description)
    c.add_arguments(p)
    p.set_defaults(_command=c)


def add_commands(sub: Any) -> None:
    """Add every command, and the old names of `ALIASES`, to the ``fpexplore`` subparsers."""
    groups: dict[str, Any] = {}
    for c in COMMANDS:
        desc = c.description or c.help[0].upper() + c.help[1:] + "."
        *head, tail = c.words
        if head and head[0] not in groups:
            tails = ", ".join(x.words[1] for x in COMMANDS if x.words[0] == head[0])
            g = sub.add_parser(head[0], help=f"{head[0]}: {tails}")
            groups[head[0]] = g.add_subparsers(dest="what", required=True, metavar="WHAT")
        _add(groups[head[0]] if head else sub, tail, c, c.help, desc)
    for old, words in ALIASES.items():
        c = next(c for c in COMMANDS if c.words == words)
        _add(sub, old, c, f"the same as `fpexplore {c.name}`", c.description)
