"""Myths, measured: claims commonly made about framework discrepancies, judged by lesson runs.

Each `Myth` names the lesson run that measures it and a judge: a function of that run's
`Comparison` that returns the verdict, what it depends on or why, and the measured number that
shows it; no verdict is stored anywhere. A myth whose lesson is missing, or whose claims this run
could not check, is "not measured" with the reason.

`judge_all()` judges every myth over its cases (`Myth.cases`): the same verdict in every case is
that verdict, one that changes is "depends" (`Verdict.split` says which cases went which way).
A myth about a device that cannot run here (`Myth.not_here`) is "not measured" with what would
measure it. `verdict_table()` renders the verdicts for the index notebook.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .errors import WorkerError
from .judging import (  # the verdicts are part of this module's API too
    DEPENDS,
    FAILS,
    HOLDS,
    NOT_MEASURED,
    VERDICTS,
    NotMeasured,
    Verdicts,
)
from .templates import render

if TYPE_CHECKING:
    from .result import Comparison

__all__ = [
    "DEPENDS",
    "FAILS",
    "HOLDS",
    "MYTHS",
    "NOT_MEASURED",
    "SECTIONS",
    "VERDICTS",
    "Myth",
    "NotMeasured",
    "Verdict",
    "judge",
    "judge_all",
    "judge_all_isolated",
    "lesson_catalog",
    "recorded_elsewhere",
    "records",
    "verdict_table",
]


@dataclass(frozen=True)
class Verdict:
    """What a lesson run made of one myth."""

    myth: Myth
    verdict: str  # one of VERDICTS
    why: str  # what it depends on, or why it holds / does not hold / was not measured
    number: str  # the measured number that shows it ('' when not measured)
    source: str = ""  # 'live' or the recorded run it came from
    cases: tuple[tuple[str, str], ...] = ()  # (case, verdict) of every case judged

    @property
    def split(self) -> str:
        """The cases tried and how they split, e.g. "holds in 2 of 3 cases; does not hold for:
        seed 3" ('' for a verdict from one case)."""
        judged = [(c, v) for c, v in self.cases if v != NOT_MEASURED]
        if len(self.cases) < 2 or not judged:
            return ""
        counts: dict[str, list[str]] = {}
        for c, v in judged:
            counts.setdefault(v, []).append(c)
        first = max(counts, key=lambda v: len(counts[v]))
        text = f"{first} in {len(counts[first])} of {len(judged)} cases"
        others = [f"{v} for: {', '.join(cs)}" for v, cs in counts.items() if v != first]
        if others:
            text += "; " + "; ".join(others)
        else:
            text += " (" + ", ".join(c for c, _ in judged) + ")"
        if unmeasured := [c for c, v in self.cases if v == NOT_MEASURED]:
            text += f"; not measured: {', '.join(unmeasured)}"
        return text

    @property
    def link(self) -> str:
        return self.myth.notebook + (f"#{self.myth.anchor}" if self.myth.anchor else "")


@dataclass(frozen=True)
class Myth:
    """One claim to check, the lesson run that measures it, and its judge."""

    number: int
    text: str
    lesson: str
    judge: Callable[[Comparison], tuple[str, str, str]]
    params: Mapping[str, Any] = field(default_factory=dict)
    anchor: str = ""  # the heading id of the notebook section that measures it
    #: more parameter sets (other seeds, sizes, inputs) to judge it on, each merged over
    #: ``params``; a verdict that changes across the cases is "depends"
    cases: tuple[Mapping[str, Any], ...] = ()
    #: where the device or stack the claim names cannot run here: what would measure it (the
    #: row then says "not measurable here" instead of judging a stand-in)
    not_here: str = ""
    #: the notebook section whose lesson run it is judged on (a key of `SECTIONS`): its
    #: lesson and parameters, so the table and the notebook read the same run
    section: str = ""

    def __post_init__(self) -> None:
        if self.section:
            lesson, params = SECTIONS[self.section]
            if lesson != self.lesson or (self.params and dict(self.params) != dict(params)):
                raise ValueError(f"myth {self.number}: not the run of {self.section!r}")
            object.__setattr__(self, "params", params)

    @property
    def reads(self) -> tuple[str, ...]:
        """The claim keys of its lesson its verdict rests on: the evidence
        `fpexplore.article_claims` lists for the article claims it judges."""
        from .article_claims import ARTICLE_CLAIMS

        keys = [
            key
            for c in ARTICLE_CLAIMS
            if self.number in c.myths
            for lesson, key in (ref.split(":") for ref in c.claims)
            if lesson == self.lesson
        ]
        return tuple(dict.fromkeys(keys))

    @property
    def notebook(self) -> str:
        """The notebook that narrates its lesson, from the series' map."""
        from .series import narrating

        return narrating(self.lesson)

    def case_params(self) -> list[tuple[str, dict[str, Any]]]:
        """(label, parameters) of every case: the default run first, then ``cases``."""
        base = dict(self.params)
        return [(_label(base, extra), {**base, **extra}) for extra in ({}, *self.cases)]


