"""The cross-machine claims check: every lesson's claims, at quick and at edge parameter
values, in a fresh process per dispatch switch. A claim must hold or be "not checked" under
every switch that applies to this CPU; what changes across switches is an observation.

``python -m pytest tests/test_claims_any_machine.py`` runs it, a `run_cell` per switch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .fresh import Plan, run_claims
from .switches import Switch

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
)


def plan() -> list[tuple[str, dict[str, Any]]]:
    """Every lesson at its quick parameters, then `EXTRA`."""
    from .. import lessons

    quick = [(name, dict(lesson.quick)) for name, lesson in lessons.all_lessons().items()]
    return quick + [(name, dict(params)) for name, params in EXTRA]


@dataclass(frozen=True)
class Cell:
    """One switch's run: the paths its process took, claims that failed, runs that raised."""

    switch: Switch
    seconds: float
    paths: dict[str, Any]
    failures: list[str]
    errors: list[str]
    states: dict[str, int]


def run_cell(s: Switch, the_plan: Plan) -> Cell:
    """Every run of ``the_plan`` in a fresh process under switch ``s``."""
    t0 = time.monotonic()
    result = run_claims(the_plan, s.env)
    failures, errors, states = [], [], {"holds": 0, "fails": 0, "not checked": 0}
    for run in result["runs"]:
        where = f"{run['lesson']} {run['params']}"
        if run["error"]:
            errors.append(f"{where}: {run['error']}")
        for key, claim in run["claims"].items():
            states[claim["state"]] += 1
            if claim["state"] == "fails":
                failures.append(f"{where} {key}: {claim['text']}")
    return Cell(s, time.monotonic() - t0, result["paths"], failures, errors, states)
