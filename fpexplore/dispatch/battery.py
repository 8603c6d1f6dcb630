"""The fingerprint's battery: short, fixed computations in numpy, torch, TensorFlow (CPU, and
torch on every visible CUDA card), and where they are set up the LibTorch C++ program and DJL,
each kept as its result bits and its error against the exact truth of the very same input bits.

The inputs are fixed (seeded) and small, so a battery runs in seconds. An op whose library is
missing is left out and named in ``unavailable`` with the reason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

#: the ops of the battery, in the order tables show them, and what each stresses
OP_NOTES = {
    "sum": "a reduction: lanes, blocking and threads set the order of the additions",
    "sum_large": "a reduction of 2**17 + 3 values: long enough for torch to split it over "
    "threads (its grain is 32768)",
    "dot": "a reduction of products: FMA or not, lanes, blocking",
    "matmul": "BLAS: the kernel's blocking and its FMA; MKL/OpenBLAS/oneDNN pick by CPU",
    "softmax": "exp (a vector polynomial or libm) then a sum and a division or reciprocal",
    "exp": "an elementwise polynomial: SIMD paths use their own approximations",
    "log": "an elementwise polynomial: SIMD paths use their own approximations",
    "tanh": "an elementwise polynomial or rational approximation, per SIMD path",
    "layer_norm": "mean and variance (two reductions), then a rsqrt and a scale",
    "conv2d": "a reduction over channels and the kernel window, in the backend's blocking",
    "randn": "torch.manual_seed(0); randn(64): Box-Muller in the CPU path's vector math",
    "dropout": "torch.manual_seed(0); a dropout mask of 64 (p = 0.5): the generator's stream",
}
OPS = tuple(OP_NOTES)


@dataclass(frozen=True)
class Result:
    """One op's result on one library and device."""

    op: str
    library: str
    device: str
    values: np.ndarray

    @property
    def key(self) -> str:
        return f"{self.library}:{self.device}:{self.op}"


@cache
def inputs() -> dict[str, np.ndarray]:
    """The battery's fixed inputs (float32, seeded): small enough for seconds, wide enough
    for every path to show (lengths past the vector widths, values spanning binades)."""
    g = np.random.Generator(np.random.PCG64(20261126))
    f = np.float32
    return {
        "v": g.standard_normal(4099).astype(f),
        "long": g.standard_normal(2**17 + 3).astype(f),
        "w": g.standard_normal(4099).astype(f),
        "a": g.standard_normal((48, 96)).astype(f),
        "b": g.standard_normal((96, 40)).astype(f),
        "x": g.uniform(-4.0, 4.0, 259).astype(f),
        "p": np.exp(g.uniform(-8.0, 8.0, 259)).astype(f),
        "logits": (3.0 * g.standard_normal((4, 67))).astype(f),
        "ln": (2.0 + g.standard_normal((4, 67))).astype(f),
        "img": g.standard_normal((1, 5, 12, 12)).astype(f),
        "kernel": (0.3 * g.standard_normal((6, 5, 3, 3))).astype(f),
    }


@cache
def truths() -> dict[str, Any]:
    """The exact truth of each op with one, on `inputs` (computed once per process)."""
    from .. import truth
    from ..truth import reference

    i = inputs()
    return {
        "sum": truth.sum(i["v"]),
        "sum_large": truth.sum(i["long"]),
        "dot": truth.dot(i["v"], i["w"]),
        "matmul": truth.matmul(i["a"], i["b"]),
        "softmax": reference.softmax(i["logits"]),
        "exp": reference.exp(i["x"]),
        "log": reference.log(i["p"]),
        "tanh": reference.tanh(i["x"]),
        "layer_norm": reference.layer_norm(i["ln"], 67),
        "conv2d": truth.conv2d(i["img"], i["kernel"]),
    }


def digest(values: np.ndarray) -> str:
    """The first 16 hex digits of the SHA-256 of the result's bytes, shape and dtype."""
    a = np.ascontiguousarray(values)
    return hashlib.sha256(f"{a.dtype}{a.shape}".encode() + a.tobytes()).hexdigest()[:16]


def _numpy() -> list[Result]:
    i = inputs()
    ops: dict[str, Callable[[], np.ndarray]] = {
        "sum": lambda: np.asarray(np.sum(i["v"])),
        "sum_large": lambda: np.asarray(np.sum(i["long"])),
        "dot": lambda: np.asarray(np.dot(i["v"], i["w"])),
        "matmul": lambda: i["a"] @ i["b"],
        "exp": lambda: np.exp(i["x"]),
        "log": lambda: np.log(i["p"]),
        "tanh": lambda: np.tanh(i["x"]),
    }
    return [Result(op, "numpy", "cpu", fn()) for op, fn in ops.items()]


def _torch(torch: Any, device: str) -> list[Result]:
    i = inputs()
    t = {k: torch.from_numpy(v).to(device) for k, v in i.items()}
    f = torch.nn.functional

    def seeded(fn: Callable[[], Any]) -> Any:
        torch.manual_seed(0)
        return fn()

    ops: dict[str, Callable[[], Any]] = {
        "sum": lambda: t["v"].sum(),
        "sum_large": lambda: t["long"].sum(),
        "dot": lambda: torch.dot(t["v"], t["w"]),
        "matmul": lambda: t["a"] @ t["b"],
        "softmax": lambda: f.softmax(t["logits"], dim=-1),
        "exp": lambda: torch.exp(t["x"]),
        "log": lambda: torch.log(t["p"]),
        "tanh": lambda: torch.tanh(t["x"]),
        "layer_norm": lambda: f.layer_norm(t["ln"], (67,)),
        "conv2d": lambda: f.conv2d(t["img"], t["kernel"]),
        "randn": lambda: seeded(lambda: torch.randn(64, device=device)),
        "dropout": lambda: seeded(
            lambda: f.dropout(torch.ones(64, device=device), 0.5, training=True)
        ),
    }
    with torch.no_grad():
        return [Result(op, "torch", device, fn().detach().cpu().numpy()) for op, fn in ops.items()]


