"""The cross-machine claims check: every lesson's claims, at quick and at edge parameter
values, in a fresh process per dispatch switch. A claim must hold or be "not checked" under
every switch that applies to this CPU; what changes across switches is an observation.

``python -m pytest tests/test_claims_any_machine.py`` runs it: one `run_cell` without any
switch (the default), then one per switch with the runs of the lessons it reaches (`share`
says why each other pair shares the default's result: the switch reaches none of the lesson's
libraries, or it takes this CPU's default paths).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .. import backends
from ..dispatch.switches import SWITCHES, Switch
from ..probe.paths import effective_paths
from ..result import State
from .runner import Plan, run_claims

#: parameter values beside each lesson's quick ones: the edges and options where claims that
#: generalize are most likely to break (n = 1, every op of a many-op lesson, a CPU-only run of
#: a GPU lesson, the other mode)
EXTRA: tuple[tuple[str, dict[str, Any]], ...] = (
    ("summation_order", {"n": 1}),
    ("summation_order", {"n": 2, "distribution": "normal", "dtype": "float16", "threads": 2}),
    ("summation_order", {"n": 777, "distribution": "alternating", "dtype": "bfloat16"}),
    ("rng_seeds", {"n": 15, "k": 4, "seed": 0}),
    ("rng_seeds", {"n": 100, "k": 8, "seed": 7, "tensorflow": False, "java": False}),
    ("train_vs_eval", {"mode": "eval", "runs": 3, "batch": 1, "p": 0.855}),
    ("train_vs_eval", {"runs": 3, "batch": 16, "p": 0.0}),
    ("gpu_determinism", {"device": "cpu", "quick": True, "runs": 2, "processes": 0}),
    ("tf32", {"device": "cpu", "max_size": 256}),
    ("cpu_vs_accelerator", {"device": "cpu"}),
    ("djl_normalization", {"stage": "normalize"}),
    ("djl_normalization", {"stage": "resize", "interpolation": "bicubic", "size": 117}),
    ("tf_vs_torch", {"op": "log_softmax", "dtype": "float16", "size": 64}),
    ("tf_vs_torch", {"op": "softmax", "dtype": "bfloat16", "size": 64}),
    ("tf_vs_torch", {"op": "cross_entropy"}),
    ("tf_vs_torch", {"op": "gelu"}),
    ("tf_vs_torch", {"op": "layer_norm"}),
    ("tf_vs_torch", {"op": "conv_same"}),
    ("tf_vs_torch", {"op": "adam", "length": 20}),
    ("tf_vs_torch", {"op": "autograd", "length": 50}),
    ("tf_vs_torch", {"op": "lstm", "length": 30}),
    ("tf_vs_torch", {"op": "graph_mode"}),
    ("tf_vs_torch", {"op": "reduce_sum"}),
    ("tf_vs_torch", {"op": "control_flow", "seed": 5}),
    ("tf_vs_torch", {"op": "higher_order", "seed": 5}),
    ("tf_vs_torch", {"op": "tolerances"}),
    ("libtorch_vs_pytorch", {"size": 32, "sum_length": 10_000, "seed": 3, "cuda": "recorded"}),
    ("distributed_reduction", {"n": 64, "seed": 9}),
    ("training_drift", {"model": "logistic", "lr": 0.01, "steps": 20}),
    ("training_drift", {"model": "mlp", "perturbation": "summation-order", "lr": 2.0}),
)


def plan() -> list[tuple[str, dict[str, Any]]]:
    """Every lesson at its quick parameters, then `EXTRA`."""
    from .. import lessons

    quick = [(name, dict(lesson.quick)) for name, lesson in lessons.all_lessons().items()]
    return quick + [(name, dict(params)) for name, params in EXTRA]


@dataclass(frozen=True)
class Cell:
    """One switch's run: the paths its process took, claims that failed, runs that raised."""

    switch: Switch | None
    seconds: float
    paths: dict[str, Any]
    failures: list[str]
    errors: list[str]
    states: dict[str, int]
    #: the lesson of each run, in the plan's order
    lessons: tuple[str, ...] = ()


def run_cell(s: Switch | None, the_plan: Plan) -> Cell:
    """Every run of ``the_plan`` in a fresh process under switch ``s`` (None: no switch, the
    default paths of this CPU)."""
    t0 = time.monotonic()
    result = run_claims(the_plan, s.env if s is not None else {})
    failures, errors = [], []
    for run in result["runs"]:
        where = f"{run['lesson']} {run['params']}"
        if run["error"]:
            errors.append(f"{where}: {run['error']}")
        for key, claim in run["claims"].items():
            if claim["state"] == State.FAILS:
                failures.append(f"{where} {key}: {claim['text']}")
    states = State.counts(c["state"] for run in result["runs"] for c in run["claims"].values())
    lessons = tuple(run["lesson"] for run in result["runs"])
    return Cell(s, time.monotonic() - t0, result["paths"], failures, errors, states, lessons)


