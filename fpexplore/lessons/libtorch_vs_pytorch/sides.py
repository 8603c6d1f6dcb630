"""Run the same ops on the same input bits in C++ (the LibTorch program) and in Python (torch).

Both sides set the intra-op thread count per op (``at::set_num_threads`` in C++,
``torch.set_num_threads`` in Python) and return float32 numpy arrays keyed by (op, threads).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...backends import libtorch_program
from .inputs import RNG_N, Inputs

TORCH_OPS = ("mm", "grad", "mlp", "sum")
LOOP_OPS = ("loop_sum", "loop_sum_fastmath")

Results = dict[tuple[str, int], np.ndarray]


def cpp(inp: Inputs, threads: Sequence[int]) -> tuple[Results, libtorch_program.ProgramInfo]:
    """Every op in one run of the C++ program, with its randn/rand (key threads 0); and the
    program's info."""
    jobs = [
        libtorch_program.Job(op, inp.for_op(op), threads=t) for t in threads for op in TORCH_OPS
    ]
    jobs += [libtorch_program.Job(op, inp.for_op(op)) for op in LOOP_OPS]
    jobs += [libtorch_program.Job(op, seed=inp.seed, n=RNG_N) for op in ("randn", "rand")]
    arrays, info = libtorch_program.run_with_info(jobs)
    out = {
        (job.op, job.threads if job.op in TORCH_OPS else 0): arr
        for job, arr in zip(jobs, arrays, strict=True)
    }
    return out, info


def python(torch: Any, inp: Inputs, threads: Sequence[int]) -> Results:
    """The same ops through Python's torch (restoring its thread count afterwards)."""
    functional = torch.nn.functional
    saved = torch.get_num_threads()
    out: Results = {}
    try:
        for t in threads:
            torch.set_num_threads(t)
            a, b = torch.from_numpy(inp.a), torch.from_numpy(inp.b)
            out[("mm", t)] = torch.mm(a, b).numpy()
            x = torch.from_numpy(inp.x).clone().requires_grad_(True)
            (x @ x.T).sum().backward()
            out[("grad", t)] = x.grad.numpy()
            with torch.no_grad():
                xm, w1, b1, w2, b2 = map(torch.from_numpy, inp.mlp)
                h = functional.relu(functional.linear(xm, w1, b1))
                out[("mlp", t)] = functional.linear(h, w2, b2).numpy()
            out[("sum", t)] = torch.from_numpy(inp.v).sum().numpy()
        for op, fn in (("randn", torch.randn), ("rand", torch.rand)):
            torch.manual_seed(inp.seed)
            out[(op, 0)] = fn(RNG_N).numpy()
    finally:
        torch.set_num_threads(saved)
    return out


def same_bits(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Bitwise equality of two float32 results (NaNs with equal payloads count as equal)."""
    if a is None or b is None:
        return False
    a, b = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    return a.shape == b.shape and bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))
