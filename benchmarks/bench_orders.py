"""Time every summation-order emulator at n = 10^6, as a ratio to np.sum in the same process.

.venv/bin/python benchmarks/bench_orders.py [--n 1000000] [--dtype float32] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from fpexplore import orders


def best_time(func, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--dtype", default="float32", choices=["float16", "float32", "float64"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal(args.n).astype(args.dtype)
    base = best_time(lambda: np.sum(x), max(args.repeat, 20))
    print(f"n = {args.n}, {args.dtype}, best of {args.repeat}; np.sum: {base * 1e3:.3f} ms")
    print(f"{'order':<12} {'threads':>7} {'seconds':>9} {'x np.sum':>10}")
    for name in orders.names():
        for threads in (1, 2) if orders.ORDERS[name].uses_threads else (1,):
            seconds = best_time(
                lambda name=name, threads=threads: orders.emulate(x, name, threads=threads),
                args.repeat,
            )
            print(f"{name:<12} {threads:>7} {seconds:>9.4f} {seconds / base:>10.0f}")


if __name__ == "__main__":
    main()
