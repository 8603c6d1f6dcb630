"""DJL vs PyTorch (and numpy, TensorFlow): normalization and image preprocessing, stage by stage.

Real DJL runs in a JVM worker process; torch/torchvision, numpy and TensorFlow run here. Each
stage (`stages`) is measured against an exact truth computed on the same input bits; the
whole pipelines (`pipelines`) are compared stage by stage to find where each first
diverges from torchvision's, and whether the fixes work.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from ... import backends, images
from ...errors import BackendUnavailable
from ...memo import Memo
from ...params import Interval, Options
from ...result import Claim, Comparison, Observation, Outcome
from ...truth.value import Truth
from .._base import Lesson, missing_part
from . import pipelines as P
from . import stages as S
from .claims import _TV, CLAIMS, DETAIL, OBSERVED
from .data import BitEqual, Diff, DjlData
from .figure_svg import figure_svg as figure_svg

STAGE_CHOICES = ("pipeline", "std", *P.STAGES)
#: pipelines, stage results and shown outcomes per input (see `compute`)
_MEMO = Memo(keep=48)
UINT8_STAGES = ("decode", "resize", "center_crop")

PARAMS = (
    Options("stage", "pipeline", "which stage's outcomes and heat map to show", STAGE_CHOICES),
    Options("image", "texture_q75.jpg", "a sample image from data/images", images.names()),
    Interval("size", 64, "target short edge of the resize (pixels)", 16, 128, integer=True),
    Interval("crop", 57, "centre-crop size (pixels)", 8, 128, integer=True, most="size"),
    Options("interpolation", "bilinear", "resize filter", ("bilinear", "bicubic", "nearest")),
)


def _versions() -> dict[str, str]:
    return {name: backends.get(name).version() for name in ("torch", "tensorflow", "djl", "numpy")}


def _djl() -> Any:
    """The DJL backend module, or the reason it cannot run (with the fixing command)."""
    try:
        mod = backends.load("djl")
        mod.require()
        return mod
    except BackendUnavailable as exc:
        return str(exc)


# -- whole pipelines ------------------------------------------------------------------------


def _pipelines(p: dict, djl: Any) -> dict[str, dict[str, Any]]:
    path = images.path(p["image"])
    args = (path, p["size"], p["crop"], p["interpolation"])
    tv = P.torchvision_pipeline(*args)
    runs = {"torchvision": tv, "numpy": P.numpy_pipeline(tv["decode"], tv["resize"], p["crop"])}
    if not backends.missing("tensorflow"):
        runs["tensorflow"] = P.tensorflow_pipeline(*args)
    if not isinstance(djl, str):
        runs["djl (as written)"] = P.djl_naive_pipeline(*args)
        runs["djl (fixed)"] = P.djl_fixed_pipeline(*args)
    return runs


def first_divergence(a: dict[str, Any], b: dict[str, Any]) -> Diff | None:
    """The first stage at which two pipeline runs differ, with its comparison, or None."""
    for stage in P.STAGES:
        c = P.compare(a[stage], b[stage])
        if not c.bit_equal:
            return replace(c, stage=stage)
    return None


def _gap(c: Diff, stage: str) -> str:
    if not c.same_shape:
        return f"shape {c.shapes[0]} vs {c.shapes[1]}"
    unit = " levels" if stage in UINT8_STAGES else ""
    # ULP distances across zero or over whole levels are astronomically large: shown if small
    small = c.max_ulp is not None and c.max_ulp < 10**6
    ulp = f" ({c.max_ulp} ULP)" if small else ""
    return (
        f"max |diff| {c.max_abs_diff:.3g}{unit}{ulp} on {100 * c.fraction_differing:.1f}% of values"
    )


def divergence_note(d: Diff | None, end: Diff) -> str:
    """One line: the stages still bit-equal, the first that differs (how much), and the
    difference left after Normalize."""
    if d is None:
        return "bit-identical to torchvision at every stage"
    same = P.STAGES[: P.STAGES.index(d.stage)]
    head = f"= at {', '.join(same)}; " if same else ""
    tail = "" if d.stage == "normalize" else f"; after normalize: {_gap(end, 'normalize')}"
    return f"{head}FIRST DIVERGES at {d.stage}: {_gap(d, d.stage)}{tail}"


def _pipeline_truth(tv: dict[str, Any], p: dict) -> Truth:
    """torchvision's pipeline in exact arithmetic: exact resize (no uint8 rounding), crop at
    torchvision's offset, /255, (x - m) / s with the float32 m and s."""
    decoded = tv["decode"]
    oh, ow = P.short_edge_shape(*decoded.shape[:2], p["size"])
    r = S.resize_truth(decoded, oh, ow, p["interpolation"]).exact
    top, left = P.crop_offsets(oh, ow, p["crop"])["round"]
    c = r[top : top + p["crop"], left : left + p["crop"]].transpose(2, 0, 1)
    ms, ss = (
        np.array([Fraction(float(v)) for v in a], dtype=object)[:, None, None]
        for a in (P.MEAN, P.STD)
    )
    out = (c / 255 - ms) / ss  # elementwise in Fractions
    return Truth("torchvision's pipeline in exact arithmetic", exact=out)


