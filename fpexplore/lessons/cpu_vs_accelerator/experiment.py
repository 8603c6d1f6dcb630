"""The same float32 ops on the CPU and on an accelerator, each against the exact truth.

Sums, a chain of small matmuls (the error compounds), a convolution, and relu (exact
everywhere: a control), on inputs from numpy's seeded generator, so any machine regenerates
the same bits and can compare its CPU with a recorded accelerator.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ... import truth as exact_truth
from ...backends.torch_device import flags, synchronize, torch_module
from ...records import bits32
from .._gpu.common import digest, normal32, rng
from .data import Settings

MODES = ("torch default", "fp32 (TF32 off)")
N_SAMPLES = 64


def settings(quick: bool = False) -> Settings:
    if quick:
        return Settings(sum_n=10**4, chain_steps=10, chain_dim=16, conv=(1, 4, 8, 8), relu_n=1000)
    return Settings()


def pack(arr: np.ndarray) -> dict[str, Any]:
    """A float array as base64 of its little-endian bytes (compact, bit exact)."""
    a = np.ascontiguousarray(arr)
    return {
        "dtype": str(a.dtype),
        "shape": list(a.shape),
        "b64": base64.b64encode(a.astype(a.dtype.newbyteorder("<")).tobytes()).decode(),
    }


def unpack(d: dict[str, Any]) -> np.ndarray:
    little = np.frombuffer(base64.b64decode(d["b64"]), np.dtype(d["dtype"]).newbyteorder("<"))
    return little.astype(np.dtype(d["dtype"])).reshape(d["shape"])


def inputs(s: Settings) -> dict[str, Any]:
    gen = rng(s.seed)
    d, b, steps = s.chain_dim, s.chain_batch, s.chain_steps
    mats = np.empty((steps, d, d), dtype=np.float32)
    for k in range(steps):  # random orthogonal matrices keep the chain's size near 1
        q, r = np.linalg.qr(gen.standard_normal((d, d)))
        mats[k] = (q * np.sign(np.diag(r))).astype(np.float32)
    n, c, h, w = s.conv
    out = {
        "sum_uniform": gen.random(s.sum_n, dtype=np.float32),
        "sum_tenthousand": np.full(10000, np.float32(1e-4)),
        "chain_x0": normal32(gen, b, d),
        "chain_mats": mats,
        "conv_x": normal32(gen, n, c, h, w),
        "conv_w": normal32(gen, c, c, 3, 3) / np.float32(np.sqrt(9 * c)),
        "relu_x": normal32(gen, s.relu_n),
    }
    out["conv_idx"] = np.array(
        [[int(gen.integers(v)) for v in (n, c, h, w)] for _ in range(N_SAMPLES)]
    )
    return out


def _int_scaled(a: np.ndarray) -> tuple[np.ndarray, int]:
    """float32 array -> (object array of Python ints, e) with a == ints * 2**e exactly."""
    a64 = a.astype(np.float64)
    nz = a64[a64 != 0]
    e = int(np.min(np.frexp(nz)[1])) - 24 if nz.size else 0
    ints = np.vectorize(lambda v: int(v), otypes=[object])(np.ldexp(a64, -e))
    return ints, e


def truth(inp: dict[str, Any]) -> dict[str, Any]:
    """Exact sums, exact chain states after every step, exact conv at sampled entries."""
    out: dict[str, Any] = {}
    for key in ("sum_uniform", "sum_tenthousand"):
        out[key + "_exact"] = exact_truth.sum(inp[key]).exact
        out[key] = float(out[key + "_exact"])
    x, e = _int_scaled(inp["chain_x0"])
    states = [inp["chain_x0"].astype(np.float64)]
    for m in inp["chain_mats"]:
        mi, em = _int_scaled(m)
        x, e = x.dot(mi), e + em
        scale = Fraction(2) ** e
        states.append(np.array([[float(v * scale) for v in row] for row in x]))
    out["chain"] = np.array(states)
    out["chain_exact_final"] = x * Fraction(2) ** e
    cx = np.pad(inp["conv_x"], ((0, 0), (0, 0), (1, 1), (1, 1))).astype(np.float64)
    w = inp["conv_w"].astype(np.float64)
    terms = np.stack([cx[n, :, y : y + 3, z : z + 3] * w[o] for n, o, y, z in inp["conv_idx"]])
    conv = exact_truth.sum(terms.reshape(len(terms), -1), axis=1)
    out["conv_exact"] = conv.exact
    out["conv"] = conv.round("float64")
    out["relu"] = np.maximum(inp["relu_x"], 0)
    return out


def run_side(dev: Any, inp: dict[str, Any], mode: str = "torch default") -> dict[str, Any]:
    """Every op on one device, under torch's defaults or with TF32 off; raw results."""
    torch = torch_module()
    F = torch.nn.functional

    def t(a: np.ndarray) -> Any:
        return torch.from_numpy(np.ascontiguousarray(a)).to(dev)

    tf = None if mode == "torch default" else False
    res: dict[str, Any] = {"device": str(dev), "mode": mode}
    with flags(matmul_tf32=tf, conv_tf32=tf):
        for key in ("sum_uniform", "sum_tenthousand"):
            res[key] = float(t(inp[key]).sum().cpu().numpy())
        x = t(inp["chain_x0"])
        states = [inp["chain_x0"]]
        for m in inp["chain_mats"]:
            x = x @ t(m)
            states.append(x.cpu().numpy())
        res["chain"] = np.array(states, dtype=np.float32)
        y = F.conv2d(t(inp["conv_x"]), t(inp["conv_w"]), padding=1).cpu().numpy()
        res["conv"] = y[tuple(inp["conv_idx"].T)]
        res["conv_digest"] = digest(y)
        r = torch.relu(t(inp["relu_x"])).cpu().numpy()
        res["relu_digest"] = digest(r)
        res["relu"] = r
        synchronize(dev)
    return res


