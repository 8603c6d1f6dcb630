"""Myth 3, judged from the std stage: torch.std divides by N−1, DJL's idiom by N
(`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, NotMeasured, Verdicts, decide, first, holds

if TYPE_CHECKING:
    from ...result import Comparison


def std(c: Comparison) -> Verdicts:
    divisors = holds(c, "std_ddof", "std_djl_population")  # not measured without DJL
    classic = c.data.classic
    if classic is None or classic.djl is None or classic.torch is None:
        raise NotMeasured("the std run has no DJL or no torch values")
    return decide(
        f"first normalized value: torch (x.std(), N−1) {first(classic.torch):.7g}, DJL "
        f"(idiom, N) {first(classic.djl):.7g}, torch x.std(correction=0) "
        f"{first(classic.torch_fixed):.7g}",
        (
            divisors and holds(c, "std_fix"),
            DEPENDS,
            "on the divisor: torch.std divides by N−1, DJL's idiom and np.std by N; with the "
            "same divisor the results agree to 1 ULP",
        ),
        (divisors, HOLDS, "the divisors differ and no correction makes them agree"),
        otherwise=(FAILS, "both divide by the same N"),
    )
