"""softmax, log_softmax and cross-entropy in torch and TensorFlow/Keras, against mpmath."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from ... import metrics
from ...dispatch import tensorflow_onednn
from ...result import Claim, Observation, Outcome
from ...truth import reference
from .claims import CROSS_ENTROPY, SOFTMAX
from .data import CrossEntropyData, Losses, SeedExample, SoftmaxData
from .frameworks import (
    OBSERVATIONS,
    ROUND_ONCE_BOUND,
    Frameworks,
    Section,
    abs_error,
    from_tf,
    from_torch,
    n_different,
    on_grid,
    rng,
    rounded_once,
    shown,
    to_tf,
    to_torch,
)

#: softmax([1, 2, 3]) in float32 on every CPU path: Eigen's scalar path and torch round within
#: one ULP; oneDNN's vector exp and its reciprocal-multiply add up to about 1.2 ULP
SEED_BOUND = 2.0
SEED_EXAMPLE = (1.0, 2.0, 3.0)


def _seed_example(
    fw: Frameworks, op: str, torch_op: Any, tf_op: Any, exact: Any
) -> tuple[Claim, SeedExample, Observation]:
    """The seed's ``[1, 2, 3]`` in float32 through both frameworks: the claim that both stay
    within ``SEED_BOUND``, the example, and how many bits differ on this CPU."""
    seed_x = np.float32(SEED_EXAMPLE)
    seed_truth = exact(seed_x)
    s_torch = from_torch(torch_op(to_torch(fw, seed_x)))
    s_tf = from_tf(tf_op(to_tf(fw, seed_x)))
    e_torch = metrics.measure(s_torch, seed_truth).max_abs_ulp
    e_tf = metrics.measure(s_tf, seed_truth).max_abs_ulp
    claim = SOFTMAX["seed_example"].claim(
        bool(e_torch <= SEED_BOUND and e_tf <= SEED_BOUND),
        op=op,
        seed_bound=SEED_BOUND,
        torch_ulp=e_torch,
        tf_ulp=e_tf,
    )
    onednn, why = tensorflow_onednn()
    differ = n_different(s_torch, s_tf)
    observed = OBSERVATIONS["seed_bits"].observe(
        differ,
        f"TensorFlow {e_tf:.3g} ULP from the exact value, torch {e_torch:.3g}. {why}; "
        f"TF_ENABLE_ONEDNN_OPTS={0 if onednn else 1} switches it "
        f"{'off' if onednn else 'on'} in a fresh process",
        f" ({op})",
    )
    return claim, SeedExample(s_torch, s_tf, why, differ), observed


def _large_logits(
    fw: Frameworks, op: str, x: np.ndarray, truth: Any, ops: tuple, rounded: str
) -> tuple[dict[str, np.ndarray], dict[str, Outcome]]:
    """``x`` through both frameworks' ``ops`` as they are, and computed in float64, rounded to
    float32, then to the input's dtype (the fix, ``rounded``): values and rows."""
    tf, dtype, (torch_op, tf_op) = fw.tf, x.dtype.name, ops
    tx, fx = to_torch(fw, x), to_tf(fw, x)
    got = {
        "torch": from_torch(torch_op(tx)),
        "tf": from_tf(tf_op(fx)),
        "torch wide": from_torch(torch_op(tx.double()).float().to(tx.dtype)),
        "tf wide": from_tf(tf.cast(tf.cast(tf_op(tf.cast(fx, tf.float64)), tf.float32), fx.dtype)),
    }
    rows = {
        "torch": ("torch", f"torch F.{op}({dtype})", ""),
        "tf": ("tensorflow", f"tf.nn.{op}({dtype})", ""),
        "torch wide": (
            "torch",
            f"torch F.{op} in float64, {rounded}",
            "x.double() → op → .float().to(dtype)",
        ),
        "tf wide": (
            "tensorflow",
            f"tf.nn.{op} in float64, {rounded}",
            "tf.cast(x, float64) → op → cast to float32 → cast to dtype",
        ),
    }
    outcomes = {
        k: fw.measured(lib, name, got[k], truth, note=note) for k, (lib, name, note) in rows.items()
    }
    return got, outcomes


