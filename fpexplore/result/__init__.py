"""The shape every lesson answers in: one computation, several implementations, one truth."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..truth.value import Truth

Kind = Literal["framework", "emulator", "reference", "recorded"]


@dataclass(frozen=True)
class Outcome:
    """What one implementation produced, and its error against the truth; ``unavailable``
    (``value`` None) says why it could not run and which command makes it run."""

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
    #: the a-priori bound on |value - truth|, per element or one for all, where the lesson
    #: derives one: a row within it is a correct floating-point result, shown as one
    bound: Any = None

    @property
    def ran(self) -> bool:
        return self.unavailable is None

    def with_bound(self, bound: Any) -> Outcome:
        """This outcome with its a-priori error bound (`bound`) attached."""
        from dataclasses import replace

        return replace(self, bound=bound)

    @cached_property
    def within_bound(self) -> bool | None:
        """Whether every element's error is within `bound` (None: no bound or no error);
        computed once per outcome (the table, the bar and the note all read it)."""
        if self.bound is None or self.error is None or not self.ran:
            return None
        import numpy as np

        with np.errstate(invalid="ignore"):
            err = np.abs(self.error.abs_error())
            try:
                return bool(np.all(err <= np.asarray(self.bound, dtype=np.float64)))
            except ValueError:  # a bound of another shape: not this row's
                return False

    @classmethod
    def measured(
        cls,
        implementation: str,
        backend: str,
        value: Any,
        truth: Truth | None,
        *,
        at: Any = None,
        **kw: Any,
    ) -> Outcome:
        """An outcome whose error against ``truth`` is computed now (``at``: the magnitudes
        whose ULP counts the errors, `fpexplore.metrics.measure`)."""
        from .. import metrics

        err = metrics.measure(value, truth, at=at) if truth is not None else None
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
        if self.bound is not None:
            d["bound"] = jsonable(self.bound)
            d["within_bound"] = self.within_bound
        d["value"] = jsonable(self.value)
        d["error"] = self.error.to_dict() if self.error is not None else None
        return d


class State(StrEnum):
    """What a run made of a claim (the value is what pages and records show)."""

    HOLDS = "holds"
    FAILS = "fails"
    NOT_CHECKED = "not checked"

    @classmethod
    def of(cls, holds: bool | None) -> State:
        return cls.NOT_CHECKED if holds is None else cls.HOLDS if holds else cls.FAILS

    @classmethod
    def counts(cls, states: Any = ()) -> dict[str, int]:
        """``{state: how many}`` of ``states`` (each a `State` or its value), every state
        present."""
        out = {s.value: 0 for s in cls}
        for s in states:
            out[cls(s).value] += 1
        return out


@dataclass(frozen=True)
class Claim:
    """A sentence the lesson states, true on every machine, and what this run made of it:
    ``holds`` True, False or None (not checked; ``reason`` names the missing part and the
    command that gets it, or why a claim failed)."""

    text: str
    holds: bool | None
    reason: str = ""

    def __post_init__(self) -> None:
        if self.holds is not None:
            object.__setattr__(self, "holds", bool(self.holds))  # numpy bools too

    @property
    def state(self) -> State:
        return State.of(self.holds)

    def line(self, key: str) -> str:
        """``[holds] key: text`` (with the reason when it failed or was not checked)."""
        mark = "FAILS" if self.holds is False else self.state.value
        return f"[{mark}] {key}: {self.text}" + (f" ({self.reason})" if self.reason else "")

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value
        return {"text": self.text, "holds": self.holds, "state": state, "reason": self.reason}


@dataclass(frozen=True)
class Observation:
    """A finding that depends on the machine (which CPU, which card, which algorithm cuDNN
    picked): shown with its value, never as a failure."""

    text: str
    value: Any
    note: str = ""

    def line(self, key: str) -> str:
        return f"[observed] {key}: {self.text}: {_short(self.value)}" + (
            f" ({self.note})" if self.note else ""
        )

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "value": jsonable(self.value), "note": self.note}


@dataclass(frozen=True)
class NoData:
    """The data of a comparison that carries nothing beyond its outcomes and claims."""


@dataclass(frozen=True)
class Comparison:
    """A lesson's result: truth, outcomes, the claims it checked, and data for its figures."""

    #: the lesson and its validated parameters (`Lesson.run` fills them in)
    lesson: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    truth: Truth | None = None
    outcomes: tuple[Outcome, ...] = ()
    claims: Mapping[str, Claim] = field(default_factory=dict)
    #: the lesson's typed data (`Lesson.data`, a frozen dataclass): what its figure draws
    data: Any = field(default_factory=NoData)
    explanation: str = ""
    observations: Mapping[str, Observation] = field(default_factory=dict)
    #: why a part the lesson's claims need is missing in this run, by part (beside the
    #: backends registry's answer; an empty reason: the part is here): `Lesson.run` settles
    #: the claims with it
    missing: Mapping[str, str] = field(default_factory=dict)

    def outcome(self, implementation: str) -> Outcome:
        for o in self.outcomes:
            if o.implementation == implementation:
                return o
        names = ", ".join(o.implementation for o in self.outcomes)
        raise KeyError(f"no outcome named {implementation!r}; this comparison has: {names}")

    def claim(self, key: str) -> Claim:
        """Claim ``key`` of this run; an unknown key raises KeyError naming the known ones."""
        if key not in self.claims:
            raise KeyError(f"no claim {key!r}; this run states: {', '.join(self.claims)}")
        return self.claims[key]

    def holds(self, key: str) -> bool | None:
        """Whether claim ``key`` held in this run, None if it was not checked."""
        return claim_holds(self.claims, key)

    def check(self, *keys: str, listed: bool = False, decided: bool = False) -> None:
        """Print and assert claims ``keys`` (all when none are named); see `check_claims`.
        ``listed``: the comparison's table above already lists them: assert them and say so in
        one line instead of printing each again. ``decided``: assert only the claims this run
        decided; each other is printed with why it was not checked (what this machine lacks),
        so that a notebook runs on to its end."""
        if decided:
            keys = keys or tuple(self.claims)
            for key in () if listed else keys:  # a table above lists them with the reason
                if self.claims.get(key) is not None and self.claims[key].holds is None:
                    self.show(key)
            keys = tuple(
                k for k in keys if k not in self.claims or self.claims[k].holds is not None
            )
            if not keys:
                return
        check_claims(self.lesson, self.claims, keys, self.observations, listed=listed)

    def with_claims(self, *keys: str) -> Comparison:
        """This comparison showing only claims ``keys``: for a section that shows one part of
        a lesson whose every run states all its claims (each section lists its own once)."""
        from dataclasses import replace

        unknown = [k for k in keys if k not in self.claims]
        if unknown:
            raise KeyError(f"no claim {unknown[0]!r}; claims: {', '.join(self.claims)}")
        return replace(self, claims={k: self.claims[k] for k in keys}, observations={})

    def show(self, *keys: str) -> None:
        """Print observations (or claims) ``keys`` the way `check` prints them, wrapped to a
        notebook's width; nothing is asserted (an observation depends on the machine)."""
        from .text_table import wrapped

        for key in keys:
            item = self.observations.get(key) or self.claims.get(key)
            if item is None:
                names = ", ".join([*self.observations, *self.claims])
                raise KeyError(f"no observation or claim {key!r}; there are: {names}")
            print(wrapped(item.line(key)))

    def rows(self) -> list[dict[str, str]]:
        """One display row per outcome (text table, HTML, widgets)."""
        from .html import _is_integer, meaning, value_text
        from .numbers import bits_text, ulp_text

        rows = []
        for o in self.outcomes:
            err = o.error if o.ran and not _is_integer(o.value) else None  # levels: see the note
            within = "within its a-priori bound" if o.within_bound else ""
            notes = [o.unavailable] if not o.ran else [o.note, within, meaning(o)]
            rows.append(
                {
                    "implementation": o.implementation,
                    "kind": o.kind,
                    "device": o.device,
                    "value": "—" if not o.ran else value_text(o.value),
                    "ulp error": "—" if err is None else ulp_text(err, o.value, o.within_bound),
                    "rel error": "—" if err is None else f"{err.max_rel:.3g}",
                    "bits": "—" if err is None else bits_text(err.min_bits, err.fmt),
                    "note": "; ".join(n for n in notes if n),
                }
            )
        return rows

    def table(self, wide: bool = False, width: int | None = None, claims: bool = True) -> str:
        """A plain-text table of the truth, the outcomes and the claims, no line longer than
        ``width`` (default `text_table.COLUMNS`) unless ``wide``; ``claims=False`` leaves the
        claims and observations out."""
        from .text_table import COLUMNS, comparison_text

        return comparison_text(
            self, wide=wide, width=COLUMNS if width is None else width, claims=claims
        )

    def _repr_html_(self) -> str:
        from .html import comparison_html

        return comparison_html(self)

    def to_dict(self) -> dict[str, Any]:
        truth = None
        if self.truth is not None:
            truth = {
                "label": self.truth.label,
                "exact": self.truth.is_exact,
                "digits": None if self.truth.is_exact else self.truth.digits,
                "value": jsonable(self.truth.mp()),
            }
        return {
            "lesson": self.lesson,
            "params": {k: jsonable(v) for k, v in self.params.items()},
            "truth": truth,
            "outcomes": [o.to_dict() for o in self.outcomes],
            "claims": {k: c.to_dict() for k, c in self.claims.items()},
            "observations": {k: o.to_dict() for k, o in self.observations.items()},
            "explanation": self.explanation,
        }

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)


