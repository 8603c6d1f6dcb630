"""How the GPU lessons present what they found, the same way in each: the comparison (no single
truth; for a recorded run, what differs on the other recorded card) and the figure's banner."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from typing import Any

from ...result import Claim, Comparison, Observation, Outcome
from .cards import OTHER_CARD, other_card

#: what a GPU lesson may observe beside its own findings (`comparison`)
OBSERVATIONS = {OTHER_CARD.key: OTHER_CARD}


def comparison(
    src: Any,
    outcomes: Iterable[Outcome],
    claims: Mapping[str, Claim],
    data: Any,
    explanation: str,
    observations: Mapping[str, Observation] | None = None,
    missing: Mapping[str, str] | None = None,
) -> Comparison:
    """A GPU lesson's result from the run ``src`` (a `source.Source`): no single truth (each
    op has its own); a recorded run also observes what differs on another card. ``missing``:
    why a part the claims need is missing (`Comparison.missing`)."""
    seen = {**(observations or {}), **other_card(src)}
    return Comparison(
        outcomes=tuple(outcomes),
        claims=claims,
        data=data,
        explanation=explanation,
        observations=seen,
        missing=missing or {},
    )


def with_banner(fig: Any, banner: str, fontsize: int = 9) -> Any:
    """``fig`` titled with the run's banner (what ran where, wrapped to the figure's width) and
    laid out."""
    # wrapped to the figure's width (about 0.6 em a character), so that no line is cut
    chars = max(40, min(140, int(fig.get_figwidth() * 72 / (fontsize * 0.6))))
    fig.suptitle(textwrap.fill(banner, chars), fontsize=fontsize)
    fig.tight_layout()
    return fig
