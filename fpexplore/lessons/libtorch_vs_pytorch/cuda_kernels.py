"""Custom CUDA kernels, compiled with nvcc, against cuBLAS, torch.sum and the exact result.

Kernels (`KERNELS_CU`, built with ``torch.utils.cpp_extension.load_inline``):

- ``mm_naive``: one thread per output, ``acc += a[i, p] * b[p, j]`` for p = 0..k-1 in float32;
  nvcc's defaults (``-fmad=true``) make every step a fused multiply-add, while the ``nofma``
  variant uses ``__fmul_rn``/``__fadd_rn`` (never contracted).
- ``sum_atomic``: every thread ``atomicAdd``s its element (mode 0), or each block sums its 256
  elements by a shared-memory tree and ``atomicAdd``s the partial (mode 1), in whatever order
  the threads arrive.
- ``mul_add`` (`FTZ_CU`), built twice: with nvcc's defaults and with ``-ftz=true``, on the
  subnormal battery of `_gpu.subnormals` (products and sums that touch
  subnormals); the record keeps both builds' bits (``experiments.ftz``).

`fma_chain` and `plain_chain` emulate the naive kernel on the CPU bit for bit. `record`
(``fpexplore record cuda-kernels [--out DIR] [--quick]``) writes
``data/gpu/cuda_kernels/<card>-<torch>.json``. Needs numpy, mpmath and fpexplore's
truth/metrics only (and torch to run), so it runs on a bare CUDA machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from ... import backends, metrics, truth
from ...errors import RecordError
from ...paths import data_dir
from .._gpu.common import digest, say, timed  # digest: every array here is float32
from .._gpu.small_records import header, newest_dated

FORMAT = "fpexplore-cuda-kernels"
VERSION = 1
SEED = 0
MM_SIZES = (64, 256, 1024)
MM_FULL_TRUTH = 256  # sizes up to this are measured and emulated in full; larger, TRUTH_ROWS
TRUTH_ROWS = 16
BITS_UP_TO = 64  # sizes whose output bits are stored in full
SUM_N = 1 << 20
RUNS = 20
RECORD_COMMAND = "fpexplore record cuda-kernels"
RECORD_FIX = f"{RECORD_COMMAND}   (on a machine with a CUDA GPU and nvcc)"
CUDA_FLAGS = ("-O3",)

KERNELS_CU = r"""
#include <torch/extension.h>

__global__ void mm_naive_fma(const float* a, const float* b, float* c, int n, int k, int m) {
  int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && j < m) {
    float acc = 0.0f;
    for (int p = 0; p < k; ++p) acc += a[i * k + p] * b[p * m + j];  // nvcc: fmaf(a, b, acc)
    c[i * m + j] = acc;
  }
}

__global__ void mm_naive_nofma(const float* a, const float* b, float* c, int n, int k, int m) {
  int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && j < m) {
    float acc = 0.0f;
    for (int p = 0; p < k; ++p) acc = __fadd_rn(acc, __fmul_rn(a[i * k + p], b[p * m + j]));
    c[i * m + j] = acc;
  }
}

__global__ void sum_each_atomic(const float* x, float* out, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}