def _label(base: Mapping[str, Any], extra: Mapping[str, Any]) -> str:
    """A case's name: the parameters it changes (the default run: its seed, if any)."""
    if not extra:
        return f"seed {base['seed']}" if "seed" in base else "default"
    return ", ".join(f"{k} {v}" for k, v in extra.items())


def _beside(where: str) -> Callable[[Comparison], Verdicts]:
    """The judge that lives beside its lesson: ``where`` is ``"part:function"`` (``part`` a
    lesson module such as ``"train_vs_eval.judges"``; the function defaults to
    ``judge_myth``), read through the lessons registry when it runs."""
    module, _, name = where.partition(":")

    def target() -> Callable[[Comparison], Verdicts]:
        from . import lessons

        return getattr(lessons.module(module), name or "judge_myth")

    def judge_it(c: Comparison) -> Verdicts:
        verdict, why, number = target()(c)
        if verdict == NOT_MEASURED:
            raise NotMeasured(why)
        return verdict, why, number

    judge_it.target = target  # type: ignore[attr-defined]
    return judge_it


#: The lesson runs the notebooks make, by section: (lesson, parameters). Each notebook calls
#: its lesson at exactly these parameters (tests/test_myths_notebooks.py reads the calls from
#: the notebooks' code and holds them to this), and each myth names the section it is judged
#: on (`Myth.section`), so the myths table reads the very run the notebook shows.
SECTIONS: dict[str, tuple[str, Mapping[str, Any]]] = {
    "01 the motivating sum": (
        "summation_order",
        {"distribution": "allequal", "n": 10_000, "dtype": "float32", "threads": 1},
    ),
    "02 seed 42": ("rng_seeds", {"seed": 42, "n": 1000, "k": 4}),
    "03 train vs eval": (
        "train_vs_eval",
        {"p": 0.5, "runs": 50, "batch": 8, "momentum": 0.1, "eps": 1e-5},
    ),
    "04 determinism": ("gpu_determinism", {}),
    "05 std": ("djl_normalization", {"stage": "std"}),
    "06 softmax": ("tf_vs_torch", {"op": "softmax"}),
    "06 autograd": ("tf_vs_torch", {"op": "autograd", "length": 500}),
    "06 lstm": ("tf_vs_torch", {"op": "lstm", "length": 1000, "agree": True}),
    "06 graph mode": ("tf_vs_torch", {"op": "graph_mode"}),
    "06 control flow": ("tf_vs_torch", {"op": "control_flow"}),
    "06 higher order": ("tf_vs_torch", {"op": "higher_order"}),
    "06 tolerances": ("tf_vs_torch", {"op": "tolerances"}),
    "08 cpu vs accelerator": ("cpu_vs_accelerator", {}),
    "09 libtorch vs pytorch": ("libtorch_vs_pytorch", {}),
    "13 one ulp": ("training_drift", {"perturbation": "one-ulp"}),
}


def _myth(number: int, text: str, judge: str, section: str, **kw: Any) -> Myth:
    """A myth judged beside its lesson (`_beside` of ``judge``) on the run of ``section``."""
    return Myth(number, text, SECTIONS[section][0], _beside(judge), section=section, **kw)


