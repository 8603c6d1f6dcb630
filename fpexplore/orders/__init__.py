"""Bit-exact emulators of how frameworks add up a float array, and textbook orders.

``emulate(x, order, threads=1)`` reproduces, to the last bit, what a framework's CPU sum
returns for ``x`` (``"numpy"``, ``"torch"``, ``"tensorflow"``, ``"java"``), or sums ``x`` in
a textbook order. ``tree(n, order)`` runs the same emulator on symbolic leaves and returns the
tree of additions it performs. Every emulator is vectorized with numpy, except ``kahan``, whose
compensation feeds every next step: it loops in Python (about 0.2 s per 10^6 values).
A case an emulator does not reproduce bit for bit raises :class:`~fpexplore.NotEmulated`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidInput, InvalidParameter, NotEmulated, shown
from . import textbook
from ._symbolic import Node, leaves
from .eigen_sum import tensorflow_sum
from .numpy_sum import numpy_sum
from .torch_sum import torch_sum

__all__ = ["ORDERS", "Node", "NotEmulated", "Order", "describe", "emulate", "names", "tree"]

FORMATS = ("float16", "bfloat16", "float32", "float64")


@dataclass(frozen=True)
class Order:
    """One summation order: its name, what it is, and the function that performs it."""

    name: str
    description: str
    run: Callable[..., object]  # run(x, threads, key, dtype_name)
    framework: bool = False
    uses_threads: bool = False
    uses_values: bool = False


def _values_only(order: Callable[[np.ndarray], object]) -> Callable[..., object]:
    """An order that needs the values alone (no threads, sort key or format name)."""
    return lambda x, threads, key, dtype_name: order(x)


ORDERS: dict[str, Order] = {
    order.name: order
    for order in (
        Order(
            "numpy",
            "np.sum: pairwise blocks of 128 with 8 accumulators (one contiguous chunk)",
            lambda x, threads, key, dtype_name: numpy_sum(x, dtype_name),
            framework=True,
        ),
        Order(
            "torch",
            "torch.sum on CPU: cascade sum over 8-lane vectors, 4 streams, thread chunks",
            lambda x, threads, key, dtype_name: torch_sum(x, threads, dtype_name),
            framework=True,
            uses_threads=True,
        ),
        Order(
            "tensorflow",
            "tf.reduce_sum on CPU: Eigen's tree of 8192-element leaves, packets, thread shards",
            lambda x, threads, key, dtype_name: tensorflow_sum(x, threads, dtype_name),
            framework=True,
            uses_threads=True,
        ),
        Order(
            "java",
            "a Java float (or double) loop: sequential from +0.0",
            _values_only(textbook.java_loop),
            framework=True,
        ),
        Order("sequential", "left to right in the input format", _values_only(textbook.sequential)),
        Order(
            "reversed", "right to left in the input format", _values_only(textbook.reversed_order)
        ),
        Order(
            "sorted",
            "left to right after sorting by increasing magnitude",
            lambda x, threads, key, dtype_name: textbook.sorted_ascending(x, key),
            uses_values=True,
        ),
        Order(
            "sorted_desc",
            "left to right after sorting by decreasing magnitude",
            lambda x, threads, key, dtype_name: textbook.sorted_descending(x, key),
            uses_values=True,
        ),
        Order(
            "pairwise",
            "textbook recursive pairwise: sum of the two halves, down to single elements",
            _values_only(textbook.pairwise),
        ),
        Order("kahan", "Kahan's compensated sum in the input format", _values_only(textbook.kahan)),
        Order(
            "neumaier",
            "Neumaier's compensated sum (Kahan-Babuska) in the input format",
            _values_only(textbook.neumaier),
        ),
        Order(
            "float64",
            "left to right in a float64 accumulator, rounded once to the input format",
            _values_only(textbook.float64_accumulation),
        ),
    )
}


def names() -> list[str]:
    """Every order ``emulate`` accepts, frameworks first."""
    return list(ORDERS)


def describe(order: str) -> str:
    """One line saying what the order does."""
    return _order(order).description


def _order(order: str) -> Order:
    if not isinstance(order, str) or order not in ORDERS:
        raise InvalidParameter("order", order, "one of " + ", ".join(map(repr, ORDERS)))
    return ORDERS[order]


#: The most threads an emulator models (each thread is a partial sum it keeps in memory).
MAX_THREADS = 1024


def _threads(threads: int) -> int:
    whole = isinstance(threads, int | np.integer) and not isinstance(threads, bool | np.bool_)
    if not (whole and 1 <= threads <= MAX_THREADS):
        raise InvalidParameter("threads", threads, f"an int in the range [1, {MAX_THREADS}]")
    return int(threads)


def _array(x: Any, name: str) -> np.ndarray:
    """``np.asarray(x)``, or `InvalidInput` naming ``name`` when it is not a rectangular
    array (a ragged list, say)."""
    try:
        return np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(
            f"The {name!r} argument must be an array or a rectangular (not ragged) list of "
            f"numbers; got {shown(x)} ({exc})."
        ) from None


def emulate(x: np.ndarray, order: str, threads: int = 1) -> np.generic:
    """Sum ``x`` in ``order`` and return a numpy scalar of the format the sum is returned in
    (the input's format for every order: float16 sums come back as float16).

    ``threads`` is the thread count of the framework (``torch.set_num_threads`` or
    TensorFlow's intra-op threads); orders that do not depend on it ignore it. ``x`` may be
    any shape: the framework orders sum it as ``np.sum(x)``, ``torch.sum`` of the contiguous
    tensor and ``tf.reduce_sum`` of the tensor would, the textbook orders take its elements in
    C order. Raises :class:`~fpexplore.NotEmulated` for a case not reproduced bit for bit.
    """
    spec = _order(order)
    threads = _threads(threads)
    x = _array(x, "x")
    name = x.dtype.name
    if name not in FORMATS:
        raise InvalidInput(
            f"The 'x' argument must hold one of {', '.join(FORMATS)} (bfloat16 from ml_dtypes);"
            f" got dtype {name}. Convert it, e.g. x.astype(np.float32)."
        )
    if order == "numpy":  # NumPy follows the memory layout
        with np.errstate(over="ignore", invalid="ignore"):
            return numpy_sum(x)
    flat = np.ascontiguousarray(x).reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        value = spec.run(flat, threads, flat, name)
    return np.asarray(value).astype(x.dtype)[()]


def tree(
    n: int,
    order: str,
    threads: int = 1,
    dtype: str = "float32",
    values: np.ndarray | None = None,
    simplify: bool = True,
) -> Node:
    """The tree of additions ``emulate(x, order, threads)`` performs on ``n`` elements of
    format ``dtype``, computed by the very same emulator run on symbolic leaves.

    Leaves are ``Node(index=i)`` for ``x[i]``; ``simplify`` drops additions of the constant
    +0.0 that accumulators start from. The ``sorted`` orders depend on the values: pass them
    as ``values``. Orders that also subtract (``kahan``, ``neumaier``) raise NotEmulated.
    Meant for drawing (n up to a few thousand; the trees of more would not be legible).
    """
    spec = _order(order)
    threads = _threads(threads)
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 0 <= n <= 100_000:
        raise InvalidParameter("n", n, "an integer from 0 to 100000")
    if dtype not in FORMATS:
        raise InvalidParameter("dtype", dtype, "one of " + ", ".join(map(repr, FORMATS)))
    if spec.uses_values:
        accepted = f"the {n} real numbers whose magnitudes define the {order!r} order"
        key = None if values is None else _array(values, "values")
        if key is None or key.shape != (n,) or key.dtype.kind in "SUb":
            raise InvalidParameter("values", values, accepted)
        try:
            key = key.astype(np.float64)
        except (ValueError, TypeError):
            raise InvalidParameter("values", values, accepted) from None
    else:
        key = None
    x = leaves(int(n))
    root = spec.run(x, threads, key, dtype)
    return root.simplified() if simplify else root
