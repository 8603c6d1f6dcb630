"""The training-drift figure: distances per step on a log scale, the loss curves, and the
diversity of each source of nondeterminism."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...result import Comparison

_PANELS = ((0.05, 0.15, 0.33, 0.7), (0.44, 0.15, 0.2, 0.7), (0.75, 0.15, 0.23, 0.7))


def _positive(y: np.ndarray) -> np.ndarray:
    """``y`` with zeros as NaN (a log axis draws them as gaps: the runs were equal)."""
    y = np.asarray(y, dtype=np.float64).copy()
    y[~(y > 0)] = np.nan
    return y


def _epochs(loss: np.ndarray, per: int = 4) -> np.ndarray:
    n = len(loss) // per * per
    return loss[:n].reshape(-1, per).mean(1) if n else loss


def figure(comparison: Comparison) -> Any:
    """Distances (log scale), loss per epoch, and the diversity table's disagreement."""
    import matplotlib.pyplot as plt

    d = comparison.data
    t = d.trajectories
    fig = plt.figure(figsize=(12, 3.8))
    ax1, ax2, ax3 = (fig.add_axes(r) for r in _PANELS)
    steps = np.arange(len(t.norm))
    if t.pair is not None:
        ax1.semilogy(
            steps, _positive(t.pair), color="tab:red", lw=1.6, label=f"{t.second} vs {t.first}"
        )
        ax1.semilogy(
            steps,
            _positive(t.other_truth),
            color="tab:orange",
            lw=0.8,
            label=f"{t.second} vs reference",
        )
    else:
        ax1.text(0.5, 0.5, f"{t.second}: not run here", transform=ax1.transAxes, ha="center")
    ax1.semilogy(
        steps, _positive(t.base_truth), color="tab:blue", lw=0.8, label=f"{t.first} vs reference"
    )
    ax1.semilogy(
        np.arange(len(t.f64_truth)), _positive(t.f64_truth), "k.", ms=3, label="float64 vs mpmath"
    )
    ax1.semilogy(steps, 0.01 * t.norm, color="grey", ls=":", lw=0.8, label="1% of the norm")
    if t.horizon is not None and t.horizon < steps[-1]:
        ax1.axvspan(t.horizon, steps[-1], color="grey", alpha=0.15, lw=0)
        ax1.text(t.horizon, ax1.get_ylim()[0], " no reference", fontsize=7, va="bottom")
    ax1.set_xlabel("step")
    ax1.set_ylabel("weight distance")
    ax1.legend(fontsize=6.5, loc="lower right")
    ax2.plot(_epochs(t.loss_base), color="tab:blue", label=t.first)
    if t.loss_other is not None:
        ax2.plot(_epochs(t.loss_other), color="tab:red", ls="--", label=t.second)
    ax2.plot(_epochs(t.loss_f64), color="k", lw=0.6, label="float64")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("training loss")
    ax2.legend(fontsize=6.5)
    names = list(d.table)
    means = [np.mean([r["disagreement"] for r in d.table[s]]) for s in names]
    lows = [min(r["disagreement"] for r in d.table[s]) for s in names]
    highs = [max(r["disagreement"] for r in d.table[s]) for s in names]
    y = np.arange(len(names))
    err = np.array([np.subtract(means, lows), np.subtract(highs, means)])
    colours = ["tab:purple" if s == "all together" else "tab:green" for s in names]
    ax3.barh(y, means, xerr=err, color=colours, alpha=0.8)
    ax3.set_yticks(y, names, fontsize=7)
    ax3.invert_yaxis()
    ax3.set_xlabel("test disagreement between models")
    p = comparison.params
    fig.suptitle(f"{p['model']}, lr {p['lr']:g}, {p['steps']} steps: {p['perturbation']}")
    return fig
