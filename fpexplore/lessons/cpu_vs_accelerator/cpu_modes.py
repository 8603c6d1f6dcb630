"""Two CPU-side causes the articles name for CPU/accelerator differences, measured live.

- Flush to zero (FTZ/DAZ): ``torch.set_flush_denormal(True)`` sets the calling thread's
  MXCSR, so float32 results that would be subnormal become zero (FTZ) and subnormal inputs
  read as zero (DAZ), as GPU kernels built with ``-ftz=true`` do. Every product and sum of the
  battery is exact in float64, so the truth is that value rounded once to float32.
- Fallback kernels: torch has no float16/bfloat16 accumulator on the CPU, so a half-precision
  sum runs the float32 loop and rounds once; a strided (non-contiguous) float32 sum takes the
  strided loop, which adds in another order than the contiguous one.

The flag is restored in a ``finally`` whatever happens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...judging import DEPENDS, FAILS, HOLDS, NotMeasured, Verdicts, claim, decide
from .._base import declare_texts
from .._gpu.subnormals import SEEDS, TINY, exact
from .._gpu.subnormals import battery as _battery

SUM_N = 8193  # values in each fallback sum (odd: no lane count divides it)
PARALLEL_N = 1 << 20  # long enough to be split over intra-op threads

_TEST = "tests/test_cpu_modes.py"
CLAIMS = declare_texts(
    {
        "ftz_flushes_subnormals": "with torch.set_flush_denormal(True) every float32 result "
        "whose exact value is subnormal, and every result read from a subnormal input, is a "
        "zero of the same sign; every other result keeps its bits",
        "ftz_default_exact": "with the flag off (the default) the same products and sums are "
        "the exact value rounded once to float32, subnormals included",
        "half_sum_upcasts": "torch's CPU float16 and bfloat16 sums have no half-precision "
        "kernel: they equal the float32 sum rounded once, bit for bit",
    },
    ("torch",),
    test=_TEST,
)
CUDA_CLAIMS = declare_texts(
    {
        "cuda_ftz_flushes": "a CUDA kernel built with nvcc -ftz=true flushes the same battery "
        "as the CPU flag does, and the default build gives the correctly rounded results",
    },
    ("cuda ftz record",),
    applies="CUDA devices (from the recorded run of fpexplore record cuda-kernels)",
    test=_TEST,
)
OBSERVATIONS = declare_texts(
    {
        "ftz_per_thread": "set_flush_denormal sets the calling thread's flag only: an op split "
        "over intra-op threads flushes some of its outputs",
        "strided_sum_differs": "a strided float32 sum and the sum of its contiguous copy give "
        "other bits",
    },
    ("torch",),
    test=_TEST,
)


@dataclass(frozen=True)
class Flush:
    """The FTZ battery: inputs, exact values and both modes' float32 results."""

    a: np.ndarray  # float32 left operands
    b: np.ndarray  # float32 right operands ("+" rows: summands)
    op: np.ndarray  # "*" or "+" per row
    exact: np.ndarray  # float64, exact
    default: np.ndarray  # float32, flag off
    flushed: np.ndarray  # float32, flag on
    parallel_flushed: int  # of PARALLEL_N subnormal inputs x * 1, flag on, two threads
    parallel_n: int


@dataclass(frozen=True)
class Fallback:
    """Half-precision and strided sums, by seed."""

    #: per format, per seed: (torch's sum, the float32 sum rounded, torch's error and the
    #: half-format loop's error in ULPs of the exact sum)
    half: dict[str, list[tuple[float, float, float, float]]]
    strided_differ: list[bool]  # per seed: strided sum != contiguous copy's
    strided_err: list[tuple[float, float]]  # per seed: (strided, contiguous) - exact, float32 ULP


def _torch_ops(torch: Any, a: np.ndarray, b: np.ndarray, op: np.ndarray) -> np.ndarray:
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    out = torch.where(torch.from_numpy(op == "*"), ta * tb, ta + tb)
    return out.clone().numpy()  # bits only: no float arithmetic reads them under the flag


