"""Replay the Binder recipe (binder/) as far as this machine allows, then run the whole notebook
series in the result, measuring each notebook's peak memory.

What is replayed: runtime.txt's Python, apt.txt's packages (checked installed), postBuild
itself, unmodified, with `set -euo pipefail`, in a fresh virtual environment outside the
checkout, from a copy of the working tree: the package is built and installed (not editable),
so the notebooks read its shipped data; DJL set-up, the widget bundle and the LibTorch build
run (stamp-checked against the project cache, so they only verify what make setup made).

What is not, and why:
- PyTorch's CPU wheel index is not reachable from here: postBuild runs with FPX_TORCH_INDEX
  empty (PyPI's torch, the CUDA build) unless the index answers. The memory script subtracts
  the CUDA libraries' resident memory to estimate the CPU-wheel peak.
- Downloads: this machine's package mirror cannot be cached by pip, so a cold install of the
  frameworks (several GB with CUDA torch) would take far longer than the test's budget. The
  fresh venv therefore sees the development environment's installed frameworks through a
  folder of links (everything but fpexplore itself); postBuild's pip finds them satisfied.
  ``FPX_REPLAY_COLD=1`` replays with nothing pre-installed and an empty project cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
COLD = os.environ.get("FPX_REPLAY_COLD") == "1"
#: Binder's memory limit: every notebook's estimated peak with CPU-only torch stays below it
BINDER_LIMIT_GB = 2.0
#: notebooks of the series replayed at once (each kernel's tree measured on its own)
REPLAY_JOBS = min(2, os.cpu_count() or 1)


def _tree_copy(dest: Path) -> Path:
    """The working tree's tracked and new (not ignored) files, copied to ``dest`` (as
    `make lite` copies them to build the wheel)."""
    sys.path.insert(0, str(REPO))
    try:
        from lite.build import tracked_copy
    finally:
        sys.path.remove(str(REPO))
    return tracked_copy(dest)


def _apt_packages() -> list[str]:
    lines = (BINDER / "apt.txt").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def test_binder_files_are_what_repo2docker_reads() -> None:
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK)
    text = post.read_text()
    assert text.startswith("#!/usr/bin/env bash") and "set -euo pipefail" in text
    # CPU-only torch goes in before the package, so pip does not pull the CUDA build
    assert text.index("torch torchvision") < text.index("'.[")
    assert {"openjdk-17-jdk-headless", "maven"} <= set(_apt_packages())


def test_apt_packages_are_installed_here() -> None:
    missing = []
    for pkg in _apt_packages():
        done = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True
        )
        if "install ok installed" not in done.stdout:
            missing.append(pkg)
    assert not missing, f"apt.txt packages not installed here: {missing} (apt-get install them)"


def _reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status == 200
    except OSError:
        return False


def _links_to_dev_environment(dest: Path) -> Path:
    """A folder linking every installed distribution of the dev venv except fpexplore."""
    dest.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if entry.name.startswith(("fpexplore", "__editable__", "_distutils_hack")):
            continue
        if entry.suffix == ".pth":
            continue
        (dest / entry.name).symlink_to(entry)
    return dest


@pytest.mark.slow
@pytest.mark.reusable
def test_postbuild_replay_runs_every_notebook_within_binder_memory(tmp_path: Path) -> None:
    assert sys.version_info[:2] == (3, 11), "runtime.txt asks for Python 3.11"
    src = _tree_copy(tmp_path / "repo")
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    pip = [] if COLD else ["--without-pip"]  # warm: pip comes with the linked environment
    subprocess.run([base, "-m", "venv", str(venv), *pip], check=True)
    python = venv / "bin" / "python"
    if not COLD:
        site = venv / "lib" / "python3.11" / "site-packages"
        (site / "dev.pth").write_text(f"{_links_to_dev_environment(tmp_path / 'dev')}\n")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "FPX"))
    }
    env.update(
        PATH=f"{venv / 'bin'}:{env['PATH']}",
        FPX_PIP_CACHE="1",
        FPEXPLORE_CACHE=str(tmp_path / "cache" if COLD else REPO / ".cache"),
        # Binder's limit, as the container's would be: fresh processes one at a time there
        FPEXPLORE_MEMORY_LIMIT=str(int(BINDER_LIMIT_GB * 1e9)),
    )
    if not _reachable(CPU_INDEX + "/torch/"):
        env["FPX_TORCH_INDEX"] = ""  # PyPI's torch stands in for the CPU wheel
    t0 = time.monotonic()
    done = subprocess.run(
        [str(src / "binder" / "postBuild")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600 if COLD else 900,
    )
    build_s = time.monotonic() - t0
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]

    # the package came from the build, not from the checkout, and reads its shipped data
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import fpexplore, json; from fpexplore import paths, backends;"
            "print(json.dumps([fpexplore.__file__, str(paths.data_dir()),"
            " [b.name for b in backends.probe_all(30) if b.available]]))",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    where, data, available = json.loads(probe.stdout.strip().splitlines()[-1])
    assert Path(where).is_relative_to(venv) and Path(data).is_relative_to(venv)
    assert {"numpy", "torch", "tensorflow", "djl"} <= set(available), available

    # the whole series in that environment, a kernel per notebook, two notebooks at a time
    # (each measured on its own kernel's process tree), the longest (12, the last) first
    out = tmp_path / "memory.json"
    books = sorted((src / "notebooks").glob("[0-9]*.ipynb"), reverse=True)
    t1 = time.monotonic()
    series = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "notebook_memory.py")]
        + ["--python", str(python), "--json", str(out), "--jobs", str(REPLAY_JOBS)]
        + [str(p) for p in books],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    series_s = time.monotonic() - t1
    print(f"postBuild {build_s:.0f} s, notebook series {series_s:.0f} s\n{series.stdout}")
    peaks = json.loads(out.read_text())
    failed = [(p["notebook"], p["error"]) for p in peaks if not p["ok"]]
    assert not failed, failed
    left = [(p["notebook"], p["left_running"]) for p in peaks if p["left_running"]]
    assert not left, f"processes outlived their kernel: {left}"
    over = [p["notebook"] for p in peaks if p["cpu_wheel"] / 1e9 >= BINDER_LIMIT_GB]
    assert not over, series.stdout
    assert series.returncode == 0, series.stderr[-3000:]
