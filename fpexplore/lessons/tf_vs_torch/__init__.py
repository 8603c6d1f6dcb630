"""Lesson: TensorFlow vs PyTorch — operator defaults, autograd, graph mode, recurrent layers.

One section per operation (parameter ``op``). Each section feeds both frameworks the same
input bits (and the same weights, transferred), measures both against an mpmath reference
of the same mathematics, and checks live the one-line change that makes them agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ...errors import BackendUnavailable, FpexploreError
from ...params import Depends, Flag, Interval, Options
from ...result import Comparison
from .._base import ClaimSpec, Lesson
from . import (
    activations,
    adam,
    autograd,
    calculus,
    claims,
    conv,
    custom_op,
    graph,
    lstm,
    norms,
    reduction,
    softmax,
)
from .data import SectionData
from .frameworks import OBSERVATIONS, load, raised, unavailable
from .plot import figure


@dataclass(frozen=True)
class Spec:
    """One section: how it runs, its rows and claims (keyed within the section), the ``size``
    and ``dtype`` it accepts, and the text that explains it."""

    run: Callable[..., Any]
    rows: tuple[tuple[str, str], ...]
    claims: dict[str, ClaimSpec]
    text: str
    size: tuple[int, int, int] | None = None  # default, low, high; None: size is not used
    dtypes: tuple[str, ...] = ("float32",)


_LOW = ("float32", "float16", "bfloat16")


def _spec(
    run: Callable[..., Any],
    torch_row: str,
    tf_row: str,
    name: str,
    size: tuple[int, int, int] | None = None,
    dtypes: tuple[str, ...] = ("float32",),
    tf_first: bool = False,
) -> Spec:
    """A section with torch's row, then TensorFlow's (``tf_first``: the other way round), and
    `claims`' ``name`` and ``name_TEXT`` as its claims and text."""
    rows = ((torch_row, "torch"), (tf_row, "tensorflow"))
    text = getattr(claims, f"{name}_TEXT")
    return Spec(run, rows[::-1] if tf_first else rows, getattr(claims, name), text, size, dtypes)


def _softmax(op: str) -> Spec:
    """softmax or log_softmax: one section each, the same claims and text."""
    run = lambda fw, **kw: softmax.run_softmax(fw, op, **kw)  # noqa: E731
    return _spec(run, f"torch F.{op}", f"tf.nn.{op}", "SOFTMAX", (8, 1, 4096), _LOW)


SECTIONS: dict[str, Spec] = {
    "softmax": _softmax("softmax"),
    "log_softmax": _softmax("log_softmax"),
    "cross_entropy": _spec(
        softmax.run_cross_entropy,
        "torch F.cross_entropy",
        "Keras SparseCategoricalCrossentropy",
        "CROSS_ENTROPY",
        (10, 2, 1000),
    ),
    "gelu": _spec(activations.run_gelu, "torch F.gelu", "keras.ops.gelu", "GELU", (121, 2, 10_000)),
    "layer_norm": _spec(
        norms.run_layer_norm,
        "torch nn.LayerNorm",
        "Keras LayerNormalization",
        "LAYER_NORM",
        (64, 2, 1024),
    ),
    "conv_same": _spec(conv.run_conv, "torch F.conv2d", "tf.nn.conv2d", "CONV", (8, 4, 64)),
    "adam": _spec(
        adam.run_adam, "torch.optim.Adam", "keras.optimizers.Adam", "ADAM", (16, 1, 1024)
    ),
    "autograd": replace(
        _spec(autograd.run_autograd, "torch autograd", "tf.GradientTape", "AUTOGRAD"),
        claims={**claims.AUTOGRAD, **custom_op.CLAIMS},
    ),
    "lstm": _spec(lstm.run_lstm, "torch nn.LSTM", "Keras LSTM", "LSTM"),
    "graph_mode": _spec(
        graph.run_graph,
        "torch eager",
        "tf eager / tf.function / XLA",
        "GRAPH",
        (256, 1, 10_000),
        tf_first=True,
    ),
    "reduce_sum": _spec(
        reduction.run_reduce_sum,
        "torch.sum",
        "tf.reduce_sum",
        "REDUCE_SUM",
        (300_000, 1, 1_000_000),
    ),
    "control_flow": _spec(
        calculus.run_control_flow,
        "torch autograd",
        "tf eager if / tf.cond",
        "CONTROL_FLOW",
        tf_first=True,
    ),
    "higher_order": _spec(
        calculus.run_higher_order,
        "torch nested autograd.grad",
        "tf nested GradientTape",
        "HIGHER_ORDER",
    ),
    "tolerances": _spec(
        calculus.run_tolerances, "torch.linalg.pinv", "tf.linalg.pinv", "TOLERANCE"
    ),
}


