"""Memory layout and association order, judged on several seeds with torch: the same values at
other storage offsets and strides (claim 22), and a residual block added in two orders against
the exact result (claim 24).

Alignment is two stories on the CPU. ATen's own loops never depend on it. torch's BLAS calls
(dot, mv, mm) go to MKL on x86 wheels, and whether MKL's bits depend on it is a property of the
CPU: on AMD EPYCs (shipped machine records) they do, on Intel AVX-512 CPUs they do not. So that
is an observation with its numbers, beside the shipped machine records (`fleet`), and the
universal claim is MKL's strict mode. On CUDA (from the GPU myths record, `cuda_offsets`) a
sum's vectorized loads need aligned data, so an offset can change its bits."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ...result import Claim, Observation
from ...result.spec import declare_texts
from ...truth import matmul

SEEDS = 3
SIZES = (1, 7, 100, 1027)
OFFSETS = range(1, 9)  # elements: 4 to 32 bytes away from the aligned start
D, H = 32, 64  # residual block: features, hidden units

TEXTS = {
    "aten_offset_same_bits": (
        "the same values at another storage offset (alignment) give the "
        "same bits in ATen's own CPU loops: sum, exp and gelu",
        ": float32 values at storage offsets "
        "of 1 to 8 elements (4 to 32 bytes off the aligned start) give an aligned copy's bits in "
        "{same} of {total} cases ({where}): ATen's vectorized loops load unaligned and count from "
        "the first element, so alignment moves nothing there",
    ),
    "cbwr_strict_offset_same_bits": (
        "under MKL_CBWR=AUTO,STRICT (MKL's strict conditional "
        "numerical reproducibility) torch.dot, torch.mv and torch.mm give the same bits at every "
        "storage offset",
        ": at offsets of 1 to 8 elements an aligned copy's bits in {same} of "
        "{every} cases ({where}; a fresh process, as MKL reads the mode when it loads)",
    ),
    "strides_change_bits": (
        "a strided view gives other bits than its contiguous copy: reductions "
        "and some elementwise ops take another loop",
        ": gelu of a stride-2 view differs from gelu of "
        "its contiguous copy in {elem} of {elem_n} values (a non-contiguous input takes the scalar "
        "loop, whose erf rounds differently from the vectorized one; a one-element tensor too: "
        "{single} of {single_n}), and summing the rows of a transposed view differs from summing "
        "its contiguous copy in {sums} of {sums_n} sums (another reduction order)",
    ),
    "residual_orders_differ": (
        "a residual block's x + (h W + b) and (x + b) + h W differ in some bits",
        ": x + (h·Wᵀ + b) (torch's Linear, then the skip) and (x + b) + h·Wᵀ (addmm onto "
        "the skip) differ in {differ} of {total} float32 outputs ({seeds} seeds)",
    ),
    "residual_orders_bounded": (
        "both residual orders stay inside the float32 rounding bound of the exact result",
        ": (H + 2)·u·(|x| + |b| + Σ|h||w|) (worst: {worst:.3g} of the bound): "
        "neither order is wrong, they round at different places",
    ),
}
#: what alignment does to torch's BLAS calls depends on the library and the CPU: an observation
OBSERVED = {
    "blas_offset_bits": "torch.dot, torch.mv and torch.mm (torch's BLAS) at storage offsets of "
    "1 to 8 elements: cases whose bits differ from an aligned copy's",
}
#: the environment under which MKL promises alignment-independent bits (`strict_offsets`)
STRICT_ENV = {"MKL_CBWR": "AUTO,STRICT"}
#: the first seed of the strict-mode check (`strict_offsets`), whatever the lesson's seed: MKL's
#: mode is what it checks, not the data, and every run shares one fresh process (and its reply)
STRICT_SEED = 0


@dataclass(frozen=True)
class Layout:
    """Storage offsets and strides against an aligned, contiguous copy (`layout`)."""

    offset_same: int  # cases where an offset view gave the copy's bits (ATen's own loops)
    offset_tried: int
    gelu_strided_differ: int  # gelu values of a stride-2 view that differ from its copy's
    gelu_strided_n: int
    #: torch's BLAS calls (dot, mv, mm): cases whose bits differ at an offset, by op, of
    #: ``blas_tried``
    blas_differ: dict[str, int] = field(default_factory=dict)
    blas_tried: int = 0  # cases per op
    blas: str = ""  # the library and CPU behind them, in words
    #: the same BLAS cases in a fresh process under `STRICT_ENV` (None: not measured)
    strict_differ: int | None = None
    #: the shipped machine records (`fpexplore.machines`): machine -> (BLAS offset cases that
    #: differ, or None where not recorded; the strict-CBWR claim's state)
    fleet: dict[str, tuple[int | None, str]] = field(default_factory=dict)
    #: CUDA from the GPU myths record: sum/dot/mv/mm cases that differ at an offset (empty: no
    #: record), of ``cuda_tried`` per op, on ``cuda_card`` (or how to record it)
    cuda_differ: dict[str, int] = field(default_factory=dict)
    cuda_tried: int = 0
    cuda_card: str = ""


@dataclass(frozen=True)
class Residual:
    """A residual block added in two association orders (`layout.residual_claims`)."""

    differ: int  # float32 outputs whose bits differ between the orders
    total: int
    worst_of_bound: float  # the largest error, as a fraction of the rounding bound


#: ATen's own CPU loops
_OPS: dict[str, Any] = {
    "sum": lambda t, a: t.sum(a),
    "exp": lambda t, a: t.exp(a),
    "gelu": lambda t, a: t.nn.functional.gelu(a),
}
#: calls torch hands to its BLAS (MKL on x86 wheels): a dot product, a 1×n matrix-vector
#: product, and an 8×n by n×8 matrix product (``a`` holds `MM_ROWS`·n values)
BLAS_OPS: dict[str, Any] = {
    "dot": lambda t, a: t.dot(a, a),
    "mv": lambda t, a: t.mv(a.reshape(1, -1), a),
    "mm": lambda t, a: t.mm(a.reshape(MM_ROWS, -1), a.reshape(MM_ROWS, -1).t()),
}
MM_ROWS = 8
#: what each op reads at an offset: n values, or `MM_ROWS` rows of n
_ROWS = {"mm": MM_ROWS}
#: the ops recorded on CUDA (`cuda_offsets`): ATen's sum beside the BLAS calls (cuBLAS there)
CUDA_OPS: dict[str, Any] = {"sum": _OPS["sum"], **BLAS_OPS}


def _bits(a: Any) -> bytes:
    return np.ascontiguousarray(a.detach().cpu().numpy()).tobytes()


def _base(torch: Any, s: int, rows: int = 1) -> Any:
    base = np.random.Generator(np.random.PCG64(s)).standard_normal(rows * 2048 + 16) * 3
    return torch.from_numpy(base.astype(np.float32))


def offset_differ(
    torch: Any, seed: int, ops: dict[str, Any], device: str = "cpu"
) -> tuple[dict[str, int], int]:
    """For each of ``ops``: in how many cases the same values at storage offsets `OFFSETS`
    (sizes `SIZES`, `SEEDS` seeds) on ``device`` give other bits than an aligned copy; and the
    cases per op."""
    differ = dict.fromkeys(ops, 0)
    tried = 0
    for s in range(seed, seed + SEEDS):
        bases = {r: _base(torch, s, r).to(device) for r in {1, *_ROWS.values()}}
        for n in SIZES:
            for off in OFFSETS:
                tried += 1
                for name, op in ops.items():
                    rows = _ROWS.get(name, 1)
                    view = bases[rows][off : off + rows * n]  # 4·off bytes from the start
                    copy = view.clone()  # a fresh, aligned allocation
                    differ[name] += _bits(op(torch, view)) != _bits(op(torch, copy))
    return differ, tried


def cuda_offsets(torch: Any, seed: int = 0, device: str = "cuda") -> dict[str, Any]:
    """`offset_differ` of `CUDA_OPS` on a CUDA device, JSON-ready (for the GPU myths record)."""
    differ, tried = offset_differ(torch, seed, CUDA_OPS, device)
    return {"seed": seed, "sizes": list(SIZES), "seeds": SEEDS, "differ": differ, "tried": tried}


def fleet() -> dict[str, tuple[int | None, str]]:
    """Each shipped machine record's BLAS offset observation (cases that differ) and the state
    of its strict-CBWR claim (`fpexplore.machines`); {} where none can be read."""
    from ... import machines

    found, _why = machines.try_load_all()
    out: dict[str, tuple[int | None, str]] = {}
    for m in found:
        value: int | None = None
        state = "absent"
        for run in m.runs:
            if run["lesson"] != "summation_order":
                continue
            seen = (run.get("observations") or {}).get("blas_offset_bits")
            strict = run["claims"].get("cbwr_strict_offset_same_bits")
            if value is None and isinstance(seen, dict):
                v = str(seen.get("value", ""))  # records keep observed values as text
                value = int(v) if v.isdigit() else None
            if state == "absent" and isinstance(strict, dict):
                state = str(strict.get("state", "absent"))
        if value is not None or state != "absent":
            out[m.name] = (value, state)
    return out


def blas_name(torch: Any) -> str:
    """torch's BLAS and the CPU it runs on, in words (MKL picks its code path by CPU vendor)."""
    from ...probe.cpu import cpu_model

    mkl = bool(torch.backends.mkl.is_available())
    lib = "MKL" if mkl else "torch's BLAS (no MKL in this build)"
    cbwr = os.environ.get("MKL_CBWR")
    return f"{lib}{f' (MKL_CBWR={cbwr})' if mkl and cbwr else ''} on {cpu_model()}"


