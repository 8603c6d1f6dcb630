"""Error bounds of summation, checked live on one run: the textbook worst cases, the running-sum
bound of a loop, the stall of a low-precision loop and a wide accumulator's bound.

Every bound here is rigorous for round-to-nearest (Higham, *Accuracy and Stability of Numerical
Algorithms*, ch. 2 and 4): with ``gamma(k) = k·u / (1 - k·u)``, a left-to-right sum of n terms is
within ``gamma(n-1)·Σ|x|`` of the exact sum and a pairwise tree within
``gamma(ceil(log2 n))·Σ|x|``; each addition ``s + x`` rounds by at most ``u·|fl(s + x)|``, so a
loop is within ``u·Σ|running sums|``. Σ|x| is summed in float64; `SLACK` covers its own
rounding (relative error below 1e-14 for n ≤ 10^7), far below any bound's margin.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ... import formats
from ...result import Claim, Outcome

#: relative slack on bounds computed in float64 (Σ|x|, Σ|running sums|)
SLACK = 1 + 1e-12
#: significant bits of bfloat16: a term below half an ULP of the running sum changes nothing
BF16_BITS = 8


def unit_roundoff(dtype: str) -> float:
    """u = 2**-p for a format of p significand bits."""
    return formats.get(dtype).eps / 2


def gamma(k: int, u: float) -> float:
    """``k·u / (1 - k·u)``; infinite once ``k·u >= 1`` (the bound then says nothing)."""
    return math.inf if k * u >= 1 else k * u / (1 - k * u)


def _error(value: Any, exact: Fraction) -> float:
    """``|value - exact|`` as a float; NaN for a non-finite value."""
    v = float(value)
    return float(abs(Fraction(v) - exact)) if math.isfinite(v) else math.nan


def _scale(x: np.ndarray) -> float:
    return float(np.sum(np.abs(x.astype(np.float64))))


def _within(text: str, outcome: Outcome | None, exact: Fraction, bound: float) -> Claim:
    """``|outcome - exact| <= bound``, or not checked (did not run, overflowed, no bound)."""
    if outcome is None:
        return Claim.not_checked(text, "this run has no such result")
    if not outcome.ran:
        return Claim.not_checked(text, outcome.unavailable)
    err = _error(outcome.value, exact)
    if math.isnan(err):
        return Claim.not_checked(
            text, "the sum overflowed the format (the bounds assume no overflow)"
        )
    if math.isinf(bound):
        return Claim.not_checked(
            text, "the bound is infinite here (k·u ≥ 1): choose a smaller n or a wider dtype"
        )
    return Claim(f"{text}: {err:.3g} ≤ {bound:.3g}", err <= bound * SLACK)


def worst_case_claims(
    x: np.ndarray, dtype: str, exact: Fraction | None, by_name: dict[str, Outcome]
) -> dict[str, Claim]:
    """The textbook bounds on this run's sequential and pairwise emulations."""
    n, u = int(x.size), unit_roundoff(dtype)
    if exact is None or n == 0:
        return {}
    scale = _scale(x)
    depth = math.ceil(math.log2(n)) if n > 1 else 0
    return {
        "sequential_within_bound": _within(
            f"a left-to-right sum is within γ(n−1)·Σ|x| = {n - 1}·u/(1−{n - 1}·u)·Σ|x| of the "
            "exact sum (u = 2^-p of the format)",
            by_name.get("emulate sequential"),
            exact,
            gamma(n - 1, u) * scale,
        ),
        "pairwise_within_bound": _within(
            f"a pairwise tree is within γ(⌈log2 n⌉)·Σ|x| = {depth}·u/(1−{depth}·u)·Σ|x| of "
            "the exact sum: its error grows with the depth of the tree, not with n",
            by_name.get("emulate pairwise"),
            exact,
            gamma(depth, u) * scale,
        ),
    }


def running_sum_bound(x: np.ndarray, dtype: str) -> float:
    """``u·Σ|running sums|`` of a left-to-right loop in the input's format."""
    if x.size < 2:
        return 0.0
    partial = np.cumsum(x)[1:].astype(np.float64)
    return unit_roundoff(dtype) * float(np.sum(np.abs(partial)))


def java_claim(
    x: np.ndarray, dtype: str, exact: Fraction | None, java: Outcome | None
) -> tuple[dict[str, Claim], dict[str, float]]:
    """The Java loop's error against the running-sum bound, and the numbers behind it
    (relative to Σ|x|: the loop's error, its running-sum bound, the worst case (n−1)·u)."""
    text = (
        "the Java loop's error is at most u·Σ|running sums|: each addition rounds at the size "
        "of the running sum, so a sum that stays small (cancelling signs) stays accurate"
    )
    if exact is None or java is None or not java.ran:  # not run: not checked (`settle`)
        return {}, {}
    bound = running_sum_bound(x, dtype)
    claim = _within(text, java, exact, bound)
    scale = _scale(x)
    numbers: dict[str, float] = {}
    if scale > 0:
        numbers = {
            "loop error / Σ|x|": _error(java.value, exact) / scale,
            "u·Σ|running sums| / Σ|x|": bound / scale,
            "(n−1)·u": (x.size - 1) * unit_roundoff(dtype),
        }
    return {"java_running_sum_bound": claim}, numbers


def low_precision_claims(
    x: np.ndarray, dtype: str, exact: Fraction | None, by_name: dict[str, Outcome]
) -> tuple[dict[str, Claim], dict[str, float]]:
    """For float16/bfloat16: torch's float32 accumulator bound and (bfloat16) np.sum's stall."""
    if dtype not in ("float16", "bfloat16") or exact is None or x.size == 0:
        return {}, {}
    n, u, u32 = int(x.size), unit_roundoff(dtype), unit_roundoff("float32")
    scale = _scale(x)
    claims: dict[str, Claim] = {}
    numbers: dict[str, float] = {"exact sum": float(exact)}
    torch_ = by_name.get("torch.sum")
    if torch_ is not None:
        result = abs(float(torch_.value)) if torch_.ran else 0.0
        claims["torch_wide_accumulator"] = _within(
            f"torch.sum adds {dtype} in a float32 accumulator and rounds once: within "
            f"γ(n−1) of float32 ·Σ|x| + u·|result| (u of {dtype}) of the exact sum",
            torch_,
            exact,
            gamma(n - 1, u32) * scale + u * result,
        )
    if dtype == "bfloat16":
        top = float(np.max(np.abs(x.astype(np.float64))))
        # once |s| >= 2^e with 2^(e-8) > max|x| no term moves s: |s| < 2^e·(1 + 2^-7) <= 1024·max|x|
        stall = 2.0 ** (BF16_BITS + 2) * top
        numbers["stall limit 1024·max|x|"] = stall
        np_sum = by_name.get("np.sum")
        text = (
            "np.sum adds bfloat16 one term at a time in bfloat16 (8 significant bits): once the "
            "running sum is 2^8 times a term, adding it changes nothing, so |np.sum| never "
            "exceeds 1024·max|x| however many terms"
        )
        if np_sum is None or not np_sum.ran:
            claims["numpy_bfloat16_stalls"] = Claim.not_checked(
                text, np_sum.unavailable if np_sum else "np.sum did not run"
            )
        else:
            got = abs(float(np_sum.value))
            claims["numpy_bfloat16_stalls"] = Claim(
                f"{text}: {got:.6g} ≤ {stall:.6g} (exact sum {float(exact):.6g})",
                got <= stall,
            )
    return claims, numbers
