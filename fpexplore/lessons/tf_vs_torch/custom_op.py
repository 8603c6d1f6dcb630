"""A custom autograd op: softplus with a hand-written backward, against torch's own gradient,
TensorFlow's, and the exact derivative sigmoid(x) (mpmath).

The hand-written backward ``g / (1 + exp(-x))`` is the derivative in algebra; torch's own
computes ``z / (z + 1)`` with ``z = exp(x)`` (and 1 above its threshold), so the two round
differently, and ``exp(-x)`` overflows where torch's form does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from ... import formats
from ...judging import DEPENDS, FAILS, HOLDS, NotMeasured, Verdicts, claim, decide
from ...result import Claim, Observation
from .._base import declare_texts, torch_threads
from .frameworks import n_different

SEEDS = (0, 1, 2)
N = 1024
ROUNDINGS = 3  # exp (within 1 ULP), 1 + e, the division: the bound in ULPs
ORDINARY = 20.0  # |x| up to this: no overflow in either form
#: the breaking inputs: signed zeros, NaN, subnormals, torch's threshold, exp's overflow
EDGES = (-0.0, 0.0, float("nan"), 1e-40, -1e-40, 20.0, 20.5, -30.0, -87.0, -88.8, -100.0)

CLAIMS = declare_texts(
    {
        "custom_backward_differs": "a torch.autograd.Function softplus whose hand-written "
        "backward g / (1 + exp(-x)) equals torch's derivative in algebra gives other bits",
        "custom_backward_close": f"on ordinary inputs (|x| ≤ {ORDINARY:g}) torch's own and the "
        f"hand-written gradient are both within {ROUNDINGS} ULP of the exact derivative",
        "custom_backward_overflows": "where exp(-x) overflows the hand-written backward gives 0 "
        "instead of the tiny exact derivative; torch's own stays within the bound",
    },
    ("torch",),
    test="tests/test_custom_op.py",
)
OBSERVATIONS = declare_texts(
    {"tf_softplus_gradient": "TensorFlow's softplus gradient against the exact derivative"},
    ("torch", "tensorflow"),
)


@dataclass(frozen=True)
class CustomOp:
    """Errors in ULPs of the exact derivative, by implementation, and bits that differ."""

    differ: list[int]  # per seed: elements whose bits differ, torch's vs the hand-written
    n: int  # elements per seed (ordinary and edge inputs)
    ordinary_ulp: dict[str, float]  # worst |error| on ordinary inputs
    edge_ulp: dict[str, dict[float, float]]  # |error| at each finite edge input


def exact_derivative(x: np.ndarray) -> np.ndarray:
    """sigmoid(x) for every element (NaN stays NaN), from mpmath at 30 digits."""
    with mpmath.workdps(30):
        return np.array(
            [
                float(1 / (1 + mpmath.exp(-mpmath.mpf(float(v))))) if v == v else np.nan
                for v in x.tolist()
            ]
        )


def ulp_errors(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """|got - exact| in float32 ULPs of the exact value (NaN where exact is NaN and got too)."""
    return np.abs(got.astype(np.float64) - exact) / formats.ulp(exact, "float32")


def _softplus_fn(torch: Any) -> Any:
    class Softplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return torch.nn.functional.softplus(x)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g / (1 + torch.exp(-x))

    return Softplus.apply


def inputs(seed: int) -> np.ndarray:
    """N normal values (sigma 4) of the seed, then the edges."""
    g = np.random.Generator(np.random.PCG64(seed))
    return np.concatenate([g.normal(0, 4, N), EDGES]).astype(np.float32)


def gradients(torch: Any, x: np.ndarray) -> dict[str, np.ndarray]:
    """torch's softplus gradient and the hand-written one, at ``x``."""
    custom = _softplus_fn(torch)
    out = {}
    for name, f in (("torch", torch.nn.functional.softplus), ("hand-written", custom)):
        t = torch.from_numpy(x).requires_grad_()
        (g,) = torch.autograd.grad(f(t).sum(), t)
        out[name] = g.numpy().copy()
    return out


