"""Does one ``torch.manual_seed`` make several GPUs, CUDA streams and host threads reproducible?

Each probe runs in its own fresh process (a generator's state is per process), several times,
so that "reproducible" means the same bits in every run, not in one:

- ``manual_seed(42)`` then ``rand`` on cuda:0 and on cuda:1 (one seed for every device);
- ``torch.cuda.manual_seed(42)``, which seeds the current device only, then cuda:1;
- no seed at all (torch's generators start from a fixed default seed);
- two CUDA streams launched from one host thread, in a fixed order;
- two host threads, each with its own stream, racing for the one generator: which thread gets
  which Philox offset depends on the interleaving.

Run on a machine with GPUs by ``benchmarks/gpu_edges_run.py``; the record lives in
``data/gpu/seeding`` and the RNG lesson reads it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ... import backends
from ...result.spec import declare_texts
from .._gpu.small_records import header, newest
from .data import MultiGpu

FORMAT = "fpexplore-gpu-seeding"
VERSION = 1
N = 4096
DRAWS = 32  # per host thread in the race
PROBES = (
    "manual_seed: cuda:0",
    "manual_seed: cuda:1",
    "cuda.manual_seed (current device only): cuda:1",
    "no seed: cuda:0",
    "two streams, one host thread: stream 1",
    "two streams, one host thread: stream 2",
    "two host threads racing: thread 1",
    "two host threads racing: thread 2",
    "two host threads racing: every draw (sorted)",
)


def _digest(t: Any) -> str:
    return hashlib.sha1(t.detach().cpu().numpy().tobytes()).hexdigest()[:16]


def seeded_all() -> dict[str, str]:
    """``manual_seed(42)``, then the first ``rand`` on cuda:0 and on cuda:1."""
    torch = backends.load("torch")

    two = torch.cuda.device_count() >= 2
    torch.manual_seed(42)
    a = _digest(torch.rand(N, device="cuda:0"))
    b = _digest(torch.rand(N, device="cuda:1")) if two else "absent"
    return {PROBES[0]: a, PROBES[1]: b}


def seeded_current() -> dict[str, str]:
    """``torch.cuda.manual_seed(42)`` (the current device, cuda:0), then ``rand`` on cuda:1."""
    torch = backends.load("torch")

    torch.cuda.manual_seed(42)
    two = torch.cuda.device_count() >= 2
    return {PROBES[2]: _digest(torch.rand(N, device="cuda:1")) if two else "absent"}


def unseeded() -> dict[str, str]:
    """A fresh process's first ``rand`` on cuda:0 with no seed set."""
    torch = backends.load("torch")

    return {PROBES[3]: _digest(torch.rand(N, device="cuda:0"))}


def streams() -> dict[str, str]:
    """``manual_seed(42)``, then one ``rand`` on each of two streams, launched in order."""
    torch = backends.load("torch")

    torch.manual_seed(42)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s1):
        a = torch.rand(N, device="cuda:0")
    with torch.cuda.stream(s2):
        b = torch.rand(N, device="cuda:0")
    torch.cuda.synchronize()
    return {PROBES[4]: _digest(a), PROBES[5]: _digest(b)}


