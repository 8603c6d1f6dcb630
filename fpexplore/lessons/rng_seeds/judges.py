"""Myths 2, 19, 20 and 25: DJL's and torch's seeded layers and initializers, and seeded
DataLoader workers (`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, NotMeasured, Rule, Verdicts, decide, holds

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


# the weights a DJL model starts with come from its default initializer, not from a
# randomUniform call: judged from the initializers (the raw uniform streams do match)
seed = Rule(
    ("djl_init_gaussian_fan_in", "djl_init_not_torch"),
    HOLDS,
    "for default-initialized models: DJL's Linear/Conv2d start from Xavier Gaussian (fan-in, "
    "magnitude 2, zero bias), torch's from kaiming_uniform(a=√5) with a uniform bias; the raw "
    "randomUniform streams are libtorch's and match torch.rand bit for bit",
    (DEPENDS, "on the layer: DJL's default initializer matched torch's here"),
    _init_number,
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
    extra = ""
    workers = holds(c, "workers_reproduce_with_seed", "workers_distinct_streams")
    live = c.claims.get("seeding_two_gpus")
    gpus = None if live is None else live.holds  # None: no two CUDA devices in this run
    recorded = [c.claims.get(k) for k in ("seed_reaches_every_gpu", "streams_reproduce")]
    if live is None and all(r is not None and r.holds is not None for r in recorded):
        gpus = all(r.holds for r in recorded)
        race = c.claims.get("thread_race_varies")
        if race is not None and race.holds:
            extra = (
                " (recorded); only host threads racing for one generator got other "
                "draws each run (myth 8)"
            )
    gpu_why = (
        "two GPUs and CUDA streams: not measurable here"
        if gpus is None
        else "two GPUs and a second stream: same streams" + extra
        if gpus
        else "two GPUs or a second stream gave other streams"
    )
    return decide(
        "DataLoader with 2 workers: reproduced bit for bit after manual_seed; " + gpu_why,
        (
            workers and gpus is False,
            DEPENDS,
            "workers reproduce, but the GPUs or streams did not",
        ),
        (
            workers,
            FAILS,
            "for DataLoader workers: torch seeds each worker's torch, numpy and random from the "
            "seeded base seed (worker_init_fn is not needed since torch 1.9)",
        ),
        otherwise=(HOLDS, "seeded DataLoader workers did not reproduce"),
    )
