"""A built wheel, installed outside the checkout, carries the data its lessons read.

The wheel is built from a copy of the working tree (so no stale ``build/`` folder leaks into it)
and installed with ``--no-deps`` into a fresh virtual environment in a temporary folder, which
reuses the development environment's installed libraries through a ``.pth`` file (that folder's
own ``.pth`` files, such as the editable install's finder, are not processed). The DJL jars are
not reachable from there: DJL says Unavailable, the rest runs on the shipped records and images.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PIP = [sys.executable, "-m", "pip"]
PIP_WHEEL = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
PROBE = r"""
import json, os, sys
import fpexplore
from fpexplore import images, paths, records

out = {"file": fpexplore.__file__, "data": str(paths.data_dir()),
       "package_data": str(paths.package_data_dir()),
       "records": [p.name for p in records.available()]}
c = fpexplore.run("summation_order", n=10_000, distribution="allequal", dtype="float32")
out["summation"] = [[o.implementation, o.kind, o.ran, o.unavailable or ""] for o in c.outcomes]
d = fpexplore.run("djl_normalization", stage="decode", image="gradient_q75.jpg")
out["decode"] = [[o.implementation, o.ran, list(getattr(o.value, "shape", ()))]
                 for o in d.outcomes]
print(json.dumps(out))
"""


def _tree_copy(dest: Path) -> Path:
    """The working tree's tracked and new (not ignored) files, copied to ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for rel in filter(None, (p.decode() for p in listed)):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh venv outside the checkout with the built wheel installed."""
    base = tmp_path_factory.mktemp("wheel")
    src = _tree_copy(base / "src")
    wheels = base / "wheels"
    subprocess.run(
        [*PIP_WHEEL, "-w", str(wheels), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("fpexplore-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [*PIP, "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    shutil.rmtree(src)  # nothing of the checkout is left to find
    return python


def test_wheel_ships_the_data_files() -> None:
    """setup.py lists exactly the checkout's data files that the lessons read."""
    sys.path.insert(0, str(REPO))
    try:
        import setup as build_hook  # the build hook (its setup() runs only as __main__)
    finally:
        sys.path.remove(str(REPO))
    names = {p.as_posix() for p in build_hook.data_files()}
    assert {f"images/{n}" for n in _image_names()} <= names
    gpu = REPO / "data" / "gpu"
    # every record, those in subfolders (CUDA kernels, determinism checks, NCCL) included
    assert {f"gpu/{p.relative_to(gpu).as_posix()}" for p in gpu.rglob("*.json")} <= names


def _image_names() -> tuple[str, ...]:
    from fpexplore import images

    return images.names()


@pytest.mark.slow
def test_installed_wheel_runs_lessons_on_its_own_data(installed: Path, tmp_path: Path) -> None:
    site = installed.parent.parent
    wheel_files = {p.name for p in (REPO / "data" / "gpu").glob("*.json")}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FPEXPLORE_", "PYTHON"))}
    env["FPEXPLORE_CACHE"] = str(tmp_path / "cache")  # no DJL jars: DJL must say Unavailable
    env["HOME"] = str(tmp_path)
    done = subprocess.run(
        [str(installed), "-c", PROBE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # the installed copy ran, reading the data shipped inside it
    assert Path(out["file"]).is_relative_to(site), out["file"]
    assert out["data"] == out["package_data"]
    assert Path(out["data"]).is_relative_to(site)
    assert wheel_files and set(out["records"]) <= wheel_files and out["records"]
    recorded = [o for o in out["summation"] if o[1] == "recorded"]
    assert recorded and all(ran for _, _, ran, _ in recorded), out["summation"]
    pil = [o for o in out["decode"] if o[0].startswith("PIL")]
    assert pil and pil[0][1], out["decode"]
    assert pil[0][2][:2] == list(_image_shape("gradient"))
    djl = [o for o in out["decode"] if o[0].startswith("djl")]
    assert djl and not djl[0][1]


def _image_shape(kind: str) -> tuple[int, int]:
    from fpexplore import images

    return images.SIZES[kind]
