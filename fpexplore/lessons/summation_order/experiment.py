"""The summation lesson's GPU experiment: sums recorded on a device.

Layout (read by the lesson, keep it stable):
``sum = {"cases": [{"name", "input": recipe, "cuda_bits", "cpu_bits", "exact"}]}`` where the
recipe regenerates the input (`regenerate`).
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from ... import truth
from ...backends.torch_device import torch_module
from ...errors import InvalidParameter
from ...records import bits32


def sum_recipes(quick: bool = False) -> list[dict[str, Any]]:
    big = 10**4 if quick else 10**7
    return [
        {
            "name": "10000 x float32(0.0001)",
            "input": {"generator": "np.full", "n": 10000, "value": 1e-4, "dtype": "float32"},
        },
        {
            "name": "1000 x uniform[0,1) float32, seed 0",
            "input": {
                "generator": "np.random.default_rng",
                "seed": 0,
                "distribution": "random",
                "n": 1000,
                "dtype": "float32",
            },
        },
        {
            "name": "100000 x uniform[0,1) float32, seed 0",
            "input": {
                "generator": "np.random.default_rng",
                "seed": 0,
                "distribution": "random",
                "n": 10**5,
                "dtype": "float32",
            },
        },
        {
            "name": f"{big} x uniform[0,1) float32, seed 0",
            "input": {
                "generator": "np.random.default_rng",
                "seed": 0,
                "distribution": "random",
                "n": big,
                "dtype": "float32",
            },
        },
        {
            "name": f"{10**6 if not quick else 10**3} x normal float32, seed 1",
            "input": {
                "generator": "np.random.default_rng",
                "seed": 1,
                "distribution": "standard_normal",
                "n": 10**6 if not quick else 10**3,
                "dtype": "float32",
            },
        },
    ]


def regenerate(recipe: dict[str, Any]) -> np.ndarray:
    """The input array a sum recipe describes, bit for bit.

    ``np.full``: ``np.full(n, np.float32(value))``; ``np.random.default_rng``:
    ``np.random.default_rng(seed).<distribution>(n, dtype=dtype)``.
    """
    dtype = np.dtype(recipe["dtype"])
    if recipe["generator"] == "np.full":
        return np.full(recipe["n"], dtype.type(recipe["value"]), dtype=dtype)
    if recipe["generator"] == "np.random.default_rng":
        gen = np.random.default_rng(recipe["seed"])
        return getattr(gen, recipe["distribution"])(recipe["n"], dtype=dtype)
    raise InvalidParameter(
        "generator", recipe["generator"], "'np.full' or 'np.random.default_rng'", "rng_sum"
    )


def run_sums(dev: Any, quick: bool = False) -> dict[str, Any]:
    torch = torch_module()
    cases = []
    for case in sum_recipes(quick):
        x = regenerate(case["input"])
        text = mpmath.nstr(truth.sum(x).mp(digits=30), 25)
        t = torch.from_numpy(x)
        cases.append(
            {
                **case,
                "cuda_bits": bits32(t.to(dev).sum().cpu().numpy())[0],
                "cpu_bits": bits32(t.sum().numpy())[0],
                "exact": text,
            }
        )
    return {"device": str(dev), "op": "torch.sum(x) on the device, float32", "cases": cases}