def claim_holds(claims: Mapping[str, Claim], key: str) -> bool | None:
    """Whether claim ``key`` held, None if it was not checked (KeyError lists the claims)."""
    if key not in claims:
        raise KeyError(f"no claim {key!r}; claims: {', '.join(claims)}")
    return claims[key].holds


def check_claims(
    owner: str,
    claims: Mapping[str, Claim],
    keys: tuple[str, ...],
    observations: Mapping[str, Observation] | None = None,
    listed: bool = False,
) -> None:
    """Print and assert ``claims`` ``keys`` (all when none are named); ``owner`` names the
    lesson or tool in the error. Raises KeyError for an unknown key, `ClaimFailed` (a failed
    claim) and `ClaimNotChecked` (both AssertionErrors). Observations are printed (when no key
    is named), never asserted. ``listed``: the claims are on screen already (a comparison's
    table): one line says they were asserted, instead of each claim and observation again."""
    from ..errors import ClaimFailed, ClaimNotChecked
    from .text_table import wrapped

    unknown = [k for k in keys if k not in claims]
    if unknown:
        raise KeyError(f"no claim {unknown[0]!r}; claims: {', '.join(claims)}")
    picked = keys or tuple(claims)
    for key in () if listed else picked:
        print(wrapped(claims[key].line(key)))
    if not keys and not listed:
        for key, obs in (observations or {}).items():
            print(wrapped(obs.line(key)))
    for key in picked:
        claim = claims[key]
        if claim.holds is None:
            raise ClaimNotChecked(owner, key, claim)
        if not claim.holds:
            raise ClaimFailed(owner, key, claim)
    if listed:
        n = len(picked)
        verb = "holds" if n == 1 else "hold"
        print(f"checked: the {n} claim{'s' * (n != 1)} asserted here, listed above, {verb}")


