"""Lesson: the order of additions. np.sum, torch.sum, tf.reduce_sum, DJL and a Java loop add
the same floats in different orders, so they round differently; an emulator of each order
reproduces each framework's result bit for bit, and the exact sum says who is closest."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ...errors import FpexploreError, WorkerError
from ...memo import Memo
from ...params import Interval, Options
from ...result import Claim, Comparison, Observation, Outcome
from .._base import Lesson, declare_texts, missing_part
from .._gpu.recording import GpuExperiment, GpuSession
from . import bounds, growth, layout, structure
from .inputs import ALLEQUAL_VALUE, DESCRIPTIONS, DISTRIBUTIONS, DTYPES, bits, in_format, make_input

#: (outcome name, backend, the emulator that models it, its key: the name in its claims'
#: keys and of its runner, ``frameworks.run_<key>``)
FRAMEWORKS = (
    ("np.sum", "numpy", "numpy", "numpy"),
    ("torch.sum", "torch", "torch", "torch"),
    ("tf.reduce_sum", "tensorflow", "tensorflow", "tensorflow"),
    ("DJL NDArray.sum", "djl", "torch", "djl"),
    ("Java float loop", "djl", "java", "java"),
)
RECORDED = "torch.sum (CUDA, recorded)"
REFERENCE = "exact sum, correctly rounded"
#: orders that cost far more than the vectorized ones, run only up to SLOW_LIMIT elements
SLOW_ORDERS = {
    "kahan": "a Python loop per element",
    "sorted": "a sort",
    "sorted_desc": "a sort",
}
SLOW_LIMIT = 20_000
#: the emulators whose thread count follows a framework's (order name -> framework outcome)
_THREADED = {"torch": "torch.sum", "tensorflow": "tf.reduce_sum"}

EXPLANATION = """\
Floating-point addition is not associative: every addition rounds, so the result depends on
the order in which the terms are added. Each framework has its own order. np.sum adds in
pairwise blocks of 128 with eight interleaved accumulators; torch.sum splits the array into
vector lanes and a cascade of partial sums (and, from 32768 elements on, across threads);
tf.reduce_sum uses Eigen's tree of packets (and shards across its intra-op threads); a Java
loop adds strictly left to right. The error of a left-to-right sum grows like n·u (u the unit
roundoff), that of a pairwise tree like log2(n)·u, which is why a plain loop is the least
accurate on long arrays. The emulators replay each order with numpy and reproduce the
frameworks' results to the last bit, which is how we know the order is the whole story.
"""


@dataclasses.dataclass(frozen=True)
class SummationData:
    """One sum's findings; ``growth`` (the error curves) is computed on first access."""

    explained_by: dict[str, list[str]]  # per framework result: the emulators with its bits
    running_sum: dict[str, float]  # the Java loop against its running-sum bound (`bounds`)
    low_precision: dict[str, float]  # float16/bfloat16: the numbers behind their bounds
    tree_depth: dict[str, int]  # additions on the longest path: a loop's, np.sum's, its bound
    threads_split: dict[str, Any]  # torch on two threads or more (`structure.threads_findings`)
    current: growth.Point  # this run's errors, the figure's markers
    curves: Callable[[], growth.Growth] = dataclasses.field(repr=False, compare=False)
    layout: layout.Layout | None = None  # None without torch
    residual: layout.Residual | None = None  # None without torch

    @functools.cached_property
    def growth(self) -> growth.Growth:
        """The error-growth curves (`growth.curves`), seconds to compute the first time."""
        return self.curves()


def _same_bits(a: Any, b: Any) -> bool:
    return bits(a) == bits(b)


#: the frameworks whose runner takes the thread count; the others give the same result for any count
_THREAD_RUNNERS = ("torch", "tensorflow", "djl")


