"""The lesson contract: declared parameters, one `run`, and the text that explains it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..params import Param, validate_all
from ..result import Comparison


@dataclass(frozen=True)
class Lesson:
    """A discrepancy lesson. ``compute(**validated_params)`` does the work and returns a
    `Comparison`; `run` validates first. ``figure(comparison)`` (optional) draws it with
    matplotlib and returns the figure. ``notebook`` names the notebook that narrates it;
    ``quick`` gives cheap parameter values (validated like any others) for smoke runs."""

    name: str
    title: str
    summary: str
    params: tuple[Param, ...]
    compute: Callable[..., Comparison]
    explanation: str = ""
    figure: Callable[[Comparison], Any] | None = None
    notebook: str = ""
    #: Cheap parameter values for smoke runs and the contract tests (the defaults otherwise).
    quick: Mapping[str, Any] = field(default_factory=dict)

    def run(self, /, **params: Any) -> Comparison:
        """Validate ``params`` against the declarations (defaults filled in) and run."""
        return self.compute(**validate_all(self.params, params, f"lesson '{self.name}'"))

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(
            f"{name!r}; lesson {self.name!r} has: {', '.join(p.name for p in self.params)}"
        )

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}
