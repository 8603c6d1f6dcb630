"""Lesson: small differences compound. Two trainings that are "the same computation" (one ULP
in one initial weight, another summation order, another framework, float64 instead of float32)
step by step against a high-precision reference trajectory; the same perturbations on a convex
and on non-convex models, their growth fitted; and the diversity table of Summers & Dinneen
(ICML 2021), small and live."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...params import Interval, Options
from ...result import Claim, Comparison, Outcome
from .._base import ClaimSpec, Lesson, declare_texts, missing_part, missing_parts
from .._gpu.recording import GpuExperiment, GpuSession
from . import experiment, gpu_record, growth, table
from .data import Diversity, DriftData, Study, Trajectories
from .figures import figure
from .figures import figure_svg as figure_svg
from .models import MODELS
from .work import pending as pending

_TEST = "tests/test_training_drift.py"
GPU_PART = "training_drift GPU record"
#: two frameworks from the same weights, one step apart: rounding level (a share of the norm)
START_SHARE = 1e-5
#: float64 must stay this many times closer to the mpmath reference than float32 over the
#: reference steps (float32's unit roundoff is 2^29 times float64's)
CLOSER = 1e4
ROUNDING = 1e-5  # "rounding level": a distance this small a share of the weights' norm
RATE_FACTOR = 3.0  # growth rates "agree" within this factor

CLAIMS: dict[str, ClaimSpec] = {
    **declare_texts(
        {
            "reference_certified": "the mpmath reference trajectory is certified: at two "
            "precisions its weights agree far below float64's own error",
            "float64_tracks_reference": "over the reference steps float64 stays at least "
            f"{CLOSER:.0e} times closer to the mpmath trajectory than float32",
            "convex_stays_at_rounding": "on the convex problem (logistic regression) one ULP "
            "or another summation order stays at rounding level (below "
            f"{ROUNDING:g} of the weights' norm) for every seed",
            "rnn_grows_exponentially": "on the RNN the same perturbations grow exponentially "
            "until the runs are 1% of the weights' norm apart, for every seed, their fitted "
            f"rates within a factor {RATE_FACTOR:g} of their median",
            "instability_not_the_format": "the instability is the training's, not float32's: "
            "one ULP of float64 in float64 grows at a rate within a factor "
            f"{RATE_FACTOR:g} of float32's",
            "sources_same_order": "every single source of nondeterminism gives a prediction "
            "disagreement within a factor "
            f"{table.FACTOR:g} of all the sources together",
            "one_bit_among_them": "one bit in one initial weight gives as much diversity as "
            f"all the sources together (within a factor {table.FACTOR:g})",
            "framework_same_order": "numpy and torch from the same weights disagree as much as "
            f"all the sources together (within a factor {table.FACTOR:g})",
        },
        by_key={"framework_same_order": ("torch",)},
        test=_TEST,
    ),
    **{
        f"{lib}_starts_at_rounding": ClaimSpec(
            f"{lib}_starts_at_rounding",
            f"{lib} from the same weights starts at rounding level from numpy's float32 run "
            f"(after one step, below {START_SHARE:g} of the weights' norm apart), however far "
            "apart they end",
            (lib,),
            test=_TEST,
            occasional=True,  # stated in a run whose second trajectory is that framework's
        )
        for lib in ("torch", "tensorflow")
    },
    "gpu_atomics_same_order": ClaimSpec(
        "gpu_atomics_same_order",
        "on a GPU, atomic adds alone give diversity within a factor "
        f"{table.FACTOR:g} of all the sources together, and deterministic mode gives the "
        "same bits run after run",
        (GPU_PART,),
        applies="a CUDA GPU (recorded)",
        test=_TEST,
    ),
}
OBSERVATIONS = declare_texts(
    {
        "pair_growth": "the second run's distance from the first at this setting: fitted "
        "growth rate per step, and the step where they are 1% of the norm apart",
        "left_truth": "the float32 run leaves the reference (1% of the norm) at step",
        "loss_hides_it": "the loss curves: float32's late loss against float64's",
        "reference_horizon": "float64 is the reference up to step",
        "mlp_stays": "the small MLP (2 → 12 → 1): largest distance as a share of the norm "
        "(the articles' 'compounds' does not show on it)",
        "weight_distance_differs": "weight distance: a new initialization ends farther "
        "apart than one bit (ratio), though predictions disagree alike",
    }
)


def _missing(part: str) -> str | None:
    if part == GPU_PART:
        return None if gpu_record.read() is not None else f"no GPU record. Fix: {gpu_record.FIX}"
    return None


def _trajectories(model: str, perturbation: str, lr: float, steps: int, seed: int) -> Any:
    """The trajectories at these parameters, and the second run's outcome if it could not run."""
    why = experiment.unavailable(perturbation)
    shown = "one-ulp" if why else perturbation  # the reference part runs either way
    t = experiment.trajectories(model, shown, lr, steps, seed)
    norm, base_truth = np.asarray(t["norm"]), np.asarray(t["base_truth"])
    k = t["reference_steps"]
    own = growth.fit_rate(base_truth, norm)
    f64 = np.asarray(t["f64_truth"])
    horizon = None
    if own["rate"] and own["rate"] > 0 and f64[-1] > 0:
        grow = np.log(growth.APART * norm[k] / f64[-1]) / own["rate"]
        horizon = int(k + max(grow, 0))
    left = np.flatnonzero(base_truth >= growth.APART * norm)
    fields: dict[str, Any] = {}
    if not why:
        fields = {
            "pair": np.asarray(t["pair"]),
            "other_truth": np.asarray(t["other_truth"]),
            "loss_other": np.asarray(t["loss"]["other"]),
            "checkpoints": np.asarray(t["checkpoints"]),
            "flips": np.asarray(t["flips"]),
            "growth": growth.fit_rate(t["pair"], norm),
        }
    data = Trajectories(
        first="numpy float32",
        second=t["other"] if not why else perturbation,
        norm=norm,
        base_truth=base_truth,
        f64_truth=f64,
        reference_steps=k,
        certified_gap=t["certified_gap"],
        loss_base=np.asarray(t["loss"]["base"]),
        loss_f64=np.asarray(t["loss"]["float64"]),
        horizon=horizon,
        left_truth_at=int(left[0]) if left.size else None,
        accuracy=t["accuracy"],
        **fields,
    )
    return data, why, t


