"""``fpexplore warm``: compute once what the widgets would otherwise compute on a
student's first click (the summation explorer's curves; the training-drift lesson's study,
table and default runs).

The summation explorer draws error-growth curves per (distribution, format, threads); each set
costs seconds the first time and is then kept on disk (``cache_dir()/summation_growth``). Set-up
runs this module so that every choice in the explorer answers from the cache. It is safe to run
again: present curves are read, not recomputed.
"""

from __future__ import annotations

import time
from typing import Any


def command(args: Any) -> int:
    """``fpexplore warm``: compute (or read) the growth curves of every distribution, format
    and thread count into the cache, timed."""
    from .lessons.summation_order import growth
    from .lessons.summation_order.inputs import DISTRIBUTIONS, DTYPES

    start, n = time.perf_counter(), 0
    for threads in (1, 2):
        for dtype in DTYPES:
            for distribution in DISTRIBUTIONS:
                began = time.perf_counter()
                growth.curves(distribution, dtype, threads)
                n += 1
                if args.verbose:
                    took = time.perf_counter() - began
                    print(f"  {distribution:12s} {dtype:9s} {threads} thread(s): {took:.2f} s")
    print(f"summation growth curves: {n} sets ready in {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    warm_training_drift()
    print(f"training drift: study, table and default runs ready in "
          f"{time.perf_counter() - start:.1f} s")  # fmt: skip
    return 0


def warm_training_drift() -> None:
    """The training-drift lesson's study, diversity table and each model's default runs for
    every perturbation that needs no TensorFlow (TensorFlow's row runs when asked)."""
    from .lessons import get
    from .lessons.training_drift import experiment

    lesson = get("training_drift")
    for model in lesson.param("model").choices:
        for perturbation in experiment.PERTURBATIONS:
            if perturbation != "tensorflow":
                lesson.run(model=model, perturbation=perturbation)