#: the claims of shared/reference/claims-to-check.md, in its order, then (29-35) the articles'
#: claims found uncovered by a later fact-check
MYTHS: tuple[Myth, ...] = (
    _myth(
        1,
        "Summing 10,000 × float32(0.0001) in DJL and in PyTorch gives slightly different results.",
        "summation_order.judges:djl_sum",
        "01 the motivating sum",
        anchor="The-motivating-example:-10,000-×-float32(0.0001)",
        cases=({"n": 1000},),
    ),
    _myth(
        2,
        "The same seed (42) in DJL and PyTorch does not give the same random weights.",
        "rng_seeds.judges:seed",
        "02 seed 42",
        anchor="More-claims-from-the-articles",
        cases=({"seed": 0}, {"seed": 7}),
    ),
    _myth(
        3,
        "DJL and PyTorch compute mean and standard deviation differently, so normalized data "
        "differs.",
        "djl_normalization.judges:std",
        "05 std",
        anchor="The-motivating-example:-normalizing-[10,-20,-30,-40,-50]",
    ),
    _myth(
        4,
        "Setting `cudnn.deterministic = True` changes the output of a small `nn.Linear` model "
        "on one input.",
        "gpu_determinism.linear_flag",  # recorded on a GPU
        "04 determinism",
    ),
    _myth(
        5,
        "`cudnn.benchmark` is what causes non-deterministic behaviour.",
        "gpu_determinism.judges:benchmark",
        "04 determinism",
    ),
    _myth(
        6,
        "If training baked dropout into the weights, inference must remove the dropout layers "
        "to reproduce.",
        "train_vs_eval.judges:dropout",
        "03 train vs eval",
        anchor="1.-Dropout:-random-in-train-mode,-fixed-in-eval-mode",
        cases=({"seed": 3}, {"batch": 32}),
    ),
    _myth(
        7,
        "Forgetting `eval()` with BatchNorm makes results inconsistent across runs.",
        "train_vs_eval.judges:batchnorm",
        "03 train vs eval",
        anchor="2.-BatchNorm-in-torch:-batch-statistics-vs-running-statistics",
        cases=({"seed": 3}, {"batch": 32}),
    ),
    _myth(
        8,
        "`torch.manual_seed` does not make multi-GPU or multi-stream runs reproducible.",
        "rng_seeds.multi_gpu",  # recorded on two GPUs
        "02 seed 42",
        anchor="3.-Devices-and-CPU-kernels",
    ),
    _myth(
        9,
        "LibTorch and PyTorch give different `mm` results because of the Python interpreter, "
        "garbage collection and memory management.",
        "libtorch_vs_pytorch.judges:mm",
        "09 libtorch vs pytorch",
        anchor="2.-mm,-the-autograd-gradient,-an-MLP:-C++-vs-Python",
    ),
    _myth(
        10,
        "LibTorch's autograd gives different gradients from PyTorch's.",
        "libtorch_vs_pytorch.judges:grad",
        "09 libtorch vs pytorch",
        anchor="2.-mm,-the-autograd-gradient,-an-MLP:-C++-vs-Python",
    ),
    _myth(
        11,
        "A custom CUDA kernel gives different results from PyTorch's own kernel for the same op.",
        "libtorch_vs_pytorch.judges:cuda_kernel",
        "09 libtorch vs pytorch",
        anchor="6.-Custom-CUDA-kernels-vs-cuBLAS-and-torch.sum",
    ),
    _myth(
        12,
        "Chained matmuls drift on DirectML but not on CUDA.",
        "cpu_vs_accelerator.judges:chain",
        "08 cpu vs accelerator",
        not_here=(
            "no DirectML device (torch-directml's privateuseone, Windows/WSL with a DirectX 12 "
            "GPU) runs here; the lesson run with device='privateuseone' there would measure it"
        ),
    ),
    _myth(
        13,
        "Convolutions differ between CPU and accelerator because of backend algorithms.",
        "cpu_vs_accelerator.judges:conv",
        "08 cpu vs accelerator",
    ),
    _myth(
        14,
        "ReLU can differ between backends.",
        "cpu_vs_accelerator.edges",  # this CPU and the recorded GPUs
        "08 cpu vs accelerator",
    ),
    _myth(
        15,
        "TensorFlow's graph mode (`tf.function`) gives different numbers from eager mode.",
        "tf_vs_torch.judges:graph",
        "06 graph mode",
        cases=({"seed": 7}, {"size": 1000}),
    ),
    _myth(
        16,
        "For `z = (x**2)**3` at x = 2 both frameworks give the gradient 24.",
        "tf_vs_torch.judges:gradient",
        "06 autograd",
    ),
    _myth(
        17,
        "`softmax([1, 2, 3])` differs between TensorFlow and PyTorch.",
        "tf_vs_torch.judges:softmax",
        "06 softmax",
    ),
    _myth(
        18,
        "LSTM gradients differ between the frameworks over long sequences.",
        "tf_vs_torch.judges:lstm",
        "06 lstm",
    ),
    _myth(
        19,
        "DJL's dropout masks differ from PyTorch's for the same seed.",
        "rng_seeds.judges:djl_dropout",
        "02 seed 42",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        20,
        "DJL's default weight initialization differs from PyTorch's.",
        "rng_seeds.judges:init",
        "02 seed 42",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        21,
        "Autograd being on changes a model's inference outputs.",
        "train_vs_eval.judges:autograd_modes",
        "03 train vs eval",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        22,
        "Memory layout, fragmentation or alignment changes results.",
        "summation_order.judges:layout",
        "01 the motivating sum",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        23,
        "Noise-injecting activations (RReLU-style) make inference vary.",
        "train_vs_eval.judges:rrelu",
        "03 train vs eval",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        24,
        "Layer execution order and skip connections change results.",
        "summation_order.judges:residual",
        "01 the motivating sum",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        25,
        "Seeding is not enough with several GPUs, CUDA streams or DataLoader workers.",
        "rng_seeds.judges:seeding",
        "02 seed 42",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        26,
        "TensorFlow needs a GradientTape for a Python `if`.",
        "tf_vs_torch.judges:control_flow",
        "06 control flow",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        27,
        "Higher-order derivatives differ between the frameworks.",
        "tf_vs_torch.judges:higher_order",
        "06 higher order",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        28,
        "Default tolerances for near-singular matrices differ.",
        "tf_vs_torch.judges:tolerances",
        "06 tolerances",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        29,
        "Flushing subnormals to zero (FTZ/DAZ) changes float32 results.",
        "cpu_vs_accelerator.cpu_modes:judge_ftz",
        "08 cpu vs accelerator",
    ),
    _myth(
        30,
        "Ops without a kernel for a dtype or layout fall back to other kernels, which change "
        "the results.",
        "cpu_vs_accelerator.cpu_modes:judge_fallback",
        "08 cpu vs accelerator",
    ),
    _myth(
        31,
        "A custom op's hand-written gradient differs from the framework's own.",
        "tf_vs_torch.custom_op:judge",
        "06 autograd",
    ),
    _myth(
        32,
        "Kernel execution order varies between runs.",
        "libtorch_vs_pytorch.judges:execution_order",
        "09 libtorch vs pytorch",
        anchor="6.-Custom-CUDA-kernels-vs-cuBLAS-and-torch.sum",
    ),
    _myth(
        33,
        "TensorFlow's eager gradients are symbolic differentiation.",
        "tf_vs_torch.judges:symbolic",
        "06 control flow",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        34,
        "DJL's random augmentations cannot match Python's for the same seed.",
        "rng_seeds.augment:judge",
        "02 seed 42",
        anchor="More-claims-from-the-articles",
    ),
    _myth(
        35,
        "Small numerical differences compound over training, especially in recurrent networks.",
        "training_drift.judges:compound",
        "13 one ulp",
        anchor="2.-Stable-or-unstable",
    ),
)


