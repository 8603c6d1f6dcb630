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

from ...result import Claim, Outcome
from ...tolerance import gamma, unit_roundoff
from .._base import declare_texts

#: relative slack on bounds computed in float64 (Σ|x|, Σ|running sums|)
SLACK = 1 + 1e-12
#: significant bits of bfloat16: a term below half an ULP of the running sum changes nothing
BF16_BITS = 8


def _error(value: Any, exact: Fraction) -> float:
    """``|value - exact|`` as a float; NaN for a non-finite value."""
    v = float(value)
    return float(abs(Fraction(v) - exact)) if math.isfinite(v) else math.nan


def _scale(x: np.ndarray) -> float:
    return float(np.sum(np.abs(x.astype(np.float64))))


#: The bound claims, as stated before measuring; each needs its result measured against its
#: bound (the part named here: "not checked" where it did not run, overflowed or the bound is
#: infinite). Each is decided where the run meets its case (an exact sum; a half format).
PARTS = {
    "sequential_within_bound": "sequential bound",
    "pairwise_within_bound": "pairwise bound",
    "java_running_sum_bound": "java bound",
    "torch_wide_accumulator": "torch float32 accumulator",
    "numpy_bfloat16_stalls": "np.sum in bfloat16",
}
#: each bound claim's bound, named as the numbers after its text show it (both sides absolute,
#: in the sum's own units)
BOUNDS = {
    "sequential_within_bound": "γ(n−1)·Σ|x|",
    "pairwise_within_bound": "γ(⌈log2 n⌉)·Σ|x|",
    "java_running_sum_bound": "u·Σ|running sums|",
    "torch_wide_accumulator": "γ(n−1)·Σ|x| + u·|result|",
}
CLAIMS = declare_texts(
    {
        "sequential_within_bound": "a left-to-right sum is within γ(n−1)·Σ|x| = "
        "(n−1)·u/(1−(n−1)·u)·Σ|x| of the exact sum (u = 2^-p of the format)",
        "pairwise_within_bound": "a pairwise tree is within γ(⌈log2 n⌉)·Σ|x| of the exact sum: "
        "its error grows with the depth of the tree, not with n",
        "java_running_sum_bound": "the Java loop's error is at most u·Σ|running sums|: each "
        "addition rounds at the size of the running sum, so a sum that stays small "
        "(cancelling signs) stays accurate",
        "torch_wide_accumulator": "torch.sum adds a half format in a float32 accumulator and "
        "rounds once: within γ(n−1) of float32 ·Σ|x| + u·|result| (u of the half format) of "
        "the exact sum",
        "numpy_bfloat16_stalls": "np.sum adds bfloat16 one term at a time in bfloat16 (8 "
        "significant bits): once the running sum is 2^8 times a term, adding it changes "
        "nothing, so |np.sum| never exceeds 1024·max|x| however many terms",
    },
    by_key={
        **{k: (p,) for k, p in PARTS.items()},
        "java_running_sum_bound": ("java", "java run", PARTS["java_running_sum_bound"]),
    },
    test="tests/test_summation_order.py",
)


def _within(
    outcome: Outcome | None, exact: Fraction, bound: float, name: str
) -> tuple[bool | None, str]:
    """(``|outcome - exact| <= bound``, the numbers, each named: the error and the bound
    ``name``), or (None, why it cannot be decided: it did not run, it overflowed, the bound is
    infinite)."""
    if outcome is None:
        return None, "this run has no such result"
    if not outcome.ran:
        return None, outcome.unavailable or ""
    err = _error(outcome.value, exact)
    if math.isnan(err):
        return None, (
            "the sum overflowed the format (the bounds assume no overflow). Fix: choose a "
            "smaller n or a wider dtype"
        )
    if math.isinf(bound):
        return (
            None,
            "the bound is infinite here (k·u ≥ 1). Fix: choose a smaller n or a wider dtype",
        )
    return err <= bound * SLACK, f": |sum − exact| = {err:.3g} ≤ {name} = {bound:.3g}"


