"""The determinism experiment's scatter-style ops, live on this machine's CPU.

The recorded GPU runs' inputs (`experiment._atomic_cases`), run a few times at a chosen thread
count: distinct results, whether the bits match one thread's, and the errors against the exact
sums. A CPU has no racing atomics, so a fixed thread count repeats its bits; the thread count
itself can change them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ...backends.torch_device import N_THREADS, cpu_threads, torch_module
from ...params import Options, validate_all
from . import experiment
from .rows import Row

#: the record's scatter-style inputs: 10^6 values into 100 bins, seed 0 + 100
N_VALUES, SEED = 10**6, 100
OPS = (
    "index_add_",
    "scatter_add_",
    "index_put_(accumulate=True)",
    "embedding_bag backward (sum)",
    "interpolate backward (bilinear)",
    "sum (control)",
)
#: what `run_on_cpu` takes, checked as a lesson's parameters are
PARAMS = (Options("op", OPS[0], "a scatter-style op", choices=OPS), N_THREADS)


_cases = functools.lru_cache(maxsize=2)(experiment._atomic_cases)


@dataclass(frozen=True)
class CpuRun(Row):
    """An op's runs on this CPU at one thread count (``config`` is empty: no GPU flags)."""

    threads: int = 1
    same_as_one_thread: bool = True  # the first run's bits equal one thread's


@functools.lru_cache(maxsize=64)
def run_on_cpu(op: str, n_threads: int, runs: int = 3) -> CpuRun:
    """``op`` run ``runs`` times on the CPU with ``n_threads`` threads (cached): the spread,
    errors at the sampled entries and whether the bits match one thread's."""
    given = {"op": op, "n_threads": n_threads}
    op, n_threads = validate_all(PARAMS, given, "gpu_determinism run_on_cpu").values()
    torch = torch_module()
    a = _cases(N_VALUES, SEED)
    once, sample = experiment._atomic_ops(torch, torch.device("cpu"), a)[op]
    with cpu_threads(n_threads):
        measured = experiment._measure([once() for _ in range(runs)], sample)
    case = experiment._atomic_case_text(op, a)
    given = {"op": op, "case": case, "output": "result", "config": "", "raised": None}
    row = Row.from_dict(measured | given)
    same = n_threads == 1 or row.digests[0] == run_on_cpu(op, 1, runs=1).digests[0]
    return CpuRun(**vars(row), threads=n_threads, same_as_one_thread=same)
