"""The CPU half of CPU vs accelerator, live on this machine at a chosen thread count.

The recorded run's inputs go through `experiment.run_side` on this CPU with ``threads``
intra-op threads; each result is measured against the exact one and compared bit for bit with
the recorded card and the recording machine's CPU (another thread count, another sum order).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...backends.torch_device import N_THREADS, cpu_threads
from ...errors import InvalidParameter
from ...params import validate_all
from . import experiment as acc
from .data import Settings, Sums
from .experiment import Side

THREADS = (1, 2, 4, 8, 16)


@functools.lru_cache(maxsize=2)
def prepare(settings: Settings) -> tuple[dict[str, Any], dict[str, Any]]:
    """The inputs and exact truths for ``settings`` (cached: the exact chain takes seconds)."""
    inp = acc.inputs(settings)
    return inp, acc.truth(inp)


@dataclass(frozen=True)
class Summary:
    """The numbers a reader compares of one side: both sums, their bits, chain drift, conv
    error."""

    sum_uniform: float
    sum_tenthousand: float
    sum_uniform_bits: int
    chain_drift: float  # ||x - exact|| / ||exact|| after the last matmul
    conv_error: float  # ||got - exact|| / ||exact|| of the sampled conv outputs
    chain_bits: dict[str, Any]  # the chain's states, packed (`experiment.pack`)
    conv_digest: str
    threads: int | None = None  # this CPU's thread count (None: recorded)


def summarize(side: Side, tr: dict[str, Any], threads: int | None = None) -> Summary:
    """A side's `Summary` against the truths ``tr``."""
    got = side.chain.astype(np.float64)
    t = tr["chain"]
    drift = float(np.linalg.norm(got[-1] - t[-1]) / np.linalg.norm(t[-1]))
    return Summary(
        sum_uniform=float(side.sum_uniform),
        sum_tenthousand=float(side.sum_tenthousand),
        sum_uniform_bits=int(np.float32(side.sum_uniform).view(np.uint32)),
        chain_drift=drift,
        conv_error=acc.conv_error(side.conv, tr),
        chain_bits=acc.pack(side.chain),
        conv_digest=side.conv_digest,
        threads=threads,
    )


@functools.lru_cache(maxsize=16)
def _cpu_side(settings: Settings, n_threads: int) -> Summary:
    inp, tr = prepare(settings)
    with cpu_threads(n_threads) as torch:
        side = acc.run_side(torch.device("cpu"), inp, "torch default")
    return summarize(Side.from_json(acc.side_to_json(side)), tr, n_threads)


def cpu_side(settings: Settings, n_threads: int) -> Summary:
    """This CPU's results for the recorded ``settings`` with ``n_threads`` threads (cached)."""
    n_threads = validate_all((N_THREADS,), {"n_threads": n_threads}, "cpu_side")["n_threads"]
    return _cpu_side(settings, n_threads)


@dataclass(frozen=True)
class Recorded:
    """A record's CPU vs accelerator run: its settings, the exact sums, and each side
    summarized by label ("cpu" for the recording machine's CPU, else the card's mode)."""

    settings: Settings
    cpu_threads: int | None  # the recording machine's
    exact: Sums
    sides: dict[str, Summary]

    def side(self, label: str) -> Summary:
        """The side called ``label``; another label raises `InvalidParameter`."""
        if label not in self.sides:
            raise InvalidParameter("side", label, "one of " + ", ".join(self.sides))
        return self.sides[label]

    @property
    def cpu(self) -> Summary:
        """The recording machine's CPU."""
        return self.side("cpu")


def recorded(which: str = "newest") -> Recorded:
    """The recorded run ``which`` (a lesson's ``record`` parameter), summarized."""
    from ... import records

    rec = records.load(records.find(which))
    with rec.reading("cpu_vs_accelerator"):
        e = rec.experiments["cpu_vs_accelerator"]
        settings = Settings.from_dict(e["settings"])
        _, tr = prepare(settings)
        sides = {
            "cpu" if js["device"] == "cpu" else js["mode"]: summarize(Side.from_json(js), tr)
            for js in e["sides"]
        }
        exact = Sums(tr["sum_uniform"], tr["sum_tenthousand"])
        return Recorded(settings, rec.provenance.get("cpu_threads"), exact, sides)