def _source(c: Comparison) -> str:
    kinds = {o.kind for o in c.outcomes if o.ran}
    if "recorded" in kinds and not kinds - {"recorded", "reference", "emulator"}:
        return "recorded GPU run"
    return "live" + (" + recorded GPU run" if "recorded" in kinds else "")


@functools.cache
def records() -> tuple[tuple[str, Mapping[tuple[str, str], str]], ...]:
    """(name, claim states) of every shipped record of real machines' claims: the fleet's
    (``data/machines/*``, `fpexplore.machines`) and the GPU claims records
    (``data/gpu/claims/*.json``); each state is a (lesson, key)'s over all the record's runs,
    "fails" where any run failed it (`fpexplore.machines.Machine.states`)."""
    from . import machines
    from .errors import FpexploreError
    from .paths import shipped_data_dir

    fleet, _ = machines.try_load_all()
    out = [(m.name, m.states()) for m in fleet]
    for path in sorted((shipped_data_dir() / "gpu" / "claims").glob("*.json")):
        try:
            record = machines.load_claims(path)
        except FpexploreError:
            continue
        out.append((path.stem, machines.Machine(path.stem, path.stem, record).states()))
    return tuple(out)


def recorded_elsewhere(
    myth: Myth, comparison: Comparison, here: str | None = None
) -> list[tuple[str, str, str]]:
    """Each record (`records`) whose claim states, put in place of this run's for the claims
    it decided, make ``myth``'s judge give another verdict than this run's (``here``, judged
    when not given): (record, that verdict, the claims whose states differ, as ``key
    state``)."""
    here = myth.judge(comparison)[0] if here is None else here
    out = []
    for name, states in records():
        decided = {
            key: states[(myth.lesson, key)]
            for key in comparison.claims
            if states.get((myth.lesson, key)) in ("holds", "fails")
        }
        changed = {k: s for k, s in decided.items() if comparison.claims[k].state != s}
        if not changed:
            continue
        claims = dict(comparison.claims)
        for key, state in decided.items():
            claims[key] = replace(claims[key], holds=state == "holds", reason="")
        try:
            there = myth.judge(replace(comparison, claims=claims))[0]
        except NotMeasured:
            continue
        if there not in (here, NOT_MEASURED):
            read = [k for k in myth.reads if k in changed] or sorted(changed)
            out.append((name, there, ", ".join(f"{k} {changed[k]}" for k in read)))
    return out


