"""Random augmentation streams: DJL's flip decisions against torchvision's, for one seed.

DJL's ``RandomFlipLeftRight`` flips when ``nextFloat() > 0.5`` on a ``java.util.Random`` (a
48-bit LCG); torchvision's ``RandomHorizontalFlip`` flips when ``torch.rand(1) < p``, drawn from
torch's CPU generator (MT19937) after ``torch.manual_seed``. The JVM's stream is read from the
JVM worker, torchvision's from torchvision itself, image by image.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import BackendUnavailable, WorkerError
from ...judging import FAILS, HOLDS, NotMeasured, Verdicts, claim, decide
from ...result import Claim
from .._base import declare_texts

IMAGES = 64  # decisions per seed
SEEDS = 3  # the seed asked for and the next ones

CLAIMS = declare_texts(
    {
        "djl_flips_differ": "with the same seed, DJL's flip decisions (java.util.Random "
        "nextFloat() > 0.5) and torchvision's RandomHorizontalFlip (torch.rand(1) < 0.5 after "
        "torch.manual_seed) differ",
    },
    ("java", "torch", "torchvision"),
    test="tests/test_augment.py",
)


@dataclass(frozen=True)
class Flips:
    """Flip decisions per seed: DJL's (from the JVM's stream) and torchvision's."""

    seeds: list[int]
    djl: dict[int, list[bool]]
    torchvision: dict[int, list[bool]]

    def agree(self, seed: int) -> int:
        """Images on which both flip or both keep."""
        return sum(a == b for a, b in zip(self.djl[seed], self.torchvision[seed], strict=True))


def djl_decisions(floats: np.ndarray) -> list[bool]:
    """DJL's rule on a java.util.Random stream: flip where ``nextFloat() > 0.5``."""
    return [bool(f > np.float32(0.5)) for f in np.asarray(floats, np.float32)]


def torchvision_decisions(torch: Any, transforms: Any, seed: int, n: int) -> list[bool]:
    """torchvision's RandomHorizontalFlip on ``n`` 1×1×2 images [0, 1] after
    ``torch.manual_seed(seed)``: flipped where the output starts with 1."""
    flip = transforms.RandomHorizontalFlip(0.5)
    img = torch.tensor([[[0.0, 1.0]]])
    torch.manual_seed(seed)
    return [bool(flip(img)[0, 0, 0] == 1.0) for _ in range(n)]


def decide_claims(f: Flips) -> dict[str, Claim]:
    differ = [s for s in f.seeds if f.djl[s] != f.torchvision[s]]
    agree = ", ".join(f"{f.agree(s)}" for s in f.seeds)
    return {
        "djl_flips_differ": CLAIMS["djl_flips_differ"].claim(
            len(differ) == len(f.seeds),
            f" (seeds {', '.join(map(str, f.seeds))}: the two agree on {agree} of "
            f"{IMAGES} images, as two unrelated coin-flip streams would)",
        )
    }


def run(torch: Any, seed: int, java_floats: Any) -> tuple[dict[str, Claim], Flips | None]:
    """Both streams for ``SEEDS`` seeds from ``seed``; ``java_floats(seed, k)`` reads the JVM.
    A JVM or torchvision that fails here makes the claim "not checked" with why."""
    seeds = [s for s in range(seed, seed + SEEDS) if s < 2**63]
    try:
        from torchvision import transforms

        djl = {s: djl_decisions(java_floats(s, IMAGES)) for s in seeds}
    except (ImportError, BackendUnavailable, WorkerError) as exc:
        why = f"{type(exc).__name__}: {exc}"
        return {k: spec.not_checked(why) for k, spec in CLAIMS.items()}, None
    tv = {s: torchvision_decisions(torch, transforms, s, IMAGES) for s in seeds}
    f = Flips(seeds, djl, tv)
    return decide_claims(f), f


def judge(c: Any) -> Verdicts:
    """Myth: DJL's random augmentations cannot match Python's for the same seed."""
    differ = claim(c, "djl_flips_differ")
    f = getattr(c.data, "flips", None)
    if f is None:
        raise NotMeasured("the rng_seeds run has no augmentation streams")
    return decide(
        "flip decisions that agree, DJL vs torchvision: "
        + ", ".join(f"seed {s}: {f.agree(s)} of {len(f.djl[s])}" for s in f.seeds),
        (
            differ,
            HOLDS,
            "java.util.Random (a 48-bit LCG) and torch's MT19937 are different generators: "
            "the same seed gives unrelated flip decisions, matching only by chance",
        ),
        otherwise=(FAILS, "the flip decisions matched for a seed"),
    )
