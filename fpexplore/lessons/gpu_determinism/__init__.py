"""Run-to-run variation on a GPU, and which flag fixes which op."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidParameter
from ...figures import WIDTH_IN
from ...params import Flag, Interval
from ...result import Claim, Comparison, Outcome
from .._base import Lesson, declare_texts, missing_parts
from .._gpu import present, ulp_unit
from .._gpu.recording import GpuExperiment, GpuSession
from .._gpu.source import device_param, record_param, resolve, torch_version
from . import linear_flag
from .rows import FreshProcesses, Probe, Row, parse

EXPLANATION = """\
A GPU adds numbers in parallel. Ops that let many threads add into the same place use atomic
additions, and the order in which those land changes from run to run; floating-point addition
is not associative, so the result changes too. cuDNN offers several algorithms per
convolution, some of which split the reduction and combine partial sums with atomics.

- `torch.backends.cudnn.benchmark = True` times the candidate algorithms and keeps the fastest
  for each shape; the choice can differ from one program start to the next.
- `torch.backends.cudnn.deterministic = True` restricts cuDNN to deterministic algorithms; it
  does nothing for non-cuDNN ops such as index_add_ or scatter_add_.
- `torch.use_deterministic_algorithms(True)` switches every op that has a deterministic
  implementation to it (sorting instead of atomics) and raises for the ops that have none.

Each row below ran the same op on the same inputs N times; 'distinct' counts bitwise-different
results. The error of each run against the exact result (exact sums of the float32 inputs) is
in float32 ULPs on sampled entries: deterministic does not mean more accurate.
"""


@dataclass(frozen=True)
class DeterminismData:
    """A run (live or recorded): each op's run-to-run spread under each flag setting."""

    configs: dict[str, dict[str, bool]]  # the flag settings, by name
    n_runs: int
    rows: list[Row]  # one per op, output, case and flag setting
    raises: list[Probe]  # ops probed under use_deterministic_algorithms(True)
    fresh_processes: FreshProcesses  # the cudnn.benchmark probe across fresh processes
    source: str  # the outcomes' kind: "framework" (live) or "recorded"
    banner: str
    card: str
    cublas_probe: list[Probe] | None = None  # cuBLAS under each workspace config
    linear_flag: linear_flag.LinearFlag | None = None  # None without its record
    #: the unit of the rows' ulp_vs_truth_* fields, in words (`_gpu.ulp_unit.words`)
    ulp_unit: str = "float32 ULPs of the exact value"

    def by_config(self, op: str) -> dict[str, Row]:
        """``op``'s rows by flag setting (its first output and case); an op this run did
        not run raises `InvalidParameter`."""
        found: dict[str, Row] = {}
        for r in self.rows:
            if r.op == op:
                found.setdefault(r.config, r)
        if not found:
            ops = ", ".join(dict.fromkeys(r.op for r in self.rows))
            raise InvalidParameter("op", op, "one of " + ops)
        return found

    def row(self, op: str, config: str) -> Row:
        """``op``'s row under the flag setting ``config`` (`by_config`)."""
        found = self.by_config(op)
        if config not in found:
            raise InvalidParameter("config", config, "one of " + ", ".join(found))
        return found[config]


#: The claims, as stated before measuring. Facts about CUDA devices (atomics racing, cuDNN's
#: algorithms, ops that raise there) need "cuda" (a CUDA device, live or recorded): a run on a
#: CPU has none of these parts. The varying convolution needs the "full shapes" (cuDNN may
#: pick deterministic algorithms for the quick ones), the probe of fresh processes needs
#: "fresh processes" (processes ≥ 1).
CLAIMS = {
    **declare_texts(
        {
            "atomics_vary": "index_add_ gives more than one distinct result with the default flags",
            "det_algos_fix_all": "under torch.use_deterministic_algorithms(True) every op that "
            "ran gave the same bits in every run",
            "cudnn_det_fixes_conv": "cudnn.deterministic = True makes every convolution output "
            "identical run to run",
            "cudnn_det_not_atomics": "cudnn.deterministic does not fix index_add_ (it only "
            "governs cuDNN)",
            "conv_varies_without_benchmark": "some convolution gradients vary run to run even "
            "with cudnn.benchmark off",
            "conv_stable_with_benchmark": "some convolution shapes stay deterministic even with "
            "cudnn.benchmark on",
            "some_ops_raise": "some ops raise under use_deterministic_algorithms(True) instead "
            "of running nondeterministically",
            "forward_stable": "every convolution forward pass gave the same bits in every run "
            "under every setting",
            "benchmark_adds_nothing_across_processes": "across fresh processes, cudnn.benchmark "
            "made no convolution output vary that did not already vary within one process "
            "without it",
        },
        ("cuda",),
        {
            "det_algos_fix_all": (),
            "forward_stable": (),
            "conv_varies_without_benchmark": ("cuda", "full shapes"),
            "benchmark_adds_nothing_across_processes": ("fresh processes", "cuda"),
        },
        applies="CUDA devices (live or recorded)",
        test="tests/test_gpu_lessons.py",
    ),
    linear_flag.CLAIM.key: linear_flag.CLAIM,
}
MISSING = {
    "cuda": "a fact about CUDA devices (atomic adds racing, cuDNN's algorithms): this run is on "
    "the CPU, which has neither. Fix: run it on an NVIDIA GPU, or read the recorded run "
    "(device='auto' on a machine without one)",
    "full shapes": "decided on the lesson's full convolution shapes only, where cuDNN picks "
    "backward algorithms that add with atomics; for the small quick shapes its heuristics may "
    "pick deterministic ones (they did on an H100). Fix: run with quick=False",
    "fresh processes": "no fresh processes were run (processes=0). Fix: set processes ≥ 1",
    "linear_flag record": linear_flag.MISSING,
}