def _trajectory_claims(d: Trajectories) -> dict[str, Claim]:
    k = d.reference_steps
    f64, f32 = float(d.f64_truth[1:].max()), float(d.base_truth[1 : k + 1].max())
    return {
        "reference_certified": CLAIMS["reference_certified"].claim(
            bool(d.certified_gap * 1e6 <= max(f64, 1e-300)),
            f" ({experiment.PRECISIONS[0]} and {experiment.PRECISIONS[1]} bits differ by "
            f"{d.certified_gap:.1e} over {k} steps; float64 is {f64:.1e} away)",
        ),
        "float64_tracks_reference": CLAIMS["float64_tracks_reference"].claim(
            bool(f32 >= CLOSER * f64),
            f": float64 {f64:.1e}, float32 {f32:.1e} after up to {k} steps",
        ),
    }


def _study_claims(study: Study) -> dict[str, Claim]:
    worst = max(r.max_share for r in study.logistic)
    rnn = study.rnn
    rates = [r.rate for r in rnn]
    ok = all(r.rate is not None and r.rate > 0 and r.apart_at for r in rnn)
    med = float(np.median([r for r in rates if r is not None])) if ok else float("nan")
    within = ok and all(med / RATE_FACTOR <= r <= med * RATE_FACTOR for r in rates)
    f32 = [r.rate for r in rnn if "float32" in r.pair and r.rate]
    f64 = [r.rate for r in rnn if "float64" in r.pair and r.rate]
    m32 = float(np.median(f32)) if f32 else float("nan")
    m64 = float(np.median(f64)) if f64 else float("nan")
    fmt_ok = bool(f32 and f64 and 1 / RATE_FACTOR <= m64 / m32 <= RATE_FACTOR)
    apart = [r.apart_at for r in rnn if r.apart_at]
    shown = ", ".join(f"{r:.3f}" for r in rates if r is not None)
    return {
        "convex_stays_at_rounding": CLAIMS["convex_stays_at_rounding"].claim(
            bool(worst <= ROUNDING), f": at most {worst:.1e} of the norm"
        ),
        "rnn_grows_exponentially": CLAIMS["rnn_grows_exponentially"].claim(
            bool(within),
            f": rates {shown} per step (median {med:.3f}); 1% apart after "
            f"{min(apart, default=0)}–{max(apart, default=0)} steps",
        ),
        "instability_not_the_format": CLAIMS["instability_not_the_format"].claim(
            fmt_ok, f": median rate float64 {m64:.3f}, float32 {m32:.3f} per step"
        ),
    }


