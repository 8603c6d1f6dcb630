"""softmax, log_softmax and cross-entropy in torch and TensorFlow/Keras, against mpmath."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from ... import metrics
from ...dispatch import tensorflow_onednn
from ...truth import reference
from .claims import CROSS_ENTROPY, SOFTMAX
from .data import CrossEntropyData, SeedExample, SoftmaxData
from .frameworks import (
    OBSERVATIONS,
    ROUND_ONCE_BOUND,
    Frameworks,
    Section,
    from_tf,
    from_torch,
    n_different,
    on_grid,
    rng,
    same_bits,
    shown,
    to_tf,
    to_torch,
)

#: softmax([1, 2, 3]) in float32 on every CPU path: Eigen's scalar path and torch round within
#: one ULP; oneDNN's vector exp and its reciprocal-multiply add up to about 1.2 ULP
SEED_BOUND = 2.0
SEED_EXAMPLE = (1.0, 2.0, 3.0)


def _seed_example(fw: Frameworks, torch_op: Any, tf_op: Any, exact: Any) -> tuple:
    """The seed's ``[1, 2, 3]`` in float32 through both frameworks: their outputs and their
    errors against the exact value (by framework)."""
    seed_x = np.float32(SEED_EXAMPLE)
    seed_truth = exact(seed_x)
    s_torch = from_torch(torch_op(to_torch(fw, seed_x)))
    s_tf = from_tf(tf_op(to_tf(fw, seed_x)))
    e_seed = {
        "torch": metrics.measure(s_torch, seed_truth),
        "tensorflow": metrics.measure(s_tf, seed_truth),
    }
    return s_torch, s_tf, e_seed


def run_softmax(
    fw: Frameworks, op: str, dtype: str, size: int, seed: int, agree: bool, **_: Any
) -> Section:
    """The seed's ``[1, 2, 3]`` in float32, then ``size`` large logits in ``dtype``; ``op`` is
    "softmax" or "log_softmax", over the last axis."""
    tf, exact = fw.tf, getattr(reference, op)
    torch_op, tf_op = partial(getattr(fw.torch.nn.functional, op), dim=-1), getattr(tf.nn, op)
    s_torch, s_tf, e_seed = _seed_example(fw, torch_op, tf_op, exact)
    g = rng(seed, 1)
    x = on_grid(1000.0 + 4.0 * g.standard_normal(size), dtype)
    truth = exact(x)
    tx, fx = to_torch(fw, x), to_tf(fw, x)
    y_torch = from_torch(torch_op(tx))
    y_tf = from_tf(tf_op(fx))
    # the fix: compute in float64, round to float32, then to the input's dtype (the frameworks'
    # casts to float16 and bfloat16 go through float32: two roundings there, one for float32)
    rounded = "rounded once" if dtype == "float32" else f"rounded to float32, then to {dtype}"
    w_torch = from_torch(torch_op(tx.double()).float().to(tx.dtype))
    w_tf = from_tf(tf.cast(tf.cast(tf_op(tf.cast(fx, tf.float64)), tf.float32), fx.dtype))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x.astype(np.float32))
        naive = e / e.sum() if op == "softmax" else np.log(e / e.sum())
    outcomes = {
        "torch": fw.measured("torch", f"torch F.{op}({dtype})", y_torch, truth),
        "tf": fw.measured("tensorflow", f"tf.nn.{op}({dtype})", y_tf, truth),
        "torch wide": fw.measured(
            "torch",
            f"torch F.{op} in float64, {rounded}",
            w_torch,
            truth,
            note="x.double() → op → .float().to(dtype)",
        ),
        "tf wide": fw.measured(
            "tensorflow",
            f"tf.nn.{op} in float64, {rounded}",
            w_tf,
            truth,
            note="tf.cast(x, float64) → op → cast to float32 → cast to dtype",
        ),
    }
    err = {k: o.error for k, o in outcomes.items()}
    naive_bad = not np.isfinite(naive).all()
    claims = {
        "seed_example": SOFTMAX["seed_example"].claim(
            bool(
                e_seed["torch"].max_abs_ulp <= SEED_BOUND
                and e_seed["tensorflow"].max_abs_ulp <= SEED_BOUND
            ),
            op=op,
            seed_bound=SEED_BOUND,
            torch_ulp=e_seed["torch"].max_abs_ulp,
            tf_ulp=e_seed["tensorflow"].max_abs_ulp,
        ),
        "naive_overflows": SOFTMAX["naive_overflows"].claim(
            bool(
                naive_bad
                and np.isfinite(y_torch.astype(np.float32)).all()
                and np.isfinite(y_tf.astype(np.float32)).all()
            ),
            exp_max=math.log(np.finfo(np.float32).max),
        ),
        "defaults_error": SOFTMAX["defaults_error"].claim(
            bool(
                max(err["torch wide"].max_abs_ulp, err["tf wide"].max_abs_ulp)
                <= min(err["torch"].max_abs_ulp, err["tf"].max_abs_ulp) + 2.0**-12
            ),
            size=size,
            dtype=dtype,
            torch_ulp=err["torch"].max_abs_ulp,
            tf_ulp=err["tf"].max_abs_ulp,
            op=op,
            differ=n_different(y_torch, y_tf),
            rounded=rounded,
        ),
        "fix_agrees": SOFTMAX["fix_agrees"].claim(
            bool(
                err["torch wide"].max_abs_ulp <= ROUND_ONCE_BOUND
                and err["tf wide"].max_abs_ulp <= ROUND_ONCE_BOUND
                and same_bits(w_torch, w_tf)
            ),
            round_once_bound=ROUND_ONCE_BOUND,
            op=op,
            torch_wide=err["torch wide"].max_abs_ulp,
            tf_wide=err["tf wide"].max_abs_ulp,
            rounded=rounded,
        ),
    }
    onednn, why = tensorflow_onednn()
    differ = n_different(s_torch, s_tf)
    seed_example = SeedExample(s_torch, s_tf, why, differ)
    data = SoftmaxData(seed_example, {k: float(v.max_abs_ulp) for k, v in err.items()})
    obs = {
        "seed_bits": OBSERVATIONS["seed_bits"].observe(
            differ,
            f"TensorFlow {e_seed['tensorflow'].max_abs_ulp:.3g} ULP from the exact value, "
            f"torch {e_seed['torch'].max_abs_ulp:.3g}. {why}; "
            f"TF_ENABLE_ONEDNN_OPTS={0 if onednn else 1} switches it "
            f"{'off' if onednn else 'on'} in a fresh process",
            f" ({op})",
        ),
        "bits_differ": OBSERVATIONS["bits_differ"].observe(
            n_different(y_torch, y_tf), measured=f" ({op} in {dtype})"
        ),
    }
    rows = shown(outcomes, agree, ["torch wide", "tf wide"], ["torch", "tf"])
    return Section(rows, claims, truth, data, obs)


def run_cross_entropy(fw: Frameworks, size: int, seed: int, agree: bool, **_: Any) -> Section:
    """Per-sample cross-entropy of confident logits: torch from logits, Keras from logits and
    from probabilities (clipped to [epsilon, 1 - epsilon])."""
    keras, torch = fw.keras, fw.torch
    n = 8
    g = rng(seed, 2)
    raw = 12.0 * g.standard_normal((n, size))
    target = g.integers(0, size, n)
    raw[0, target[0]] = raw[0].max() - 40.0  # one confidently wrong prediction, always
    logits = on_grid(raw, "float32")
    truth = reference.cross_entropy(logits, target, reduction="none")
    y_torch = from_torch(
        torch.nn.functional.cross_entropy(
            to_torch(fw, logits), torch.from_numpy(target), reduction="none"
        )
    )
    probs = fw.tf.nn.softmax(to_tf(fw, logits))
    eps = float(keras.backend.epsilon())
    default_loss = keras.losses.SparseCategoricalCrossentropy(reduction=None)
    logit_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
    y_probs = from_tf(default_loss(target, probs))
    y_logits = from_tf(logit_loss(target, to_tf(fw, logits)))
    outcomes = {
        "torch": fw.measured("torch", "torch F.cross_entropy(logits)", y_torch, truth),
        "keras probs": fw.measured(
            "keras",
            "Keras SparseCategoricalCrossentropy() on softmax probabilities",
            y_probs,
            truth,
            epsilon=eps,
            note=f"from_logits=False (the default): probabilities clipped to "
            f"[{eps:g}, 1 - {eps:g}]",
        ),
        "keras logits": fw.measured(
            "keras", "Keras SparseCategoricalCrossentropy(from_logits=True)", y_logits, truth
        ),
    }
    err = {k: o.error for k, o in outcomes.items()}
    t_hi = truth.split()[0]
    cap = -math.log(eps)
    capped = t_hi > cap + 1e-3
    bound = 4.0
    allowed = bound * metrics.truth_ulp(truth, "float32") + bound * 2.0**-24 * np.abs(
        logits.astype(np.float64)
    ).max(axis=1)

    def abs_err(y: np.ndarray) -> np.ndarray:
        return np.abs(y.astype(np.float64) - t_hi)

    claims = {
        "keras_epsilon": CROSS_ENTROPY["keras_epsilon"].claim(
            bool(capped.any() and float(y_probs.max()) <= cap * (1 + 1e-4)),
            eps=eps,
            cap=cap,
            capped=int(capped.sum()),
            n=n,
            exact_max=t_hi.max(),
            keras_max=float(y_probs.max()),
        ),
        "from_logits_agrees": CROSS_ENTROPY["from_logits_agrees"].claim(
            bool((abs_err(y_torch) <= allowed).all() and (abs_err(y_logits) <= allowed).all()),
            bound=bound,
            torch_ulp=err["torch"].max_abs_ulp,
            keras_ulp=err["keras logits"].max_abs_ulp,
        ),
    }
    losses = {"truth": t_hi, "torch": y_torch, "keras probs": y_probs, "keras logits": y_logits}
    data = CrossEntropyData(losses)
    rows = shown(outcomes, agree, ["torch", "keras logits"], ["torch", "keras probs"])
    return Section(rows, claims, truth, data)
