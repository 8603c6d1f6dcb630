"""What a layer should compute: its exact (or certified) result on given input bits, and the
a-priori bound on the rounding error an implementation may add to it.

A `LayerSpec` is read off a torch module (`spec_of`): the reference definition both
implementations are measured against. Truths come from `fpexplore.truth` (exact matrix
products, convolutions, sums, means) and `fpexplore.truth.reference` (certified LayerNorm,
BatchNorm, GELU, softmax, tanh, sigmoid); bounds from `fpexplore.tolerance`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .. import tolerance, truth
from ..truth import reference
from ..truth.ops import make_truth
from ..truth.value import Truth


@dataclass(frozen=True)
class LayerSpec:
    """One layer's reference definition: its kind and its parameters (numpy arrays, numbers)."""

    name: str
    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        p = self.params
        if self.kind == "linear":
            return f"linear {p['weight'].shape[1]}→{p['weight'].shape[0]}"
        if self.kind == "conv2d":
            w, pad = p["weight"], p["padding"]
            return f"conv2d {w.shape[1]}→{w.shape[0]} k{w.shape[2]} s{p['stride'][0]} pad {pad}"
        if self.kind in ("batch_norm", "layer_norm"):
            return f"{self.kind} eps={p['eps']:g}"
        if self.kind == "gelu":
            return f"gelu ({p['approximate']})"
        if self.kind == "softmax":
            return f"softmax dim={p['dim']}"
        if self.kind == "scale":
            return f"scale ×{p['factor']:g}"
        return self.kind

    def terms(self, inputs: list[np.ndarray]) -> int:
        """The number of terms each output element sums (1 for elementwise layers)."""
        p = self.params
        if self.kind == "linear":
            return p["weight"].shape[1] + (p["bias"] is not None)
        if self.kind == "conv2d":
            w = p["weight"]
            return w.shape[1] * w.shape[2] * w.shape[3] + (p["bias"] is not None)
        if self.kind == "matmul":
            return inputs[0].shape[-1]
        if self.kind == "mean_pool":
            return inputs[0].shape[2] * inputs[0].shape[3]
        if self.kind == "layer_norm":
            return int(np.prod(p["normalized_shape"]))
        return 1

    def truth(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        """The exact/certified result of this layer on ``inputs`` (float arrays, torch layout)."""
        fn = getattr(self, f"_truth_{self.kind}")
        return fn(inputs, out_shape)

    def _truth_linear(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        x = inputs[0]
        w, b = self.params["weight"], self.params["bias"]
        x2 = x.reshape(-1, x.shape[-1])
        a, bmat = x2, w.T
        if b is not None:  # [x | 1] @ [W^T ; b]: the bias is one more exact term
            a = np.concatenate([x2, np.ones((x2.shape[0], 1), dtype=x2.dtype)], axis=1)
            bmat = np.concatenate([w.T, b[None, :].astype(w.dtype)], axis=0)
        t = truth.matmul(a, bmat)
        return _reshaped(t, out_shape, f"{self.name}: linear")

    def _truth_conv2d(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        p = self.params
        xp = _pad(inputs[0], conv_pads(p, inputs[0].shape))
        t = truth.conv2d(xp, p["weight"], p["bias"], p["stride"], 0, p["dilation"], p["groups"])
        return _reshaped(t, out_shape, f"{self.name}: conv2d")

    def _truth_batch_norm(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        p = self.params
        return reference.batch_norm(
            inputs[0], p["mean"], p["var"], p["weight"], p["bias"], False, p["eps"]
        )

    def _truth_layer_norm(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        p = self.params
        return reference.layer_norm(
            inputs[0], p["normalized_shape"], p["weight"], p["bias"], p["eps"]
        )

    def _truth_relu(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        x = inputs[0]
        return _exact_elementwise(np.where(x > 0, x, 0.0 * x), f"{self.name}: relu")

    def _truth_gelu(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        return reference.gelu(inputs[0], self.params["approximate"])

    def _truth_tanh(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        return getattr(reference, self.kind)(inputs[0])  # tanh or sigmoid

    _truth_sigmoid = _truth_tanh

    def _truth_softmax(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        return reference.softmax(inputs[0], self.params["dim"])

    def _truth_identity(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        return _exact_elementwise(inputs[0].reshape(out_shape), f"{self.name}: identity")

    _truth_flatten = _truth_identity

    def _truth_add(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        a, b = np.broadcast_arrays(inputs[0], inputs[1])
        fa, fb = _fractions(a), _fractions(b)
        return make_truth(f"{self.name}: add", fa + fb)

    def _truth_matmul(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        a, b = inputs[0], inputs[1]
        if self.params.get("transpose_b"):
            b = np.swapaxes(b, -1, -2)
        lead = a.shape[:-2]
        a3 = a.reshape(-1, *a.shape[-2:])
        b3 = np.broadcast_to(b, (*lead, *b.shape[-2:])).reshape(-1, *b.shape[-2:])
        parts = [truth.matmul(a3[i], b3[i]).exact for i in range(a3.shape[0])]
        return make_truth(f"{self.name}: matmul", np.stack(parts).reshape(out_shape))

    def _truth_scale(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        c = Fraction(float(self.params["factor"]))
        return make_truth(f"{self.name}: scale", _fractions(inputs[0]) * c)

    def _truth_mean_pool(self, inputs: list[np.ndarray], out_shape: tuple[int, ...]) -> Truth:
        x = inputs[0]
        t = truth.mean(x.reshape(x.shape[0] * x.shape[1], -1), axis=1)
        return _reshaped(t, out_shape, f"{self.name}: mean over H, W")

    def bound(self, inputs: list[np.ndarray], exact: np.ndarray, fmt: str) -> np.ndarray:
        """Per-element a-priori bound on |computed - exact| (float64, the output's shape)."""
        p, k = self.params, self.kind
        x = inputs[0].astype(np.float64) if inputs else None
        if k in ("linear", "conv2d"):  # sum |terms|, the bias one more term (channels: axis 1)
            w = np.abs(p["weight"].astype(np.float64))
            if k == "linear":
                s = np.abs(x.reshape(-1, x.shape[-1])) @ w.T
            else:
                s = _conv_f64(np.abs(_pad(x, conv_pads(p, x.shape))), w, p)
            if p["bias"] is not None:
                s = s + np.abs(p["bias"].astype(np.float64)).reshape(-1, *(1,) * (s.ndim - 2))
            return tolerance.dot_bound(s.reshape(exact.shape), self.terms(inputs), fmt)
        if k == "matmul":
            b = inputs[1].astype(np.float64)
            if p.get("transpose_b"):
                b = np.swapaxes(b, -1, -2)
            return tolerance.dot_bound(np.abs(x) @ np.abs(b), self.terms(inputs), fmt)
        if k == "mean_pool":
            s = np.abs(x).mean(axis=(2, 3))
            return tolerance.dot_bound(s, self.terms(inputs) + 1, fmt)
        if k == "batch_norm":
            shp = (1, -1) + (1,) * (x.ndim - 2)
            m = p["mean"].astype(np.float64).reshape(shp)
            sig = np.sqrt(p["var"].astype(np.float64) + p["eps"]).reshape(shp)
            w = _or(p["weight"], 1.0, m.shape)
            b = _or(p["bias"], 0.0, m.shape)
            return tolerance.normalize_bound(x, m, sig, w.reshape(shp), b.reshape(shp), fmt)
        if k == "layer_norm":
            nd = len(p["normalized_shape"])
            axes = tuple(range(x.ndim - nd, x.ndim))
            m = x.mean(axis=axes, keepdims=True)
            sig = np.sqrt(x.var(axis=axes, keepdims=True) + p["eps"])
            ma = np.abs(x).mean(axis=axes, keepdims=True)
            w = _or(p["weight"], 1.0, p["normalized_shape"])
            b = _or(p["bias"], 0.0, p["normalized_shape"])
            n = self.terms(inputs)
            return tolerance.normalize_bound(x, m, sig, w, b, fmt, n, ma)
        if k == "softmax":
            return tolerance.softmax_bound(x, exact, p["dim"], fmt)
        if k == "gelu":
            return tolerance.gelu_bound(x, exact, fmt)
        if k in ("tanh", "sigmoid"):
            return tolerance.function_bound(exact, x, fmt)
        if k in ("add", "scale"):
            return tolerance.rounding_bound(exact, fmt)
        return np.zeros(exact.shape)  # relu, identity, flatten: exact, nothing may change


# ---------------------------------------------------------------------------------------------
# helpers


def conv_pads(p: dict[str, Any], shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) zero padding; "same_tf" is TensorFlow's 'same' rule."""
    pad = p["padding"]
    if pad != "same_tf":
        return tuple(pad)
    w = p["weight"]
    out = []
    for dim, k, s, d in (
        (shape[2], w.shape[2], p["stride"][0], p["dilation"][0]),
        (shape[3], w.shape[3], p["stride"][1], p["dilation"][1]),
    ):
        o = -(-dim // s)
        total = max((o - 1) * s + (k - 1) * d + 1 - dim, 0)
        out += [total // 2, total - total // 2]
    return tuple(out)


def _pad(x: np.ndarray, pads: tuple[int, int, int, int]) -> np.ndarray:
    t, b, left, r = pads
    return np.pad(x, ((0, 0), (0, 0), (t, b), (left, r)))


def _conv_f64(xp: np.ndarray, w: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """A plain float64 convolution of padded input (for bounds: |x| * |w|)."""
    sh, sw = p["stride"]
    dh, dw = p["dilation"]
    g = p["groups"]
    o, cg, kh, kw = w.shape
    win = np.lib.stride_tricks.sliding_window_view(
        xp, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(2, 3)
    )[:, :, ::sh, ::sw, ::dh, ::dw]
    og = o // g
    parts = [
        np.einsum("nchwij,ocij->nohw", win[:, gi * cg : (gi + 1) * cg], w[gi * og : (gi + 1) * og])
        for gi in range(g)
    ]
    return np.concatenate(parts, axis=1)


def _or(v: Any, fill: float, shape: Any) -> np.ndarray:
    return np.full(shape, fill) if v is None else v.astype(np.float64)


def _fractions(a: np.ndarray) -> np.ndarray:
    out = np.empty(a.size, dtype=object)
    out[:] = [Fraction(v) for v in a.reshape(-1).tolist()]
    return out.reshape(a.shape)


def _exact_elementwise(values: np.ndarray, label: str) -> Truth:
    return make_truth(label, _fractions(values.astype(np.float64)))


def _reshaped(t: Truth, shape: tuple[int, ...], label: str) -> Truth:
    if t.is_exact:
        return Truth(label, exact=np.asarray(t.exact).reshape(shape), input_format=t.input_format)
    return Truth(
        label, mp=np.asarray(t.mp()).reshape(shape), digits=t.digits, input_format=t.input_format
    )


# ---------------------------------------------------------------------------------------------
# reading a torch module


def _np(t: Any) -> np.ndarray | None:
    return None if t is None else t.detach().cpu().numpy().copy()


def _affine(module: Any) -> dict[str, np.ndarray | None]:
    return {"weight": _np(module.weight), "bias": _np(module.bias)}


def _pair(v: Any) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def spec_of(name: str, module: Any) -> LayerSpec | None:
    """The reference definition of a torch leaf module (None: no truth for it), read by type
    name or a zoo module's ``fpx_kind`` (no torch import); Dropout and BatchNorm as in
    inference."""
    kind = getattr(module, "fpx_kind", None)
    t = type(module).__name__
    if kind is not None:
        return LayerSpec(name, kind, dict(getattr(module, "fpx_params", dict)()))
    if t == "Linear":
        return LayerSpec(name, "linear", _affine(module))
    if t == "Conv2d":
        pad = module.padding
        if isinstance(pad, str):
            # torch 'same' (stride 1) puts any extra padding at the end, as TF does
            pads = (0, 0, 0, 0) if pad == "valid" else "same_tf"
        else:
            ph, pw = _pair(pad)
            pads = (ph, ph, pw, pw)
        if getattr(module, "padding_mode", "zeros") != "zeros":
            return None
        conv = {"stride": _pair(module.stride), "padding": pads, "dilation": _pair(module.dilation)}
        return LayerSpec(name, "conv2d", {**_affine(module), **conv, "groups": module.groups})
    if t in ("BatchNorm1d", "BatchNorm2d", "LayerNorm"):
        affine = {**_affine(module), "eps": float(module.eps)}
        if t == "LayerNorm":
            shape = tuple(module.normalized_shape)
            return LayerSpec(name, "layer_norm", {"normalized_shape": shape, **affine})
        if module.running_mean is None:
            return None
        stats = {"mean": _np(module.running_mean), "var": _np(module.running_var)}
        return LayerSpec(name, "batch_norm", {**stats, **affine})
    if t == "GELU":
        return LayerSpec(name, "gelu", {"approximate": module.approximate})
    if t == "Softmax":
        return LayerSpec(name, "softmax", {"dim": -1 if module.dim is None else module.dim})
    if t.startswith("Dropout"):
        return LayerSpec(name, "identity", {"p": float(module.p)})
    if t in ("ReLU", "Tanh", "Sigmoid", "Identity", "Flatten"):
        return LayerSpec(name, t.lower())
    return None
