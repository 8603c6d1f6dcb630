"""Myths 12 and 13, judged from this lesson's run: matmul chains drift on every device; cuDNN
convolutions use TF32 by default (`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, Rule, device_key, ratio

if TYPE_CHECKING:
    from ...result import Comparison


def _chain_number(c: Comparison) -> str:
    drift = c.data.drift
    cpu, gpu = device_key(drift, "cpu (live"), device_key(drift, "NVIDIA")
    return (
        f"after {c.data.settings['chain_steps']} matmuls: CPU drift {drift[cpu][-1]:.2g}, "
        f"CUDA {drift[gpu][-1]:.2g}"
    )


def _conv_number(c: Comparison) -> str:
    err = c.data.conv_error
    default, off = (err[device_key(err, k)] for k in ("torch default", "TF32 off"))
    return f"conv error: CUDA default {default:.2g}, TF32 off {off:.2g} ({ratio(default, off)})"


chain = Rule(
    ("chain_drifts",),
    FAILS,
    "every device drifts from the exact chain, CUDA too",
    (HOLDS, "CUDA stayed on the exact chain"),
    _chain_number,
)


conv = Rule(
    ("conv_tf32_default", "conv_tf32_error"),
    DEPENDS,
    "on TF32: cuDNN convolutions use it by default; with TF32 off the accelerator is as "
    "accurate as the CPU",
    (HOLDS, "the convolutions differ with TF32 off too"),
    _conv_number,
)
