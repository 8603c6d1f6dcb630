"""The DirectML example as the articles write it, run today: its device string, and its
"drift", which compares chains built from different random matrices."""

from __future__ import annotations

from typing import Any

from ...result import Claim
from .._base import declare_texts

N, STEPS, SEEDS = 64, 100, 3

#: run through torch on this machine's CPU
CLAIMS = declare_texts(
    {
        "directml_device_raises": "torch.device('directml') raises: the DirectML plugin's "
        "device is 'privateuseone'",
        "article_drift_is_other_matrices": "the article's 'drift' compares chains of different "
        "random matrices: its gap dwarfs the rounding drift of one chain",
    },
    ("torch",),
    test="tests/test_gpu_lessons.py",
)


def _chain(torch: Any, mats: list[Any], dtype: Any) -> Any:
    x = torch.eye(N, dtype=dtype)
    for m in mats:
        x = x @ m.to(dtype)
    return x.double()


def article_claims(torch: Any, seed: int) -> tuple[dict[str, Claim], dict[str, Any]]:
    try:
        torch.device("directml")
        raised = ""
    except RuntimeError as exc:
        raised = " ".join(str(exc).split())[:300]
    private = str(torch.device("privateuseone"))
    gaps, drifts = [], []
    for s in range(seed, seed + SEEDS):
        # each "device" draws its own matrices after manual_seed: torch's CPU (MT19937) and
        # accelerator (Philox) generators give different numbers for one seed, so the two
        # chains multiply different matrices; a second seed stands for the other stream
        mats = []
        for k in (s, s + 10_000):
            g = torch.Generator().manual_seed(k)
            mats.append([torch.randn(N, N, generator=g) / N**0.5 for _ in range(STEPS)])
        a32, b32 = _chain(torch, mats[0], torch.float32), _chain(torch, mats[1], torch.float32)
        a64 = _chain(torch, mats[0], torch.float64)  # the same matrices, rounded far less
        gaps.append(float((a32 - b32).norm() / b32.norm()))
        drifts.append(float((a32 - a64).norm() / a64.norm()))
    ratio = min(g / d for g, d in zip(gaps, drifts, strict=True))
    claims = {
        "directml_device_raises": CLAIMS["directml_device_raises"].claim(
            bool(raised) and private == "privateuseone",
            f" (today: {raised or 'it did not raise'}; torch_directml.device() is {private!r})",
        ),
        "article_drift_is_other_matrices": CLAIMS["article_drift_is_other_matrices"].claim(
            ratio > 1e3,
            f" (each device's {STEPS} matrices come from its own generator: the chains' "
            f"relative gap is {min(gaps):.3g} to {max(gaps):.3g}, one chain's float32 drift "
            f"against float64 {min(drifts):.2g} to {max(drifts):.2g}, at least {ratio:.3g} "
            f"times smaller; {SEEDS} seeds, {N}×{N})",
        ),
    }
    data = {"article_drift": {"gap": gaps, "drift": drifts}, "directml_error": raised}
    return claims, data
