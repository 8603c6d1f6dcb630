"""Graph vs eager: the same log-sum-exp eagerly, under tf.function (with and without XLA)
and, on request, under torch.compile; against the exact log-sum-exp."""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from ...result import Claim, Observation, Outcome
from ...truth.certify import certified
from .frameworks import Frameworks, Section, from_tf, from_torch, on_grid, rng, same_bits, shown

ROWS = 8
BOUND_ULP = 4.0  # max, subtract, exp, sum, log, add: a few ULP of the result at most


def lse_reference(x: np.ndarray) -> Any:
    """log(sum(exp(x))) per row, certified."""

    def compute(_: int) -> Any:
        out = np.empty(x.shape[0], dtype=object)
        for r, row in enumerate(x.astype(np.float64).tolist()):
            m = max(row)
            out[r] = m + mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(v) - m) for v in row))
        return out

    return certified(f"logsumexp(float32[{x.shape[0]}x{x.shape[1]}])", compute, 64, "float32")


def _tf_lse(tf: Any) -> Any:
    def lse(x: Any) -> Any:
        m = tf.reduce_max(x, axis=-1, keepdims=True)
        return tf.math.log(tf.reduce_sum(tf.exp(x - m), axis=-1)) + m[:, 0]

    return lse


def _torch_lse(torch: Any) -> Any:
    def lse(x: Any) -> Any:
        m = x.amax(-1, keepdim=True)
        return torch.log(torch.exp(x - m).sum(-1)) + m[:, 0]

    return lse


def run_graph(
    fw: Frameworks, size: int, seed: int, agree: bool, compile: bool = False, **_: Any
) -> Section:
    """``ROWS`` rows of ``size`` float32 logits."""
    tf, torch = fw.tf, fw.torch
    x = on_grid(3.0 * rng(seed, 9).standard_normal((ROWS, size)), "float32")
    truth = lse_reference(x)
    f_tf, f_torch = _tf_lse(tf), _torch_lse(torch)
    fx, tx = tf.constant(x), torch.from_numpy(x)
    wide = tf.constant(x.astype(np.float64))
    got = {
        "tf eager": from_tf(f_tf(fx)),
        "tf.function": from_tf(tf.function(f_tf)(fx)),
        "tf XLA": from_tf(tf.function(f_tf, jit_compile=True)(fx)),
        "torch eager": from_torch(f_torch(tx)),
        "tf eager wide": from_tf(tf.cast(f_tf(wide), tf.float32)),
        "tf XLA wide": from_tf(tf.cast(tf.function(f_tf, jit_compile=True)(wide), tf.float32)),
        "torch eager wide": from_torch(f_torch(tx.double()).float()),
    }
    compiled = ""
    if compile:
        try:
            got["torch.compile"] = from_torch(torch.compile(f_torch)(tx))
        except Exception as exc:  # any compiler failure: the row says so
            compiled = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    outcomes = {
        k: fw.measured(
            "tensorflow" if k.startswith("tf") else "torch",
            k if "wide" not in k else k.replace(" wide", ", in float64, rounded once"),
            v,
            truth,
        )
        for k, v in got.items()
    }
    if compile and compiled:
        outcomes["torch.compile"] = Outcome.missing(
            "torch.compile",
            "torch",
            f"torch.compile did not run here: {compiled}",
            version=torch.__version__,
        )
    err = {k: o.error.max_abs_ulp for k, o in outcomes.items() if o.ran}

    def rows_differ(a: str, b: str) -> int:
        return int((got[a] != got[b]).sum())

    def bits(a: str, b: str, same: str, other: str) -> str:
        """``same`` when ``a`` and ``b`` have the same bits, else how many rows differ."""
        if same_bits(got[a], got[b]):
            return same
        return f"{rows_differ(a, b)} of {ROWS} rows differ from {other}"

    claims = {
        "function_is_eager": Claim(
            "tf.function without XLA runs the eager kernels as a graph: "
            + bits("tf.function", "tf eager", "bit-identical to eager", "eager"),
            same_bits(got["tf.function"], got["tf eager"]),
        ),
        "xla": Claim(
            "tf.function(jit_compile=True) compiles with XLA, which fuses exp and sum: "
            + bits("tf XLA", "tf eager", "bit-identical to eager here", "eager")
            + f"; eager, tf.function and XLA are all within {BOUND_ULP:g} ULP of the exact "
            f"log-sum-exp ({err['tf eager']:.3g}, {err['tf.function']:.3g}, {err['tf XLA']:.3g})",
            all(err[k] <= BOUND_ULP for k in ("tf eager", "tf.function", "tf XLA")),
        ),
        "torch_vs_tf": Claim(
            f"torch eager is within {BOUND_ULP:g} ULP too ({err['torch eager']:.3g}); "
            + bits("torch eager", "tf eager", "its bits equal TensorFlow's", "TensorFlow's"),
            err["torch eager"] <= BOUND_ULP,
        ),
        "fix_agrees": Claim(
            "computing in float64 and rounding once gives the same bits eagerly, under XLA and "
            f"in torch, within {0.5 + 2.0**-12:g} ULP of the exact value",
            same_bits(got["tf eager wide"], got["tf XLA wide"])
            and same_bits(got["tf eager wide"], got["torch eager wide"])
            and max(err[k] for k in ("tf eager wide", "tf XLA wide", "torch eager wide"))
            <= 0.5 + 2.0**-12,
        ),
    }
    if "torch.compile" in got:
        claims["torch_compile"] = Claim(
            "torch.compile (inductor) generates its own fused loop: "
            + bits("torch.compile", "torch eager", "bit-identical to eager here", "eager")
            + f"; within {BOUND_ULP:g} ULP of the exact value ({err['torch.compile']:.3g})",
            err["torch.compile"] <= BOUND_ULP,
        )
    data = {"values": got, "max_abs_ulp": err, "compile_error": compiled}
    obs = {
        "xla_rows_differ": Observation(
            "rows where XLA's bits differ from eager's", rows_differ("tf XLA", "tf eager")
        )
    }
    rows = shown(
        outcomes,
        agree,
        ["tf eager wide", "tf XLA wide", "torch eager wide"],
        ["tf eager", "tf.function", "tf XLA", "torch eager"]
        + (["torch.compile"] if compile else []),
    )
    return Section(rows, claims, truth, data, obs)


GRAPH_CLAIMS = {
    "function_is_eager": "tf.function without XLA gives eager's bits",
    "xla": "XLA may change bits; every mode stays within a few ULP",
    "torch_vs_tf": "torch eager stays within a few ULP",
    "fix_agrees": "in float64, rounded once, every mode gives the same bits",
}
GRAPH_TEXT = (
    "Graph vs eager: tf.function traces the Python function into a graph but runs the same "
    "kernels, so the bits do not change. jit_compile=True hands the graph to XLA, which fuses "
    "operations and generates its own loops (its own exp, its own summation order): bits may "
    "change, accuracy does not. torch.compile (inductor) does the same for torch; it compiles "
    "C++ on first use, which takes tens of seconds, so it runs only with torch_compile=True."
)