#: levels a resize to whole levels may be off, by filter: PIL resizes in two passes, each
#: rounded to a level, the second weighting the first's rounding by its weights' Σ|w| (1 for
#: bilinear, at most 1.25 for the bicubic kernel): 0.5·(1 + Σ|w|). Nearest picks pixels: none.
RESIZE_LEVELS = {"bilinear": 1.0, "bicubic": 1.125}


def pipeline_bound(truth: Truth, interpolation: str) -> np.ndarray | None:
    """The a-priori bound on a pipeline's |error| against the exact one, per element: its
    resize's rounding to whole levels (`RESIZE_LEVELS`) through /255 and Normalize's /std; the
    clamp to [0, 255] a uint8 resize must make where the exact one overshoots (bicubic's
    negative weights); float32's rounding of /255 and Normalize (2^-20·(|value| + 1),
    generous). None for a filter without one."""
    levels = RESIZE_LEVELS.get(interpolation)
    if levels is None:
        return None
    mean, std = (a.astype(np.float64)[:, None, None] for a in (P.MEAN, P.STD))
    t = S.nearest(truth)
    clamp = np.maximum(np.maximum(-mean / std - t, t - (1 - mean) / std), 0.0)
    return levels / 255 / std + clamp + 2.0**-20 * (np.abs(t) + 1)


def _bounded_row(name: str, backend: str, value: Any, truth: Truth, versions: dict, p: dict,
                 note: str) -> Outcome:  # fmt: skip
    """A pipeline's row, with `pipeline_bound` attached."""
    row = S.measured(name, backend, value, truth, versions, note)
    return row.with_bound(pipeline_bound(truth, p["interpolation"]))


def _pipeline_stage(p: dict, djl: Any, versions: dict, runs: dict) -> S.StageResult:
    """Where each pipeline first diverges from torchvision's; outcomes against the exact
    torchvision pipeline (its truth is built only when this stage is shown)."""
    tv = runs["torchvision"]
    divergence = {n: first_divergence(r, tv) for n, r in runs.items() if n != "torchvision"}
    table = [
        replace(P.compare(r[s], tv[s]), pipeline=n, stage=s)
        for n, r in runs.items()
        if n != "torchvision"
        for s in P.STAGES
    ]
    data: dict[str, Any] = {"divergence": divergence, "stage_table": table}
    claims: dict[str, Claim] = {}
    if "djl (as written)" in divergence:
        naive, fixed = divergence["djl (as written)"], divergence["djl (fixed)"]
        claims["pipeline_first_divergence"] = CLAIMS["pipeline_first_divergence"].claim(
            naive is not None and naive.stage == "resize" and not naive.same_shape
        )
        gap = 0.0 if fixed is None else float(fixed.max_abs_diff)
        claims["pipeline_fixed"] = CLAIMS["pipeline_fixed"].claim(
            all(r.same_shape for r in table if r.pipeline == "djl (fixed)")
            and (fixed is None or fixed.stage == "resize"),
            gap=gap,
            plural="" if gap == 1 else "s",
        )
        data["heat"] = P.heat(runs["djl (as written)"]["normalize"], tv["normalize"])
        data["heat_title"] = "|DJL (as written) - torchvision| after Normalize"
    if p["stage"] != "pipeline":
        return None, [], claims, data  # type: ignore[return-value]
    truth = S.once(_pipeline_truth(tv, p))
    thunks: S.Thunks = []
    for name, run in runs.items():
        backend = name.split(" ")[0]
        note = (
            "the reference: the others are compared with it stage by stage"
            if name == "torchvision"
            else divergence_note(divergence[name], P.compare(run["normalize"], tv["normalize"]))
        )
        thunks.append(partial(_bounded_row, name, backend, run["normalize"], truth, versions, p,
                              note))  # fmt: skip
    if isinstance(djl, str):
        thunks += [S.missing("djl (as written)", djl), S.missing("djl (fixed)", djl)]
    if "tensorflow" not in runs:
        thunks.append(S.missing("tensorflow", backends.missing("tensorflow") or ""))
    return truth, thunks, claims, data


