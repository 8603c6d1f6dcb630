"""float32 matmul and convolution in IEEE fp32, TF32, and bf16/fp16 autocast, by size.

Errors are measured at sampled outputs against the exact dot products of the float32 inputs,
so rounding the inputs to TF32/bf16/fp16 counts as error, as it does for a user.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import metrics, truth
from ...backends.torch_device import flags, tf32_defaults, torch_module
from ...truth import Truth
from .._gpu.common import normal32, rng, timed

MATMUL_SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
QUICK_MATMUL_SIZES = (16, 64)
CONV_CHANNELS = (16, 64, 256, 512)
QUICK_CONV_CHANNELS = (4, 8)
MODES = ("torch default", "fp32 (TF32 off)", "TF32", "bf16 autocast", "fp16 autocast")
N_SAMPLES = 64


def _mode_ctx(torch: Any, dev: Any, mode: str, *, conv: bool) -> tuple[Any, Any]:
    """(flag context, autocast context) for a mode; autocast runs with TF32 off, and
    "torch default" leaves TF32 as torch set it (resetting only the determinism switches)."""
    tf32 = {"conv_tf32" if conv else "matmul_tf32": mode == "TF32"}
    fctx = flags() if mode == "torch default" else flags(**tf32)
    if "autocast" in mode:
        dtype = torch.bfloat16 if mode.startswith("bf16") else torch.float16
        return fctx, torch.autocast(device_type=dev.type, dtype=dtype)
    return fctx, contextlib.nullcontext()


def exact_dots(terms: np.ndarray) -> Truth:
    """The exact row sums of exact float64 products (one row of terms per sampled output)."""
    return truth.sum(terms.reshape(terms.shape[0], -1), axis=1)


def _errors(got: np.ndarray, dots: Truth, scale: np.ndarray) -> dict[str, float]:
    exact = dots.round("float64")
    err = got.astype(np.float64) - exact
    norm = float(np.sqrt(np.sum(exact**2)))
    ulp32 = metrics.truth_ulp(dots, "float32")  # the exact value's float32 ULP, as in metrics
    return {
        "rel_error": float(np.sqrt(np.sum(err**2)) / norm) if norm else float("nan"),
        "max_scaled_error": float(np.max(np.abs(err) / scale)),
        "median_abs_ulp32": float(np.median(np.abs(err) / ulp32)),
    }


def _mode_rows(
    dev: Any,
    head: dict[str, Any],
    op: Callable[[], Any],
    pos: tuple[np.ndarray, ...],
    terms: np.ndarray,
    *,
    conv: bool,
) -> list[dict[str, Any]]:
    """One row per mode: ``op`` run and timed under the mode, its outputs at ``pos`` measured
    against the exact sums of the product ``terms`` (one row of terms per sampled output)."""
    torch = torch_module()
    exact = exact_dots(terms)
    scale = np.abs(terms).reshape(len(terms), -1).sum(axis=1)
    rows = []
    for mode in MODES:
        fctx, actx = _mode_ctx(torch, dev, mode, conv=conv)
        with fctx:

            def go(actx: Any = actx) -> Any:
                with actx:
                    return op()

            try:
                out, ms = timed(go, dev)
            except RuntimeError as exc:
                rows.append({**head, "mode": mode, "raised": str(exc)[:300]})
                continue
        got = out.float().cpu().numpy()[pos]
        rows.append(
            {
                **head,
                "mode": mode,
                "raised": None,
                "out_dtype": str(out.dtype).replace("torch.", ""),
                "ms": ms,
                **_errors(got, exact, scale),
            }
        )
    return rows


def matmul_inputs(size: int, seed: int) -> tuple[np.ndarray, ...]:
    """Seeded ``size`` x ``size`` inputs (a, b), the sampled entries (ii, jj) and the exact
    products summed at each: (a, b, ii, jj, terms)."""
    gen = rng(seed + size)
    a, b = normal32(gen, size, size), normal32(gen, size, size)
    ii, jj = gen.integers(0, size, N_SAMPLES), gen.integers(0, size, N_SAMPLES)
    terms = a[ii].astype(np.float64) * b[:, jj].T.astype(np.float64)  # exact products
    return a, b, ii, jj, terms


def run_matmul(dev: Any, sizes: tuple[int, ...], seed: int = 0) -> list[dict[str, Any]]:
    torch = torch_module()
    rows = []
    for size in sizes:
        a, b, ii, jj, terms = matmul_inputs(size, seed)
        ta, tb = torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)
        head = {"op": "matmul", "size": size, "k": size}
        rows += _mode_rows(dev, head, lambda ta=ta, tb=tb: ta @ tb, (ii, jj), terms, conv=False)
    return rows


def conv_inputs(c: int, seed: int, side: int, batch: int) -> tuple[np.ndarray, ...]:
    """Seeded ``batch`` x ``c`` x ``side`` x ``side`` input x and c -> c 3x3 weights w, the
    sampled outputs idx and the exact products summed at each: (x, w, idx, terms)."""
    gen = rng(seed + 10_000 + c)
    x, w = normal32(gen, batch, c, side, side), normal32(gen, c, c, 3, 3)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    w64 = w.astype(np.float64)
    idx = [tuple(int(gen.integers(d)) for d in (batch, c, side, side)) for _ in range(N_SAMPLES)]
    terms = np.stack([xp[n, :, y : y + 3, z : z + 3] * w64[o] for n, o, y, z in idx])
    return x, w, np.array(idx), terms


def sampled_truths(record: dict[str, Any]) -> dict[tuple[str, int], Truth]:
    """(op, size) -> the exact values of the outputs a tf32 record (`run_tf32`'s result)
    sampled, made from the same seeded inputs with no device: what its ULP fields can be
    checked against offline."""
    seed = record["seed"]
    out = {("matmul", n): exact_dots(matmul_inputs(n, seed)[4]) for n in record["matmul_sizes"]}
    for c in record["conv_channels"]:
        terms = conv_inputs(c, seed, record["conv_side"], record["conv_batch"])[3]
        out[("conv2d", c)] = exact_dots(terms)
    return out


def run_conv(
    dev: Any, channels: tuple[int, ...], seed: int = 0, side: int = 32, batch: int = 8
) -> list[dict[str, Any]]:
    torch = torch_module()
    F = torch.nn.functional
    rows = []
    for c in channels:
        x, w, idx, terms = conv_inputs(c, seed, side, batch)
        tx, tw = torch.from_numpy(x).to(dev), torch.from_numpy(w).to(dev)
        head = {"op": "conv2d", "size": c, "k": 9 * c}
        op = functools.partial(F.conv2d, tx, tw, padding=1)
        rows += _mode_rows(dev, head, op, tuple(idx.T), terms, conv=True)
    return rows


def run_tf32(
    dev: Any,
    *,
    quick: bool = False,
    seed: int = 0,
    sizes: tuple[int, ...] | None = None,
    channels: tuple[int, ...] | None = None,
    defaults: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Matmul and conv rows for every mode; ``defaults`` are torch's TF32 settings read
    before anything changed them (read now when not given)."""
    say = progress or (lambda _m: None)
    defaults = defaults if defaults is not None else tf32_defaults()
    sizes = sizes or (QUICK_MATMUL_SIZES if quick else MATMUL_SIZES)
    channels = channels or (QUICK_CONV_CHANNELS if quick else CONV_CHANNELS)
    say("tf32: matmul")
    rows = run_matmul(dev, tuple(sizes), seed)
    say("tf32: conv2d")
    rows += run_conv(dev, tuple(channels), seed, side=8 if quick else 32, batch=2 if quick else 8)
    return {
        "defaults": defaults,
        "modes": list(MODES),
        "samples": N_SAMPLES,
        "seed": seed,
        "matmul_sizes": list(sizes),
        "conv_channels": list(channels),
        "conv_shape": "batch x C x side x side, 3x3 kernel, padding 1, C -> C",
        "conv_side": 8 if quick else 32,
        "conv_batch": 2 if quick else 8,
        "error_measures": {
            "rel_error": "||got - truth|| / ||truth|| over the sampled entries",
            "max_scaled_error": "max |got - truth| / sum |a_i b_i| (componentwise bound)",
            "median_abs_ulp32": "median |got - truth| in float32 ULPs of the exact value",
        },
        "rows": rows,
    }
