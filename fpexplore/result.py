"""The shape every lesson answers in: one computation, several implementations, one truth."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .truth.value import Truth

Kind = Literal["framework", "emulator", "reference", "recorded"]


@dataclass(frozen=True)
class Outcome:
    """What one implementation produced, and its error against the truth.

    ``unavailable`` is set (and ``value`` is None) when it could not run: the text says why
    and which command makes it run.
    """

    implementation: str
    backend: str
    kind: Kind = "framework"
    value: Any = None
    version: str = ""
    device: str = "cpu"
    settings: Mapping[str, Any] = field(default_factory=dict)
    error: Any = None  # fpexplore.metrics.ErrorSummary
    unavailable: str | None = None
    note: str = ""

    @property
    def ran(self) -> bool:
        return self.unavailable is None

    @classmethod
    def measured(
        cls, implementation: str, backend: str, value: Any, truth: Truth | None, **kw: Any
    ) -> Outcome:
        """An outcome whose error against ``truth`` is computed now."""
        from . import metrics

        err = metrics.measure(value, truth) if truth is not None else None
        return cls(implementation, backend, value=value, error=err, **kw)

    @classmethod
    def missing(cls, implementation: str, backend: str, reason: str, **kw: Any) -> Outcome:
        return cls(implementation, backend, unavailable=reason, **kw)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "implementation": self.implementation,
            "backend": self.backend,
            "kind": self.kind,
            "version": self.version,
            "device": self.device,
            "settings": dict(self.settings),
            "unavailable": self.unavailable,
            "note": self.note,
        }
        d["value"] = _jsonable(self.value)
        d["error"] = self.error.to_dict() if self.error is not None else None
        return d


@dataclass(frozen=True)
class Claim:
    """A sentence the lesson states, and whether the run just made it true."""

    text: str
    holds: bool


@dataclass(frozen=True)
class Comparison:
    """A lesson's result: truth, outcomes, the claims it checked, and data for its figures."""

    lesson: str
    params: Mapping[str, Any]
    truth: Truth | None
    outcomes: tuple[Outcome, ...]
    claims: Mapping[str, Claim] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)
    explanation: str = ""

    def outcome(self, implementation: str) -> Outcome:
        for o in self.outcomes:
            if o.implementation == implementation:
                return o
        names = ", ".join(o.implementation for o in self.outcomes)
        raise KeyError(f"no outcome named {implementation!r}; this comparison has: {names}")

    def holds(self, key: str) -> bool:
        """Whether claim ``key`` held in this run (KeyError lists the claims if unknown)."""
        if key not in self.claims:
            raise KeyError(f"no claim {key!r}; claims: {', '.join(self.claims)}")
        return self.claims[key].holds

    def rows(self) -> list[dict[str, str]]:
        """One display row per outcome (shared by the text table, HTML and widgets)."""
        rows = []
        for o in self.outcomes:
            err = o.error
            rows.append(
                {
                    "implementation": o.implementation,
                    "kind": o.kind,
                    "device": o.device,
                    "value": "—" if not o.ran else _short(o.value),
                    "ulp error": "—"
                    if err is None
                    else _fmt(err.max_abs_ulp, signed=err.ulp_scalar),
                    "rel error": "—" if err is None else f"{err.max_rel:.3g}",
                    "bits": "—" if err is None else f"{err.min_bits:.1f}",
                    "note": o.unavailable or o.note,
                }
            )
        return rows

    def table(self) -> str:
        """A plain-text table of the outcomes, the truth and the claims."""
        rows = self.rows()
        cols = list(rows[0]) if rows else []
        widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
        if cols:  # the last column is not padded: its rule need not span the longest note
            widths[cols[-1]] = len(cols[-1])
        cells = [dict(zip(cols, cols, strict=True)), {c: "-" * widths[c] for c in cols}, *rows]
        lines = ["  ".join(r[c].ljust(widths[c]) for c in cols).rstrip() for r in cells]
        if self.truth is not None:
            lines.insert(0, f"truth: {self.truth!r}")
        for key, claim in self.claims.items():
            lines.append(f"[{'holds' if claim.holds else 'FAILS'}] {key}: {claim.text}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = self.rows()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in (rows[0] if rows else []))
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r.values()) + "</tr>"
            for r in rows
        )
        truth = f"<p><b>truth</b>: {html.escape(repr(self.truth))}</p>" if self.truth else ""
        claims = "".join(
            f"<li>{'✔' if c.holds else '✘'} {html.escape(c.text)}</li>"
            for c in self.claims.values()
        )
        return f"{truth}<table><tr>{head}</tr>{body}</table><ul>{claims}</ul>"

    def to_dict(self) -> dict[str, Any]:
        truth = None
        if self.truth is not None:
            truth = {
                "label": self.truth.label,
                "exact": self.truth.is_exact,
                "digits": None if self.truth.is_exact else self.truth.digits,
                "value": _jsonable(self.truth.mp()),
            }
        return {
            "lesson": self.lesson,
            "params": {k: _jsonable(v) for k, v in self.params.items()},
            "truth": truth,
            "outcomes": [o.to_dict() for o in self.outcomes],
            "claims": {k: {"text": c.text, "holds": c.holds} for k, c in self.claims.items()},
        }

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)


def _fmt(x: float, signed: float | None = None) -> str:
    v = signed if signed is not None else x
    return f"{v:+.3g}" if math.isfinite(v) else str(v)


def _short(v: Any) -> str:
    import numpy as np  # here, so that `import fpexplore` stays cheap

    arr = np.asarray(v)
    if arr.ndim == 0:
        item = arr.item()
        return repr(item) if isinstance(item, float) else str(item)
    flat = arr.ravel()
    head = ", ".join(f"{float(x):.6g}" for x in flat[:3])
    return f"{arr.dtype}{list(arr.shape)} [{head}{', …' if flat.size > 3 else ''}]"


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    import numpy as np  # here, so that `import fpexplore` stays cheap

    if isinstance(v, np.ndarray):
        if v.dtype == object:
            return [_jsonable(x) for x in v.tolist()]
        if v.size > 64:
            return {
                "dtype": str(v.dtype),
                "shape": list(v.shape),
                "head": [_jsonable(float(x)) for x in v.ravel()[:8]],
            }
        return (
            [_jsonable(x) for x in v.astype(np.float64).tolist()]
            if v.dtype.kind == "f"
            else v.tolist()
        )
    if isinstance(v, np.generic):
        return _jsonable(v.item())
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)
