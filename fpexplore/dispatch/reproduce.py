"""The environment that gives machine A the paths machine B took, where A's CPU has them, and
the paths of B that no switch on A reaches."""

from __future__ import annotations

from typing import Any

from .causes import ISA_ORDER, RECORDED_BY, THREAD_VARS, get, isa, threads, vendor

#: the CPU flags each OpenBLAS core kernel needs (OpenBLAS's DYNAMIC_ARCH checks the same)
OPENBLAS_CORES = {
    "Prescott": set(),
    "Core2": set(),
    "Penryn": set(),
    "Nehalem": {"sse4_2"},
    "Sandybridge": {"avx"},
    "Haswell": {"avx2", "fma"},
    "Zen": {"avx2", "fma"},
    "SkylakeX": {"avx512f", "avx512bw", "avx512vl", "avx512dq"},
    "Cooperlake": {"avx512f", "avx512bw", "avx512vl", "avx512_bf16"},
    "SapphireRapids": {"avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_fp16"},
}
#: MKL branches that MKL_ENABLE_INSTRUCTIONS can select on an Intel CPU
MKL_ISAS = ("SSE4_2", "AVX", "AVX2", "AVX512", "AVX512_E1")


def environment(ma: dict[str, Any], mb: dict[str, Any]) -> tuple[dict[str, str], list[str]]:
    """(variables to set on A, notes on B's paths that A cannot take)."""
    env: dict[str, str] = {}
    notes: list[str] = []
    flags = set(ma.get("cpu_flags", []))
    oa, ob = get(ma, "tensorflow", "onednn"), get(mb, "tensorflow", "onednn")
    if oa is not None and ob is not None and ob != oa:
        env["TF_ENABLE_ONEDNN_OPTS"] = str(int(bool(ob)))
    ca, cb = get(ma, "torch", "capability"), get(mb, "torch", "capability")
    order = ["DEFAULT", "AVX2", "AVX512"]
    if ca in order and cb in order and order.index(cb) < order.index(ca):
        env["ATEN_CPU_CAPABILITY"] = cb.lower()
    sa, sb = get(ma, "numpy", "simd_targets") or [], get(mb, "numpy", "simd_targets") or []
    extra = [t for t in sa if t not in sb]
    if extra and set(sb) <= set(sa):
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(extra)
    for var, which in (("OMP_NUM_THREADS", "torch"), ("OPENBLAS_NUM_THREADS", "openblas")):
        tb = threads(mb, which)
        if tb and tb != threads(ma, which):
            env[var] = str(tb)
    _mkl(ma, mb, env, notes)
    core_a, core_b = get(ma, "numpy", "openblas", "core"), get(mb, "numpy", "openblas", "core")
    if core_a and core_b and core_a != core_b:
        if OPENBLAS_CORES.get(core_b, {"?"}) <= flags:
            env["OPENBLAS_CORETYPE"] = core_b
        else:
            notes.append(f"OpenBLAS's {core_b} kernels of B need instructions A's CPU lacks")
    ia, ib = isa(ma), isa(mb)
    if ia != ib and ia in ISA_ORDER and ib in ISA_ORDER:
        if ISA_ORDER.index(ib) < ISA_ORDER.index(ia):
            env["ONEDNN_MAX_CPU_ISA"] = ib
        else:
            notes.append(f"oneDNN's {ib} kernels of B need instructions A's CPU lacks")
    ea = ma.get("env", {})
    for var, value in mb.get("env", {}).items():
        path = RECORDED_BY.get(var)
        recorded = path is not None and get(ma, *path) is not None and get(mb, *path) is not None
        if not recorded and var not in THREAD_VARS and ea.get(var) != value:
            env.setdefault(var, value)
    return env, notes


def _mkl(ma: dict[str, Any], mb: dict[str, Any], env: dict[str, str], notes: list[str]) -> None:
    if not (get(ma, "torch", "mkl") and get(mb, "torch", "mkl")):
        return
    va, vb = vendor(ma), vendor(mb)
    pa, pb = ma.get("mkl") or {}, mb.get("mkl") or {}
    if va != vb and "unknown" not in (va, vb):
        notes.append(
            f"MKL's path on B's {vb} CPU is not reachable on A's {va} CPU: MKL chooses by "
            "vendor; MKL_CBWR=COMPATIBLE on both machines gives both the same MKL path"
        )
    cbwr_b = pb.get("cbwr")
    if cbwr_b and cbwr_b != "OFF" and cbwr_b != pa.get("cbwr"):
        env["MKL_CBWR"] = cbwr_b
    branch_b = pb.get("branch")
    if va == vb == "GenuineIntel" and branch_b in MKL_ISAS and branch_b != pa.get("branch"):
        env.setdefault("MKL_ENABLE_INSTRUCTIONS", branch_b)


def command(env: dict[str, str]) -> str:
    """``VAR=value ... fpexplore fingerprint --out B-on-A.json`` ('' for no variable)."""
    return assignments(env) + " fpexplore fingerprint --out B-on-A.json" if env else ""


def assignments(env: dict[str, str]) -> str:
    """``VAR=value ...`` as a shell reads it (a value with spaces quoted)."""
    return " ".join(f'{k}="{v}"' if " " in v else f"{k}={v}" for k, v in env.items())