# -- the lesson -----------------------------------------------------------------------------

_NO_DETAIL = (
    "a smooth gradient has no detail finer than the new pixel spacing, so skipping the "
    "antialias filter loses little there; pick a texture or edges image"
)
#: what each stage needs to run at all (the stages after decode start from torchvision's
#: pipeline); the parts each claim needs are in `CLAIMS`
STAGE_NEEDS: dict[str, tuple[str, ...]] = {"std": (), "decode": ()}


def _missing(djl: Any, gradient: bool = False) -> dict[str, str]:
    """Why a part is missing: for DJL, why its worker did not start; for detail, that a smooth
    gradient has none (the registry otherwise)."""
    why = {"djl": djl if isinstance(djl, str) else None, DETAIL: _NO_DETAIL if gradient else None}
    return {part: w for part, w in why.items() if w}


def _unavailable_rows(stage: str, why: str, djl: Any) -> tuple[Outcome, ...]:
    """The shown stage could not run: each pipeline Unavailable, saying why."""
    names = ("torchvision", "numpy", "tensorflow", "djl (as written)", "djl (fixed)")
    return tuple(
        Outcome.missing(
            n if stage == "pipeline" else f"{n}: {stage}",
            n.split(" ")[0],
            djl if n.startswith("djl") and isinstance(djl, str) else why,
        )
        for n in names
    )


def compute(stage: str, image: str, size: int, crop: int, interpolation: str) -> Comparison:
    p = {"stage": stage, "image": image, "size": size, "crop": crop, "interpolation": interpolation}
    djl = _djl()
    tv_missing = missing_part(_TV, _missing(djl).get)
    versions = _versions()
    # Everything but the shown stage's outcomes depends on the input alone: kept per input, so
    # switching the stage recomputes nothing but the rows shown.
    inputs = (image, size, crop, interpolation, djl if isinstance(djl, str) else "djl")
    runs = {} if tv_missing else _MEMO.get(("pipelines", *inputs), lambda: _pipelines(p, djl))
    tv = runs.get("torchvision", {})
    stage_fns = {
        "std": lambda: S.std_stage(djl, versions),
        "decode": lambda: S.decode_stage(p, djl, versions),
        "resize": lambda: S.resize_stage(p, djl, versions, tv["decode"]),
        "center_crop": lambda: S.crop_stage(p, djl, versions, tv["resize"]),
        "to_tensor": lambda: S.to_tensor_stage(p, djl, versions, tv["center_crop"]),
        "normalize": lambda: S.normalize_stage(p, djl, versions, tv["to_tensor"]),
        "pipeline": lambda: _pipeline_stage(p, djl, versions, runs),
    }
    claims: dict[str, Claim] = {}
    data: dict[str, Any] = {}
    shown: S.StageResult | None = None
    djl_key = inputs[-1]
    upstream = {  # what each stage's result depends on, beyond the stage itself
        "std": (djl_key,),
        "decode": (image, djl_key),
        "resize": (image, size, interpolation, djl_key),
        "pipeline": (stage == "pipeline", *inputs),  # builds its truth only when shown
    }
    for name, fn in stage_fns.items():
        if tv_missing and STAGE_NEEDS.get(name, _TV):
            continue  # starts from torchvision's pipeline: its claims are "not checked" below
        result = _MEMO.get((name, *upstream.get(name, inputs)), fn)
        claims.update(result[2])
        data.update({k: v for k, v in result[3].items() if k not in ("heat", "heat_title")})
        if name == stage:
            shown = result
    if shown is None:
        truth, outcomes, shown_data = None, _unavailable_rows(stage, tv_missing or "", djl), {}
    else:
        truth, thunks, _, shown_data = shown
        outcomes = _MEMO.get(("outcomes", stage, *inputs), lambda: tuple(f() for f in thunks))
    if stage == "pipeline" and shown is not None:
        exact = _MEMO.get(("nearest", *inputs), lambda: S.nearest(truth))
        data["pipeline_max_abs_error"] = {
            o.implementation: float(np.abs(np.asarray(o.value, np.float64) - exact).max())
            for o in outcomes
            if o.error is not None
        }
    data["heat"] = shown_data.get("heat")
    data["heat_title"] = shown_data.get("heat_title", "")
    data["djl_unavailable"] = djl if isinstance(djl, str) else None
    # a gradient's antialias claim is "not checked" where the resize decided it
    gradient = image.startswith("gradient") and "antialias_matters" in claims
    d = DjlData(**data)
    return Comparison(
        truth=truth,
        outcomes=outcomes,
        claims=claims,
        data=d,
        explanation=EXPLANATION,
        observations=_observations(d.resize_bit_equal, versions),
        missing=_missing(djl, gradient),
    )