class _Input:
    """One input array (distribution, n, dtype, seed) and the work that depends on it alone:
    its exact sum, the measured errors, each framework's result per thread count and each
    emulator's result per thread count. Kept for the last few inputs (`_INPUTS`), so a change
    of threads (or moving a control back) reruns only what depends on it."""

    def __init__(self, distribution: str, n: int, dtype: str, seed: int) -> None:
        from ... import truth as truth_mod

        self.x = make_input(distribution, n, dtype, seed)
        self.truth = truth_mod.sum(self.x)
        self.errors: dict[tuple[str, int], Any] = {}  # (dtype, bits) -> measured error
        self.ran: dict[tuple[str, int], Any] = {}  # (key, threads) -> Ran or FpexploreError
        self.emulated: dict[tuple[str, int], Any] = {}  # (order, threads) -> value or error
        self.recorded: Outcome | None = None

    def measure(self, name: str, backend: str, value: Any, **kw: Any) -> Outcome:
        """`Outcome.measured`, measuring each distinct result once (many orders agree)."""
        from ... import metrics

        key = (np.asarray(value).dtype.name, bits(value))
        if key not in self.errors:
            self.errors[key] = metrics.measure(value, self.truth)
        return Outcome(name, backend, value=value, error=self.errors[key], **kw)

    def run(self, framework: str, threads: int) -> Any:
        """A framework's `Ran` (or the `FpexploreError` it raised), run once per thread count."""
        from . import frameworks as fw

        key = (framework, threads if framework in _THREAD_RUNNERS else 1)
        if key not in self.ran:
            fn = getattr(fw, f"run_{framework}")
            try:
                self.ran[key] = fn(self.x, threads) if framework in _THREAD_RUNNERS else fn(self.x)
            except FpexploreError as exc:  # BackendUnavailable (with its fix), WorkerError
                return exc  # not kept: a fix applied in the meantime is seen on the next run
        return self.ran[key]

    def emulate(self, order: str, threads: int) -> Any:
        """``orders.emulate(x, order, threads)`` (or the `FpexploreError` it raised), once."""
        from ... import orders

        key = (order, threads)
        if key not in self.emulated:
            try:
                self.emulated[key] = orders.emulate(self.x, order, threads=threads)
            except FpexploreError as exc:  # NotEmulated / InvalidInput: refused, never guessed
                self.emulated[key] = exc
        return self.emulated[key]


_TEST = "tests/test_summation_order.py"
#: The claims, as stated before measuring. Each emulator claim needs its framework and that
#: framework's run on this input (f"{framework} run": DJL and Java take no half formats); the
#: layout claims need torch, the bounds theirs (`bounds.CLAIMS`). The rest are stated where the
#: run meets their case (the all-equal input, an exact sum, torch on threads).
CLAIMS = declare_texts(
    {
        f"{key}_emulated": f"emulate(x, {em!r}) reproduces {name} bit for bit"
        for name, _backend, em, key in FRAMEWORKS
    },
    (),
    {f"{key}_emulated": (key, f"{key} run") for *_, key in FRAMEWORKS},
    test=_TEST,
)
CLAIMS |= (
    layout.CLAIMS
    | declare_texts(
        {
            "rounded_is_best": (
                "no framework is closer to the exact sum than the correctly rounded sum, which "
                "is within half an ULP of it",
                " ({best:.3f} ULP)",
            ),
            "truth_not_nominal": (
                "the exact sum of all-equal inputs is not n × the decimal value",
                ": not {nominal:g} = {n} × {value}, as {dtype}({value}) is not exactly {value}",
            ),
        },
        test=_TEST,
        occasional=True,
    )
    | {s.key: s for s in (structure.TREE_DEPTH, structure.THREADS_SPLIT)}
    | bounds.CLAIMS
)


#: inputs up to this size are kept in `_INPUTS` (a float64 input of this size is 8 MB)
_KEEP_LIMIT = 1_000_000
_INPUTS = Memo(keep=6)
#: the layout and residual claims by seed (they do not depend on the summed input)
_LAYOUT = Memo(keep=6)


@dataclasses.dataclass(frozen=True)
class _LayoutFindings:
    """`layout`'s claims, observations and data for one seed, and why a part was missing."""

    claims: dict[str, Claim]
    observations: dict[str, Observation]
    found: layout.Layout | None = None
    residual: layout.Residual | None = None
    why: dict[str, str] = dataclasses.field(default_factory=dict)


def _layout_claims(seed: int) -> _LayoutFindings:
    """Storage offsets, strides and a residual block's association orders (torch)."""
    from ... import backends

    if missing_part(("torch",)):
        return _LayoutFindings({}, {})
    torch = backends.load("torch")
    why: dict[str, str] = {}
    strict_why = layout.strict_missing(torch)
    try:
        c1, observed, found = layout.layout_claims(torch, seed, strict=True)
    except WorkerError as exc:  # the fresh process under MKL_CBWR could not run
        strict_why = f"{layout.STRICT_PART}: {exc}. Fix: run `fpexplore doctor`"
        c1, observed, found = layout.layout_claims(torch, seed, strict=False)
    if strict_why:
        why[layout.STRICT_PART] = strict_why
    c2, residual = layout.residual_claims(torch, seed)
    return _LayoutFindings({**c1, **c2}, observed, found, residual, why)