#: the section that states the whole environment (versions, thread pools) once: every row of
#: every section names its own framework's version and thread settings
ENV_SECTION = "softmax"


def compute(op: str, **params: Any) -> Comparison:
    """Run section ``op`` (``dtype`` and ``size`` already checked against what it takes); a
    missing framework makes its rows Unavailable, its claims not checked. Its claims are keyed
    ``op.key`` (`sectioned`)."""
    spec = SECTIONS[op]
    try:
        fw = load()
    except BackendUnavailable as exc:
        section = unavailable(exc, spec.rows)
        env: dict[str, Any] = {}
    else:
        env = fw.env()
        try:
            section = spec.run(fw, **params)
        except FpexploreError:
            raise
        except Exception as exc:  # a framework's kernel raised: say so, check nothing
            section = raised(exc, spec.rows, spec.claims)
    observations = dict(section.observations)
    if env and op == ENV_SECTION:
        observations["versions_threads"] = OBSERVATIONS["versions_threads"].observe(env)
    return Comparison(
        truth=section.truth,
        outcomes=tuple(section.outcomes),
        claims={f"{op}.{k}": c for k, c in section.claims.items()},
        data=section.data,
        explanation=spec.text + "\n\n" + EXPLANATION,
        observations=observations,
        missing=section.missing,
    )


def sectioned(sections: Mapping[str, Spec]) -> dict[str, ClaimSpec]:
    """Every section's claims, each keyed by its section: ``softmax.fix_agrees``."""
    return {
        f"{op}.{key}": replace(c, key=f"{op}.{key}")
        for op, spec in sections.items()
        for key, c in spec.claims.items()
    }


CLAIMS = sectioned(SECTIONS)


def stated(params: Mapping[str, Any]) -> list[ClaimSpec]:
    """The claims of the section ``params["op"]`` names."""
    prefix = f"{params['op']}."
    return [c for key, c in CLAIMS.items() if key.startswith(prefix)]


EXPLANATION = (
    "Both frameworks get the same input bits (and the same weights, copied from torch to "
    "Keras), and both are measured against an mpmath reference of the same mathematics, "
    "certified by recomputing it at a higher precision. Where they disagree, the cause is a "
    "different default or a different formula, not a bug: the one-line change named in the "
    "claims makes them agree, checked in the same run bit for bit or within the stated ULP "
    "bound. Each row names its framework's version and thread settings; the softmax section "
    "states the whole environment once (the observation versions_threads)."
)


def _size(spec: Spec) -> Interval:
    default, low, high = spec.size or (0, 0, 0)  # 0 alone where the op takes no size
    return Interval("size", default, low=low, high=high, integer=True)


def _per_op(name: str, help_text: str, case: Callable[[Spec], Any]) -> Depends:
    """A parameter declared per op: ``case(spec)`` is what that op's section accepts."""
    cases = tuple((op, case(spec)) for op, spec in SECTIONS.items())
    return Depends(name, cases[0][1].default, help_text, on="op", cases=cases)


LESSON = Lesson(
    name="tf_vs_torch",
    title="TensorFlow vs PyTorch: operator defaults, autograd, graph mode and LSTMs",
    summary="The same math on the same bits in torch and TensorFlow/Keras, against mpmath",
    params=(
        Options("op", "softmax", "which operation to compare", choices=tuple(SECTIONS)),
        _per_op(
            "dtype",
            "input format (where the op offers a choice)",
            lambda s: Options("dtype", s.dtypes[0], choices=s.dtypes),
        ),
        _per_op(
            "size",
            "elements / classes / image side / weights (0 where the op takes no size)",
            _size,
        ),
        Interval(
            "length",
            100,
            "sequence length (lstm), chain length (autograd), steps (adam)",
            1,
            1000,
            integer=True,
        ),
        Flag("agree", False, "apply the one-line change that makes the two agree"),
        Flag("torch_compile", False, "graph_mode: also run torch.compile (compiles C++: slow)"),
        Interval("seed", 0, "seed of the inputs and weights", 0, 2**31 - 1, integer=True),
    ),
    compute=compute,
    explanation=EXPLANATION,
    figure=figure,
    data=SectionData,  # each op's own subclass (`.data`), or `NotRun`
    claims=CLAIMS,  # each section's claims, keyed by their section: "softmax.fix_agrees"
    stated_by=stated,
    observations={**OBSERVATIONS, **custom_op.OBSERVATIONS},
)
