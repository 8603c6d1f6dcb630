"""Two training runs that are "the same computation", step by step, against a reference
trajectory: mpmath for the first steps (certified by a second, more precise run), float64
beyond them (its own error against mpmath measured over those steps)."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from ... import backends
from .. import _base
from . import models, store
from .train import Run, distance, flip_ulp, train

#: what makes the second run differ from the first (numpy float32, one pass per reduction)
PERTURBATIONS = ("one-ulp", "summation-order", "float64", "torch", "tensorflow")
#: mpmath steps per model (each costs a Python loop over mpmath numbers) and precisions (bits)
REFERENCE_STEPS = {"logistic": 40, "mlp": 16, "rnn": 4}
PRECISIONS = (96, 128)
CHECKPOINTS = 40  # steps at which test predictions are compared (log-spaced)


def other_ops(perturbation: str) -> models.Ops:
    """The array namespace of the second run."""
    if perturbation == "summation-order":
        return models.numpy_ops("float32", chunks=2)
    if perturbation == "float64":
        return models.numpy_ops("float64")
    if perturbation == "torch":
        return models.torch_ops(backends.load("torch"))
    if perturbation == "tensorflow":
        return models.tf_ops(backends.load("tensorflow"))
    return models.numpy_ops("float32")


def _threads(perturbation: str) -> contextlib.AbstractContextManager[None]:
    """torch's run on one thread (`models.one_torch_thread`); nothing for the others."""
    if perturbation != "torch":
        return contextlib.nullcontext()
    return models.one_torch_thread(backends.load("torch"))


def needs(perturbation: str) -> str | None:
    """The backend the second run needs, if any."""
    return perturbation if perturbation in ("torch", "tensorflow") else None


def unavailable(perturbation: str) -> str | None:
    """Why the second run cannot run here (with the fix), or None."""
    part = needs(perturbation)
    return _base.missing_part((part,)) if part else None


def reference_key(model: str, seed: int, lr: float, steps: int) -> tuple[Any, ...]:
    """The cache key of the mpmath trajectory (``steps``: the reference steps)."""
    return (model, seed, repr(float(lr)), steps)


def trajectory_key(model: str, perturbation: str, lr: float, steps: int, seed: int) -> tuple:
    """The cache key of `trajectories` at these parameters."""
    return (model, perturbation, repr(float(lr)), steps, seed)


def reference(model: str, seed: int, lr: float, steps: int) -> dict[str, Any]:
    """The mpmath trajectory over ``steps`` steps: weights as float64 pairs (hi + lo) at the
    higher precision, and how far the lower precision run is from it (the certification)."""

    def compute() -> dict[str, Any]:
        import mpmath

        data, w0 = models.dataset(model, seed), models.init(model, seed)
        k = steps
        runs = []
        for prec in PRECISIONS:
            with mpmath.workprec(prec):
                runs.append(_mp_weights(model, w0, data, lr, k))
        (lo_hi, lo_lo), (hi, lo) = runs
        gap = np.linalg.norm((lo_hi - hi) + (lo_lo - lo), axis=1)
        return {"hi": hi.tolist(), "lo": lo.tolist(), "certified_gap": float(gap.max())}

    return store.cached("reference", reference_key(model, seed, lr, steps), compute)


def _mp_weights(
    model: str, w0: list[np.ndarray], data: dict[str, np.ndarray], lr: float, steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """An mpmath run's weights per step (at the caller's precision) as float64 hi + lo."""
    import mpmath

    run = train(model, models.mp_ops(), w0, data, lr, steps, label="mpmath")
    exact = np.stack(run.exact or [])
    hi = exact.astype(np.float64)
    lo = np.frompyfunc(lambda v, h: float(v - mpmath.mpf(h)), 2, 1)(exact, hi)
    return hi, lo.astype(np.float64)


def _checkpoints(steps: int) -> np.ndarray:
    return np.unique(np.round(np.geomspace(1, steps, CHECKPOINTS)).astype(int))


def trajectories(model: str, perturbation: str, lr: float, steps: int, seed: int) -> dict:
    """Both runs and the reference, reduced to what the lesson shows: per step, the distance
    between the runs, each run's distance from the reference, the losses and the weights'
    norm; at checkpoints, how many test predictions differ."""

    def compute() -> dict[str, Any]:
        data, w0 = models.dataset(model, seed), models.init(model, seed)
        with np.errstate(over="ignore"):
            base = train(model, models.numpy_ops("float32"), w0, data, lr, steps)
            ref = train(model, models.numpy_ops("float64"), w0, data, lr, steps)
            start = flip_ulp(w0) if perturbation == "one-ulp" else w0
            ops = other_ops(perturbation)
            name = "numpy float32, 1 ULP up in w[0]" if perturbation == "one-ulp" else ops.name
            with _threads(perturbation):
                other = train(model, ops, start, data, lr, steps, label=name)
        mp = reference(model, seed, lr, min(REFERENCE_STEPS[model], steps))
        hi, lo = np.asarray(mp["hi"]), np.asarray(mp["lo"])
        k = len(hi) - 1

        def from_truth(run: Run) -> np.ndarray:
            d = distance(run, ref)
            d[: k + 1] = np.linalg.norm((run.weights[: k + 1] - hi) - lo, axis=1)
            return d

        at = _checkpoints(steps)
        like = models.init(model, seed)
        flips, gaps = [], []
        for s in at:
            pa = models.predict(model, base.params_at(int(s), like), data["x_test"])
            pb = models.predict(model, other.params_at(int(s), like), data["x_test"])
            flips.append(float(((pa > 0.5) != (pb > 0.5)).mean()))
            gaps.append(float(np.nanmax(np.abs(pa - pb))))
        final = models.predict(model, base.params_at(steps, like), data["x_test"])
        return {
            "pair": distance(base, other).tolist(),
            "base_truth": from_truth(base).tolist(),
            "other_truth": from_truth(other).tolist(),
            "f64_truth": np.linalg.norm((ref.weights[: k + 1] - hi) - lo, axis=1).tolist(),
            "certified_gap": mp["certified_gap"],
            "reference_steps": k,
            "norm": np.linalg.norm(ref.weights, axis=1).tolist(),
            "loss": {
                "base": base.loss.tolist(),
                "other": other.loss.tolist(),
                "float64": ref.loss.tolist(),
            },
            "checkpoints": at.tolist(),
            "flips": flips,
            "prob_gap": gaps,
            "accuracy": float(((final > 0.5) == data["y_test"]).mean()),
            "other": other.label,
            "final": {
                "base": base.weights[-1].tolist(),
                "other": other.weights[-1].tolist(),
                "float64": ref.weights[-1].tolist(),
            },
        }

    key = trajectory_key(model, perturbation, lr, steps, seed)
    return store.cached("trajectory", key, compute)
