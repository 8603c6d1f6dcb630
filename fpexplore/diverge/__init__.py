"""Find the first layer where two implementations of the same model part.

Capture every layer's inputs and output in both (torch forward hooks, a Keras sub-model),
compute each layer's exact or certified result from *that side's own input*, and compare the
error each side adds with the a-priori rounding bound for the layer's op, format and size
(`fpexplore.tolerance`). The first layer where a side exceeds its bound is where they part,
and the report says which side is wrong; with none, they "agree within rounding".

    from fpexplore import diverge
    report = diverge.compare(diverge.capture_torch(model_a, x), diverge.capture_keras(model_b, x))
    print(report.table())

`capture_djl` and `capture_libtorch` run a torch model's TorchScript export (every layer's
inputs and output returned, `fpexplore.diverge.export`) in DJL or in the C++ LibTorch program.

`run_zoo` does it for the zoo's models (`fpexplore.diverge.zoo`), with a mistake planted on
request; `plot` draws the error per layer and points at the culprit.
"""

from __future__ import annotations

from typing import Any

from .capture import Capture, Tap, capture_keras, capture_torch
from .report import AGREE, DivergenceReport, LayerRow, Reports, Side, compare
from .runtimes import capture_djl, capture_libtorch
from .specs import LayerSpec, spec_of

__all__ = [
    "AGREE",
    "Capture",
    "DivergenceReport",
    "LayerRow",
    "LayerSpec",
    "Reports",
    "Side",
    "Tap",
    "capture_djl",
    "capture_keras",
    "capture_libtorch",
    "capture_torch",
    "compare",
    "plot",
    "run_zoo",
    "spec_of",
]

AGAINST = ("torch", "keras", "djl", "libtorch")


def run_zoo(model: str, against: str = "torch", plant: str | None = None) -> DivergenceReport:
    """Compare the zoo's torch ``model`` (the reference) with a second implementation: "torch"
    (a second build), "keras" (same weights), "djl" or "libtorch" (its TorchScript export run
    there). ``plant`` puts one mistake (`zoo.PLANTS`) into the second; the claim
    "first_divergence" then says it is found at its layer, on that side alone.
    """
    from ..errors import InvalidParameter
    from . import zoo

    model, plant = zoo.check(model, plant)
    against = zoo.name_of(against, "against", "run_zoo")
    if not isinstance(against, str) or against not in AGAINST:
        raise InvalidParameter("against", against, "one of " + ", ".join(AGAINST), "run_zoo")
    x = zoo.example_input(model)
    ref = capture_torch(zoo.torch_model(model), x)
    if against == "torch":
        other = capture_torch(zoo.torch_model(model, plant), x, name="torch variant")
    elif against == "djl":
        other = capture_djl(zoo.torch_model(model, plant), x)
    elif against == "libtorch":
        other = capture_libtorch(zoo.torch_model(model, plant), x)
    else:
        km, groups = zoo.keras_model(model, plant)
        other = capture_keras(km, x, groups=groups)
    label = f"{model}: torch vs {against}" + (f", planted: {plant}" if plant else "")
    expect = (zoo.PLANTED_LAYER[(model, plant)], other.implementation) if plant else None
    return compare(ref, other, label=label, expect=expect)


def plot(report: DivergenceReport, ax: Any = None) -> Any:
    """Error each side adds per layer (in ULPs) with the bound, the culprit marked."""
    from ..errors import InvalidParameter
    from .widget import plot as _plot

    if not isinstance(report, DivergenceReport):
        raise InvalidParameter("report", report, "a DivergenceReport (from compare)", "plot")
    return _plot(report, ax)
