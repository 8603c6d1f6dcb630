"""``compare --check``: the fingerprint taken again here, in a fresh process under the
environment `compare` suggests, and compared with B again: which differences it removed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import fresh
from .causes import get
from .reproduce import assignments


@dataclass(frozen=True)
class Check:
    """A rerun here under ``env``: differences removed, still there, and new ones, with the
    causes of those that remain."""

    env: tuple[tuple[str, str], ...]
    before: int
    removed: tuple[str, ...]
    remain: tuple[str, ...]
    new: tuple[str, ...]
    causes: tuple[Any, ...]
    unexplained: tuple[str, ...]
    #: how this machine differs from A's record ('' when it is A's CPU and versions)
    not_a: str = ""

    def text(self) -> str:
        under = assignments(dict(self.env)) or "no variable"
        out = [
            f"checked here, in a fresh process under {under}: removed {len(self.removed)} of "
            f"{self.before} differences; {len(self.remain)} remain"
            + (f": {', '.join(self.remain)}" if self.remain else "")
        ]
        if self.not_a:
            out.append(f"  note: this machine is not A ({self.not_a})")
        if self.new:
            out.append(f"  new differences here: {', '.join(self.new)}")
        for c in self.causes:
            out.append(f"  remaining cause: {c.name}: {c.detail} — explains {len(c.explains)}")
        if self.unexplained:
            out.append(f"  remaining, not explained: {', '.join(self.unexplained)}")
        return "\n".join(out)


def check_here(
    diff: Any,
    a: dict[str, Any],
    b: dict[str, Any],
    env: dict[str, str],
    compare: Callable[[dict[str, Any], dict[str, Any]], Any],
) -> Check:
    """Take the fingerprint here under ``env`` (`fresh.fingerprint`) and ``compare`` it with
    ``b``; ``diff`` is the comparison of ``a`` and ``b`` it checks."""
    here = fresh.fingerprint(env, "A here under the suggested environment")
    after = compare(here, b)
    before = set(diff.differs)
    still = set(after.differs)
    return Check(
        tuple(env.items()),
        len(before),
        tuple(k for k in diff.differs if k not in still),
        tuple(k for k in after.differs if k in before),
        tuple(k for k in after.differs if k not in before),
        after.causes,
        after.unexplained,
        _not_a(here["machine"], a["machine"]),
    )


def _not_a(here: dict[str, Any], a: dict[str, Any]) -> str:
    """How the machine here differs from A's record: its CPU and library versions."""
    fields = [("cpu",), ("cpu_flags",), ("torch", "version"), ("numpy", "version")]
    fields.append(("tensorflow", "version"))
    out = []
    for path in fields:
        vh, va = get(here, *path), get(a, *path)
        if vh is not None and va is not None and vh != va:
            name = ".".join(path)
            out.append(f"{name} here {vh}, A {va}" if path != ("cpu_flags",) else "other CPU flags")
    return "; ".join(out)
