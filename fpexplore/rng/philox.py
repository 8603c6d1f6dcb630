"""torch's CUDA ``rand``, rebuilt: Philox4x32-10 (Salmon et al. 2011) and curand's layout.

``torch.manual_seed(seed); torch.rand(n, device="cuda")`` (float32) runs ATen's
``distribution_elementwise_grid_stride_kernel`` (``DistributionTemplates.h``): blocks of 256
threads, at most ``sm_count * (max_threads_per_sm // 256)`` blocks; thread ``t`` calls
``curand_init(seed, subsequence=t, offset)`` and draws ``curand_uniform4`` (one Philox block,
four words) per loop step; element ``step * stride * 4 + t + stride * j`` takes word ``j``
(``stride`` = threads in the grid). A word ``w`` becomes ``float(w) * 2**-32 + 2**-33`` in
float32 (curand's (0, 1]), and torch maps 1.0 to 0.0. Only numpy here; checked bit for bit
against a recorded GPU run in the tests.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidParameter

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = np.uint32(0x9E3779B9), np.uint32(0xBB67AE85)
_LOW = np.uint64(0xFFFFFFFF)
BLOCK = 256


def philox4x32_10(counter: np.ndarray, key: tuple[int, int]) -> np.ndarray:
    """Philox4x32-10 of ``counter`` (shape (m, 4), uint32) under ``key`` -> (m, 4) uint32."""
    c = np.asarray(counter, dtype=np.uint32)
    x, y, z, w = (c[:, i].astype(np.uint64) for i in range(4))
    k0, k1 = np.uint32(key[0] & 0xFFFFFFFF), np.uint32(key[1] & 0xFFFFFFFF)
    with np.errstate(over="ignore"):
        for r in range(10):
            if r:
                k0, k1 = k0 + _W0, k1 + _W1
            p0, p1 = _M0 * x, _M1 * z
            x, y, z, w = (
                (p1 >> np.uint64(32)) ^ y ^ np.uint64(k0),
                p1 & _LOW,
                (p0 >> np.uint64(32)) ^ w ^ np.uint64(k1),
                p0 & _LOW,
            )
    return np.stack([x, y, z, w], axis=1).astype(np.uint32)


def curand_uniform(words: np.ndarray) -> np.ndarray:
    """curand's float uniform in (0, 1]: ``float(w) * 2**-32 + 2**-33``, float32 arithmetic."""
    f = np.asarray(words, dtype=np.uint32).astype(np.float32)
    return f * np.float32(2.0**-32) + np.float32(2.0**-33)


def grid_threads(n: int, sm_count: int, max_threads_per_sm: int = 2048) -> int:
    """Threads ATen launches for ``n`` elements on a GPU with ``sm_count`` SMs."""
    blocks = min((n + BLOCK - 1) // BLOCK, sm_count * (max_threads_per_sm // BLOCK))
    return blocks * BLOCK


def torch_cuda_rand(seed: int, n: int, sm_count: int, max_threads_per_sm: int = 2048) -> np.ndarray:
    """``torch.manual_seed(seed); torch.rand(n, device="cuda")`` (float32) on a GPU with
    ``sm_count`` SMs (the first draw after seeding: Philox offset 0)."""
    for name, v, low in (("n", n, 1), ("sm_count", sm_count, 1), ("seed", seed, 0)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < low:
            raise InvalidParameter(name, v, f"an int >= {low}")
    seed = int(seed) & (2**64 - 1)
    stride = grid_threads(n, sm_count, max_threads_per_sm)
    steps = (n - 1) // (stride * 4) + 1
    t = np.arange(stride, dtype=np.uint64)
    out = np.empty(n, dtype=np.float32)
    for step in range(steps):
        ctr = np.zeros((stride, 4), dtype=np.uint32)
        ctr[:, 0] = step  # one Philox block per thread and loop step
        ctr[:, 2] = (t & _LOW).astype(np.uint32)
        ctr[:, 3] = (t >> np.uint64(32)).astype(np.uint32)
        u = curand_uniform(philox4x32_10(ctr, (seed & 0xFFFFFFFF, seed >> 32)))
        u[u == np.float32(1)] = np.float32(0)  # torch reverses curand's (0, 1] to [0, 1)
        for j in range(4):
            idx = step * stride * 4 + np.arange(stride) + stride * j
            keep = idx < n
            out[idx[keep]] = u[keep, j]
    return out
