"""The paths inside the BLAS and DNN libraries, as the libraries report them: MKL's branch and
CBWR mode (torch's MKL), OpenBLAS's core kernel and threads (numpy's), oneDNN's ISA.

Each is asked of the loaded library through its exported functions; a field the library does
not answer is left out (None), never guessed, except oneDNN's ISA, which oneDNN picks by a
documented rule from the CPU's flags and ``ONEDNN_MAX_CPU_ISA`` (`onednn_isa`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
from collections.abc import Mapping
from typing import Any

#: MKL's CBWR codes (mkl_cbwr.h): the branch, and the STRICT bit
CBWR_NAMES = {
    0: "OFF",
    1: "OFF",  # MKL_CBWR_BRANCH_OFF: no CBWR mode, MKL picks its branch each run
    2: "AUTO",
    3: "COMPATIBLE",
    4: "SSE2",
    6: "SSSE3",
    7: "SSE4_1",
    8: "SSE4_2",
    9: "AVX",
    10: "AVX2",
    11: "AVX512_MIC",
    12: "AVX512",
    13: "AVX512_MIC_E1",
    14: "AVX512_E1",
}
CBWR_STRICT = 0x10000
CBWR_ALL = -1  # MKL_CBWR_ALL is ~0


def _cbwr_name(code: int) -> str:
    name = CBWR_NAMES.get(code & ~CBWR_STRICT, f"code {code & ~CBWR_STRICT}")
    return name + (",STRICT" if code & CBWR_STRICT else "")


def _int_fn(lib: Any, name: str, *args: int) -> int | None:
    fn = getattr(lib, name, None)
    if fn is None:
        return None
    fn.restype = ctypes.c_int
    return int(fn(*args))


def mkl_paths(torch: Any) -> dict[str, Any] | None:
    """MKL inside ``torch`` (its BLAS-1/2/3 and vector math): version, CBWR mode, the branch
    it runs, and whether it takes its Intel paths (on other vendors' CPUs it takes others)."""
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    if not (torch.backends.mkl.is_available() and os.path.exists(path)):
        return None
    try:
        lib = ctypes.CDLL(path)  # already loaded: the same handle
    except OSError:
        return None
    cbwr = _int_fn(lib, "mkl_serv_cbwr_get", CBWR_ALL)
    auto = _int_fn(lib, "mkl_serv_cbwr_get_auto_branch")
    intel = _int_fn(lib, "mkl_serv_intel_cpu")
    if cbwr is None or auto is None:
        return None
    fixed = cbwr & ~CBWR_STRICT
    branch = _cbwr_name(fixed if fixed > 2 else auto)  # a set branch, else MKL's own pick
    if intel == 0 and fixed <= 2:
        zen = _int_fn(lib, "mkl_serv_cpuiszen")
        branch = f"non-Intel ({'Zen' if zen else 'generic'}) path"
    version = None
    if (fn := getattr(lib, "MKL_Get_Version_String", None)) is not None:
        buf = ctypes.create_string_buffer(256)
        fn(buf, 256)
        found = re.search(r"Version ([\d.]+)", buf.value.decode(errors="replace"))
        version = found.group(1) if found else None
    return {
        "version": version,
        "cbwr": _cbwr_name(cbwr),
        "branch": branch,
        "intel_paths": None if intel is None else bool(intel),
    }


def openblas_paths() -> dict[str, Any] | None:
    """The OpenBLAS loaded in this process (numpy's): its core kernel and thread count, asked
    of the library itself (the symbols threadpoolctl reads)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            libs = {ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln}
    except OSError:
        return None
    for so in sorted(libs, key=lambda path: "numpy" not in path):  # numpy's own first
        try:
            lib = ctypes.CDLL(so)
        except OSError:
            continue
        for prefix, suffix in (
            ("scipy_openblas_", "64_"),
            ("scipy_openblas_", ""),
            ("openblas_", ""),
        ):
            core = getattr(lib, f"{prefix}get_corename{suffix}", None)
            if core is None:
                continue
            core.restype = ctypes.c_char_p
            out: dict[str, Any] = {"core": (core() or b"").decode(errors="replace")}
            out["threads"] = _int_fn(lib, f"{prefix}get_num_threads{suffix}")
            config = getattr(lib, f"{prefix}get_config{suffix}", None)
            if config is not None:
                config.restype = ctypes.c_char_p
                with contextlib.suppress(Exception):
                    out["config"] = (config() or b"").decode(errors="replace")
            return out
    return None


#: oneDNN's CPU ISAs, widest last, each with the flags it needs (oneDNN's dnnl_cpu_isa_t)
ONEDNN_ISAS = (
    ("SSE41", {"sse4_1"}),
    ("AVX", {"avx"}),
    ("AVX2", {"avx2", "fma"}),
    ("AVX2_VNNI", {"avx2", "fma", "avx_vnni"}),
    ("AVX512_CORE", {"avx512f", "avx512bw", "avx512vl", "avx512dq"}),
    ("AVX512_CORE_VNNI", {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni"}),
    ("AVX512_CORE_BF16", {"avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16"}),
    ("AVX512_CORE_AMX", {"avx512f", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"}),
)


def onednn_isa(flags: frozenset[str], env: Mapping[str, str]) -> str:
    """The ISA oneDNN dispatches to: the widest the CPU has, capped by ``ONEDNN_MAX_CPU_ISA``
    (or the older ``DNNL_MAX_CPU_ISA``); ``DEFAULT`` below SSE4.1."""
    names = [n for n, _ in ONEDNN_ISAS]
    have = [n for n, need in ONEDNN_ISAS if need <= flags or (n == "SSE41" and "sse4_2" in flags)]
    best = have[-1] if have else "DEFAULT"
    cap = (env.get("ONEDNN_MAX_CPU_ISA") or env.get("DNNL_MAX_CPU_ISA") or "").strip().upper()
    if cap in names and best in names and names.index(cap) < names.index(best):
        usable = [n for n in have if names.index(n) <= names.index(cap)]
        return usable[-1] if usable else "DEFAULT"
    return best
