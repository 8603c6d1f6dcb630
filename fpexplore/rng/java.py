"""`java.util.Random`, emulated: the 48-bit LCG and its nextInt/nextFloat/nextDouble/nextGaussian.

``nextGaussian`` uses ``StrictMath.log``, which is fdlibm's ``__ieee754_log``; it is ported
below operation for operation so that the emulator matches a real JVM bit for bit (the C
library's ``log`` is more accurate and would differ in the last bit now and then).
`run_java` runs the real class on the JVM worker, when Java is installed, for the tests and
lessons.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from ..errors import InvalidParameter

_MULT, _ADD, _MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1


class JavaRandom:
    """``new java.util.Random(seed)``."""

    def __init__(self, seed: int) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise InvalidParameter("seed", seed, "an int (a Java long)")
        self.seed = (seed ^ _MULT) & _MASK
        self._next_gaussian: float | None = None

    def next_bits(self, bits: int) -> int:
        """``next(bits)``: the top ``bits`` of the 48-bit state, as a signed Java int."""
        self.seed = (self.seed * _MULT + _ADD) & _MASK
        r = self.seed >> (48 - bits)
        return r - (1 << 32) if r >= 1 << 31 else r

    def next_int(self) -> int:
        return self.next_bits(32)

    def next_float(self) -> np.float32:
        """24 random bits: ``next(24) / (float)(1 << 24)``."""
        return np.float32(self.next_bits(24)) * np.float32(2.0**-24)

    def next_double(self) -> float:
        """53 random bits: ``((long) next(26) << 27) + next(27)) * 0x1.0p-53``."""
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * 2.0**-53

    def next_gaussian(self) -> float:
        """Marsaglia's polar method with StrictMath (fdlibm) log and sqrt; pairs are cached."""
        if self._next_gaussian is not None:
            value, self._next_gaussian = self._next_gaussian, None
            return value
        while True:
            v1 = 2 * self.next_double() - 1
            v2 = 2 * self.next_double() - 1
            s = v1 * v1 + v2 * v2
            if 0 < s < 1:
                break
        multiplier = math.sqrt(-2 * fdlibm_log(s) / s)
        self._next_gaussian = v2 * multiplier
        return v1 * multiplier

    def floats(self, n: int) -> np.ndarray:
        return np.array([self.next_float() for _ in range(n)], dtype=np.float32)

    def doubles(self, n: int) -> np.ndarray:
        return np.array([self.next_double() for _ in range(n)], dtype=np.float64)

    def gaussians(self, n: int) -> np.ndarray:
        return np.array([self.next_gaussian() for _ in range(n)], dtype=np.float64)


_LN2_HI, _LN2_LO, _TWO54 = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 2.0**54
_LG = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
)


def _words(x: float) -> tuple[int, int]:
    b = struct.unpack("<q", struct.pack("<d", x))[0]
    hi = (b >> 32) & 0xFFFFFFFF
    return (hi - (1 << 32) if hi >= 1 << 31 else hi), b & 0xFFFFFFFF


def _with_hi(x: float, hi: int) -> float:
    lo = struct.unpack("<Q", struct.pack("<d", x))[0] & 0xFFFFFFFF
    return struct.unpack("<d", struct.pack("<Q", ((hi & 0xFFFFFFFF) << 32) | lo))[0]


def fdlibm_log(x: float) -> float:
    """fdlibm ``__ieee754_log`` (Java's ``StrictMath.log``), step for step."""
    hx, lx = _words(x)
    k = 0
    if hx < 0x00100000:
        if ((hx & 0x7FFFFFFF) | lx) == 0:
            return -math.inf
        if hx < 0:
            return math.nan
        k -= 54
        x *= _TWO54
        hx, _ = _words(x)
    if hx >= 0x7FF00000:
        return x + x
    k += (hx >> 20) - 1023
    hx &= 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    x = _with_hi(x, hx | (i ^ 0x3FF00000))
    k += i >> 20
    f = x - 1.0
    if (0x000FFFFF & (2 + hx)) < 3:
        if f == 0.0:
            return 0.0 if k == 0 else k * _LN2_HI + k * _LN2_LO
        r = f * f * (0.5 - 0.33333333333333333 * f)
        return f - r if k == 0 else k * _LN2_HI - ((r - k * _LN2_LO) - f)
    s = f / (2.0 + f)
    dk = float(k)
    z = s * s
    i = hx - 0x6147A
    w = z * z
    j = 0x6B851 - hx
    t1 = w * (_LG[1] + w * (_LG[3] + w * _LG[5]))
    t2 = z * (_LG[0] + w * (_LG[2] + w * (_LG[4] + w * _LG[6])))
    i |= j
    r = t2 + t1
    if i > 0:
        hfsq = 0.5 * f * f
        if k == 0:
            return f - (hfsq - s * (hfsq + r))
        return dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    if k == 0:
        return f - s * (f - r)
    return dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f)


#: how long a request to the JVM worker may take before it is given up
JAVA_TIMEOUT = 120.0


def java_version() -> str:
    """The JVM worker's Java version (``Java 17.0.x``), or '' when no JVM can start here."""
    from .. import backends

    if not backends.get("java").available():
        return ""
    return "Java " + str(backends.load("java").call("jvm_info")["java_version"])


def run_java(seeds: list[int], n: int) -> dict[int, dict[str, np.ndarray]]:
    """Run the real ``java.util.Random`` and return its draws as arrays: per seed, ``float``
    (float32), ``double``, ``gaussian`` (float64) and ``int`` (int32). The draws come from the
    package's one JVM worker (`fpexplore.jvm.client`, started on the first call and kept);
    `BackendUnavailable`, with the fix, where no JVM can start."""
    from .. import backends

    client = backends.load("java")
    raw = client.call("java_random", seeds=[int(s) for s in seeds], n=int(n), timeout=JAVA_TIMEOUT)
    dtypes = {"float": np.float32, "double": np.float64, "gaussian": np.float64, "int": np.int32}
    return {
        int(seed): {k: np.frombuffer(bits[k], dtype=dtypes[k]).copy() for k in dtypes}
        for seed, bits in raw.items()
    }
