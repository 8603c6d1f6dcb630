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
    big, normal = (10**4, 10**3) if quick else (10**7, 10**6)
    full = {"generator": "np.full", "n": 10000, "value": 1e-4, "dtype": "float32"}
    cases = [{"name": "10000 x float32(0.0001)", "input": full}]
    label = {"random": "uniform[0,1)", "standard_normal": "normal"}
    for n, seed, distribution in (
        (1000, 0, "random"),
        (10**5, 0, "random"),
        (big, 0, "random"),
        (normal, 1, "standard_normal"),
    ):
        recipe = {
            "generator": "np.random.default_rng",
            "seed": seed,
            "distribution": distribution,
            "n": n,
            "dtype": "float32",
        }
        name = f"{n} x {label[distribution]} float32, seed {seed}"
        cases.append({"name": name, "input": recipe})
    return cases


def regenerate(recipe: dict[str, Any]) -> np.ndarray:
    """The input array a sum recipe describes, bit for bit."""
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