def _input(distribution: str, n: int, dtype: str, seed: int) -> _Input:
    if n > _KEEP_LIMIT:
        return _Input(distribution, n, dtype, seed)
    key = (distribution, int(n), dtype, int(seed))
    return _INPUTS.get(key, lambda: _Input(distribution, n, dtype, seed))


#: why a JVM runner takes no float16/bfloat16
_NO_HALF = {
    "djl": "DJL's transfer carries float32/float64 only",
    "java": "Java has no float16/bfloat16 arithmetic type",
}


def _framework_outcomes(inp: _Input, threads: int) -> tuple[list[Outcome], dict[str, Any]]:
    """Every framework's outcome (run now, or earlier for this input and thread count) and
    each one's thread count."""
    x, measure = inp.x, inp.measure
    outcomes, ran_threads = [], {}
    for name, backend, _emulator, key in FRAMEWORKS:
        if key in _NO_HALF and x.dtype.itemsize == 2:
            why = f"{_NO_HALF[key]}; choose dtype float32 or float64 to run it."
            outcomes.append(Outcome.missing(name, backend, f"not run for {x.dtype.name}: {why}"))
            continue
        ran = inp.run(key, threads)
        if isinstance(ran, FpexploreError):
            outcomes.append(Outcome.missing(name, backend, str(ran)))
            continue
        ran_threads[name] = ran.threads
        outcomes.append(
            measure(
                name, backend, ran.value, version=ran.version, settings=ran.settings, note=ran.note
            )
        )
    return outcomes, ran_threads


def _emulator_outcomes(inp: _Input, threads: int, ran_threads: dict[str, int]) -> list[Outcome]:
    from ... import orders

    x, measure = inp.x, inp.measure
    outcomes = []
    for order in orders.names():
        t = ran_threads.get(_THREADED[order], threads) if order in _THREADED else 1
        name = f"emulate {order}"
        if order in SLOW_ORDERS and x.size > SLOW_LIMIT:
            value: Any = FpexploreError(
                f"skipped for n > {SLOW_LIMIT} ({SLOW_ORDERS[order]}, too slow to run "
                f"live); fpexplore.orders.emulate(x, {order!r}) runs it"
            )
        else:
            value = inp.emulate(order, t)
        if isinstance(value, FpexploreError):
            outcomes.append(Outcome.missing(name, "fpexplore.orders", str(value), kind="emulator"))
            continue
        outcomes.append(
            measure(
                name,
                "fpexplore.orders",
                value,
                kind="emulator",
                settings={"threads": t, "order": orders.describe(order)},
            )
        )
    return outcomes


OBSERVATIONS = declare_texts(
    {
        "frameworks_differ": "distinct results (bit patterns) among the stacks that ran",
        "some_framework_inexact": "stacks that miss the correctly rounded exact sum",
        **layout.OBSERVED,
    },
    ("torch",),
    {"frameworks_differ": (), "some_framework_inexact": ()},
) | {structure.THREADS_CHANGE_BITS.key: structure.THREADS_CHANGE_BITS}


def _agreement(x: np.ndarray, outcomes: list[Outcome]) -> dict[str, Observation]:
    """How many distinct results the frameworks gave, and how many miss the correctly
    rounded sum: facts about this input and this machine's paths (one value, or values whose
    every order rounds alike, make them all agree), so observations, never claims."""
    ran = [o for o in outcomes if o.kind in ("framework", "recorded") and o.ran]
    by_name = {o.implementation: o for o in outcomes}
    ref = by_name[REFERENCE].value if REFERENCE in by_name else None
    inexact = [
        o.implementation
        for o in ran
        if ref is not None and not _same_bits(o.value, in_format(ref, x.dtype))
    ]
    return {
        "frameworks_differ": OBSERVATIONS["frameworks_differ"].observe(
            len({bits(o.value) for o in ran}), measured=f" ({len(ran)} ran)"
        ),
        "some_framework_inexact": OBSERVATIONS["some_framework_inexact"].observe(
            len(inexact), measured=f": {', '.join(inexact)}" if inexact else ""
        ),
    }


