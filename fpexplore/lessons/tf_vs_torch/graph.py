"""Graph vs eager: the same computations eagerly, under tf.function (as it is, and with
Grappler's division rewrite off), under XLA and, on request, torch.compile; over several seeds,
against the exact results: ``x / 3.0`` and a log-sum-exp."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from ...result import Claim, Observation, Outcome
from ...truth.certify import certified
from .claims import GRAPH, REWRITE_SWITCH
from .data import GraphData
from .frameworks import OBSERVATIONS as SEEN
from .frameworks import (
    ROUND_ONCE_BOUND,
    Frameworks,
    Section,
    from_tf,
    from_torch,
    n_different,
    on_grid,
    rng,
    rounded_once,
    same_bits,
    shown,
)

ROWS = 8
BOUND_ULP = 4.0  # max, subtract, exp, sum, log, add: a few ULP of the result at most
SEEDS = 3  # the seed asked for and the next ones: graph-mode verdicts are judged over all
DIVIDE_N = 16_384  # float32 elements divided by 3.0


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


@contextmanager
def grappler(tf: Any, **options: bool) -> Iterator[None]:
    """Grappler's optimizer ``options`` (e.g. ``constant_folding=False``) for the tf.functions
    traced inside, restored after (an option not set before goes back to on, its default)."""
    old = tf.config.optimizer.get_experimental_options()
    tf.config.optimizer.set_experimental_options(options)
    try:
        yield
    finally:
        tf.config.optimizer.set_experimental_options({k: old.get(k, True) for k in options})


def _modes(tf: Any, fn: Any, x: Any) -> dict[str, np.ndarray]:
    """``fn(x)`` eagerly, traced as it is, traced with the rewrite off (and with only the
    arithmetic optimizer off), and XLA-compiled; each tf.function fresh, so it is traced under
    the options in force."""
    out = {"eager": from_tf(fn(x)), "function": from_tf(tf.function(fn)(x))}
    with grappler(tf, **{REWRITE_SWITCH: False}):
        out["rewrite off"] = from_tf(tf.function(fn)(x))
    with grappler(tf, arithmetic_optimization=False):
        out["arithmetic off"] = from_tf(tf.function(fn)(x))
    out["XLA"] = from_tf(tf.function(fn, jit_compile=True)(x))
    return out


@dataclass(frozen=True)
class _Case:
    """One seed's inputs and what every mode (`_modes`) made of them."""

    seed: int
    x: np.ndarray  # the log-sum-exp's rows
    div: dict[str, np.ndarray]  # x / 3.0
    # eager divides (IEEE: correctly rounded), tf.function multiplies by the rounded reciprocal
    rewritten: bool
    lse: dict[str, np.ndarray]


def _seed_cases(fw: Frameworks, size: int, seed: int) -> list[_Case]:
    """x / 3.0 and the log-sum-exp in every mode, at ``SEEDS`` seeds."""
    tf = fw.tf
    f_tf = _tf_lse(tf)
    cases = []
    for s in range(seed, seed + SEEDS):
        x = on_grid(3.0 * rng(s, 9).standard_normal((ROWS, size)), "float32")
        v = on_grid(3.0 * rng(s, 10).standard_normal(DIVIDE_N), "float32")
        div = _modes(tf, lambda t: t / 3.0, tf.constant(v))
        rewritten = same_bits(div["eager"], v / np.float32(3.0)) and same_bits(
            div["function"], v * np.float32(1.0 / 3.0)
        )
        cases.append(_Case(s, x, div, rewritten, _modes(tf, f_tf, tf.constant(x))))
    return cases


def _rows(
    fw: Frameworks, case: _Case, truth: Any, torch_compile: bool
) -> tuple[dict[str, np.ndarray], dict[str, Outcome]]:
    """The first seed's log-sum-exp in TensorFlow's modes and torch (compiled too, when asked;
    where it fails, its row says why), each also in float64 rounded once: values and rows."""
    tf, torch = fw.tf, fw.torch
    f_tf, f_torch = _tf_lse(tf), _torch_lse(torch)
    tx = torch.from_numpy(case.x)
    wide = tf.constant(case.x.astype(np.float64))
    got = {
        "tf eager": case.lse["eager"],
        "tf.function": case.lse["function"],
        f"tf.function, {REWRITE_SWITCH} off": case.lse["rewrite off"],
        "tf XLA": case.lse["XLA"],
        "torch eager": from_torch(f_torch(tx)),
        "tf eager wide": from_tf(tf.cast(f_tf(wide), tf.float32)),
        "tf XLA wide": from_tf(tf.cast(tf.function(f_tf, jit_compile=True)(wide), tf.float32)),
        "torch eager wide": from_torch(f_torch(tx.double()).float()),
    }
    compiled = ""
    if torch_compile:
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
    if compiled:
        outcomes["torch.compile"] = Outcome.missing(
            "torch.compile",
            "torch",
            f"torch.compile did not run here: {compiled}",
            version=torch.__version__,
        )
    return got, outcomes


