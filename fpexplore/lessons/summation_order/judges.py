"""Myths 1, 22 and 24: DJL's sum, memory layout and residual association orders
(`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, Rule, Verdicts, decide, first, holds, value

if TYPE_CHECKING:
    from ...result import Comparison
    from .layout import Layout


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


def _alignment_number(d: Layout, strict: str) -> str:
    """Where alignment was measured: this CPU's BLAS, the machine records, CUDA's record."""
    here = ", ".join(f"{op} {k}" for op, k in d.blas_differ.items())
    parts = [f"BLAS at an offset here ({d.blas}): {here} of {d.blas_tried} differ"]
    if d.strict_differ is not None:
        parts.append(f"under MKL_CBWR=AUTO,STRICT: {d.strict_differ} differ ({strict})")
    if d.fleet:
        parts.append(
            "machine records (BLAS offset cases that differ, strict mode): "
            + ", ".join(
                f"{name} {'?' if k is None else k}, strict {state}"
                for name, (k, state) in d.fleet.items()
            )
        )
    if d.cuda_differ:
        cuda = ", ".join(f"{op} {k}" for op, k in d.cuda_differ.items())
        parts.append(f"CUDA at an offset ({d.cuda_card}): {cuda} of {d.cuda_tried} differ")
    else:
        parts.append(f"CUDA: not checked, {d.cuda_card or 'no record'}")
    return "; ".join(parts)


def layout(c: Comparison) -> Verdicts:
    """Myth 22: strides, and alignment on this CPU's BLAS, the shipped machine records and the
    CUDA record; MKL's strict CBWR mode as the CPU's fix."""
    aten, strides = holds(c, "aten_offset_same_bits"), holds(c, "strides_change_bits")
    d = c.data.layout
    found = c.claims.get("cbwr_strict_offset_same_bits")
    strict = "not checked" if found is None else found.state
    moved_here = sum(d.blas_differ.values()) > 0
    moved_records = [name for name, (k, _s) in d.fleet.items() if k]
    moved_cuda = sum(d.cuda_differ.values()) > 0
    where = (
        (["this CPU's MKL dot/mv/mm"] if moved_here else [])
        + ([f"MKL on {', '.join(moved_records)} (recorded)"] if moved_records else [])
        + ([f"CUDA ({d.cuda_card})"] if moved_cuda else [])
    )
    fixed = [name for name, (_k, state) in d.fleet.items() if state == "holds"]
    fix = (
        "MKL_CBWR=AUTO,STRICT removes it from the CPU's BLAS ("
        + ("held here" if strict == "holds" else f"here: {strict}")
        + (f"; held on {', '.join(fixed)}" if fixed else "")
        + ")"
    )
    cuda_note = "" if d.cuda_differ else "; CUDA not checked until recorded"
    return decide(
        f"ATen offsets: {d.offset_same} of {d.offset_tried} same; "
        + _alignment_number(d, strict)
        + f"; stride-2 gelu: {d.gelu_strided_differ} of {d.gelu_strided_n} differ",
        (not aten, HOLDS, "an offset alone changed ATen's own bits"),
        (
            strides and bool(where),
            HOLDS,
            "strides change bits everywhere (another loop or reduction order), and alignment "
            f"does where a kernel depends on it: {'; '.join(where)}; ATen's own CPU loops "
            f"never; {fix}{cuda_note}",
        ),
        (
            strides,
            DEPENDS,
            "on strides everywhere; alignment changed nothing on any CPU or GPU measured "
            f"(ATen's loops, the BLAS here and in the records){cuda_note}",
        ),
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