def flush_run(torch: Any, seeds: tuple[int, ...] = SEEDS) -> Flush:
    """Both modes on the calling thread (the battery is far below torch's grain size), then a
    long op split over two threads. The thread pool is started with the flag off (new threads
    copy the creating thread's flag), and the flag is restored in every case."""
    a, b, op = (np.concatenate(x) for x in zip(*map(_battery, seeds), strict=True))
    n = torch.get_num_threads()
    was = _flag_now(torch)
    x = torch.full((PARALLEL_N,), 2.0**-130)
    try:
        torch.set_flush_denormal(False)
        torch.set_num_threads(2)
        x * 1.0  # starts the pool's threads without the flag
        default = _torch_ops(torch, a, b, op)
        torch.set_flush_denormal(True)
        flushed = _torch_ops(torch, a, b, op)
        y = (x * 1.0).clone()
    finally:
        torch.set_flush_denormal(was)
        torch.set_num_threads(n)
    return Flush(a, b, op, exact(a, b, op), default, flushed, int((y == 0).sum()), PARALLEL_N)


def _flag_now(torch: Any) -> bool:
    """Whether this thread flushes now: a subnormal times one comes out zero."""
    return bool(float((torch.tensor([2.0**-130]) * 1.0)[0]) == 0.0)


def _subnormal(x: np.ndarray) -> np.ndarray:
    """Where ``x`` is nonzero and below the smallest normal float32 in magnitude."""
    return (np.abs(x) < TINY) & (x != 0)


def _bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def check_flush(f: Flush) -> tuple[bool, bool, dict[str, int]]:
    """(the flushed results are as FTZ/DAZ says, the default ones are correctly rounded, counts
    of rows by what happened)."""
    rounded = f.exact.astype(np.float32)
    sub_in, sub_out = _subnormal(f.a) | _subnormal(f.b), _subnormal(rounded) | _subnormal(f.exact)
    touched = sub_in | sub_out
    nan = np.isnan(f.exact)
    zero = _bits(np.copysign(np.float32(0), rounded))
    same_as_rounded = (_bits(f.default) == _bits(rounded)) | (nan & np.isnan(f.default))
    # under DAZ a subnormal operand reads as a zero of its sign: recompute from those zeros
    da, db = (np.where(_subnormal(x), np.copysign(0, x), x).astype(np.float32) for x in (f.a, f.b))
    dazed = exact(da, db, f.op).astype(np.float32)
    dazed_flushed = np.where(_subnormal(dazed), np.copysign(np.float32(0), dazed), dazed)
    want = np.where(sub_in, _bits(dazed_flushed), np.where(sub_out, zero, _bits(rounded)))
    ftz_ok = (_bits(f.flushed) == want) | (nan & np.isnan(f.flushed))
    counts = {
        "rows": int(f.exact.size),
        "touched": int(touched.sum()),
        "flushed to zero": int((touched & (f.flushed == 0) & (f.exact != 0)).sum()),
        "unchanged": int((~touched & (_bits(f.flushed) == _bits(f.default))).sum()),
    }
    return bool(ftz_ok.all()), bool(same_as_rounded.all()), counts


def round_to(x: float, bits: int) -> float:
    """``x`` rounded to ``bits`` significant bits, ties to even (no subnormals here)."""
    m, e = math.frexp(x)
    return math.ldexp(round(math.ldexp(m, bits)), e - bits)


#: significant bits of the half formats
HALF_BITS = {"float16": 11, "bfloat16": 8}


def half_loop(values: np.ndarray, bits: int) -> float:
    """A sum accumulated in the half format itself: each partial sum rounded to ``bits``."""
    s = 0.0
    for v in values.tolist():
        s = round_to(s + v, bits)
    return s


