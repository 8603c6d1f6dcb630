"""The lesson contract: declared parameters and claims, one `run`, and the text that
explains it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from .. import backends
from ..params import Param, validate_all
from ..result import Claim, Comparison, NoData
from ..result.spec import ClaimSpec, declare_texts
from ._gpu.recording import GpuExperiment

__all__ = [
    "ClaimSpec",
    "Lesson",
    "declare_texts",
    "hidden",
    "missing_part",
    "missing_parts",
    "settle",
    "torch_threads",
]


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


@contextmanager
def torch_threads(torch: Any, n: int) -> Iterator[int]:
    """Within the block torch runs on ``n`` intra-op threads (yields the count it really runs
    with); the count before is restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


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


def missing_parts(specs: Iterable[ClaimSpec], why: Callable[[str], str | None]) -> dict[str, str]:
    """``why(part)`` asked for every part ``specs`` need: ``{part: why}`` of those it names
    missing (what a compute returns as `Comparison.missing`)."""
    parts = dict.fromkeys(p for spec in specs for p in spec.needs)
    return {p: w for p in parts if (w := why(p))}


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

    #: the declared claims a run at the given (validated) parameters states, where that
    #: depends on them (a section's, an option's); None: every declared claim
    stated_by: Callable[[Mapping[str, Any]], Iterable[ClaimSpec]] | None = None
    #: what ``fpexplore record gpu`` records for this lesson on a GPU (None: nothing)
    gpu_experiment: GpuExperiment | None = None

    def run(self, /, **params: Any) -> Comparison:
        """Validate ``params`` against the declarations (defaults filled in), compute, and
        settle the claims (`settle`, with the parts the run found missing): the comparison
        names this lesson and the validated parameters."""
        values = validate_all(self.params, params, f"lesson '{self.name}'")
        c = self.compute(**values)
        claims = settle(self.stated(values), c.claims, lambda part: c.missing.get(part) or None)
        return replace(c, lesson=self.name, params=values, claims=claims, missing={})

    def stated(self, values: Mapping[str, Any]) -> list[ClaimSpec]:
        """The declared claims a run at ``values`` states (`stated_by`)."""
        if self.stated_by is None:
            return list(self.claims.values())
        return list(self.stated_by(values))

    @property
    def notebook(self) -> str:
        """The notebook that narrates this lesson, from the series' map ("" if none does)."""
        from ..series import narrating

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
