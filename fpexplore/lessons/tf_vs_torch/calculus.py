"""Control flow under a tape, higher-order derivatives, and near-singular tolerances."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Any

import mpmath
import numpy as np

from ...truth import Truth
from ...truth.ops import make_truth
from .claims import CONTROL_FLOW, HIGHER_ORDER, TOLERANCE
from .data import ControlFlowData, HigherOrderData, TolerancesData
from .frameworks import OBSERVATIONS, Frameworks, Section, n_different, on_grid, rng

# -- control flow (claim 26) -------------------------------------------------------------------


def _piecewise_exact(x: float) -> float:
    """d/dx of f(x) = x·x if x > 0 else -2x, exactly (2x is exact in float32)."""
    return 2 * x if x > 0 else -2.0


def run_control_flow(fw: Frameworks, seed: int, **_: Any) -> Section:
    torch, tf = fw.torch, fw.tf
    xs = on_grid(rng(seed, 26).uniform(-2, 2, 6), "float32")
    xs[0], xs[1] = abs(xs[0]) or 0.5, -abs(xs[1]) or -0.5  # both branches, always

    def f_py(x: Any) -> Any:  # a plain Python `if` on a tensor (eager)
        if x > 0:
            return x * x
        return -2.0 * x

    f_graph = tf.function(f_py)  # autograph turns the `if` into tf.cond

    @tf.function
    def f_cond(x: Any) -> Any:
        return tf.cond(x > 0, lambda: x * x, lambda: -2.0 * x)

    def taped(fn: Any, x: float) -> Any:
        v = tf.constant(x, dtype=tf.float32)
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = fn(v)
        return tape.gradient(y, v)

    def torch_grad(x: float) -> Any:
        xt = torch.tensor(x, dtype=torch.float32, requires_grad=True)
        f_py(xt).backward()
        return xt.grad

    ways = {
        "no tape": lambda x: f_py(tf.constant(x, tf.float32)),
        "tape": partial(taped, f_py),
        "graph": partial(taped, f_graph),
        "cond": partial(taped, f_cond),
        "torch": torch_grad,
        "exact": _piecewise_exact,
    }
    arrays = {
        k: np.array([np.float32(way(x)) for x in xs.tolist()], dtype=np.float32)
        for k, way in ways.items()
    }
    values = np.array([f_py(np.float32(x)) for x in xs], dtype=np.float32)
    grads_equal = all(
        arrays[k].tobytes() == arrays["exact"].tobytes() for k in ("tape", "graph", "cond", "torch")
    )
    holds = {
        "if_without_tape": arrays["no tape"].tobytes() == values.tobytes(),
        "control_flow_gradients_agree": grads_equal,
    }
    claims = {k: CONTROL_FLOW[k].claim(h, len_xs=len(xs)) for k, h in holds.items()}
    exact_grads = np.array(
        [Fraction(2) * Fraction(x) if x > 0 else Fraction(-2) for x in xs.tolist()], dtype=object
    )
    truth = make_truth("d/dx of (x·x if x > 0 else -2x), exact", exact_grads, "float32")
    outcomes = [
        fw.measured("tensorflow", "tf eager Python if, GradientTape", arrays["tape"], truth),
        fw.measured("tensorflow", "tf.function with tf.cond", arrays["cond"], truth),
        fw.measured("torch", "torch autograd, Python if", arrays["torch"], truth),
    ]
    data = ControlFlowData(xs.tolist())
    return Section(outcomes, claims, truth, data)


# -- higher-order derivatives (claim 27) -------------------------------------------------------

#: name -> (torch/tf function of a tensor module, mpmath function)
FUNCTIONS: dict[str, tuple[Any, Any]] = {
    "tanh(x)": (lambda m, x: m.tanh(x), mpmath.tanh),
    "sin(x)·exp(x)": (lambda m, x: m.sin(x) * m.exp(x), lambda x: mpmath.sin(x) * mpmath.exp(x)),
    "x·sigmoid(x)": (
        lambda m, x: x * m.sigmoid(x) if hasattr(m, "sigmoid") else x * m.math.sigmoid(x),
        lambda x: x / (1 + mpmath.exp(-x)),
    ),
}
ORDERS = (2, 3)
#: errors are compared with the largest |derivative| over the points (derivatives have zeros,
#: where a relative error means nothing): a few hundred float32 roundings is the budget
SCALED_BOUND = 256 * 2.0**-24


def _torch_derivs(torch: Any, fn: Any, x: np.ndarray) -> dict[int, np.ndarray]:
    xt = torch.from_numpy(x.copy()).requires_grad_(True)
    g, out = fn(torch, xt).sum(), {}
    for k in range(1, max(ORDERS) + 1):
        (g,) = torch.autograd.grad(g, xt, create_graph=True)
        if k in ORDERS:
            out[k] = g.detach().numpy().copy()
        g = g.sum()
    return out


def _tf_derivs(tf: Any, fn: Any, x: np.ndarray) -> dict[int, np.ndarray]:
    v = tf.Variable(x)
    with tf.GradientTape() as t3, tf.GradientTape() as t2, tf.GradientTape() as t1:
        y = fn(tf, v)
        d1 = t1.gradient(y, v)
        d2 = t2.gradient(d1, v)
    d3 = t3.gradient(d2, v)
    return {2: d2.numpy(), 3: d3.numpy()}


def run_higher_order(fw: Frameworks, seed: int, **_: Any) -> Section:
    torch, tf = fw.torch, fw.tf
    x = on_grid(rng(seed, 27).uniform(-2, 2, 8), "float32")
    worst, differ, total = {"torch": 0.0, "tf": 0.0}, 0, 0
    values: dict[str, list[np.ndarray]] = {"torch": [], "tf": []}
    exact_all: list[Any] = []
    for fn, mp in FUNCTIONS.values():
        t, f = _torch_derivs(torch, fn, x), _tf_derivs(tf, fn, x)
        with mpmath.workdps(40):
            exact_mp = {k: [mpmath.diff(mp, mpmath.mpf(float(v)), k) for v in x] for k in ORDERS}
        exact = {k: np.array([float(v) for v in exact_mp[k]]) for k in ORDERS}
        for k in ORDERS:
            values["torch"].append(t[k])
            values["tf"].append(f[k])
            exact_all += exact_mp[k]
            scale = float(np.max(np.abs(exact[k]))) or 1.0
            et = float(np.max(np.abs(t[k] - exact[k]))) / scale
            ef = float(np.max(np.abs(f[k] - exact[k]))) / scale
            worst["torch"], worst["tf"] = max(worst["torch"], et), max(worst["tf"], ef)
            n = n_different(t[k], f[k])
            differ, total = differ + n, total + x.size
    claims = {
        "higher_order_accurate": HIGHER_ORDER["higher_order_accurate"].claim(
            max(worst.values()) <= SCALED_BOUND,
            functions=", ".join(FUNCTIONS),
            x_size=x.size,
            bound_u=SCALED_BOUND / 2.0**-24,
            torch_u=worst["torch"] / 2.0**-24,
            tf_u=worst["tf"] / 2.0**-24,
        ),
    }
    observations = {
        "higher_order_bits_differ": OBSERVATIONS["higher_order_bits_differ"].observe(
            f"{differ} of {total}"
        )
    }
    data = HigherOrderData(differ, total, worst)
    mp = np.array(exact_all, dtype=object)
    truth = Truth("2nd and 3rd derivatives (mpmath.diff at 40 digits)", mp=mp, digits=30)
    outcomes = [
        fw.measured("torch", "torch nested autograd.grad", np.concatenate(values["torch"]), truth),
        fw.measured("tensorflow", "tf nested GradientTape", np.concatenate(values["tf"]), truth),
    ]
    return Section(outcomes, claims, truth, data, observations)


# -- near-singular tolerances (claim 28) -------------------------------------------------------

DIAG = (1.0, 1e-5, 1e-6)


def pinv_cutoff(pinv: Callable[[np.ndarray], Any], dtype: str, steps: int = 48) -> float:
    """The default cut-off of ``pinv`` relative to σ_max, measured: the smallest s that
    pinv(diag(1, 1, s)) keeps (bisected in log2 between 2**-100 and 1), max(m, n) = 3."""

    def kept(e: float) -> bool:
        a = np.diag(np.array([1.0, 1.0, 2.0**e], dtype=dtype))
        return float(np.asarray(pinv(a))[2, 2]) != 0.0

    lo, hi = -100.0, 0.0  # dropped at lo, kept at hi
    if kept(lo) or not kept(hi):
        return 0.0 if kept(lo) else 1.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if kept(mid) else (mid, hi)
    return 2.0**hi


def pinv_defaults(fw: Frameworks) -> dict[str, str]:
    """Each library's pinv signature as installed (its tolerance arguments and defaults)."""
    import inspect

    out = {"numpy": str(inspect.signature(np.linalg.pinv))}
    out["tf"] = str(inspect.signature(fw.tf.linalg.pinv))
    doc = fw.torch.linalg.pinv.__doc__ or ""
    out["torch"] = doc.strip().splitlines()[0] if doc.strip() else "(no signature)"
    return out


