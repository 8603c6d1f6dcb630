"""The tiny models the lesson trains, written once over an array namespace (`Ops`): numpy in
float32 or float64, mpmath numbers (numpy object arrays), torch, TensorFlow. Gradients are
written by hand, so every reduction over the batch goes through ``Ops.colsum`` (the one place a
summation order is chosen) and every framework runs the same sequence of operations."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

MODELS = ("logistic", "mlp", "rnn")
#: the models' sizes: inputs, hidden units, sequence length (the RNN); the data's sizes
FEATURES, HIDDEN, SEQ = 2, 12, 6
N_TRAIN, N_TEST, BATCH = 128, 512, 32


@dataclass(frozen=True)
class Ops:
    """The operations a training step uses, in one array library and precision."""

    name: str
    asarray: Callable[[np.ndarray], Any]
    tonumpy: Callable[[Any], np.ndarray]
    mm: Callable[[Any, Any], Any]
    T: Callable[[Any], Any]
    tanh: Callable[[Any], Any]
    exp: Callable[[Any], Any]
    colsum: Callable[[Any], Any]  # the sum over the batch (axis 0)

    def sigmoid(self, z: Any) -> Any:
        return 1 / (1 + self.exp(-z))


def chunked(colsum: Callable[[Any], Any], chunks: int) -> Callable[[Any], Any]:
    """``colsum`` over ``chunks`` slices of the batch, the partial sums then added left to
    right: how ``chunks`` threads split one reduction."""
    if chunks <= 1:
        return colsum

    def split(a: Any) -> Any:
        n = a.shape[0]
        edges = [round(i * n / chunks) for i in range(chunks + 1)]
        total = colsum(a[edges[0] : edges[1]])
        for lo, hi in pairwise(edges[1:]):
            total = total + colsum(a[lo:hi])
        return total

    return split


def numpy_ops(dtype: str, chunks: int = 1) -> Ops:
    """numpy in ``dtype`` (its pairwise sums), the batch split in ``chunks``."""
    t = np.dtype(dtype)
    return Ops(
        f"numpy {dtype}" + (f", {chunks} chunks" if chunks > 1 else ""),
        lambda a: np.asarray(a, dtype=t),
        lambda a: np.asarray(a, dtype=np.float64),
        np.matmul,
        lambda a: a.T,
        np.tanh,
        np.exp,
        chunked(lambda a: a.sum(axis=0), chunks),
    )


def mp_ops() -> Ops:
    """mpmath numbers in numpy object arrays, at the working precision of the caller."""
    import mpmath

    tanh = np.frompyfunc(mpmath.tanh, 1, 1)
    exp = np.frompyfunc(mpmath.exp, 1, 1)
    mpf = np.frompyfunc(mpmath.mpf, 1, 1)

    def sum0(a: Any) -> Any:
        out = a[0].copy()
        for row in a[1:]:
            out = out + row
        return out

    return Ops(
        "mpmath",
        lambda a: mpf(np.asarray(a, dtype=np.float64)).astype(object),
        lambda a: np.asarray(a, dtype=object).astype(np.float64),
        lambda a, b: np.dot(a, b),
        lambda a: a.T,
        lambda a: tanh(a).astype(object),
        lambda a: exp(a).astype(object),
        sum0,
    )


@contextmanager
def one_torch_thread(torch: Any) -> Iterator[None]:
    """torch on one intra-op thread (its sums then add in one order on any machine) while the
    block runs; the thread count it had is set back afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def torch_ops(torch: Any, dtype: str = "float32") -> Ops:
    t = getattr(torch, dtype)
    return Ops(
        f"torch {dtype}",
        lambda a: torch.tensor(np.asarray(a), dtype=t),
        lambda a: a.detach().cpu().double().numpy(),
        torch.matmul,
        lambda a: a.T,
        torch.tanh,
        torch.exp,
        lambda a: a.sum(0),
    )


def tf_ops(tf: Any, dtype: str = "float32") -> Ops:
    t = getattr(tf, dtype)
    return Ops(
        f"TensorFlow {dtype}",
        lambda a: tf.constant(np.asarray(a), dtype=t),
        lambda a: np.asarray(a.numpy(), dtype=np.float64),
        tf.matmul,
        tf.transpose,
        tf.tanh,
        tf.exp,
        lambda a: tf.reduce_sum(a, axis=0),
    )


# ------------------------------------------------------------------------------------------
# data and initial weights (numpy, seeded): the same bits for every framework


