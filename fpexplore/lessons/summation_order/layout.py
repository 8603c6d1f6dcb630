"""Memory layout and association order, judged on several seeds with torch: the same values at
other storage offsets and strides (claim 22), and a residual block added in two orders against
the exact result (claim 24)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ...result import Claim
from ...truth import matmul

SEEDS = 3
SIZES = (1, 7, 100, 1027)
OFFSETS = range(1, 9)  # elements: 4 to 32 bytes away from the aligned start
D, H = 32, 64  # residual block: features, hidden units

TEXTS = {
    "offset_same_bits": "the same values at another storage offset (alignment) give the same "
    "bits in sum, dot and elementwise ops",
    "strides_change_bits": "a strided view gives other bits than its contiguous copy: reductions "
    "and some elementwise ops take another loop",
    "residual_orders_differ": "a residual block's x + (h W + b) and (x + b) + h W differ in "
    "some bits",
    "residual_orders_bounded": "both residual orders stay inside the float32 rounding bound of "
    "the exact result",
}


@dataclass(frozen=True)
class Layout:
    """Storage offsets and strides against an aligned, contiguous copy (`layout`)."""

    offset_same: int  # cases where an offset view gave the copy's bits
    offset_tried: int
    gelu_strided_differ: int  # gelu values of a stride-2 view that differ from its copy's
    gelu_strided_n: int


@dataclass(frozen=True)
class Residual:
    """A residual block added in two association orders (`layout.residual_claims`)."""

    differ: int  # float32 outputs whose bits differ between the orders
    total: int
    worst_of_bound: float  # the largest error, as a fraction of the rounding bound


_OPS: dict[str, Any] = {
    "sum": lambda t, a: t.sum(a),
    "dot": lambda t, a: t.dot(a, a),
    "exp": lambda t, a: t.exp(a),
    "gelu": lambda t, a: t.nn.functional.gelu(a),
}


def _bits(a: Any) -> bytes:
    return np.ascontiguousarray(a.numpy()).tobytes()


def layout_claims(torch: Any, seed: int) -> tuple[dict[str, Claim], Layout]:
    same = tried = 0
    single = single_tried = 0
    strided_elem = strided_sum = strided_n = 0
    gelu = torch.nn.functional.gelu
    for s in range(seed, seed + SEEDS):
        base = np.random.Generator(np.random.PCG64(s)).standard_normal(2048 + 16) * 3
        t = torch.from_numpy(base.astype(np.float32))
        for n in SIZES:
            for off in OFFSETS:
                view = t[off : off + n]  # storage offset off, 4·off bytes from the start
                copy = view.clone()  # a fresh, aligned allocation
                for name, op in _OPS.items():
                    if n == 1 and name == "gelu":
                        continue  # a one-element tensor takes the scalar loop: counted below
                    tried += 1
                    same += _bits(op(torch, view)) == _bits(op(torch, copy))
        # elementwise on one element (scalar loop) vs the same value inside a long tensor
        full = gelu(t).numpy()
        for i in range(64):
            single_tried += 1
            single += gelu(t[i : i + 1]).numpy()[0].tobytes() != full[i].tobytes()
        # strides: every second element, and a transposed matrix
        strided = t[:2048:2]
        strided_elem += int((gelu(strided) != gelu(strided.contiguous())).sum().item())
        strided_n += strided.numel()
        m = t[:2048].reshape(32, 64).t()
        strided_sum += int((m.sum(1) != m.contiguous().sum(1)).sum().item())
    claims = {
        "offset_same_bits": Claim(
            f"the same float32 values at storage offsets of 1 to 8 elements (4 to 32 bytes off "
            f"the aligned start) give the same bits as an aligned copy in {same} of {tried} cases "
            f"of sum, dot, exp and gelu (sizes {', '.join(map(str, SIZES))}, {SEEDS} seeds): "
            "the vectorized loops load unaligned and count from the first element, so alignment "
            "moves nothing",
            same == tried,
        ),
        "strides_change_bits": Claim(
            f"strides do change bits: gelu of a stride-2 view differs from gelu of its "
            f"contiguous copy in {strided_elem} of {strided_n} values (a non-contiguous input "
            f"takes the scalar loop, whose erf rounds differently from the vectorized one; a "
            f"one-element tensor too: {single} of {single_tried}), and summing the rows of a "
            f"transposed view differs from summing its contiguous copy in {strided_sum} of "
            f"{SEEDS * 64} sums (another reduction order)",
            strided_elem > 0 and strided_sum > 0,
        ),
    }
    return claims, Layout(same, tried, strided_elem, strided_n)


#: float arrays to exact Fractions, element by element
_fractions = np.vectorize(lambda v: Fraction(float(v)), otypes=[object])


def residual_claims(torch: Any, seed: int) -> tuple[dict[str, Claim], Residual]:
    differ = total = 0
    worst, inside = 0.0, True
    u = 2.0**-24
    for s in range(seed, seed + SEEDS):
        g = np.random.Generator(np.random.PCG64([s, 24]))
        x = g.standard_normal((8, D)).astype(np.float32)
        h = np.maximum(g.standard_normal((8, H)), 0).astype(np.float32)  # post-ReLU hidden
        w = (g.standard_normal((D, H)) / np.sqrt(H)).astype(np.float32)
        b = (g.standard_normal(D) * 0.1).astype(np.float32)
        xt, ht, wt, bt = (torch.from_numpy(a) for a in (x, h, w, b))
        a = (xt + torch.nn.functional.linear(ht, wt, bt)).numpy()  # x + (h Wᵀ + b)
        c = torch.addmm(xt + bt, ht, wt.t()).numpy()  # (x + b) + h Wᵀ
        differ += int((a.view(np.uint32) != c.view(np.uint32)).sum())
        total += a.size
        exact = _fractions(x) + _fractions(b) + matmul(h, np.ascontiguousarray(w.T)).exact
        mag = np.abs(x) + np.abs(b) + np.abs(h).astype(np.float64) @ np.abs(w.T).astype(np.float64)
        bound = (H + 2) * u * mag  # every addition and product rounds once, relative to |terms|
        for y in (a, c):
            err = np.abs((_fractions(y) - exact).astype(np.float64))
            inside &= bool((err <= bound).all())
            worst = max(worst, float((err / bound).max()))
    claims = {
        "residual_orders_differ": Claim(
            f"a residual block's two association orders, x + (h·Wᵀ + b) (torch's Linear, then the "
            f"skip) and (x + b) + h·Wᵀ (addmm onto the skip), differ in {differ} of {total} "
            f"float32 outputs ({SEEDS} seeds)",
            differ > 0,
        ),
        "residual_orders_bounded": Claim(
            f"both orders stay inside the float32 rounding bound (H + 2)·u·(|x| + |b| + Σ|h||w|) "
            f"of the exact result (worst: {worst:.3g} of the bound): neither order is wrong, "
            "they round at different places",
            inside,
        ),
    }
    return claims, Residual(differ, total, worst)