def judge(myth: Myth, comparison: Comparison) -> Verdict:
    """The verdict of one lesson run on ``myth`` (its judge decides; never stored). A verdict
    that a shipped machine's record contradicts (`recorded_elsewhere`: the claims it reads
    went another way there) is "depends", scoped to where it went which way."""
    try:
        verdict, why, number = myth.judge(comparison)
    except NotMeasured as exc:
        return Verdict(myth, NOT_MEASURED, str(exc), "", _source(comparison))
    if myth.not_here:  # the judge read a stand-in: shown as that, never as the verdict
        return Verdict(
            myth,
            NOT_MEASURED,
            f"not measurable here: {myth.not_here}",
            f"for comparison only (not the claim's device): {number}",
            _source(comparison),
        )
    if verdict != DEPENDS and (elsewhere := recorded_elsewhere(myth, comparison, verdict)):
        there = "; ".join(f"{v} on {name} (recorded: {keys})" for name, v, keys in elsewhere)
        why = f"{verdict} in this run ({why}); {there}"
        number += "; recorded on " + ", ".join(name for name, _, _ in elsewhere)
        verdict = DEPENDS
    return Verdict(myth, verdict, why, number, _source(comparison))


def lesson_catalog() -> Mapping[str, Any]:
    """The lessons present, by name; a lesson module that fails to import is None (a run of
    it then reports why)."""
    from . import lessons

    return {**dict.fromkeys(lessons.broken()), **lessons.all_lessons()}


