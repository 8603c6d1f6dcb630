"""Claims about the shape of the orders on one run: how deep their trees of additions are, and
what splitting across threads does to torch.sum.

The depth of a tree (additions on its longest path) is how many roundings one term can go
through. A left-to-right loop over n terms is n − 1 deep. np.sum's pairwise sum
(``numpy/_core/src/umath/loops_utils.h.src``, emulated by `fpexplore.orders.numpy_sum`) splits
a range of more than 128 elements at half its length rounded down to a multiple of 8, and sums
a block of c ≤ 128 elements with 8 interleaved accumulators: ⌊c/8⌋ − 1 additions into each,
3 levels to combine the 8, then the c mod 8 leftovers one by one. A block is therefore at most
127 // 8 + 2 + 7 = 24 deep, and the splits add at most ⌈log2⌈n/128⌉⌉ levels above the blocks.
`numpy_depth` follows that rule with integers (the tests compare it with the depth of
``fpexplore.orders.tree(n, "numpy")``, the emulator run on symbolic values, which is too slow
to build live for large n).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ...orders.numpy_sum import BLOCK, UNROLL
from ...orders.torch_sum import GRAIN_SIZE
from ...result import Claim, Observation, Outcome
from ...result.spec import ClaimSpec
from .inputs import bits

#: the deepest block: 127 elements, 15 rows into each accumulator (14 additions), 3 levels to
#: combine the 8 accumulators, 7 leftovers added one by one
BLOCK_DEPTH = (BLOCK - 1) // UNROLL - 1 + 3 + (BLOCK - 1) % UNROLL


@functools.lru_cache(maxsize=4096)
def numpy_depth(n: int) -> int:
    """Additions on the longest path of np.sum's pairwise tree over ``n`` ≥ 1 elements
    (float16, float32, float64; np.sum adds bfloat16 left to right)."""
    if n <= BLOCK:
        if n < UNROLL:  # a running sum from -0.0 (the zero adds nothing to the tree)
            return max(n - 1, 0)
        return n // UNROLL - 1 + 3 + n % UNROLL
    half = n // 2
    left = half - half % UNROLL
    return 1 + max(numpy_depth(left), numpy_depth(n - left))


#: np.sum's tree depth against a loop's, for the run's n (`depth_claim`)
TREE_DEPTH = ClaimSpec(
    "tree_depth",
    "np.sum's pairwise tree grows like log2 n deep, a loop's like n",
    test="tests/test_summation_order.py",
    occasional=True,
    numbers=": a left-to-right loop adds each term after all earlier ones, n − 1 = {loop} "
    "additions deep; np.sum's pairwise tree (blocks of {block} with {unroll} accumulators) is "
    "{depth} deep, within {block_depth} + ⌈log2⌈n/{block}⌉⌉ = {bound}",
)
#: where torch.sum ran on two threads or more (`threads_findings`)
THREADS_SPLIT = ClaimSpec(
    "torch_threads_split",
    "emulate(x, 'torch', threads=T) gives torch.sum's bits on T threads",
    test="tests/test_summation_order.py",
    occasional=True,
    numbers=": torch.sum with {threads} threads {how}",
)
#: observed where torch.sum ran on two threads or more (`threads_findings`)
THREADS_CHANGE_BITS = ClaimSpec(
    "torch_threads_change_bits",
    "splitting across threads changes torch.sum's bits for this input",
    ("torch",),
    applies="where torch runs on two threads or more",
)


def numpy_depth_bound(n: int) -> int:
    """``BLOCK_DEPTH + ⌈log2⌈n/128⌉⌉``: at most this many additions on any path of np.sum's
    pairwise tree over ``n`` elements."""
    blocks = -(-n // BLOCK)
    return BLOCK_DEPTH + (blocks - 1).bit_length()


def depth_claim(n: int) -> dict[str, Claim]:
    """Sequential depth n − 1 against np.sum's pairwise depth and its bound, for this n."""
    if n < 1:
        return {}
    depth, bound = numpy_depth(n), numpy_depth_bound(n)
    return {
        "tree_depth": TREE_DEPTH.claim(
            depth <= bound and depth <= max(n - 1, 0),
            loop=n - 1,
            block=BLOCK,
            unroll=UNROLL,
            depth=depth,
            block_depth=BLOCK_DEPTH,
            bound=bound,
        )
    }


def threads_findings(
    x: np.ndarray, torch_: Outcome, split: Any, single: Any
) -> tuple[dict[str, Claim], dict[str, Observation], dict[str, Any]]:
    """For torch.sum run on T ≥ 2 threads: the claim that emulate(x, 'torch', threads=T)
    gives its bits, whether splitting changed the bits for this input (the emulator is
    bit-exact, so this holds for this input on every machine) and the numbers behind it.

    ``split`` is emulate(x, 'torch', threads=T) and ``single`` emulate(x, 'torch', threads=1),
    both in the input's format."""
    t = int(torch_.settings["torch.set_num_threads"])
    n = int(x.size)
    k = 1 if n < GRAIN_SIZE else min(t, -(-n // GRAIN_SIZE))  # the parts torch.sum sums alone
    changed = bits(split) != bits(single)
    numbers = {
        "threads": t,
        "chunks": k,
        "one thread": float(single),
        f"{t} threads": float(split),
        "bits changed": changed,
    }
    how = (
        f"splits the {n} values into {k} chunks, sums each in the one-thread order and then the "
        "chunk sums"
        if k > 1
        else f"does not split {n} values (chunks start at {GRAIN_SIZE} values)"
    )
    claim = THREADS_SPLIT.claim(bits(split) == bits(torch_.value), threads=t, how=how)
    observation = THREADS_CHANGE_BITS.observe(
        changed, f"1 thread {single}, {t} threads {split}", f" ({t} threads)"
    )
    return {"torch_threads_split": claim}, {"torch_threads_change_bits": observation}, numbers
