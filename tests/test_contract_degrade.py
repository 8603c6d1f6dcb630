"""Contract: every lesson runs from the command line with torch, TensorFlow, Java or all of
them hidden, and exits 0 with Unavailable rows naming the fix, claims that needed the missing
part "not checked", and no traceback; with everything present every claim holds.

Lessons are discovered, so a new lesson is covered as soon as it exists. Each configuration is
one child interpreter (tests/support/run_lessons.py) that runs every lesson at its ``quick``
values; frameworks are hidden by an import blocker (tests/support/sitecustomize.py), Java by a
PATH without ``java``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.java, pytest.mark.reusable]

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "tests" / "support"
TORCH = "torch,torchvision"
TF = "tensorflow,keras,tf_keras"
CONFIGS = {  # name: (modules hidden, Java hidden)
    "everything": ("", False),
    "no torch": (TORCH, False),
    "no tensorflow": (TF, False),
    "no java": ("", True),
    "nothing": (f"{TORCH},{TF}", True),
}
#: Words by which an Unavailable row names what fixes it.
FIX_WORDS = ("make ", "pip install", "record-gpu", "Fix", "fix", "install")


def _path_without_java(folder: Path) -> str:
    """A PATH with every command of the current one except ``java``."""
    folder.mkdir(exist_ok=True)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for name in os.listdir(entry):
            link = folder / name
            if name != "java" and not link.exists():
                link.symlink_to(Path(entry) / name)
    return str(folder)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    """Every configuration at once, each in its own child interpreter."""
    base = tmp_path_factory.mktemp("contract")
    no_java = _path_without_java(base / "bin")
    children = {}
    for name, (hidden, java_hidden) in CONFIGS.items():
        env = dict(os.environ, FPEXPLORE_TEST_HIDE=hidden, PYTHONPATH=str(SUPPORT))
        env["MPLBACKEND"] = "Agg"
        if java_hidden:
            env["PATH"] = no_java
            env.pop("JAVA_HOME", None)
        path = base / f"{name.replace(' ', '_')}.json"
        proc = subprocess.Popen(
            [sys.executable, str(SUPPORT / "run_lessons.py"), str(path)],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        children[name] = (proc, path)
    out = {}
    for name, (proc, path) in children.items():
        try:
            _, err = proc.communicate(timeout=900)
        except subprocess.TimeoutExpired:
            for p, _ in children.values():
                p.kill()
            raise
        assert proc.returncode == 0, (name, err[-3000:])
        out[name] = json.loads(path.read_text())
    return out


def _lessons(report: dict) -> dict[str, dict]:
    return report["lessons"]


def test_every_lesson_imports(runs):
    for name, report in runs.items():
        assert report["broken"] == {}, (name, report["broken"])
        assert _lessons(report), name


@pytest.mark.parametrize("config", list(CONFIGS))
def test_exit_0_and_no_traceback(runs, config):
    for lesson, entry in _lessons(runs[config]).items():
        assert entry["rc"] == 0, (config, lesson, entry["stderr"][-3000:])
        assert "Traceback" not in entry["stderr"], (config, lesson, entry["stderr"][-3000:])
        assert entry["result"]["outcomes"], (config, lesson)


def test_with_everything_present_every_claim_holds(runs):
    report = runs["everything"]
    assert not any(report["missing"].values()), report["missing"]
    for lesson, entry in _lessons(report).items():
        claims = entry["result"]["claims"]
        assert claims, lesson
        bad = {k: c for k, c in claims.items() if c["state"] != "holds"}
        assert not bad, (lesson, bad)


@pytest.mark.parametrize("config", [c for c in CONFIGS if c != "everything"])
def test_a_missing_part_degrades(runs, config):
    report = runs[config]
    hidden, java_hidden = CONFIGS[config]
    assert bool(report["missing"]["torch"]) == ("torch" in hidden), report["missing"]
    assert bool(report["missing"]["tensorflow"]) == ("tensorflow" in hidden), report["missing"]
    assert bool(report["missing"]["djl"]) == java_hidden, report["missing"]
    full = _lessons(runs["everything"])
    degraded = 0
    for lesson, entry in _lessons(report).items():
        result = entry["result"]
        claims = result["claims"]
        # a claim is never dropped: what could not be checked says so
        assert set(full[lesson]["result"]["claims"]) <= set(claims), (config, lesson)
        for key, claim in claims.items():
            assert claim["state"] != "fails", (config, lesson, key, claim)
            if claim["state"] == "not checked":
                assert claim["reason"], (config, lesson, key)
                degraded += 1
        for o in result["outcomes"]:
            if o["unavailable"] is not None:
                assert any(w in o["unavailable"] for w in FIX_WORDS), (config, lesson, o)
                degraded += 1
    assert degraded, f"hiding ({config}) changed nothing: is the import blocker working?"


# -- finer: each claim depends only on the parts it needs --------------------------------------

_STATES = """
import json, sys
from fpexplore.lessons import get
out = {}
for name, params in (("djl_normalization", {"stage": "std"}), ("summation_order", {"n": 1000})):
    c = get(name).run(**params)
    out[name] = {k: [v.state, v.reason] for k, v in c.claims.items()}
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def states() -> dict[str, dict]:
    """Claim states of djl_normalization and summation_order with torch, then TensorFlow,
    hidden (two child interpreters at once)."""
    children = {}
    for name, hidden in (("no torch", TORCH), ("no tensorflow", TF)):
        env = dict(os.environ, FPEXPLORE_TEST_HIDE=hidden, PYTHONPATH=str(SUPPORT))
        children[name] = subprocess.Popen(
            [sys.executable, "-c", _STATES],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    out = {}
    for name, proc in children.items():
        stdout, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, (name, err[-3000:])
        out[name] = json.loads(stdout)
    return out


def _state(states: dict, config: str, lesson: str, key: str) -> str:
    return states[config][lesson][key][0]


def test_without_torch_the_djl_and_tensorflow_claims_are_checked(states):
    for key in ("std_djl_population", "decode_imageio_equals_pil", "decode_tf_default_differs"):
        assert _state(states, "no torch", "djl_normalization", key) == "holds", key
    for key in ("std_ddof", "resize_is_torch_interpolate", "pipeline_fixed"):
        state, reason = states["no torch"]["djl_normalization"][key]
        assert state == "not checked" and "torch" in reason, (key, reason)
    summation = states["no torch"]["summation_order"]
    for key in ("numpy_emulated", "tensorflow_emulated", "djl_emulated", "java_emulated"):
        assert summation[key][0] == "holds", (key, summation[key])
    assert summation["torch_emulated"][0] == "not checked"


def test_without_tensorflow_the_torch_and_djl_claims_are_checked(states):
    djl = states["no tensorflow"]["djl_normalization"]
    for key in ("std_ddof", "std_djl_population", "resize_is_torch_interpolate", "crop_fix"):
        assert djl[key][0] == "holds", (key, djl[key])
    for key in ("normalize_bit_equal", "to_tensor_bit_equal", "pipeline_fixed"):
        assert djl[key][0] == "holds", (key, djl[key])
    for key in ("decode_tf_default_differs", "antialias_matters", "to_tensor_tf_fix"):
        state, reason = djl[key]
        assert state == "not checked" and "tensorflow" in reason, (key, reason)
    summation = states["no tensorflow"]["summation_order"]
    assert summation["torch_emulated"][0] == "holds" and summation["djl_emulated"][0] == "holds"
    assert summation["tensorflow_emulated"][0] == "not checked"