#: the part the strict-CBWR claim needs beside torch (`strict_missing` says why it is missing)
STRICT_PART = "MKL as torch's BLAS"
#: the layout claims: each needs torch, the strict one MKL as torch's BLAS too
CLAIMS = declare_texts(
    TEXTS,
    ("torch",),
    {"cbwr_strict_offset_same_bits": ("torch", STRICT_PART)},
    test="tests/test_summation_order.py",
)


def strict_missing(torch: Any) -> str | None:
    """Why the strict-CBWR claim cannot be checked with this torch (None: it can)."""
    if torch.backends.mkl.is_available():
        return None
    return (
        f"{STRICT_PART} is missing: this torch build has no MKL (ARM and macOS wheels use "
        "other BLAS libraries). Fix: run on an x86-64 machine with torch from PyPI"
    )


def blas_offsets(seed: int) -> dict[str, int]:
    """`offset_differ` of `BLAS_OPS` with this process's torch (what `strict_offsets` runs)."""
    from ... import backends

    return offset_differ(backends.load("torch"), seed, BLAS_OPS)[0]


def strict_offsets(seed: int) -> int:
    """`blas_offsets` (all ops together) in a fresh interpreter under `STRICT_ENV`: MKL reads
    ``MKL_CBWR`` once, when it loads, so it cannot be set here."""
    from ...dispatch.fresh import call

    return sum(call(f"{__package__}.blas_worker", [int(seed)], STRICT_ENV).values())


