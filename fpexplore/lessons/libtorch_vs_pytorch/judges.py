"""Myths 9-11: C++ and Python run the same libtorch kernels; custom CUDA kernels against
torch's (`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, Verdicts, claim, decide, first, holds

if TYPE_CHECKING:
    from ...result import Comparison


def _same_bits_verdict(c: Comparison, op: str, same: bool, what: str) -> Verdicts:
    errs = [c.outcome(f"{op} · {side} · 1 thread").error for side in ("C++", "Python")]
    worst = ", ".join(
        f"{side} {e.max_abs_ulp:.3g} ULP"
        for side, e in zip(("C++", "Python"), errs, strict=True)
        if e is not None
    )
    return decide(
        f"{what}: {'identical' if same else 'different'} bits at 1 and 2 threads"
        + (f"; max error {worst}" if worst else ""),
        (
            same,
            FAILS,
            "C++ and Python run the same libtorch kernels: the same bits at the same thread count",
        ),
        otherwise=(HOLDS, "C++ and Python gave different bits at the same thread count"),
    )


def mm(c: Comparison) -> Verdicts:
    return _same_bits_verdict(c, "mm", claim(c, "mm_same_bits"), "mm")


def grad(c: Comparison) -> Verdicts:
    same = claim(c, "grad_same_bits")
    return _same_bits_verdict(c, "grad", same, "gradient of (x @ x.T).sum()")


def cuda_kernel(c: Comparison) -> Verdicts:
    fma = claim(c, "naive_kernel_is_fma_chain")
    atomic = holds(c, "atomic_varies", "torch_sum_repeatable")
    cu = c.data.cuda
    same = [r.n for r in cu.matmul_table if r.cublas_is_naive_fma]
    other = [r.n for r in cu.matmul_table if not r.cublas_is_naive_fma]
    each = c.outcome("CUDA sum · atomicAdd each")
    return decide(
        f"{cu.card or 'GPU'}: naive mm = cuBLAS bits at n = {same or 'none'}, not at "
        f"n = {other or 'none'}; atomicAdd sum: {each.note or first(each.value)}",
        (
            fma and atomic,
            DEPENDS,
            "on the kernel: a naive matmul is a k-order FMA chain, which cuBLAS also runs for "
            "some shapes (same bits) and not others; an atomicAdd sum differs from torch.sum "
            "and from itself run to run",
        ),
        otherwise=(HOLDS, "the custom kernels differ from torch's at every size"),
    )


def execution_order(c: Comparison) -> Verdicts:
    """Myth: kernel execution order varies between runs. Kernels issued on one CUDA stream run
    in issue order; what can vary is the order of the additions inside one kernel."""
    atomic = claim(c, "atomic_varies")
    stock = claim(c, "torch_sum_repeatable")
    cu = c.data.cuda
    each = c.outcome("CUDA sum · atomicAdd each")
    sums = c.outcome("CUDA sum · torch.sum")
    return decide(
        f"{cu.card or 'GPU'}: atomicAdd sum: {each.note or first(each.value)}; torch.sum: "
        f"{sums.note or first(sums.value)}",
        (
            atomic and stock,
            FAILS,
            "not as worded: kernels on a stream run in the order they are issued, and "
            "torch.sum's kernels gave the same bits in every run; what varies is the order in "
            "which one kernel's threads reach an atomicAdd",
        ),
        (not stock, HOLDS, "a stock kernel's bits changed from run to run"),
        otherwise=(DEPENDS, "the atomicAdd kernel gave one bit pattern in these runs"),
    )
