"""Distributed reductions: the same gradients all-reduced over 1, 2 or 4 ranks give different
bits; the exact sum; three fixes verified. NCCL on four GPUs shown from a record."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ...figures import WIDTH_IN
from ...params import Interval, Values
from ...result import Claim, Comparison, Observation, Outcome
from .._base import Lesson, declare_texts

if TYPE_CHECKING:
    from .nccl_record import NcclRow

WORLDS = (1, 2, 4)
BATCH = 8
METHODS = {
    "plain": "plain float32 all_reduce",
    "float64": "float64 accumulation",
    "fixed_order": "fixed-order (tree-aligned) reduction",
    "kahan": "Kahan (Neumaier) compensated all-reduce",
}


@dataclass(frozen=True)
class NcclPart:
    """The NCCL record's rows and banner, or why there is no record."""

    rows: list[NcclRow] = field(default_factory=list)
    banner: str = ""
    error: str = ""  # why there is no record, with its fix


@dataclass(frozen=True)
class ReductionData:
    """The gloo sums by method and world size (None without torch) and the NCCL part."""

    nccl: NcclPart
    n: int | None = None
    not_exact: Values | None = None  # elements != exact, by method (`.plain`) and world
    differ: dict[str, int] | None = None  # plain: elements that differ, by pair of worlds
    results: Values | None = None  # float32 sums, by method (`.plain`) and world
    exact: np.ndarray | None = None  # the exact sum, rounded to float32


EXPLANATION = """\
Data-parallel training splits a batch over ranks; each rank sums the per-sample gradients of
its share, and an all-reduce adds the ranks' partial sums. Floating-point addition is not
associative, so the result depends on how the eight per-sample gradients are grouped: one rank
sums all eight in torch's order, two ranks add two partial sums of four, four ranks add four
partial sums of two in the order the all-reduce algorithm picks (gloo and NCCL rings add each
chunk starting at a different rank). The truth is the exact sum of the very same float32
gradients (`fpexplore.truth.sum`, a rational number), rounded to float32 once.

The fixes: (1) a fixed-order reduction — every rank sums its block as a subtree of one fixed
pairwise tree over the whole batch and the roots are combined by the same tree, so the bits do
not depend on the world size; (2) float64 accumulation — the partial sums and the all-reduce in
float64, rounded to float32 once at the end; (3) a Kahan-compensated all-reduce — each rank
keeps a (sum, compensation) pair, the pairs are gathered and combined with Neumaier's
algorithm. (1) is reproducible but no more accurate than a plain sum; (2) and (3) are accurate
to about one rounding.

With two ranks every algorithm computes one addition a + b = b + a, so the result equals the
rank-ordered sum whatever the algorithm; from three ranks on, the order matters. The NCCL part
shows a record made on a machine with four GPUs (NCCL's default algorithm and the Ring and Tree
settings, world sizes 2, 3 and 4), each result compared with the rank-ordered sum, with every
ring order, and with the correctly rounded exact sum. A ring all-reduce adds each chunk of the
vector starting at a different rank, so different elements see different orders; within one
node NCCL's "tree" is a chain, which adds the ranks in one order. (The recorder uses all_reduce
only: the record says nothing about other collectives, such as all_gather, under these settings.)"""


