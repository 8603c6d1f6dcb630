"""torch's CPU generator, rebuilt: MT19937 words -> torch's float mappings and Box-Muller.

`TorchCPURandom(seed)` behaves like ``torch.manual_seed(seed)`` followed by ``torch.rand`` /
``torch.randn`` calls on the default CPU generator, using only this package's MT19937.
What torch does (read from ATen's ``DistributionsHelper.h`` / ``DistributionTemplates.h``
and verified bit for bit in the tests):

- float32 ``rand``: one 32-bit word w -> (w & 0xFFFFFF) * 2**-24   (24 random bits).
- float64 ``rand``: two words (hi, lo) -> ((hi << 32 | lo) & (2**53 - 1)) * 2**-53.
- ``randn`` with fewer than 16 elements (or not float32): per pair, u1, u2 from the 53-bit
  mapping, r = sqrt(-2 log1p(-u2)), theta = 2 pi u1, value r cos(theta); r sin(theta) is
  cached in the generator and returned by the next normal draw.
- float32 ``randn`` with 16 or more elements: every element first gets a 24-bit uniform, then
  blocks of 16 are transformed (u1 = 1 - data[j], u2 = data[j + 8], j < 8); when n is not a
  multiple of 16 the last 16 slots are redrawn from fresh uniforms and transformed again.
  On AVX2/AVX-512 CPUs the transform is float32 vector code (`avx_mathfun`); on other CPUs
  (``ATEN_CPU_CAPABILITY=default``, ARM) it calls the C library's logf/cosf/sinf.
- float32 ``uniform_(low, high)``: the ATen kernel compiled for AVX2/AVX-512 contracts
  ``u * (high - low) + low`` into one fused multiply-add (one rounding); the one compiled for
  the default capability rounds the product and the sum separately in float32.

Which of these two paths torch takes is ATen's CPU capability in the running process
(`running_path`); the rebuild takes the same one unless told otherwise, and says which.
ARM builds compile the default kernels with their own contraction rules: not rebuilt here.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import platform
from functools import cache
from typing import Literal

import numpy as np

from ..errors import InvalidParameter, NotEmulated
from . import avx_mathfun
from .mt19937 import MT19937

Path = Literal["avx2", "default"]


def float32_from_u32(words: np.ndarray) -> np.ndarray:
    """torch's float32 uniform: the low 24 bits of each word, times 2**-24."""
    w = np.asarray(words, dtype=np.uint32)
    return (w & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0**-24)


