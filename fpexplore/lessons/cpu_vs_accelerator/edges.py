"""relu and its spellings on the values that break "bit for bit on every device".

randn never draws −0.0, NaN, infinities or subnormals. Here every spelling of relu (`OPS`) runs
on each edge value, alone and at the end of a long tensor (vector kernels and the scalar tail
take other paths), in each floating dtype, on each device; outputs are kept as bit patterns so
that ±0.0 and the NaNs' signs stay apart. A GPU's side comes from ``data/gpu/edges``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ... import backends
from .._base import declare_texts
from .._gpu.small_records import header, read_all
from .data import ReluEdges

FORMAT = "fpexplore-relu-edges"
VERSION = 1
DTYPES = ("float32", "float64", "float16", "bfloat16")
OPS = ("torch.relu", "F.relu", "clamp_min(0)", "maximum(x, 0)", "where(x > 0, x, 0)")
#: each edge value's name, then its negation's (bfloat16 and float16 round them on the way in)
EDGE_NAMES = tuple(
    name
    for pos in ("+0.0", "NaN", "+inf", "smallest subnormal", "smallest normal", "largest", "1.0")
    for name in (pos, "-" + pos.lstrip("+"))
)
LONG = 4099  # a length no vector width divides: the tail goes through the scalar path


_BITS = {"float32": 32, "float64": 64, "float16": 16, "bfloat16": 16}


def _edge_values(dtype: str) -> list[float]:
    torch = backends.load("torch")
    info = torch.finfo(getattr(torch, dtype))
    tiny_sub = info.smallest_normal * info.eps  # 2**(emin - p + 1)
    # each value, then its negation: the order of EDGE_NAMES
    magnitudes = (0.0, math.nan, math.inf, tiny_sub, info.smallest_normal, info.max, 1.0)
    return [v for m in magnitudes for v in (m, -m)]


def _bits(t: Any) -> list[int]:
    """The bit patterns of a 1-d tensor, as ints (NaN signs kept)."""
    torch = backends.load("torch")
    width = {torch.float32: torch.int32, torch.float64: torch.int64}.get(t.dtype, torch.int16)
    raw = t.detach().cpu().contiguous().view(width).tolist()
    mask = (1 << (8 * t.element_size())) - 1
    return [int(v) & mask for v in raw]


def run_device(device: str) -> dict[str, Any]:
    """Every spelling on every edge value in every dtype on ``device``: output bits, short and
    long (the edge values at the end of a tensor of length `LONG`)."""
    torch = backends.load("torch")
    dev = torch.device(device)
    spellings = {
        "torch.relu": torch.relu,
        "F.relu": torch.nn.functional.relu,
        "clamp_min(0)": lambda x: x.clamp_min(0),
        "maximum(x, 0)": lambda x: torch.maximum(x, torch.zeros_like(x)),
        "where(x > 0, x, 0)": lambda x: torch.where(x > 0, x, torch.zeros_like(x)),
    }
    out: dict[str, Any] = {}
    for dtype in DTYPES:
        dt = getattr(torch, dtype)
        x = torch.tensor(_edge_values(dtype), dtype=torch.float64).to(dt)
        fill = torch.full((LONG - len(x),), 0.5, dtype=dt)
        long_x = torch.cat([fill, x])
        row: dict[str, Any] = {"input": _bits(x)}
        for name, fn in spellings.items():
            try:
                short = _bits(fn(x.to(dev)))
                tail = _bits(fn(long_x.to(dev))[-len(x) :])
                row[name] = {"short": short, "long": tail}
            except (RuntimeError, TypeError) as exc:  # a dtype a device lacks
                row[name] = {"raised": f"{type(exc).__name__}: {exc}"[:300]}
        out[dtype] = row
    return out


def record(devices: list[str]) -> dict[str, Any]:
    """A JSON-ready record of `run_device` on each device, with where it ran."""
    torch = backends.load("torch")
    names = {
        d: torch.cuda.get_device_name(torch.device(d)) if d.startswith("cuda") else "CPU"
        for d in devices
    }
    return {
        "format": FORMAT,
        "version": VERSION,
        "torch": torch.__version__,
        "cards": names,
        "edges": list(EDGE_NAMES),
        "ops": list(OPS),
        "devices": {d: run_device(d) for d in devices},
    }


def validate(data: Any, source: str) -> dict[str, Any]:
    """``data`` checked against the record's shape; `RecordError` naming what is wrong."""
    bad = header(data, FORMAT, VERSION, source)
    devices = data.get("devices")
    if not isinstance(devices, Mapping) or not devices:
        raise bad("no devices")
    n = len(EDGE_NAMES)
    for dev, rows in devices.items():
        if not isinstance(rows, Mapping):
            raise bad(f"device {dev!r} holds no rows")
        for dtype in DTYPES:
            row = rows.get(dtype)
            if not isinstance(row, Mapping):
                raise bad(f"{dev} lacks {dtype}")
            limit = 1 << _BITS[dtype]
            for op in OPS:
                cell = row.get(op)
                if not isinstance(cell, Mapping):
                    raise bad(f"{dev} {dtype} lacks {op}")
                if "raised" in cell:
                    continue
                for part in ("short", "long"):
                    bits = cell.get(part)
                    if not (
                        isinstance(bits, list)
                        and len(bits) == n
                        and all(type(b) is int and 0 <= b < limit for b in bits)
                    ):
                        raise bad(f"{dev} {dtype} {op} {part}: not {n} {dtype} bit patterns")
    return dict(data)


