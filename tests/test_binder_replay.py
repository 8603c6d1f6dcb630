"""The Binder recipe (binder/): the files repo2docker reads, and postBuild replayed (by
`binder_env`, once per session) into an environment where the package came from the build.

The notebook series runs in that environment in JupyterLab (tests/test_browser_notebooks.py),
where each notebook's kernel is measured against Binder's memory limit while it runs: every
notebook runs once for both checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from binder_env import Replay

REPO = Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"


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


@pytest.mark.slow
@pytest.mark.reusable
def test_postbuild_replay_installs_the_built_package(binder_replay: Replay) -> None:
    assert sys.version_info[:2] == (3, 11), "runtime.txt asks for Python 3.11"
    python = binder_replay.require()
    print(f"postBuild {binder_replay.seconds:.0f} s")
    # the package came from the build, not from the checkout, and reads its shipped data
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import fpexplore, json; from fpexplore import paths, backends;"
            "print(json.dumps([fpexplore.__file__, str(paths.data_dir()),"
            " [b.name for b in backends.probe_all(30) if b.available]]))",
        ],
        cwd=binder_replay.tmp,
        env=binder_replay.env,
        capture_output=True,
        text=True,
        check=True,
    )
    where, data, available = json.loads(probe.stdout.strip().splitlines()[-1])
    venv = binder_replay.venv
    assert Path(where).is_relative_to(venv) and Path(data).is_relative_to(venv)
    assert {"numpy", "torch", "tensorflow", "djl"} <= set(available), available
    assert os.access(binder_replay.src / "binder" / "postBuild", os.X_OK)