def run_tolerances(fw: Frameworks, **_: Any) -> Section:
    torch, tf = fw.torch, fw.tf
    out: dict[str, dict[str, Any]] = {}
    pinvs = {
        "numpy": np.linalg.pinv,
        "torch": lambda a: torch.linalg.pinv(torch.from_numpy(a)).numpy(),
        "tf": lambda a: tf.linalg.pinv(tf.constant(a)).numpy(),
    }
    for dt in ("float32", "float64"):
        a = np.diag(np.array(DIAG, dtype=dt))
        b = np.ones(3, dtype=dt)
        at, af = torch.from_numpy(a), tf.constant(a)
        out[dt] = {
            "numpy rank": int(np.linalg.matrix_rank(a)),
            "torch rank": int(torch.linalg.matrix_rank(at)),
            "tf rank": int(tf.linalg.matrix_rank(af)),
            "numpy pinv[2,2]": float(np.linalg.pinv(a)[2, 2]),
            "torch pinv[2,2]": float(torch.linalg.pinv(at)[2, 2]),
            "tf pinv[2,2]": float(tf.linalg.pinv(af)[2, 2]),
            "numpy lstsq x[2]": float(np.linalg.lstsq(a, b, rcond=None)[0][2]),
            "torch lstsq x[2]": float(
                torch.linalg.lstsq(at, torch.from_numpy(b)[:, None])[0][2, 0]
            ),
            "tf lstsq x[2]": float(tf.linalg.lstsq(af, tf.constant(b)[:, None])[2, 0]),
            **{f"{lib} pinv cutoff": pinv_cutoff(f, dt) for lib, f in pinvs.items()},
        }
    out["signatures"] = pinv_defaults(fw)
    f32 = out["float32"]
    eps = float(np.finfo(np.float32).eps)
    kept = 1 / np.float32(DIAG[2])
    tf_drops = f32["tf pinv[2,2]"] == 0.0 and f32["tf rank"] == 3
    others_keep = all(
        abs(f32[f"{lib} pinv[2,2]"] - kept) <= 1e-5 * kept for lib in ("numpy", "torch")
    )
    claims = {
        "tolerances_differ": TOLERANCE["tolerances_differ"].claim(
            bool(tf_drops and others_keep),
            diag=DIAG,
            rcond=30 * eps,
            f32_tf_pinv_2_2=f32["tf pinv[2,2]"],
            f32_tf_rank=f32["tf rank"],
            f32_numpy_pinv_2_2=f32["numpy pinv[2,2]"],
            f32_torch_pinv_2_2=f32["torch pinv[2,2]"],
            f32_numpy_pinv_cutoff=f32["numpy pinv cutoff"],
            f32_torch_pinv_cutoff=f32["torch pinv cutoff"],
            f32_tf_pinv_cutoff=f32["tf pinv cutoff"],
        ),
        "float64_all_agree": TOLERANCE["float64_all_agree"].claim(
            all(
                out["float64"][f"{lib} rank"] == 3
                and abs(out["float64"][f"{lib} pinv[2,2]"] - 1e6) <= 1e-3
                for lib in ("numpy", "torch", "tf")
            )
        ),
    }
    truth = make_truth(
        "pinv(A)[2,2] = 1/float32(1e-6), exact", Fraction(1) / Fraction(float(np.float32(DIAG[2])))
    )
    outcomes = [
        fw.measured(lib, f"{k}.linalg.pinv float32 [2,2]", np.float32(f32[f"{k} pinv[2,2]"]), truth)
        for lib, k in (("torch", "torch"), ("tensorflow", "tf"))
    ]
    observations = {
        "lstsq_float32": OBSERVATIONS["lstsq_float32"].observe(
            {k: v for k, v in f32.items() if "lstsq" in k}
        )
    }
    return Section(outcomes, claims, truth, TolerancesData(out), observations)
