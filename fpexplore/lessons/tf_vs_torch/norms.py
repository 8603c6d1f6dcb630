"""LayerNorm: torch's eps=1e-5 vs Keras's epsilon=1e-3, on the same weights."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import metrics
from ...truth import reference
from .claims import LAYER_NORM
from .data import LayerNormData
from .frameworks import (
    Frameworks,
    Section,
    from_tf,
    from_torch,
    on_grid,
    rng,
    shown,
    to_tf,
    to_torch,
)

ROWS = 8
BOUND_OPS = 8  # rounding steps budgeted: mean, variance, +eps, rsqrt, subtract, scale, shift


def rounding_bound(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float, unit: np.ndarray
) -> np.ndarray:
    """Per element, in ULPs of the exact result (``unit``, `metrics.truth_ulp`, the unit the
    errors are measured in): BOUND_OPS·u·((|x| + |mean|)·|a| + |beta|) + 1, with
    a = gamma / sqrt(var + eps), for a float32 layer norm however it is folded."""
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    a = np.abs(gamma) / np.sqrt(x64.var(-1, keepdims=True) + eps)
    size = (np.abs(x64) + np.abs(mean)) * a + np.abs(beta)
    return BOUND_OPS * 2.0**-24 * size / unit + 1


def run_layer_norm(fw: Frameworks, size: int, seed: int, agree: bool, **_: Any) -> Section:
    """``ROWS`` rows of ``size`` features with a small spread (variance near 1e-3)."""
    keras, torch = fw.keras, fw.torch
    g = rng(seed, 3)
    x = on_grid(0.5 + 0.03 * g.standard_normal((ROWS, size)), "float32")
    gamma = on_grid(1 + 0.3 * g.standard_normal(size), "float32")
    beta = on_grid(0.1 * g.standard_normal(size), "float32")
    ln = torch.nn.LayerNorm(size)
    with torch.no_grad():
        ln.weight.copy_(torch.from_numpy(gamma))
        ln.bias.copy_(torch.from_numpy(beta))
        y_torch = from_torch(ln(to_torch(fw, x)))

    def keras_ln(**kw: Any) -> Any:
        layer = keras.layers.LayerNormalization(**kw)
        layer.build((None, size))
        layer.set_weights([gamma, beta])
        return layer

    k_default = keras_ln()
    k_eps = float(k_default.epsilon)
    y_keras = from_tf(k_default(to_tf(fw, x)))
    y_fixed = from_tf(keras_ln(epsilon=ln.eps)(to_tf(fw, x)))
    truth = reference.layer_norm(x, size, gamma, beta, eps=ln.eps)
    truth_keras = reference.layer_norm(x, size, gamma, beta, eps=k_eps)
    outcomes = {
        "torch": fw.measured(
            "torch", f"torch nn.LayerNorm (eps={ln.eps:g})", y_torch, truth, eps=ln.eps
        ),
        "keras": fw.measured(
            "keras",
            f"Keras LayerNormalization() (epsilon={k_eps:g})",
            y_keras,
            truth,
            epsilon=k_eps,
            note="measured against torch's eps",
        ),
        "keras fixed": fw.measured(
            "keras",
            f"Keras LayerNormalization(epsilon={ln.eps:g})",
            y_fixed,
            truth,
            epsilon=ln.eps,
        ),
    }
    own = np.abs(metrics.measure(y_keras, truth_keras).ulp)
    err = {k: np.abs(o.error.ulp) for k, o in outcomes.items()}
    b = rounding_bound(x, gamma, beta, ln.eps, metrics.truth_ulp(truth, "float32"))
    b_own = rounding_bound(x, gamma, beta, k_eps, metrics.truth_ulp(truth_keras, "float32"))
    for k in ("torch", "keras fixed"):
        outcomes[k] = outcomes[k].with_bound(b * metrics.truth_ulp(truth, "float32"))
    var = float(x.astype(np.float64).var(-1).mean())
    rel = float(np.abs(y_keras.astype(np.float64) - truth.split()[0]).max())
    claims = {
        "default_epsilons": LAYER_NORM["default_epsilons"].claim(
            bool(ln.eps != k_eps), ln_eps=ln.eps, k_eps=k_eps
        ),
        "defaults_disagree": LAYER_NORM["defaults_disagree"].claim(
            bool((err["keras"] > b).mean() > 0.5 and (own <= b_own).all()),
            var=var,
            rel=rel,
            err_keras_max=err["keras"].max(),
            outside=int((err["keras"] > b).sum()),
            values=err["keras"].size,
            own_max=own.max(),
            k_eps=k_eps,
        ),
        "fix_agrees": LAYER_NORM["fix_agrees"].claim(
            bool((err["keras fixed"] <= b).all() and (err["torch"] <= b).all()),
            ln_eps=ln.eps,
            err_keras_fixed_max=err["keras fixed"].max(),
            err_torch_max=err["torch"].max(),
            b_max=b.max(),
        ),
    }
    data = LayerNormData({k: float(v.max()) for k, v in err.items()})
    rows = shown(outcomes, agree, ["torch", "keras fixed"], ["torch", "keras"])
    return Section(rows, claims, truth, data)
