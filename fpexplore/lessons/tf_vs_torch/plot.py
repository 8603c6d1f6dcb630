"""Figures: error against the truth for both frameworks, by length where a length exists."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...figures import WIDTH_IN
from ...result import Comparison
from .data import AutogradData, LstmData

#: characters per line of a row's name beside its bar
NAME_CHARS = 26


def error_vs_length(comparison: Comparison) -> Any:
    """LSTM: |h - exact| by step and the input-gradient error by distance travelled;
    autograd: relative gradient error by chain length. Both frameworks on log axes."""
    import matplotlib.pyplot as plt

    d = comparison.data
    if isinstance(d, LstmData):
        fig, (a1, a2) = plt.subplots(2, 1, figsize=(WIDTH_IN, 6.4))
        steps = np.arange(1, d.length + 1)
        for k, style in (("torch", "-"), ("keras", "--")):
            a1.semilogy(steps, np.maximum(d.h_error_by_step[k], 1e-12), style, label=k)
            e = d.grad_error_by_distance[k]
            a2.semilogy(np.arange(len(e)), np.maximum(e, 1e-12), style, label=k)
        a1.semilogy(
            steps, np.maximum(d.torch_keras_diff_by_step, 1e-12), ":", label="|torch - keras|"
        )
        a1.set_xlabel("step t")
        a1.set_ylabel("max |h_t - exact|")
        a1.legend()
        a2.set_xlabel("steps the gradient travelled back (L - t)")
        a2.set_ylabel("|d sum(h_L)/dx_t - exact| / max")
        a2.legend()
        fig.suptitle(f"LSTM, {d.length} steps, against the mpmath cell")
        fig.tight_layout()
        return fig
    if isinstance(d, AutogradData):
        fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.6))
        for k, style in (("torch", "o-"), ("tf", "s--"), ("torch wide", "x:"), ("tf wide", "+:")):
            ax.loglog(d.lengths, np.maximum(d.rel_by_length[k], 1e-12), style, label=k)
        u = 2.0**-24
        ax.loglog(d.lengths, [8 * n * u for n in d.lengths], "k-", lw=0.8, label="8·L·u")
        ax.set_xlabel("chain length L")
        ax.set_ylabel("relative error of dy_L/dx")
        ax.legend()
        fig.tight_layout()
        return fig
    return None


def figure(comparison: Comparison) -> Any:
    """The section's picture: error by length (lstm, autograd), else the largest ULP error
    of every outcome shown, against the exact value."""
    import matplotlib.pyplot as plt

    fig = error_vs_length(comparison)
    if fig is not None:
        return fig
    ran = [o for o in comparison.outcomes if o.ran and o.error is not None]
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.8 + 0.45 * max(len(ran), 1)))
    if not ran:
        why = "not run: " + (comparison.outcomes[0].unavailable or "")
        ax.text(0.5, 0.5, why, ha="center", va="center", wrap=True)
        ax.set_axis_off()
        return fig
    import textwrap

    vals = [max(o.error.max_abs_ulp, 1e-3) for o in ran]
    colors = ["tab:red" if o.backend == "torch" else "tab:orange" for o in ran]
    names = [textwrap.fill(o.implementation, NAME_CHARS) for o in ran]
    lines = sum(n.count("\n") + 1 for n in names)
    fig.set_size_inches(WIDTH_IN, 1.1 + 0.3 * max(lines, len(ran) * 1.5))
    ax.barh(names, vals, color=colors)
    ax.tick_params(axis="y", labelsize=8)
    ax.set_xscale("log")
    ax.axvline(1, color="k", lw=0.8, ls="--")
    ax.set_xlabel("max |error| (ULPs of the result's format)")
    ax.invert_yaxis()
    fig.suptitle(f"{comparison.params['op']}: torch (red), TensorFlow/Keras (orange)", fontsize=10)
    fig.tight_layout()
    return fig