def recorded(directory: str | Path | None = None) -> list[dict[str, Any]]:
    """Every valid record in ``data/gpu/edges`` (by file name); bad files are skipped."""
    return read_all("edges", validate, directory)


def disagreements(sides: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every (dtype, op, edge, length) where two devices' output bits differ, or where one
    spelling differs from ``torch.relu`` on the same device: one row each."""
    rows: list[dict[str, Any]] = []
    devs = list(sides)
    for dtype in DTYPES:
        for op in OPS:
            for part in ("short", "long"):
                per_dev = {
                    d: sides[d][dtype][op].get(part)
                    for d in devs
                    if "raised" not in sides[d][dtype][op]
                }
                for i, edge in enumerate(EDGE_NAMES):
                    seen = {d: v[i] for d, v in per_dev.items()}
                    if len(set(seen.values())) > 1:
                        top = _BITS[dtype] - 1  # the sign bit
                        outputs = {d: f"{'−' if b >> top else '+'}0x{b:x}" for d, b in seen.items()}
                        rows.append(
                            dict(dtype=dtype, op=op, edge=edge, length=part, outputs=outputs)
                        )
    return rows


def summary(sides: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """How many (dtype, op, edge, length) cases were tried, and on which edges devices split."""
    rows = disagreements(sides)
    cases = len(DTYPES) * len(OPS) * 2 * len(EDGE_NAMES)
    edges = sorted({r["edge"] for r in rows}, key=EDGE_NAMES.index)
    return {"cases": cases, "split": len(rows), "edges": edges, "rows": rows}


def relu_neg_zero(sides: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """What ``torch.relu(-0.0)`` returns in float32 on each device: '+0.0' or '-0.0'."""
    i = EDGE_NAMES.index("-0.0")
    out = {}
    for d, rows in sides.items():
        b = rows["float32"]["torch.relu"]["short"][i]
        out[d] = "-0.0" if b == 0x80000000 else "+0.0" if b == 0 else f"0x{b:x}"
    return out


def as_array(bits: list[int], dtype: str) -> np.ndarray:
    """Bit patterns back to values (bfloat16 widened to float32)."""
    if dtype == "bfloat16":
        return (np.asarray(bits, dtype=np.uint32) << 16).view(np.float32)
    view = {"float32": np.uint32, "float64": np.uint64, "float16": np.uint16}[dtype]
    return np.asarray(bits, dtype=view).view(np.dtype(dtype))


def _nonzero_rows(sides: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Disagreements (across devices, or against ``torch.relu`` on one device) on values that
    are neither a zero nor a NaN."""
    rows = disagreements(sides)
    for dev, per in sides.items():
        for dtype in DTYPES:
            ref = per[dtype]["torch.relu"]
            for op in OPS:
                cell = per[dtype][op]
                if "raised" in cell or "raised" in ref:
                    continue
                for part in ("short", "long"):
                    for i, edge in enumerate(EDGE_NAMES):
                        if cell[part][i] != ref[part][i]:
                            rows.append({"dtype": dtype, "op": op, "edge": edge, "device": dev})
    return [r for r in rows if r["edge"] not in ("+0.0", "-0.0", "NaN", "-NaN")]


#: The relu edge claims: over every device here ("edge runs": this CPU live, or a record), from
#: the record of a CPU and CUDA devices ("edges record"), on this CPU live (torch).
OBSERVATIONS = declare_texts(
    {
        "relu_negzero_here": "torch.relu(−0.0) in float32 on this CPU",
        "relu_edges_split": "edge cases where devices or spellings disagree",
    },
    ("torch",),
)
CLAIMS = declare_texts(
    {
        "relu_nonzero_identical": "on every edge value but the zeros and NaNs (±inf, ±1, "
        f"subnormals, the largest finite), all {len(OPS)} spellings of relu give the same bits "
        "in every dtype, short and long tensors, on every device here",
        "relu_negzero_by_device": "in the recorded run, relu(−0.0) is −0.0 on the CPU and +0.0 "
        "on every CUDA device",
        "where_drops_nan": "where(x > 0, x, 0) turns NaN into +0.0 while torch.relu keeps a NaN",
    },
    ("torch",),
    {"relu_nonzero_identical": ("edge runs",), "relu_negzero_by_device": ("edges record",)},
    test="tests/test_gpu_edges_seeding.py",
)
NO_RECORD = (
    "no record of relu's edge values on a CPU and a CUDA device. Fix: record it on a GPU "
    "machine: python3 benchmarks/gpu_edges_run.py data/gpu/edges"
)


def lesson_parts(
    torch_missing: str | None,
) -> tuple[dict[str, Any], dict[str, Any], ReluEdges, dict[str, str | None]]:
    """(claims, observations, data, missing) of relu's edges on this CPU live and every
    recorded device; ``missing`` says why each part (of `CLAIMS`) this run lacks is missing."""
    recs = recorded()
    sides: dict[str, Any] = {}
    for rec in recs:
        for dev, rows in rec["devices"].items():
            where = "the GPU machine's cpu" if dev == "cpu" else f"{rec['cards'].get(dev)} {dev}"
            sides[f"{where} (recorded)"] = rows
    here = None
    if torch_missing is None:
        here = run_device("cpu")
        sides = {"cpu (live, this machine)": here, **sides}
    split = summary(sides)
    recorded_sides = {k: v for k, v in sides.items() if "(recorded)" in k}
    cuda = {k: v for k, v in recorded_sides.items() if " cuda" in k}
    rec_cpu = {k: v for k, v in recorded_sides.items() if "machine's cpu" in k}
    claims: dict[str, Any] = {}
    observations: dict[str, Any] = {}
    if sides:
        claims["relu_nonzero_identical"] = CLAIMS["relu_nonzero_identical"].claim(
            not _nonzero_rows(sides), f" ({len(sides)})"
        )
    if cuda and rec_cpu:
        zeros = relu_neg_zero({**rec_cpu, **cuda})
        claims["relu_negzero_by_device"] = CLAIMS["relu_negzero_by_device"].claim(
            all(zeros[k] == "-0.0" for k in rec_cpu) and all(zeros[k] == "+0.0" for k in cuda),
            f" ({', '.join(f'{k}: {v}' for k, v in zeros.items())})",
        )
    if here is not None:
        nans = [i for i, e in enumerate(EDGE_NAMES) if e in ("NaN", "-NaN")]

        def nan_outputs(op: str) -> np.ndarray:  # short, then long
            cell = here["float32"][op]
            return as_array([cell[part][i] for part in ("short", "long") for i in nans], "float32")

        relu, where = nan_outputs("torch.relu"), nan_outputs("where(x > 0, x, 0)")
        claims["where_drops_nan"] = CLAIMS["where_drops_nan"].claim(
            bool(np.isnan(relu).all() and (where == 0).all() and not np.signbit(where).any())
        )
        observations["relu_negzero_here"] = OBSERVATIONS["relu_negzero_here"].observe(
            relu_neg_zero({"cpu": here})["cpu"],
            "ATen's CPU relu keeps the sign of a zero on the CPUs tried; CUDA's returns +0.0",
        )
        observations["relu_edges_split"] = OBSERVATIONS["relu_edges_split"].observe(
            split["split"],
            "only on "
            + (", ".join(split["edges"]) or "no edge")
            + ": NaN payloads and signs follow each kernel's vector path",
            f" (of {split['cases']} per device)",
        )
    data = ReluEdges(split["cases"], list(sides), relu_neg_zero(sides), split["rows"])
    missing = {
        "edge runs": None if sides else torch_missing,
        "edges record": None if cuda and rec_cpu else NO_RECORD,
    }
    return claims, observations, data, missing


def judge_myth(c: Any) -> tuple[str, str, str]:
    """Myth "ReLU can differ between backends", from a run of the lesson: (verdict, why,
    number). Every nonzero value agrees; −0.0 and NaNs split devices."""
    need = ("relu_identical", "relu_nonzero_identical", "relu_negzero_by_device")
    claims = {k: c.claims.get(k) for k in need}
    if any(v is None or v.holds is None for v in claims.values()):
        missing = [k for k, v in claims.items() if v is None or v.holds is None]
        return "not measured", "needs torch and the recorded GPU run: " + ", ".join(missing), ""
    d = c.data.relu_edges
    zeros = ", ".join(f"{k}: {v}" for k, v in d.neg_zero.items())
    split = sorted({r["edge"] for r in d.split})
    number = (
        f"{d.cases_per_device} edge cases per device on {len(d.devices)} devices; they "
        f"split only on {', '.join(split) or 'none'}; relu(−0.0): {zeros}"
    )
    if not (claims["relu_identical"].holds and claims["relu_nonzero_identical"].holds):
        return "holds", "relu differs between devices on ordinary nonzero values", number
    if claims["relu_negzero_by_device"].holds:
        return (
            "depends",
            "on the input: every spelling of relu gives the same bits on every device for "
            "every nonzero value, but relu(−0.0) keeps the sign on the CPU and drops it on "
            "CUDA, and NaN payloads follow each kernel",
            number,
        )
    return "does not hold", "relu gave the same bits on every device, −0.0 included", number