__global__ void sum_block_atomic(const float* x, float* out, long n) {
  __shared__ float s[256];
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

torch::Tensor mm_naive(torch::Tensor a, torch::Tensor b, bool fma) {
  TORCH_CHECK(a.is_cuda() && b.is_cuda());
  TORCH_CHECK(a.dtype() == torch::kFloat32 && b.dtype() == torch::kFloat32);
  a = a.contiguous(); b = b.contiguous();
  int n = a.size(0), k = a.size(1), m = b.size(1);
  auto c = torch::empty({n, m}, a.options());
  dim3 block(16, 16), grid((m + 15) / 16, (n + 15) / 16);
  const float *pa = a.data_ptr<float>(), *pb = b.data_ptr<float>();
  float* pc = c.data_ptr<float>();
  if (fma) mm_naive_fma<<<grid, block>>>(pa, pb, pc, n, k, m);
  else mm_naive_nofma<<<grid, block>>>(pa, pb, pc, n, k, m);
  return c;
}

torch::Tensor sum_atomic(torch::Tensor x, int64_t mode) {
  TORCH_CHECK(x.is_cuda() && x.dtype() == torch::kFloat32);
  x = x.contiguous();
  long n = x.numel();
  auto out = torch::zeros({}, x.options());
  int threads = 256; long blocks = (n + threads - 1) / threads;
  const float* px = x.data_ptr<float>();
  float* po = out.data_ptr<float>();
  if (mode == 0) sum_each_atomic<<<blocks, threads>>>(px, po, n);
  else sum_block_atomic<<<blocks, threads>>>(px, po, n);
  return out;
}
"""
#: one elementwise product or sum per element (op 1: a * b, op 0: a + b), built with nvcc's
#: defaults and with -ftz=true (`FTZ_BUILDS`)
FTZ_CU = r"""
#include <torch/extension.h>

__global__ void mul_add_k(const float* a, const float* b, const int* op, float* c, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = op[i] ? __fmul_rn(a[i], b[i]) : __fadd_rn(a[i], b[i]);
}

torch::Tensor mul_add(torch::Tensor a, torch::Tensor b, torch::Tensor op) {
  TORCH_CHECK(a.is_cuda() && a.dtype() == torch::kFloat32 && op.dtype() == torch::kInt32);
  a = a.contiguous(); b = b.contiguous(); op = op.contiguous();
  long n = a.numel();
  auto c = torch::empty_like(a);
  mul_add_k<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                      op.data_ptr<int>(), c.data_ptr<float>(), n);
  return c;
}
"""
FTZ_BUILDS = {"default": CUDA_FLAGS, "ftz": (*CUDA_FLAGS, "-ftz=true")}

KERNELS_CPP = (
    "torch::Tensor mm_naive(torch::Tensor a, torch::Tensor b, bool fma);\n"
    "torch::Tensor sum_atomic(torch::Tensor x, int64_t mode);\n"
)

MM_VARIANTS = {
    "naive_fma": "naive kernel, nvcc defaults (acc += a*b contracted to FMA)",
    "naive_nofma": "naive kernel, __fmul_rn/__fadd_rn (no FMA)",
    "cublas": "torch.mm (cuBLAS), TF32 off",
}
SUM_VARIANTS = {
    "each_atomic": "every thread atomicAdds its element",
    "block_atomic": "256-element shared-memory trees, one atomicAdd per block",
    "torch_sum": "torch.sum (CUDA)",
}


def mm_inputs(n: int, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng([seed, n])
    return (
        gen.standard_normal((n, n), dtype=np.float32),
        gen.standard_normal((n, n), dtype=np.float32),
    )


def sum_input(n: int = SUM_N, seed: int = SEED) -> np.ndarray:
    return np.random.default_rng([seed, n, 1]).standard_normal(n, dtype=np.float32)


def truth_rows(n: int, seed: int = SEED) -> list[int]:
    """Rows whose exact products are computed: all up to MM_FULL_TRUTH, else TRUTH_ROWS."""
    if n <= MM_FULL_TRUTH:
        return list(range(n))
    gen = np.random.default_rng([seed, n, 2])
    return sorted(int(i) for i in gen.choice(n, TRUTH_ROWS, replace=False))


def bits(arr: np.ndarray) -> list[int]:
    return np.ascontiguousarray(arr, dtype=np.float32).ravel().view(np.uint32).tolist()


def from_bits(b: list[int] | int) -> np.ndarray:
    return np.asarray(b, dtype=np.uint32).view(np.float32)


def _round_to_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """s + err (exact) rounded to float64 by round-to-odd: inexact results get an odd last bit.
    Rounding that to float32 is then the correctly rounded float32 of s + err (53 >= 24 + 2)."""
    inexact = (err != 0) & ((s.view(np.int64) & 1) == 0)
    toward = np.where(err > 0, np.inf, -np.inf)
    return np.where(inexact, np.nextafter(s, toward), s)


def fma_chain(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """acc = fmaf(a[i, p], b[p, j], acc) for p in order: one rounding per step, bit exact."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for p in range(a.shape[1]):
        prod = a64[:, p, None] * b64[None, p, :]  # exact: 24 + 24 bits
        c = acc.astype(np.float64)
        s = prod + c
        bb = s - prod
        err = (prod - (s - bb)) + (c - bb)  # TwoSum: s + err == prod + c exactly
        acc = _round_to_odd(s, err).astype(np.float32)
    return acc


