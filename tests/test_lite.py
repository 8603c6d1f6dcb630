"""fpexplore under Pyodide (JupyterLite): outcomes that need torch, TensorFlow or DJL say
Unavailable with a link to the Binder version (`fpexplore.paths.BINDER_URL`).

Pyodide is simulated in a child interpreter: ``sys.platform`` is ``"emscripten"`` before
fpexplore is imported (what `fpexplore.paths.in_browser` reads), torch and TensorFlow are hidden
by tests/support/sitecustomize.py and Java by an empty PATH, as in the browser.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

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


def _reachable(url: str, timeout: float = 10.0) -> bool:
    """Whether ``url`` answers from this machine within ``timeout`` seconds."""
    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


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


def test_lite_notebooks_carry_the_build_s_binder_url(tmp_path: Path, monkeypatch) -> None:
    lite = _lite_build()
    fork = "https://mybinder.org/v2/gh/someone/fork/main?urlpath=lab/tree/notebooks"
    monkeypatch.setenv("FPEXPLORE_BINDER_URL", fork)
    for path in lite.contents(tmp_path / "content"):
        first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        assert first.startswith(lite.INSTALL_CELL) and repr(fork) in first
    monkeypatch.delenv("FPEXPLORE_BINDER_URL")
    (path, *_) = lite.contents(tmp_path / "plain")
    first = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
    assert first == lite.INSTALL_CELL


# ----------------------------------------------------------------------------- the site
#: Pyodide's own distribution, as the built site names it (jupyterlite-pyodide-kernel's default)
PYODIDE_URL = re.compile(r"https://cdn\.jsdelivr\.net/pyodide/v[0-9][^/\"']*/full/pyodide\.mjs")


class LiteOffline(UserWarning):
    """The Lite site loads, but its kernel cannot start: Pyodide's CDN is unreachable."""


def _lite_build():
    """lite/build.py, the module ``make lite`` runs."""
    sys.path.insert(0, str(ROOT))
    try:
        import lite.build
    finally:
        sys.path.remove(str(ROOT))
    return lite.build


@pytest.fixture(scope="module")
def site() -> Path:
    """``make lite``'s build (lite/build.py): the wheels, the notebooks, ``jupyter lite build``."""
    lite = _lite_build()
    out = lite.build()
    assert (out / "index.html").is_file() and (out / "lab" / "index.html").is_file()
    for name in lite.LITE_NOTEBOOKS:  # each notebook, with its install cell first
        nb = json.loads((out / "files" / name).read_text(encoding="utf-8"))
        assert "%pip install" in "".join(nb["cells"][0]["source"])
    index = json.loads((out / "pypi" / "all.json").read_text(encoding="utf-8"))
    assert {"fpexplore", "mpmath", "tqdm"} <= set(index), sorted(index)
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    from browser_support import free_port, wait_until_served

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "-b", "127.0.0.1", "-d", str(site)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}/"
        assert wait_until_served(proc, base + "index.html", timeout_s=30) == 200
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


_KERNEL = """() => {
  const s = document.querySelector('.jp-Notebook-ExecutionIndicator');
  return s ? (s.getAttribute('data-status') || '') : '';
}"""


@pytest.mark.browser
def test_lite_site_loads_a_lesson(chromium_browser, site: Path, served: str) -> None:
    """The site's pages and files all load from the site itself; then either Pyodide starts and
    the lesson's first cells run, or the only thing that failed is Pyodide's CDN, and the test
    says so (a `LiteOffline` warning naming the URL and the packages it would bring)."""
    from browser_support import new_page, screenshot

    expected = {
        m.group(0)
        for f in site.rglob("*.js")
        for m in PYODIDE_URL.finditer(f.read_text(errors="replace"))
    }
    assert len(expected) == 1, expected  # one Pyodide release, from its CDN
    version = re.search(r"/v([^/]+)/full/", next(iter(expected))).group(1)
    assert f"Pyodide {version}'s" in _lite_build().MISSING  # what lite/build.py says is missing
    page = new_page(chromium_browser)
    failed: list[str] = []
    not_found: list[str] = []
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("response", lambda r: not_found.append(r.url) if r.status >= 400 else None)
    cdn_up = _reachable(next(iter(expected)))  # asked from here too: a dropped connection
    # may leave the browser's request pending for minutes instead of failing
    page.goto(served + "lab/index.html?path=01_summation_order.ipynb", wait_until="load")
    cells = page.locator(".jp-Notebook .jp-Cell")
    nb = json.loads((site / "files" / "01_summation_order.ipynb").read_text(encoding="utf-8"))
    # the notebook's own cells on the page: the install cell, then the lesson's first cell
    first_line = "".join(nb["cells"][1]["source"]).strip().splitlines()[0].lstrip("# ")
    cells.filter(has_text="%pip install -q fpexplore").first.wait_for(timeout=120_000)
    cells.filter(has_text=first_line).first.wait_for(timeout=30_000)
    # the kernel: idle once Pyodide started; where Pyodide's CDN is out of reach from this
    # machine, wait until the page asked for it (or 30 s: the kernel's worker may ask unseen)
    deadline = time.monotonic() + (120 if cdn_up else 30)
    while time.monotonic() < deadline and not failed:
        if cdn_up and page.evaluate(_KERNEL) == "idle":
            break
        if not cdn_up and expected & set(asked):
            break
        page.wait_for_timeout(500)
    screenshot(page, "lite_summation_order")
    # nothing of the site itself is missing (the server's root favicon aside)
    ours = [u for u in failed + not_found if u.startswith(served) and u != served + "favicon.ico"]
    assert not ours, ours
    assert set(failed) <= expected, failed  # Pyodide, and nothing else, may be out of reach
    if not cdn_up:
        warnings.warn(
            LiteOffline(
                f"the Lite kernel cannot start here: {sorted(expected)[0]} is unreachable. "
                + _lite_build().MISSING
            ),
            stacklevel=1,
        )
        return
    # Pyodide reachable (not so here: this part has not run on this machine)
    assert page.evaluate(_KERNEL) == "idle"
    cells.first.click()
    page.keyboard.press("Escape")
    for _ in range(3):  # the install cell, the imports, the first lesson run
        page.keyboard.press("Shift+Enter")
        page.wait_for_timeout(1000)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and page.evaluate(_KERNEL) != "idle":
            page.wait_for_timeout(500)
    outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
    assert outputs and not any("Traceback" in o or "Error" in o for o in outputs), outputs