def _large_claims(
    op: str, x: np.ndarray, got: dict[str, np.ndarray], err: dict[str, float], rounded: str
) -> dict[str, Claim]:
    """What the large logits show: the textbook formula overflows, each default's error, and
    the fix's agreement (``err``: each row's largest ULP error)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x.astype(np.float32))
        naive = e / e.sum() if op == "softmax" else np.log(e / e.sum())
    return {
        "naive_overflows": SOFTMAX["naive_overflows"].claim(
            bool(
                not np.isfinite(naive).all()
                and np.isfinite(got["torch"].astype(np.float32)).all()
                and np.isfinite(got["tf"].astype(np.float32)).all()
            ),
            exp_max=math.log(np.finfo(np.float32).max),
        ),
        "defaults_error": SOFTMAX["defaults_error"].claim(
            bool(max(err["torch wide"], err["tf wide"]) <= min(err["torch"], err["tf"]) + 2.0**-12),
            size=x.size,
            dtype=x.dtype.name,
            torch_ulp=err["torch"],
            tf_ulp=err["tf"],
            op=op,
            differ=n_different(got["torch"], got["tf"]),
            rounded=rounded,
        ),
        "fix_agrees": SOFTMAX["fix_agrees"].claim(
            rounded_once([got["torch wide"], got["tf wide"]], [err["torch wide"], err["tf wide"]]),
            round_once_bound=ROUND_ONCE_BOUND,
            op=op,
            torch_wide=err["torch wide"],
            tf_wide=err["tf wide"],
            rounded=rounded,
        ),
    }


def run_softmax(
    fw: Frameworks, op: str, dtype: str, size: int, seed: int, agree: bool, **_: Any
) -> Section:
    """The seed's ``[1, 2, 3]`` in float32, then ``size`` large logits in ``dtype``; ``op`` is
    "softmax" or "log_softmax", over the last axis."""
    exact = getattr(reference, op)
    torch_op = partial(getattr(fw.torch.nn.functional, op), dim=-1)
    tf_op = getattr(fw.tf.nn, op)
    seed_claim, seed_example, seed_bits = _seed_example(fw, op, torch_op, tf_op, exact)
    x = on_grid(1000.0 + 4.0 * rng(seed, 1).standard_normal(size), dtype)
    truth = exact(x)
    # the fix: the frameworks' casts to float16 and bfloat16 go through float32
    rounded = "rounded once" if dtype == "float32" else f"rounded to float32, then to {dtype}"
    got, outcomes = _large_logits(fw, op, x, truth, (torch_op, tf_op), rounded)
    err = {k: o.error.max_abs_ulp for k, o in outcomes.items()}
    claims = {"seed_example": seed_claim, **_large_claims(op, x, got, err, rounded)}
    data = SoftmaxData(seed_example, {k: float(v) for k, v in err.items()})
    obs = {
        "seed_bits": seed_bits,
        "bits_differ": OBSERVATIONS["bits_differ"].observe(
            n_different(got["torch"], got["tf"]), measured=f" ({op} in {dtype})"
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
            bool(
                (abs_error(y_torch, truth) <= allowed).all()
                and (abs_error(y_logits, truth) <= allowed).all()
            ),
            bound=bound,
            torch_ulp=err["torch"].max_abs_ulp,
            keras_ulp=err["keras logits"].max_abs_ulp,
        ),
    }
    data = CrossEntropyData(Losses(t_hi, y_torch, y_probs, y_logits))
    rows = shown(outcomes, agree, ["torch", "keras logits"], ["torch", "keras probs"])
    return Section(rows, claims, truth, data)