def dataset(model: str, seed: int = 0) -> dict[str, np.ndarray]:
    """A generated two-class problem (float64): two interleaved noisy moons for the logistic
    regression and the MLP, noisy sign-of-trend sequences for the RNN."""
    g = np.random.Generator(np.random.PCG64(seed))
    n = N_TRAIN + N_TEST
    y = g.integers(0, 2, n).astype(np.float64)
    if model == "rnn":
        x = g.standard_normal((n, SEQ, 1))
        trend = x[:, SEQ // 2 :, 0].sum(1) - x[:, : SEQ // 2, 0].sum(1)
        y = (trend + 0.8 * g.standard_normal(n) > 0).astype(np.float64)
    else:
        t = g.uniform(0, np.pi, n)
        x = np.stack([np.cos(t) - y, np.sin(t) * (1 - 2 * y) + 0.3], axis=1)
        x = x + 0.25 * g.standard_normal(x.shape)
    return {"x": x[:N_TRAIN], "y": y[:N_TRAIN], "x_test": x[N_TRAIN:], "y_test": y[N_TRAIN:]}


def init(model: str, seed: int) -> list[np.ndarray]:
    """Initial weights (float32 values, held in float64), Glorot-uniform scaled."""
    g = np.random.Generator(np.random.PCG64(10_000 + seed))

    def glorot(i: int, o: int) -> np.ndarray:
        lim = np.sqrt(6 / (i + o))
        return g.uniform(-lim, lim, (i, o)).astype(np.float32).astype(np.float64)

    zeros = lambda k: np.zeros(k)  # noqa: E731
    if model == "logistic":
        return [glorot(FEATURES, 1), zeros(1)]
    if model == "mlp":
        return [glorot(FEATURES, HIDDEN), zeros(HIDDEN), glorot(HIDDEN, 1), zeros(1)]
    if model == "rnn":
        return [glorot(1, HIDDEN), glorot(HIDDEN, HIDDEN), zeros(HIDDEN), glorot(HIDDEN, 1),
                zeros(1)]  # fmt: skip
    raise ValueError(model)


# ------------------------------------------------------------------------------------------
# one step: loss and gradients by hand


def _outer(a: Any, b: Any) -> Any:
    return a[:, :, None] * b[:, None, :]


def _bce(ops: Ops, p: Any, y: Any, n: int) -> Any:
    """Mean binary cross-entropy, as a float (for the loss curve only)."""
    q = ops.tonumpy(p)[:, 0].clip(1e-12, 1 - 1e-12)
    yy = ops.tonumpy(y)[:, 0]
    return float(-(yy * np.log(q) + (1 - yy) * np.log(1 - q)).sum() / n)


def grads(
    model: str, ops: Ops, w: list[Any], x: Any, y: Any, mask: Any | None
) -> tuple[list[Any], float]:
    """The gradient of the mean binary cross-entropy at ``w`` on batch (x, y); ``mask`` the
    dropout mask of the last hidden layer (already scaled by 1/(1-p)), or None."""
    n = x.shape[0]
    if model == "logistic":
        w1, b1 = w
        p = ops.sigmoid(ops.mm(x, w1) + b1)
        dz = (p - y) / n
        return [ops.colsum(_outer(x, dz)), ops.colsum(dz)], _bce(ops, p, y, n)
    if model == "mlp":
        w1, b1, w2, b2 = w
        h = ops.tanh(ops.mm(x, w1) + b1)
        hd = h * mask if mask is not None else h
        p = ops.sigmoid(ops.mm(hd, w2) + b2)
        dz = (p - y) / n
        dh = ops.mm(dz, ops.T(w2))
        if mask is not None:
            dh = dh * mask
        da = dh * (1 - h * h)
        g = [ops.colsum(_outer(x, da)), ops.colsum(da), ops.colsum(_outer(hd, dz)), ops.colsum(dz)]
        return g, _bce(ops, p, y, n)
    wx, wh, b, wo, bo = w
    hs = [None]
    h = None
    for t in range(x.shape[1]):
        a = ops.mm(x[:, t, :], wx) + b
        if h is not None:
            a = a + ops.mm(h, wh)
        h = ops.tanh(a)
        hs.append(h)
    hd = h * mask if mask is not None else h
    p = ops.sigmoid(ops.mm(hd, wo) + bo)
    dz = (p - y) / n
    g_wo, g_bo = ops.colsum(_outer(hd, dz)), ops.colsum(dz)
    dh = ops.mm(dz, ops.T(wo))
    if mask is not None:
        dh = dh * mask
    g_wx = g_wh = g_b = None
    for t in range(x.shape[1], 0, -1):
        ht = hs[t]
        da = dh * (1 - ht * ht)
        parts = [ops.colsum(_outer(x[:, t - 1, :], da)), ops.colsum(da)]
        g_wx = parts[0] if g_wx is None else g_wx + parts[0]
        g_b = parts[1] if g_b is None else g_b + parts[1]
        if hs[t - 1] is not None:
            part = ops.colsum(_outer(hs[t - 1], da))
            g_wh = part if g_wh is None else g_wh + part
            dh = ops.mm(da, ops.T(wh))
    return [g_wx, g_wh, g_b, g_wo, g_bo], _bce(ops, p, y, n)


def predict(model: str, w: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """The probability of class 1 (float64 numpy), from weights held in float64."""
    ops = numpy_ops("float64")
    if model == "logistic":
        return ops.sigmoid(x @ w[0] + w[1])[:, 0]
    if model == "mlp":
        return ops.sigmoid(np.tanh(x @ w[0] + w[1]) @ w[2] + w[3])[:, 0]
    h = None
    for t in range(x.shape[1]):
        a = x[:, t, :] @ w[0] + w[2] + (h @ w[1] if h is not None else 0)
        h = np.tanh(a)
    return ops.sigmoid(h @ w[3] + w[4])[:, 0]