def _across_seeds(
    fw: Frameworks, cases: list[_Case], truth: Any
) -> tuple[dict[str, Claim], dict[str, Observation], GraphData]:
    """What every seed's modes show (``truth``: the first seed's exact log-sum-exp)."""
    refs = [truth] + [lse_reference(c.x) for c in cases[1:]]
    worst = max(
        float(fw.measured("tensorflow", mode, vals, t).error.max_abs_ulp)
        for c, t in zip(cases, refs, strict=True)
        for mode, vals in c.lse.items()
    )
    seeds = [c.seed for c in cases]
    div_differ = {c.seed: n_different(c.div["function"], c.div["eager"]) for c in cases}
    arith_differ = {c.seed: n_different(c.div["arithmetic off"], c.div["eager"]) for c in cases}
    rewrite_off = all(
        same_bits(m["rewrite off"], m["eager"]) for c in cases for m in (c.div, c.lse)
    )
    lse_fn_same = [c.seed for c in cases if same_bits(c.lse["function"], c.lse["eager"])]
    xla_same = {
        k: [c.seed for c in cases if same_bits(getattr(c, k)["XLA"], getattr(c, k)["eager"])]
        for k in ("div", "lse")
    }
    claims = {
        "division_rewritten": GRAPH["division_rewritten"].claim(
            all(c.rewritten for c in cases),
            differ=", ".join(f"{n} of {DIVIDE_N}" for n in div_differ.values()),
        ),
        "rewrite_off_is_eager": GRAPH["rewrite_off_is_eager"].claim(
            rewrite_off,
            rewrite_switch=REWRITE_SWITCH,
            seeds=", ".join(map(str, seeds)),
        ),
        "xla": GRAPH["xla"].claim(
            worst <= BOUND_ULP,
            bound_ulp=BOUND_ULP,
            worst=worst,
            xla_seeds=xla_same["lse"] or "none",
            seeds=seeds,
        ),
    }
    obs = {
        "lse_function_same_seeds": SEEN["lse_function_same_seeds"].observe(lse_fn_same),
        "divide_differ_arithmetic_off": SEEN["divide_differ_arithmetic_off"].observe(arith_differ),
        "xla_divide_same_seeds": SEEN["xla_divide_same_seeds"].observe(xla_same["div"]),
    }
    data = GraphData(seeds, DIVIDE_N, div_differ, lse_fn_same, xla_same, REWRITE_SWITCH)
    return claims, obs, data


def run_graph(
    fw: Frameworks, size: int, seed: int, agree: bool, torch_compile: bool = False, **_: Any
) -> Section:
    """``ROWS`` rows of ``size`` float32 logits and ``DIVIDE_N`` values divided by 3.0, at
    ``SEEDS`` seeds from ``seed``; the rows shown are the first seed's log-sum-exp."""
    cases = _seed_cases(fw, size, seed)
    truth = lse_reference(cases[0].x)
    got, outcomes = _rows(fw, cases[0], truth, torch_compile)
    claims, seed_obs, data = _across_seeds(fw, cases, truth)
    err = {k: o.error.max_abs_ulp for k, o in outcomes.items() if o.ran}
    wide = ["tf eager wide", "tf XLA wide", "torch eager wide"]
    claims["torch_vs_tf"] = GRAPH["torch_vs_tf"].claim(
        err["torch eager"] <= BOUND_ULP,
        bound_ulp=BOUND_ULP,
        err_torch_eager=err["torch eager"],
        bits="its bits equal TensorFlow's"
        if same_bits(got["torch eager"], got["tf eager"])
        else f"{int((got['torch eager'] != got['tf eager']).sum())} of {ROWS} rows "
        "differ from TensorFlow's",
    )
    claims["fix_agrees"] = GRAPH["fix_agrees"].claim(
        rounded_once([got[k] for k in wide], [err[k] for k in wide]), bound=ROUND_ONCE_BOUND
    )
    if "torch.compile" in got:
        claims["torch_compile"] = GRAPH["torch_compile"].claim(
            err["torch.compile"] <= BOUND_ULP,
            bits="bit-identical to eager here"
            if same_bits(got["torch.compile"], got["torch eager"])
            else "its bits differ from eager's",
            bound_ulp=BOUND_ULP,
            err_torch_compile=err["torch.compile"],
        )
    xla_rows = int((got["tf XLA"] != got["tf eager"]).sum())
    obs = {
        "xla_rows_differ": SEEN["xla_rows_differ"].observe(xla_rows, measured=f" (seed {seed})"),
        **seed_obs,
    }
    defaults = ["tf eager", "tf.function", f"tf.function, {REWRITE_SWITCH} off", "tf XLA"]
    defaults += ["torch eager"] + (["torch.compile"] if torch_compile else [])
    return Section(shown(outcomes, agree, wide, defaults), claims, truth, data, obs)