def fallback_run(torch: Any, seeds: tuple[int, ...] = SEEDS) -> Fallback:
    """Half sums against the float32 route, the exact sum and a half-format loop; strided
    float32 sums against their contiguous copies."""
    from ... import formats

    n = torch.get_num_threads()
    half: dict[str, list[tuple[float, float, float, float]]] = {k: [] for k in HALF_BITS}
    differ, err = [], []
    try:
        torch.set_num_threads(1)
        for s in seeds:
            g = np.random.Generator(np.random.PCG64(s))
            base = g.random(SUM_N).astype(np.float32)
            for name, bits in HALF_BITS.items():
                x = torch.from_numpy(base).to(getattr(torch, name))
                values = x.float().numpy()
                e = math.fsum(values.astype(np.float64).tolist())
                u = float(formats.ulp(e, name))
                got, route = float(x.sum()), float(x.float().sum().to(x.dtype))
                loop = half_loop(values, bits)
                half[name].append((got, route, (got - e) / u, (loop - e) / u))
            wide = torch.from_numpy(g.random(2 * SUM_N).astype(np.float32))
            strided = wide[::2]
            copy = strided.contiguous()
            e = math.fsum(copy.numpy().astype(np.float64).tolist())
            u = float(formats.ulp(e, "float32"))
            a, c = float(strided.sum()), float(copy.sum())
            differ.append(a != c)
            err.append(((a - e) / u, (c - e) / u))
    finally:
        torch.set_num_threads(n)
    return Fallback(half, differ, err)


def check_half(fb: Fallback) -> bool:
    """Every half sum has its float32 route's bits and is within one ULP of the exact sum."""
    return all(t == r and abs(eu) <= 1 for rows in fb.half.values() for t, r, eu, _ in rows)


