"""An LSTM with its weights transferred from torch to Keras, over sequence lengths up to 1000,
against the mpmath cell of `lstm_reference`."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ...result import Claim, Outcome
from ...truth.value import Truth
from . import lstm_reference
from .claims import LSTM
from .data import LstmData
from .frameworks import OBSERVATIONS, Frameworks, Section, abs_error, on_grid, rng, shown

N_IN, HIDDEN = 3, 4
#: agreement with the exact cell that rounding in float32 keeps, at every step up to 1000:
#: absolute error of h (|h| < 1) and of the input gradient relative to its largest element
H_BOUND = 2.0**-16
GRAD_BOUND = 2.0**-12


def torch_weights(fw: Frameworks, seed: int) -> dict[str, np.ndarray]:
    torch = fw.torch
    torch.manual_seed(seed)
    lstm = torch.nn.LSTM(N_IN, HIDDEN, batch_first=True)
    with torch.no_grad():
        lstm.bias_ih_l0[HIDDEN : 2 * HIDDEN] += 1.0  # forget gate open: gradients travel far
    return {k: v.detach().numpy().copy() for k, v in lstm.state_dict().items()}


def _torch_run(fw: Frameworks, w: dict[str, np.ndarray], x: np.ndarray):
    torch = fw.torch
    lstm = torch.nn.LSTM(N_IN, HIDDEN, batch_first=True)
    lstm.load_state_dict({k: torch.from_numpy(v) for k, v in w.items()})
    xt = torch.from_numpy(x[None].copy()).requires_grad_(True)
    out, _ = lstm(xt)
    out[0, -1].sum().backward()
    return out[0].detach().numpy().copy(), xt.grad[0].numpy().copy()


def keras_weights(w: dict[str, np.ndarray], mapping: str) -> list[np.ndarray]:
    """torch's LSTM weights as Keras wants them. Both order the gates i, f, g(=c), o; torch
    stores (4H, in) matrices, Keras (in, 4H): transpose. torch has two biases, Keras one."""
    kernel, recurrent = w["weight_ih_l0"].T, w["weight_hh_l0"].T
    if mapping == "one bias":  # a frequent porting slip: b_hh forgotten
        return [kernel, recurrent, w["bias_ih_l0"]]
    return [kernel, recurrent, w["bias_ih_l0"] + w["bias_hh_l0"]]


def _keras_lstm(fw: Frameworks, length: int, **kw: Any) -> tuple[Any, Any]:
    """A Keras LSTM layer and ``run(weights, x) -> (h, d sum(h_L)/dx)``. The forward and
    backward pass run as one traced graph (eagerly a 1000-step LSTM takes tens of seconds;
    the kernels are the same); new weights go into the same variables, so it traces once."""
    tf = fw.tf
    layer = fw.keras.layers.LSTM(HIDDEN, return_sequences=True, **kw)
    layer.build((1, length, N_IN))

    @tf.function
    def forward_backward(xt: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(xt)
            out = layer(xt)
            loss = tf.reduce_sum(out[0, -1])
        return out, tape.gradient(loss, xt)

    def run(weights: list[np.ndarray], x: np.ndarray) -> tuple[np.ndarray, ...]:
        layer.set_weights(weights)
        out, grad = forward_backward(tf.constant(x[None]))
        return out.numpy()[0], grad.numpy()[0]

    return layer, run


def _measured(
    fw: Frameworks, h: dict[str, np.ndarray], d: dict[str, np.ndarray], truth: tuple, rec: str
) -> tuple[dict[str, Outcome], dict[str, np.ndarray]]:
    """The rows of the outputs ``h`` (the mapping mistakes over their first steps only) and
    the input gradients ``d``, against ``truth`` (h's, d's), with ``rec`` Keras's default
    recurrent activation; and each h's largest error at every step."""
    h_truth, d_truth = truth
    n_short = len(h["keras one bias"])
    short = Truth(
        f"h of the first {n_short} steps",
        mp=h_truth.mp()[:n_short],
        digits=h_truth.digits,
        prec=h_truth.prec,
        input_format="float32",
    )
    truths = {"torch": h_truth, "keras": h_truth, "keras one bias": short, "keras hard": short}
    grad = partial(fw.measured, at="largest")  # a gradient spans magnitudes: ULPs of its largest
    hard_row = f"Keras LSTM, recurrent_activation='hard_sigmoid': h ({n_short} steps)"
    outcomes = {
        "torch": fw.measured("torch", "torch nn.LSTM: h at every step", h["torch"], h_truth),
        "keras": fw.measured(
            "keras",
            "Keras LSTM, weights transposed, biases summed: h",
            h["keras"],
            h_truth,
            recurrent_activation=rec,
        ),
        "keras one bias": fw.measured(
            "keras",
            f"Keras LSTM, bias = b_ih only: h ({n_short} steps)",
            h["keras one bias"],
            short,
            note="torch's b_hh forgotten",
        ),
        "keras hard": fw.measured("keras", hard_row, h["keras hard"], short),
        "torch grad": grad("torch", "torch autograd: d sum(h_L)/dx", d["torch"], d_truth),
        "keras grad": grad("keras", "Keras GradientTape: d sum(h_L)/dx", d["keras"], d_truth),
    }
    return outcomes, {k: abs_error(h[k], truths[k]).max(axis=1) for k in truths}


