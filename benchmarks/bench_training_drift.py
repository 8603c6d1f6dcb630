"""Benchmark: the training-drift lesson's quick run, and the explorer's update answered from
cached runs (the lesson run from the kept trajectories, the table's HTML and the figure).

A cold run (a new seed: the float32, float64 and second runs, and the mpmath reference
trajectory) is timed once per repetition. Then the explorer walks through settings whose runs
are cached but which the view has not shown (each move changes one control: the perturbation,
or the seed), as a student's move does, and each update is timed as the kernel answers it: with
the figure drawn as SVG (`figure_svg`, what notebook 13 shows), then the same walk in a second
view drawing the matplotlib figure as a PNG (the generic explorer's path). A baseline, one
float32 training run of the same model and steps with no reference and no figure, is timed in
the same process: the ratios say what the lesson adds to a bare training run.

    .venv/bin/python benchmarks/bench_training_drift.py [--reps 5] [--steps 100]

Target: a cached update p95 < 250 ms.
"""

from __future__ import annotations

import argparse
import time
from itertools import pairwise

import numpy as np

TARGET_MS = 250.0


def _p(times: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(times) * 1e3, q))


def _walk(seeds: list[int], perturbations: list[str]) -> list[dict[str, object]]:
    """Every (seed, perturbation) once, each one control away from the one before."""
    out = []
    for i, seed in enumerate(seeds):
        for p in perturbations if i % 2 == 0 else perturbations[::-1]:
            out.append({"seed": seed, "perturbation": p})
    return out


def _updates(view, walk: list[dict[str, object]]) -> list[float]:
    """Seconds of each explorer update along ``walk`` (its first setting already shown)."""
    controls = {c.description: c for c in view.children[1].children}
    times = []
    for before, after in pairwise(walk):
        (name,) = [k for k in after if after[k] != before[k]]
        t = time.perf_counter()
        controls[name].value = after[name]  # the explorer's update runs on the change
        times.append(time.perf_counter() - t)
        assert view.state["comparison"].params[name] == after[name]
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--model", default="rnn")
    args = parser.parse_args(argv)

    from fpexplore.lessons.training_drift import LESSON, figure_svg, models, pending
    from fpexplore.lessons.training_drift.train import train
    from fpexplore.widgets import explore

    quick = {"model": args.model, "steps": args.steps}
    t0 = time.perf_counter()
    LESSON.run(**quick, seed=0)  # the study and the table: from the cache (fpexplore warm)
    print(f"warm-up (study, table, imports): {time.perf_counter() - t0:.2f} s")
    cold, baseline = [], []
    seeds = [50 + rep for rep in range(args.reps)]  # settings not computed in this process
    for seed in seeds:
        t = time.perf_counter()
        LESSON.run(**quick, seed=seed)
        cold.append(time.perf_counter() - t)
        data, w0 = models.dataset(args.model, seed), models.init(args.model, seed)
        t = time.perf_counter()
        train(args.model, models.numpy_ops("float32"), w0, data, 1.0, args.steps)
        baseline.append(time.perf_counter() - t)
    # the runs of every setting of the walk, cached before the views show them
    perturbations = ["one-ulp", "summation-order", "float64"]
    walk = _walk(seeds, perturbations)
    runs = []
    for setting in walk:
        LESSON.run(**quick, **setting)
        t = time.perf_counter()
        LESSON.run(**quick, **setting)
        runs.append(time.perf_counter() - t)
    svg_view = explore(LESSON, svg=figure_svg, work=pending, **quick, **walk[0])
    svg_times = _updates(svg_view, walk)
    png_view = explore(LESSON, **quick, **walk[0])
    png_times = _updates(png_view, walk)
    base = float(np.median(baseline))
    print(f"baseline (one float32 training run): median {base * 1e3:.1f} ms")
    print(f"{len(svg_times)} explorer updates, each to a cached setting the view has not shown")
    for name, times in (
        ("quick run, new setting", cold),
        ("cached lesson run alone", runs),
        ("cached explorer update, SVG figure (notebook 13)", svg_times),
        ("cached explorer update, PNG figure", png_times),
    ):
        print(
            f"{name}: median {_p(times, 50):.0f} ms, p95 {_p(times, 95):.0f} ms "
            f"({float(np.median(times)) / base:.1f}× the baseline)"
        )
    ratio = float(np.median(png_times) / np.median(svg_times))
    size = len(svg_view.children[4].value.encode())
    print(f"PNG update / SVG update (medians): {ratio:.0f}×; the SVG sent: {size / 1e3:.0f} kB")
    ok = _p(svg_times, 95) < TARGET_MS
    print(f"cached SVG update p95 {'meets' if ok else 'misses'} the {TARGET_MS:.0f} ms target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
