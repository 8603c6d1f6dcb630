"""``fpexplore warm``: compute once what the widgets would otherwise compute on a
student's first click.

The summation explorer draws error-growth curves per (distribution, format, threads); each set
costs seconds the first time and is then kept on disk (``cache_dir()/summation_growth``). Set-up
runs this module so that every choice in the explorer answers from the cache. It is safe to run
again: present curves are read, not recomputed.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["warm_summation_curves"]


def warm_summation_curves(verbose: bool = False) -> int:
    """Compute (or read) the growth curves of every distribution, format and thread count.
    Returns how many sets there are."""
    from .lessons.summation_order import growth
    from .lessons.summation_order.inputs import DISTRIBUTIONS, DTYPES

    done = 0
    for threads in (1, 2):
        for dtype in DTYPES:
            for distribution in DISTRIBUTIONS:
                start = time.perf_counter()
                growth.curves(distribution, dtype, threads)
                done += 1
                if verbose:
                    took = time.perf_counter() - start
                    print(f"  {distribution:12s} {dtype:9s} {threads} thread(s): {took:.2f} s")
    return done


def command(args: Any) -> int:
    """``fpexplore warm``: every summation growth curve into the cache, timed."""
    start = time.perf_counter()
    n = warm_summation_curves(verbose=bool(args.verbose))
    print(f"summation growth curves: {n} sets ready in {time.perf_counter() - start:.1f} s")
    return 0
