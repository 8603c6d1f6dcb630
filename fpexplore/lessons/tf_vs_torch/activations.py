"""GELU: torch's exact (erf) form, its tanh approximation, and Keras's two defaults."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ... import formats
from ...result import Claim
from ...truth import reference
from .claims import GELU
from .data import GeluData
from .frameworks import (
    Frameworks,
    Section,
    abs_error,
    from_tf,
    from_torch,
    on_grid,
    same_bits,
    shown,
    to_tf,
    to_torch,
)


def _default(fn: Any, name: str) -> Any:
    return inspect.signature(fn).parameters[name].default


def _claims(
    keras: Any, got: dict[str, np.ndarray], erf_truth: Any, tanh_truth: Any, u: float
) -> dict[str, Claim]:
    """Keras's defaults, gelu(1) in every row, and the rows' errors against both formulas,
    bounded relative to the largest |GELU| (``u``: the dtype's unit roundoff)."""
    scale = float(np.abs(erf_truth.split()[0]).max())
    gap = float(np.abs(tanh_truth.split()[0] - erf_truth.split()[0]).max())

    def err(k: str, truth: Any) -> float:
        return float(abs_error(got[k], truth).max())

    bound = 8 * u * scale
    act_default = _default(keras.activations.gelu, "approximate")
    ops_default = _default(keras.ops.gelu, "approximate")
    one = {k: float(v[-1]) for k, v in got.items()}
    return {
        "keras_defaults": GELU["keras_defaults"].claim(
            bool(act_default is False and ops_default is True),
            act_default=act_default,
            ops_default=ops_default,
        ),
        "gelu_one": GELU["gelu_one"].claim(
            bool(abs(one["keras.ops"] - one["torch erf"]) > 10 * u),
            torch_one=one["torch erf"],
            activations_one=one["keras.activations"],
            ops_one=one["keras.ops"],
            erf_form=float(erf_truth.split()[0][-1]),
            tanh_form=float(tanh_truth.split()[0][-1]),
        ),
        "tanh_is_a_formula_gap": GELU["tanh_is_a_formula_gap"].claim(
            bool(
                gap > 10 * bound
                and err("keras.ops", tanh_truth) <= bound
                and err("torch tanh", tanh_truth) <= bound
            ),
            gap=gap,
            bound=bound,
            ops_erf=err("keras.ops", erf_truth),
            ops_tanh=err("keras.ops", tanh_truth),
            torch_tanh=err("torch tanh", tanh_truth),
        ),
        "fix_agrees": GELU["fix_agrees"].claim(
            bool(
                err("keras.ops exact", erf_truth) <= bound
                and err("torch erf", erf_truth) <= bound
                and err("keras.activations", erf_truth) <= bound
            ),
            bound=bound,
            torch_erf=err("torch erf", erf_truth),
            activations_erf=err("keras.activations", erf_truth),
            bits="it equals keras.activations.gelu bit for bit"
            if same_bits(got["keras.ops exact"], got["keras.activations"])
            else "its bits differ from keras.activations.gelu's",
        ),
    }


def run_gelu(fw: Frameworks, dtype: str, size: int, agree: bool, **_: Any) -> Section:
    """GELU on ``size`` points in ``dtype``: ``size - 1`` evenly spaced on [-6, 6], then x = 1.
    Each row's errors are in ULPs of the largest |GELU|, the measure of the claims (where the
    exact GELU is tiny, x << 0, one ULP of it says nothing about the layer)."""
    keras, torch = fw.keras, fw.torch
    x = on_grid(np.append(np.linspace(-6.0, 6.0, size - 1), 1.0), dtype)
    erf_truth = reference.gelu(x, "none")
    tanh_truth = reference.gelu(x, "tanh")
    tx, fx = to_torch(fw, x), to_tf(fw, x)
    gelu = torch.nn.functional.gelu
    got = {
        "torch erf": from_torch(gelu(tx)),
        "torch tanh": from_torch(gelu(tx, approximate="tanh")),
        "keras.activations": from_tf(keras.activations.gelu(fx)),
        "keras.ops": from_tf(keras.ops.gelu(fx)),
        "keras.ops exact": from_tf(keras.ops.gelu(fx, approximate=False)),
    }
    tanh = "against the tanh formula"
    names = {
        "torch erf": ("torch", "torch F.gelu(x)", erf_truth, ""),
        "torch tanh": ("torch", "torch F.gelu(x, approximate='tanh')", tanh_truth, tanh),
        "keras.activations": ("keras", "keras.activations.gelu(x)", erf_truth, ""),
        "keras.ops": ("keras", "keras.ops.gelu(x)", erf_truth, ""),
        "keras.ops exact": ("keras", "keras.ops.gelu(x, approximate=False)", erf_truth, ""),
    }
    outcomes = {
        k: fw.measured(lib, n, got[k], t, note=note, at="largest")
        for k, (lib, n, t, note) in names.items()
    }
    u = 2.0 ** -(formats.get(dtype).mbits + 1)  # unit roundoff
    claims = _claims(keras, got, erf_truth, tanh_truth, u)
    data = GeluData({k: float(o.error.max_abs_ulp) for k, o in outcomes.items()})
    rows = shown(
        outcomes,
        agree,
        ["torch erf", "keras.ops exact", "keras.activations"],
        ["torch erf", "keras.ops", "torch tanh"],
    )
    return Section(rows, claims, erf_truth, data)
