"""The CPU half of CPU vs accelerator, live on this machine at a chosen thread count.

The recorded run's inputs go through `experiment.run_side` on this CPU with ``threads``
intra-op threads; each result is measured against the exact one and compared bit for bit with
the recorded card and the recording machine's CPU (another thread count, another sum order).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np

from ...backends.torch_device import N_THREADS, cpu_threads
from ...params import validate_all
from . import experiment as acc

THREADS = (1, 2, 4, 8, 16)


@functools.lru_cache(maxsize=2)
def _setup(settings_json: str) -> tuple[dict[str, Any], dict[str, Any]]:
    s = json.loads(settings_json)
    inp = acc.inputs(s)
    return inp, acc.truth(inp)


def prepare(settings: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The inputs and exact truths for ``settings`` (cached: the exact chain takes seconds)."""
    return _setup(json.dumps(settings, sort_keys=True))


def summarize(side: dict[str, Any], tr: dict[str, Any]) -> dict[str, Any]:
    """The numbers a reader compares: both sums, their bits, chain drift, conv error."""
    got = side["chain"].astype(np.float64)
    t = tr["chain"]
    drift = float(np.linalg.norm(got[-1] - t[-1]) / np.linalg.norm(t[-1]))
    return {
        "sum_uniform": float(side["sum_uniform"]),
        "sum_tenthousand": float(side["sum_tenthousand"]),
        "sum_uniform_bits": int(np.float32(side["sum_uniform"]).view(np.uint32)),
        "chain_drift": drift,
        "conv_error": acc.conv_error(side, tr),
        "chain_bits": acc.pack(side["chain"]),
        "conv_digest": side["conv_digest"],
    }


@functools.lru_cache(maxsize=16)
def _cpu_side(settings_json: str, n_threads: int) -> dict[str, Any]:
    inp, tr = _setup(settings_json)
    with cpu_threads(n_threads) as torch:
        side = acc.run_side(torch.device("cpu"), inp, "torch default")
    return {**summarize(side, tr), "threads": n_threads}


def cpu_side(settings: dict[str, Any], n_threads: int) -> dict[str, Any]:
    """This CPU's results for the recorded ``settings`` with ``n_threads`` threads (cached)."""
    n_threads = validate_all((N_THREADS,), {"n_threads": n_threads}, "cpu_side")["n_threads"]
    return _cpu_side(json.dumps(settings, sort_keys=True), n_threads)


def recorded_sides(record: Any) -> dict[str, dict[str, Any]]:
    """The record's sides by label ("cpu" for the recording machine's CPU, else the mode)."""
    e = record.experiments["cpu_vs_accelerator"]
    _, tr = prepare(e["settings"])
    out = {}
    for js in e["sides"]:
        side = acc.side_from_json(js)
        label = "cpu" if js["device"] == "cpu" else js["mode"]
        out[label] = summarize(side, tr)
    return out