def _table_claims(rows: dict[str, list[Diversity]]) -> dict[str, Claim]:
    def dis(source: str) -> float:
        return table.summary(rows[source], "disagreement")[0]

    alls = dis("all together")

    def near(v: float) -> bool:
        return alls / table.FACTOR <= v <= alls * table.FACTOR

    singles = {s: dis(s) for s in table.SINGLE}
    shown = ", ".join(f"{s} {v:.3f}" for s, v in singles.items())
    out = {
        "sources_same_order": CLAIMS["sources_same_order"].claim(
            all(near(v) for v in singles.values()),
            f": all together {alls:.3f}; {shown} (mean over {len(table.BASE_SEEDS)} seeds)",
        ),
        "one_bit_among_them": CLAIMS["one_bit_among_them"].claim(
            near(singles["one bit"]),
            f": disagreement {singles['one bit']:.3f} against {alls:.3f}",
        ),
    }
    if "framework" in rows:
        v = dis("framework")
        out["framework_same_order"] = CLAIMS["framework_same_order"].claim(
            near(v), f": disagreement {v:.3f} against {alls:.3f}"
        )
    return out


def _gpu_claim(rows: dict[str, Any], gpu: dict[str, Any]) -> Claim:
    alls = table.summary(rows["all together"], "disagreement")[0]
    v = table.summary(gpu["rows"], "disagreement")[0]
    ok = alls / table.FACTOR <= v <= alls * table.FACTOR and gpu["deterministic_same"]
    return CLAIMS["gpu_atomics_same_order"].claim(
        bool(ok),
        f": disagreement {v:.3f} against {alls:.3f}; deterministic: "
        f"{gpu['deterministic_runs']} runs, same bits: {gpu['deterministic_same']} "
        f"({gpu['where']})",
    )