def _combine(myth: Myth, judged: list[tuple[str, Verdict]]) -> Verdict:
    """One verdict from the verdicts of every case: the same everywhere, or "depends" with
    the cases on each side."""
    cases = tuple((label, v.verdict) for label, v in judged)
    measured = [(label, v) for label, v in judged if v.verdict != NOT_MEASURED]
    first = (measured or judged)[0][1]
    kinds: dict[str, list[tuple[str, Verdict]]] = {}
    for label, v in measured:
        kinds.setdefault(v.verdict, []).append((label, v))
    if len(kinds) < 2:
        return replace(first, cases=cases)
    why = "the verdict changes with the case: " + "; ".join(
        f"{verdict} for {', '.join(label for label, _ in group)} ({group[0][1].why})"
        for verdict, group in kinds.items()
    )
    return replace(first, verdict=DEPENDS, why=why, cases=cases)


def judge_all(
    myths: tuple[Myth, ...] = MYTHS,
    run: Callable[..., Comparison] | None = None,
) -> list[Verdict]:
    """One verdict per myth over its cases (`Myth.case_params`), each distinct lesson run once
    by ``run(lesson, **params)`` (default `fpexplore.lessons.run`); a myth whose lesson is not
    in the catalog is "not measured"."""
    from . import lessons

    run = run or lessons.run  # imports the lesson's own module first
    known = lesson_catalog()
    runs: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}

    def run_case(lesson: str, params: dict[str, Any]) -> Any:
        key = (lesson, tuple(sorted(params.items())))
        if key not in runs:
            try:
                runs[key] = run(lesson, **params)
            except Exception as exc:  # reported in the verdict: the table still renders
                runs[key] = exc
        return runs[key]

    out = []
    for myth in myths:
        if myth.lesson not in known:
            out.append(Verdict(myth, NOT_MEASURED, f"lesson {myth.lesson} is not written yet", ""))
            continue
        judged = []
        for label, params in myth.case_params():
            found = run_case(myth.lesson, params)
            if isinstance(found, Exception):
                failed = f"the lesson run failed: {type(found).__name__}: {found}"
                judged.append((label, Verdict(myth, NOT_MEASURED, failed, "")))
            else:
                judged.append((label, judge(myth, found)))
        out.append(_combine(myth, judged))
    return out


def judge_all_isolated(timeout: float = 900.0) -> list[Verdict]:
    """`judge_all` in a fresh Python process (``python -m fpexplore myths --json``): the
    frameworks the lessons load (torch, TensorFlow, the JVM) leave with it, so the calling
    kernel stays small (one framework-heavy kernel at a time on a 2 GB Binder)."""
    import json
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "fpexplore", "myths", "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise WorkerError(
            f"python -m fpexplore myths failed (exit {done.returncode}): {done.stderr[-2000:]}"
        )
    by_number = {m.number: m for m in MYTHS}
    return [
        Verdict(
            by_number[d["number"]],
            d["verdict"],
            d["why"],
            d["number_text"],
            d["source"],
            tuple(map(tuple, d.get("cases", ()))),
        )
        for d in json.loads(done.stdout)
    ]


def command(args: Any) -> int:
    """``fpexplore myths [--json] [--articles]``: every verdict, as text or JSON; with
    ``--articles`` (text) every article claim with its evidence (`fpexplore.article_claims`)."""
    import json

    verdicts = judge_all()
    if args.json:
        rows = [
            {
                "number": v.myth.number,
                "verdict": v.verdict,
                "why": v.why,
                "number_text": v.number,
                "source": v.source,
                "cases": [list(c) for c in v.cases],
            }
            for v in verdicts
        ]
        print(json.dumps(rows))
    else:
        for v in verdicts:
            print(f"{v.myth.number:2d}. [{v.verdict}] {v.myth.text}\n    {v.why}; {v.number}")
            if v.split:
                print(f"    cases: {v.split}")
    if getattr(args, "articles", False):
        from .article_claims import report

        print("\n" + report(verdicts))
    return 0


def verdict_table(verdicts: list[Verdict]) -> str:
    """The verdicts as HTML: a line counting them, then (opened on a click) the table of
    claim, verdict (and on what), number, where measured; `backticked` text set as code."""
    from .result.html import _code
    from .templates import trusted

    counts = {v: sum(x.verdict == v for x in verdicts) for v in VERDICTS}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    return render(
        "myths.html",
        verdicts=verdicts,
        summary=summary,
        code=lambda text: trusted(_code(text)),
    )
