"""Build the JupyterLite site: the lessons that need only numpy, mpmath, matplotlib and
ipywidgets, running in the browser under Pyodide (``make lite``; output in ``build/lite``).

1. The wheels the notebooks install with piplite: fpexplore itself (built from a copy of the
   working tree, with its package data) and the pure-Python dependencies Pyodide does not
   may not ship (mpmath, tqdm, jinja2; MarkupSafe is Pyodide's), into ``lite/pypi``.
2. The notebooks (``LITE_NOTEBOOKS``) copied into ``lite/content``, each with a first cell that
   installs fpexplore from the site itself (and sets ``FPEXPLORE_BINDER_URL`` when the build
   has it: the Binder version that Unavailable rows link).
3. ``jupyter lite build``.

Pyodide and its own packages (numpy, matplotlib, Pillow) load from Pyodide's CDN when the page
opens: no registry carries them (`MISSING` says exactly what is missing; npm's ``pyodide``
package is the core runtime only, and PyPI has no Emscripten wheels of numpy or matplotlib).
Frameworks (torch, TensorFlow, DJL) say Unavailable there and point to the Binder version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LITE = Path(__file__).resolve().parent
ROOT = LITE.parent
LITE_NOTEBOOKS = ("00_floating_point_formats.ipynb", "01_summation_order.ipynb")
PURE_PYTHON = ("mpmath", "tqdm", "jinja2")
PIP = [sys.executable, "-m", "pip"]
#: Why the site needs the network: what an offline kernel would need that no registry reachable
#: here carries (checked against npm's ``pyodide`` 314.0.6 and PyPI; see lite/README.md).
MISSING = (
    "An offline kernel would need Pyodide 314.0.6's full distribution served by the site: "
    "npm's pyodide package carries only the core runtime (pyodide.mjs, pyodide.asm.wasm, "
    "python_stdlib.zip, pyodide-lock.json), and the compiled packages the lessons import, "
    "numpy 2.4.6, matplotlib 3.10.8, pillow 12.2.0 and kiwisolver 1.5.0 "
    "(cp314-pyemscripten_2026_0_wasm32 wheels), are on neither PyPI nor npm."
)
INSTALL_CELL = (
    "# In JupyterLite (Pyodide): install fpexplore and mpmath from this site\n"
    "%pip install -q fpexplore mpmath tqdm ipywidgets"
)


def tracked_copy(dest: Path) -> Path:
    """The working tree's tracked and new (not ignored) files, copied to ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for rel in filter(None, (p.decode() for p in listed)):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def fpexplore_wheel(out: Path) -> Path:
    """fpexplore's wheel, built into ``out`` from a copy of the working tree (so no stale
    ``build/`` folder leaks into it)."""
    with tempfile.TemporaryDirectory(prefix="fpx-wheel-") as tmp:
        src = tracked_copy(Path(tmp) / "src")
        subprocess.run(
            [*PIP, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(src)],
            check=True,
        )
    (wheel,) = out.glob("fpexplore-*.whl")
    return wheel


def wheels(out: Path) -> list[Path]:
    """fpexplore's wheel and the pure-Python dependencies' wheels, in ``out``."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    fpexplore_wheel(out)
    download = [*PIP, "download", "-q", "--no-deps", "--only-binary", ":all:", "-d", str(out)]
    subprocess.run([*download, *PURE_PYTHON], check=True)
    return sorted(out.glob("*.whl"))


def contents(out: Path) -> list[Path]:
    """The Lite notebooks, each starting with the cell that installs fpexplore."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    written = []
    for name in LITE_NOTEBOOKS:
        nb = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
        source = INSTALL_CELL
        binder = os.environ.get("FPEXPLORE_BINDER_URL")
        if binder:  # the Binder version a copy of this repository publishes (see the README)
            source += f"\nimport os\nos.environ['FPEXPLORE_BINDER_URL'] = {binder!r}"
        cell = {
            "cell_type": "code",
            "execution_count": None,
            "id": "fpx-lite-install",
            "metadata": {},
            "outputs": [],
            "source": source.splitlines(keepends=True),
        }
        nb["cells"] = [cell, *nb["cells"]]
        nb.get("metadata", {}).pop("widgets", None)
        path = out / name
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    glossary = ROOT / "notebooks" / "glossary.md"
    if glossary.is_file():
        shutil.copy2(glossary, out / glossary.name)
    return written


def build() -> Path:
    wheels(LITE / "pypi")  # lite/pypi is indexed for piplite by the build itself
    contents(LITE / "content")
    jupyter = str(Path(sys.executable).with_name("jupyter"))
    subprocess.run([jupyter, "lite", "build", "--lite-dir", str(LITE)], cwd=LITE, check=True)
    return ROOT / "build" / "lite"


if __name__ == "__main__":
    print(build())
