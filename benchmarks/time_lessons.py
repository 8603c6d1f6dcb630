"""How long does each lesson take at its default parameters? CPU seconds, best of two runs.

    .venv/bin/python benchmarks/time_lessons.py [LESSON ...] [--root DIR]

Results kept between calls (`fpexplore.memo`) are switched off, so every run does the whole
computation; a first run before the timed ones pays for imports and framework start-up.
``--root`` times the package of another checkout (e.g. an older commit exported with
``git archive COMMIT | tar -x -C DIR``), to compare two versions on the same machine. The
default lessons are those whose truths are exact sums and products.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

DEFAULT = (
    "summation_order",
    "distributed_reduction",
    "libtorch_vs_pytorch",
    "tf32",
    "cpu_vs_accelerator",
    "gpu_determinism",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lessons", nargs="*", default=DEFAULT)
    ap.add_argument("--root", help="a checkout whose fpexplore package is timed")
    args = ap.parse_args()
    if args.root:
        sys.path.insert(0, args.root)
    warnings.simplefilter("ignore")
    import fpexplore
    import fpexplore.lessons as lessons
    from fpexplore import memo

    memo.Memo.get = lambda self, key, compute: compute()  # time the work, not the store
    print(f"fpexplore from {fpexplore.__file__}")
    for name in args.lessons:
        lesson = lessons.get(name)
        lesson.run()
        best = float("inf")
        for _ in range(2):
            t0 = time.process_time()
            lesson.run()
            best = min(best, time.process_time() - t0)
        print(f"  {name:24s} {best:7.3f} s")


if __name__ == "__main__":
    main()
