"""The recorded cards side by side: which record to show, and what differs between two cards
(provenance, and experiment by experiment: equal bits, run-to-run spreads, timings)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import records
from .._base import ClaimSpec

#: what differs from another recorded card, shown beside a recorded run (`other_card`)
OTHER_CARD = ClaimSpec(
    "other_card",
    "what differs from the newest record of another card",
    applies="where a recorded GPU run is shown and another card is recorded",
)

#: provenance fields worth comparing between two cards
CARD_FIELDS = (
    "gpu_name",
    "compute_capability",
    "sm_count",
    "total_memory_bytes",
    "driver",
    "cuda",
    "cudnn",
    "torch",
)


def choices() -> list[tuple[str, str]]:
    """(label, record key) for every recorded run, newest first; the key is the file stem,
    accepted by the lessons' ``record`` parameter."""
    recs = ((records.load(path), path.stem) for path in records.available())
    return [(f"{rec.card} (recorded {rec.date})", stem) for rec, stem in recs]


Key = tuple[Any, ...]  # a row's identity: (op, case, output, config), or (op, size, mode)


@dataclass(frozen=True)
class DeterminismDiff:
    """The determinism rows both cards ran (raised rows left out), keyed by `Key`."""

    compared: int
    deterministic_on_both: int
    same_bits: int  # of those deterministic on both
    different_bits: list[Key]
    varies_on_both: int
    varies_only_on: dict[str, list[Key]]  # by card
    distinct_counts_differ: list[tuple[Key, int, int]]
    counts_differ_where_both_vary: bool
    raises_same: bool  # the same ops raise under use_deterministic_algorithms(True)


@dataclass(frozen=True)
class Tf32Diff:
    """The TF32 rows both cards ran: errors (bits of the sampled outputs) and timings."""

    compared: int
    same_error: int
    different_error: list[Key]
    median_time_ratio: dict[str, float]  # second card / first, by op
    largest_matmul: int | None
    largest_matmul_time_ratio: dict[str, float]  # by mode


@dataclass(frozen=True)
class Differences:
    """What differs between two recorded cards, experiment by experiment."""

    cards: tuple[str, str]
    files: tuple[str, str]
    card_fields: list[tuple[str, Any, Any]]  # (provenance field, first, second) that differ
    determinism: DeterminismDiff
    tf32: Tf32Diff
    cpu_vs_accelerator: dict[str, dict[str, bool]]  # accelerator mode -> op -> same bits
    rng_same: bool  # torch.cuda's random streams
    sums_same: dict[str, bool]  # torch.sum on CUDA, by case


def _ran(rec: records.Record, name: str, row: Any, key: Callable[[Any], Key]) -> dict[Key, Any]:
    """The rows of experiment ``name`` that ran (typed as ``row``), by ``key``."""
    rows = map(row.from_dict, rec.experiments[name]["rows"])
    return {key(r): r for r in rows if not r.raised}


def _determinism(a: records.Record, b: records.Record) -> DeterminismDiff:
    """Same bits where both were deterministic; spreads that differ."""
    from ..gpu_determinism.rows import Probe, Row

    da, db = (
        _ran(r, "determinism", Row, lambda r: (r.op, r.case, r.output, r.config)) for r in (a, b)
    )
    both = sorted(set(da) & set(db))
    stable = [k for k in both if da[k].distinct == 1 and db[k].distinct == 1]
    same_bits = [k for k in stable if da[k].digests[0] == db[k].digests[0]]
    spread = [(k, da[k].distinct, db[k].distinct) for k in both]
    varies_a = {k for k, x, _ in spread if x > 1}
    varies_b = {k for k, _, y in spread if y > 1}
    raises_a, raises_b = (
        {p.op for p in map(Probe.from_dict, r.experiments["determinism"]["raises"]) if p.raised}
        for r in (a, b)
    )
    return DeterminismDiff(
        compared=len(both),
        deterministic_on_both=len(stable),
        same_bits=len(same_bits),
        different_bits=[k for k in stable if k not in same_bits],
        varies_on_both=len(varies_a & varies_b),
        varies_only_on={a.card: sorted(varies_a - varies_b), b.card: sorted(varies_b - varies_a)},
        distinct_counts_differ=[(k, x, y) for k, x, y in spread if x != y],
        counts_differ_where_both_vary=all(x > 1 and y > 1 for _, x, y in spread if x != y),
        raises_same=raises_a == raises_b,
    )


def _tf32(a: records.Record, b: records.Record) -> Tf32Diff:
    """Errors (bits of the sampled outputs) and timings of the rows both cards ran."""
    from ..tf32.rows import Row

    ta, tb = (_ran(r, "tf32", Row, lambda r: (r.op, r.size, r.mode)) for r in (a, b))
    keys = sorted(set(ta) & set(tb))
    same_err = [k for k in keys if ta[k].rel_error == tb[k].rel_error]
    ratios = {
        op: [tb[k].ms / ta[k].ms for k in keys if k[0] == op and ta[k].ms > 0]
        for op in ("matmul", "conv2d")
    }
    big = max(k[1] for k in keys if k[0] == "matmul") if keys else None
    big_ratio = {
        k[2]: tb[k].ms / ta[k].ms for k in keys if k[0] == "matmul" and k[1] == big and ta[k].ms > 0
    }
    return Tf32Diff(
        compared=len(keys),
        same_error=len(same_err),
        different_error=[k for k in keys if k not in same_err],
        median_time_ratio={op: float(np.median(r)) if r else np.nan for op, r in ratios.items()},
        largest_matmul=big,
        largest_matmul_time_ratio=big_ratio,
    )


