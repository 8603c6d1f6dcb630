"""Myths 12 and 13, judged from this lesson's run: matmul chains drift on every device; the
accelerator's convolution differs from the CPU's with TF32 off too, and TF32 (cuDNN's default)
widens the gap (`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import (
    DEPENDS,
    FAILS,
    HOLDS,
    NotMeasured,
    Rule,
    Verdicts,
    decide,
    device_key,
    holds,
    ratio,
)

if TYPE_CHECKING:
    from ...result import Comparison


def _chain_number(c: Comparison) -> str:
    drift = c.data.drift
    cpu, gpu = device_key(drift, "cpu (live"), device_key(drift, "NVIDIA")
    return (
        f"after {c.data.settings.chain_steps} matmuls: CPU drift {drift[cpu][-1]:.2g}, "
        f"CUDA {drift[gpu][-1]:.2g}"
    )


chain = Rule(
    ("chain_drifts",),
    FAILS,
    "every device drifts from the exact chain, CUDA too",
    (HOLDS, "CUDA stayed on the exact chain"),
    _chain_number,
)


def conv(c: Comparison) -> Verdicts:
    """Myth 13 from the TF32-off convolution against the CPU's (another algorithm at the same
    precision), and TF32's default against TF32 off (how far apart)."""
    apart = holds(c, "conv_fp32_differs_cpu")
    tf32 = holds(c, "conv_tf32_default", "conv_tf32_error")
    d = c.data
    err, vs = d.conv_error, d.conv_vs_cpu
    if not d.conv_cpu or d.conv_cpu not in err:
        raise NotMeasured("no CPU convolution to compare the accelerator with")
    default, off = (device_key(vs, k) for k in ("torch default", "TF32 off"))
    number = (
        f"TF32 off vs the CPU: {vs[off]} of {d.conv_samples} sampled outputs differ; "
        f"relative error CPU {err[d.conv_cpu]:.2g}, CUDA TF32 off {err[off]:.2g}, "
        f"CUDA default {err[default]:.2g} "
        f"({ratio(err[default], err[off])} TF32 off's)"
    )
    return decide(
        number,
        (
            apart and tf32,
            HOLDS,
            "the backends' algorithms differ: with TF32 off the accelerator still gives other "
            "bits than the CPU, with errors of one size; TF32 (cuDNN's default for "
            "convolutions) only sets how far apart they are",
        ),
        (
            apart,
            HOLDS,
            "the backends' algorithms differ: with TF32 off too, with errors of one size",
        ),
        (tf32, DEPENDS, "on TF32: with TF32 off the accelerator gave the CPU's bits"),
        otherwise=(FAILS, "the accelerator's convolution gave the CPU's bits"),
    )
