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
    aten, strides = holds(c, "aten_offset_same_bits"), holds(c, "strides_change_bits")
    d = c.data.layout
    moved = sum(d.blas_differ.values())
    blas = ", ".join(f"{op} {k} of {d.blas_tried}" for op, k in d.blas_differ.items())
    return decide(
        f"ATen offsets: {d.offset_same} of {d.offset_tried} same; BLAS at an offset "
        f"({d.blas}): {blas} differ; stride-2 gelu: {d.gelu_strided_differ} of "
        f"{d.gelu_strided_n} differ",
        (
            aten and strides and moved > 0,
            HOLDS,
            "strides change bits everywhere, and alignment does where the BLAS depends on it: "
            "here torch's dot/mv (MKL) gave other bits at another offset; ATen's own loops did "
            "not, and MKL_CBWR=AUTO,STRICT removes it",
        ),
        (
            aten and strides,
            DEPENDS,
            "on strides everywhere; on alignment only where the BLAS depends on it (MKL's "
            "dot/mv on some CPUs, an AMD EPYC among the shipped machines, not this one): "
            "ATen's own loops never",
        ),
        (not aten, HOLDS, "an offset alone changed ATen's own bits"),
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