def _missing(data: DeterminismData, cuda: bool, quick: bool) -> Any:
    """Why a part the claims need is missing from this run (None where it is present)."""
    absent = {
        "cuda": not cuda,
        "full shapes": quick and cuda,
        "fresh processes": not data.fresh_processes.rows,
        "linear_flag record": data.linear_flag is None,
    }
    return lambda part: MISSING[part] if absent.get(part) else None


def _decide(data: DeterminismData) -> dict[str, Claim]:
    rows = data.rows
    n = data.n_runs
    by = {(r.op, r.case, r.output, r.config): r for r in rows}
    conv = [r for r in rows if r.op == "conv2d"]
    keys = {(r.op, r.case, r.output) for r in rows}
    ia = [r for r in rows if r.op == "index_add_" and r.config == "default"]
    ia_cd = [r for r in rows if r.op == "index_add_" and r.config == "cudnn.deterministic"]
    det = [r for r in rows if r.config == "use_deterministic_algorithms"]
    conv_det = [r for r in conv if r.config == "cudnn.deterministic"]
    stable_bench = [k for k in keys if k[0] == "conv2d" and not by[(*k, "benchmark")].varies]
    vary_default = [k for k in keys if k[0] == "conv2d" and by[(*k, "default")].varies]
    raised = [p.op for p in data.raises if p.raised]
    fresh_bench = [f for f in data.fresh_processes.rows if f.config == "benchmark"]
    varied = {k for k, r in by.items() if r.varies}
    holds = {
        "atomics_vary": bool(ia) and all(r.varies for r in ia),
        "det_algos_fix_all": bool(det) and all(not r.varies for r in det),
        "cudnn_det_fixes_conv": bool(conv_det) and all(not r.varies for r in conv_det),
        "cudnn_det_not_atomics": bool(ia_cd) and all(r.varies for r in ia_cd),
        "conv_varies_without_benchmark": bool(vary_default),
        "conv_stable_with_benchmark": bool(stable_bench),
        "some_ops_raise": bool(raised),
        "forward_stable": all(not r.varies for r in conv if r.output == "forward"),
        "benchmark_adds_nothing_across_processes": bool(fresh_bench)
        and all(
            f.distinct == 1 or ("conv2d", f.case, f.output, "default") in varied
            for f in fresh_bench
        ),
    }
    measured = {
        "atomics_vary": f" (in {n} runs)",
        "some_ops_raise": f" ({len(raised)} of {len(data.raises)} probed)",
    }
    return {k: CLAIMS[k].claim(v, measured.get(k, "")) for k, v in holds.items()}


SHORT = {
    "benchmark + cudnn.deterministic": "bench+det",
    "use_deterministic_algorithms": "det_algos",
    "cudnn.deterministic": "cudnn.det",
}


def _short(config: str) -> str:
    return SHORT.get(config, config)


def fixes(cells: dict[str, Row]) -> str:
    """Which flag settings make one op's result identical run to run, from its rows."""
    raised = [_short(c) for c, r in cells.items() if r.raised]
    raises = f"; raises under {', '.join(raised)}" if raised else ""
    if not any(r.varies for r in cells.values()):
        return "deterministic" + raises
    fixed = [_short(c) for c, r in cells.items() if c != "default" and not (r.raised or r.varies)]
    return "varies; fixed by " + (", ".join(fixed) if fixed else "nothing") + raises


