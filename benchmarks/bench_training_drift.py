"""Benchmark: the training-drift lesson's quick run, and one explorer update answered from the
cache (lesson run from the kept trajectories, the table's HTML and the figure as PNG).

A cold run (a new seed: the float32, float64 and second runs, and the mpmath reference
trajectory) is timed once per repetition; a cached update repeats a setting already computed,
as the explorer does when a student goes back to it. A baseline, one float32 training run of the
same model and steps with no reference and no figure, is timed in the same process: the
ratios say what the lesson adds to a bare training run.

    .venv/bin/python benchmarks/bench_training_drift.py [--reps 5] [--steps 100]

Target: a cached update p95 < 250 ms.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

TARGET_MS = 250.0


def _p(times: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(times) * 1e3, q))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--model", default="rnn")
    args = parser.parse_args(argv)

    from IPython.core.pylabtools import print_figure

    from fpexplore.lessons.training_drift import LESSON, models
    from fpexplore.lessons.training_drift.train import train

    def update(**params):
        c = LESSON.run(model=args.model, steps=args.steps, **params)
        c._repr_html_()
        print_figure(LESSON.figure(c), "png", bbox_inches="tight")
        return c

    t0 = time.perf_counter()
    update(seed=0)  # the study and the table: read from the cache (fpexplore warm) or computed
    print(f"warm-up (study, table, imports): {time.perf_counter() - t0:.2f} s")
    cold, cached, runs, baseline = [], [], [], []
    for rep in range(args.reps):
        seed = 50 + rep  # a setting not computed before in this process
        t = time.perf_counter()
        LESSON.run(model=args.model, steps=args.steps, seed=seed)
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        update(seed=seed)
        cached.append(time.perf_counter() - t)
        t = time.perf_counter()
        LESSON.run(model=args.model, steps=args.steps, seed=seed)
        runs.append(time.perf_counter() - t)
        data, w0 = models.dataset(args.model, seed), models.init(args.model, seed)
        t = time.perf_counter()
        train(args.model, models.numpy_ops("float32"), w0, data, 1.0, args.steps)
        baseline.append(time.perf_counter() - t)
    base = float(np.median(baseline))
    print(f"baseline (one float32 training run): median {base * 1e3:.1f} ms")
    for name, times in (
        ("quick run, new setting", cold),
        ("cached lesson run alone", runs),
        ("cached explorer update (run, HTML, PNG figure)", cached),
    ):
        print(
            f"{name}: median {_p(times, 50):.0f} ms, p95 {_p(times, 95):.0f} ms "
            f"({float(np.median(times)) / base:.1f}× the baseline)"
        )
    ok = _p(cached, 95) < TARGET_MS
    print(f"cached update p95 {'meets' if ok else 'misses'} the {TARGET_MS:.0f} ms target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
