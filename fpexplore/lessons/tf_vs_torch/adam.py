"""Adam in torch and Keras: where epsilon enters, epsilon-hat, and the default epsilons."""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from ... import formats, metrics
from ...truth.certify import certified
from .claims import ADAM
from .data import AdamData
from .frameworks import Frameworks, Section, on_grid, rng, shown

LR = 1e-3
# Keras computes beta**t in float32: beta_2 = 0.999 becomes 0.99900001287... Both frameworks
# get the float32 values here (torch takes them as they are), so that the comparison is
# about epsilon; `beta_rounding` measures what the rounding alone would change.
BETA1, BETA2 = float(np.float32(0.9)), float(np.float32(0.999))


def _gradients(seed: int, n: int, steps: int) -> np.ndarray:
    """(steps, n) float32 gradients with magnitudes from 1e-9 to 1: epsilon matters for the
    small ones."""
    g = rng(seed, 5)
    mag = 10.0 ** g.uniform(-9, 0, (steps, n))
    mag[:, 0] = 10.0 ** g.uniform(-8.5, -7.5, steps)  # one weight always near epsilon
    return on_grid(np.where(g.random((steps, n)) < 0.5, -mag, mag), "float32")


def _bias_rounding(grads: np.ndarray, eps: float) -> np.ndarray:
    """(steps, n): after each step, the sum over steps of |update| · u·(1/(2(1-β2^t)) +
    1/(1-β1^t)): what rounding β^t to float32 (u absolute) can add to Keras's weights when it
    folds the bias corrections into the step size (1 - β^t cancels)."""
    u = 2.0**-24
    g = grads.astype(np.float64)
    m, v = np.zeros(g.shape[1]), np.zeros(g.shape[1])
    out = np.empty_like(g)
    total = np.zeros(g.shape[1])
    for t, row in enumerate(g, start=1):
        c1, c2 = 1 - BETA1**t, 1 - BETA2**t
        m = BETA1 * m + (1 - BETA1) * row
        v = BETA2 * v + (1 - BETA2) * row * row
        step = LR * np.abs(m / c1) / (np.sqrt(v / c2) + eps)
        total = total + step * u * (1 / (2 * c2) + 1 / c1)
        out[t - 1] = total
    return out


def reference(w0: np.ndarray, grads: np.ndarray, eps: float, placement: str) -> Any:
    """Adam on the exact values, certified. ``placement="torch"``: w -= lr·m̂/(√v̂ + eps)
    (the paper's Algorithm 1); ``"keras"``: w -= lr·√(1-β2^t)/(1-β1^t)·m/(√v + eps)
    (eps is the paper's epsilon-hat)."""

    def compute(_: int) -> Any:
        b1, b2, lr, e = (mpmath.mpf(v) for v in (BETA1, BETA2, LR, eps))
        w = [mpmath.mpf(float(v)) for v in w0]
        m = [mpmath.mpf(0)] * len(w)
        v = [mpmath.mpf(0)] * len(w)
        for t, row in enumerate(grads, start=1):
            c1, c2 = 1 - b1**t, 1 - b2**t
            for i, gi in enumerate(row.tolist()):
                g = mpmath.mpf(gi)
                m[i] = b1 * m[i] + (1 - b1) * g
                v[i] = b2 * v[i] + (1 - b2) * g * g
                if placement == "torch":
                    w[i] -= lr * (m[i] / c1) / (mpmath.sqrt(v[i] / c2) + e)
                else:
                    w[i] -= lr * mpmath.sqrt(c2) / c1 * m[i] / (mpmath.sqrt(v[i]) + e)
        return np.array(w, dtype=object)

    return certified(f"adam[{placement}, eps={eps:g}]({len(grads)} steps)", compute, 64, "float32")


def _torch_adam(fw: Frameworks, w0: np.ndarray, grads: np.ndarray):
    """torch Adam over ``grads``: (weights after step 1, after the last step, default eps)."""
    torch = fw.torch
    p = torch.nn.Parameter(torch.from_numpy(w0.copy()))
    opt = torch.optim.Adam([p], lr=LR, betas=(BETA1, BETA2))
    first = None
    for g in grads:
        p.grad = torch.from_numpy(g.copy())
        opt.step()
        if first is None:
            first = p.detach().numpy().copy()
    return first, p.detach().numpy().copy(), float(opt.defaults["eps"])


def _keras_adam(fw: Frameworks, w0: np.ndarray, grads: np.ndarray, eps_hat_of: Any = None):
    """Keras Adam over ``grads``: (weights after step 1, after the last step, default
    epsilon). ``eps_hat_of(t)`` is the fix, the epsilon set before step t
    (``opt.epsilon = ...``); it is held in a variable so that the loop runs as one graph."""
    keras, tf = fw.keras, fw.tf
    var = keras.Variable(w0.copy())
    first = tf.Variable(w0.copy())
    opt = keras.optimizers.Adam(learning_rate=LR, beta_1=BETA1, beta_2=BETA2)
    default = float(opt.epsilon)
    eps = tf.Variable(default, dtype=tf.float32)
    opt.epsilon = eps
    n = len(grads)
    schedule = np.float32(
        [default if eps_hat_of is None else eps_hat_of(t) for t in range(1, n + 1)]
    )

    @tf.function
    def train(gs: Any, es: Any) -> None:
        for t in tf.range(n):
            eps.assign(es[t])
            opt.apply_gradients([(gs[t], var)])
            if t == 0:
                first.assign(var.value)

    train(tf.constant(grads), tf.constant(schedule))
    return first.numpy().copy(), np.asarray(var.numpy()).copy(), default