def _tensorflow(tf: Any) -> list[Result]:
    i = inputs()
    ln = i["ln"]

    def layer_norm() -> Any:
        from .. import backends

        layer = backends.load("keras").layers.LayerNormalization(epsilon=1e-5, dtype="float32")
        return layer(tf.constant(ln))

    ops: dict[str, Callable[[], Any]] = {
        "sum": lambda: tf.reduce_sum(tf.constant(i["v"])),
        "sum_large": lambda: tf.reduce_sum(tf.constant(i["long"])),
        "dot": lambda: tf.tensordot(tf.constant(i["v"]), tf.constant(i["w"]), 1),
        "matmul": lambda: tf.matmul(tf.constant(i["a"]), tf.constant(i["b"])),
        "softmax": lambda: tf.nn.softmax(tf.constant(i["logits"])),
        "exp": lambda: tf.exp(tf.constant(i["x"])),
        "log": lambda: tf.math.log(tf.constant(i["p"])),
        "tanh": lambda: tf.tanh(tf.constant(i["x"])),
        "layer_norm": layer_norm,
        "conv2d": lambda: tf.transpose(
            tf.nn.conv2d(
                tf.constant(i["img"].transpose(0, 2, 3, 1)),
                tf.constant(i["kernel"].transpose(2, 3, 1, 0)),
                strides=1,
                padding="VALID",
            ),
            (0, 3, 1, 2),
        ),
    }
    with tf.device("/CPU:0"):
        return [Result(op, "tensorflow", "cpu", fn().numpy()) for op, fn in ops.items()]


#: the ops of the libraries that run only some of `OPS` (the others run every op they have):
#: a missing library is "not run" for these only
PARTIAL = {
    "libtorch": ("sum", "sum_large", "matmul", "randn"),
    "djl": ("sum", "sum_large", "randn"),
}


def runs_op(library: str, op: str) -> bool:
    """Whether ``library`` computes ``op`` where it is installed."""
    return op in PARTIAL.get(library, OPS)


def _libtorch() -> list[Result]:
    """The C++ program (one thread, as a service started with OMP_NUM_THREADS=1 would run)."""
    from ..backends.libtorch_program import Job, run

    i = inputs()
    jobs = {
        "sum": Job("sum", [i["v"]]),
        "sum_large": Job("sum", [i["long"]]),
        "matmul": Job("mm", [i["a"], i["b"]]),
        "randn": Job("randn", seed=0, n=64),
    }
    out = run(list(jobs.values()))
    return [Result(op, "libtorch", "cpu", v) for op, v in zip(jobs, out, strict=True)]


def _djl() -> list[Result]:
    """DJL's NDArray ops in its JVM worker (libtorch underneath, DJL's own seeding)."""
    from ..backends import djl

    i = inputs()
    return [
        Result("sum", "djl", "cpu", djl.ndsum(i["v"])),
        Result("sum_large", "djl", "cpu", djl.ndsum(i["long"])),
        Result("randn", "djl", "cpu", djl.random_normal(0, 64)),
    ]


def _optional(name: str, why: str | None, fn: Callable[[], list[Result]]) -> tuple[list, str]:
    """``fn()``'s results, or none and the reason (missing, or the worker failed)."""
    from ..errors import FpexploreError

    if why is not None:
        return [], why
    try:
        return fn(), ""
    except FpexploreError as exc:
        return [], f"{name} did not run: {exc}"


def run() -> tuple[list[Result], dict[str, str]]:
    """Every op that can run here: (results, {library: why it did not run}).

    LibTorch and DJL run in their own processes (the C++ program, the JVM worker): they are
    started on a thread before TensorFlow loads, so their start-up overlaps TensorFlow's."""
    from .. import backends
    from ..backends import libtorch_program

    results, unavailable = _numpy(), {}
    torch_why = backends.missing("torch")
    if torch_why is None:
        torch = backends.load("torch")  # before TensorFlow: the safe order of their LLVMs
        results += _torch(torch, "cpu")
        for n in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
            results += _torch(torch, f"cuda:{n}")
    else:
        unavailable["torch"] = torch_why
    others = [
        ("libtorch", libtorch_program.missing(), _libtorch),
        ("djl", backends.missing("djl"), _djl),
    ]
    if others[1][1] is None:
        from ..backends import djl  # noqa: F401  (imported here, not on the thread)
    with ThreadPoolExecutor(1) as pool:
        apart = pool.submit(lambda: [_optional(*o) for o in others])
        tf_why = backends.missing("tensorflow")
        if tf_why is None:
            results += _tensorflow(backends.load("tensorflow"))
        else:
            unavailable["tensorflow"] = tf_why
        for (name, _, _), (found, why_not) in zip(others, apart.result(), strict=True):
            results += found
            if why_not:
                unavailable[name] = why_not
    return results, unavailable


def errors(results: list[Result]) -> dict[str, float | None]:
    """Each result's largest error in ULPs of its format against the exact truth (None for
    ops without a truth: random streams)."""
    from ..metrics import measure

    found = truths()
    out: dict[str, float | None] = {}
    for r in results:
        t = found.get(r.op)
        out[r.key] = None if t is None else float(measure(r.values, t).max_abs_ulp)
    return out
