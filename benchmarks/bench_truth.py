"""How fast are the exact truths? Worst ratio to the float baseline over input families.

    .venv/bin/python benchmarks/bench_truth.py [--repeat 5] [--skip-1024] [--clock cpu]
        [--only sum|dot|matmul|lessons ...]

Each truth is timed against its float baseline on the same arrays, in this process, the two
interleaved (best of ``--repeat`` each), over seven input families: uniform, normal,
log-normal (sigma = 3), the full exponent range, heavy cancellation, all-equal and
subnormal-heavy. ``--clock cpu`` times with the process CPU clock (all threads) instead of
the wall clock: on a machine shared with other work, wall times of the baseline swing by
tens of times. BLAS threads that wait by spinning still do so with ``--clock cpu`` (a 256x256
float64 product then takes 0.6 to 14 ms of CPU time); ``OPENBLAS_NUM_THREADS=1`` in the
environment gives steady ratios of single-threaded work on both sides.
Targets (issue: exact truths at framework speed):

- exact float32 sum of 10**7: <= 10x ``np.sum`` of the float32 array
- exact float64 sum of 10**7: <= 20x ``np.sum`` of the float64 array
- exact float32 dot of 10**6: <= 20x ``np.dot`` of the arrays in float64
- exact float32 matmul 256x256 and 1024x1024: <= 30x ``np.matmul`` in float64. Timed as the
  exact truth *and* its answer: ``truth.matmul(a, b).round("float32")`` (rows ``matmul N``),
  ``.round("float64")`` (``matmul N f64``) and ``metrics.measure`` of the float32 result
  against it (``matmul N measure``). Wide rows are computed level by level as far as the
  answer needs (``fpexplore/truth/levels.py``), so timing the construction alone would
  flatter them; the construction alone and the whole expansion (every level, as
  ``Truth.expansion`` completes it) are printed for reference.

Then the numbers lessons need: a 100-step chain of 64x64 float32 matmuls with the exact truth
of every step, and one 256x256 and one 1024x1024 exact matmul (normal data), in seconds.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import fpexplore.truth as truth
from fpexplore import metrics

FAMILIES = ("uniform", "normal", "lognormal", "fullrange", "cancel", "allequal", "subnormal")
TARGETS = {"sum f32 1e7": 10, "sum f64 1e7": 20, "dot f32 1e6": 20}
for _n in (256, 1024):
    for _what in ("", " f64", " measure"):
        TARGETS[f"matmul {_n}{_what}"] = 30


def family(name: str, n: int, dt: type, rng: np.random.Generator) -> np.ndarray:
    """n values of one input family, finite, in dtype ``dt``."""
    fi = np.finfo(dt)
    if name == "uniform":
        x = rng.uniform(-1, 1, n)
    elif name == "normal":
        x = rng.standard_normal(n)
    elif name == "lognormal":
        x = rng.lognormal(0.0, 3.0, n) * rng.choice([-1.0, 1.0], n)
    elif name == "fullrange":  # every binade of the format equally likely, subnormals included
        lo = int(np.log2(float(fi.smallest_subnormal)))
        x = np.ldexp(rng.uniform(1, 2, n), rng.integers(lo, fi.maxexp, n)) * rng.choice([-1, 1], n)
    elif name == "cancel":  # pairs that nearly cancel, shuffled
        h = rng.standard_normal(n - n // 2)
        x = np.concatenate([h, -h[: n // 2] * (1 + 2.0**-20)])
        rng.shuffle(x)
    elif name == "allequal":
        x = np.full(n, 0.1)
    elif name == "subnormal":
        x = rng.standard_normal(n) * float(fi.smallest_normal) / 8
    else:
        raise ValueError(name)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = x.astype(dt)
    out[~np.isfinite(out)] = 0
    return out


CLOCK = time.perf_counter


def interleaved(base: Callable[[], Any], exact: Callable[[], Any], repeat: int) -> tuple:
    """Best times of the baseline and the exact truth, run alternately."""
    tb = te = math.inf
    for _ in range(repeat):
        t0 = CLOCK()
        base()
        tb = min(tb, CLOCK() - t0)
        t0 = CLOCK()
        exact()
        te = min(te, CLOCK() - t0)
    return tb, te


def row(name: str, fam: str, tb: float, te: float) -> float:
    r = te / tb
    print(
        f"  {name:20s} {fam:10s} baseline {tb * 1e3:9.2f} ms   exact {te * 1e3:10.1f} ms  {r:7.1f}x"
    )
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-1024", action="store_true", help="leave out the 1024x1024 matmul")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument(
        "--only",
        nargs="+",
        choices=("sum", "dot", "matmul", "lessons"),
        default=("sum", "dot", "matmul", "lessons"),
        help="run only these parts",
    )
    args = ap.parse_args()
    only = set(args.only)
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    rng = np.random.default_rng(args.seed)
    rep = args.repeat
    worst: dict[str, tuple[float, str]] = {}

    def note(key: str, fam: str, r: float) -> None:
        if r > worst.get(key, (0.0, ""))[0]:
            worst[key] = (r, fam)

    print(
        f"ratio = exact truth / float baseline (same arrays, same process, best of {rep}, "
        f"{args.clock} clock)"
    )
    for dt, key in ((np.float32, "sum f32 1e7"), (np.float64, "sum f64 1e7")):
        if "sum" not in only:
            break
        for fam in FAMILIES:
            x = family(fam, 10**7, dt, rng)
            with np.errstate(over="ignore", invalid="ignore"):  # np.sum may overflow
                tb, te = interleaved(lambda x=x: np.sum(x), lambda x=x: truth.sum(x), rep)
            note(key, fam, row(key, fam, tb, te))
    key = "dot f32 1e6"
    for fam in FAMILIES if "dot" in only else ():
        x = family(fam, 10**6, np.float32, rng)
        y = rng.permutation(x)
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        tb, te = interleaved(
            lambda x64=x64, y64=y64: np.dot(x64, y64), lambda x=x, y=y: truth.dot(x, y), rep
        )
        note(key, fam, row(key, fam, tb, te))
    sizes = (256,) if args.skip_1024 else (256, 1024)
    for n in sizes if "matmul" in only else ():
        key = f"matmul {n}"
        for fam in FAMILIES:
            x = family(fam, n * n, np.float32, rng)
            a, b = x.reshape(n, n), rng.permutation(x).reshape(n, n)
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            reps = rep if n <= 256 else max(1, rep // 3)
            got = (a64 @ b64).astype(np.float32)

            def answers(a=a, b=b, got=got):
                return {
                    "": lambda: truth.matmul(a, b).round("float32"),
                    " f64": lambda: truth.matmul(a, b).round("float64"),
                    " measure": lambda: metrics.measure(got, truth.matmul(a, b)),
                    " (built)": lambda: truth.matmul(a, b),
                    " (whole)": lambda: truth.matmul(a, b).expansion,
                }

            for what, run in answers().items():
                with np.errstate(over="ignore"):
                    tb, te = interleaved(lambda a64=a64, b64=b64: a64 @ b64, run, reps)
                r = row(f"{key}{what}", fam, tb, te)
                if not what.startswith(" ("):
                    note(f"{key}{what}", fam, r)

    print("\nworst ratio over the families")
    for key, (r, fam) in worst.items():
        ok = "meets" if r <= TARGETS[key] else "MISSES"
        print(f"  {key:20s} {r:7.1f}x  ({fam:9s})  target <= {TARGETS[key]}x: {ok}")

    if "lessons" not in only:
        return
    print("\nnumbers the lessons need (normal data, float32 inputs)")
    ws = [(rng.standard_normal((64, 64)) / 8).astype(np.float32) for _ in range(100)]
    x0 = rng.standard_normal((64, 64)).astype(np.float32)

    def chain(exact: bool) -> None:
        x = x0
        for w in ws:
            if exact:
                truth.matmul(x, w).round("float32")
            x = (x @ w).astype(np.float32)

    tb, te = interleaved(lambda: chain(False), lambda: chain(True), max(1, rep // 2))
    print(
        f"  100-step 64x64 chain: {te:.3f} s with the exact truth of every step "
        f"({tb * 1e3:.1f} ms without)"
    )
    for n in sizes:
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        t0 = time.perf_counter()
        t = truth.matmul(a, b)
        t1 = time.perf_counter()
        t.round("float32")
        t2 = time.perf_counter()
        print(f"  matmul {n}x{n}: {t1 - t0:.3f} s exact, rounding to float32 {t2 - t1:.3f} s")


if __name__ == "__main__":
    main()