def _claims(
    worst: dict[str, float], e_g: dict[str, np.ndarray], diff_h: np.ndarray, same: int, rec: str
) -> dict[str, Claim]:
    """``worst``: each h's largest error; ``e_g``: the gradients' errors relative to the
    largest; ``diff_h``: |torch - Keras| of h at every step, ``same`` of them identical."""
    return {
        "gate_order": LSTM["gate_order"].claim(
            worst["keras"] <= H_BOUND and worst["torch"] <= H_BOUND,
            worst_keras=worst["keras"],
            length=len(diff_h),
            worst_torch=worst["torch"],
        ),
        "one_bias_wrong": LSTM["one_bias_wrong"].claim(
            worst["keras one bias"] > 100 * H_BOUND, worst_keras_one_bias=worst["keras one bias"]
        ),
        "recurrent_activation": LSTM["recurrent_activation"].claim(
            rec == "sigmoid" and worst["keras hard"] > 100 * H_BOUND,
            rec_default=rec,
            worst_keras_hard=worst["keras hard"],
        ),
        "gradients_rounding": LSTM["gradients_rounding"].claim(
            bool(e_g["torch"].max() <= GRAD_BOUND and e_g["keras"].max() <= GRAD_BOUND),
            worst=max(e_g["torch"].max(), e_g["keras"].max()),
        ),
        "growth": LSTM["growth"].claim(
            bool(diff_h.max() <= 2 * H_BOUND),
            diff_h_0=diff_h[0],
            diff_h_max=diff_h.max(),
            at_step=int(diff_h.argmax()) + 1,
            length=len(diff_h),
            same=same,
        ),
    }


def run_lstm(fw: Frameworks, length: int, seed: int, agree: bool, **_: Any) -> Section:
    """A sequence of ``length`` steps through the same weights in both frameworks."""
    w = torch_weights(fw, seed)
    x = on_grid(rng(seed, 8).standard_normal((length, N_IN)), "float32")
    h_truth, d_truth = lstm_reference.reference(
        x, w["weight_ih_l0"], w["weight_hh_l0"], w["bias_ih_l0"], w["bias_hh_l0"]
    )
    h_t, d_t = _torch_run(fw, w, x)
    layer, keras_lstm = _keras_lstm(fw, length)
    h_k, d_k = keras_lstm(keras_weights(w, "mapped"), x)
    n_short = min(length, 100)  # the mapping mistakes show at once: 100 steps suffice
    h_1 = keras_lstm(keras_weights(w, "one bias"), x)[0][:n_short]
    _, hard = _keras_lstm(fw, n_short, recurrent_activation="hard_sigmoid")
    h_hs = hard(keras_weights(w, "mapped"), x[:n_short])[0]
    rec = layer.cell.recurrent_activation
    rec = getattr(rec, "__name__", str(rec))
    h = {"torch": h_t, "keras": h_k, "keras one bias": h_1, "keras hard": h_hs}
    d = {"torch": d_t, "keras": d_k}
    outcomes, e_h = _measured(fw, h, d, (h_truth, d_truth), rec)
    g_scale = np.abs(d_truth.split()[0]).max()
    bounds = {"torch grad": GRAD_BOUND * g_scale, "keras grad": GRAD_BOUND * g_scale}
    outcomes = {k: o.with_bound(bounds.get(k, H_BOUND)) for k, o in outcomes.items()}
    e_g = {k: abs_error(v, d_truth).max(axis=1) / g_scale for k, v in d.items()}
    diff_h = np.abs(h_t.astype(np.float64) - h_k).max(axis=1)
    same = int((h_t == h_k).all(axis=1).sum())
    claims = _claims({k: float(v.max()) for k, v in e_h.items()}, e_g, diff_h, same, rec)
    grad_diff = np.abs(np.asarray(d_t, np.float64) - np.asarray(d_k, np.float64)).max()
    e_back = {k: v[::-1] for k, v in e_g.items()}
    data = LstmData(length, dict(e_h), e_back, diff_h, float(grad_diff / g_scale))
    obs = {"identical_steps": OBSERVATIONS["identical_steps"].observe(same)}
    rows = shown(
        outcomes,
        agree,
        ["torch", "keras", "torch grad", "keras grad"],
        ["torch", "keras one bias", "keras hard"],
    )
    return Section(rows, claims, h_truth, data, obs)
