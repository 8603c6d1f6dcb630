"""Benchmark: one update of the summation explorer (lesson run + figure redraw) at n = 10^5.

Each repetition changes the seed (a fresh array, as moving a slider would) and does what the
explorer does on a change: ``LESSON.run`` (every framework and emulator), the table's HTML and
the error-growth figure rendered to PNG the way ``display(fig)`` renders it in JupyterLab
(IPython's ``print_figure`` with the inline backend's ``bbox_inches="tight"``). A baseline,
``np.sum`` of the same array, is timed in the same process.
Warm-up first: framework imports, the DJL worker and the cached error-growth curves are paid
once per session, not per update.

    .venv/bin/python benchmarks/bench_summation_widget.py [--n 100000] [--reps 20]

Target: p95 < 150 ms.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

TARGET_MS = 150.0


def _p(times: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(times) * 1e3, q))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--distribution", default="uniform")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    from IPython.core.pylabtools import print_figure

    from fpexplore.lessons.summation_order import LESSON
    from fpexplore.lessons.summation_order.inputs import make_input

    def redraw(comparison):
        comparison._repr_html_()
        return print_figure(LESSON.figure(comparison), "png", bbox_inches="tight")

    params = {
        "distribution": args.distribution,
        "n": args.n,
        "dtype": "float32",
        "threads": args.threads,
    }
    t0 = time.perf_counter()
    warm = LESSON.run(**params, seed=0)
    redraw(warm)
    print(f"warm-up (imports, DJL worker, growth curves): {time.perf_counter() - t0:.2f} s")
    ran = [o.implementation for o in warm.outcomes if o.ran and o.kind == "framework"]
    print(f"frameworks run on each update: {', '.join(ran)}")

    updates, runs, baseline = [], [], []
    for rep in range(args.reps):
        seed = rep + 1
        x = make_input(args.distribution, args.n, "float32", seed)
        t = time.perf_counter()
        np.sum(x)
        baseline.append(time.perf_counter() - t)
        t = time.perf_counter()
        comparison = LESSON.run(**params, seed=seed)
        t_run = time.perf_counter()
        redraw(comparison)
        t_end = time.perf_counter()
        runs.append(t_run - t)
        updates.append(t_end - t)

    print(
        f"n = {args.n}, {args.reps} repetitions, float32, {args.distribution}, "
        f"threads = {args.threads}"
    )
    print(
        f"  baseline np.sum         p50 {_p(baseline, 50):8.3f} ms   p95 {_p(baseline, 95):8.3f} ms"
    )
    print(f"  lesson run              p50 {_p(runs, 50):8.1f} ms   p95 {_p(runs, 95):8.1f} ms")
    print(
        f"  run + redraw (update)   p50 {_p(updates, 50):8.1f} ms   p95 {_p(updates, 95):8.1f} ms"
    )
    p95 = _p(updates, 95)
    verdict = "meets" if p95 < TARGET_MS else "MISSES"
    print(f"  update p95 {p95:.1f} ms {verdict} the target of {TARGET_MS:.0f} ms")
    return 0 if p95 < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
