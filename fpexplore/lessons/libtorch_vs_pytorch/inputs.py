"""The lesson's inputs: float32 arrays drawn by numpy from one seed (the same on every machine)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
