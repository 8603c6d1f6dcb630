"""Peak memory of each notebook: its kernel plus every child (the DJL worker JVM, LibTorch).

    .venv/bin/python benchmarks/notebook_memory.py [NOTEBOOK ...] [--python PY] [--json OUT]
        [--jobs N]

Each notebook runs headless (nbclient) in a fresh kernel started from ``--python`` (default:
this interpreter), one kernel per notebook, as Binder users are told to. ``--jobs N`` runs N
notebooks at once, each in its own measuring process: every measurement below is of one
kernel's own process tree, so notebooks side by side do not add to each other's numbers (only
PSS, which splits shared pages with every process that maps them, reads lower). A sampler
polls the kernel's process tree every 0.1 s and keeps the peak of

- RSS summed over the tree (an upper bound: a page shared by the kernel and its children, such
  as a library both map, counts once per process),
- PSS summed over the tree (shared pages split between their users, including processes
  outside the tree that map the same libraries: lower on a busy machine), and
- the charge: every private page of the tree plus every shared page once (per mapping, the
  largest resident share among the tree's processes), read from ``/proc/PID/smaps`` every
  second and at each new RSS peak. That is what a container holding only this tree (a Binder
  session) is charged, and the number held against Binder's limit.

The smaps pass also finds the CUDA libraries (``libcudart``, ``libcublas*``, ``libcudnn*``,
``libcufft``, ``libcusparse*``, the other ``libcu*`` of the CUDA toolkit, ``libnv*``,
``libnccl``, ``libtorch_cuda``, ``libc10_cuda``, ``libtriton`` and anything under an
``nvidia/`` package folder). PyTorch's CPU wheels, which Binder installs, carry none of those,
so ``charge - CUDA`` estimates the peak with the Binder image's packages. After the notebook,
the kernel is shut down and every process the tree had is checked to be gone: a notebook must
close what it starts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import re
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
GB = 1e9
#: Binder's limit, and the goal per notebook with the Binder image's packages
BINDER_LIMIT_GB = 2.0
GOAL_GB = 1.5
SAMPLE_S = 0.1
FIELDS = ("Rss:", "Pss:", "Private_Clean:", "Private_Dirty:", "Shared_Clean:", "Shared_Dirty:")
SMAPS_EVERY_S = 1.0
CUDA_LIB = re.compile(
    r"(^|/)(libcuda|libcudart|libcublas|libcudnn|libcufft|libcurand|libcusolver|libcusparse"
    r"|libcupti|libcufile|libnv[A-Za-z]|libnccl|libtorch_cuda|libc10_cuda|libcaffe2_nvrtc"
    r"|libtriton)|/nvidia/"
)


@dataclass
class Peak:
    """One notebook's measurement (bytes)."""

    notebook: str
    seconds: float = 0.0
    ok: bool = False
    error: str = ""
    rss: int = 0
    pss: int = 0
    cuda_rss: int = 0  # CUDA libraries resident in the tree, at the RSS peak
    cuda_pss: int = 0
    charged: int = 0  # private pages + each shared page once: what a container is charged
    cuda_charged: int = 0
    processes: int = 0  # most processes in the tree at once
    commands: list[str] = field(default_factory=list)
    #: at the charge peak: each process's command and its private bytes (what holds memory)
    at_peak: list[tuple[str, int]] = field(default_factory=list)
    left_running: list[str] = field(default_factory=list)

    @property
    def cpu_wheel_rss(self) -> int:
        """Estimated peak with CPU-only torch: the RSS peak without the CUDA libraries."""
        return self.rss - self.cuda_rss

    @property
    def cpu_wheel_charged(self) -> int:
        """Estimated container charge with CPU-only torch (shared pages once, no CUDA)."""
        return self.charged - self.cuda_charged


def tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


@dataclass
class Smaps:
    """One process's resident memory from its smaps: private bytes, shared bytes per mapping
    (keyed by file path, or by address range for anonymous memory), and the CUDA part."""

    private: int = 0
    shared: dict[str, int] = field(default_factory=dict)
    cuda_private: int = 0
    cuda_shared: dict[str, int] = field(default_factory=dict)
    cuda_rss: int = 0
    cuda_pss: int = 0


