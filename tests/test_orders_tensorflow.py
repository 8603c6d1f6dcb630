"""The tensorflow order emulator against the real tf.reduce_sum (CPU).

TensorFlow fixes its intra-op thread count at first use in a process, so each thread count
runs TensorFlow in a fresh subprocess, which returns the bits of every sum; the emulator runs
here on the very same arrays (regenerated from the same seeds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_orders_inputs import (
    BOUNDARY_SIZES,
    DISTRIBUTIONS,
    RERUN,
    RUN_SEED,
    TF_TWO_THREADS,
    numpy_dtype,
    same_bits,
    sample,
    tf_threshold_sizes,
)

from fpexplore import NotEmulated, orders

WORKER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from fpexplore import backends

tf = backends.load("tensorflow")
threads = int(sys.argv[2])
tf.config.threading.set_intra_op_parallelism_threads(threads)
from test_orders_inputs import RUN_SEED, sample
out = []
for distribution, n, dtype, seed in json.load(sys.stdin):
    x = sample(distribution, n, dtype, seed)
    out.append(tf.reduce_sum(tf.constant(x)).numpy().tobytes().hex())
print(json.dumps({"threads": tf.config.threading.get_intra_op_parallelism_threads(),
                  "run_seed": RUN_SEED,
                  "version": tf.__version__, "sums": out}))
"""


def run_tensorflow(threads: int, cases: list, onednn: str | None = None) -> list[str]:
    """tf.reduce_sum of each case in a subprocess with ``threads`` intra-op threads."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", FPEXPLORE_TEST_SEED=str(RUN_SEED))
    if onednn is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = onednn
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(Path(__file__).parent), str(threads)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["threads"] == threads
    assert result["run_seed"] == RUN_SEED  # the very same arrays on both sides
    return result["sums"]


def check(threads: int, cases: list, sums: list[str]) -> None:
    assert len(sums) == len(cases)
    wrong = []
    for (distribution, n, dtype, seed), bits in zip(cases, sums, strict=True):
        x = sample(distribution, n, dtype, seed)
        want = np.frombuffer(bytes.fromhex(bits), dtype=numpy_dtype(dtype))[0]
        got = orders.emulate(x, "tensorflow", threads=threads)
        if not same_bits(got, want):
            wrong.append((distribution, n, dtype, seed, got, want))
    assert not wrong, f"{len(wrong)} of {len(cases)} differ {RERUN}, e.g. {wrong[:5]}"


def cases_for(threads: int) -> list:
    cases = []
    for dtype in ("float32", "float64"):
        for distribution in DISTRIBUTIONS:
            sizes = BOUNDARY_SIZES if threads == 1 else [n for n in BOUNDARY_SIZES if n > 16]
            for n in sizes:
                cases += [[distribution, n, dtype, seed] for seed in (1, 2)]
    for dtype in ("float16", "bfloat16"):
        for distribution in ("normal", "cancelling"):
            for n in (*range(0, 40), 199, 200, 201, 1599, 1600, 1601, 3201, 8193, 16391):
                cases += [[distribution, n, dtype, seed] for seed in (2, 3)]
    if threads > 1:  # both sides of the first size split over two threads, every format
        for dtype in TF_TWO_THREADS:
            for n in tf_threshold_sizes(dtype):
                for seed in (3, 4):
                    cases.append(["cancelling", n, dtype, seed])
                cases.append(["normal", n, dtype, 3])
        cases += [["normal", 300_001, "float32", 5], ["loguniform", 200_000, "float64", 5]]
    return cases


@pytest.mark.parametrize("threads", [1, 2])
def test_tensorflow_bit_exact(threads):
    cases = cases_for(threads)
    check(threads, cases, run_tensorflow(threads, cases))


def test_thread_split_changes_the_bits():
    differ = sum(
        orders.emulate(x, "tensorflow", threads=1) != orders.emulate(x, "tensorflow", threads=2)
        for x in (sample("normal", 300_001, "float32", seed) for seed in range(5))
    )
    assert differ > 0
    x = sample("normal", TF_TWO_THREADS["float32"] - 1, "float32", 0)
    assert same_bits(
        orders.emulate(x, "tensorflow", threads=1), orders.emulate(x, "tensorflow", threads=2)
    )


def test_other_formats_are_refused():
    from fpexplore.orders.eigen_sum import tensorflow_sum

    with pytest.raises(NotEmulated, match="int8"):
        tensorflow_sum(np.ones(10, np.int8), 1)


@pytest.mark.slow
def test_tensorflow_large_sizes_three_threads_and_onednn_off():
    rng = np.random.default_rng(30)
    sizes = [999_999, 1_000_000, 2_000_000, *rng.integers(100_000, 2_000_000, 3).tolist()]
    cases = [
        [distribution, n, dtype, 31]
        for n in sizes
        for dtype in ("float32", "float64")
        for distribution in ("normal", "cancelling")
    ]
    for threads in (1, 2, 3):
        check(threads, cases, run_tensorflow(threads, cases))
    check(2, cases[:8], run_tensorflow(2, cases[:8], onednn="0"))