def race() -> dict[str, str]:
    """``manual_seed(42)``, then two host threads, each on its own stream, drawing `DRAWS`
    times from the one generator at once."""
    import threading

    torch = backends.load("torch")

    torch.manual_seed(42)
    torch.rand(1, device="cuda:0")  # the generator and context exist before the race
    got: dict[int, list[Any]] = {1: [], 2: []}
    start = threading.Barrier(2)

    def worker(k: int) -> None:
        s = torch.cuda.Stream()
        start.wait()
        with torch.cuda.stream(s):
            for _ in range(DRAWS):
                got[k].append(torch.rand(64, device="cuda:0"))
        s.synchronize()

    threads = [threading.Thread(target=worker, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t1, t2 = torch.cat(got[1]), torch.cat(got[2])
    return {
        PROBES[6]: _digest(t1),
        PROBES[7]: _digest(t2),
        PROBES[8]: _digest(torch.sort(torch.cat([t1, t2])).values),
    }


PROBE_FUNCTIONS = ("seeded_all", "seeded_current", "unseeded", "streams", "race")


def _fresh(name: str) -> Any:
    code = f"import json; from {__name__} import {name}; print(json.dumps({name}()))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def record(runs: int = 5) -> dict[str, Any]:
    """Each probe in ``runs`` fresh processes: a JSON-ready record."""
    torch = backends.load("torch")

    per_run = []
    for _ in range(runs):
        row: dict[str, str] = {}
        for name in PROBE_FUNCTIONS:  # each in a fresh process: generators are per process
            row.update(_fresh(name))
        per_run.append(row)
    return {
        "format": FORMAT,
        "version": VERSION,
        "torch": torch.__version__,
        "cards": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
        "n": N,
        "draws_per_thread": DRAWS,
        "runs": per_run,
    }


def validate(data: Any, source: str) -> dict[str, Any]:
    """``data`` checked against the record's shape; `RecordError` naming what is wrong."""

    bad = header(data, FORMAT, VERSION, source)
    cards = data.get("cards")
    if not (isinstance(cards, list) and all(isinstance(c, str) for c in cards)):
        raise bad("'cards' is not a list of names")
    runs = data.get("runs")
    if not (isinstance(runs, list) and 2 <= len(runs) <= 1000):
        raise bad("'runs' is not a list of 2 to 1000 runs")
    for i, run in enumerate(runs):
        if not isinstance(run, Mapping) or set(run) != set(PROBES):
            raise bad(f"run {i} does not hold exactly the probes {PROBES}")
        if not all(isinstance(v, str) and 0 < len(v) <= 64 for v in run.values()):
            raise bad(f"run {i}: every probe's digest must be a short string")
    return dict(data)


def recorded(directory: str | Path | None = None) -> dict[str, Any] | None:
    """The newest valid record in ``data/gpu/seeding``, or None; bad files are skipped."""
    return newest("seeding", validate, directory)


def verdicts(data: Mapping[str, Any]) -> dict[str, Any]:
    """What the runs show: for each probe, how many distinct results over the runs, and the
    comparisons the claims read (same stream on both GPUs, streams reproducible, race)."""
    runs = data["runs"]
    distinct = {p: len({r[p] for r in runs}) for p in PROBES}
    return {
        "runs": len(runs),
        "distinct": distinct,
        "gpus_same_stream": all(r[PROBES[0]] == r[PROBES[1]] for r in runs),
        "two_gpus": all(r[PROBES[1]] != "absent" for r in runs),
        "streams_reproduce": distinct[PROBES[4]] == 1 and distinct[PROBES[5]] == 1,
        "race_reproduces": distinct[PROBES[6]] == 1 and distinct[PROBES[7]] == 1,
        "race_same_draws": distinct[PROBES[8]] == 1,
        "unseeded_reproduces": distinct[PROBES[3]] == 1,
        "current_device_seed_reaches_cuda1": all(r[PROBES[2]] == r[PROBES[1]] for r in runs),
    }


#: the claims about several GPUs, streams and host threads, decided from the "two-GPU record"
CLAIMS = declare_texts(
    {
        "seed_reaches_every_gpu": "torch.manual_seed seeds every GPU: cuda:0 and cuda:1 draw "
        "the same stream",
        "current_device_seed_misses_others": "torch.cuda.manual_seed seeds the current device "
        "only: cuda:1 then draws another stream in each fresh process",
        "unseeded_cuda_varies": "without a seed, a fresh process's first CUDA rand differs from "
        "run to run",
        "streams_reproduce": "with one seed, two CUDA streams launched in a fixed order from one "
        "host thread reproduce in every run",
        "thread_race_varies": "two host threads drawing at once, each on its own stream, get "
        "different draws from run to run, though the set of all draws stays the same",
    },
    ("two-GPU record",),
    applies="machines with two CUDA GPUs (recorded)",
    test="tests/test_gpu_edges_seeding.py",
)
NO_RECORD = (
    "no record of two GPUs. Fix: run python3 benchmarks/gpu_edges_run.py OUTDIR on a machine "
    "with two CUDA GPUs and keep OUTDIR/seeding.json in data/gpu/seeding"
)


def lesson_parts() -> tuple[dict[str, Any], MultiGpu | None]:
    """The RNG lesson's claims about several GPUs, streams and host threads, decided from the
    newest record (not checked, with the fix, without one), and what the record shows."""
    data = recorded()
    if data is None:
        return {k: spec.not_checked(NO_RECORD) for k, spec in CLAIMS.items()}, None
    v = verdicts(data)
    runs, d = v["runs"], v["distinct"]
    where = f"{len(data['cards'])} × {data['cards'][0]}, torch {data['torch']}, {runs} runs"
    said = {
        "seed_reaches_every_gpu": (v["two_gpus"] and v["gpus_same_stream"], ""),
        "current_device_seed_misses_others": (
            v["two_gpus"] and not v["current_device_seed_reaches_cuda1"] and d[PROBES[2]] > 1,
            f"{d[PROBES[2]]} distinct streams",
        ),
        "unseeded_cuda_varies": (d[PROBES[3]] > 1, f"{d[PROBES[3]]} distinct"),
        "streams_reproduce": (v["streams_reproduce"], ""),
        "thread_race_varies": (
            not v["race_reproduces"] and v["race_same_draws"],
            f"{max(d[PROBES[6]], d[PROBES[7]])} distinct per thread",
        ),
    }
    claims = {}
    for key, spec in CLAIMS.items():
        holds, number = said[key]
        detail = "; ".join(x for x in (number, f"recorded: {where}") if x)
        claims[key] = spec.claim(bool(holds), f" ({detail})")
    same, reproduce = v["gpus_same_stream"], v["streams_reproduce"]
    return claims, MultiGpu(data["cards"], data["torch"], data["path"], runs, d, same, reproduce)


def judge_myth(c: Any) -> tuple[str, str, str]:
    """Myth 8, "torch.manual_seed does not make multi-GPU or multi-stream runs reproducible",
    from the two-GPU record: decided by what manual_seed does (every GPU, streams in a fixed
    order); torch.cuda.manual_seed and racing host threads are shown beside it, as what does
    vary and why. Returns (verdict, why, number)."""
    keys = (
        "seed_reaches_every_gpu",
        "streams_reproduce",
        "current_device_seed_misses_others",
        "thread_race_varies",
    )
    states = {k: c.claims[k].state if k in c.claims else "absent" for k in keys}
    if any(s == "not checked" or s == "absent" for s in states.values()):
        return "not measured", "needs the recorded run on two GPUs (data/gpu/seeding)", ""
    d = c.data.multi_gpu
    race = max(d.distinct[PROBES[6]], d.distinct[PROBES[7]])
    number = (
        f"{d.runs} fresh processes on {len(d.cards)} × {d.cards[0]}: manual_seed → "
        f"cuda:0 and cuda:1 {'identical' if d.gpus_same_stream else 'different'}; two "
        f"streams {'reproduce' if d.streams_reproduce else 'vary'}; cuda.manual_seed then "
        f"cuda:1: {d.distinct[PROBES[2]]} distinct; two racing host threads: {race} distinct "
        "per thread"
    )
    aside = []
    if states["current_device_seed_misses_others"] == "holds":
        aside.append("torch.cuda.manual_seed seeds only the current device")
    if states["thread_race_varies"] == "holds":
        aside.append(
            "host threads racing for one generator split its draws differently each run (the "
            "same set of draws: the interleaving varies, not the seed)"
        )
    if states["seed_reaches_every_gpu"] == "holds" and states["streams_reproduce"] == "holds":
        return (
            "does not hold",
            "torch.manual_seed seeds every GPU and streams launched in a fixed order reproduce"
            + (f"; what varies is other: {'; '.join(aside)}" if aside else ""),
            number,
        )
    return "holds", "one manual_seed did not reproduce across GPUs or streams", number