def _observations(d: Trajectories, study: Study, rows: dict[str, Any]) -> dict:
    obs = {}
    if d.growth is not None:
        g = d.growth
        rate = "none fitted" if g["rate"] is None else f"{g['rate']:.3f}"
        apart = "never" if g["apart_at"] is None else f"step {g['apart_at']}"
        obs["pair_growth"] = OBSERVATIONS["pair_growth"].observe(
            f"rate {rate}; 1% apart: {apart}; largest share {g['max_share']:.1e}",
            f"{d.second} against {d.first}",
        )
    obs["left_truth"] = OBSERVATIONS["left_truth"].observe(
        "never" if d.left_truth_at is None else d.left_truth_at
    )
    tail = max(len(d.loss_base) // 4, 1)
    obs["loss_hides_it"] = OBSERVATIONS["loss_hides_it"].observe(
        f"{d.loss_base[-tail:].mean():.4f} against {d.loss_f64[-tail:].mean():.4f}",
        f"mean over the last {tail} steps; float32's test accuracy {d.accuracy:.3f}",
    )
    obs["reference_horizon"] = OBSERVATIONS["reference_horizon"].observe(
        "the end" if d.horizon is None else d.horizon,
        f"mpmath for the first {d.reference_steps}, float64 beyond, its error grown at the "
        "float32 run's fitted rate",
    )
    mlp = max(r.max_share for r in study.mlp)
    obs["mlp_stays"] = OBSERVATIONS["mlp_stays"].observe(f"{mlp:.1e}")
    w_init = table.summary(rows["init seed"], "weight_distance")[0]
    w_bit = table.summary(rows["one bit"], "weight_distance")[0]
    obs["weight_distance_differs"] = OBSERVATIONS["weight_distance_differs"].observe(
        f"{w_init / w_bit:.1f}×", f"init seed {w_init:.2f}, one bit {w_bit:.2f} of the norm"
    )
    return obs


def _framework_claim(d: Any, perturbation: str) -> dict[str, Claim]:
    """Where the second run is another framework's from the same weights: it starts within
    rounding of numpy's (one step apart by less than `START_SHARE` of the norm)."""
    if perturbation not in ("torch", "tensorflow") or d.pair is None or len(d.pair) < 2:
        return {}
    share = float(d.pair[1] / d.norm[1])
    key = f"{perturbation}_starts_at_rounding"
    return {key: CLAIMS[key].claim(share < START_SHARE, f": {share:.1e} after one step")}


def compute(model: str, perturbation: str, lr: float, steps: int, seed: int) -> Comparison:
    d, why, t = _trajectories(model, perturbation, lr, steps, seed)
    study = growth.study()
    rows = dict(table.numpy_rows())
    decided = {**_trajectory_claims(d), **_study_claims(study), **_framework_claim(d, perturbation)}
    if not missing_part(("torch",)):
        from ... import backends

        rows["framework"] = table.framework_row(backends.load("torch"))
    record = None if missing_part((GPU_PART,), _missing) else gpu_record.read()
    gpu_where = gpu_record.FIX
    if record is not None:
        gpu = gpu_record.summary(record)
        rows["GPU atomics"] = gpu["rows"]
        gpu_where = gpu["where"]
        decided["gpu_atomics_same_order"] = _gpu_claim(rows, gpu)
    decided.update(_table_claims(rows))
    final = t["final"]
    outcomes = [
        Outcome(
            "numpy float32",
            "numpy",
            value=np.asarray(final["base"]),
            note=f"test accuracy {d.accuracy:.3f}",
        ),
        Outcome(
            "numpy float64 (reference beyond the mpmath steps)",
            "numpy",
            kind="reference",
            value=np.asarray(final["float64"]),
        ),
    ]
    lib = experiment.needs(perturbation)
    if why:
        outcomes.append(Outcome.missing(d.second, lib or "", why))
    else:
        outcomes.append(Outcome(d.second, lib or "numpy", value=np.asarray(final["other"])))
    return Comparison(
        outcomes=tuple(outcomes),
        claims=decided,
        data=DriftData(d, study, rows, gpu_where),
        explanation=EXPLANATION,
        observations=_observations(d, study, rows),
        missing=missing_parts(CLAIMS.values(), _missing),
    )


EXPLANATION = (
    "Training feeds each step's rounding into the next step's input. Where the training is "
    "stable (a convex loss, a small learning rate) a difference in the last bit is pulled back "
    "to rounding level, and the two runs often end bit for bit equal. Where it is unstable (a "
    "recurrent network at a large learning rate) the difference is multiplied at every step: "
    "it grows exponentially until the two models are as different as models trained from "
    "different seeds. Then every source of nondeterminism, a single bit included, gives the "
    "same diversity, and float64 only postpones the split by the steps it takes to grow "
    "through 29 more bits. The loss curves look alike all the while: the loss measures how "
    "good a model is, not which one it is."
)


def record_gpu(s: GpuSession) -> None:
    """The training-drift table's GPU row: a record of its own (``data/gpu/training_drift``)."""
    out = None if s.out_dir is None else s.out_dir / gpu_record.FOLDER
    s.say(f"wrote {gpu_record.record(out, s.name)}")


LESSON = Lesson(
    name="training_drift",
    title="Small differences compound: one bit at step 0, another model later",
    summary="Training trajectories against a high-precision truth, stable vs unstable, and "
    "the diversity of every source of nondeterminism",
    params=(
        Options("model", "rnn", "the model trained", choices=MODELS),
        Options(
            "perturbation",
            "one-ulp",
            "what makes the second run differ",
            choices=experiment.PERTURBATIONS,
        ),
        Interval("lr", 1.0, "learning rate", 0.01, 2.0, log=True),
        Interval("steps", 300, "SGD steps (batches of 32)", 20, 2000, integer=True),
        Interval("seed", 0, "seed of the data and the initial weights", 0, 99, integer=True),
    ),
    compute=compute,
    explanation=EXPLANATION,
    figure=figure,
    quick={"steps": 100},
    claims=CLAIMS,
    observations=OBSERVATIONS,
    data=DriftData,
    gpu_experiment=GpuExperiment("training_drift", record_gpu, seed=None, cuda_only=True),
)
