"""The subcommands of the one ``fpexplore`` command line, each a `Command` declaration that
`fpexplore.cli.build_parser` walks, and the parsers made from declared parameters (`parser_for`).

Declared here, each run by one function of its own module (the modules have no ``python -m``
entries of their own: ``python -m fpexplore`` is ``fpexplore``):

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
import shutil
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .errors import InvalidParameter
from .params import Flag, Param, help_line, parse_texts, validate_all


def _no_options(_: argparse.ArgumentParser) -> None:
    """A command without options of its own."""


@dataclass(frozen=True)
class Command:
    """One subcommand: its words after ``fpexplore``, help, and ``target`` ("module:function",
    imported when it runs), called with the namespace ``add_arguments`` parsed, or with each
    of the declared ``params`` by name (``positional`` ones given bare). ``lesson_params``: the
    tokens left are a lesson's (``args.params``); ``help_option`` False: ``-h`` is its own."""

    words: tuple[str, ...]
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], Any] = _no_options
    target: str = ""
    description: str = ""
    params: tuple[Param, ...] = ()
    positional: tuple[str, ...] = ()
    lesson_params: bool = False
    help_option: bool = True

    @property
    def name(self) -> str:
        return " ".join(self.words)

    def add_to(self, sub: Any) -> None:
        """Add this command's parser to the subparsers ``sub`` (under its last word; its help
        and description `plain`)."""
        own = {} if self.help_option else {"add_help": False, "allow_abbrev": False}
        kw = {"description": plain(self.description)} if self.description else {}
        parser = sub.add_parser(self.words[-1], help=plain(self.help), **kw, **own)
        self.add_arguments(parser)
        parser_for(self.params, parser, positional=self.positional, switches=True)
        parser.set_defaults(_command=self)

    def values(self, args: argparse.Namespace) -> dict[str, Any]:
        """The declared parameters' values in ``args``, parsed and validated (the defaults of
        those not given); a refusal names the option as it is spelled."""
        where = f"fpexplore {self.name}"
        texts = {p.name: getattr(args, p.name) for p in self.params}
        try:
            return validate_all(self.params, parse_texts(self.params, texts), where)
        except InvalidParameter as exc:
            name = exc.name if exc.name in self.positional else f"--{exc.name.replace('_', '-')}"
            raise InvalidParameter(name, exc.given, exc.accepted, where) from None

    def run(self, args: argparse.Namespace) -> int:
        module, _, func = self.target.partition(":")
        lesson_part = module.removeprefix("fpexplore.lessons.")
        if lesson_part != module:  # a lesson's command: through the lessons registry
            from . import lessons

            function = getattr(lessons.module(lesson_part), func)
        else:
            function = getattr(importlib.import_module(module), func)
        if self.params:
            return int(function(**self.values(args)) or 0)
        return int(function(args) or 0)


def plain(text: str | None) -> str | None:
    """Help as plain text: no reST backticks."""
    return text.replace("``", "").replace("`", "") if text else text


def _wrapped(text: str | None, width: int) -> str | None:
    """``text`` `plain`, wrapped at spaces only to ``width``: choices such as 'onednn-off'
    stay whole."""
    if not text:
        return text
    words = " ".join(str(plain(text)).split())
    return "\n".join(textwrap.wrap(words, max(width, 20), break_on_hyphens=False))


def _help_wrapped(kwargs: dict[str, Any]) -> dict[str, Any]:
    """An argument's keywords with its help `_wrapped` for the help column (as argparse lays
    it out: the terminal's width less 2, less 24 for the options)."""
    if isinstance(kwargs.get("help"), str) and kwargs["help"] != argparse.SUPPRESS:
        kwargs["help"] = _wrapped(kwargs["help"], shutil.get_terminal_size().columns - 26)
    return kwargs


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
        raise InvalidParameter("arguments", " ".join(self.given), message)


def parser_for(
    params: tuple[Param, ...],
    parser: argparse.ArgumentParser | None = None,
    *,
    positional: tuple[str, ...] = (),
    switches: bool = False,
    title: str = "",
    **settings: Any,
) -> argparse.ArgumentParser:
    """``parser`` (else a `_Refusing` one made with ``settings``) with an argument per declared
    parameter (in group ``title`` if given): ``--name VALUE`` (``--name-with-dashes`` too), a
    `Flag` ``--name [VALUE]``, bare if ``positional``; with ``switches`` (a tool's) a `Flag` is
    a bare switch and only dashes spell a name. Values stay text, for `parse_texts`."""
    parser = parser or _Refusing(**settings)
    group = parser.add_argument_group(title) if title else parser
    for p in params:
        dashed = f"--{p.name.replace('_', '-')}"
        if p.name in positional:
            group.add_argument(p.name, metavar=p.name.upper(), help=help_line(p))
        elif switches and isinstance(p, Flag):
            group.add_argument(dashed, dest=p.name, action="store_true", help=p.help)
        else:
            names = [dashed] if switches else list(dict.fromkeys([f"--{p.name}", dashed]))
            extra = {"nargs": "?", "const": "true"} if isinstance(p, Flag) else {}
            group.add_argument(*names, dest=p.name, metavar="VALUE", help=help_line(p), **extra)
    return parser


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


def _described(commands: tuple[Command, ...]) -> tuple[Command, ...]:
    """``commands``, each without a description of its own described by its help."""
    return tuple(
        replace(c, description=c.description or c.help[0].upper() + c.help[1:] + ".")
        for c in commands
    )


COMMANDS: tuple[Command, ...] = _described(
    (
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
            target="fpexplore.widget_bundle:command",
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
)

#: old command names that still work: each the command it names, under its old name
ALIASES: tuple[Command, ...] = tuple(
    replace(c, words=("record-gpu",), help=f"the same as `fpexplore {c.name}`")
    for c in COMMANDS
    if c.words == ("record", "gpu")
)