def _claims(
    x: np.ndarray, distribution: str, n: int, dtype: str, truth: Any, outcomes: list[Outcome]
) -> dict[str, Claim]:
    by_name = {o.implementation: o for o in outcomes}
    claims: dict[str, Claim] = {}
    for name, _backend, emulator, key in FRAMEWORKS:
        fw, em = by_name.get(name), by_name.get(f"emulate {emulator}")
        if fw is None or em is None or not fw.ran or not em.ran:
            continue  # not checked through `Lesson.run`: `_missing` says why
        t = em.settings.get("threads", 1)
        claims[f"{key}_emulated"] = CLAIMS[f"{key}_emulated"].claim(
            _same_bits(in_format(em.value, x.dtype), fw.value), f" (threads={t})"
        )
    ran = [o for o in outcomes if o.kind in ("framework", "recorded") and o.ran]
    ran = [o for o in ran if np.isfinite(float(o.value))]
    best = _ulp(by_name.get(REFERENCE))
    if ran and best is not None:
        claims["rounded_is_best"] = CLAIMS["rounded_is_best"].claim(
            best <= 0.5 and all(e is None or e >= best for e in map(_ulp, ran)), best=best
        )
    if distribution == "allequal" and n > 0 and truth.exact is not None:
        nominal = Fraction(n) * Fraction(str(ALLEQUAL_VALUE))
        claims["truth_not_nominal"] = CLAIMS["truth_not_nominal"].claim(
            truth.exact != nominal, nominal=float(nominal), n=n, value=ALLEQUAL_VALUE, dtype=dtype
        )
    return claims


def _ulp(o: Outcome | None) -> float | None:
    """|error| in ULPs of a scalar outcome, None when it has no finite one."""
    u = o.error.ulp_scalar if o is not None and o.error is not None else None
    return abs(u) if u is not None and np.isfinite(u) else None


def _missing(outcomes: list[Outcome]) -> dict[str, str]:
    """Why a framework's run (f"{framework} run") is missing here: its row's or its
    emulator's reason ("" where both ran)."""
    by_name = {o.implementation: o for o in outcomes}
    why = {}
    for name, _backend, emulator, key in FRAMEWORKS:
        rows = (by_name.get(name), by_name.get(f"emulate {emulator}"))
        why[f"{key} run"] = "; ".join(o.unavailable for o in rows if o and not o.ran)
    return why


def _explained(outcomes: list[Outcome], dtype: np.dtype) -> dict[str, list[str]]:
    """For each framework (and recorded) result, the emulators that give the same bits."""
    emulators = [o for o in outcomes if o.kind == "emulator" and o.ran]
    out = {}
    for o in outcomes:
        if o.kind in ("framework", "recorded") and o.ran:
            out[o.implementation] = [
                e.implementation.removeprefix("emulate ")
                for e in emulators
                if _same_bits(in_format(e.value, dtype), o.value)
            ]
    return out