def layout_claims(
    torch: Any, seed: int, strict: bool = True
) -> tuple[dict[str, Claim], dict[str, Observation], Layout]:
    """The offset and stride claims and the BLAS observation (``strict``: also decide the
    strict-CBWR claim, in a fresh process where MKL is torch's BLAS)."""
    single = single_tried = 0
    strided_elem = strided_sum = strided_n = 0
    gelu = torch.nn.functional.gelu
    aten, tried = offset_differ(torch, seed, _OPS)
    blas, _ = offset_differ(torch, seed, BLAS_OPS)
    for s in range(seed, seed + SEEDS):
        t = _base(torch, s)
        # elementwise on one element (scalar loop) vs the same value inside a long tensor
        full = gelu(t).numpy()
        for i in range(64):
            single_tried += 1
            single += gelu(t[i : i + 1]).numpy()[0].tobytes() != full[i].tobytes()
        # strides: every second element, and a transposed matrix
        strided = t[:2048:2]
        strided_elem += int((gelu(strided) != gelu(strided.contiguous())).sum().item())
        strided_n += strided.numel()
        m = t[:2048].reshape(32, 64).t()
        strided_sum += int((m.sum(1) != m.contiguous().sum(1)).sum().item())
    total = tried * len(_OPS)
    same = total - sum(aten.values())
    strict_differ = strict_offsets(STRICT_SEED) if strict and not strict_missing(torch) else None
    where = f"sizes {', '.join(map(str, SIZES))}, {SEEDS} seeds"
    claims = {
        "aten_offset_same_bits": CLAIMS["aten_offset_same_bits"].claim(
            same == total, same=same, total=total, where=where
        ),
        "strides_change_bits": CLAIMS["strides_change_bits"].claim(
            strided_elem > 0 and strided_sum > 0,
            elem=strided_elem,
            elem_n=strided_n,
            single=single,
            single_n=single_tried,
            sums=strided_sum,
            sums_n=SEEDS * 64,
        ),
    }
    if strict_differ is not None:
        every = len(BLAS_OPS) * tried
        strict_where = f"sizes {', '.join(map(str, SIZES))}, seeds {STRICT_SEED} to {SEEDS - 1}"
        claims["cbwr_strict_offset_same_bits"] = CLAIMS["cbwr_strict_offset_same_bits"].claim(
            strict_differ == 0, same=every - strict_differ, every=every, where=strict_where
        )
    name = blas_name(torch)
    observed = {
        "blas_offset_bits": Observation(
            OBSERVED["blas_offset_bits"]
            + f" ({name}; {where}): "
            + ", ".join(f"{op} {k}" for op, k in blas.items())
            + f" of {tried} each; in all, of {len(blas) * tried}",
            sum(blas.values()),
            "MKL picks its kernels by CPU, and on some (AMD EPYCs among the shipped machines) "
            "its dot, gemv and gemm results depend on where the array starts in "
            "memory; MKL documents aligned data as a condition of reproducible results unless "
            "a strict CBWR mode is set",
        )
    }
    from .._gpu import myth_record

    cuda = myth_record.recorded()
    offsets = cuda["offsets"] if cuda is not None else {}
    found = Layout(
        same,
        total,
        strided_elem,
        strided_n,
        blas,
        tried,
        name,
        strict_differ,
        fleet=fleet(),
        cuda_differ=dict(offsets.get("differ", {})),
        cuda_tried=int(offsets.get("tried", 0)),
        cuda_card=myth_record.where(cuda) if cuda is not None else myth_record.NO_RECORD,
    )
    return claims, observed, found


