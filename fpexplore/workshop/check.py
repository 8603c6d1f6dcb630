"""``fpexplore doctor --workshop``: before the day, on each laptop — which notebooks run here
(each notebook's lesson run at its quick parameters in a fresh process: its claim probe, so a
notebook that crashes or raises here says NO), which cannot (and the command that fixes it),
and an estimate of how long the series takes here, from a timed probe of at least
`PROBE_MIN_S` seconds."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..series import NOTEBOOKS, Notebook

#: what the estimate is scaled against: the seconds `probe()` (this module's probe, at its
#: present workload) took on the machine the map's minutes were worked through on, the
#: development machine amd-epyc-zen4 of data/machines (AMD EPYC Zen 4, 2 cores shared with
#: other work), measured on 2026-11-27 as the median of three `probe()` calls: 0.42–0.52 s.
#: A constant measured there, not here: change the probe's workload and it must be measured
#: again (`REFERENCE_MACHINE` is what the report names).
REFERENCE_PROBE_S = 0.5
REFERENCE_MACHINE = "amd-epyc-zen4 (data/machines), measured 2026-11-27"
#: the part of the map's minutes that is waiting on cells at the reference machine's speed (the
#: rest is reading and exploring, the same on any laptop); an assumption of the estimate
COMPUTE_SHARE = 0.25
#: below this much memory a laptop runs one notebook at a time (Binder has 2 GB)
SMALL_MEMORY_GB = 4.0


#: the timed probe runs its workload for at least this long (a 0.06 s probe measures noise)
PROBE_MIN_S = 2.0


def probe(repeat: int = 3, least_s: float = PROBE_MIN_S) -> float:
    """Seconds for a fixed workload of the kind the lessons run (exact sums of float32 arrays,
    numpy reductions in several orders): the median of at least ``repeat`` runs, repeated
    until ``least_s`` seconds have passed."""
    import statistics

    import numpy as np

    from .. import truth

    x = np.random.default_rng(0).random(4_000_000, dtype=np.float32)
    times: list[float] = []
    began = time.perf_counter()
    while len(times) < repeat or time.perf_counter() - began < least_s:
        start = time.perf_counter()
        truth.sum(x)
        np.sum(x), np.cumsum(x)[-1], np.sort(x).sum()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@dataclass(frozen=True)
class Probe:
    """A notebook's claim probe here: whether its lesson ran, in how many seconds, and the
    first line of what went wrong (a crash, a raise, a failing claim)."""

    ran: bool
    seconds: float
    problem: str = ""


def claim_probe(lesson: str, timeout: float = 300.0) -> Probe:
    """Run ``lesson`` at its quick parameters in a fresh process (a crash cannot take this one
    with it); failing claims and errors are the problem."""
    from ..errors import WorkerError
    from ..lessons import get
    from ..testing.runner import run_claims

    start = time.perf_counter()
    try:
        result = run_claims([(lesson, dict(get(lesson).quick))], {}, timeout=timeout)
    except (WorkerError, OSError) as exc:  # killed by a signal, no result, …
        return Probe(False, time.perf_counter() - start, str(exc).splitlines()[0])
    except Exception as exc:  # a timeout
        return Probe(False, time.perf_counter() - start, f"{type(exc).__name__}: {exc}")
    took = time.perf_counter() - start
    (run,) = result["runs"]
    if run["error"]:
        return Probe(False, took, str(run["error"]).splitlines()[0])
    failed = [c["text"] for c in run["claims"].values() if c["state"] == "fails"]
    return Probe(not failed, took, f"a claim fails here: {failed[0]}" if failed else "")


def claim_probes(notebooks: Iterable[Notebook] = NOTEBOOKS) -> dict[str, Probe]:
    """Each notebook's claim probe, by its key (notebooks with no lesson have none)."""
    return {nb.key: claim_probe(nb.lesson) for nb in notebooks if nb.lesson}


def memory_gb() -> float | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


@dataclass(frozen=True)
class Row:
    notebook: Notebook
    runs: bool
    note: str  # what it shows here, or what is missing and its fix