def compute(distribution: str, n: int, dtype: str, threads: int, seed: int) -> Comparison:
    """Sum one array with every framework, every emulator and exactly; see the module doc."""
    from . import recorded

    inp = _input(distribution, n, dtype, seed)
    x, truth, measure = inp.x, inp.truth, inp.measure
    frameworks, ran_threads = _framework_outcomes(inp, threads)
    emulators = _emulator_outcomes(inp, threads, ran_threads)
    if inp.recorded is None:
        inp.recorded = recorded.outcome(RECORDED, x, truth)
    rounded = truth.round(dtype)
    reference = measure(
        REFERENCE,
        "fpexplore.truth",
        in_format(rounded, x.dtype),
        kind="reference",
        note="the best any order can give in this format",
    )
    outcomes = [*frameworks, inp.recorded, reference, *emulators]
    explained = _explained(outcomes, x.dtype)
    outcomes = [_with_explanation(o, explained) for o in outcomes]
    claims = _claims(x, distribution, n, dtype, truth, outcomes)
    by_name = {o.implementation: o for o in outcomes}
    exact = truth.exact if isinstance(truth.exact, Fraction) else None
    why: dict[str, str] = {}  # the bounds that could not be decided, by part (`Lesson.run`)
    bound_claims, java_numbers, low_numbers = bounds.claims(x, dtype, exact, by_name, why)
    claims.update(bound_claims)
    claims.update(structure.depth_claim(n))
    split_claims, observations, split_numbers = _threads_findings(inp, by_name)
    observations = {**_agreement(x, outcomes), **observations}
    claims.update(split_claims)
    lay = _LAYOUT.get(seed, lambda: _layout_claims(seed))
    claims.update(lay.claims)
    observations |= lay.observations
    why |= lay.why
    data = SummationData(
        explained_by=explained,
        running_sum=java_numbers,
        low_precision=low_numbers,
        tree_depth={
            "sequential": max(n - 1, 0),
            "numpy": structure.numpy_depth(n) if n else 0,
            "numpy bound": structure.numpy_depth_bound(n) if n else 0,
        },
        threads_split=split_numbers,
        current=growth.point(
            x, truth, outcomes, {n: f"emulate {em}" for n, _b, em, _r in FRAMEWORKS}
        ),
        curves=functools.partial(growth.curves, distribution, dtype, threads),
        layout=lay.found,
        residual=lay.residual,
    )
    text = (
        f"{n} values, {DESCRIPTIONS[distribution]}, in {dtype}; {threads} thread(s) asked "
        "for.\n" + EXPLANATION
    )
    missing = _missing(outcomes) | why
    return Comparison(
        truth=truth,
        outcomes=tuple(outcomes),
        claims=claims,
        data=data,
        explanation=text,
        observations=observations,
        missing=missing,
    )


def _threads_findings(inp: _Input, by_name: dict[str, Outcome]) -> tuple[Any, Any, Any]:
    """`structure.threads_findings` for torch.sum, when it ran on two threads or more."""
    torch_, emulated = by_name.get("torch.sum"), by_name.get("emulate torch")
    if not (torch_ and torch_.ran and emulated and emulated.ran):
        return {}, {}, {}
    single = inp.emulate("torch", 1)
    if emulated.settings["threads"] < 2 or isinstance(single, FpexploreError):
        return {}, {}, {}
    dtype = inp.x.dtype
    split, single = in_format(emulated.value, dtype), in_format(single, dtype)
    return structure.threads_findings(inp.x, torch_, split, single)


def _with_explanation(o: Outcome, explained: dict[str, list[str]]) -> Outcome:
    """The outcome with a note saying which emulators give a framework's bits, or which
    frameworks give an emulator's (what the order is: ``settings["order"]``)."""
    if o.kind == "emulator" and o.ran:
        order = o.implementation.removeprefix("emulate ")
        matched = [name for name, emulators in explained.items() if order in emulators]
        note = ("same bits as " + ", ".join(matched)) if matched else "no framework's bits"
        return dataclasses.replace(o, note=note)
    if o.implementation not in explained:
        return o
    names = explained[o.implementation]
    said = ("same bits as emulator: " + ", ".join(names)) if names else "no emulator matches"
    note = f"{o.note.rstrip('.')}; {said}" if o.note else said
    return dataclasses.replace(o, note=note)


def figure(comparison: Comparison) -> Any:
    """Error growth against n (log-log) with the textbook bounds and this run's results."""
    from . import plot as _summation_plot

    return _summation_plot.draw(comparison)


def record_gpu(s: GpuSession) -> dict[str, Any]:
    """The sums on the session's device."""
    from .experiment import run_sums

    return run_sums(s.device, quick=s.quick)


LESSON = Lesson(
    name="summation_order",
    title="Summation order: why np.sum, torch.sum, tf.reduce_sum and Java disagree",
    summary="The same floats summed by numpy, torch, TensorFlow, DJL and Java, explained bit "
    "for bit by order emulators and measured against the exact sum.",
    params=(
        Options("distribution", "allequal", "what the values look like", DISTRIBUTIONS),
        Interval("n", 10_000, "how many values", low=1, high=10_000_000, integer=True, log=True),
        Options("dtype", "float32", "the float format of the values", DTYPES),
        Options("threads", 1, "CPU threads for torch, TensorFlow and DJL", (1, 2)),
        Interval("seed", 0, "random seed of the values", low=0, high=1_000_000, integer=True),
    ),
    compute=compute,
    claims=CLAIMS,
    observations=OBSERVATIONS,
    explanation=EXPLANATION,
    figure=figure,
    quick={"n": 1000},
    data=SummationData,
    gpu_experiment=GpuExperiment("sum", record_gpu, seed="per case"),
)
