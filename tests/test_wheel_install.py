"""A built wheel, installed outside the checkout, carries the data its lessons read.

The installed package is the Binder replay's (`binder_env`, shared with the notebook series):
postBuild builds the wheel from a copy of the working tree (so no stale ``build/`` folder leaks
into it) and installs it into a fresh virtual environment in a temporary folder, which reuses
the development environment's installed libraries through a ``.pth`` file. Run here without the
project cache, the DJL jars are not reachable: DJL says Unavailable, the rest runs on the
shipped records and images.
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

PROBE = r"""
import json, os, sys
import fpexplore
from fpexplore import images, paths, records

out = {"file": fpexplore.__file__, "data": str(paths.data_dir()),
       "package_data": str(paths.package_data_dir()),
       "records": [p.name for p in records.available()],
       "recordings": str(paths.recordings_dir())}
c = fpexplore.run("summation_order", n=10_000, distribution="allequal", dtype="float32")
out["summation"] = [[o.implementation, o.kind, o.ran, o.unavailable or ""] for o in c.outcomes]
d = fpexplore.run("djl_normalization", stage="decode", image="gradient_q75.jpg")
out["decode"] = [[o.implementation, o.ran, list(getattr(o.value, "shape", ()))]
                 for o in d.outcomes]
# the presentation files: the stylesheet, and a comparison rendered with it
out["html"] = c._repr_html_()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def installed(binder_replay: Replay) -> Path:
    """The Python of the Binder replay's venv (`binder_env`): outside the checkout, the
    package installed from the wheel pip built of a copy of the tree."""
    return binder_replay.require()


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
@pytest.mark.reusable
def test_installed_wheel_runs_lessons_on_its_own_data(installed: Path, tmp_path: Path) -> None:
    site = installed.parent.parent
    wheel_files = {p.name for p in (REPO / "data" / "gpu").glob("*.json")}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FPEXPLORE_", "PYTHON"))}
    env["FPEXPLORE_CACHE"] = str(tmp_path / "cache")  # no DJL jars: DJL must say Unavailable
    env["HOME"] = str(tmp_path)
    env.pop("XDG_DATA_HOME", None)  # the user's data folder: ~/.local/share/fpexplore
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
    # record-gpu's default folder: the user's, outside site-packages
    assert out["recordings"] == str(tmp_path / ".local" / "share" / "fpexplore" / "gpu")
    recorded = [o for o in out["summation"] if o[1] == "recorded"]
    assert recorded and all(ran for _, _, ran, _ in recorded), out["summation"]
    pil = [o for o in out["decode"] if o[0].startswith("PIL")]
    assert pil and pil[0][1], out["decode"]
    assert pil[0][2][:2] == list(_image_shape("gradient"))
    djl = [o for o in out["decode"] if o[0].startswith("djl")]
    assert djl and not djl[0][1]
    assert ".fpx-t" in out["html"] and "<table class='fpx-t'>" in out["html"]


def _image_shape(kind: str) -> tuple[int, int]:
    from fpexplore import images

    return images.SIZES[kind]


def _record(good: dict, date: str) -> dict:
    data = json.loads(json.dumps(good))
    data["provenance"]["date"] = date
    return data


def test_record_gpu_default_and_record_precedence(monkeypatch, tmp_path: Path) -> None:
    """``record-gpu`` never writes into an installed package by default; records are read from
    the checkout (or $FPEXPLORE_DATA) first, then the user's recordings, then the package's."""
    from fpexplore import cli, paths, records

    good = json.loads(records.find().read_text())
    monkeypatch.delenv("FPEXPLORE_DATA", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "fpexplore" / "gpu"
    assert paths.recordings_dir() == REPO / "data" / "gpu"  # a checkout: its data/gpu
    assert paths.gpu_record_dirs()[:2] == [REPO / "data" / "gpu", user]

    # an installed package (no checkout): the user's folder, and the package's data last
    package = tmp_path / "site" / "fpexplore" / "data"
    monkeypatch.setattr(paths, "in_checkout", lambda: False)
    monkeypatch.setattr(paths, "package_data_dir", lambda: package)
    assert paths.recordings_dir() == user
    assert paths.gpu_record_dirs() == [user, package / "gpu"]
    assert records.gpu_dirs() == [user, package / "gpu"]
    (package / "gpu").mkdir(parents=True)
    user.mkdir(parents=True)
    (package / "gpu" / "card-a.json").write_text(json.dumps(_record(good, "2020-01-01T00:00")))
    (package / "gpu" / "card-b.json").write_text(json.dumps(_record(good, "2020-01-02T00:00")))
    (user / "card-a.json").write_text(json.dumps(_record(good, "2020-01-03T00:00")))
    assert records.available() == [user / "card-a.json", package / "gpu" / "card-b.json"]
    assert records.find() == user / "card-a.json"

    # $FPEXPLORE_DATA comes first, and is where record-gpu writes
    monkeypatch.setenv("FPEXPLORE_DATA", str(tmp_path / "mine"))
    assert paths.recordings_dir() == tmp_path / "mine" / "gpu"
    assert paths.gpu_record_dirs() == [tmp_path / "mine" / "gpu", user, package / "gpu"]

    # --help says where the record goes
    text = cli.build_parser()._subparsers._group_actions[0].choices["record-gpu"].format_help()
    assert "~/.local/share/fpexplore/gpu" in text and "data/gpu in a source checkout" in text
