"""The weight-initialization part of the RNG lesson: torch Linear vs Keras Dense, same seed."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ... import backends
from ...result import Claim, Outcome
from ...result.spec import declare_texts
from ...truth import Truth, matmul

IN, OUT, BATCH = 8, 4, 3
#: Keras's rows, with what each runs on
_KERAS_ROWS = {
    "Keras Dense, own init": "glorot_uniform kernel, zero bias, same seed",
    "Keras Dense, torch weights": "kernel = W.T, bias = b copied from torch",
}

#: The weight claims, as stated before measuring.
TORCH_CLAIMS = declare_texts(
    {
        "torch_init_reproduced": "nn.Linear's weights and bias are the MT19937 stream through "
        "torch's uniform_ (reproduced bit for bit)",
        "torch_init_bound": "torch Linear draws from U(-1/sqrt(in), 1/sqrt(in))",
    },
    ("torch",),
    {"torch_init_reproduced": ("torch", "cpu path")},  # the CPU path torch takes, rebuilt
    test="tests/test_rng_seeds.py",
)
KERAS_CLAIMS = declare_texts(
    {
        "weights_differ": "the same seed gives different weights in torch and Keras",
        "keras_init_glorot": (
            "Keras Dense draws its kernel from glorot_uniform and starts its bias at zero",
            ": |w| <= sqrt(6/(in+out)) = {glorot:.4f}",
        ),
        "own_init_outputs_disagree": (
            "with their own initial weights the two layers disagree",
            " ({ulp:.3g} ULP from torch's layer)",
        ),
        "transfer_agrees": (
            "with torch's weights copied in, Keras and torch both stay inside "
            "the float32 error bound of the layer",
            " (measured: torch {torch:.3g}, Keras {keras:.3g} "
            "ULP of the exact output; bound {low:.3g} to {high:.3g} ULP per element) and differ "
            "from each other by at most {between:.3g} ULP",
        ),
    },
    ("torch", "tensorflow"),
    test="tests/test_rng_seeds.py",
)


def weight_init_outcomes(
    seed: int, tensorflow: bool
) -> tuple[list[Outcome], dict[str, Claim], Truth | None]:
    """torch Linear(IN, OUT) and Keras Dense(OUT) seeded alike; outputs against the exact truth.
    Without torch: Unavailable rows and every weight claim not checked (truth None)."""
    from ...rng.torch_cpu import linear_init
    from .stacks import emulated_path

    why = backends.missing("torch")
    if why is not None:
        rows = [Outcome.missing("torch Linear", "torch", why)]
        if tensorflow:
            rows += [Outcome.missing(n, "tensorflow", why) for n in _KERAS_ROWS]
        return rows, {}, None  # not checked: `Lesson.run` settles them, naming torch
    torch = backends.load("torch")

    x = np.random.Generator(np.random.PCG64(seed)).standard_normal((BATCH, IN)).astype(np.float32)
    torch.manual_seed(seed)
    lin = torch.nn.Linear(IN, OUT)
    w, b = (p.detach().numpy().copy() for p in (lin.weight, lin.bias))
    with torch.no_grad():
        y_torch = lin(torch.from_numpy(x)).numpy()
    # float32 inputs: the products and sums are dyadic rationals, held exactly
    prod = matmul(x, np.ascontiguousarray(w.T)).exact
    bias = np.array([Fraction(float(v)) for v in b], dtype=object)
    truth = Truth("x @ W.T + b (torch's weights), exact", exact=prod + bias)
    path, said = emulated_path()
    w_emu, b_emu = linear_init(seed, IN, OUT, path or "avx2")  # type: ignore[arg-type]

    note, v = "nn.Linear(8, 4) after torch.manual_seed(seed)", torch.__version__
    torch_out = Outcome.measured("torch Linear", "torch", y_torch, truth, version=v, note=note)
    outcomes = [torch_out]
    claims = {
        "torch_init_reproduced": TORCH_CLAIMS["torch_init_reproduced"].claim(
            bool((w_emu == w).all() and (b_emu == b).all()), f" ({said})"
        ),
        "torch_init_bound": TORCH_CLAIMS["torch_init_bound"].claim(
            bool(np.abs(w).max() <= 1 / math.sqrt(IN) and np.abs(b).max() <= 1 / math.sqrt(IN)),
            f" = ±{1 / math.sqrt(IN):.4f}",
        ),
    }
    if not tensorflow:
        return outcomes, claims, truth

    why = backends.missing("tensorflow")
    if why is not None:
        outcomes += [Outcome.missing(n, "tensorflow", why) for n in _KERAS_ROWS]
        return outcomes, claims, truth  # not checked: `Lesson.run` names TensorFlow
    keras_outs, keras_init = _keras_dense(seed, x, w, b, truth)
    outcomes += keras_outs
    claims.update(_keras_claims(x, (w, b), keras_init, (torch_out, *keras_outs)))
    return outcomes, claims, truth


def _keras_dense(
    seed: int, x: np.ndarray, w: np.ndarray, b: np.ndarray, truth: Truth
) -> tuple[list[Outcome], tuple[np.ndarray, np.ndarray]]:
    """Keras Dense(OUT) seeded with ``seed``, on its own weights and on torch's (``w``, ``b``):
    both outcomes, and its own initial kernel and bias."""
    keras = backends.load("keras")  # TensorFlow, which it runs on, loaded first

    keras.utils.set_random_seed(seed)
    dense = keras.layers.Dense(OUT)
    dense.build((None, IN))
    kw, kb = (np.asarray(v) for v in dense.get_weights())
    y_keras_own = np.asarray(dense(x))
    dense.set_weights([w.T.copy(), b.copy()])
    y_keras = np.asarray(dense(x))
    outs = [
        Outcome.measured(name, "tensorflow", y, truth, version=keras.__version__, note=note)
        for (name, note), y in zip(_KERAS_ROWS.items(), (y_keras_own, y_keras), strict=True)
    ]
    return outs, (kw, kb)


def _keras_claims(x: np.ndarray, torch_init: Any, keras_init: Any, outs: Any) -> dict[str, Claim]:
    """`KERAS_CLAIMS` from each layer's initial (weight, bias) and the outputs ``outs``:
    torch's, Keras's on its own weights, Keras's on torch's."""
    (w, b), (kw, kb), (torch_out, own_out, keras_out) = torch_init, keras_init, outs
    glorot = math.sqrt(6 / (IN + OUT))
    e_t, e_k = torch_out.error.ulp, keras_out.error.ulp
    err_t, err_k = np.abs(e_t).max(), np.abs(e_k).max()
    # classic forward bound for a length-IN dot product plus bias: gamma_(IN+1) * sum |terms|
    u = 2.0**-24
    gamma = (IN + 1) * u / (1 - (IN + 1) * u)
    size = np.abs(x).astype(np.float64) @ np.abs(w.T).astype(np.float64) + np.abs(b)
    ulp = torch_out.error.unit  # the exact output's ULP: the errors' unit
    bound = gamma * size / ulp
    between = np.abs(keras_out.value.astype(np.float64) - torch_out.value) / ulp
    err_own = own_out.error.max_abs_ulp
    return {
        "weights_differ": KERAS_CLAIMS["weights_differ"].claim(bool((w != kw.T).any())),
        "keras_init_glorot": KERAS_CLAIMS["keras_init_glorot"].claim(
            bool(np.abs(kw).max() <= glorot and not kb.any()), glorot=glorot
        ),
        "own_init_outputs_disagree": KERAS_CLAIMS["own_init_outputs_disagree"].claim(
            bool(err_own > 1e3), ulp=err_own
        ),
        "transfer_agrees": KERAS_CLAIMS["transfer_agrees"].claim(
            bool((np.abs(e_t) <= bound).all() and (np.abs(e_k) <= bound).all()),
            torch=err_t,
            keras=err_k,
            low=bound.min(),
            high=bound.max(),
            between=between.max(),
        ),
    }