def _decide(
    key: str, outcome: Outcome | None, exact: Fraction, bound: float, why: dict[str, str], note=""
) -> dict[str, Claim]:
    """Claim ``key`` decided against its bound; where it cannot be, ``why`` says so for its part."""
    holds, said = _within(outcome, exact, bound, BOUNDS[key])
    if holds is None:
        why[PARTS[key]] = said
        return {}
    return {key: CLAIMS[key].claim(holds, note + said)}


def running_sum_bound(x: np.ndarray, dtype: str) -> float:
    """``u·Σ|running sums|`` of a left-to-right loop in the input's format."""
    if x.size < 2:
        return 0.0
    partial = np.cumsum(x)[1:].astype(np.float64)
    return unit_roundoff(dtype) * float(np.sum(np.abs(partial)))


def claims(
    x: np.ndarray,
    dtype: str,
    exact: Fraction | None,
    by_name: dict[str, Outcome],
    why: dict[str, str],
) -> tuple[dict[str, Claim], dict[str, float], dict[str, float]]:
    """The bounds this run meets, decided (``why`` gets the parts that could not be), and the
    numbers behind the Java loop's (relative to Σ|x|: its error, its running-sum bound, the
    worst case (n−1)·u) and a half format's (`_low_precision`)."""
    n = int(x.size)
    if exact is None or n == 0:
        return {}, {}, {}
    scale, u = _scale(x), unit_roundoff(dtype)
    depth = math.ceil(math.log2(n)) if n > 1 else 0
    seq, pair = by_name.get("emulate sequential"), by_name.get("emulate pairwise")
    found = {
        **_decide("sequential_within_bound", seq, exact, gamma(n - 1, dtype) * scale, why),
        **_decide("pairwise_within_bound", pair, exact, gamma(depth, dtype) * scale, why),
    }
    running: dict[str, float] = {}
    java = by_name.get("Java float loop")
    if java is not None and java.ran:  # not run: not checked (`settle`)
        bound = running_sum_bound(x, dtype)
        found |= _decide("java_running_sum_bound", java, exact, bound, why)
        if scale > 0:
            running = {
                "loop error / Σ|x|": _error(java.value, exact) / scale,
                "u·Σ|running sums| / Σ|x|": bound / scale,
                "(n−1)·u": (n - 1) * u,
            }
    if dtype not in ("float16", "bfloat16"):
        return found, running, {}
    low_claims, low = _low_precision(x, dtype, exact, by_name, why)
    return found | low_claims, running, low


def _low_precision(
    x: np.ndarray, dtype: str, exact: Fraction, by_name: dict[str, Outcome], why: dict[str, str]
) -> tuple[dict[str, Claim], dict[str, float]]:
    """For float16/bfloat16: torch's float32 accumulator bound and (bfloat16) np.sum's stall."""
    n, u = int(x.size), unit_roundoff(dtype)
    scale = _scale(x)
    found: dict[str, Claim] = {}
    numbers: dict[str, float] = {"exact sum": float(exact)}
    torch_ = by_name.get("torch.sum")
    if torch_ is not None:
        result = abs(float(torch_.value)) if torch_.ran else 0.0
        bound = gamma(n - 1, "float32") * scale + u * result
        found |= _decide("torch_wide_accumulator", torch_, exact, bound, why, f" ({dtype})")
    if dtype == "bfloat16":
        top = float(np.max(np.abs(x.astype(np.float64))))
        # once |s| >= 2^e with 2^(e-8) > max|x| no term moves s: |s| < 2^e·(1 + 2^-7) <= 1024·max|x|
        stall = 2.0 ** (BF16_BITS + 2) * top
        numbers["stall limit 1024·max|x|"] = stall
        np_sum = by_name.get("np.sum")
        if np_sum is None or not np_sum.ran:
            why[PARTS["numpy_bfloat16_stalls"]] = (
                np_sum.unavailable or "" if np_sum else "np.sum did not run"
            )
        else:
            got = abs(float(np_sum.value))
            found["numpy_bfloat16_stalls"] = CLAIMS["numpy_bfloat16_stalls"].claim(
                got <= stall,
                f": |np.sum| = {got:.6g} ≤ 1024·max|x| = {stall:.6g} "
                f"(exact sum {float(exact):.6g})",
            )
    return found, numbers
