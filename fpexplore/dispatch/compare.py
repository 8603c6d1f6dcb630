"""Two fingerprints compared: which results differ, how far each side is from the exact truth,
and the likely causes, ranked by how many of the differences each explains.

A cause is a difference between the two machines' descriptions that reaches the library of a
differing result: TensorFlow's oneDNN state, ATen's CPU path, numpy's SIMD targets, thread
counts, an environment switch, a library version, the CPU itself, the card. Where the cause is
a switch, the comparison gives the command that confirms it (and, when the CPU allows, the
environment that reproduces the other machine's bits here).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .fingerprint import check

#: switches whose effect is read from the paths the libraries report (oneDNN state, ATen path,
#: numpy's SIMD targets), not from the environment variable itself
READ_FROM_PATHS = ("TF_ENABLE_ONEDNN_OPTS", "ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES")


@dataclass(frozen=True)
class Cause:
    """A difference between the machines, the differing results it can explain, and how to
    check it."""

    name: str
    detail: str
    explains: tuple[str, ...]
    confirm: str = ""
    #: 0 = a switch you can flip (checked by flipping it), 1 = a version, 2 = the hardware
    rank: int = 0
    #: how many results the cause could reach: of two that explain as many, the narrower wins
    reach: int = 0


@dataclass(frozen=True)
class Difference:
    """The comparison: differing results, results on one side only, the ranked causes."""

    a_label: str
    b_label: str
    rows: tuple[dict[str, Any], ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    causes: tuple[Cause, ...]
    unexplained: tuple[str, ...]
    reproduce: str = ""
    same: tuple[str, ...] = ()

    @property
    def differs(self) -> tuple[str, ...]:
        return tuple(r["key"] for r in self.rows)

    def text(self) -> str:
        """The comparison as plain text (the CLI prints it)."""
        out = [f"A: {self.a_label}", f"B: {self.b_label}"]
        if not self.rows:
            out.append(f"no difference: all {len(self.same)} results in both have the same bits")
        else:
            out.append(
                f"{len(self.rows)} of {len(self.rows) + len(self.same)} results differ in their "
                "bits (max error against the exact truth, in ULPs):"
            )
            w = max(len(r["key"]) for r in self.rows)
            for r in self.rows:
                a, b = _ulp(r["ulp_a"]), _ulp(r["ulp_b"])
                out.append(f"  {r['key']:{w}s}  A {a:>10s}   B {b:>10s}")
        for side, keys in (("A", self.only_a), ("B", self.only_b)):
            if keys:
                out.append(f"only in {side}: {', '.join(keys)}")
        if self.causes:
            out.append("likely causes, most likely first:")
            for n, c in enumerate(self.causes, 1):
                out.append(f"  {n}. {c.name}: {c.detail} — explains {len(c.explains)}")
                if c.confirm:
                    out.append(f"     {c.confirm}")
        if self.unexplained:
            out.append(
                "not explained by any described difference (nondeterminism, or a switch the "
                f"fingerprint does not record): {', '.join(self.unexplained)}"
            )
        if self.reproduce:
            out.append(f"to reproduce B's bits here on A: {self.reproduce}")
        return "\n".join(out)

    def html(self) -> str:
        """The comparison as an HTML fragment (the report includes it)."""
        from ..templates import render

        return render("dispatch_compare.html", c=self, ulp=_ulp)

    def _repr_html_(self) -> str:
        return self.html()


def _ulp(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"


def _get(d: dict[str, Any], *path: str) -> Any:
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)  # type: ignore[assignment]
    return d


def _keys(ops: dict[str, Any], library: str | None = None, cpu: bool | None = None) -> set[str]:
    return {
        k
        for k, o in ops.items()
        if (library is None or o.get("library") == library)
        and (cpu is None or (o.get("device") == "cpu") == cpu)
    }


def _causes(a: dict[str, Any], b: dict[str, Any], differ: set[str]) -> list[Cause]:
    ma, mb, ops = a["machine"], b["machine"], a["ops"]
    found: list[Cause] = []

    def add(name: str, detail: str, reach: set[str], confirm: str = "", rank: int = 0) -> None:
        hit = tuple(sorted(differ & reach))
        if hit:
            found.append(Cause(name, detail, hit, confirm, rank, len(reach)))

    tf_cpu, np_ops = _keys(ops, "tensorflow", True), _keys(ops, "numpy")
    # torch's CPU kernels, also under the LibTorch program and DJL (the same libtorch)
    torch_cpu = _keys(ops, "torch", True) | _keys(ops, "libtorch") | _keys(ops, "djl")

    def changed(*path: str) -> tuple[Any, Any] | None:
        """(A's, B's) value at ``path``, where both machines report one and they differ."""
        va, vb = _get(ma, *path), _get(mb, *path)
        return (va, vb) if va is not None and vb is not None and va != vb else None

    if onednn := changed("tensorflow", "onednn"):
        why_a = _get(ma, "tensorflow", "onednn_reason") or ""
        why_b = _get(mb, "tensorflow", "onednn_reason") or ""
        v, out = (1, "A-onednn") if onednn[1] else (0, "A-no-onednn")
        add(
            "TensorFlow's oneDNN kernels",
            f"A: {why_a}; B: {why_b}",
            tf_cpu,
            f"rerun with TF_ENABLE_ONEDNN_OPTS={v} on A to confirm "
            f"(TF_ENABLE_ONEDNN_OPTS={v} fpexplore fingerprint --out {out}.json)",
        )
    if cap := changed("torch", "capability"):
        add(
            "ATen's CPU path",
            f"A runs torch's {cap[0]} kernels, B its {cap[1]} kernels (lanes, FMA, vector log/exp)",
            torch_cpu,
            f"rerun with ATEN_CPU_CAPABILITY={cap[1].lower()} on A to confirm",
        )
    if simd := changed("numpy", "simd_targets"):
        sa, sb = simd
        extra = [t for t in sa if t not in sb]
        add(
            "numpy's SIMD targets",
            f"A dispatches to {', '.join(sa) or 'baseline only'}, B to "
            f"{', '.join(sb) or 'baseline only'}",
            np_ops,
            f'rerun with NPY_DISABLE_CPU_FEATURES="{" ".join(extra)}" on A to confirm'
            if extra
            else "",
        )
    threads = changed("torch", "threads")
    if threads:
        ta, tb = threads
        add(
            "thread count",
            f"torch uses {ta} thread(s) on A, {tb} on B: reductions split into other partial sums",
            torch_cpu | tf_cpu | np_ops,
            f"rerun with OMP_NUM_THREADS={tb} on A to confirm",
        )
    ea, eb = ma.get("env", {}), mb.get("env", {})
    for var in sorted(set(ea) | set(eb)):
        if var in READ_FROM_PATHS:
            continue
        if var.endswith("NUM_THREADS") and threads:
            continue
        if ea.get(var) != eb.get(var):
            reach = (
                tf_cpu | torch_cpu  # oneDNN serves TensorFlow and torch's CPU convolutions
                if var.startswith("ONEDNN")
                else torch_cpu | np_ops  # MKL: torch's BLAS and vector math, numpy's BLAS
                if var.startswith("MKL")
                else np_ops
                if var.startswith("OPENBLAS")
                else _keys(ops, cpu=False)
                if var.startswith("CUBLAS")
                else torch_cpu | np_ops | tf_cpu
            )
            add(
                f"environment {var}",
                f"A: {ea.get(var, 'unset')}, B: {eb.get(var, 'unset')}",
                reach,
                f"rerun with {var}={eb[var]} on A to confirm"
                if var in eb
                else f"rerun with {var} unset on A to confirm",
            )
    for lib, reach in (("torch", _keys(ops, "torch")), ("tensorflow", tf_cpu), ("numpy", np_ops)):
        if version := changed(lib, "version"):
            add(f"{lib} version", f"A has {version[0]}, B {version[1]}", reach, rank=1)
    if ma.get("cpu") != mb.get("cpu") or ma.get("cpu_flags") != mb.get("cpu_flags"):
        fa, fb = set(ma.get("cpu_flags", [])), set(mb.get("cpu_flags", []))
        gap = sorted(fa ^ fb)
        add(
            "the CPU",
            f"A: {ma.get('cpu')}, B: {mb.get('cpu')}"
            + (f"; instruction sets on one side only: {', '.join(gap)}" if gap else ""),
            _keys(ops, cpu=True),
            rank=2,
        )
    cards_a = {c["device"]: c for c in ma.get("cards", [])}
    cards_b = {c["device"]: c for c in mb.get("cards", [])}
    for dev in sorted(set(cards_a) & set(cards_b)):
        if cards_a[dev] != cards_b[dev]:
            add(
                f"the card at {dev}",
                f"A: {cards_a[dev].get('name')} ({cards_a[dev].get('capability')}), "
                f"B: {cards_b[dev].get('name')} ({cards_b[dev].get('capability')})",
                {k for k in ops if ops[k].get("device") == dev},
                rank=2,
            )
    return sorted(found, key=lambda c: (c.rank, -len(c.explains), c.reach, c.name))


def _reproduce(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The environment that gives A the switches B ran under (where A's CPU has B's paths)."""
    ma, mb = a["machine"], b["machine"]
    env = []
    oa, ob = _get(ma, "tensorflow", "onednn"), _get(mb, "tensorflow", "onednn")
    if oa is not None and ob is not None and ob != oa:
        env.append(f"TF_ENABLE_ONEDNN_OPTS={int(bool(ob))}")
    ca, cb = _get(ma, "torch", "capability"), _get(mb, "torch", "capability")
    order = ["DEFAULT", "AVX2", "AVX512"]
    if ca in order and cb in order and order.index(cb) < order.index(ca):
        env.append(f"ATEN_CPU_CAPABILITY={cb.lower()}")
    sa, sb = _get(ma, "numpy", "simd_targets") or [], _get(mb, "numpy", "simd_targets") or []
    extra = [t for t in sa if t not in sb]
    if extra and set(sb) <= set(sa):
        env.append(f'NPY_DISABLE_CPU_FEATURES="{" ".join(extra)}"')
    tb = _get(mb, "torch", "threads")
    if tb and tb != _get(ma, "torch", "threads"):
        env.append(f"OMP_NUM_THREADS={tb}")
    for var, value in mb.get("env", {}).items():
        if (
            var not in READ_FROM_PATHS
            and not var.endswith("NUM_THREADS")
            and ma.get("env", {}).get(var) != value
        ):
            env.append(f"{var}={value}")
    return " ".join(env) + " fpexplore fingerprint --out B-on-A.json" if env else ""


def compare(a: dict[str, Any], b: dict[str, Any]) -> Difference:
    """Compare fingerprints ``a`` and ``b`` (dicts from `fingerprint.take` or `.load`)."""
    a, b = check(a, "A"), check(b, "B")
    oa, ob = a["ops"], b["ops"]
    both = [k for k in oa if k in ob]
    differ = [k for k in both if oa[k]["digest"] != ob[k]["digest"]]
    rows = tuple(
        {
            "key": k,
            "op": oa[k].get("op"),
            "ulp_a": oa[k].get("max_ulp"),
            "ulp_b": ob[k].get("max_ulp"),
        }
        for k in differ
    )
    causes = _causes(a, b, set(differ)) if differ else []
    explained = {k for c in causes for k in c.explains}
    return Difference(
        str(a.get("label", "A")),
        str(b.get("label", "B")),
        rows,
        tuple(k for k in oa if k not in ob),
        tuple(k for k in ob if k not in oa),
        tuple(causes),
        tuple(k for k in differ if k not in explained),
        _reproduce(a, b) if differ else "",
        tuple(k for k in both if k not in differ),
    )
