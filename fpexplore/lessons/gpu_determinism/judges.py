"""Myth 5, judged from the recorded runs: which ops vary with cudnn.benchmark off
(`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, Verdicts, claim, decide, holds

if TYPE_CHECKING:
    from ...result import Comparison


def _varying(c: Comparison) -> list[str]:
    return [
        o.implementation
        for o in c.outcomes
        if o.ran and isinstance(o.value, str) and o.value.startswith("varies")
    ]


def benchmark(c: Comparison) -> Verdicts:
    varies = claim(c, "atomics_vary") or claim(c, "conv_varies_without_benchmark")
    return decide(
        f"{len(_varying(c))} recorded ops vary run to run with the default flags",
        (
            varies and holds(c, "benchmark_adds_nothing_across_processes"),
            FAILS,
            "ops vary with benchmark off (atomic adds, some cuDNN gradients); benchmark only "
            "picks the algorithm per process",
        ),
        (varies, DEPENDS, "on the op: some vary without it, and benchmark adds variation"),
        otherwise=(HOLDS, "nothing varied with benchmark off"),
    )
