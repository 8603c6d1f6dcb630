"""The DirectML example as the articles write it, run today: its device string, and its
"drift", which compares chains built from different random matrices."""

from __future__ import annotations

from typing import Any

from ...result import Claim

N, STEPS, SEEDS = 64, 100, 3

TEXTS = {
    "directml_device_raises": "torch.device('directml') raises: the DirectML plugin's device "
    "is 'privateuseone'",
    "article_drift_is_other_matrices": "the article's 'drift' compares chains of different "
    "random matrices: its gap dwarfs the rounding drift of one chain",
}


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
        "directml_device_raises": Claim(
            f"torch.device('directml') raises today ({raised or 'it did not raise'}); the "
            f"DirectML plugin registers its device as {private!r} (torch_directml.device())",
            bool(raised) and private == "privateuseone",
        ),
        "article_drift_is_other_matrices": Claim(
            f"the article's example draws each device's {STEPS} matrices from that device's "
            f"own generator, so its two chains multiply different matrices: their relative gap "
            f"is {min(gaps):.3g} to {max(gaps):.3g}, while one chain's float32 rounding drift "
            f"against the same matrices in float64 is {min(drifts):.2g} to {max(drifts):.2g} "
            f"(at least {ratio:.3g} times smaller; {SEEDS} seeds, {N}×{N}): the gap is not drift",
            ratio > 1e3,
        ),
    }
    data = {"article_drift": {"gap": gaps, "drift": drifts}, "directml_error": raised}
    return claims, data
