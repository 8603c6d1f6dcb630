"""Seeding with DataLoader workers (live, CPU) and across GPUs and CUDA streams (live on a
machine with two CUDA devices, else not measurable here)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from ... import backends
from ...result import Claim
from ...result.spec import declare_texts

ITEMS, WORKERS = 8, 2

TEXTS = {
    "workers_reproduce_with_seed": (
        "a DataLoader with worker processes gives the same torch, "
        "numpy and random draws in every run when torch.manual_seed (or a generator) is set first, "
        "with or without worker_init_fn",
        ": {workers} worker processes, {items} items each drawing "
        "from torch, numpy and random: two runs after torch.manual_seed give the same draws bit "
        "for bit, without worker_init_fn, with torch's seed_worker, and with a seeded generator= "
        "(torch seeds every worker's torch, random and numpy from a base seed)",
    ),
    "workers_distinct_streams": (
        "each worker gets its own torch, numpy and random streams "
        "(no duplicated numpy draws across workers)",
        ": the {workers} workers share no draw of torch, "
        "numpy or random, each gets base seed + worker id (torch ≥ 1.9 seeds numpy per worker too)",
    ),
    "workers_change_the_numbers": (
        "the same seed gives other draws with num_workers > 0 than "
        "with num_workers = 0, and a second unseeded pass other draws than the first",
        ": num_workers = {workers} against 0 (each iterator draws a new base seed)",
    ),
    "seeding_two_gpus": (
        "manual_seed gives cuda:0 and cuda:1 the same stream, and a rand on a "
        "second CUDA stream reproduces the default stream's",
        " ({note})",
    ),
}
_TEST = "tests/test_rng_seeds.py"
#: the DataLoader claims (the two-GPU one is an observation here, decided from a record)
CLAIMS = declare_texts(
    {k: t for k, t in TEXTS.items() if k != "seeding_two_gpus"}, ("torch",), test=_TEST
)
CLAIMS |= declare_texts(
    {"seeding_two_gpus": TEXTS["seeding_two_gpus"]}, test=_TEST, occasional=True
)


class Draws:
    """A dataset whose items are draws from the three global generators of the process that
    loads them (a module-level class: worker processes must be able to import it)."""

    def __len__(self) -> int:
        return ITEMS

    def __getitem__(self, i: int) -> Any:
        torch = backends.load("torch")

        info = torch.utils.data.get_worker_info()
        return np.array(
            [
                float(torch.rand(1)),
                np.random.random(),
                random.random(),
                -1.0 if info is None else info.id,
            ]
        )


def seed_worker(_: int) -> None:
    """The worker_init_fn torch's reproducibility notes give."""
    torch = backends.load("torch")

    s = torch.initial_seed() % 2**32
    np.random.seed(s)
    random.seed(s)


def _load(torch: Any, workers: int, seed: int | None, gen: bool, init: bool) -> np.ndarray:
    if seed is not None and not gen:
        torch.manual_seed(seed)
    loader = torch.utils.data.DataLoader(
        Draws(),
        batch_size=2,
        num_workers=workers,
        worker_init_fn=seed_worker if init else None,
        generator=torch.Generator().manual_seed(seed) if gen and seed is not None else None,
        multiprocessing_context="fork" if workers else None,
    )
    return torch.cat([b.reshape(-1, 4) for b in loader]).numpy()


def _two_gpus(torch: Any, seed: int) -> tuple[bool | None, str]:
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        return None, (
            "not measurable here: it needs two CUDA devices (this machine has "
            f"{torch.cuda.device_count() if torch.cuda.is_available() else 0}); the two-GPU "
            "record is kept apart from this live run"
        )
    torch.manual_seed(seed)
    a = torch.rand(4096, device="cuda:0").cpu()
    torch.manual_seed(seed)
    b = torch.rand(4096, device="cuda:1").cpu()
    torch.manual_seed(seed)
    s = torch.cuda.Stream(device="cuda:0")
    with torch.cuda.stream(s):
        c = torch.rand(4096, device="cuda:0")
    s.synchronize()
    ok = bool(torch.equal(a, b) and torch.equal(a, c.cpu()))
    return ok, "cuda:0, cuda:1 and a second stream on cuda:0, 4096 values each"


def worker_claims(torch: Any, seed: int) -> tuple[dict[str, Claim], str | None]:
    """The DataLoader claims; ``seeding_two_gpus`` only where two CUDA devices decide it, else
    (the second item) why it is not measurable here."""
    seed = seed % 2**31
    runs = {
        "plain": [_load(torch, WORKERS, seed, False, False) for _ in range(2)],
        "init_fn": [_load(torch, WORKERS, seed, False, True) for _ in range(2)],
        "generator": [_load(torch, WORKERS, seed, True, False) for _ in range(2)],
    }
    reproduce = all(a.tobytes() == b.tobytes() for a, b in runs.values())
    first = runs["plain"][0]
    by_worker = [first[first[:, 3] == w, :3] for w in range(WORKERS)]
    distinct = all(
        not np.intersect1d(by_worker[0][:, j], by_worker[1][:, j]).size for j in range(3)
    )
    main = _load(torch, 0, seed, False, False)
    torch.manual_seed(seed)
    unseeded = [_load(torch, WORKERS, None, False, False) for _ in range(2)]
    change = not np.array_equal(main[:, 0], first[:, 0]) and not np.array_equal(
        unseeded[0][:, :3], unseeded[1][:, :3]
    )
    gpus, gpu_note = _two_gpus(torch, seed)
    holds = {
        "workers_reproduce_with_seed": reproduce,
        "workers_distinct_streams": distinct,
        "workers_change_the_numbers": change,
    }
    claims = {k: CLAIMS[k].claim(h, workers=WORKERS, items=ITEMS) for k, h in holds.items()}
    if gpus is None:  # the place of the two-GPU record: said, never judged from a stand-in
        return claims, gpu_note
    claims["seeding_two_gpus"] = CLAIMS["seeding_two_gpus"].claim(gpus, note=gpu_note)
    return claims, None