def read_smaps(lines) -> Smaps:
    """Parse the lines of an smaps file."""
    out = Smaps()
    key, cuda = "", False
    for line in lines:
        head = line.split(maxsplit=1)[0] if line.strip() else ""
        if not head.endswith(":"):
            # a mapping header: address range, perms, offset, dev, inode, [path]
            parts = line.split(maxsplit=5)
            path = parts[5].strip() if len(parts) == 6 else ""
            key = path if path.startswith("/") else f"{path or 'anon'}@{parts[0]}"
            cuda = bool(path) and bool(CUDA_LIB.search(path))
            continue
        if head not in FIELDS:
            continue
        kb = int(line.split()[1]) * 1024
        if head.startswith("Private"):
            out.private += kb
            out.cuda_private += kb if cuda else 0
        elif head.startswith("Shared"):
            out.shared[key] = out.shared.get(key, 0) + kb
            if cuda:
                out.cuda_shared[key] = out.cuda_shared.get(key, 0) + kb
        elif cuda and head == "Rss:":
            out.cuda_rss += kb
        elif cuda and head == "Pss:":
            out.cuda_pss += kb
    return out


def cuda_in_smaps(lines) -> tuple[int, int]:
    """(Rss, Pss) in bytes of the CUDA-library mappings in the lines of an smaps file."""
    view = read_smaps(lines)
    return view.cuda_rss, view.cuda_pss


def smaps(pid: int) -> Smaps:
    try:
        with open(f"/proc/{pid}/smaps", encoding="utf-8", errors="replace") as f:
            return read_smaps(f)
    except (OSError, ValueError):
        return Smaps()


def charged(views: list[Smaps]) -> tuple[int, int]:
    """(bytes, CUDA bytes) the tree costs a container: every private page, and every shared
    page once (the largest resident share of each mapping among the processes)."""

    def once(maps: list[dict[str, int]]) -> int:
        best: dict[str, int] = {}
        for m in maps:
            for k, v in m.items():
                best[k] = max(best.get(k, 0), v)
        return sum(best.values())

    total = sum(v.private for v in views) + once([v.shared for v in views])
    cuda = sum(v.cuda_private for v in views) + once([v.cuda_shared for v in views])
    return total, cuda


class Sampler(threading.Thread):
    """Polls the process tree of ``pid`` until stopped; keeps the peaks in ``peak``."""

    def __init__(self, pid: int, peak: Peak) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak = pid, peak
        self.stop = threading.Event()
        self.seen: dict[int, psutil.Process] = {}

    def run(self) -> None:
        last_smaps = 0.0
        while not self.stop.is_set():
            procs = tree(self.pid)
            rss = pss = 0
            for p in procs:
                self.seen.setdefault(p.pid, p)
                try:
                    info = p.memory_full_info()
                    rss, pss = rss + info.rss, pss + info.pss
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
            self.peak.processes = max(self.peak.processes, len(procs))
            now = time.monotonic()
            if rss > self.peak.rss or now - last_smaps >= SMAPS_EVERY_S:
                last_smaps = now
                views = [smaps(p.pid) for p in procs]
                if rss > self.peak.rss:
                    self.peak.cuda_rss = sum(v.cuda_rss for v in views)
                if pss > self.peak.pss:
                    self.peak.cuda_pss = sum(v.cuda_pss for v in views)
                charge, cuda_charge = charged(views)
                if charge > self.peak.charged:
                    self.peak.charged, self.peak.cuda_charged = charge, cuda_charge
                    self.peak.at_peak = [
                        (" ".join(_cmd(p)[:4]), v.private)
                        for p, v in zip(procs, views, strict=True)
                    ]
            self.peak.rss = max(self.peak.rss, rss)
            self.peak.pss = max(self.peak.pss, pss)
            self.stop.wait(SAMPLE_S)


def _kernelspec(python: str, where: Path) -> str:
    """A kernelspec named ``fpx-measured`` that starts ``python``'s ipykernel."""
    spec = where / "kernels" / "fpx-measured"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "fpexplore (measured)",
                "language": "python",
            }
        )
    )
    return "fpx-measured"


