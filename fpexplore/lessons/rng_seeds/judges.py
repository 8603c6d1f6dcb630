"""Myths 2, 19, 20 and 25: DJL's and torch's seeded layers and initializers, and seeded
DataLoader workers (`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import (
    DEPENDS,
    FAILS,
    HOLDS,
    NotMeasured,
    Rule,
    Verdicts,
    claim,
    decide,
    holds,
)
from . import multi_gpu

if TYPE_CHECKING:
    from ...result import Comparison
    from .data import DjlLayers


def _djl_layers(c: Comparison) -> DjlLayers:
    found = c.data.djl_layers
    if found is None:
        raise NotMeasured(f"the {c.lesson} run measured no DJL layers")
    return found


def _init_number(c: Comparison) -> str:
    d = _djl_layers(c)
    return (
        f"DJL Linear: Gaussian σ {d.sigma:.4g}, bias 0; torch: U(±{d.torch_bound:.4g}), "
        f"uniform bias; {d.weights_equal_torch} of {d.weights} weights equal, "
        f"{d.outside_torch_bound} outside torch's bound"
    )


def seed(c: Comparison) -> Verdicts:
    """Myth 2 on both of its readings: the article's own example (DJL ``randomUniform`` vs
    ``torch.rand`` after the same seed) and default-initialized layers."""
    raw = claim(c, "djl_matches_torch_cpu")
    init = holds(c, "djl_init_gaussian_fan_in", "djl_init_not_torch")
    same = c.data.djl_uniform_same
    if same is None:
        raise NotMeasured(f"the {c.lesson} run drew no DJL randomUniform stream")
    stream = (
        f"DJL's randomUniform {'equals' if raw else 'differs from'} torch.rand "
        f"({same[0]} of {same[1]} values bit-identical, seed {c.params.get('seed')})"
    )
    layers = (
        "default-initialized Linear/Conv2d differ (DJL: Xavier Gaussian, fan-in, zero bias; "
        "torch: kaiming_uniform(a=√5), uniform bias)"
        if init
        else "DJL's default-initialized layers matched torch's"
    )
    return decide(
        f"randomUniform vs torch.rand: {same[0]} of {same[1]} identical; {_init_number(c)}",
        (
            raw and init,
            DEPENDS,
            f"on how the weights are drawn: in the article's own example {stream}, so it "
            f"does not hold; {layers}, so it holds there",
        ),
        (raw, FAILS, f"{stream}, and {layers}"),
        (init, HOLDS, f"{stream}, and {layers}"),
        otherwise=(
            DEPENDS,
            f"on how the weights are drawn: {stream}, so it holds there; {layers}",
        ),
    )


init = Rule(
    ("djl_init_gaussian_fan_in", "djl_init_not_torch", "keras_init_glorot"),
    HOLDS,
    "DJL: Xavier Gaussian, fan-in, magnitude 2, zero bias; torch: kaiming_uniform(a=√5), "
    "uniform bias; Keras: glorot_uniform, zero bias: three distributions",
    (DEPENDS, "on the layer: some defaults matched"),
    _init_number,
)


djl_dropout = Rule(
    ("djl_dropout_matches_torch",),
    FAILS,
    "for the pinned DJL/torch pair: both are libtorch's bernoulli_ on the seeded default "
    "generator, so the masks match bit for bit",
    (HOLDS, "DJL's libtorch draws another mask for the same seed"),
    lambda c: (
        f"{_djl_layers(c).dropout_same} of {_djl_layers(c).dropout_total} mask values identical"
    ),
)


def seeding(c: Comparison) -> Verdicts:
    """Myth 25 ("seeding is not enough with several GPUs, CUDA streams or DataLoader workers"):
    every way of seeding measured, DataLoader workers live, GPUs and streams live or from the
    two-GPU record; the ways that leave draws unseeded or racing make it depend."""
    workers = holds(c, "workers_reproduce_with_seed", "workers_distinct_streams")
    live = c.claims.get("seeding_two_gpus")
    gpus = None if live is None else live.holds  # None: no two CUDA devices in this run
    recorded = [c.claims.get(k) for k in ("seed_reaches_every_gpu", "streams_reproduce")]
    if live is None and all(r is not None and r.holds is not None for r in recorded):
        gpus = all(r.holds for r in recorded)
    gaps = []  # the ways of seeding that left draws varying, as measured
    for key, what in (
        (
            "current_device_seed_misses_others",
            "torch.cuda.manual_seed seeds only the current "
            "device, so cuda:1 drew another stream in each fresh process",
        ),
        (
            "thread_race_varies",
            "host threads racing for one generator get other draws each run "
            "(no seed fixes the interleaving)",
        ),
    ):
        found = c.claims.get(key)
        if found is not None and found.holds:
            gaps.append(what)
    gpu_why = (
        "two GPUs and CUDA streams: not measurable here"
        if gpus is None
        else "two GPUs and a second stream after torch.manual_seed: same streams"
        if gpus
        else "two GPUs or a second stream gave other streams"
    )
    m = getattr(c.data, "multi_gpu", None)
    if m is not None and gpus is not None:
        p = multi_gpu.PROBES
        gpu_why += (
            f"; cuda.manual_seed then cuda:1: {m.distinct[p[2]]} distinct in {m.runs} runs; "
            f"racing host threads: {max(m.distinct[p[6]], m.distinct[p[7]])} distinct per "
            f"thread (recorded on {len(m.cards)} × {m.cards[0]})"
        )
    return decide(
        "DataLoader with 2 workers: reproduced bit for bit after manual_seed; " + gpu_why,
        (
            workers and gpus is False,
            DEPENDS,
            "workers reproduce, but the GPUs or streams did not",
        ),
        (
            workers and bool(gpus) and bool(gaps),
            DEPENDS,
            "on how the seed is set and who draws: torch.manual_seed is enough for DataLoader "
            "workers, every GPU and streams launched in a fixed order; " + "; ".join(gaps),
        ),
        (
            workers,
            FAILS,
            "for DataLoader workers: torch seeds each worker's torch, numpy and random from the "
            "seeded base seed (worker_init_fn is not needed since torch 1.9)"
            + ("; torch.manual_seed also seeds every GPU and fixed-order streams" if gpus else ""),
        ),
        otherwise=(HOLDS, "seeded DataLoader workers did not reproduce"),
    )
