"""conv2d with padding='same': where the extra row and column go, and the stride-2 grid."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ... import truth as exact
from ...result import Claim
from .claims import CONV
from .data import ConvData
from .frameworks import (
    Frameworks,
    Section,
    abs_error,
    from_tf,
    from_torch,
    on_grid,
    rng,
    same_bits,
    shown,
)

C_IN, C_OUT = 2, 3


def tf_same_pads(n: int, k: int, s: int) -> tuple[int, int]:
    """TensorFlow's 'SAME' padding along one axis: (before, after), the extra one after."""
    total = max((math.ceil(n / s) - 1) * s + k - n, 0)
    return total // 2, total - total // 2


def _pad(x: np.ndarray, pads: tuple[int, int]) -> np.ndarray:
    return np.pad(x, ((0, 0), (0, 0), pads, pads))


def _exact(fw: Frameworks, x: np.ndarray, w: np.ndarray, pads: tuple[int, int], s: int) -> tuple:
    """The exact convolution with padding ``pads`` and stride ``s``, and the float32 bound
    |error| <= n·u·Σ|x·w| per output (n = C·k·k products summed in float32)."""
    torch = fw.torch
    xa = torch.from_numpy(np.abs(_pad(x, pads)).astype(np.float64))
    wa = torch.from_numpy(np.abs(w).astype(np.float64))
    n = w.shape[1] * w.shape[2] * w.shape[3]
    bound = n * 2.0**-24 * torch.nn.functional.conv2d(xa, wa, stride=s).numpy()
    return exact.conv2d(_pad(x, pads), w, stride=s), bound


def _within(y: np.ndarray, truth: Any, bound: np.ndarray) -> bool:
    return y.shape == truth.shape and bool((abs_error(y, truth) <= bound).all())


def _tf_conv(fw: Frameworks, x: np.ndarray, w: np.ndarray, s: int) -> np.ndarray:
    tf = fw.tf
    y = tf.nn.conv2d(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), s, padding="SAME")
    return from_tf(y).transpose(0, 3, 1, 2)


def _torch_conv(fw: Frameworks, x: np.ndarray, w: np.ndarray, **kw: Any) -> np.ndarray:
    torch = fw.torch
    return from_torch(torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), **kw))


def _where_extra(fw: Frameworks, x: np.ndarray, w: np.ndarray, y: np.ndarray, s: int) -> str:
    """Which split of the padding ``y`` was computed with: 'after', 'before' or 'neither'."""
    before, after = tf_same_pads(x.shape[-1], w.shape[-1], s)
    if before == after:
        return "none needed"
    for name, pads in (("after", (before, after)), ("before", (after, before))):
        if _within(y, *_exact(fw, x, w, pads, s)):
            return name
    return "neither"


def _stride1(fw: Frameworks, x: np.ndarray, w3: np.ndarray, w4: np.ndarray) -> dict[str, Claim]:
    """Stride 1: an odd kernel (symmetric padding in both), an even one (one extra row and
    column, somewhere)."""
    p1 = tf_same_pads(x.shape[-1], 3, 1)
    t1, b1 = _exact(fw, x, w3, p1, 1)
    y1_torch = _torch_conv(fw, x, w3, padding="same")
    y1_tf = _tf_conv(fw, x, w3, 1)
    with warnings.catch_warnings():  # "even kernel ... may require a zero-padded copy"
        warnings.simplefilter("ignore", UserWarning)
        y4_torch = _torch_conv(fw, x, w4, padding="same")
    y4_tf = _tf_conv(fw, x, w4, 1)
    extra = {
        "torch": _where_extra(fw, x, w4, y4_torch, 1),
        "tensorflow": _where_extra(fw, x, w4, y4_tf, 1),
    }
    return {
        "stride1_same": CONV["stride1_same"].claim(
            _within(y1_torch, t1, b1) and _within(y1_tf, t1, b1),
            bits="identical bits"
            if same_bits(y1_torch, y1_tf)
            else f"bits differ in {int((y1_torch != y1_tf).sum())} of {y1_tf.size} outputs",
        ),
        "even_kernel_extra": CONV["even_kernel_extra"].claim(
            extra["torch"] == "after" and extra["tensorflow"] == "after",
            extra_torch=extra["torch"],
            extra_tensorflow=extra["tensorflow"],
        ),
    }


def run_conv(fw: Frameworks, size: int, seed: int, agree: bool, **_: Any) -> Section:
    """A (1, 2, size, size) image, 3×3 and 4×4 kernels, stride 1 and 2."""
    g = rng(seed, 4)
    x = on_grid(g.standard_normal((1, C_IN, size, size)), "float32")
    w3 = on_grid(g.standard_normal((C_OUT, C_IN, 3, 3)) / 3, "float32")
    w4 = on_grid(g.standard_normal((C_OUT, C_IN, 4, 4)) / 4, "float32")
    claims = _stride1(fw, x, w3, w4)
    try:
        _torch_conv(fw, x, w3, stride=2, padding="same")
        refused = ""
    except (RuntimeError, ValueError) as exc:
        refused = str(exc).splitlines()[0]
    p2 = tf_same_pads(size, 3, 2)
    pad = (p2[0], p2[1], p2[0], p2[1])
    truth, b2 = _exact(fw, x, w3, p2, 2)
    y2_sym = _torch_conv(fw, x, w3, stride=2, padding=1)
    y2_fix = _torch_conv(fw, _pad(x, p2), w3, stride=2)
    y2_tf = _tf_conv(fw, x, w3, 2)
    outcomes = {
        "torch sym": fw.measured(
            "torch",
            "torch F.conv2d(stride=2, padding=1)",
            y2_sym,
            truth,
            note="the usual port: k//2 on every side",
        ),
        "torch fix": fw.measured(
            "torch", f"torch F.conv2d(F.pad(x, {pad}), stride=2)", y2_fix, truth
        ),
        "tf": fw.measured("tensorflow", "tf.nn.conv2d(strides=2, padding='SAME')", y2_tf, truth),
    }
    outcomes = {k: o.with_bound(b2) for k, o in outcomes.items()}
    shifted = not _within(y2_sym, truth, b2)
    claims["torch_refuses_stride2"] = CONV["torch_refuses_stride2"].claim(
        bool(refused), refused=refused
    )
    claims["stride2_grid"] = CONV["stride2_grid"].claim(
        _within(y2_tf, truth, b2) and shifted == (p2[0] != p2[1]),
        size=size,
        p2=p2,
        grid="samples a grid shifted by one pixel, so its outputs are other numbers (up to "
        f"{np.abs(y2_sym - y2_tf).max():.3g} apart)"
        if shifted
        else "happens to be the same padding here (odd size): no shift",
    )
    claims["fix_agrees"] = CONV["fix_agrees"].claim(
        _within(y2_fix, truth, b2) and _within(y2_tf, truth, b2),
        pad=pad,
        bits=", bit for bit equal"
        if same_bits(y2_fix, y2_tf)
        else f" (bits differ in {int((y2_fix != y2_tf).sum())} of {y2_tf.size} outputs)",
    )
    rows = shown(outcomes, agree, ["torch fix", "tf"], ["torch sym", "tf"])
    return Section(rows, claims, truth, ConvData(p2))
