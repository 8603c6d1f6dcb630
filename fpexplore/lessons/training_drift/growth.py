"""Stable and unstable training: the growth rate of the distance between two runs, fitted by
least squares on its logarithm, and the study behind the lesson's claims (fixed settings,
several seeds, each model)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import models, store
from .data import Study
from .train import distance, flip_ulp, train

APART = 0.01  # runs this far apart (share of the weights' norm) have left each other
MIN_POINTS = 8  # fewest steps a rate is fitted on
#: the study's settings: the learning rate, steps and seeds every model is trained with
STUDY_LR, STUDY_STEPS, STUDY_SEEDS = 1.0, 300, (0, 1, 2)
STUDY_KEY = (STUDY_LR, STUDY_STEPS, *STUDY_SEEDS)  # the study's cache key
#: the perturbations of the study: (label, dtype of both runs, second run's chunks, flip)
STUDY_PAIRS = (
    ("one ulp (float32)", "float32", 1, True),
    ("summation order (float32)", "float32", 2, False),
    ("one ulp (float64)", "float64", 1, True),
)


def fit_rate(pair: Any, norm: Any) -> dict[str, Any]:
    """The growth rate (per step, natural log) of ``pair``, fitted on the steps where it is
    above zero and below `APART` of ``norm``; None where fewer than `MIN_POINTS` such steps.
    Also the step where it first reaches `APART` (None: never) and its largest share."""
    pair, norm = np.asarray(pair, np.float64), np.asarray(norm, np.float64)
    share = np.where(norm > 0, pair / np.where(norm > 0, norm, 1), np.inf)
    reached = np.flatnonzero(share >= APART)
    end = int(reached[0]) if reached.size else len(pair)
    steps = np.arange(len(pair))
    ok = (pair > 0) & np.isfinite(pair) & (steps < end) & (steps >= 1)
    rate = None
    if ok.sum() >= MIN_POINTS:
        rate = float(np.polyfit(steps[ok], np.log(pair[ok]), 1)[0])
    return {
        "rate": rate,
        "apart_at": int(reached[0]) if reached.size else None,
        "max_share": float(np.nanmax(share[1:])) if len(share) > 1 else 0.0,
        "final": float(pair[-1]),
        "start": float(pair[1]) if len(pair) > 1 else 0.0,
    }


def study() -> Study:
    """Every model, seed and perturbation of the study: the fitted growth of the distance."""

    def compute() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for model in models.MODELS:
            rows = []
            for seed in STUDY_SEEDS:
                data, w0 = models.dataset(model, seed), models.init(model, seed)
                runs = {}
                with np.errstate(over="ignore"):
                    for label, dtype, chunks, flip in STUDY_PAIRS:
                        if dtype not in runs:
                            ops = models.numpy_ops(dtype)
                            runs[dtype] = train(model, ops, w0, data, STUDY_LR, STUDY_STEPS)
                        start = flip_ulp(w0, 0, dtype) if flip else w0
                        ops = models.numpy_ops(dtype, chunks)
                        other = train(model, ops, start, data, STUDY_LR, STUDY_STEPS)
                        pair = distance(runs[dtype], other)
                        norm = np.linalg.norm(runs[dtype].weights, axis=1)
                        rows.append({"seed": seed, "pair": label, **fit_rate(pair, norm)})
            out[model] = rows
        return out

    return Study.from_dict(store.cached("study", STUDY_KEY, compute))