def decide_claims(
    got: dict[str, list[np.ndarray]], xs: list[np.ndarray]
) -> tuple[dict[str, Claim], CustomOp]:
    """The claims from the gradients of every seed (``got[name][k]`` at ``xs[k]``)."""
    x = np.concatenate(xs)
    exact = exact_derivative(x)
    ordinary = np.abs(x) <= ORDINARY
    overflow = -x > np.log(np.finfo(np.float32).max)
    err = {k: ulp_errors(np.concatenate(v), exact) for k, v in got.items()}
    nan_kept = all(bool(np.isnan(np.concatenate(v)[np.isnan(x)]).all()) for v in got.values())
    differ = [n_different(a, b) for a, b in zip(got["torch"], got["hand-written"], strict=True)]
    worst = {k: float(e[ordinary].max()) for k, e in err.items()}
    edges = np.isin(x, np.array(EDGES, np.float32)) & ~np.isnan(x)
    edge_ulp = {
        k: {float(v): float(e) for v, e in zip(x[edges], err[k][edges], strict=True)} for k in err
    }
    hand, own = np.concatenate(got["hand-written"]), np.concatenate(got["torch"])
    zeroed = overflow & (hand == 0) & (exact > 0)
    claims = {
        "custom_backward_differs": CLAIMS["custom_backward_differs"].claim(
            all(d > 0 for d in differ),
            f" ({', '.join(map(str, differ))} of {x.size // len(xs)} elements, seeds "
            f"{', '.join(map(str, SEEDS[: len(xs)]))})",
        ),
        "custom_backward_close": CLAIMS["custom_backward_close"].claim(
            max(worst.values()) <= ROUNDINGS and nan_kept,
            f" (mpmath sigmoid(x)): torch's own {worst['torch']:.3g} ULP, hand-written "
            f"{worst['hand-written']:.3g}; NaN in, NaN out",
        ),
        "custom_backward_overflows": CLAIMS["custom_backward_overflows"].claim(
            bool(overflow.any() and zeroed[overflow].all())
            and float(err["torch"][overflow].max()) <= ROUNDINGS,
            f" (x < −{np.log(np.finfo(np.float32).max):.4g}: {int(zeroed.sum())} zeros, up to "
            f"{float(err['hand-written'][overflow].max()):.3g} ULP off; torch's own "
            f"{float(err['torch'][overflow].max()):.3g} ULP; own vs hand-written bits differ "
            f"there in {int((own[overflow] != hand[overflow]).sum())} of {int(overflow.sum())})",
        ),
    }
    return claims, CustomOp(differ, x.size // len(xs), worst, edge_ulp)


def run(fw: Any) -> tuple[dict[str, Claim], dict[str, Observation], CustomOp]:
    """Every seed's gradients (TensorFlow's too, observed), then the claims."""
    torch, tf = fw.torch, fw.tf
    xs = [inputs(s) for s in SEEDS]
    got: dict[str, list[np.ndarray]] = {"torch": [], "hand-written": []}
    with torch_threads(torch, 1):
        for x in xs:
            for k, v in gradients(torch, x).items():
                got[k].append(v)
    claims, data = decide_claims(got, xs)
    tf_err = []
    for x in xs:
        xv = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(xv)
            y = tf.reduce_sum(tf.nn.softplus(xv))
        g = tape.gradient(y, xv).numpy()
        e = ulp_errors(g, exact_derivative(x))
        tf_err.append(float(e[np.abs(x) <= ORDINARY].max()))
    seen = {
        "tf_softplus_gradient": OBSERVATIONS["tf_softplus_gradient"].observe(
            max(tf_err), f"worst |error| in ULPs on |x| ≤ {ORDINARY:g}, by seed: {tf_err}"
        )
    }
    return claims, seen, data


def judge(c: Any) -> Verdicts:
    """Myth: a custom op's hand-written gradient differs from the framework's own."""
    d = getattr(c.data, "custom_op", None)
    differs = claim(c, "autograd.custom_backward_differs")
    close = claim(c, "autograd.custom_backward_close")
    overflows = claim(c, "autograd.custom_backward_overflows")
    if d is None:
        raise NotMeasured("the tf_vs_torch run has no custom autograd op")
    number = (
        f"softplus: other bits in {', '.join(map(str, d.differ))} of {d.n} elements; worst "
        f"on ordinary inputs: torch's own {d.ordinary_ulp['torch']:.3g} ULP, hand-written "
        f"{d.ordinary_ulp['hand-written']:.3g}; at the edge inputs hand-written up to "
        f"{max(d.edge_ulp['hand-written'].values(), default=float('nan')):.3g} ULP, torch's "
        f"own up to {max(d.edge_ulp['torch'].values(), default=float('nan')):.3g}"
    )
    return decide(
        number,
        (
            differs and close and overflows,
            DEPENDS,
            "on the inputs: an algebraically equal backward rounds differently (other bits, "
            "both within a few ULP of the exact derivative), and is wrong where its own formula "
            "overflows",
        ),
        (not differs, FAILS, "the hand-written backward gave torch's bits"),
        otherwise=(HOLDS, "the hand-written backward is off the exact derivative"),
    )
