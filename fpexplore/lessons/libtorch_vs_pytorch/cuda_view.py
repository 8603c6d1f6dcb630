"""The CUDA part of the lesson, live (a GPU and nvcc here) or from the recorded run.

Either way the checks run here, on the CPU: inputs regenerated from their seeds, the naive
kernel's CPU emulators compared with its bits, errors measured against the exact results.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import backends, metrics, truth
from ...errors import RecordError
from ...result import Claim, Observation, Outcome
from .._base import declare_texts
from . import cuda_kernels as ck
from .data import CudaData, MatmulRow, SumRow

LIVE_SIZES = (64, 256)
SHORT = {
    "naive_fma": "naive kernel, FMA",
    "naive_nofma": "naive kernel, no FMA",
    "cublas": "torch.mm (cuBLAS)",
    "each_atomic": "atomicAdd each",
    "block_atomic": "tree + atomicAdd",
    "torch_sum": "torch.sum",
}
LIVE_RUNS = 10


@dataclass
class Part:
    """What a part of the lesson adds: outcomes, claims, observations (the CUDA part: data)."""

    outcomes: list[Outcome] = field(default_factory=list)
    claims: dict[str, Claim] = field(default_factory=dict)
    observations: dict[str, Observation] = field(default_factory=dict)
    data: CudaData | None = None  # set by `_check`
    #: why a part the claims need is missing, with its fix, by part (`settle`)
    missing: dict[str, str] = field(default_factory=dict)


#: The CUDA part's claims: each needs the kernels' run ("cuda kernels": live, or the recorded
#: one); checking the naive kernels bit for bit also needs the recorded inputs regenerated here.
CLAIMS = declare_texts(
    {
        "naive_kernel_is_fma_chain": "the naive CUDA kernel built with nvcc's defaults equals, "
        "bit for bit, a CPU emulation doing one fused multiply-add per k step (acc = fma(a, b, "
        "acc))",
        "nofma_kernel_is_plain_chain": "the same loop written with __fmul_rn/__fadd_rn equals a "
        "CPU emulation rounding the product and the sum separately, bit for bit",
        "fma_changes_bits": "FMA contraction alone changes the naive kernel's bits (fma vs no-fma "
        "kernels differ at every size)",
        "atomic_varies": "the atomicAdd reduction (every thread adds its element) gives more than "
        "one bit pattern over repeated runs on the same input",
        "torch_sum_repeatable": "torch.sum on the GPU gives the same bits in every run",
    },
    ("cuda kernels",),
    {
        "naive_kernel_is_fma_chain": ("cuda kernels", "kernel inputs"),
        "nofma_kernel_is_plain_chain": ("cuda kernels", "kernel inputs"),
    },
    applies="CUDA devices (live, or the recorded run)",
    test="tests/test_libtorch_vs_pytorch.py",
)

OBSERVATIONS = declare_texts(
    {
        "cublas_equals_naive": "cuBLAS gives the naive FMA kernel's bits, by n",
        "block_atomic_distinct": "distinct results of the block-tree + atomicAdd sum",
    },
    ("cuda kernels",),
    applies="where a CUDA device or a recorded GPU run exists",
)


def live_possible() -> str | None:
    """Why the kernels cannot run live here (None when they can)."""
    from ...errors import BackendUnavailable

    try:
        torch = backends.load("torch")
    except BackendUnavailable as exc:
        return str(exc)

    if not torch.cuda.is_available():
        return "torch sees no CUDA device here"
    CUDA_HOME = backends.load("torch", "utils.cpp_extension").CUDA_HOME

    if shutil.which("nvcc") is None and not CUDA_HOME:
        return "nvcc (the CUDA toolkit) is not installed"
    return None


def _live() -> dict[str, Any]:
    from ...backends.torch_device import open_device, provenance

    dev = open_device("cuda")
    mod, _compile_s = ck.compile_kernels()
    return {
        "provenance": {**provenance(dev), "nvcc": ck.nvcc_version()},
        "experiments": {
            "matmul": ck.run_matmul(mod, dev, LIVE_SIZES, say=lambda _m: None),
            "sum": ck.run_sum(mod, dev, ck.SUM_N, LIVE_RUNS, say=lambda _m: None),
        },
    }


def _source(cuda: str) -> tuple[str, dict[str, Any] | None, str, str]:
    """(kind, data, banner, why-not) for the option ``cuda``."""
    why = live_possible() if cuda in ("auto", "live") else "recorded run asked for"
    if cuda == "live" and why:
        return "live", None, "", f"cannot run the CUDA kernels live: {why}."
    if why is None:
        try:
            data = _live()
        except Exception as exc:  # nvcc or the driver failed: say so, never a traceback
            return "live", None, "", f"the live CUDA run failed ({type(exc).__name__}: {exc})."
        p = data["provenance"]
        return "framework", data, f"LIVE run on {p['gpu_name']}, torch {p['torch']}", ""
    try:
        path, data = ck.load()
    except RecordError as exc:
        return "recorded", None, "", str(exc)
    data = {**data, "_mtime": path.stat().st_mtime}
    p = data["provenance"]
    banner = (
        f"RECORDED run ({why}): {p['gpu_name']}, {p['date'][:10]}, torch {p['torch']}, CUDA "
        f"{p.get('cuda')}, {p['nvcc']}, driver {p.get('driver')} — from {path.name}"
    )
    return "recorded", data, banner, ""


_CHECKED: dict[tuple[str, float], Part] = {}  # recorded runs checked in this process


def compare(cuda: str) -> Part:
    """Outcomes, claims and observations of the CUDA part (see module doc). The checks of a
    recorded run are done once per record file (and its modification time) in a process."""
    kind, data, banner, why_not = _source(cuda)
    if data is None or "_mtime" not in data:
        return _check(kind, data, banner, why_not)
    key = (banner, data["_mtime"])
    if key not in _CHECKED:
        _CHECKED[key] = _check(kind, data, banner, why_not)
    return _CHECKED[key]


def _matmul(
    row: dict[str, Any], kind: str, label: str
) -> tuple[MatmulRow, tuple[bool, bool | None, bool | None], list[Outcome]]:
    """One recorded n: its table row; whether its inputs regenerate here and whether the CPU
    emulators, recomputed on the rows the record measured, give the FMA and no-FMA kernels'
    bits (None where those rows differ); and, where the record holds the bits, an outcome per
    kernel."""
    n, var = row["n"], row["variants"]
    a, b = ck.mm_inputs(n)
    inputs_ok = ck.digest(np.concatenate([a.ravel(), b.ravel()])) == row["input_digest"]
    rows = list(range(n)) if row["truth_rows"] == "all" else row["truth_rows"]
    checks: tuple[bool, bool | None, bool | None] = (False, None, None)
    if rows == ck.truth_rows(n):
        fma = ck.digest(ck.fma_chain(a[rows], b)) == var["naive_fma"]["rows_digest"]
        plain = ck.digest(ck.plain_chain(a[rows], b)) == var["naive_nofma"]["rows_digest"]
        checks = (inputs_ok, fma, plain)
    ulp = {k: v["error"]["max_abs_ulp"] for k, v in var.items()}
    same = var["cublas"]["digest"] == var["naive_fma"]["digest"]
    measured = "all" if row["truth_rows"] == "all" else len(row["truth_rows"])
    ms = {k: v["ms"] for k, v in var.items()}
    table_row = MatmulRow(n, *(ulp[k] for k in ck.MM_VARIANTS), same, ms, measured)
    if "bits" not in var["naive_fma"]:
        return table_row, checks, []
    exact = truth.matmul(a, b)
    outcomes = [
        Outcome.measured(
            f"CUDA mm {n} · {SHORT[name]}",
            "cuda",
            ck.from_bits(v["bits"]).reshape(n, n),
            exact,
            kind=kind,
            device=label,
            note=f"{v['distinct_runs']} distinct in {v['runs']} runs",
        )
        for name, v in var.items()
    ]
    return table_row, checks, outcomes


def _sum(
    name: str, v: dict[str, Any], exact_sum: Any, kind: str, label: str
) -> tuple[SumRow, Outcome]:
    """One recorded sum variant: its table row and its outcome (the first run's value)."""
    vals = ck.from_bits(v["bits"])
    distinct = sorted(set(v["bits"]))
    ulps = [
        float(metrics.measure(np.float32(ck.from_bits(d)), exact_sum).ulp_scalar) for d in distinct
    ]
    row = SumRow(name, len(distinct), len(vals), min(ulps), max(ulps), v["ms"])
    outcome = Outcome.measured(
        f"CUDA sum · {SHORT[name]}",
        "cuda",
        vals[0],
        exact_sum,
        kind=kind,
        device=label,
        note=f"{len(distinct)} distinct in {len(vals)} runs, "
        f"{min(ulps):+.3g} to {max(ulps):+.3g} ULP",
    )
    return row, outcome


def _check(kind: str, data: dict[str, Any] | None, banner: str, why_not: str) -> Part:
    part = Part()
    if data is None:
        part.missing["cuda kernels"] = why_not
        part.outcomes.append(Outcome.missing("CUDA kernels", "cuda", why_not, kind="recorded"))
        part.data = CudaData(None, why_not)
        return part
    label = data["provenance"]["gpu_name"]
    exp = data["experiments"]
    table, checks = [], []
    for row in exp["matmul"]:
        table_row, check, outcomes = _matmul(row, kind, label)
        table.append(table_row)
        checks.append(check)
        part.outcomes += outcomes
    if not all(c[0] for c in checks):
        part.missing["kernel inputs"] = (
            "the regenerated inputs differ from the recorded ones (numpy's generator changed). "
            f"Fix: record the kernels again ({ck.RECORD_COMMAND} on a GPU)"
        )
    s = exp["sum"]
    exact_sum = truth.sum(ck.sum_input(s["n"]))
    sums = [_sum(name, v, exact_sum, kind, label) for name, v in s["variants"].items()]
    part.outcomes += [outcome for _, outcome in sums]
    fma_ok = [c[1] for c in checks if c[1] is not None]
    plain_ok = [c[2] for c in checks if c[2] is not None]
    fma_differs = [
        r["variants"]["naive_fma"]["digest"] != r["variants"]["naive_nofma"]["digest"]
        for r in exp["matmul"]
    ]
    decided = {
        "naive_kernel_is_fma_chain": bool(fma_ok) and all(fma_ok),
        "nofma_kernel_is_plain_chain": bool(plain_ok) and all(plain_ok),
        "fma_changes_bits": all(fma_differs),
        "atomic_varies": s["variants"]["each_atomic"]["distinct"] > 1,
        "torch_sum_repeatable": s["variants"]["torch_sum"]["distinct"] == 1,
    }
    part.claims.update({k: CLAIMS[k].claim(v) for k, v in decided.items()})
    part.observations["cublas_equals_naive"] = OBSERVATIONS["cublas_equals_naive"].observe(
        {r.n: r.cublas_is_naive_fma for r in table},
        f"{label}; cuBLAS picks its kernel by shape and card",
    )
    part.observations["block_atomic_distinct"] = OBSERVATIONS["block_atomic_distinct"].observe(
        f"{s['variants']['block_atomic']['distinct']} in {s['runs']} runs", label
    )
    part.data = CudaData(kind, banner, label, table, [row for row, _ in sums])
    return part