# ----------------------------------------------------------------------------- what runs where
#: every library a switch can reach
LIBRARIES = tuple(sorted({lib for s in SWITCHES for lib in s.reaches}))
#: backends of the registry that run on another one's paths
ALIASES = {"keras": ("tensorflow",), "torchvision": ("torch",)}
#: parts a claim may need that are not backends (records, conditions on the parameters, a
#: card), and the libraries that compute what the claim compares with them; a part neither
#: here nor in the registry (nor starting with a backend's name: "torch run") counts as
#: reaching every library
PART_LIBRARIES: dict[str, tuple[str, ...]] = {
    # summation_order
    "sequential bound": ("numpy",),
    "pairwise bound": ("numpy",),
    "np.sum in bfloat16": ("numpy",),
    "MKL as torch's BLAS": ("torch",),
    # rng_seeds
    "randn path": ("torch",),
    "cpu path": ("torch",),
    "cuda stream": ("torch",),
    "two-GPU record": ("torch",),
    # train_vs_eval (conditions on its parameters, for either framework)
    "a momentum above 0": ("torch", "tensorflow"),
    "a moving-statistics update": ("torch", "tensorflow"),
    # gpu_determinism
    "cuda": ("torch",),
    "full shapes": ("torch",),
    "fresh processes": ("torch",),
    "linear_flag record": ("torch",),
    # djl_normalization
    "an image with fine detail": ("torch", "djl", "tensorflow"),
    # tf32, cpu_vs_accelerator, libtorch_vs_pytorch, distributed_reduction
    "tf32 card": ("torch",),
    "wide conv": ("torch",),
    "matmul rows": ("torch",),
    "accelerator": ("torch",),
    "device runs": ("torch",),
    "edge runs": ("torch",),
    "edges record": ("torch",),
    "cuda kernels": ("torch", "libtorch"),
    "kernel inputs": ("torch", "libtorch"),
    "nccl record": ("torch",),
    # training_drift
    "training_drift GPU record": ("torch",),
    # cpu_dispatch: its fingerprints run every library, in processes under the switch
    "an untouched library": LIBRARIES,
}


def part_libraries(part: str) -> tuple[str, ...]:
    """The libraries whose CPU paths can change how a claim needing ``part`` is decided."""
    names = backends.names()
    if part in names:
        return ALIASES.get(part, (part,))
    if part in PART_LIBRARIES:
        return PART_LIBRARIES[part]
    first = part.split()[0] if part.split() else ""
    if first in names:  # "torch run", "java int seed": that backend's run
        return ALIASES.get(first, (first,))
    return LIBRARIES


#: libraries every lesson computes with, named or not in its claims' needs (numpy: inputs,
#: emulators, errors), so every switch that reaches them runs every lesson
EVERY_LESSON = ("numpy",)


def lesson_libraries(name: str) -> frozenset[str]:
    """The libraries a lesson's claims are decided with: `EVERY_LESSON` and those its claims'
    ``needs`` name (`part_libraries`)."""
    from .. import lessons

    lesson = lessons.all_lessons()[name]
    parts = {p for spec in lesson.claims.values() for p in spec.needs}
    return frozenset(set(EVERY_LESSON).union(*(part_libraries(p) for p in parts)))


def same_as_default(s: Switch, flags: frozenset[str] | None = None) -> str | None:
    """Why ``s`` gives this CPU the default's bits (every path it sets is the one the CPU takes
    without it: `paths.effective_paths`), or None where it may not."""
    mine, default = effective_paths(s.env, flags), effective_paths({}, flags)
    if mine is None or mine != default:
        return None
    return f"{s.name} takes this CPU's default paths ({mine})"


def reaches(s: Switch, lesson: str) -> bool:
    """Whether ``s`` reaches one of ``lesson``'s libraries."""
    return bool(set(s.reaches) & lesson_libraries(lesson))


def share(s: Switch, lesson: str, flags: frozenset[str] | None = None) -> str | None:
    """Why ``lesson`` under ``s`` has the default's result without a run of its own, or None
    where it must run under ``s``."""
    same = same_as_default(s, flags)
    if same:
        return same
    if not reaches(s, lesson):
        libs = ", ".join(sorted(lesson_libraries(lesson)))
        return f"{s.name} reaches {', '.join(s.reaches)}, none of {lesson}'s libraries ({libs})"
    return None


def switch_plan(
    s: Switch, the_plan: Plan, flags: frozenset[str] | None = None
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, str]]:
    """The runs of ``the_plan`` that must run under ``s``, and ``{lesson: why}`` for the
    lessons that share the default's result instead."""
    runs, shared = [], {}
    for name, params in the_plan:
        why = share(s, name, flags)
        if why:
            shared[name] = why
        else:
            runs.append((name, dict(params)))
    return runs, shared
