"""Checks for notebook 13's exercises: each runs the lesson and says whether an answer is
right, with the numbers it rests on (`fpexplore.workshop.hidden_answer` keeps them folded)."""

from __future__ import annotations

from ...errors import InvalidParameter
from ...params import Interval
from .. import get
from .models import BATCH, N_TRAIN

EPOCH = N_TRAIN // BATCH  # steps per epoch: the tolerance of a step read off the plot
STEPS = 300


def _growth(lr: float, model: str, seed: int) -> dict | None:
    """`growth.fit_rate` of a 1-ULP change over `STEPS` steps at ``lr``."""
    c = get("training_drift").run(
        model=model, perturbation="one-ulp", lr=lr, steps=STEPS, seed=seed
    )
    return c.data.trajectories.growth


def apart_step(lr: float = 1.0, model: str = "rnn", seed: int = 0) -> int | None:
    """The step where a 1-ULP change first reaches 1% of the weights' norm (None: never)."""
    g = _growth(lr, model, seed)
    return None if g is None else g["apart_at"]


def check_apart_step(answer: int, lr: float = 1.0) -> str:
    """Exercise 1: ``answer`` is right within one epoch of the measured step."""
    Interval("answer", 0, "a step", 0, STEPS, integer=True).validate(answer, "check_apart_step")
    step = apart_step(lr)
    if step is None:
        return f"at lr {lr:g} the change never reaches 1% in {STEPS} steps"
    ok = abs(answer - step) <= EPOCH
    verdict = "right" if ok else "not yet"
    return f"{verdict}: measured step {step}, yours {answer} (tolerance {EPOCH} steps)"


def dies_out(lr: float, model: str = "rnn", seed: int = 0) -> tuple[bool, float]:
    """Whether a 1-ULP change stays at rounding level (below `ROUNDING` of the norm) for
    `STEPS` steps at ``lr``, and its largest share of the norm."""
    from . import ROUNDING

    g = _growth(lr, model, seed)
    if g is None:  # pragma: no cover - numpy always runs the one-ULP pair
        raise InvalidParameter("lr", lr, "a rate at which both runs train")
    return g["max_share"] <= ROUNDING, g["max_share"]


def check_dies_out(lr: float) -> str:
    """Exercise 2: does the perturbation stay at rounding level at ``lr``?"""
    from . import ROUNDING

    ok, share = dies_out(lr)
    if ok:
        return (
            f"right: at lr {lr:g} the runs stay within {share:.1e} of the norm "
            f"(rounding level: below {ROUNDING:g}) for {STEPS} steps"
        )
    return f"not yet: at lr {lr:g} the runs part to {share:.1e} of the norm; try smaller"
