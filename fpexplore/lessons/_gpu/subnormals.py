"""The subnormal battery: float32 products and sums that touch subnormals, and the breaking
inputs (−0.0, NaN, the smallest normal and subnormal). Shared by the CPU's flush-to-zero flag
(`cpu_vs_accelerator.cpu_modes`) and the CUDA kernels built with -ftz=true (`libtorch_vs_pytorch.
cuda_kernels`), so both run the same rows.
"""

from __future__ import annotations

import numpy as np

SEEDS = (0, 1, 2, 3)
N_RANDOM = 64  # random rows of each kind per seed
TINY = float(np.finfo(np.float32).tiny)  # 2**-126, the smallest normal float32


def battery(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Operands (float32) and op per row: random products landing in the subnormal range,
    subnormal inputs scaled back to normal, sums of subnormals, and the breaking inputs."""
    g = np.random.Generator(np.random.PCG64(seed))
    # products: |a·b| between 2**-149 and 2**-127
    ea = g.integers(-75, -60, N_RANDOM)
    eb = -g.integers(128, 149, N_RANDOM) - ea
    sign = np.where(g.random(N_RANDOM) < 0.5, -1.0, 1.0)
    pa = (sign * g.uniform(1, 2, N_RANDOM) * 2.0**ea).astype(np.float32)
    pb = (g.uniform(1, 2, N_RANDOM) * 2.0**eb).astype(np.float32)
    # subnormal inputs: x·2**30 is normal, x + y is subnormal or just normal
    bits = g.integers(1, 1 << 23, 2 * N_RANDOM).astype(np.uint32).view(np.float32)
    sa, sb = bits[:N_RANDOM], bits[N_RANDOM:]
    edge_a = np.array([-0.0, np.nan, TINY, TINY, 2.0**-149, 1.0, -(2.0**-75)], np.float32)
    edge_b = np.array([1.0, 1.0, 0.5, 1.0, 1.0, 2.0**-149, 2.0**-75], np.float32)
    a = np.concatenate([pa, sa, sa, edge_a])
    b = np.concatenate([pb, np.full(N_RANDOM, 2.0**30, np.float32), sb, edge_b])
    op = np.array(["*"] * N_RANDOM + ["*"] * N_RANDOM + ["+"] * N_RANDOM + ["*"] * len(edge_a))
    return a, b, op


def exact(a: np.ndarray, b: np.ndarray, op: np.ndarray) -> np.ndarray:
    """a·b or a + b in float64: exact for float32 operands (48 significant bits at most for a
    product, and no float64 underflow for these exponents)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(op == "*", a64 * b64, a64 + b64)
