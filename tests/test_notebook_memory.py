"""The notebook memory script: CUDA libraries found in smaps, peaks of a whole process tree."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import notebook_memory as nm  # noqa: E402  (a script, not a package module)

SMAPS = """\
7f0000000000-7f0000100000 r-xp 00000000 fd:01 11 /venv/lib/nvidia/cublas/lib/libcublasLt.so.13
Size:               1024 kB
Rss:                 400 kB
Pss:                 200 kB
VmFlags: rd ex mr mw me
7f0000100000-7f0000200000 r-xp 00000000 fd:01 12 /venv/lib/torch/lib/libtorch_cuda.so
Rss:                 100 kB
Pss:                 100 kB
7f0000200000-7f0000300000 r-xp 00000000 fd:01 13 /venv/lib/torch/lib/libtorch_cpu.so
Rss:                5000 kB
Pss:                5000 kB
7f0000300000-7f0000400000 rw-p 00000000 00:00 0
Rss:                 700 kB
Pss:                 700 kB
7f0000400000-7f0000500000 r-xp 00000000 fd:01 14 /usr/lib/x86_64-linux-gnu/libcurl.so.4
Rss:                  30 kB
Pss:                  30 kB
"""


def test_cuda_libraries_are_picked_from_smaps() -> None:
    rss, pss = nm.cuda_in_smaps(SMAPS.splitlines(keepends=True))
    # libcublasLt (under nvidia/) and libtorch_cuda; not libtorch_cpu, anonymous memory, or
    # libcurl (a libcu* name that is no CUDA library)
    assert (rss, pss) == ((400 + 100) * 1024, (200 + 100) * 1024)


def test_sampler_sees_children_and_their_peak() -> None:
    code = (
        "import subprocess, sys, time;"
        "c = subprocess.Popen([sys.executable, '-c', "
        "'b = bytearray(300_000_000); import time; time.sleep(1.5)']);"
        "c.wait()"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    peak = nm.Peak("child")
    sampler = nm.Sampler(proc.pid, peak)
    sampler.start()
    proc.wait(timeout=60)
    time.sleep(0.2)
    sampler.stop.set()
    sampler.join()
    assert peak.processes == 2
    assert peak.rss > 300_000_000
    # what holds the memory at the peak: each process with its private bytes, the child first
    holders = sorted(peak.at_peak, key=lambda cb: -cb[1])
    assert len(holders) == 2 and holders[0][1] > 290_000_000 > holders[1][1]
    assert "bytearray" in holders[0][0]
    assert nm._left_running(sampler.seen.values(), grace_s=1) == []


def test_a_shared_library_is_charged_once() -> None:
    lines = SMAPS.splitlines(keepends=True)
    one = nm.read_smaps(lines)
    assert one.private == 0 and sum(one.shared.values()) == 0  # no Private/Shared lines above
    lib = (
        "7f0000000000-7f0000100000 r-xp 00000000 fd:01 11 /venv/lib/nvidia/libcublas.so.13\n"
        "Rss: 400 kB\nShared_Clean: 300 kB\nPrivate_Clean: 100 kB\n"
        "7f0000300000-7f0000400000 rw-p 00000000 00:00 0\n"
        "Rss: 700 kB\nPrivate_Dirty: 700 kB\n"
    )
    parent, child = nm.read_smaps(lib.splitlines()), nm.read_smaps(lib.splitlines())
    total, cuda = nm.charged([parent, child])
    # private pages of both processes, the shared library pages once
    assert total == (2 * (100 + 700) + 300) * 1024
    assert cuda == (2 * 100 + 300) * 1024
