"""Random number generators rebuilt from their definitions, independent of numpy's and torch's.

- `MT19937` (mt19937.py): the Mersenne Twister behind ``torch.manual_seed`` on CPU, numpy's
  legacy ``RandomState`` and Python's ``random``; seeded by ``init_genrand`` (torch, numpy)
  or ``init_by_array`` (Python).
- `TorchCPURandom` (torch_cpu.py): torch's CPU ``rand``/``randn`` from those words.
- `torch_cuda_rand` (philox.py): torch's CUDA ``rand`` from Philox4x32-10 and curand's layout.
- `JavaRandom` (java.py): ``java.util.Random``'s 48-bit LCG.
- Word-to-float mappings: how each stack turns random integers into floats in [0, 1).
"""

from __future__ import annotations

import numpy as np

from .java import JavaRandom
from .mt19937 import MT19937, init_by_array, init_genrand
from .philox import torch_cuda_rand
from .torch_cpu import TorchCPURandom, float32_from_u32, float64_from_u32_pairs

__all__ = [
    "MT19937",
    "JavaRandom",
    "TorchCPURandom",
    "float32_from_u32",
    "float64_from_u32_pairs",
    "init_by_array",
    "init_genrand",
    "numpy_legacy_random",
    "python_random",
    "random_bits",
    "shared_bits_agree",
    "torch_cuda_rand",
    "torch_rand",
]


def torch_rand(seed: int, n: int, dtype: str = "float32") -> np.ndarray:
    """``torch.manual_seed(seed); torch.rand(n, dtype=dtype)`` on CPU, rebuilt."""
    return TorchCPURandom(seed).rand(n, dtype)


def float53_from_u32_pairs(words: np.ndarray) -> np.ndarray:
    """numpy legacy / CPython mapping: (a >> 5, b >> 6) -> (a * 2**26 + b) / 2**53."""
    w = np.asarray(words, dtype=np.uint64)
    a, b = w[0::2] >> np.uint64(5), w[1::2] >> np.uint64(6)
    return (a.astype(np.float64) * 67108864.0 + b.astype(np.float64)) / 9007199254740992.0


def numpy_legacy_random(seed: int, n: int) -> np.ndarray:
    """``np.random.RandomState(seed).random_sample(n)``, rebuilt: same MT19937 words as torch,
    two words per float, 53 bits."""
    return float53_from_u32_pairs(MT19937.from_seed(seed).next_u32(2 * n))


def python_random(seed: int, n: int) -> np.ndarray:
    """``random.seed(seed); [random.random() for _ in range(n)]``, rebuilt: same generator
    and mapping as numpy's legacy one, but seeded through ``init_by_array``."""
    return float53_from_u32_pairs(MT19937.from_python_seed(seed).next_u32(2 * n))


def random_bits(values: np.ndarray) -> int:
    """How many random bits a [0, 1) sample shows: the smallest k with every value a
    multiple of 2**-k (measured from the values alone)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[v != 0]
    if v.size == 0:
        return 0
    mant, exp = np.frexp(v)  # v = mant * 2**exp, 0.5 <= mant < 1, mant has <= 53 bits
    m = (mant * 2.0**53).astype(np.int64)
    trailing = np.array([(int(x) & -int(x)).bit_length() - 1 for x in m])
    return int(np.max(53 - trailing - exp))


def shared_bits_agree(torch_float32: np.ndarray, numpy_legacy: np.ndarray) -> np.ndarray:
    """Per position i: do torch's float32 rand and numpy's legacy rand come from one word?

    torch keeps bits 0..23 of word 2i (it uses one word per value, so its value i is word i);
    numpy keeps bits 5..31 of word 2i. Both therefore hold bits 5..23 of the same word when
    the streams are the same; compared here from the two outputs alone, no generator needed.
    """
    t = np.asarray(torch_float32, dtype=np.float32)
    n = np.asarray(numpy_legacy, dtype=np.float64)
    k = min(t.size, 2 * n.size) // 2
    torch_word_low24 = (t[: 2 * k : 2].astype(np.float64) * 2.0**24).astype(np.int64)
    numpy_word_high27 = np.floor(n[:k] * 2.0**27).astype(np.int64)
    mask = (1 << 19) - 1
    return (torch_word_low24 >> 5) & mask == numpy_word_high27 & mask
