"""Myth 35: small differences compound over training, especially in recurrent networks
(`fpexplore.judging` has the shape of a judge)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...judging import DEPENDS, FAILS, HOLDS, NotMeasured, Verdicts, claim, decide

if TYPE_CHECKING:
    from ...result import Comparison


def compound(c: Comparison) -> Verdicts:
    """Does a last-bit difference grow over training? Read on the convex model and the RNN."""
    grows = claim(c, "rnn_grows_exponentially")
    stays = claim(c, "convex_stays_at_rounding")
    study = getattr(c.data, "study", None)
    if study is None or not study.rnn or not study.logistic:
        raise NotMeasured("the training_drift run has no stability study")
    rates = [r.rate for r in study.rnn if r.rate is not None]
    worst = max(r.max_share for r in study.logistic)
    number = (
        f"RNN: growth rates {min(rates, default=0):.3f}–{max(rates, default=0):.3f} per step; "
        f"logistic regression: at most {worst:.1e} of the weights' norm"
    )
    return decide(
        number,
        (
            grows and stays,
            DEPENDS,
            "on the training, not on the network's name: in the RNN at this learning rate a "
            "1-ULP difference grows exponentially into another model, on a convex problem it "
            "stays at rounding level",
        ),
        (grows, HOLDS, "the perturbation grew on both problems"),
        otherwise=(FAILS, "the RNN's perturbation did not grow exponentially"),
    )