def rows(
    available: dict[str, tuple[bool, str]], has_gpu: bool, probes: dict[str, Probe] | None = None
) -> list[Row]:
    """Each notebook against the backends here: ``available`` maps a backend's name to
    (available, the fix when it is not); ``probes``, the notebooks' claim probes, say NO for
    a notebook whose lesson crashed, raised or broke a claim here."""
    out = []
    for nb in NOTEBOOKS:
        tried = (probes or {}).get(nb.key)
        if tried is not None and not tried.ran:
            out.append(Row(nb, False, f"its claim probe: {tried.problem}"))
            continue
        missing = [b for b in nb.backends if not available.get(b, (False, ""))[0]]
        if missing:
            fixes = "; ".join(
                f"{b}: {available.get(b, (False, 'not known here'))[1] or 'see fpexplore doctor'}"
                for b in missing
            )
            out.append(Row(nb, False, f"missing {', '.join(missing)} — fix: {fixes}"))
        elif nb.recorded_gpu and not has_gpu:
            out.append(Row(nb, True, "runs; the GPU parts show the recorded GPU runs"))
        else:
            took = f" (claim probe {tried.seconds:.0f} s)" if tried is not None else ""
            out.append(Row(nb, True, "runs" + took))
    return out


def estimate_minutes(probe_s: float, notebooks: Iterable[Notebook] = NOTEBOOKS) -> float:
    """Minutes to work through ``notebooks`` here: the map's minutes, with the share spent
    waiting on cells scaled by how much slower (or faster) the probe ran than on the reference
    machine. An estimate, not a measurement."""
    ratio = probe_s / REFERENCE_PROBE_S
    total = sum(nb.minutes for nb in notebooks)
    return total * ((1 - COMPUTE_SHARE) + COMPUTE_SHARE * ratio)


def report(
    infos: Iterable[object],
    probe_s: float | None = None,
    say: Callable[[str], None] = print,
    probes: dict[str, Probe] | None = None,
) -> int:
    """Print the workshop check from ``backends.probe_all``'s infos, running each notebook's
    claim probe (unless ``probes`` are given); returns 0 when every notebook runs here, 1 when
    some cannot."""
    available = {i.name: (i.available, i.fix) for i in infos}  # type: ignore[attr-defined]
    devices = {d for i in infos for d in (i.devices or ())}  # type: ignore[attr-defined]
    has_gpu = any(d.lower().startswith(("cuda", "gpu")) for d in devices)
    if probes is None:
        say("\nRunning each notebook's claim probe (a fresh process each; a few minutes)…")
        probes = claim_probes()
    table = rows(available, has_gpu, probes)
    say("\nWorkshop check: what this laptop can run")
    width = max(len(r.notebook.title) for r in table)
    for r in table:
        mark = "yes" if r.runs else "NO "
        say(f"  {r.notebook.key}  {r.notebook.title.ljust(width)}  {mark}  {r.note}")
    mem = memory_gb()
    if mem is not None:
        advice = (
            " — small: run one notebook at a time (Kernel → Shut Down All Kernels between them)"
            if mem < SMALL_MEMORY_GB
            else ""
        )
        say(f"\nMemory: {mem:.1f} GiB{advice}")
    probe_s = probe() if probe_s is None else probe_s
    ratio = probe_s / REFERENCE_PROBE_S
    say(
        f"Timed probe: {probe_s:.2f} s here; the same probe took {REFERENCE_PROBE_S:.2f} s "
        f"on the reference machine, {REFERENCE_MACHINE} ({ratio:.1f}× its time)."
    )
    say(
        f"Estimate: the whole series takes about {estimate_minutes(probe_s) / 60:.1f} hours "
        f"here (the map's {sum(nb.minutes for nb in NOTEBOOKS)} minutes, the part spent "
        f"waiting on cells, assumed {COMPUTE_SHARE:.0%}, scaled by the probe). An estimate."
    )
    return 0 if all(r.runs for r in table) else 1
