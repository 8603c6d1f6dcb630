"""Two fingerprints compared: which results differ, how far each side is from the exact truth,
and the causes the fingerprints show (`causes`): a version of the result's library first, then
the paths inside the libraries (TensorFlow's oneDNN state, ATen's CPU path, numpy's SIMD
targets, MKL's branch and CBWR mode, OpenBLAS's core kernel, oneDNN's ISA, effective thread
counts), then the card. What no recorded path explains is listed as not explained, with the
differences that may reach it (the CPU, a variable whose effect is not recorded). Where the
cause is a switch, the comparison gives the command that confirms it, and the environment that
reproduces the other machine's paths here (`reproduce`; `--check` tries it: `recheck`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import InvalidParameter
from . import reproduce as _reproduce
from .causes import Cause, find
from .fingerprint import check
from .record import Fingerprint

__all__ = ["Cause", "Difference", "compare"]


@dataclass(frozen=True)
class Row:
    """A result whose bits differ: its key and op, each side's max error (ULPs; None: no truth)."""

    key: str
    op: str | None
    ulp_a: float | None
    ulp_b: float | None


@dataclass(frozen=True)
class Difference:
    """The comparison: differing results, results on one side only, the ranked causes."""

    a_label: str
    b_label: str
    rows: tuple[Row, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    causes: tuple[Cause, ...]
    unexplained: tuple[str, ...]
    reproduce: str = ""
    same: tuple[str, ...] = ()
    #: differences that may reach the unexplained results, whose effect is not recorded
    suspects: tuple[Cause, ...] = ()
    #: the variables of `reproduce`, and B's paths that no variable on A reaches
    reproduce_env: tuple[tuple[str, str], ...] = ()
    unreachable: tuple[str, ...] = ()
    #: the result of ``--check`` (`recheck.Check`), when asked for
    checked: Any = None

    @property
    def differs(self) -> tuple[str, ...]:
        return tuple(r.key for r in self.rows)

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
            w = max(len(r.key) for r in self.rows)
            for r in self.rows:
                a, b = _ulp(r.ulp_a), _ulp(r.ulp_b)
                out.append(f"  {r.key:{w}s}  A {a:>10s}   B {b:>10s}")
        for side, keys in (("A", self.only_a), ("B", self.only_b)):
            if keys:
                out.append(f"only in {side}: {', '.join(keys)}")
        if self.causes:
            out.append("causes the fingerprints show (versions first, then paths, then cards):")
            for n, c in enumerate(self.causes, 1):
                out.append(f"  {n}. {c.name}: {c.detail} — explains {len(c.explains)}")
                if c.confirm:
                    out.append(f"     {c.confirm}")
        if self.unexplained:
            out.append(
                f"not explained by any recorded path ({len(self.unexplained)}): "
                + ", ".join(self.unexplained)
            )
            for c in self.suspects:
                out.append(f"  may reach {len(c.explains)} of them: {c.name}: {c.detail}")
        if self.reproduce:
            out.append(f"to reproduce B's paths here on A: {self.reproduce}")
        out += [f"  not reachable by a switch: {note}" for note in self.unreachable]
        if self.checked is not None:
            out.append(self.checked.text())
        return "\n".join(out)

    def html(self) -> str:
        """The comparison as an HTML fragment (the report includes it)."""
        from ..templates import render

        return render("dispatch_compare.html", c=self, ulp=_ulp)

    _repr_html_ = html


def _ulp(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"


FingerprintLike = Fingerprint | dict[str, Any]


def compare(a: FingerprintLike, b: FingerprintLike, check_here: bool = False) -> Difference:
    """Compare fingerprints ``a`` and ``b`` (`Fingerprint`s, or dicts from `fingerprint.take`
    or `.load`); with ``check_here``, also take the fingerprint here under the suggested
    environment in a fresh process and say which differences it removed (`recheck`)."""
    if not isinstance(check_here, bool):
        raise InvalidParameter("check_here", check_here, "True or False", "fpexplore.compare")
    a, b = check(a, "A"), check(b, "B")
    oa, ob = a["ops"], b["ops"]
    both = [k for k in oa if k in ob]
    differ = [k for k in both if oa[k]["digest"] != ob[k]["digest"]]
    rows = tuple(
        Row(k, oa[k].get("op"), oa[k].get("max_ulp"), ob[k].get("max_ulp")) for k in differ
    )
    causes, suspects = find(a, b, set(differ)) if differ else ([], [])
    explained = {k for c in causes for k in c.explains}
    unexplained = tuple(k for k in differ if k not in explained)
    env, notes = _reproduce.environment(a["machine"], b["machine"]) if differ else ({}, [])
    diff = Difference(
        str(a.get("label", "A")),
        str(b.get("label", "B")),
        rows,
        tuple(k for k in oa if k not in ob),
        tuple(k for k in ob if k not in oa),
        tuple(causes),
        unexplained,
        _reproduce.command(env),
        tuple(k for k in both if k not in differ),
        tuple(
            replace(c, explains=tuple(k for k in c.explains if k in unexplained))
            for c in suspects
            if set(c.explains) & set(unexplained)
        ),
        tuple(env.items()),
        tuple(notes),
    )
    if check_here:
        from .recheck import check_here as rerun

        diff = replace(diff, checked=rerun(diff, a, b, env, compare))
    return diff
