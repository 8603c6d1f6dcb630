"""Exact results of the lesson's ops on the very input bits (`fpexplore.truth`)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ... import truth
from ...truth import Truth
from .inputs import Inputs


def grad(x: np.ndarray) -> Truth:
    """The exact gradient of ``(x @ x.T).sum()``: every row is twice the column sums of x.

    d/dx[a, b] of sum_ij sum_k x[i, k] x[j, k] is sum_j x[j, b] + sum_i x[i, b].
    """
    cols = truth.sum(x, axis=0).exact
    out = np.empty(x.shape, dtype=object)
    out[:] = [2 * c for c in cols]
    return Truth(f"grad of (x @ x.T).sum(), x float32[{x.shape[0]}x{x.shape[1]}]", exact=out)


def mlp(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray) -> Truth:
    """The exact real-number value of linear -> relu -> linear on the float32 weights."""
    ones = np.ones((x.shape[0], 1), dtype=np.float32)
    h = truth.matmul(np.hstack([x, ones]), np.vstack([w1.T, b1[None, :]])).exact
    h = np.where(h > 0, h, Fraction(0))  # relu, exactly
    w = np.vstack([w2.T, b2[None, :]]).astype(np.float64)
    wf = np.vectorize(Fraction, otypes=[object])(w)
    hf = np.hstack([h, np.full((h.shape[0], 1), Fraction(1), dtype=object)])
    out = hf.dot(wf)  # Fractions: exact
    return Truth(f"mlp float32 {x.shape} -> {w1.shape[0]} -> {w2.shape[0]}", exact=out)


def all_truths(inp: Inputs) -> dict[str, Truth]:
    """The exact result of each op, by op name (the loops share the sum's)."""
    s = truth.sum(inp.v)
    return {
        "mm": truth.matmul(inp.a, inp.b),
        "grad": grad(inp.x),
        "mlp": mlp(*inp.mlp),
        "sum": s,
        "loop_sum": s,
        "loop_sum_fastmath": s,
    }
