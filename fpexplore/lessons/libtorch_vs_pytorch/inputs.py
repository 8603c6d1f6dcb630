"""The lesson's inputs: float32 arrays drawn by numpy from one seed (the same on every machine),
and the exact results of the lesson's ops on them (`fpexplore.truth`)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ... import truth
from ...truth import Truth

MLP_SHAPE = (8, 32, 64, 10)  # batch, inputs, hidden units, outputs
RNG_N = 1000  # elements drawn by torch.randn / torch::randn


@dataclass(frozen=True)
class Inputs:
    """``a``, ``b``: the mm operands; ``x``: the autograd input; ``mlp``: (x, w1, b1, w2, b2);
    ``v``: the vector summed; ``seed``: also the torch seed of the RNG part."""

    seed: int
    a: np.ndarray
    b: np.ndarray
    x: np.ndarray
    mlp: tuple[np.ndarray, ...]
    v: np.ndarray

    def for_op(self, op: str) -> list[np.ndarray]:
        """The arrays op ``op`` takes, in the order the C++ program and Python take them."""
        return {
            "mm": [self.a, self.b],
            "grad": [self.x],
            "mlp": list(self.mlp),
            "sum": [self.v],
            "loop_sum": [self.v],
            "loop_sum_fastmath": [self.v],
        }[op]


def make(seed: int, size: int, sum_length: int) -> Inputs:
    """Standard normal float32 inputs; the MLP's weights scaled like torch's default init."""
    gen = np.random.default_rng(seed)

    def normal(*shape: int) -> np.ndarray:
        return gen.standard_normal(shape, dtype=np.float32)

    batch, n_in, hidden, n_out = MLP_SHAPE
    mlp = (
        normal(batch, n_in),
        normal(hidden, n_in) / np.float32(np.sqrt(n_in)),
        normal(hidden) / np.float32(np.sqrt(n_in)),
        normal(n_out, hidden) / np.float32(np.sqrt(hidden)),
        normal(n_out) / np.float32(np.sqrt(hidden)),
    )
    return Inputs(
        seed, normal(size, size), normal(size, size), normal(size, size), mlp, normal(sum_length)
    )


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
