"""The table of Summers & Dinneen (ICML 2021), small and live: for each source of
nondeterminism, models trained with only that source varied, and their diversity (the spread
of test accuracy, how often two models disagree on a test point, how far apart their weights
end)."""

from __future__ import annotations

from dataclasses import asdict
from itertools import combinations
from typing import Any

import numpy as np

from . import models, store
from .data import Diversity
from .train import flip_ulp, train, unflatten

#: the table's settings: the model (the unstable one), learning rate, steps, dropout rate of
#: the last hidden layer, models per source and the seeds each row is repeated with
MODEL, LR, STEPS, DROPOUT, N_MODELS, BASE_SEEDS = "rnn", 1.0, 150, 0.1, 10, (0, 1, 2)
#: the numpy-only sources, each within a factor of "all together" in the claim
SINGLE = ("init seed", "shuffle seed", "dropout seed", "one bit", "summation order")
FACTOR = 3.0  # the stated tolerance: "same order" means within this factor
NUMPY_KEY = (MODEL, LR, STEPS, DROPOUT, N_MODELS, *BASE_SEEDS)  # the numpy rows' cache key


def _setting(source: str, base: int, i: int) -> dict[str, Any]:
    """The i-th model of ``source``'s row on base seed ``base``: what differs from model 0."""
    s = {"init": base, "shuffle": base, "dropout": base, "flip": None, "chunks": 1}
    seed = 1000 * (base + 1) + i
    if source in ("init seed", "all together"):
        s["init"] = seed
    if source in ("shuffle seed", "all together"):
        s["shuffle"] = seed
    if source in ("dropout seed", "all together"):
        s["dropout"] = seed
    if source in ("one bit", "all together") and i > 0:
        s["flip"] = i - 1
    if source in ("summation order", "all together"):
        s["chunks"] = i + 1
    return s


def _train_one(s: dict[str, Any], data: dict[str, np.ndarray], ops: models.Ops) -> np.ndarray:
    w0 = models.init(MODEL, s["init"])
    if s["flip"] is not None:
        w0 = flip_ulp(w0, s["flip"])
    with np.errstate(over="ignore"):
        run = train(
            MODEL,
            ops,
            w0,
            data,
            LR,
            STEPS,
            shuffle_seed=s["shuffle"],
            dropout=DROPOUT,
            dropout_seed=s["dropout"],
        )
    return run.weights[-1]


def diversity(final: list[np.ndarray], data: dict[str, np.ndarray]) -> Diversity:
    """Spread of a set of trained models: std of test accuracy (ddof 1), mean pairwise
    disagreement on test points, mean pairwise weight distance over the mean weight norm."""
    like = models.init(MODEL, 0)
    preds, accs = [], []
    for w in final:
        p = models.predict(MODEL, unflatten(w, like), data["x_test"]) > 0.5
        preds.append(p)
        accs.append(float((p == data["y_test"]).mean()))
    pairs = list(combinations(range(len(final)), 2))
    norm = float(np.mean([np.linalg.norm(w) for w in final]))
    return Diversity(
        models=len(final),
        accuracy=float(np.mean(accs)),
        acc_std=float(np.std(accs, ddof=1)) if len(accs) > 1 else 0.0,
        disagreement=float(np.mean([(preds[i] != preds[j]).mean() for i, j in pairs])),
        weight_distance=float(
            np.mean([np.linalg.norm(final[i] - final[j]) for i, j in pairs]) / norm
        ),
    )


def numpy_rows(progress: Any = None) -> dict[str, list[Diversity]]:
    """The numpy rows (every source but the framework), one entry per base seed."""

    def compute() -> dict[str, Any]:
        out: dict[str, list[dict[str, float]]] = {}
        for source in (*SINGLE, "all together"):
            out[source] = []
            for base in BASE_SEEDS:
                data = models.dataset(MODEL, base)
                final = []
                for i in range(N_MODELS):
                    s = _setting(source, base, i)
                    final.append(_train_one(s, data, models.numpy_ops("float32", s["chunks"])))
                    if progress is not None:
                        progress()
                out[source].append(asdict(diversity(final, data)))
        return out

    kept = store.cached("table", NUMPY_KEY, compute)
    return {source: [Diversity(**r) for r in rows] for source, rows in kept.items()}


def framework_row(torch: Any) -> list[Diversity]:
    """numpy and torch (float32, one thread) from the same weights, per base seed."""

    def compute() -> dict[str, Any]:
        out = []
        for base in BASE_SEEDS:
            data = models.dataset(MODEL, base)
            s = _setting("framework", base, 0)
            with models.one_torch_thread(torch):
                ran = _train_one(s, data, models.torch_ops(torch))
            final = [_train_one(s, data, models.numpy_ops("float32")), ran]
            out.append(asdict(diversity(final, data)))
        return {"rows": out}

    kept = store.cached("framework", framework_key(torch), compute)
    return [Diversity(**r) for r in kept["rows"]]


def framework_key(torch: Any) -> tuple[Any, ...]:
    """The cache key of the framework row (per torch version)."""
    return (MODEL, LR, STEPS, DROPOUT, *BASE_SEEDS, torch.__version__)


def work() -> int:
    """How many models the numpy rows train (for a progress bar)."""
    return len((*SINGLE, "all together")) * len(BASE_SEEDS) * N_MODELS


def summary(rows: list[Diversity], key: str) -> tuple[float, float, float]:
    """The mean over base seeds of field ``key``, and its smallest and largest value."""
    vals = [getattr(r, key) for r in rows]
    return float(np.mean(vals)), float(min(vals)), float(max(vals))
