"""reduce_sum and the intra-op thread count: the real frameworks next to the summation
lesson's bit-exact emulators (`fpexplore.orders`), which this section reuses, not repeats."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ... import orders
from ... import truth as exact
from ...result import Outcome
from .._base import torch_threads
from .claims import REDUCE_SUM
from .data import ReduceSumData
from .frameworks import (
    OBSERVATIONS,
    ROUND_ONCE_BOUND,
    Frameworks,
    Section,
    from_tf,
    on_grid,
    rng,
    rounded_once,
    same_bits,
    shown,
)

THREADS = (1, 2, 4, 8)


def _torch_sums(torch: Any, x: np.ndarray) -> tuple[dict[int, Any], dict[int, Any]]:
    """torch.sum of ``x`` at each of ``THREADS`` threads, in float32 and in float64 rounded
    once; torch's thread count restored after."""
    tx = torch.from_numpy(x)
    live: dict[int, np.float32] = {}
    wide: dict[int, np.float32] = {}
    for t in THREADS:
        with torch_threads(torch, t):
            live[t] = np.float32(torch.sum(tx).item())
            wide[t] = np.float32(torch.sum(tx, dtype=torch.float64).float().item())
    return live, wide


def _emulated_row(threads: int, value: Any, truth: Any) -> Outcome:
    return Outcome.measured(
        f"emulated tf.reduce_sum, {threads} intra-op threads",
        "tensorflow",
        value,
        truth,
        kind="emulator",
        version="fpexplore.orders",
        note="TensorFlow fixes its thread pool at start-up: see the summation lesson",
    )


def run_reduce_sum(fw: Frameworks, size: int, seed: int, agree: bool, **_: Any) -> Section:
    """``size`` standard normal float32 values, summed at 1, 2, 4, 8 threads."""
    tf = fw.tf
    x = on_grid(rng(seed, 10).standard_normal(size), "float32")
    truth = exact.sum(x)
    live, wide = _torch_sums(fw.torch, x)
    emulated_torch = {t: orders.emulate(x, "torch", t) for t in THREADS}
    emulated_tf = {t: orders.emulate(x, "tensorflow", t) for t in THREADS}
    tf_live = from_tf(tf.reduce_sum(tf.constant(x)))
    tf_wide = from_tf(tf.cast(tf.reduce_sum(tf.cast(tf.constant(x), tf.float64)), tf.float32))
    candidates = range(1, max(max(THREADS), os.cpu_count() or 1) + 1)
    tf_match = [t for t in candidates if same_bits(orders.emulate(x, "tensorflow", t), tf_live)]
    outcomes = {
        f"torch {t}": fw.measured(
            "torch",
            f"torch.sum, torch.set_num_threads({t})",
            live[t],
            truth,
            threads=t,
            note="emulator: "
            + ("same bits" if same_bits(emulated_torch[t], live[t]) else "DIFFERENT bits"),
        )
        for t in THREADS
    }
    outcomes["tf"] = fw.measured(
        "tensorflow",
        "tf.reduce_sum",
        tf_live,
        truth,
        note="matches the Eigen emulator at "
        + (", ".join(map(str, tf_match)) + " thread(s)" if tf_match else "no thread count"),
    )
    outcomes |= {f"tf emulated {t}": _emulated_row(t, v, truth) for t, v in emulated_tf.items()}
    outcomes["torch wide"] = fw.measured(
        "torch", "torch.sum(x, dtype=torch.float64).float()", wide[1], truth
    )
    outcomes["tf wide"] = fw.measured(
        "tensorflow", "tf.reduce_sum in float64, cast to float32", tf_wide, truth
    )
    e_wide = max(outcomes["torch wide"].error.max_abs_ulp, outcomes["tf wide"].error.max_abs_ulp)
    claims = {
        "torch_threads": REDUCE_SUM["torch_threads"].claim(
            all(same_bits(emulated_torch[t], live[t]) for t in THREADS),
            size=size,
            threads=", ".join(map(str, THREADS)),
            distinct_torch=len({v.tobytes() for v in live.values()}),
        ),
        "tf_threads": REDUCE_SUM["tf_threads"].claim(
            bool(tf_match),
            matched=", ".join(map(str, tf_match)) or "no",
            threads=", ".join(map(str, THREADS)),
            distinct_tf=len({np.asarray(v).tobytes() for v in emulated_tf.values()}),
        ),
        "fix_agrees": REDUCE_SUM["fix_agrees"].claim(
            rounded_once([*wide.values(), tf_wide], [e_wide]),
            round_once_bound=ROUND_ONCE_BOUND,
            e_wide=e_wide,
        ),
    }
    observations = {
        "torch_sums_by_threads": OBSERVATIONS["torch_sums_by_threads"].observe(
            {t: float(v) for t, v in live.items()}
        ),
        "tf_pool_matches": OBSERVATIONS["tf_pool_matches"].observe(tf_match),
    }
    rows = shown(
        outcomes,
        agree,
        ["torch wide", "tf wide"],
        [f"torch {t}" for t in THREADS] + ["tf"] + [f"tf emulated {t}" for t in THREADS],
    )
    return Section(rows, claims, truth, ReduceSumData(live, tf_live, tf_match), observations)