def float64_from_u32_pairs(words: np.ndarray) -> np.ndarray:
    """torch's float64 uniform: (first << 32 | second) & (2**53 - 1), times 2**-53."""
    w = np.asarray(words, dtype=np.uint64)
    x = (w[0::2] << np.uint64(32)) | w[1::2]
    return (x & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0**-53


@cache
def _libm() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("m")
    if name is None:
        return None
    lib = ctypes.CDLL(name)
    for fn in ("logf", "cosf", "sinf"):
        getattr(lib, fn).restype = ctypes.c_float
        getattr(lib, fn).argtypes = [ctypes.c_float]
    return lib


def _box_muller_default(blocks: np.ndarray) -> np.ndarray:
    """ATen's scalar ``normal_fill_16`` on blocks of 16 (rows): float math through the C
    library's logf/cosf/sinf."""
    lib = _libm()
    if lib is None:
        raise NotEmulated("the scalar randn path needs the C math library (libm) via ctypes")
    out = blocks.copy()
    f = np.float32
    for block, row in zip(blocks, out, strict=True):
        for j in range(8):
            radius = np.sqrt(f(-2) * f(lib.logf(float(f(1) - block[j]))))
            theta = f(2.0 * math.pi * float(block[j + 8]))  # 2.0f * pi<double> * u2, as float
            row[j] = radius * f(lib.cosf(float(theta)))
            row[j + 8] = radius * f(lib.sinf(float(theta)))
    return out


def _box_muller_avx2(blocks: np.ndarray) -> np.ndarray:
    """ATen's ``normal_fill_16_AVX2`` on blocks of 16 (rows)."""
    radius = np.sqrt(np.float32(-2) * avx_mathfun.log256(np.float32(1) - blocks[:, :8]))
    s, c = avx_mathfun.sincos256(np.float32(2.0 * math.pi) * blocks[:, 8:])
    # fmadd(n, std=1, mean=0): exact except that -0.0 + 0.0 gives +0.0
    return np.concatenate([radius * c + np.float32(0), radius * s + np.float32(0)], axis=1)


def path_for(capability: str, machine: str | None = None) -> Path:
    """The rebuild's path for ATen's CPU ``capability`` on a ``machine`` (``platform.machine()``
    by default): ``avx2`` for AVX2 and AVX-512, ``default`` for x86's default kernels;
    `NotEmulated` for other CPUs (ARM: SVE or NEON builds)."""
    machine = platform.machine() if machine is None else machine
    if machine.lower() not in ("x86_64", "amd64", "i686", "x86"):
        raise NotEmulated(
            f"torch's CPU kernels on {machine} (capability {capability}) are not rebuilt here: "
            "only x86-64's default, AVX2 and AVX-512 paths are"
        )
    cap = capability.strip().upper()
    if cap.startswith("AVX"):
        return "avx2"
    if cap == "DEFAULT":
        return "default"
    raise NotEmulated(f"ATen's CPU capability {capability!r} is not rebuilt here")


def running_path() -> Path:
    """The path torch takes in this process (`dispatch.torch_capability`, which asks torch
    when it is loaded and otherwise reads ``ATEN_CPU_CAPABILITY`` and the CPU's flags)."""
    from ..probe.paths import torch_capability

    return path_for(torch_capability())


PATH_NAMES = {"avx2": "ATen's AVX2/AVX-512 path", "default": "ATen's default (scalar) path"}


class TorchCPURandom:
    """An emulator of torch's default CPU generator after ``torch.manual_seed(seed)``;
    ``path`` (default: the one torch takes in this process, `running_path`) picks the float32
    normal-fill and uniform_ kernels."""

    def __init__(self, seed: int, path: Path | None = None) -> None:
        path = running_path() if path is None else path
        if path not in ("avx2", "default"):
            raise InvalidParameter("path", path, "'avx2' or 'default'")
        self.mt = MT19937.from_seed(seed)
        self.path = path
        self._next_double_normal: float | None = None

    def rand(self, n: int, dtype: str = "float32") -> np.ndarray:
        """Like ``torch.rand(n, dtype=...)``."""
        if dtype == "float32":
            return float32_from_u32(self.mt.next_u32(n))
        if dtype == "float64":
            return float64_from_u32_pairs(self.mt.next_u32(2 * n))
        raise InvalidParameter("dtype", dtype, "'float32' or 'float64'")

    def randn(self, n: int, dtype: str = "float32") -> np.ndarray:
        """Like ``torch.randn(n, dtype=...)``."""
        if dtype not in ("float32", "float64"):
            raise InvalidParameter("dtype", dtype, "'float32' or 'float64'")
        if n >= 16:
            return self._normal_fill(n, dtype)
        out = np.array([self._normal_double() for _ in range(n)], dtype=np.float64)
        return out.astype(np.float32) if dtype == "float32" else out

    def _normal_double(self) -> float:
        if self._next_double_normal is not None:
            value, self._next_double_normal = self._next_double_normal, None
            return value
        u1, u2 = self.rand(2, "float64")
        r = math.sqrt(-2.0 * math.log1p(-float(u2)))
        theta = 2.0 * math.pi * float(u1)
        self._next_double_normal = r * math.sin(theta)
        return r * math.cos(theta)

    def _normal_fill(self, n: int, dtype: str) -> np.ndarray:
        """Box-Muller on blocks of 16 (the first 8 values give the radii, the last 8 the
        angles), all blocks at once; a tail shorter than 16 takes 16 fresh draws for the last
        16 places. float64 takes the C library's logarithm, sine and cosine (``math``), value
        by value, as torch's scalar loop calls them."""
        if dtype == "float64":
            transform = _box_muller_16_float64
        else:
            transform = _box_muller_avx2 if self.path == "avx2" else _box_muller_default
        data = self.rand(n, dtype)
        m = n // 16
        data[: m * 16] = transform(data[: m * 16].reshape(m, 16)).ravel()
        if n % 16:
            data[n - 16 :] = transform(self.rand(16, dtype).reshape(1, 16))
        return data


def _box_muller_16_float64(blocks: np.ndarray) -> np.ndarray:
    """Blocks of 16 uniforms (rows) → 16 normals each: radii from the first 8, angles from
    the last 8; cosines fill the first half, sines the second."""
    u1, u2 = 1.0 - blocks[:, :8], blocks[:, 8:]
    log = np.array([math.log(v) for v in u1.ravel().tolist()]).reshape(u1.shape)
    radius = np.sqrt(-2.0 * log)
    theta = 2.0 * math.pi * u2
    flat = theta.ravel().tolist()
    cos = np.array([math.cos(t) for t in flat]).reshape(theta.shape)
    sin = np.array([math.sin(t) for t in flat]).reshape(theta.shape)
    return np.concatenate([radius * cos, radius * sin], axis=1)


def uniform_from_u32(
    words: np.ndarray, low: float, high: float, path: Path | None = None
) -> np.ndarray:
    """torch's float32 ``uniform_(low, high)``: bounds cast to float32, the 24-bit fraction u,
    then ``u * (high - low) + low``: one rounding (the fused multiply-add of the AVX2 path;
    the product is exact in float64), or two float32 roundings (the default path)."""
    path = running_path() if path is None else path
    lo, hi = np.float32(low), np.float32(high)
    u = float32_from_u32(words).astype(np.float64)  # exact
    if path == "default":
        return u.astype(np.float32) * (hi - lo) + lo
    return (u * np.float64(hi - lo) + np.float64(lo)).astype(np.float32)


def linear_init(
    seed: int, in_features: int, out_features: int, path: Path | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``torch.manual_seed(seed); nn.Linear(in, out)``: weight by kaiming_uniform_(a=sqrt(5)),
    i.e. U(-1/sqrt(in), 1/sqrt(in)) with torch's own bound arithmetic, then the bias."""
    words = MT19937.from_seed(seed).next_u32(in_features * out_features + out_features)
    gain = math.sqrt(2.0 / (1 + 5))
    bound = math.sqrt(3.0) * (gain / math.sqrt(in_features))
    w = uniform_from_u32(words[: in_features * out_features], -bound, bound, path)
    b_bound = 1 / math.sqrt(in_features)
    b = uniform_from_u32(words[in_features * out_features :], -b_bound, b_bound, path)
    return w.reshape(out_features, in_features), b
