"""The lesson contract: declared parameters and claims, one `run`, and the text that
explains it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from .. import backends
from ..params import Param, validate_all
from ..result import Claim, Comparison, NoData, Observation


@dataclass(frozen=True)
class ClaimSpec:
    """A claim (or an observation) a lesson declares: its ``key``; its ``text`` as stated
    before anything is measured (`claim` appends the measured numbers); the parts it
    ``needs`` (backends by registry name, or other parts the lesson's ``missing`` names);
    where it ``applies``; and the ``test`` that decides it. Wherever a part it needs is
    missing it is "not checked", naming the part and its fix (`settle`)."""

    key: str
    text: str
    needs: tuple[str, ...] = ()
    applies: str = "every machine"
    test: str = ""
    #: stated only when the run meets its case (values that overshoot, say): never "not checked"
    occasional: bool = False

    def claim(self, holds: bool | None, measured: str = "", reason: str = "") -> Claim:
        """This claim decided: its text followed by ``measured`` (the numbers this run saw)."""
        return Claim(self.text + measured, holds, reason)

    def not_checked(self, reason: str) -> Claim:
        return Claim.not_checked(self.text, reason)

    def observe(self, value: Any, note: str = "", measured: str = "") -> Observation:
        """This observation made: its text followed by ``measured``, with its ``value``."""
        return Observation(self.text + measured, value, note)


def declare_texts(
    texts: Mapping[str, str],
    needs: tuple[str, ...] = (),
    by_key: Mapping[str, tuple[str, ...]] | None = None,
    **common: Any,
) -> dict[str, ClaimSpec]:
    """Claims ``{key: text}`` declared: each needs ``by_key[key]`` where given, else ``needs``;
    ``common`` (``applies``, ``test``) is the same for all."""
    by_key = by_key or {}
    return {k: ClaimSpec(k, t, by_key.get(k, needs), **common) for k, t in texts.items()}


#: parts made to look missing (`hidden`), to check that claims degrade to "not checked"
_HIDDEN: ContextVar[frozenset[str]] = ContextVar("hidden_parts", default=frozenset())


@contextmanager
def hidden(*parts: str) -> Iterator[None]:
    """Within the block, `settle` treats ``parts`` as missing."""
    token = _HIDDEN.set(_HIDDEN.get() | frozenset(parts))
    try:
        yield
    finally:
        _HIDDEN.reset(token)


def missing_part(
    needs: Iterable[str], missing: Callable[[str], str | None] | None = None
) -> str | None:
    """Why the first missing part of ``needs`` is missing, with its fix; None if all are here.
    ``missing(part)`` answers for parts the backends registry does not know (or overrides it)."""
    for part in needs:
        known = part in backends.names()
        if part in _HIDDEN.get():
            fix = backends.get(part).fix if known else "run where it is present"
            return f"{part} is missing (hidden). Fix: {fix}"
        why = missing(part) if missing is not None else None
        if why is None and known:
            why = backends.missing(part)
        if why:
            return why
    return None


def settle(
    specs: Iterable[ClaimSpec],
    decided: Mapping[str, Claim],
    missing: Callable[[str], str | None] | None = None,
) -> dict[str, Claim]:
    """The claims of ``specs``: where a part a claim needs is missing, "not checked" naming it
    and its fix (the one place this is produced); otherwise as ``decided`` (a declared claim
    the run did not decide is left out; an undeclared one is kept, for the contract to flag)."""
    specs = list(specs)
    out: dict[str, Claim] = {}
    for spec in specs:
        why = missing_part(spec.needs, missing)
        if why and not spec.occasional:
            out[spec.key] = spec.not_checked(why)
        elif spec.key in decided and not why:
            out[spec.key] = decided[spec.key]
    declared = {spec.key for spec in specs}
    return out | {k: c for k, c in decided.items() if k not in declared}


def not_checked_by_run(specs: Iterable[ClaimSpec], reason: str) -> dict[str, Claim]:
    """Every claim of ``specs`` "not checked" for ``reason``: something that happened in the
    run (a framework raised inside its kernel), where `settle` answers for missing parts."""
    return {spec.key: spec.not_checked(reason) for spec in specs}


@dataclass(frozen=True)
class Lesson:
    """A discrepancy lesson. ``compute(**validated_params)`` does the work and returns a
    `Comparison`; `run` validates first. ``figure(comparison)`` (optional) draws it with
    matplotlib and returns the figure. ``quick`` gives cheap parameter values (validated like
    any others) for smoke runs."""

    name: str
    title: str
    summary: str
    params: tuple[Param, ...]
    compute: Callable[..., Comparison]
    explanation: str = ""
    figure: Callable[[Comparison], Any] | None = None
    #: Cheap parameter values for smoke runs and the contract tests (the defaults otherwise).
    quick: Mapping[str, Any] = field(default_factory=dict)
    #: The claims the lesson states and the observations it shows (`ClaimSpec`), by key
    #: (no observations: it shows none).
    claims: Mapping[str, ClaimSpec] = field(default_factory=dict)
    observations: Mapping[str, ClaimSpec] = field(default_factory=dict)
    #: The type of ``Comparison.data`` (a frozen dataclass beside the lesson, or a tuple of
    #: them where the data's shape depends on a parameter): what figures, notebooks, the myths'
    #: judges and tests read by attribute.
    data: type | tuple[type, ...] = NoData

    def run(self, /, **params: Any) -> Comparison:
        """Validate ``params`` against the declarations (defaults filled in) and run."""
        return self.compute(**validate_all(self.params, params, f"lesson '{self.name}'"))

    @property
    def notebook(self) -> str:
        """The notebook that narrates this lesson, from the series' map ("" if none does)."""
        from ..workshop.plan import narrating

        return narrating(self.name)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(
            f"{name!r}; lesson {self.name!r} has: {', '.join(p.name for p in self.params)}"
        )

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}