def claims_and_data(torch: Any) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The claims, observations and data of both parts, measured live."""
    f = flush_run(torch)
    fb = fallback_run(torch)
    ftz_ok, default_ok, counts = check_flush(f)
    errs = [abs(r[2]) for rows in fb.half.values() for r in rows]
    loops = {k: max(abs(r[3]) for r in rows) for k, rows in fb.half.items()}
    claims = {
        "ftz_flushes_subnormals": CLAIMS["ftz_flushes_subnormals"].claim(
            ftz_ok,
            f" ({counts['touched']} of {counts['rows']} rows over {len(SEEDS)} seeds touch a "
            f"subnormal: {counts['flushed to zero']} became zero; {counts['unchanged']} others "
            "unchanged; −0.0 and NaN kept)",
        ),
        "ftz_default_exact": CLAIMS["ftz_default_exact"].claim(default_ok),
        "half_sum_upcasts": CLAIMS["half_sum_upcasts"].claim(
            check_half(fb),
            f" ({SUM_N} uniform values, {len(SEEDS)} seeds): at most {max(errs):.3g} ULP from "
            f"the exact sum, where a loop accumulating in the half format is up to "
            f"{loops['float16']:.0f} ULP off in float16 and {loops['bfloat16']:.0f} in bfloat16",
        ),
    }
    observations = {
        "ftz_per_thread": OBSERVATIONS["ftz_per_thread"].observe(
            f.parallel_flushed < f.parallel_n,
            f"two intra-op threads: {f.parallel_flushed} of {f.parallel_n} outputs flushed",
        ),
        "strided_sum_differs": OBSERVATIONS["strided_sum_differs"].observe(
            sum(fb.strided_differ),
            "errors (strided, contiguous) in float32 ULP: "
            + ", ".join(f"({s:.2f}, {c:.2f})" for s, c in fb.strided_err),
            f" (in {sum(fb.strided_differ)} of {len(SEEDS)} seeds, {SUM_N} values)",
        ),
    }
    cuda_claims, cuda_missing, cuda_counts = cuda_part()
    claims.update(cuda_claims)
    data = {"flush": f, "fallback": fb, "counts": counts, "cuda_counts": cuda_counts}
    return claims, observations, data | {"cuda_missing": cuda_missing}


def cuda_from_record(data: dict[str, Any]) -> Flush:
    """The recorded FTZ experiment as a `Flush` (the battery rebuilt here from its seeds)."""
    ftz = data["experiments"]["ftz"]
    a, b, op = (np.concatenate(x) for x in zip(*map(_battery, ftz["seeds"]), strict=True))
    if a.size != ftz["n"]:
        raise ValueError(f"the record's battery has {ftz['n']} rows, this one {a.size}")
    got = {k: np.asarray(v["bits"], np.uint32).view(np.float32) for k, v in ftz["builds"].items()}
    return Flush(a, b, op, exact(a, b, op), got["default"], got["ftz"], 0, 1)


def cuda_part() -> tuple[dict[str, Any], str | None, dict[str, int] | None]:
    """The CUDA claim from the newest kernel record: (claims, why it is missing, counts)."""
    from ...errors import RecordError
    from ..libtorch_vs_pytorch import cuda_kernels

    try:
        path, data = cuda_kernels.load()
    except RecordError as exc:
        return {}, str(exc), None
    if "ftz" not in data["experiments"]:
        return (
            {},
            f"{path.name} has no FTZ builds. Fix: {cuda_kernels.RECORD_FIX}",
            None,
        )
    f = cuda_from_record(data)
    ftz_ok, default_ok, counts = check_flush(f)
    card = data["provenance"]["gpu_name"]
    claims = {
        "cuda_ftz_flushes": CUDA_CLAIMS["cuda_ftz_flushes"].claim(
            ftz_ok and default_ok,
            f" ({card}, recorded: {counts['flushed to zero']} of {counts['touched']} "
            f"subnormal-touching results zero with -ftz=true)",
        )
    }
    return claims, None, counts


def judge_ftz(c: Any) -> Verdicts:
    """Myth: flushing subnormals to zero changes float32 results."""
    d = getattr(c.data, "cpu_modes", None)
    if d is None:
        raise NotMeasured("the cpu_vs_accelerator run has no flush-to-zero battery")
    flushed = claim(c, "ftz_flushes_subnormals")
    exact_default = claim(c, "ftz_default_exact")
    n = d["counts"]
    try:
        cuda = claim(c, "cuda_ftz_flushes")
        g = d["cuda_counts"]
        on_cuda = f"; CUDA -ftz=true (recorded): {g['flushed to zero']} of {g['touched']} zero"
    except NotMeasured as exc:
        cuda, on_cuda = True, f"; CUDA: {exc}"
    return decide(
        f"CPU: {n['flushed to zero']} of {n['touched']} subnormal-touching float32 results "
        f"became zero with the flag on; {n['rows'] - n['touched']} others kept their bits"
        + on_cuda,
        (
            flushed and exact_default and cuda,
            HOLDS,
            "for results or inputs below 2**-126 only: with FTZ/DAZ they become zeros (a "
            "relative error of 100%), where the default gives the correctly rounded subnormal; "
            "every other result keeps its bits",
        ),
        otherwise=(DEPENDS, "the flag did not flush every subnormal result here"),
    )


def judge_fallback(c: Any) -> Verdicts:
    """Myth: ops falling back to other kernels (no kernel for a dtype or layout) change
    results."""
    d = getattr(c.data, "cpu_modes", None)
    if d is None:
        raise NotMeasured("the cpu_vs_accelerator run has no fallback measurements")
    upcast = claim(c, "half_sum_upcasts")
    fb: Fallback = d["fallback"]
    k = sum(fb.strided_differ)
    worst = max((abs(e) for pair in fb.strided_err for e in pair), default=float("nan"))
    number = (
        f"float16/bfloat16 sums = float32 sums rounded once in {len(SEEDS)} of {len(SEEDS)} "
        f"seeds; strided vs contiguous float32 sum: other bits in {k} of "
        f"{len(fb.strided_differ)} seeds, both within {worst:.2g} ULP of the exact sum"
    )
    return decide(
        number,
        (
            upcast and k > 0,
            DEPENDS,
            "on the fallback: a half-precision sum falls back to the float32 loop and rounds "
            "once (the float32 route's bits, closer to the exact sum than a half-precision "
            "loop); a strided input falls back to the strided loop, which adds in another "
            "order, so its bits change for some inputs",
        ),
        (upcast and k == 0, FAILS, "neither fallback changed a bit on these inputs"),
        otherwise=(HOLDS, "a half sum did not take the float32 route's bits"),
    )