def _keyed(rows: list[Row]) -> dict[tuple[str, str, str], dict[str, Row]]:
    """The rows by (op, output, case), in order of first appearance, then by config."""
    keyed: dict[tuple[str, str, str], dict[str, Row]] = {}
    for r in rows:
        keyed.setdefault((r.op, r.output, r.case), {})[r.config] = r
    return keyed


def _outcomes(data: DeterminismData, src: Any) -> tuple[Outcome, ...]:
    """Which flag fixes which op (one outcome per op output and case), then which ops raise
    under use_deterministic_algorithms(True)."""
    version = torch_version() if src.live else src.record.provenance.get("torch", "")
    kw = {"kind": src.kind, "version": version, "device": src.label}
    out = []
    for (op, output, case), cells in _keyed(data.rows).items():
        counts = " · ".join(
            f"{_short(c)} {'raises' if r.raised else r.distinct}" for c, r in cells.items()
        )
        what = op if output == "result" else f"{op} {output}"
        out.append(
            Outcome(
                f"{what} ({case})",
                "torch",
                value=fixes(cells),
                settings={"runs": data.n_runs},
                note=f"distinct results in {data.n_runs} runs: {counts}",
                **kw,
            )
        )
    for p in data.raises:
        out.append(
            Outcome(
                f"{p.op} under use_deterministic_algorithms(True)",
                "torch",
                value="raises" if p.raised else "runs",
                settings={"deterministic_algorithms": True},
                note=p.message[:100],
                **kw,
            )
        )
    return tuple(out)


#: A live run on a CPU is bounded: small shapes, at most this many runs and fresh processes
#: (a CPU's kernels are deterministic; the full GPU shapes would take many minutes there).
CPU_MAX_RUNS = 3
CPU_MAX_PROCESSES = 1


def compute(device: str, runs: int, processes: int, quick: bool, record: str) -> Comparison:
    src = resolve(device, record)
    bounded = ""
    if src.live:
        from .experiment import run_determinism

        if src.device.type == "cpu":
            runs, processes = min(runs, CPU_MAX_RUNS), min(processes, CPU_MAX_PROCESSES)
            quick = True
            bounded = (
                f" (bounded on a CPU: quick shapes, {runs} runs, {processes} fresh process"
                f"{'es' if processes != 1 else ''})"
            )
        run = run_determinism(src.device, n_runs=runs, quick=quick, processes=processes)
        run[ulp_unit.KEY] = ulp_unit.EXACT  # measured now, by fpexplore.metrics
    else:
        run = src.record.experiments["determinism"]
    with src.reading("determinism"):
        linear_claims, linear = linear_flag.lesson_parts()
        data = DeterminismData(
            **parse(run),
            source=src.kind,
            banner=src.banner + bounded,
            card=src.label,
            linear_flag=linear,
            ulp_unit=ulp_unit.words(run),
        )
        cuda = src.device is None or src.device.type == "cuda"
        why = _missing(data, cuda, bool(src.live and quick))
        return present.comparison(
            src,
            _outcomes(data, src),
            _decide(data) | linear_claims,
            data,
            EXPLANATION,
            missing=missing_parts(CLAIMS.values(), why),
        )


def rows_table(comparison: Comparison, *, only_varying: bool = False) -> str:
    """Which flag fixes which op: op, output, case, the distinct results (or 'raises') under
    each configuration, and the verdict (``only_varying``: the ops that vary somewhere, then
    how many others do not)."""
    data = comparison.data
    configs = list(data.configs)
    # two lines per op (its name, then its counts and verdict) so that the table fits a
    # notebook 1000 px wide with the sidebar open
    from ...result.text_table import COLUMNS

    w = max(7, *(len(_short(c)) + 1 for c in configs))
    head = "    " + "".join(f"{_short(c):>{w}}" for c in configs)
    lines = ["op / output / case: verdict", head, "-" * len(head)]
    steady = 0
    for (op, output, case), cells in _keyed(data.rows).items():
        if only_varying and not any(r.varies for r in cells.values()):
            steady += 1
            continue
        counts = [
            "-" if c not in cells else "raises" if cells[c].raised else cells[c].distinct
            for c in configs
        ]
        lines += textwrap.wrap(
            f"{op} / {output} / {case}: {fixes(cells)}", COLUMNS, subsequent_indent="  "
        )
        lines.append("    " + "".join(f"{v!s:>{w}}" for v in counts))
    if steady:
        lines.append(f"(and {steady} more that give one result under every setting)")
    return "\n".join(lines)


