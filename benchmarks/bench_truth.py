"""How fast is the exact sum? Ratios measured in one run on the same arrays.

    .venv/bin/python benchmarks/bench_truth.py [--n 10000000] [--n-fsum 100000] [--repeat 7]

Prints: exact float32 sum of n elements vs ``np.sum`` (target: at most 10x), Neal's ``xsum``
on the same array (when it imports), and the exact sum vs ``mpmath.fsum`` run at the precision
that makes it exact, on ``n_fsum`` elements (target: at least 300x faster).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

import fpexplore.truth as truth


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """Smallest wall time of ``repeat`` calls, in seconds."""
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def exact_prec(x: np.ndarray) -> int:
    """Bits that hold the exact sum of ``x``: its exponent span plus the carries."""
    nz = x[x != 0].astype(np.float64)
    _, e = np.frexp(nz)
    return int(e.max() - (e.min() - 24)) + math.ceil(math.log2(x.size)) + 8


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--n-fsum", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal(args.n).astype(np.float32)

    t_np = best_of(lambda: np.sum(x), args.repeat)
    t_ex = best_of(lambda: truth.sum(x), args.repeat)
    print(f"float32, n = {args.n:,} (standard normal), best of {args.repeat}")
    print(f"  np.sum            {t_np * 1e3:9.2f} ms")
    print(f"  truth.sum (exact) {t_ex * 1e3:9.2f} ms   ratio {t_ex / t_np:6.1f}x np.sum")
    try:
        import xsum
    except ImportError:
        print("  xsum: not installed (pip install xsum)")
    else:

        def run_xsum() -> float:
            acc = xsum.xsum_large_accumulator()
            xsum.xsum_add(acc, x.astype(np.float64))
            return xsum.xsum_round(acc)

        t_xs = best_of(run_xsum, args.repeat)
        ok = run_xsum() == float(truth.sum(x).round("float64"))
        print(
            f"  xsum (large acc.) {t_xs * 1e3:9.2f} ms   ratio {t_xs / t_np:6.1f}x np.sum "
            f"(includes the float64 conversion; same rounded value: {ok})"
        )

    y = x[: args.n_fsum]
    prec = exact_prec(y)
    floats = y.tolist()
    terms = [mpmath.mpf(v) for v in floats]

    def run_fsum(values: list) -> Any:
        with mpmath.workprec(prec):
            return mpmath.fsum(values)

    t_ey = best_of(lambda: truth.sum(y), args.repeat)
    t_ff = best_of(lambda: run_fsum(floats), max(1, args.repeat // 2))
    t_fm = best_of(lambda: run_fsum(terms), max(1, args.repeat // 2))
    value = truth.sum(y).exact
    fs = run_fsum(floats)
    man, exp = fs.man_exp  # man is the magnitude
    same = (-1 if fs < 0 else 1) * Fraction(int(man)) * Fraction(2) ** int(exp) == value
    print(f"float32, n = {y.size:,}: mpmath.fsum at {prec} bits (exact at that precision)")
    print(f"  truth.sum (exact)          {t_ey * 1e3:8.3f} ms")
    print(
        f"  mpmath.fsum(floats)        {t_ff * 1e3:8.3f} ms   {t_ff / t_ey:6.0f}x slower; "
        f"same value: {same}"
    )
    print(
        f"  mpmath.fsum(mpf terms)     {t_fm * 1e3:8.3f} ms   {t_fm / t_ey:6.0f}x slower "
        "(terms converted beforehand, not timed)"
    )


if __name__ == "__main__":
    main()