def _short(v: Any) -> str:
    import numpy as np  # here, so that `import fpexplore` stays cheap

    if isinstance(v, Mapping):  # a value per case: "case: value; ..." (never a dict's repr)
        return "; ".join(f"{k}: {_short(x)}" for k, x in v.items())
    arr = np.asarray(v)
    if arr.ndim == 0:
        item = arr.item()
        return repr(item) if isinstance(item, float) else str(item)
    flat = arr.ravel()
    head = ", ".join(f"{float(x):.6g}" for x in flat[:3])
    return f"{arr.dtype}{list(arr.shape)} [{head}{', …' if flat.size > 3 else ''}]"


def jsonable(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    import numpy as np  # here, so that `import fpexplore` stays cheap

    if isinstance(v, np.ndarray):
        if v.ndim == 0:
            return jsonable(v[()])
        if v.dtype == object:
            return [jsonable(x) for x in v.tolist()]
        if v.size > 64:
            return {
                "dtype": str(v.dtype),
                "shape": list(v.shape),
                "head": [jsonable(float(x)) for x in v.ravel()[:8]],
            }
        return (
            [jsonable(x) for x in v.astype(np.float64).tolist()]
            if v.dtype.kind == "f"
            else v.tolist()
        )
    if isinstance(v, np.generic):
        return jsonable(v.item())
    if isinstance(v, list | tuple):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    return str(v)