def figure(comparison: Comparison) -> Any:
    """Distinct results per op and flag setting (heat map), and index_add_'s error per run."""
    import matplotlib.pyplot as plt
    import numpy as np

    data = comparison.data
    configs = list(data.configs)
    keys = list(_keyed(data.rows))
    cells = {(r.op, r.output, r.case, r.config): r for r in data.rows}
    grid = np.zeros((len(keys), len(configs)))
    # the heat map above the run-by-run plot, 6.5 in wide: its labels stay readable in a
    # notebook 1000 px wide with the sidebar open (a 14 in wide figure shrank them to 3 px)
    fig, (ax, ax2) = plt.subplots(
        2,
        1,
        figsize=(WIDTH_IN, 0.3 * len(keys) + 5),
        gridspec_kw={"height_ratios": [0.3 * len(keys) + 1.5, 3]},
    )
    for i, k in enumerate(keys):
        for j, c in enumerate(configs):
            r = cells[(*k, c)]
            grid[i, j] = -1 if r.raised else r.distinct
            text = "raises" if r.raised else str(r.distinct)
            color = "white" if grid[i, j] > 1 else "black"
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color=color)
    ax.imshow(
        np.where(grid < 0, np.nan, grid),
        cmap="Reds",
        aspect="auto",
        vmin=0,
        vmax=max(2, data.n_runs),
    )
    ax.set_xticks(
        range(len(configs)), [_short(c) for c in configs], rotation=25, ha="right", fontsize=10
    )
    labels = [f"{op} {out} | {case}" for op, out, case in keys]
    ax.set_yticks(
        range(len(keys)), [t if len(t) <= 36 else t[:35] + "…" for t in labels], fontsize=10
    )
    ax.set_title(f"distinct results in {data.n_runs} runs\n{data.card}", fontsize=9)
    case = next((k[2] for k in keys if k[0] == "index_add_"), "")
    for c in ("default", "use_deterministic_algorithms"):
        row = cells.get(("index_add_", "result", case, c))
        if row is not None and row.ulp_vs_truth_first:
            ulps = row.ulp_vs_truth_first
            ax2.plot(range(1, len(ulps) + 1), ulps, "o-", label=c)
    ax2.axhline(0, color="k", lw=0.5)
    ax2.set_xlabel("run")
    ax2.set_ylabel("bin 0 error vs exact sum\n(" + data.ulp_unit.split(" (")[0] + ")")
    ax2.set_title("index_add_: one bin, run after run", fontsize=9)
    ax2.legend(fontsize=8, loc="best")  # where it covers the fewest points
    return present.with_banner(fig, data.banner)


def record_gpu(s: GpuSession) -> dict[str, Any]:
    """The determinism experiment, after the cuBLAS probe (which runs before
    ``CUBLAS_WORKSPACE_CONFIG`` is set, for the experiment only, where the caller did not set
    it: the process's environment is left as it was)."""
    import os

    from . import raise_probe
    from .experiment import run_determinism

    cublas = raise_probe.probe_cublas(s.device)
    s.say("cublas_probe: done")
    given = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    try:
        det = run_determinism(
            s.device, n_runs=s.n_runs, quick=s.quick, seed=0, processes=s.processes,
            progress=s.say,
        )  # fmt: skip
    finally:
        raise_probe.set_workspace(given)
    return {**det, "cublas_probe": cublas}


LESSON = Lesson(
    name="gpu_determinism",
    title="cuDNN and determinism flags: which op varies run to run, and which flag fixes it",
    summary="Run-to-run variation of conv, index_add_, scatter_add_ and more on a GPU under "
    "cudnn.benchmark, cudnn.deterministic and use_deterministic_algorithms",
    params=(
        device_param(),
        Interval("runs", 10, "runs of each op (live runs only)", low=2, high=50, integer=True),
        Interval(
            "processes",
            2,
            "fresh processes for the cudnn.benchmark probe (live only)",
            low=0,
            high=8,
            integer=True,
        ),
        Flag("quick", False, "small shapes, for a fast smoke test (live only)"),
        record_param(),
    ),
    compute=compute,
    claims=CLAIMS,
    observations=present.OBSERVATIONS,
    explanation=EXPLANATION,
    figure=figure,
    data=DeterminismData,
    quick={"quick": True, "runs": 2, "processes": 0},
    gpu_experiment=GpuExperiment("determinism", record_gpu),
)
