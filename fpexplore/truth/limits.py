"""Guards: the work and memory an exact computation will take, refused before it starts.

Memory is counted for what a call materializes (inputs copied, slices, partial products,
outputs: 8 bytes per float64, about 200 bytes per exact Fraction); work as float64
multiply-adds on BLAS (Ozaki products) or as exact products on the general path.
"""

from __future__ import annotations

import os

from ..errors import InvalidInput

FRACTION_BYTES = 200  # a Fraction of a few machine words, its two ints and the array slot
MAX_FLOPS = 1 << 40  # float64 multiply-adds of the BLAS path: minutes on a laptop
MAX_PRODUCTS = 1 << 27  # exact products of the general path (float64 inputs): ~20 s


def _memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


MAX_BYTES = max(256 << 20, _memory() // 4)  # a quarter of this machine's memory


def _gib(n: float) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n < 1e300 else "more than 1e300 bytes"


def check(
    where: str, *, nbytes: float = 0, flops: float = 0, products: float = 0, what: str = ""
) -> None:
    """Raise `InvalidInput` naming the limit when a computation would exceed it."""
    tail = f" ({what})" if what else ""
    if nbytes > MAX_BYTES:
        raise InvalidInput(
            f"{where}: the exact result needs about {_gib(nbytes)} of memory{tail}; the limit "
            f"is {_gib(MAX_BYTES)} (a quarter of this machine's memory). Use smaller arrays."
        )
    if flops > MAX_FLOPS:
        raise InvalidInput(
            f"{where}: the exact result needs about {flops:.3g} float64 multiply-adds{tail}; "
            f"the limit is {MAX_FLOPS:.3g} (2**40). Use smaller arrays."
        )
    if products > MAX_PRODUCTS:
        raise InvalidInput(
            f"{where}: the exact result needs {int(products)} exact products{tail}; at most "
            f"{MAX_PRODUCTS} (2**27) are supported on this path (float64 inputs). Use smaller "
            "arrays, or float32 inputs (exact on BLAS)."
        )
