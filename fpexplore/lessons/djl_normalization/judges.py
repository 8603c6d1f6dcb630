"""Myth 3, judged from the std stage: torch.std divides by N−1, DJL's idiom by N
(`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...judging import DEPENDS, FAILS, HOLDS, NotMeasured, Verdicts, decide, first, holds
from .pipelines import ulp_distance

if TYPE_CHECKING:
    from ...result import Comparison
    from .data import Classic


def _stds(classic: Classic) -> tuple[float, float]:
    """The two standard deviations the run divided by, read back from its normalized values:
    (x - mean) / z, at the value farthest from the mean: torch's (N−1) and DJL's (N)."""
    x = np.asarray(classic.x, dtype=np.float64)
    i = int(np.argmax(np.abs(x - x.mean())))
    dev = x[i] - x.mean()
    torch_z, djl_z = (
        float(np.asarray(z, dtype=np.float64).ravel()[i]) for z in (classic.torch, classic.djl)
    )
    return dev / torch_z, dev / djl_z


def std(c: Comparison) -> Verdicts:
    divisors = holds(c, "std_ddof", "std_djl_population")  # not measured without DJL
    classic = c.data.classic
    if classic is None or classic.djl is None or classic.torch is None:
        raise NotMeasured("the std run has no DJL or no torch values")
    s_torch, s_djl = _stds(classic)
    apart = abs(s_torch - s_djl) / min(abs(s_torch), abs(s_djl))
    definition = (
        f"torch's x.std() divides by N−1 and DJL's idiom by N ({s_torch:.4g} vs {s_djl:.4g} "
        f"here, {apart:.1%} apart): two definitions of the std (sample vs population), not "
        "rounding"
    )
    fixed = ""
    if classic.torch_fixed is not None:
        ulps = int(ulp_distance(classic.torch_fixed, classic.djl).max())
        fixed = "; with the same divisor (x.std(correction=0)) torch " + (
            "gives DJL's bits" if ulps == 0 else f"is within {ulps} ULP of DJL"
        )
    return decide(
        f"first normalized value: torch (x.std(), N−1) {first(classic.torch):.7g}, DJL "
        f"(idiom, N) {first(classic.djl):.7g}, torch x.std(correction=0) "
        f"{first(classic.torch_fixed):.7g}",
        (divisors and holds(c, "std_fix"), DEPENDS, "on the std asked for: " + definition + fixed),
        (divisors, HOLDS, definition + ", and no correction makes them agree"),
        otherwise=(FAILS, "both divide by the same N"),
    )
