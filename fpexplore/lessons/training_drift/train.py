"""Training runs: fixed-order minibatch SGD from given initial weights, the weights kept at
every step (float64 copies), the loss at every step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .models import BATCH, N_TRAIN, Ops, grads


@dataclass(frozen=True)
class Run:
    """One training run: the weights after each step (row 0: the initial weights), flattened
    and held in float64, and the loss of each step's batch."""

    label: str
    weights: np.ndarray  # (steps + 1, parameters)
    loss: np.ndarray  # (steps,)
    exact: list[np.ndarray] | None = None  # the mpmath numbers themselves (an mpmath run)

    def params_at(self, step: int, like: list[np.ndarray]) -> list[np.ndarray]:
        """The weights after ``step`` steps, in the shapes of ``like``."""
        return unflatten(self.weights[step], like)


def unflatten(flat: np.ndarray, like: list[np.ndarray]) -> list[np.ndarray]:
    """``flat`` (weights flattened one after another) cut into the shapes of ``like``."""
    out, at = [], 0
    for a in like:
        out.append(flat[at : at + a.size].reshape(a.shape))
        at += a.size
    return out


def batches(shuffle_seed: int, steps: int) -> list[np.ndarray]:
    """The sample indices of each step: a fresh permutation of the training set per epoch
    (seeded), cut into batches of `BATCH`."""
    g = np.random.Generator(np.random.PCG64(20_000 + shuffle_seed))
    per_epoch = N_TRAIN // BATCH
    out: list[np.ndarray] = []
    while len(out) < steps:
        perm = g.permutation(N_TRAIN)
        out += [perm[i * BATCH : (i + 1) * BATCH] for i in range(per_epoch)]
    return out[:steps]


def masks(dropout: float, dropout_seed: int, steps: int, hidden: int) -> list[np.ndarray | None]:
    """The dropout mask of each step (kept units scaled by 1/(1-p), float32 values), or None."""
    if dropout <= 0:
        return [None] * steps
    g = np.random.Generator(np.random.PCG64(30_000 + dropout_seed))
    scale = np.float32(1) / np.float32(1 - dropout)
    return [
        ((g.random((BATCH, hidden)) >= dropout) * scale).astype(np.float32).astype(np.float64)
        for _ in range(steps)
    ]


def train(
    model: str,
    ops: Ops,
    w0: list[np.ndarray],
    data: dict[str, np.ndarray],
    lr: float,
    steps: int,
    *,
    shuffle_seed: int = 0,
    dropout: float = 0.0,
    dropout_seed: int = 0,
    label: str = "",
) -> Run:
    """Train ``model`` from ``w0`` with ``ops``: ``steps`` SGD steps of rate ``lr``."""
    w = [ops.asarray(a) for a in w0]
    order = batches(shuffle_seed, steps)
    hidden = 0 if model == "logistic" else w0[-2].shape[0]
    drops = masks(dropout if hidden else 0.0, dropout_seed, steps, hidden)
    rows = [np.concatenate([np.ravel(a) for a in w0]).astype(np.float64)]
    exact = [np.concatenate([np.ravel(a) for a in w])] if ops.name == "mpmath" else None
    losses = []
    for idx, mask in zip(order, drops, strict=True):
        xb, yb = ops.asarray(data["x"][idx]), ops.asarray(data["y"][idx][:, None])
        g, loss = grads(model, ops, w, xb, yb, None if mask is None else ops.asarray(mask))
        w = [a - lr * b for a, b in zip(w, g, strict=True)]
        rows.append(np.concatenate([np.ravel(ops.tonumpy(a)) for a in w]))
        if exact is not None:
            exact.append(np.concatenate([np.ravel(a) for a in w]))
        losses.append(loss)
    return Run(label or ops.name, np.stack(rows), np.asarray(losses), exact)


def flip_ulp(w0: list[np.ndarray], which: int = 0, dtype: str = "float32") -> list[np.ndarray]:
    """``w0`` with one weight (the ``which``-th, flattened) moved up by one ULP of ``dtype``
    (a change in its last bit)."""
    out = [a.copy() for a in w0]
    flat = np.concatenate([a.ravel() for a in out])
    which = which % flat.size
    at = 0
    for a in out:
        if which < at + a.size:
            v = a.reshape(-1)
            t = np.dtype(dtype).type
            v[which - at] = float(np.nextafter(t(v[which - at]), t(np.inf)))
            break
        at += a.size
    return out


def distance(a: Run, b: Run) -> np.ndarray:
    """The Euclidean distance between two runs' weights at each step."""
    return np.linalg.norm(a.weights - b.weights, axis=1)