#: float arrays to exact Fractions, element by element
_fractions = np.vectorize(lambda v: Fraction(float(v)), otypes=[object])


def residual_claims(torch: Any, seed: int) -> tuple[dict[str, Claim], Residual]:
    differ = total = 0
    worst, inside = 0.0, True
    u = 2.0**-24
    for s in range(seed, seed + SEEDS):
        g = np.random.Generator(np.random.PCG64([s, 24]))
        x = g.standard_normal((8, D)).astype(np.float32)
        h = np.maximum(g.standard_normal((8, H)), 0).astype(np.float32)  # post-ReLU hidden
        w = (g.standard_normal((D, H)) / np.sqrt(H)).astype(np.float32)
        b = (g.standard_normal(D) * 0.1).astype(np.float32)
        xt, ht, wt, bt = (torch.from_numpy(a) for a in (x, h, w, b))
        a = (xt + torch.nn.functional.linear(ht, wt, bt)).numpy()  # x + (h Wᵀ + b)
        c = torch.addmm(xt + bt, ht, wt.t()).numpy()  # (x + b) + h Wᵀ
        differ += int((a.view(np.uint32) != c.view(np.uint32)).sum())
        total += a.size
        exact = _fractions(x) + _fractions(b) + matmul(h, np.ascontiguousarray(w.T)).exact
        mag = np.abs(x) + np.abs(b) + np.abs(h).astype(np.float64) @ np.abs(w.T).astype(np.float64)
        bound = (H + 2) * u * mag  # every addition and product rounds once, relative to |terms|
        for y in (a, c):
            err = np.abs((_fractions(y) - exact).astype(np.float64))
            inside &= bool((err <= bound).all())
            worst = max(worst, float((err / bound).max()))
    claims = {
        "residual_orders_differ": CLAIMS["residual_orders_differ"].claim(
            differ > 0, differ=differ, total=total, seeds=SEEDS
        ),
        "residual_orders_bounded": CLAIMS["residual_orders_bounded"].claim(inside, worst=worst),
    }
    return claims, Residual(differ, total, worst)
