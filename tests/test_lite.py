"""fpexplore under Pyodide (JupyterLite): outcomes that need torch, TensorFlow or DJL say
Unavailable with a link to the Binder version (`fpexplore.paths.BINDER_URL`).

Pyodide is simulated in a child interpreter: ``sys.platform`` is ``"emscripten"`` before
fpexplore is imported (what `fpexplore.paths.in_browser` reads), torch and TensorFlow are hidden
by tests/support/sitecustomize.py and Java by an empty PATH, as in the browser.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "tests" / "support"

CHILD = r"""
import json, sys, sysconfig
sysconfig.get_config_vars()  # read with the real platform (the name of its data module)
sys.platform = "emscripten"  # what Pyodide reports
import fpexplore
from fpexplore import backends, paths

c = fpexplore.run("summation_order", n=1000)
print(json.dumps({
    "in_browser": paths.in_browser(),
    "binder": paths.BINDER_URL,
    # rows of a framework that is missing (a recorded GPU row names record-gpu instead)
    "rows": [[o.implementation, o.backend, o.unavailable] for o in c.outcomes
             if o.unavailable and o.kind != "recorded"],
    "ran": [o.implementation for o in c.outcomes if not o.unavailable],
    "missing": {n: backends.missing(n) for n in ("torch", "tensorflow", "djl")},
}))
"""


def _child(tmp_path: Path, binder: str | None) -> dict:
    env = dict(os.environ, FPEXPLORE_TEST_HIDE="torch,torchvision,tensorflow,keras,tf_keras")
    env.update(PYTHONPATH=str(SUPPORT), PATH=str(tmp_path), MPLBACKEND="Agg")
    env.pop("JAVA_HOME", None)
    env.pop("FPEXPLORE_BINDER_URL", None)
    if binder:
        env["FPEXPLORE_BINDER_URL"] = binder
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_unavailable_rows_link_the_binder_version_under_pyodide(tmp_path: Path) -> None:
    out = _child(tmp_path, None)
    assert out["in_browser"]
    url = out["binder"]
    assert url.startswith("https://mybinder.org/v2/gh/")
    backends_missing = {b for _, b, _ in out["rows"]}
    assert {"torch", "tensorflow"} <= backends_missing and out["ran"], out
    for name, backend, why in out["rows"]:
        if backend in ("torch", "tensorflow", "djl", "java"):
            assert url in why, (name, why)
            assert "make " not in why and "pip install" not in why, (name, why)
    for name, why in out["missing"].items():
        assert why and url in why, (name, why)


def test_the_binder_link_follows_fpexplore_binder_url(tmp_path: Path) -> None:
    fork = "https://mybinder.org/v2/gh/someone/fork/main?urlpath=lab/tree/notebooks"
    out = _child(tmp_path, fork)
    assert out["binder"] == fork
    torch_rows = [why for _, b, why in out["rows"] if b == "torch"]
    assert torch_rows and all(fork in why for why in torch_rows)


def test_outside_a_browser_the_fix_is_the_set_up_command() -> None:
    from fpexplore import backends, paths

    assert not paths.in_browser()
    assert paths.fix_here("make djl") == "make djl"
    assert paths.BINDER_URL not in backends.FIX_SETUP