def conv_error(conv: np.ndarray, tr: dict[str, Any]) -> float:
    """Relative error ||got - exact|| / ||exact|| of the sampled convolution outputs."""
    got = np.asarray(conv, dtype=np.float64)
    return float(np.linalg.norm(got - tr["conv"]) / np.linalg.norm(tr["conv"]))


def side_to_json(side: dict[str, Any], tr: dict[str, Any] | None = None) -> dict[str, Any]:
    """A side as JSON: sums as float32 bits and values, arrays packed, and the relu outputs
    that differ from the truths ``tr`` (None without them)."""
    out = {k: side[k] for k in ("device", "mode", "conv_digest", "relu_digest")}
    for key in ("sum_uniform", "sum_tenthousand"):
        out[key] = side[key]
        out[key + "_bits"] = bits32(side[key])[0]
    out["chain"] = pack(side["chain"])
    out["conv"] = pack(np.asarray(side["conv"], dtype=np.float32))
    out["relu_mismatches"] = None if tr is None else int(np.sum(side["relu"] != tr["relu"]))
    return out


@dataclass(frozen=True, eq=False)
class Side:
    """One device and mode's results (a record's side, arrays unpacked), and where they come
    from: ``label`` names the side, ``kind`` is "framework" (live) or "recorded"."""

    device: str
    mode: str
    sum_uniform: float
    sum_tenthousand: float
    sum_uniform_bits: int
    sum_tenthousand_bits: int
    chain: np.ndarray  # the chain's states, x0 then after each matmul
    conv: np.ndarray  # the sampled convolution outputs
    conv_digest: str
    relu_digest: str
    relu_mismatches: int | None  # relu outputs that differ from max(x, 0)
    label: str = ""
    kind: str = "recorded"
    version: str = ""

    @classmethod
    def from_json(cls, d: dict[str, Any], **where: str) -> Side:
        """A side as `side_to_json` writes it; ``where``: its label, kind and version."""
        sums = ("sum_uniform", "sum_tenthousand", "sum_uniform_bits", "sum_tenthousand_bits")
        digests = {k: d[k] for k in ("conv_digest", "relu_digest", "relu_mismatches")}
        return cls(
            d["device"], d["mode"], *(d[k] for k in sums), unpack(d["chain"]),
            unpack(d["conv"]), **digests, **where,
        )  # fmt: skip


def run_accelerator(
    devices: list[Any],
    *,
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Inputs' recipe, the truth, and each device's results in each mode (JSON-ready)."""
    say = progress or (lambda _m: None)
    s = settings(quick)
    inp = inputs(s)
    say("cpu_vs_accelerator: exact truth")
    tr = truth(inp)
    sides = []
    for dev in devices:
        for mode in MODES:
            say(f"cpu_vs_accelerator: {dev} ({mode})")
            sides.append(side_to_json(run_side(dev, inp, mode), tr))
    return {
        "settings": s.to_dict(),
        "input_digests": {k: digest(v) for k, v in inp.items()},
        "truth": {
            "sum_uniform": tr["sum_uniform"],
            "sum_tenthousand": tr["sum_tenthousand"],
            "chain": pack(tr["chain"]),
            "conv": pack(tr["conv"]),
        },
        "sides": sides,
    }