def measure(notebook: Path, python: str, timeout_s: int = 900) -> Peak:
    """Run ``notebook`` in a fresh kernel of ``python`` and measure its process tree."""
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    peak = Peak(notebook.name)
    with tempfile.TemporaryDirectory(prefix="fpx-mem-") as tmp:
        name = _kernelspec(python, Path(tmp))
        ksm = KernelSpecManager(kernel_dirs=[str(Path(tmp) / "kernels")])
        km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
        nb = nbformat.read(notebook, as_version=4)
        t0 = time.monotonic()
        km.start_kernel(cwd=str(notebook.parent), env={**os.environ, "MPLBACKEND": "agg"})
        pid = km.provisioner.process.pid  # type: ignore[union-attr]
        sampler = Sampler(pid, peak)
        sampler.start()
        try:
            NotebookClient(nb, km=km, timeout=timeout_s, kernel_name=name).execute()
            peak.ok = True
        except CellExecutionError as exc:
            peak.error = str(exc).strip().splitlines()[-1][:300]
        except Exception as exc:  # a dead kernel, a timeout: measured all the same
            peak.error = f"{type(exc).__name__}: {exc}"[:300]
        finally:
            peak.seconds = time.monotonic() - t0
            sampler.stop.set()
            sampler.join()
            if km.has_kernel:
                km.shutdown_kernel(now=False)
        peak.commands = sorted(
            {" ".join(_cmd(p)[:2]) for p in sampler.seen.values() if p.pid != pid}
        )
        peak.left_running = _left_running(sampler.seen.values())
    return peak


def _cmd(p: psutil.Process) -> list[str]:
    try:
        return [Path(a).name if i == 0 else a for i, a in enumerate(p.cmdline()[:4])]
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return ["?"]


def _left_running(procs, grace_s: float = 10.0) -> list[str]:
    """Processes of the kernel's tree still alive ``grace_s`` after the kernel shut down
    (they are then terminated, so that one notebook's leftovers do not weigh on the next)."""
    procs = list(procs)
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    left = [f"{p.pid} {' '.join(_cmd(p))}" for p in alive]
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.terminate()
    return left


def table(peaks: list[Peak]) -> str:
    """A Markdown table of the peaks, in GB."""
    lines = [
        "| notebook | processes | peak RSS sum (GB) | CUDA libs in it | charged (GB) "
        "| est. CPU-wheel charged (GB) | time (s) | ran |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in peaks:
        lines.append(
            f"| {p.notebook} | {p.processes} | {p.rss / GB:.2f} | {p.cuda_rss / GB:.2f} | "
            f"{p.charged / GB:.2f} | {p.cpu_wheel_charged / GB:.2f} | {p.seconds:.0f} | "
            f"{'yes' if p.ok else 'NO: ' + p.error} |"
        )
    return "\n".join(lines)


def _measure(args: tuple[Path, str, int]) -> Peak:
    return measure(*args)


def _report(peak: Peak) -> None:
    print(
        f"{peak.notebook}: RSS {peak.rss / GB:.2f} GB (CUDA libs {peak.cuda_rss / GB:.2f} GB), "
        f"PSS {peak.pss / GB:.2f} GB, charged {peak.charged / GB:.2f} GB (CPU wheel: "
        f"{peak.cpu_wheel_charged / GB:.2f} GB), {peak.seconds:.0f} s"
        + ("" if peak.ok else f", FAILED: {peak.error}")
        + (f", LEFT RUNNING: {peak.left_running}" if peak.left_running else "")
        + "".join(f"\n  at the peak: {b / GB:.2f} GB private  {c}" for c, b in peak.at_peak),
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", help="default: notebooks/[0-9]*.ipynb")
    ap.add_argument("--python", default=sys.executable, help="the kernel's interpreter")
    ap.add_argument("--json", default=None, help="also write the measurements here")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    ap.add_argument("--jobs", type=int, default=1, help="notebooks measured at once")
    args = ap.parse_args(argv)
    books = [Path(n) for n in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
    todo = [(b.resolve(), args.python, args.timeout) for b in books]
    peaks = []
    with contextlib.ExitStack() as stack:
        if args.jobs > 1 and len(todo) > 1:
            # a fresh measuring process per notebook (forked before any sampler thread exists)
            ctx = multiprocessing.get_context("fork")
            pool = stack.enter_context(ctx.Pool(min(args.jobs, len(todo)), maxtasksperchild=1))
            found = pool.imap(_measure, todo)
        else:
            found = map(_measure, todo)
        for peak in found:
            peaks.append(peak)
            _report(peak)
    print(table(peaks))
    if args.json:
        rows = [
            {**asdict(p), "cpu_wheel_rss": p.cpu_wheel_rss, "cpu_wheel": p.cpu_wheel_charged}
            for p in peaks
        ]
        Path(args.json).write_text(json.dumps(rows, indent=1))
    bad = [p for p in peaks if not p.ok or p.left_running]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
