"""Myths 1, 22 and 24: DJL's sum, memory layout and residual association orders
(`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, Rule, Verdicts, decide, first, holds, value

if TYPE_CHECKING:
    from ...result import Comparison


def djl_sum(c: Comparison) -> Verdicts:
    djl, torch_, loop = (
        first(value(c, n)) for n in ("DJL NDArray.sum", "torch.sum", "Java float loop")
    )
    same = holds(c, "djl_emulated", "torch_emulated") and djl == torch_  # both emulate torch
    return decide(
        f"DJL {djl:.9g}, torch {torch_:.9g}, Java loop {loop:.9g}",
        (same, FAILS, "DJL's sum is libtorch's: same reduction order, same bits"),
        otherwise=(HOLDS, "DJL and torch reduce in different orders here"),
    )


def layout(c: Comparison) -> Verdicts:
    offset, strides = holds(c, "offset_same_bits"), holds(c, "strides_change_bits")
    d = c.data.layout
    return decide(
        f"offsets: {d.offset_same} of {d.offset_tried} same; stride-2 gelu: "
        f"{d.gelu_strided_differ} of {d.gelu_strided_n} differ",
        (
            offset and strides,
            DEPENDS,
            "on strides, not on alignment: offset (misaligned) data gives the same bits, a "
            "strided view takes another loop (scalar kernels, another reduction order)",
        ),
        (not offset, HOLDS, "an offset alone changed bits"),
        otherwise=(FAILS, "neither offsets nor strides changed bits here"),
    )


residual = Rule(
    ("residual_orders_differ", "residual_orders_bounded"),
    HOLDS,
    "in the last bits: the two association orders round at different places; both stay inside "
    "the rounding bound of the exact result",
    (DEPENDS, "the orders gave the same bits, or one left the bound"),
    lambda c: (
        f"{c.data.residual.differ} of {c.data.residual.total} outputs differ; worst "
        f"{c.data.residual.worst_of_bound:.2g} of the bound"
    ),
)