def _observations(bits: BitEqual | None, versions: dict[str, str]) -> dict[str, Observation]:
    """What depends on the libtorch builds: whether DJL's resize matches torch's to the bit."""
    if not bits:
        return {}
    n = bits.differing
    return {
        OBSERVED.key: OBSERVED.observe(
            "bit-identical"
            if n == 0
            else f"{n} of {bits.values} values differ, by at most {bits.max_ulp:.0f} ULP",
            f"{versions['djl']} vs torch {versions['torch']}: depends on the two libtorch "
            "builds and the scale; builds that sum the filter taps in another order part in "
            "the last bits, and an antialiased downscale by s sums about s times more taps",
            f" ({bits.scale})",
        )
    }


def figure(comparison: Comparison) -> Any:
    """The heat map of the selected stage's difference (the classic example's values for
    the std stage); `figure_svg` draws the same as SVG markup for the explorer."""
    import matplotlib.pyplot as plt

    data: DjlData = comparison.data
    heat = data.heat
    fig, ax = plt.subplots(figsize=(5, 4))
    if comparison.params["stage"] == "std" and data.classic is not None:
        c = data.classic
        xs = np.arange(len(c.x))
        for i, (key, vals) in enumerate(c.bars().items()):
            ax.bar(xs + 0.2 * i, vals, width=0.2, label=key)
        ax.set_xticks(xs + 0.3, [f"{v:g}" for v in c.x])
        ax.set_title("(x - mean) / std for x = [10, 20, 30, 40, 50]")
        ax.legend()
    elif heat is None:
        why = data.djl_unavailable or "the two arrays differ in shape"
        ax.text(0.5, 0.5, f"no heat map: {why}", ha="center", va="center", wrap=True)
        ax.set_axis_off()
    else:
        im = ax.imshow(heat, cmap="magma")
        fig.colorbar(im, ax=ax)
        ax.set_title(data.heat_title, fontsize=9)
    fig.tight_layout()
    return fig


EXPLANATION = """\
DJL is not "wrong": it makes different choices from torchvision, each visible in the bits.
torch.std is unbiased (N-1) while numpy and DJL's idiom divide by N. DJL's Resize(int) is
square; ResizeShort is torchvision's Resize(int). DJL resizes through libtorch's antialiased
interpolate and casts uint8 results back by truncation, and bicubic values that overshoot
[0, 255] wrap around; torchvision (PIL or uint8 tensors) rounds and clamps. DJL's CenterCrop
floors the offset, torchvision rounds it half to even. ToTensor and Normalize are single
correctly-rounded float32 operations in DJL, torchvision and numpy, so they agree to the bit
given the same input; TensorFlow's convert_image_dtype multiplies by 1/255 instead, and its
JPEG decoder defaults to a faster IDCT. Each fix is checked above."""

LESSON = Lesson(
    name="djl_normalization",
    title="DJL vs PyTorch: normalization and image preprocessing",
    summary="Real DJL, torchvision, numpy and TensorFlow pipelines on the same image, stage by "
    "stage against an exact truth: where they diverge and the fix for each.",
    params=PARAMS,
    compute=compute,
    explanation=EXPLANATION,
    figure=figure,
    claims=CLAIMS,
    observations={OBSERVED.key: OBSERVED},
    data=DjlData,
)