def _grads(torch: Any, n: int, seed: int) -> np.ndarray:
    """Per-sample gradients (BATCH x n, float32) of a squared-error linear model, by autograd."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, n)).astype(np.float32)
    x *= rng.choice(np.float32([1e-3, 1.0, 30.0]), size=(BATCH, 1))  # samples of mixed scale
    y = rng.standard_normal(BATCH).astype(np.float32)
    w0 = (rng.standard_normal(n) / np.sqrt(n)).astype(np.float32)
    w = torch.tensor(w0, requires_grad=True)
    out = np.empty((BATCH, n), dtype=np.float32)
    for i in range(BATCH):
        w.grad = None
        loss = (torch.from_numpy(x[i]) @ w - float(y[i])) ** 2
        loss.backward()
        out[i] = w.grad.numpy()
    return out


@functools.lru_cache(maxsize=4)
def _gloo(n: int, seed: int) -> tuple[np.ndarray, dict[str, Any], str]:
    from ... import backends
    from .launch import launch, require_ok

    torch = backends.load("torch")
    grads = _grads(torch, n, seed)
    job = {"mode": "gradients", "backend": "gloo", "device": "cpu", "groups": list(WORLDS)}
    res = require_ok(launch(job, max(WORLDS), arrays={"grads": grads}), "the gloo all-reduce")
    return grads, res["out"], torch.__version__


#: The claims, as stated before measuring: the gloo ones need torch (run live here), the NCCL
#: ones the "nccl record" (made on a machine with four GPUs).
CLAIMS = declare_texts(
    {
        "world_sizes_differ": "the plain float32 all-reduce gives different bits for world "
        "sizes 1, 2 and 4",
        "plain_not_exact": "at every world size some plain all-reduced elements are not the "
        "correctly rounded exact sum",
        "fixed_order_reproducible": "the fixed-order reduction gives the same bits at every "
        "world size",
        "fixed_order_not_exact": "reproducible is not exact: at every world size some "
        "fixed-order elements are not the correctly rounded exact sum",
        "float64_exact": "float64 accumulation gives the same bits at every world size, each "
        "the correctly rounded exact sum",
        "kahan_faithful": "the compensated all-reduce is within one ULP of the exact sum at "
        "every world size",
        "nccl_two_ranks_rank_ordered": "NCCL with two ranks returns exactly the rank-ordered "
        "sum a + b at every message size, with every algorithm setting that ran (one "
        "addition, which is commutative)",
        "nccl_record_rechecked": "the recorded small-size results, compared again here with "
        "fpexplore.truth's exact sum and with the rank-ordered sum, give the record's own "
        "counts",
    },
    ("torch",),
    {k: ("nccl record",) for k in ("nccl_two_ranks_rank_ordered", "nccl_record_rechecked")},
    test="tests/test_distributed_reduction.py",
)
C = CLAIMS

#: The observations: the gloo ones need torch (run live here), the NCCL ones the record.
OBSERVATIONS = declare_texts(
    {
        "plain_pairs_differ": "elements where the plain all-reduce differs between world sizes",
        "gloo_vs_rank_ordered": "elements where gloo's 4-rank all-reduce equals the rank-ordered "
        "sum ((p0 + p1) + p2) + p3 of the partial sums",
        "kahan_reproducible": "the compensated all-reduce gives the same bits at every world size",
        "nccl_ring_orders": "elements of the 3- and 4-rank NCCL results that equal the float32 "
        "sum in some ring order (rank order or a rotation of it, either direction)",
        "nccl_commonest_order": "the one summation order that matches most elements",
        "nccl_failed": "the NCCL runs that failed, with their error",
        "nccl_differ": "NCCL elements that differ from the rank-ordered sum / from the correctly "
        "rounded exact sum, by algorithm, ranks and size",
    },
    ("nccl record",),
    {k: ("torch",) for k in ("plain_pairs_differ", "gloo_vs_rank_ordered", "kahan_reproducible")},
)
S = OBSERVATIONS


def _nccl_part() -> tuple[NcclPart, dict[str, Claim], dict[str, Observation]]:
    from ...errors import RecordError
    from . import nccl_record

    try:
        path, data = nccl_record.load()
    except RecordError as exc:
        return NcclPart(error=str(exc)), {}, {}
    rows = nccl_record.rows(data)
    ok2 = [r for r in rows if r.ok and r.world == 2]
    p = data["provenance"]
    banner = (
        f"RECORDED NCCL run: {p.get('gpu_count')} x {p.get('gpu_name')}, NCCL {p.get('nccl')}, "
        f"torch {p['torch']}, {p['date'][:10]} — from {path.name}"
    )
    rechecked = nccl_record.recheck_bits(data)
    decided = {
        "nccl_two_ranks_rank_ordered": bool(ok2) and all(r.n_differ_rank_ordered == 0 for r in ok2),
        "nccl_record_rechecked": bool(rechecked)
        and all(
            r["n_differ_exact"] == r["recorded_n_differ_exact"]
            and r["n_differ_rank_ordered"] == r["recorded_n_differ_rank_ordered"]
            for r in rechecked
        ),
    }
    claims = {k: C[k].claim(v) for k, v in decided.items()}
    okw = [r for r in rows if r.ok and r.world > 2]
    obs = {
        "nccl_ring_orders": S["nccl_ring_orders"].observe(
            f"{sum(r.n_explained_by_some_order for r in okw)} of {sum(r.n for r in okw)}",
        )
    }
    largest = max(data["settings"]["sizes"])
    best = {}
    for r in okw:
        if r.size == largest:
            order, count = max(r.n_equal_order.items(), key=lambda kv: kv[1])
            best[f"{r.algo}, {r.world} ranks"] = f"{order}: {count / r.n:.1%}"
    obs["nccl_commonest_order"] = S["nccl_commonest_order"].observe(
        best, measured=f", at {largest} floats"
    )
    ends = (min(data["settings"]["sizes"]), largest)
    if failed := {f"{r.algo}, {r.world} ranks": r.error[:200] for r in rows if not r.ok}:
        obs["nccl_failed"] = S["nccl_failed"].observe(failed)
    obs["nccl_differ"] = S["nccl_differ"].observe(
        {
            f"{r.algo}, {r.world} ranks, {r.size} floats": f"{r.n_differ_rank_ordered}"
            f" / {r.n_differ_exact} of {r.n}"
            for r in rows
            if r.ok and r.size in ends
        }
    )
    return NcclPart(rows, banner), claims, obs


def compute(n: int, seed: int) -> Comparison:
    from ... import truth
    from ...errors import BackendUnavailable

    nccl, nccl_claims, nccl_obs = _nccl_part()
    missing = {"torch": "", "nccl record": nccl.error}
    done = functools.partial(Comparison, explanation=EXPLANATION, missing=missing)
    try:
        grads, out, version = _gloo(n, seed)
    except BackendUnavailable as exc:
        missing["torch"] = reason = str(exc)
        outcomes = tuple(
            Outcome.missing(f"gloo all_reduce, {w} rank(s)", "torch", reason) for w in WORLDS
        )
        return done(
            outcomes=outcomes, claims=nccl_claims, data=ReductionData(nccl), observations=nccl_obs
        )
    t = truth.sum(grads, axis=0)
    exact = np.asarray(t.round("float32"), dtype=np.float32)
    res = Values(
        (m, {w: np.asarray(out[str(w)][m], dtype=np.uint32).view(np.float32) for w in WORLDS})
        for m in (*METHODS, "rank_ordered")
    )
    bits = {m: {w: v.view(np.uint32) for w, v in by_world.items()} for m, by_world in res.items()}
    outcomes = [
        Outcome.measured(
            f"{label}, {w} rank(s)",
            "torch",
            res[m][w],
            t,
            version=version,
            settings={"world size": w, "method": m, "backend": "gloo"},
        )
        for m, label in METHODS.items()
        for w in WORLDS
    ]

    def same(m: str) -> bool:
        return all(np.array_equal(bits[m][w], bits[m][1]) for w in WORLDS)

    def n_not_exact(m: str, w: int) -> int:
        return int((bits[m][w] != exact.view(np.uint32)).sum())

    kahan_ok = all(o.error.faithful for o in outcomes if o.settings["method"] == "kahan")
    decided = {
        "world_sizes_differ": not same("plain"),
        "plain_not_exact": all(n_not_exact("plain", w) > 0 for w in WORLDS),
        "fixed_order_reproducible": same("fixed_order"),
        "fixed_order_not_exact": all(n_not_exact("fixed_order", w) > 0 for w in WORLDS),
        "float64_exact": same("float64") and n_not_exact("float64", 1) == 0,
        "kahan_faithful": kahan_ok,
    }
    claims = {k: C[k].claim(v) for k, v in decided.items()} | nccl_claims
    counts = Values((m, {w: n_not_exact(m, w) for w in WORLDS}) for m in METHODS)
    differ = {
        f"{a} vs {b}": int((bits["plain"][a] != bits["plain"][b]).sum())
        for a, b in ((1, 2), (1, 4), (2, 4))
    }
    obs = {
        "plain_pairs_differ": S["plain_pairs_differ"].observe(differ, measured=f" (of {n})"),
        "gloo_vs_rank_ordered": S["gloo_vs_rank_ordered"].observe(
            int((bits["plain"][4] == bits["rank_ordered"][4]).sum())
        ),
        "kahan_reproducible": S["kahan_reproducible"].observe(same("kahan")),
        **nccl_obs,
    }
    data = ReductionData(nccl, n, counts, differ, res, exact)
    return done(truth=t, outcomes=tuple(outcomes), claims=claims, data=data, observations=obs)


def figure(comparison: Comparison) -> Any:
    """Left: elements that are not the correctly rounded exact sum, per method and world size
    (gloo, live). Right: the NCCL record, elements that differ from the rank-ordered sum."""
    import matplotlib.pyplot as plt

    d = comparison.data
    # one panel above the other: readable in a notebook 1000 px wide with the sidebar open
    fig, axes = plt.subplots(2, 1, figsize=(WIDTH_IN, 7.5))
    ax = axes[0]
    if d.not_exact is not None:
        width = 0.2
        tallest = 0
        for i, m in enumerate(METHODS):
            ys = [d.not_exact[m][w] for w in WORLDS]
            tallest = max(tallest, *ys)
            label = METHODS[m] + (" (0 everywhere)" if not any(ys) else "")
            ax.bar(np.arange(len(WORLDS)) + (i - 1.5) * width, ys, width, label=label)
        ax.set_xticks(range(len(WORLDS)), [f"{w} rank(s)" for w in WORLDS])
        ax.set_ylabel(f"elements ≠ exact sum (of {d.n})")
        # the legend sits in headroom above the tallest bar, never over a bar
        ax.set_ylim(0, max(tallest, 1) * 1.9)
        ax.legend(fontsize=8, loc="upper left", frameon=False)
    ax.set_title("gloo on this CPU (live)", fontsize=10)
    ax = axes[1]
    rows = [r for r in d.nccl.rows if r.ok]
    curves = {
        (algo, w): sorted(
            (r.size, r.n_differ_rank_ordered / r.n) for r in rows if r.algo == algo and r.world == w
        )
        for algo in sorted({r.algo for r in rows})
        for w in sorted({r.world for r in rows})
    }
    drawn: dict[tuple[int, tuple], list[str]] = {}  # identical curves drawn once, named together
    for (algo, w), pts in curves.items():
        if pts:
            drawn.setdefault((w, tuple(pts)), []).append(algo)
    for (w, pts), algos in drawn.items():
        ax.semilogx(*zip(*pts, strict=True), marker="o", label=f"{' = '.join(algos)}, {w} ranks")
    ax.set_xlabel("message size (float32 elements)")
    ax.set_ylabel("fraction ≠ rank-ordered sum")
    ax.set_title(d.nccl.banner or "no NCCL record", fontsize=8, wrap=True)
    if rows:  # below the axes, which keep the figure's width
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    fig.tight_layout()
    return fig


LESSON = Lesson(
    name="distributed_reduction",
    title="Distributed reductions: the world size changes the bits",
    summary="the same gradients all-reduced with torch.distributed over 1, 2 and 4 ranks, "
    "against the exact sum; fixed-order, float64 and compensated fixes; NCCL from a record",
    params=(
        Interval(
            "n", 4096, "gradient length (parameters)", low=64, high=65536, integer=True, log=True
        ),
        Interval("seed", 0, "seed of the gradients", low=0, high=10_000, integer=True),
    ),
    compute=compute,
    claims=CLAIMS,
    observations=OBSERVATIONS,
    explanation=EXPLANATION,
    figure=figure,
    data=ReductionData,
    quick={"n": 256},
)