# Each step rounds w once (half an ULP) and the update by a few u of itself: one ULP of the
# weight's largest size along the way per step bounds it. A weight that shrinks towards 0 leaves
# its binade, so every error (rows, claims, data: one measure) is counted in ULPs of
# max(|w0|, |w_t|) + t·lr (an update is at most lr), not of the final value's own finer ULP.
AT_NOTE = "errors in ULPs of max(|w0|, |exact w|) + steps·lr, the weight's largest size"


def _measured(
    fw: Frameworks, w0: np.ndarray, gs: np.ndarray, ws: tuple, eps_t: float, eps_k: float
) -> dict[str, Any]:
    """The weights ``ws`` (torch, Keras, Keras fixed) after ``len(gs)`` steps, measured against
    torch's exact Adam at the weight's largest size (`AT_NOTE`); Keras also against its own."""
    steps, (w_t, w_k, w_f) = len(gs), ws
    truth = reference(w0, gs, eps_t, "torch")
    exact = np.asarray(truth.split()[0], dtype=np.float64)
    at = np.maximum(np.abs(w0), np.abs(exact)) + steps * LR
    keras_note = f"measured against torch's Adam; {AT_NOTE}"
    return {
        "at": at,
        "truth": truth,
        "outcomes": {
            "torch": fw.measured(
                "torch", f"torch.optim.Adam, {steps} step(s)", w_t, truth,
                note=AT_NOTE, at=at, eps=eps_t,
            ),
            "keras": fw.measured(
                "keras", f"keras.optimizers.Adam, {steps} step(s)", w_k, truth,
                epsilon=eps_k, note=keras_note, at=at,
            ),
            "keras fixed": fw.measured(
                "keras", f"Keras Adam with epsilon = {eps_t:g}·√(1-β2^t), {steps} step(s)", w_f,
                truth, note=AT_NOTE, at=at,
            ),
        },
        "own": metrics.measure(w_k, reference(w0, gs, eps_k, "keras"), at=at),
    }  # fmt: skip


def run_adam(fw: Frameworks, size: int, length: int, seed: int, agree: bool, **_: Any) -> Section:
    """``size`` weights, one step and ``length`` steps from the same weights and gradients."""
    w0 = on_grid(rng(seed, 6).standard_normal(size), "float32")
    grads = _gradients(seed, size, length)
    w1_t, wn_t, eps_t = _torch_adam(fw, w0, grads)
    w1_k, wn_k, eps_k = _keras_adam(fw, w0, grads)
    w1_f, wn_f, _ = _keras_adam(fw, w0, grads, lambda t: eps_t * math.sqrt(1 - BETA2**t))
    weights = {1: (w1_t, w1_k, w1_f), length: (wn_t, wn_k, wn_f)}
    res = {
        steps: _measured(fw, w0, grads[:steps], ws, eps_t, eps_k) for steps, ws in weights.items()
    }
    n = length
    last = res[n]
    err, err1 = ({k: np.abs(o.error.ulp) for k, o in res[s]["outcomes"].items()} for s in (n, 1))
    unit, unit_1 = (formats.ulp(res[s]["at"], "float32") for s in (n, 1))
    bound = float(n) + 1.0
    # Keras folds the bias corrections into the step size in float32: 1 - beta**t cancels,
    # so its rounding (u absolute) costs u / (1 - beta**t) relative of each update
    extra = _bias_rounding(grads, eps_t)
    bound_k, bound_k1 = bound + extra[-1] / unit, 2.0 + extra[0] / unit_1
    own = np.abs(last["own"].ulp)
    own_ulp = float(own.max())
    own_within = bool((own <= bound_k).all())
    fixed_within = bool((err["keras fixed"] <= bound_k).all())
    shift = math.sqrt((1 - BETA2) / (1 - 0.999)) * (1 - 0.9) / (1 - BETA1) - 1
    claims = {
        "beta_rounding": ADAM["beta_rounding"].claim(abs(shift) > 2.0**-24, shift=shift),
        "default_epsilons": ADAM["default_epsilons"].claim(
            eps_t != eps_k, eps_t=eps_t, eps_k=eps_k
        ),
        "placement": ADAM["placement"].claim(
            bool(err["keras"].max() > bound and own_within),
            err1_keras_max=err1["keras"].max(),
            err_keras_max=err["keras"].max(),
            n=n,
            own_ulp=own_ulp,
        ),
        "fix_one_step": ADAM["fix_one_step"].claim(
            bool(err1["torch"].max() <= 2 and (err1["keras fixed"] <= bound_k1).all()),
            eps_t=eps_t,
            eps_hat=eps_t * math.sqrt(1 - BETA2),
            err1_torch_max=err1["torch"].max(),
            beta_cost=float((bound_k1 - 2).max()),
            err1_keras_fixed_max=err1["keras fixed"].max(),
        ),
        "fix_many_steps": ADAM["fix_many_steps"].claim(
            bool(err["torch"].max() <= bound and fixed_within),
            n=n,
            bound=bound,
            err_torch_max=err["torch"].max(),
            beta_cost=float((bound_k - bound).max()),
            err_keras_fixed_max=err["keras fixed"].max(),
        ),
    }
    ulps = {
        s: {k: float(o.error.max_abs_ulp) for k, o in r["outcomes"].items()} for s, r in res.items()
    }
    data = AdamData(ulps)
    rows = shown(last["outcomes"], agree, ["torch", "keras fixed"], ["torch", "keras"])
    return Section(rows, claims, last["truth"], data)