def _accelerator(a: records.Record, b: records.Record) -> dict[str, dict[str, bool]]:
    """Per accelerator mode both cards ran: which results have the same bits on both."""
    from ..cpu_vs_accelerator.experiment import Side

    def bits(rec: records.Record) -> dict[str, dict[str, Any]]:
        sides = map(Side.from_json, rec.experiments["cpu_vs_accelerator"]["sides"])
        return {
            s.mode: {
                "sum_uniform": s.sum_uniform_bits,
                "sum_tenthousand": s.sum_tenthousand_bits,
                "chain": (s.chain.dtype, s.chain.shape, s.chain.tobytes()),
                "conv": s.conv_digest,
            }
            for s in sides
            if s.device != "cpu"
        }

    sa, sb = bits(a), bits(b)
    both = sorted(set(sa) & set(sb))
    return {mode: {k: v == sb[mode][k] for k, v in sa[mode].items()} for mode in both}


def _rng_same(ra: dict[str, Any], rb: dict[str, Any]) -> bool:
    """torch.cuda's random streams give the same bits for every seed both recorded."""
    return all(
        ra[key].get(str(s)) == rb[key].get(str(s))
        for key in ("cuda_rand_bits", "cuda_randn_bits")
        for s in ra["seeds"]
        if str(s) in rb[key]
    )


def differences(a: records.Record, b: records.Record) -> Differences:
    """What differs between the records ``a`` and ``b``, experiment by experiment."""
    pa, pb = a.provenance, b.provenance
    ea, eb = a.experiments, b.experiments
    ca, cb = ({c["name"]: c["cuda_bits"] for c in e["sum"]["cases"]} for e in (ea, eb))
    return Differences(
        cards=(a.card, b.card),
        files=(a.path.name, b.path.name),
        card_fields=[(k, pa.get(k), pb.get(k)) for k in CARD_FIELDS if pa.get(k) != pb.get(k)],
        determinism=_determinism(a, b),
        tf32=_tf32(a, b),
        cpu_vs_accelerator=_accelerator(a, b),
        rng_same=_rng_same(ea["rng"], eb["rng"]),
        sums_same={n: ca[n] == cb[n] for n in sorted(set(ca) & set(cb))},
    )


def summary(d: Differences) -> list[str]:
    """The differences as sentences, every number taken from ``d``."""
    a, b = d.cards
    lines = []
    if d.card_fields:
        lines.append(
            "hardware and software that differ: "
            + "; ".join(f"{k} {x} vs {y}" for k, x, y in d.card_fields)
        )
    same = [k for k in CARD_FIELDS if k not in {f for f, _, _ in d.card_fields}]
    if same:
        lines.append("the same on both: " + ", ".join(same))
    det = d.determinism
    text = (
        f"determinism: of {det.deterministic_on_both} results deterministic on both cards, "
        f"{det.same_bits} have the same bits on both; "
        f"{det.varies_on_both} vary from run to run on both"
    )
    if det.distinct_counts_differ:
        text += (
            f"; {len(det.distinct_counts_differ)} gave a different number of distinct "
            "results in the recorded runs"
        )
        if det.counts_differ_where_both_vary:
            text += (
                " (all of them vary on both cards: how many distinct results a few runs "
                "give is itself random)"
            )
    lines.append(text + ("; the same ops raise" if det.raises_same else "; different ops raise"))
    tf = d.tf32
    ratio = tf.median_time_ratio
    lines.append(
        f"TF32/autocast errors: {tf.same_error} of {tf.compared} rows identical; "
        f"run time on the {b} over that on the {a}: median {ratio['matmul']:.2f}x (matmul), "
        f"{ratio['conv2d']:.2f}x (conv2d)"
    )
    acc = d.cpu_vs_accelerator
    n_same = sum(v for m in acc.values() for v in m.values())
    n_all = sum(len(m) for m in acc.values())
    return [
        *lines,
        f"CPU vs accelerator: {n_same} of {n_all} results of the accelerator lesson have the "
        "same bits on both cards",
        "torch.cuda random streams: " + ("the same bits" if d.rng_same else "different bits"),
        f"torch.sum on CUDA: {sum(d.sums_same.values())} of {len(d.sums_same)} sums "
        "have the same bits",
    ]


def compare_all() -> Differences | None:
    """The differences between the two newest records of different cards, or None if fewer
    than two cards were recorded."""
    seen: dict[str, records.Record] = {}
    for rec in map(records.load, records.available()):
        seen.setdefault(rec.card, rec)
    if len(seen) < 2:
        return None
    first, second = list(seen.values())[:2]
    return differences(first, second)


@functools.lru_cache(maxsize=8)
def _differences_of_files(a: str, b: str, _mtimes: tuple[float, ...]) -> Differences:
    return differences(records.load(a), records.load(b))


def other_card(src: Any) -> dict[str, Any]:
    """For a recorded run: an observation of what differs from the newest record of another
    card; empty when the run is live or only one card is recorded."""
    record = getattr(src, "record", None)
    if record is None or getattr(src, "live", False):
        return {}
    for path in records.available():
        try:
            other = records.load(path)
        except Exception:  # an unreadable record is skipped, as records.available does
            continue
        if other.card != record.card:
            mtimes = (os.stat(record.path).st_mtime, os.stat(path).st_mtime)
            d = _differences_of_files(str(record.path), str(path), mtimes)
            seen = OTHER_CARD.observe(
                "; ".join(summary(d)),
                f"{d.files[0]} vs {d.files[1]}",
                f": {record.card} vs {other.card}",
            )
            return {OTHER_CARD.key: seen}
    return {}
