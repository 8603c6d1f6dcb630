"""What separates two machines, read from their fingerprints: which engine inside a library
computes each result (`engines`), the paths each side's libraries took, and which of the
differing results each difference reaches (`find`).

A cause *explains* a result only when the fingerprints themselves show a different path to it:
another version of its library, another branch, kernel, ISA or thread count recorded for the
engine that computes it. A difference whose effect the fingerprints do not record (the CPU
model alone, a variable whose path is not recorded) is only a *suspect*.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..probe.cpu import vendor_of
from ..probe.libpaths import ONEDNN_ISAS, onednn_isa

#: the engines that compute each battery op on the CPU, per library (torch's BLAS is MKL, its
#: float32 convolutions oneDNN's or MKL's GEMM; numpy's BLAS is OpenBLAS)
BLAS_OPS = ("dot", "matmul")
TORCH_LIKE = ("torch", "libtorch", "djl")
#: environment variables whose effect a fingerprint records, and where
RECORDED_BY = {
    "TF_ENABLE_ONEDNN_OPTS": ("tensorflow", "onednn"),
    "ATEN_CPU_CAPABILITY": ("torch", "capability"),
    "NPY_DISABLE_CPU_FEATURES": ("numpy", "simd_targets"),
    "MKL_CBWR": ("mkl", "cbwr"),
    "MKL_ENABLE_INSTRUCTIONS": ("mkl", "branch"),
    "MKL_DEBUG_CPU_TYPE": ("mkl", "branch"),
    "OPENBLAS_CORETYPE": ("numpy", "openblas", "core"),
    "ONEDNN_MAX_CPU_ISA": ("onednn_isa",),
    "DNNL_MAX_CPU_ISA": ("onednn_isa",),
    "TF_NUM_INTRAOP_THREADS": ("tensorflow", "intra_op_threads"),
}
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@dataclass(frozen=True)
class Cause:
    """A difference between the machines, the differing results it explains (or, for a
    suspect, could reach), and how to check it."""

    name: str
    detail: str
    explains: tuple[str, ...]
    confirm: str = ""
    #: 0 = a version of the result's library, 1 = a path inside a library, 2 = the hardware
    rank: int = 0
    #: how many results the cause could reach: of two that explain as many, the narrower wins
    reach: int = 0


def get(d: Any, *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


def engine(op: dict[str, Any]) -> tuple[str, ...]:
    """Which engines compute ``op`` (an entry of a fingerprint's ops): ``mkl``, ``onednn``,
    ``aten``, ``openblas``, ``numpy-simd``, ``tensorflow`` or ``card``. torch's float32
    convolution runs on oneDNN or, where oneDNN does not take it, as im2col and MKL's GEMM
    (``MKL_CBWR`` changes torch's conv2d on a CPU where oneDNN does not take it)."""
    lib, name = op.get("library"), op.get("op")
    if op.get("device") != "cpu":
        return ("card",)
    if lib == "numpy":
        return ("openblas",) if name in BLAS_OPS else ("numpy-simd",)
    if lib in TORCH_LIKE:
        if name == "conv2d":
            return ("onednn", "mkl")
        return ("mkl",) if name in BLAS_OPS else ("aten",)
    return (str(lib),)


def engines(ops: dict[str, Any]) -> dict[str, set[str]]:
    """Result keys by engine, plus ``torch-cpu`` (every torch-like CPU result)."""
    out: dict[str, set[str]] = {}
    for key, op in ops.items():
        for name in engine(op):
            out.setdefault(name, set()).add(key)
        if op.get("library") in TORCH_LIKE and op.get("device") == "cpu":
            out.setdefault("torch-cpu", set()).add(key)
    return out


def isa(machine: dict[str, Any]) -> str:
    """oneDNN's ISA: as recorded, else from the recorded CPU flags and environment."""
    recorded = machine.get("onednn_isa")
    return recorded or onednn_isa(frozenset(machine.get("cpu_flags", [])), machine.get("env", {}))


def openblas_version(machine: dict[str, Any]) -> str | None:
    found = re.match(r"OpenBLAS ([\d.]+)", get(machine, "numpy", "openblas", "config") or "")
    return found.group(1) if found else None


def vendor(machine: dict[str, Any]) -> str:
    return vendor_of(machine.get("cpu_vendor") or "", machine.get("cpu") or "")


def threads(machine: dict[str, Any], which: str) -> int | None:
    """The thread count a library runs with, as recorded (``torch`` or ``openblas``)."""
    if which == "torch":
        return get(machine, "torch", "threads")
    return get(machine, "numpy", "openblas", "threads")


def find(a: dict[str, Any], b: dict[str, Any], differ: set[str]) -> tuple[list[Cause], list[Cause]]:
    """(causes, suspects) of the differing keys ``differ``, each sorted most likely first."""
    ma, mb, ops = a["machine"], b["machine"], a["ops"]
    by = engines(ops)
    found: list[Cause] = []
    suspects: list[Cause] = []

    def add(name: str, detail: str, reach: set[str], confirm: str = "", rank: int = 1) -> None:
        if hit := tuple(sorted(differ & reach)):
            found.append(Cause(name, detail, hit, confirm, rank, len(reach)))

    def suspect(name: str, detail: str, reach: set[str], rank: int = 2) -> None:
        if hit := tuple(sorted(differ & reach)):
            suspects.append(Cause(name, detail, hit, "", rank, len(reach)))

    def changed(*path: str) -> tuple[Any, Any] | None:
        va, vb = get(ma, *path), get(mb, *path)
        return (va, vb) if va is not None and vb is not None and va != vb else None

    def keys(*names: str) -> set[str]:
        return set().union(*(by.get(n, set()) for n in names))

    lib_keys = {
        lib: {k for k, o in ops.items() if o.get("library") == lib} for lib in ("torch", "numpy")
    }
    lib_keys["tensorflow"] = keys("tensorflow")
    # 0: versions of the result's own library (and of the BLAS inside it)
    for lib in ("torch", "tensorflow", "numpy"):
        if v := changed(lib, "version"):
            add(f"{lib} version", f"A has {v[0]}, B {v[1]}", lib_keys[lib], rank=0)
    if v := changed("mkl", "version"):
        add("MKL version", f"torch's MKL: A {v[0]}, B {v[1]}", keys("mkl"), rank=0)
    va, vb = openblas_version(ma), openblas_version(mb)
    if va and vb and va != vb:
        add("OpenBLAS version", f"numpy's OpenBLAS: A {va}, B {vb}", keys("openblas"), rank=0)
    # 1: the paths inside the libraries
    _library_paths(ma, mb, changed, add, keys)
    _threads(ma, mb, add, keys)
    _environment(ma, mb, keys, suspect, by)
    _unrecorded(ma, mb, keys, suspect)
    _hardware(ma, mb, ops, add, suspect)
    order = sorted(found, key=lambda c: (c.rank, -len(c.explains), c.reach, c.name))
    return order, sorted(suspects, key=lambda c: (c.rank, -len(c.explains), c.name))


def _library_paths(ma: Any, mb: Any, changed: Any, add: Any, keys: Any) -> None:
    if onednn := changed("tensorflow", "onednn"):
        why_a = get(ma, "tensorflow", "onednn_reason") or ""
        why_b = get(mb, "tensorflow", "onednn_reason") or ""
        v, out = (1, "A-onednn") if onednn[1] else (0, "A-no-onednn")
        add(
            "TensorFlow's oneDNN kernels",
            f"A: {why_a}; B: {why_b}",
            keys("tensorflow"),
            f"rerun with TF_ENABLE_ONEDNN_OPTS={v} on A to confirm "
            f"(TF_ENABLE_ONEDNN_OPTS={v} fpexplore fingerprint --out {out}.json)",
        )
    if cap := changed("torch", "capability"):
        add(
            "ATen's CPU path",
            f"A runs torch's {cap[0]} kernels, B its {cap[1]} kernels (lanes, FMA, vector log/exp)",
            keys("aten"),
            f"rerun with ATEN_CPU_CAPABILITY={cap[1].lower()} on A to confirm",
        )
    if simd := changed("numpy", "simd_targets"):
        sa, sb = simd
        extra = [t for t in sa if t not in sb]
        add(
            "numpy's SIMD targets",
            f"A dispatches to {', '.join(sa) or 'baseline only'}, B to "
            f"{', '.join(sb) or 'baseline only'}",
            keys("numpy-simd"),
            f'rerun with NPY_DISABLE_CPU_FEATURES="{" ".join(extra)}" on A to confirm'
            if extra
            else "",
        )
    _mkl(ma, mb, add, keys)
    if core := changed("numpy", "openblas", "core"):
        add(
            "OpenBLAS's core kernel",
            f"numpy's OpenBLAS runs its {core[0]} kernels on A, its {core[1]} kernels on B",
            keys("openblas"),
            f"rerun with OPENBLAS_CORETYPE={core[1]} on A to confirm (where A's CPU has it)",
        )
    ia, ib = isa(ma), isa(mb)
    both_torch = get(ma, "torch", "mkldnn") and get(mb, "torch", "mkldnn")
    both_tf = get(ma, "tensorflow", "onednn") and get(mb, "tensorflow", "onednn")
    if ia != ib and (both_torch or both_tf):
        add(
            "oneDNN's ISA",
            f"oneDNN (torch's convolutions{', TensorFlow' if both_tf else ''}) runs its {ia} "
            f"kernels on A, its {ib} kernels on B",
            (keys("onednn") if both_torch else set()) | (keys("tensorflow") if both_tf else set()),
            f"rerun with ONEDNN_MAX_CPU_ISA={ib} on A to confirm (where A's CPU has it)",
        )


def _mkl(ma: Any, mb: Any, add: Any, keys: Any) -> None:
    """MKL's branch and CBWR mode where recorded; else its vendor path (MKL takes its Intel
    code paths only on Intel CPUs: on others, other paths, whatever the instruction sets)."""
    if not (get(ma, "torch", "mkl") and get(mb, "torch", "mkl")):
        return
    fix = "MKL_CBWR=COMPATIBLE (or AUTO,STRICT) on both gives MKL one path and aligned-or-not "
    fix += "the same bits"
    pa, pb = ma.get("mkl"), mb.get("mkl")
    va, vb = vendor(ma), vendor(mb)
    if pa and pb:
        what = [
            f"{side}: branch {p.get('branch')}, CBWR {p.get('cbwr')}"
            for side, p in (("A", pa), ("B", pb))
        ]
        if (pa.get("branch"), pa.get("cbwr")) != (pb.get("branch"), pb.get("cbwr")):
            add("MKL's branch and CBWR mode", "; ".join(what), keys("mkl"), fix)
    elif "GenuineIntel" in (va, vb) and va != vb and "unknown" not in (va, vb):
        add(
            "MKL's CPU-vendor path",
            f"MKL takes its Intel code paths on the {va if va == 'GenuineIntel' else vb} side "
            f"and other paths on the {vb if va == 'GenuineIntel' else va} side (A: {va}, B: {vb})",
            keys("mkl"),
            fix,
        )


def _threads(ma: Any, mb: Any, add: Any, keys: Any) -> None:
    """Effective thread counts, as the libraries report them (not the variables)."""

    def tf(m: Any) -> Any:  # 0 or unset: one thread a core (TensorFlow's default)
        return get(m, "tensorflow", "intra_op_threads") or m.get("cores")

    for name, count, what, reaches, var in (
        ("torch", lambda m: threads(m, "torch"), "torch uses", "torch-cpu", "OMP_NUM_THREADS"),
        (
            "TensorFlow",
            tf,
            "TensorFlow's intra-op pool has",
            "tensorflow",
            "TF_NUM_INTRAOP_THREADS",
        ),
        (
            "OpenBLAS",
            lambda m: threads(m, "openblas"),
            "numpy's OpenBLAS uses",
            "openblas",
            "OPENBLAS_NUM_THREADS",
        ),
    ):
        a, b = count(ma), count(mb)
        if a is not None and b is not None and a != b:
            add(
                f"{name}'s thread count",
                f"{what} {a} thread(s) on A, {b} on B"
                + (": reductions split into other partial sums" if name == "torch" else ""),
                keys(reaches),
                f"rerun with {var}={b} on A to confirm",
            )


def _environment(ma: Any, mb: Any, keys: Any, suspect: Any, by: Any) -> None:
    """Variables set differently whose effect the fingerprints do not record (a recorded
    effect is compared as the path itself, above): suspects only."""
    ea, eb = ma.get("env", {}), mb.get("env", {})
    recorded_threads = all(
        threads(m, "torch") is not None or threads(m, "openblas") is not None for m in (ma, mb)
    )
    for var in sorted(set(ea) | set(eb)):
        if ea.get(var) == eb.get(var):
            continue
        path = RECORDED_BY.get(var)
        if path and get(ma, *path) is not None and get(mb, *path) is not None:
            continue  # its effect is recorded: compared as the path
        if var.endswith("NUM_THREADS") and recorded_threads:
            continue  # the effective counts are compared, not the variables
        reach = (
            keys("onednn", "tensorflow")
            if "ONEDNN" in var
            else keys("mkl")
            if var.startswith("MKL")
            else keys("openblas")
            if var.startswith("OPENBLAS")
            else keys("card")
            if var.startswith("CUBLAS")
            else set().union(*(v for k, v in by.items() if k != "card"))
        )
        suspect(
            f"environment {var}",
            f"A: {ea.get(var, 'unset')}, B: {eb.get(var, 'unset')} (the fingerprints do not "
            "record what it changed)",
            reach,
            rank=1,
        )


def _unrecorded(ma: Any, mb: Any, keys: Any, suspect: Any) -> None:
    """Library paths one side's fingerprint does not record (taken before fpexplore recorded
    them): suspects for the results of their engine."""
    for name, path, engine_ in (
        ("OpenBLAS's core kernel", ("numpy", "openblas", "core"), "openblas"),
        ("MKL's branch", ("mkl", "branch"), "mkl"),
    ):
        va, vb = get(ma, *path), get(mb, *path)
        if (va is None) != (vb is None):
            suspect(
                name,
                f"A: {va or 'not recorded'}, B: {vb or 'not recorded'} (a fingerprint taken "
                "before fpexplore recorded it)",
                keys(engine_),
                rank=1,
            )


def _hardware(ma: Any, mb: Any, ops: Any, add: Any, suspect: Any) -> None:
    if ma.get("cpu") != mb.get("cpu") or ma.get("cpu_flags") != mb.get("cpu_flags"):
        gap = sorted(set(ma.get("cpu_flags", [])) ^ set(mb.get("cpu_flags", [])))
        suspect(
            "the CPU",
            f"A: {ma.get('cpu')}, B: {mb.get('cpu')}"
            + (f"; instruction sets on one side only: {', '.join(gap)}" if gap else ""),
            {k for k, o in ops.items() if o.get("device") == "cpu"},
        )
    cards_a = {c["device"]: c for c in ma.get("cards", [])}
    cards_b = {c["device"]: c for c in mb.get("cards", [])}
    for dev in sorted(set(cards_a) & set(cards_b)):
        ca, cb = cards_a[dev], cards_b[dev]
        reach = {k for k, o in ops.items() if o.get("device") == dev}
        detail = f"A: {ca.get('name')} ({ca.get('capability')}), B: {cb.get('name')} "
        detail += f"({cb.get('capability')})"
        for field, what in (("cuda", "CUDA"), ("cudnn", "cuDNN")):
            if ca.get(field) != cb.get(field):
                add(
                    f"{what} version at {dev}",
                    f"A: {ca.get(field)}, B: {cb.get(field)}",
                    reach,
                    rank=0,
                )
        if ca.get("capability") != cb.get("capability"):
            add(f"the card at {dev}", detail + ": other kernels", reach, rank=2)
        elif ca.get("name") != cb.get("name"):
            suspect(f"the card at {dev}", detail, reach)
        tf32 = [f for f in ("tf32_matmul", "tf32_cudnn") if ca.get(f) != cb.get(f)]
        if tf32:
            add(
                f"TF32 at {dev}",
                ", ".join(f"{f}: A {ca.get(f)}, B {cb.get(f)}" for f in tf32),
                reach,
            )


#: ISA names in oneDNN's order, for choosing a cap that A's CPU has
ISA_ORDER = [n for n, _ in ONEDNN_ISAS]
