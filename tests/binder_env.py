"""The Binder recipe (binder/) replayed once per test session, as far as this machine allows:
the environment that the notebook series runs in (in JupyterLab, measured), and that the
installed-package tests use.

What is replayed: runtime.txt's Python, postBuild itself, unmodified, with `set -euo pipefail`,
in a fresh virtual environment outside the checkout, from a copy of the working tree: the
package is built and installed (not editable), so the notebooks read its shipped data; DJL
set-up, the widget bundle and the LibTorch build run (stamp-checked against the project cache,
so they only verify what make setup made).

What is not, and why:
- PyTorch's CPU wheel index is not reachable from here: postBuild runs with FPX_TORCH_INDEX
  empty (PyPI's torch, the CUDA build) unless the index answers. The memory measurement
  subtracts the CUDA libraries' resident memory to estimate the CPU-wheel peak.
- Downloads: this machine's package mirror cannot be cached by pip, so a cold install of the
  frameworks (several GB with CUDA torch) would take far longer than the suite's budget. The
  fresh venv therefore sees the development environment's installed frameworks through a
  folder of links (everything but fpexplore itself); postBuild's pip finds them satisfied.
  ``FPX_REPLAY_COLD=1`` replays with nothing pre-installed and an empty project cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
COLD = os.environ.get("FPX_REPLAY_COLD") == "1"
#: Binder's memory limit: every notebook's estimated peak with CPU-only torch stays below it
BINDER_LIMIT_GB = 2.0


@dataclass
class Replay:
    """postBuild's run: its exit status and output, and the environment it made."""

    tmp: Path
    src: Path
    venv: Path
    env: dict[str, str]
    returncode: int
    output: str
    seconds: float

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def require(self) -> Path:
        """The environment's Python, or the test fails with postBuild's output."""
        if self.returncode != 0:
            pytest.fail(f"postBuild exited with {self.returncode}:\n{self.output[-6000:]}")
        return self.python


def _tree_copy(dest: Path) -> Path:
    """The working tree's tracked and new (not ignored) files, copied to ``dest`` (as
    `make lite` copies them to build the wheel)."""
    sys.path.insert(0, str(REPO))
    try:
        from lite.build import tracked_copy
    finally:
        sys.path.remove(str(REPO))
    return tracked_copy(dest)


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


def replay(tmp: Path) -> Replay:
    """Run binder/postBuild into a fresh venv under ``tmp``, from a copy of the tree."""
    src = _tree_copy(tmp / "repo")
    venv = tmp / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    pip = [] if COLD else ["--without-pip"]  # warm: pip comes with the linked environment
    subprocess.run([base, "-m", "venv", str(venv), *pip], check=True)
    if not COLD:
        site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        (site / "site-packages" / "dev.pth").write_text(
            f"{_links_to_dev_environment(tmp / 'dev')}\n"
        )
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON", "FPX"))
    }
    env.update(
        PATH=f"{venv / 'bin'}:{env['PATH']}",
        FPX_PIP_CACHE="1",
        FPEXPLORE_CACHE=str(tmp / "cache" if COLD else REPO / ".cache"),
        # Binder's limit, as the container's would be: fresh processes one at a time there
        FPEXPLORE_MEMORY_LIMIT=str(int(BINDER_LIMIT_GB * 1e9)),
    )
    if not _reachable(CPU_INDEX + "/torch/"):
        env["FPX_TORCH_INDEX"] = ""  # PyPI's torch stands in for the CPU wheel
    t0 = time.monotonic()
    done = subprocess.run(
        [str(src / "binder" / "postBuild")],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600 if COLD else 900,
    )
    return Replay(
        tmp, src, venv, env, done.returncode, done.stdout + done.stderr, time.monotonic() - t0
    )


@pytest.fixture(scope="session")
def binder_replay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replay]:
    """postBuild's environment, made once for the session's users: the series in JupyterLab
    (tests/test_browser_notebooks.py), the replay's own checks and the installed-wheel test."""
    yield replay(tmp_path_factory.mktemp("binder"))
