"""An independent MT19937 (Matsumoto & Nishimura 1998), vectorized with numpy.

Nothing here calls numpy's or torch's generators: the state is seeded and twisted by this
module's own code, so that matching torch or numpy bit for bit is evidence, not tautology.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InvalidParameter

N, M = 624, 397
_MATRIX_A = np.uint32(0x9908B0DF)
_UPPER = np.uint32(0x80000000)
_LOWER = np.uint32(0x7FFFFFFF)
_MASK32 = 0xFFFFFFFF


def init_genrand(seed: int) -> np.ndarray:
    """The reference `init_genrand` state for a 32-bit seed (torch.manual_seed, RandomState)."""
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool) or seed < 0:
        raise InvalidParameter("seed", seed, "a non-negative int")
    mt = [int(seed) & _MASK32]
    for i in range(1, N):
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + i) & _MASK32)
    return np.array(mt, dtype=np.uint32)


def init_by_array(key: Sequence[int]) -> np.ndarray:
    """The reference `init_by_array` state (Python's `random.seed(int)` uses it)."""
    key = [int(k) & _MASK32 for k in key] or [0]
    mt = [int(x) for x in init_genrand(19650218)]
    i, j = 1, 0
    for _ in range(max(N, len(key))):
        prev = mt[i - 1]
        mt[i] = ((mt[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + key[j] + j) & _MASK32
        i, j = i + 1, j + 1
        if i >= N:
            mt[0], i = mt[N - 1], 1
        if j >= len(key):
            j = 0
    for _ in range(N - 1):
        prev = mt[i - 1]
        mt[i] = ((mt[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - i) & _MASK32
        i += 1
        if i >= N:
            mt[0], i = mt[N - 1], 1
    mt[0] = 0x80000000
    return np.array(mt, dtype=np.uint32)


def _twist(mt: np.ndarray) -> np.ndarray:
    """One generation of the recurrence over all 624 words, in four dependency-free slices."""
    mt = mt.copy()

    def step(lo: int, hi: int) -> None:
        i = np.arange(lo, hi)
        y = (mt[i] & _UPPER) | (mt[(i + 1) % N] & _LOWER)
        mag = np.where((y & np.uint32(1)) != 0, _MATRIX_A, np.uint32(0))
        mt[i] = mt[(i + M) % N] ^ (y >> np.uint32(1)) ^ mag

    # i + M wraps to words already rewritten in this generation: 0..226 read old words,
    # 227..453 read 0..226 (new), 454..622 read 227..395 (new), 623 reads 396 and 0 (new).
    for lo, hi in ((0, N - M), (N - M, 2 * (N - M)), (2 * (N - M), N - 1), (N - 1, N)):
        step(lo, hi)
    return mt


def _temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> np.uint32(11))
    y = y ^ ((y << np.uint32(7)) & np.uint32(0x9D2C5680))
    y = y ^ ((y << np.uint32(15)) & np.uint32(0xEFC60000))
    return y ^ (y >> np.uint32(18))


class MT19937:
    """The 32-bit Mersenne Twister stream from a given state (624 words + position)."""

    def __init__(self, state: np.ndarray, pos: int = N) -> None:
        state = np.asarray(state, dtype=np.uint32)
        if state.shape != (N,):
            raise InvalidParameter("state", state.shape, f"an array of {N} uint32 words")
        self.state, self.pos = state.copy(), int(pos)

    @classmethod
    def from_seed(cls, seed: int) -> MT19937:
        """Seeded like `torch.manual_seed(seed)` and `np.random.RandomState(seed)`."""
        return cls(init_genrand(seed))

    @classmethod
    def from_python_seed(cls, seed: int) -> MT19937:
        """Seeded like `random.seed(seed)` (CPython, int seeds): |seed| in 32-bit words."""
        n = abs(int(seed))
        return cls(init_by_array([(n >> s) & _MASK32 for s in range(0, n.bit_length(), 32)]))

    def next_u32(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit outputs as uint32."""
        if n < 0:
            raise InvalidParameter("n", n, "a non-negative int")
        out = np.empty(n, dtype=np.uint32)
        filled = 0
        while filled < n:
            if self.pos >= N:
                self.state, self.pos = _twist(self.state), 0
            take = min(N - self.pos, n - filled)
            out[filled : filled + take] = _temper(self.state[self.pos : self.pos + take])
            self.pos += take
            filled += take
        return out