def plain_chain(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """acc = fl(acc + fl(a[i, p] * b[p, j])) for p in order, both in float32 (no FMA)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for p in range(a.shape[1]):
        prod = (a64[:, p, None] * b64[None, p, :]).astype(np.float32)
        acc = (acc.astype(np.float64) + prod).astype(np.float32)  # one float32 rounding
    return acc


def error_summary(got: np.ndarray, exact: Any) -> dict[str, Any]:
    """The few numbers a record keeps of `metrics.measure` against an exact Truth."""
    e = metrics.measure(got, exact)
    return {
        "max_abs_ulp": float(e.max_abs_ulp),
        "mean_abs_ulp": float(e.mean_abs_ulp),
        "max_rel": float(e.max_rel),
        "correctly_rounded": int(e.n_correctly_rounded),
        "n": int(e.n),
    }


def _build(name: str, cpp: str, cu: str, flags: tuple[str, ...], where: str | None) -> Any:
    """``cu`` compiled by nvcc through load_inline (in ``where``, made if needed), with the
    functions ``cpp`` declares."""
    if where:
        os.makedirs(where, exist_ok=True)
    return backends.load("torch", "utils.cpp_extension").load_inline(
        name=name,
        cpp_sources=cpp,
        cuda_sources=cu,
        functions=re.findall(r"torch::Tensor (\w+)\(", cpp),
        extra_cuda_cflags=list(flags),
        build_directory=where,
    )


def compile_kernels(build_dir: str | None = None) -> tuple[Any, float]:
    """Compile `KERNELS_CU` with nvcc through load_inline; returns (module, seconds)."""
    t0 = time.perf_counter()
    mod = _build("fpx_cuda_kernels", KERNELS_CPP, KERNELS_CU, CUDA_FLAGS, build_dir)
    return mod, round(time.perf_counter() - t0, 2)


def compile_ftz(build_dir: str | None = None) -> dict[str, Any]:
    """`FTZ_CU` built once per `FTZ_BUILDS` entry, by name."""
    cpp = "torch::Tensor mul_add(torch::Tensor a, torch::Tensor b, torch::Tensor op);\n"
    return {
        name: _build(
            f"fpx_cuda_mul_add_{name}",
            cpp,
            FTZ_CU,
            flags,
            os.path.join(build_dir, f"ftz_{name}") if build_dir else None,
        )
        for name, flags in FTZ_BUILDS.items()
    }


def run_ftz(mods: dict[str, Any], dev: Any, say: Any = print) -> dict[str, Any]:
    """Both builds of `FTZ_CU` on the subnormal battery: every result's bits, by build."""
    torch = backends.load("torch")
    from .._gpu import subnormals

    rows = [subnormals.battery(s) for s in subnormals.SEEDS]
    a, b, op = (np.concatenate([r[i] for r in rows]) for i in range(3))
    ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
    top = torch.from_numpy((op == "*").astype(np.int32)).to(dev)
    out: dict[str, Any] = {
        "seeds": list(subnormals.SEEDS),
        "n": int(a.size),
        "input_digest": digest(np.concatenate([a, b])),
        "builds": {},
    }
    for name, mod in mods.items():
        got = mod.mul_add(ta, tb, top).cpu().numpy()
        out["builds"][name] = {"flags": list(FTZ_BUILDS[name]), "bits": bits(got)}
        say(f"ftz {name}: {int((got == 0).sum())} zeros of {got.size}")
    return out


def nvcc_version() -> str:
    CUDA_HOME = backends.load("torch", "utils.cpp_extension").CUDA_HOME

    exe = shutil.which("nvcc") or (os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else None)
    if not exe or not os.path.exists(exe):
        return ""
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout
    m = re.search(r"release [^\n]*", out)
    return m.group(0) if m else out.strip().splitlines()[-1]


def run_matmul(
    mod: Any, dev: Any, sizes: tuple[int, ...], say: Any = print, runs: int = 3
) -> list[dict]:
    """Each size: every variant's bits (digest), run-to-run spread, time, error vs exact, and
    whether each CPU emulator reproduces it."""
    torch = backends.load("torch")

    rows = []
    for n in sizes:
        a, b = mm_inputs(n)
        ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
        fns = {
            "naive_fma": lambda ta=ta, tb=tb: mod.mm_naive(ta, tb, True),
            "naive_nofma": lambda ta=ta, tb=tb: mod.mm_naive(ta, tb, False),
            "cublas": lambda ta=ta, tb=tb: torch.mm(ta, tb),
        }
        picked = truth_rows(n)  # the rows measured and emulated
        exact = truth.matmul(a[picked], b)
        emus = {"fma_chain": fma_chain(a[picked], b), "plain_chain": plain_chain(a[picked], b)}
        row: dict[str, Any] = {
            "n": n,
            "input_digest": digest(np.concatenate([a.ravel(), b.ravel()])),
            "truth_rows": picked if n > MM_FULL_TRUTH else "all",
            "emulators": {k: digest(v) for k, v in emus.items()},
            "variants": {},
        }
        for name, fn in fns.items():
            out, ms = timed(fn, dev, repeat=3)
            results = [out.cpu().numpy()] + [fn().cpu().numpy() for _ in range(runs - 1)]
            got = results[0]
            v = {
                "digest": digest(got),
                "rows_digest": digest(got[picked]),
                "distinct_runs": len({digest(r) for r in results}),
                "runs": runs,
                "ms": round(ms, 4),
                "error": error_summary(got[picked], exact),
                "matches": {k: digest(e) == digest(got[picked]) for k, e in emus.items()},
            }
            if n <= BITS_UP_TO:
                v["bits"] = bits(got)
            row["variants"][name] = v
        say(
            f"matmul {n}: "
            + ", ".join(
                f"{k} {v['error']['max_abs_ulp']:.3g} ulp, emulators {v['matches']}"
                for k, v in row["variants"].items()
            )
        )
        rows.append(row)
    return rows


def run_sum(mod: Any, dev: Any, n: int = SUM_N, runs: int = RUNS, say: Any = print) -> dict:
    """Every sum variant ``runs`` times on the same input: each run's bits and the errors."""
    torch = backends.load("torch")

    x = sum_input(n)
    tx = torch.from_numpy(x).to(dev)
    exact = truth.sum(x)
    fns = {
        "each_atomic": lambda: mod.sum_atomic(tx, 0),
        "block_atomic": lambda: mod.sum_atomic(tx, 1),
        "torch_sum": lambda: tx.sum(),
    }
    out: dict[str, Any] = {"n": n, "input_digest": digest(x), "runs": runs, "variants": {}}
    for name, fn in fns.items():
        _, ms = timed(fn, dev, repeat=3)
        vals = [fn().cpu().numpy().reshape(()) for _ in range(runs)]
        b = [int(v.view(np.uint32)) for v in vals]
        ulps = [float(metrics.measure(v, exact).ulp_scalar) for v in vals]
        out["variants"][name] = {
            "bits": b,
            "distinct": len(set(b)),
            "ms": round(ms, 4),
            "ulp_errors": ulps,
        }
        say(
            f"sum {name}: {len(set(b))} distinct in {runs} runs, "
            f"ulp {min(ulps):.3g}..{max(ulps):.3g}"
        )
    return out


def record(
    out_dir: str | os.PathLike[str] | None = None,
    quick: bool = False,
    build_dir: str | None = None,
) -> Path:
    """Compile the kernels, run every experiment on the CUDA device, write the record."""
    torch = backends.load("torch")

    from ...backends.torch_device import open_device, provenance

    dev = open_device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # the default; set so the record says so
    prov = provenance(dev)
    say(f"compiling kernels with nvcc ({nvcc_version()})")
    mod, compile_s = compile_kernels(build_dir)
    say(f"compiled in {compile_s} s")
    sizes = MM_SIZES[:2] if quick else MM_SIZES
    runs = 5 if quick else RUNS
    t0 = time.perf_counter()
    mm = run_matmul(mod, dev, sizes, say)
    sums = run_sum(mod, dev, SUM_N, runs, say)
    ftz = run_ftz(compile_ftz(build_dir), dev, say)
    from ... import __version__

    data = {
        "format": FORMAT,
        "version": VERSION,
        "provenance": {**prov, "nvcc": nvcc_version(), "fpexplore": __version__},
        "settings": {
            "quick": quick,
            "seed": SEED,
            "cuda_flags": list(CUDA_FLAGS),
            "compile_s": compile_s,
            "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "command": RECORD_COMMAND + (" --quick" if quick else ""),
            "variants": {**MM_VARIANTS, **SUM_VARIANTS},
        },
        "experiments": {"matmul": mm, "sum": sums, "ftz": ftz},
        "timings_s": {"experiments": round(time.perf_counter() - t0, 2)},
    }
    validate(data, "the new record")
    folder = Path(out_dir) if out_dir is not None else record_dir()
    folder.mkdir(parents=True, exist_ok=True)
    name = _slug(prov.get("gpu_name") or "cuda") + "-" + _slug(prov["torch"])
    path = folder / f"{name}{'-quick' if quick else ''}.json"
    path.write_text(dumps(data), encoding="utf-8")
    say(f"wrote {path}")
    return path


def dumps(data: dict[str, Any]) -> str:
    """JSON with one key a line, and each list of numbers (bit patterns) on one line."""
    numbers = r"\[(?:\s*-?[\d.e+-]+,)+\s*-?[\d.e+-]+\s*\]"
    text = re.sub(numbers, lambda m: re.sub(r"\s+", "", m.group(0)), json.dumps(data, indent=1))
    return text + "\n"


def record_dir() -> Path:
    return data_dir() / "gpu" / "cuda_kernels"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


def validate(data: Any, source: str) -> dict[str, Any]:
    """Check the record's layout; raise `RecordError` naming the first bad field and the fix."""
    bad = header(data, FORMAT, VERSION, source, f"re-record it with: {RECORD_FIX}")

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise bad(what)

    prov = data.get("provenance")
    need(isinstance(prov, dict), "provenance is missing")
    for key in ("gpu_name", "torch", "date", "nvcc"):
        need(isinstance(prov.get(key), str), f"provenance.{key} must be a string")
    exp = data.get("experiments")
    need(isinstance(exp, dict), "experiments is missing")
    mm = exp.get("matmul")
    need(isinstance(mm, list) and bool(mm), "experiments.matmul must be a non-empty list")
    for i, row in enumerate(mm):
        need(isinstance(row, dict) and isinstance(row.get("n"), int), f"matmul[{i}].n missing")
        for v in MM_VARIANTS:
            var = row.get("variants", {}).get(v)
            need(isinstance(var, dict), f"matmul[{i}].variants.{v} is missing")
            for key in ("digest", "rows_digest"):
                need(isinstance(var.get(key), str), f"matmul[{i}].variants.{v}.{key} missing")
            if row["n"] <= BITS_UP_TO:
                need(
                    isinstance(var.get("bits"), list) and len(var["bits"]) == row["n"] ** 2,
                    f"matmul[{i}].variants.{v}.bits must hold n*n ints",
                )
    s = exp.get("sum")
    need(isinstance(s, dict) and isinstance(s.get("n"), int), "experiments.sum.n is missing")
    for v in SUM_VARIANTS:
        var = s.get("variants", {}).get(v)
        need(isinstance(var, dict), f"sum.variants.{v} is missing")
        need(
            isinstance(var.get("bits"), list) and len(var["bits"]) == s.get("runs"),
            f"sum.variants.{v}.bits must hold one int per run",
        )
    ftz = exp.get("ftz")  # absent from records made before the FTZ builds
    if ftz is not None:
        need(isinstance(ftz.get("n"), int), "experiments.ftz.n is missing")
        for v in FTZ_BUILDS:
            b = ftz.get("builds", {}).get(v)
            need(
                isinstance(b, dict)
                and isinstance(b.get("bits"), list)
                and len(b["bits"]) == ftz["n"],
                f"experiments.ftz.builds.{v}.bits must hold n ints",
            )
    return data


def load(directory: str | os.PathLike[str] | None = None) -> tuple[Path, dict]:
    """The newest record (quick runs left out), validated."""
    folder = Path(directory) if directory is not None else record_dir()
    found = newest_dated(p for p in sorted(folder.glob("*.json")) if not p.stem.endswith("-quick"))
    if found is None:
        raise RecordError(f"no CUDA kernel record in {folder}. Record one with: {RECORD_FIX}")
    path, data = found
    return path, validate(data, str(path))


def command(args: argparse.Namespace) -> int:
    """``fpexplore record cuda-kernels`` (options declared in `fpexplore.commands`)."""
    print(record(args.out, args.quick, args.build_dir))
    return 0
