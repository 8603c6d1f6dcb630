"""JupyterLab in Debian's Chromium, driven by Playwright: the shared browser fixture.

Used by the browser tests (``tests/test_browser*.py``) and by
``benchmarks/bench_widgets_browser.py``. Nothing is downloaded: Playwright drives
``/usr/bin/chromium`` (installed by ``make setup`` from Debian's packages).

- `LabServer` starts JupyterLab on a free 127.0.0.1 port with a random token, its own settings
  and workspace folders (no news pop-up, no restored tabs), and stops it by its pid.
- `chromium()` launches the browser; `LabPage` opens a notebook at 1000×1000 with the file
  browser open (JupyterLab's default layout on a small laptop), runs all cells, waits for the
  kernel to go idle, collects error outputs, finds the rendered widgets, and reports outputs
  wider than the notebook (`overflow`) and log or warning lines in them (`noise_lines`).
- `WidgetView` is one displayed widget: its controls, a move of one control, and the wait for
  its output DOM to settle (measured in the page's own clock).

The pytest fixtures ``chromium_browser`` (module) and ``lab_server`` (session) are registered
in ``tests/conftest.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
#: a laptop's browser window: JupyterLab at 1000×800 with the file browser open leaves 568 px
#: of output width (the width `fpexplore.figures.WIDTH_IN` and the tables are made for)
VIEWPORT = {"width": 1000, "height": 800}
#: a picture shown below this share of its own width has labels too small to read
LEGIBLE_SCALE = 0.85
#: where screenshots go (FPEXPLORE_SCREENSHOTS overrides, e.g. when .cache is shared read-only)
SCREENSHOTS = Path(os.environ.get("FPEXPLORE_SCREENSHOTS") or ROOT / ".cache" / "screenshots")
JUPYTER = Path(sys.executable).with_name("jupyter")
START_TIMEOUT_S = 180

#: text that means a widget did not render
NOT_RENDERED = ("Loading widget...", "Loading widget…", "Error displaying widget", "<Figure size")

#: the installed Chromium and Playwright, or why not, for a clear failure
SETUP_FIX = "run `make setup` (installs Debian's chromium and Playwright for Python)"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing: {SETUP_FIX}"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return f"Playwright for Python is not installed: {SETUP_FIX}"
    if not JUPYTER.exists():
        return f"{JUPYTER} is missing: {SETUP_FIX}"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url: str) -> int:
    """The HTTP status of a GET of ``url`` (0: no answer)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return 0


def wait_until_served(
    proc: subprocess.Popen[bytes], url: str, timeout_s: float = START_TIMEOUT_S, poll_s: float = 0.5
) -> int:
    """Poll ``url`` until it answers 200, ``proc`` exits or ``timeout_s`` pass: the last
    status (0: no answer)."""
    status = 0
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        status = http_status(url)
        if status == 200:
            break
        time.sleep(poll_s)
    return status


# ----------------------------------------------------------------------------- the server
_LAB_SETTINGS = {
    # no "would you like news?" toast over the notebook, no update check
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # never write a run's outputs back into the repository's notebooks
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    # a notebook opens without asking which kernel (python3); every cell stays in the DOM
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "autoStartDefaultKernel": True,
        "windowingMode": "none",
    },
}


class LabServer:
    """JupyterLab serving ``root`` on a free port, with a token; a context manager."""

    def __init__(
        self,
        root: Path = ROOT,
        *,
        log: Path | None = None,
        kernel_python: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """``kernel_python`` starts the notebooks' kernels (``python3``) from another
        environment; ``env`` replaces this process's environment for the server and kernels."""
        self.root = Path(root)
        self.kernel_python = kernel_python
        self.env = env
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self._tmp = Path(tempfile.mkdtemp(prefix="fpx-lab-"))
        self.log = log or self._tmp / "lab.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def start(self) -> LabServer:
        settings = self._tmp / "settings"
        for name, value in _LAB_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        env = {
            **(os.environ if self.env is None else self.env),
            "JUPYTER_PLATFORM_DIRS": "1",
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(self._tmp / "workspaces"),
            "PYTHONUNBUFFERED": "1",
        }
        if self.kernel_python is not None:
            env["JUPYTER_PATH"] = str(self._kernelspec(self.kernel_python))
        command = [
            str(JUPYTER),
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.expose_app_in_browser=True",
            "--ContentsManager.allow_hidden=True",  # scratch notebooks under .cache/
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *(["--allow-root"] if os.geteuid() == 0 else []),
        ]
        with open(self.log, "wb") as log:
            self._proc = subprocess.Popen(
                command,
                cwd=self.root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its kernels in its own group, stopped with it
            )
        if wait_until_served(self._proc, self.url("api/status")) == 200:
            return self
        if self._proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {self._proc.returncode}:\n{self.tail()}")
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {START_TIMEOUT_S} s:\n{self.tail()}")

    def _kernelspec(self, python: Path) -> Path:
        """A data folder whose ``python3`` kernel is ``python``'s ipykernel (JUPYTER_PATH comes
        before the server's own environment in the kernelspec search)."""
        spec = self._tmp / "jupyter" / "kernels" / "python3"
        spec.mkdir(parents=True)
        argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        kernel = {"argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python"}
        (spec / "kernel.json").write_text(json.dumps(kernel))
        return self._tmp / "jupyter"

    def kernel_pid(self, notebook: str) -> int:
        """The process id of the kernel of ``notebook``'s session (from the server's sessions
        and its children's command lines)."""
        import psutil

        with urllib.request.urlopen(self.url("api/sessions"), timeout=30) as r:
            sessions = json.loads(r.read())
        ids = [s["kernel"]["id"] for s in sessions if s.get("path") == notebook]
        if not ids or self._proc is None:
            raise RuntimeError(f"no kernel for {notebook}: {sessions}")
        for child in psutil.Process(self._proc.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(f"kernel-{ids[0]}.json" in a for a in child.cmdline()):
                    return child.pid
        raise RuntimeError(f"the kernel {ids[0]} of {notebook} is not among the server's children")

    def tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # the server shuts its kernels down
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # the group it was started in
                proc.wait(timeout=10)
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ----------------------------------------------------------------------------- the browser
@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright ``Browser``) from /usr/bin/chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
        )
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Any) -> Any:
    """A fresh page at 1000×1000 that records console errors in ``page.console_errors``."""
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.console_errors = errors
    return page


def screenshot(target: Any, name: str) -> Path:
    """Save a PNG of a page or element under .cache/screenshots (an artifact, ignored by git)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    target.screenshot(path=str(path))
    return path


def screenshot_pages(page: Any, root: Any, name: str, most: int = 40) -> list[Path]:
    """The whole notebook as the student scrolls it: one PNG of the window per screenful,
    ``name_p00.png``, ``name_p01.png``, … (the notebook scrolls inside JupyterLab's panel, so a
    single screenshot shows only its top)."""
    outer = root.locator(".jp-WindowedPanel-outer")
    scroller = outer.first if outer.count() else root.locator(".jp-Notebook").first
    paths = []
    scroller.evaluate("el => { el.scrollTop = 0; }")
    for i in range(most):
        page.wait_for_timeout(150)
        paths.append(screenshot(page, f"{name}_p{i:02d}"))
        moved = scroller.evaluate(
            "el => { const before = el.scrollTop; el.scrollTop += el.clientHeight * 0.9;"
            " return el.scrollTop > before; }"
        )
        if not moved:
            break
    scroller.evaluate("el => { el.scrollTop = 0; }")
    return paths


# ----------------------------------------------------------------------------- quiet output
#: a tqdm bar left in the output
PROGRESS = re.compile(r"\d+%\|[█▏▎▍▌▋▊▉ #]*\|")
#: a line of a framework's log, a Python warning or a progress bar's leftovers
NOISE = (
    re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d"),  # absl / glog: I0000 00:00:17...
    re.compile(r"All log messages before absl::InitializeLog"),
    re.compile(r"oneDNN custom operations are on"),
    re.compile(r"cpu_feature_guard|This TensorFlow binary is optimized"),
    re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWE] "),  # TF's C++ log
    re.compile(r"\b\w*(?:Warning|Deprecation)\b: "),  # warnings.warn's line
    re.compile(r"^\s*warnings\.warn\("),
    PROGRESS,
    re.compile(r"\bit/s\]|\bs/it\]"),
)


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _output_lines(
    cells: list[dict[str, Any]], shown_as_text: bool
) -> Iterator[tuple[Any, str, str]]:
    """Each line of ``cells``' text outputs (nbformat: streams, and results' plain text) as
    ``(cell index, "stdout"/"stderr"/"result", line)``. A widget's text is its fallback, never
    a result line; ``shown_as_text``: only results with nothing but plain text (the others
    show as HTML or a picture, measured by the page)."""
    for cell in cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                text, where = "".join(out.get("text", "")), out.get("name", "stream")
            elif out.get("output_type") in ("execute_result", "display_data"):
                data = out.get("data", {})
                if WIDGET_MIME in data or (shown_as_text and set(data) - {"text/plain"}):
                    continue
                text, where = "".join(data.get("text/plain", "")), "result"
            else:
                continue
            for line in text.replace("\r", "\n").splitlines():
                yield cell.get("index", "?"), where, line


def noise_lines(cells: list[dict[str, Any]]) -> list[str]:
    """Every output line of ``cells`` (nbformat outputs) that is log, warning or progress-bar
    residue: ``cell N (stream): line`` (`LabPage.noise_lines` looks at what a widget shows: a
    progress bar left in view)."""
    return [
        f"cell {i} ({where}): {line[:160]}"
        for i, where, line in _output_lines(cells, shown_as_text=False)
        if any(p.search(line) for p in NOISE)
    ]


#: the longest printed line that the output area shows whole at 568 px (monospace, about 7.9 px a
#: character: a 71st character wraps onto a line of its own): what the package prints, and
#: `text_table.COLUMNS`
PRINT_WIDTH = 70


def long_lines(cells: list[dict[str, Any]], most: int = PRINT_WIDTH) -> list[str]:
    """Every printed line of ``cells`` (nbformat outputs: streams, and results shown as plain
    text) longer than ``most`` characters: ``cell N (stream, 80 chars): line``."""
    return [
        f"cell {i} ({where}, {len(line)} chars): {line[:120]}"
        for i, where, line in _output_lines(cells, shown_as_text=True)
        if len(line) > most
    ]


#: a claim or observation as a table lists it (its key in the item's tooltip) and as `check`
#: prints it (``[holds] key: text``)
_LISTED_KEY = re.compile(
    r"<li title=['\"]([\w.]+): (?:holds|FAILS|not checked)['\"]>(.*?)</li>", re.S
)
_PRINTED_KEY = re.compile(
    r"^\[(?:holds|FAILS|fails|not checked|observed)\] ([\w.]+): (.*(?:\n {2,}.*)*)", re.M
)


def _claims_in(text: str, pattern: re.Pattern[str]) -> list[str]:
    """``key: text`` of each claim ``pattern`` finds (tags gone, spaces collapsed: the same
    claim of the same run reads the same)."""
    import html as _html

    out = []
    for key, body in pattern.findall(text):
        words = " ".join(_html.unescape(re.sub(r"<[^>]+>", "", body)).split())
        out.append(f"{key}: {words.lstrip('✔✘○– ')}")
    return out


def _section_of(cell: dict[str, Any]) -> str | None:
    """The section a markdown cell starts (its ``## `` heading), else None."""
    if cell.get("cell_type") != "markdown":
        return None
    heads = [ln[3:].strip() for ln in cell.get("source", "").splitlines() if ln.startswith("## ")]
    return heads[0] if heads else None


def repeated_claims(cells: list[dict[str, Any]]) -> list[str]:
    """Every claim or observation shown more than once in one section of ``cells`` (nbformat
    cells with outputs; a section starts at a ``## `` heading): ``section: key (N times)``. A
    table lists its claims, so a `check` after it says only that they hold."""
    found, section, seen = [], "(top)", {}

    def close() -> None:
        found.extend(f"{section}: {k[:90]} ({n} times)" for k, n in seen.items() if n > 1)

    for cell in cells:
        head = _section_of(cell)
        if head is not None:
            close()
            section, seen = head, {}
            continue
        for out in cell.get("outputs", []):
            text, data = out.get("text", ""), out.get("data", {})
            html, plain = data.get("text/html", ""), data.get("text/plain", "")
            text, html, plain = ("".join(t) for t in (text, html, plain))
            keys = _claims_in(text, _PRINTED_KEY) + _claims_in(html, _LISTED_KEY)
            keys += [] if html else _claims_in(plain, _PRINTED_KEY)
            for k in keys:
                seen[k] = seen.get(k, 0) + 1
    close()
    return found


# ----------------------------------------------------------------------------- JS helpers
# Runs in the page: what is wider than the notebook panel (scrolls sideways, or is cut).
_JS_OVERFLOW = """
(panelId) => {
  const panel = document.getElementById(panelId);
  if (!panel) return ['notebook panel not found'];
  const out = [];
  const cellIndex = (el) => {
    const cell = el.closest('.jp-Cell');
    return cell ? [...panel.querySelectorAll('.jp-Cell')].indexOf(cell) : -1;
  };
  const describe = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className ===
    'string' ? '.' + el.className.split(' ').filter(Boolean).slice(0, 2).join('.') : '');
  const selector = '.jp-OutputArea-output, .jp-OutputArea-output pre, .jp-OutputArea-output '
    + 'table, .jp-MarkdownOutput table, .jp-OutputArea-output img, .jp-OutputArea-output svg';
  for (const el of panel.querySelectorAll(selector)) {
    if (el.closest('.jupyter-widgets') && el.tagName !== 'TABLE') continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0) continue;
    const area = el.closest('.jp-Cell-outputArea, .jp-MarkdownOutput, .jp-Cell-inputArea')
      || el.parentElement;
    const limit = area.getBoundingClientRect().right + 1;
    const scrolls = el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0
      && getComputedStyle(el).overflowX !== 'visible';
    const cut = box.right > limit;
    if (scrolls || cut) {
      out.push(`cell ${cellIndex(el)}: ${describe(el)} is ${Math.round(
        Math.max(el.scrollWidth, box.width))} px wide, the notebook shows ${Math.round(
        limit - box.left)} px`);
    }
  }
  return out;
}
"""

# Runs in the page: words of table cells broken across lines inside the word (a break is a
# word boundary at a space, or after punctuation where the text offers one: "(" "." "," "/",
# the hyphen of a compound ("wrap-|around"), never before a digit ("-|0.5"), and the parts of a
# CamelCase name ("Sparse|Categorical")).
JS_MIDWORD = """
(rootSelector) => {
  const root = document.querySelector(rootSelector) || document.body;
  const out = [];
  const cellIndex = (el) => {
    const cell = el.closest('.jp-Cell');
    return cell ? [...root.querySelectorAll('.jp-Cell')].indexOf(cell) : -1;
  };
  const cells = root.querySelectorAll(
    '.jp-OutputArea-output td, .jp-OutputArea-output th, .jp-MarkdownOutput td, '
    + '.jp-MarkdownOutput th, table.fpx-t td');
  for (const td of cells) {
    if (td.closest('details:not([open])') || td.getClientRects().length === 0) continue;
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      const re = /\\S+/g;
      const top = (i, j) => {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, j);
        const rects = [...range.getClientRects()].filter(r => r.width > 0);
        return rects.map(r => Math.round(r.top));
      };
      for (let m = re.exec(text); m; m = re.exec(text)) {
        const word = m[0];
        if (new Set(top(m.index, m.index + word.length)).size < 2) continue;
        // where it breaks: allowed only after punctuation that a letter follows ("F.|softmax")
        for (let i = 1; i < word.length; i++) {
          const [a] = top(m.index + i - 1, m.index + i), [b] = top(m.index + i, m.index + i + 1);
          if (a === undefined || b === undefined || a === b) continue;
          if (/[.(\\[,\\/_=:-]/.test(word[i - 1]) && /[A-Za-z]/.test(word[i])) continue;
          if (/[a-z]/.test(word[i - 1]) && /[A-Z]/.test(word[i])) continue;  // Camel|Case
          out.push(`cell ${cellIndex(td)}: "${word.slice(0, 40)}" breaks inside, in "`
            + td.innerText.replace(/\\s+/g, ' ').slice(0, 60) + '"');
          break;
        }
      }
    }
  }
  return out;
}
"""

# Runs in the page: pictures shown smaller than they were drawn (their labels shrink with them).
JS_SCALED = """
([rootSelector, least]) => {
  const root = document.querySelector(rootSelector) || document.body;
  const out = [];
  for (const img of root.querySelectorAll('.jp-OutputArea-output img')) {
    if (!img.naturalWidth || img.closest('details:not([open])')) continue;
    const shown = img.getBoundingClientRect().width;
    if (shown === 0) continue;
    const ratio = shown / img.naturalWidth;
    if (ratio < least) {
      const cell = img.closest('.jp-Cell');
      const index = cell ? [...root.querySelectorAll('.jp-Cell')].indexOf(cell) : -1;
      out.push(`cell ${index}: a ${img.naturalWidth} px picture shown at ${Math.round(shown)}`
        + ` px (${ratio.toFixed(2)} of its size)`);
    }
  }
  // inline SVG figures (the widgets' pictures): their viewBox is the size they are drawn for
  for (const svg of root.querySelectorAll('.jp-OutputArea-output svg[viewBox]')) {
    if (svg.closest('details:not([open])') || svg.parentElement.closest('svg')) continue;
    const drawn = svg.viewBox.baseVal ? svg.viewBox.baseVal.width : 0;
    const shown = svg.getBoundingClientRect().width;
    if (!drawn || shown === 0) continue;
    const ratio = shown / drawn;
    if (ratio < least) {
      const cell = svg.closest('.jp-Cell');
      const index = cell ? [...root.querySelectorAll('.jp-Cell')].indexOf(cell) : -1;
      out.push(`cell ${index}: a ${drawn} px SVG figure shown at ${Math.round(shown)}`
        + ` px (${ratio.toFixed(2)} of its size)`);
    }
  }
  return out;
}
"""

# Runs in the page: the current notebook panel and its cells, through the exposed app.
_JS_PANEL = """
() => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  return w && w.content && w.sessionContext ? w : null;
}
"""

_JS_KERNEL_STATE = (
    "() => { const w = ("
    + _JS_PANEL
    + """)();
  if (!w) return {ready: false};
  const s = w.sessionContext;
  const k = s.session && s.session.kernel;
  return {ready: !!k, status: k ? k.status : null, busy: s.isRestarting || !s.session,
          name: k ? k.name : null};
}"""
)

# Runs in the page: every cell in order (its type, source, execution count and outputs).
_JS_CELLS = (
    "() => { const w = ("
    + _JS_PANEL
    + """)();
  const out = [];
  w.content.widgets.forEach((cell, i) => {
    const code = cell.model.type === 'code';
    out.push({index: i, cell_type: cell.model.type, source: cell.model.sharedModel.getSource(),
              execution_count: code ? cell.model.executionCount : null,
              outputs: code ? cell.model.outputs.toJSON() : []});
  });
  return out;
}"""
)

# A MutationObserver per widget view: the page-clock time of the last change to its DOM.
_JS_WATCH = """
(el) => {
  if (el.__fpxObserver) el.__fpxObserver.disconnect();
  el.__fpxLast = performance.now();
  el.__fpxObserver = new MutationObserver(() => { el.__fpxLast = performance.now(); });
  el.__fpxObserver.observe(el, {subtree: true, childList: true, attributes: true,
                                characterData: true});
  return el.__fpxLast;
}
"""

# What the student sees of a widget's output: its markup (text, styles, images), the
# controls' values and any canvas, as a short hash.
_JS_SNAPSHOT = """
(el) => {
  const canv = Array.from(el.querySelectorAll('canvas')).map(c => {
      try { return c.toDataURL(); } catch (e) { return 'canvas'; } });
  const vals = Array.from(el.querySelectorAll('input, select')).map(i =>
      i.type === 'checkbox' ? String(i.checked) : i.value);
  const text = el.innerHTML + '|' + vals.join(',') + '|' + canv.join(',');
  let h = 0;
  for (let i = 0; i < text.length; i++) { h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0; }
  return text.length + ':' + h;
}
"""

# Kernel busy/idle transitions seen by the page, with page-clock times.
_JS_KERNEL_LOG = (
    "() => { const w = ("
    + _JS_PANEL
    + """)();
  const k = w.sessionContext.session.kernel;
  if (!window.__fpxKernelLog || window.__fpxKernel !== k) {
    window.__fpxKernelLog = [];
    window.__fpxKernel = k;
    k.statusChanged.connect((_, status) =>
      window.__fpxKernelLog.push([status, performance.now()]));
  }
  return performance.now();
}"""
)


_CONTROLS = ", ".join(
    (
        ".widget-slider:not(.widget-vslider) .noUi-handle",
        ".widget-dropdown select",
        ".widget-checkbox input[type=checkbox]",
        ".widget-toggle-buttons button",
        ".widget-inline-hbox input[type=number]",
        ".widget-text input[type=text]",
    )
)

# The kind of one control element and the label beside it.
_JS_CONTROL = """
(e) => {
  const kind = e.classList.contains('noUi-handle') ? 'slider'
    : e.tagName === 'SELECT' ? 'select'
    : e.type === 'checkbox' ? 'checkbox'
    : e.tagName === 'BUTTON' ? 'toggle'
    : e.type === 'number' ? 'number' : 'text';
  const box = e.closest('.widget-inline-hbox, .widget-checkbox, .widget-toggle-buttons');
  const label = box && box.querySelector('label');
  return [kind, label ? label.innerText : (e.innerText || '')];
}
"""


@dataclass
class Control:
    """One control of a widget: its kind (slider, select, checkbox, text, number, toggle)."""

    kind: str
    locator: Any
    label: str


class LabPage:
    """A JupyterLab page on one notebook."""

    def __init__(self, server: LabServer, page: Any) -> None:
        self.server = server
        self.page = page
        self.path = ""
        self.root = page.locator("body")

    # -- opening and running
    def open(self, notebook: str, timeout_s: float = 120) -> LabPage:
        """Open ``notebook`` (a path relative to the server root) in this page's JupyterLab
        (loaded on first use) and wait for its kernel to be idle."""
        if not self.page.url.startswith(self.server.base):
            self.page.goto(self.server.url("lab?reset"), wait_until="domcontentloaded")
            self.page.wait_for_function(
                "() => window.jupyterapp && window.jupyterapp.started !== undefined",
                timeout=timeout_s * 1000,
            )
            self.page.evaluate("async () => { await window.jupyterapp.restored; }")
            # the file browser open beside the notebook, as a student's JupyterLab starts
            self.page.evaluate(
                "async () => { await window.jupyterapp.commands.execute('filebrowser:activate');"
                " window.jupyterapp.shell.expandLeft(); }"
            )
        self.path = notebook
        panel_id = self.page.evaluate(
            """async (path) => {
                const w = await window.jupyterapp.commands.execute(
                    'docmanager:open', {path, factory: 'Notebook'});
                await w.context.ready;
                await w.sessionContext.ready;
                window.jupyterapp.shell.activateById(w.id);
                return w.id;
            }""",
            notebook,
        )
        self.root = self.page.locator(f"[id='{panel_id}']")
        self.root.locator(".jp-Cell").first.wait_for(timeout=timeout_s * 1000)
        self.wait_idle(timeout_s)
        return self

    def kernel_state(self) -> dict[str, Any]:
        return self.page.evaluate(_JS_KERNEL_STATE)

    def wait_idle(self, timeout_s: float = 120, quiet_s: float = 0.5) -> None:
        """Wait until the kernel is started and has stayed idle for ``quiet_s``."""
        deadline = time.monotonic() + timeout_s
        idle_since = None
        while time.monotonic() < deadline:
            state = self.kernel_state()
            if state.get("ready") and state.get("status") == "idle":
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since >= quiet_s:
                    return
            else:
                idle_since = None
            time.sleep(0.1)
        raise TimeoutError(f"kernel not idle after {timeout_s} s: {self.kernel_state()}")

    def run_all(self, timeout_s: float = 600) -> float:
        """Clear the outputs, run every cell, wait for the kernel to be idle; seconds taken.

        JupyterLab's run-all resolves when the last cell has finished or one has failed."""
        t0 = time.monotonic()
        finished = self.page.evaluate(
            """async (ms) => {
                const c = window.jupyterapp.commands;
                await c.execute('notebook:clear-all-cell-outputs');
                const done = c.execute('notebook:run-all-cells').then(() => true);
                const late = new Promise(r => setTimeout(() => r(false), ms));
                return await Promise.race([done, late]);
            }""",
            timeout_s * 1000,
        )
        if not finished:
            raise TimeoutError(f"{self.path}: run all did not finish within {timeout_s} s")
        self.wait_idle(max(5.0, timeout_s - (time.monotonic() - t0)))
        return time.monotonic() - t0

    # -- what came out
    def cells(self) -> list[dict[str, Any]]:
        """Every code cell: index, source, execution count and its outputs (nbformat JSON)."""
        return [c for c in self.page.evaluate(_JS_CELLS) if c["cell_type"] == "code"]

    def errors(self) -> list[str]:
        """The error outputs and cells that did not run, one line each."""
        found = []
        for cell in self.cells():
            if cell["execution_count"] is None and cell["source"].strip():
                found.append(f"cell {cell['index']} did not run: {cell['source'][:80]!r}")
            for out in cell["outputs"]:
                if out.get("output_type") == "error":
                    found.append(
                        f"cell {cell['index']}: {out.get('ename')}: {out.get('evalue')}"
                        f" (in {cell['source'][:80]!r})"
                    )
        return found

    def overflow(self) -> list[str]:
        """Outputs and markdown that are wider than the notebook shows: a table, a text output
        or a picture that scrolls sideways or is cut (one line each)."""
        return self.page.evaluate(_JS_OVERFLOW, self.root.get_attribute("id"))

    def midword_breaks(self) -> list[str]:
        """Words of table cells that wrap inside the word (one line each)."""
        return self.page.evaluate(JS_MIDWORD, "#" + self.root.get_attribute("id"))

    def scaled_figures(self, least: float = LEGIBLE_SCALE) -> list[str]:
        """Pictures shown at less than ``least`` of their own width (one line each)."""
        return self.page.evaluate(JS_SCALED, ["#" + self.root.get_attribute("id"), least])

    def repeated_claims(self) -> list[str]:
        """Claims shown more than once in a section (`repeated_claims`)."""
        return repeated_claims(self.page.evaluate(_JS_CELLS))

    def noise_lines(self) -> list[str]:
        """Framework log lines, warnings and progress-bar residue in the outputs: the text
        outputs' lines, and every progress bar still in view once the notebook ran."""
        bars = self.root.locator(
            ".jp-OutputArea-output .widget-hprogress, .jp-OutputArea-output progress"
        )
        left = [
            f"a progress bar left in view: {bars.nth(i).locator('..').inner_text()[:120]!r}"
            for i in range(bars.count())
            if bars.nth(i).is_visible()
        ]
        return noise_lines(self.cells()) + left

    def long_lines(self) -> list[str]:
        """Printed lines longer than `PRINT_WIDTH` characters (one line each)."""
        return long_lines(self.cells())

    def not_rendered(self) -> list[str]:
        """Outputs that show a widget or figure that failed to render."""
        texts = self.root.locator(".jp-OutputArea-output").all_inner_texts()
        return [t[:200] for t in texts if any(bad in t for bad in NOT_RENDERED)]

    def widgets(self) -> list[WidgetView]:
        """The top-level widget views in the outputs, in notebook order."""
        views = self.root.locator(".jp-OutputArea-output > .jupyter-widgets")
        out = []
        for i in range(views.count()):
            out.append(WidgetView(self, views.nth(i), i))
        return out

    def widget_count_in_outputs(self) -> int:
        """How many outputs carry a widget view (rendered or not), from the cell outputs; a
        progress bar's widget is not counted (it closes itself when its work is done)."""
        return sum(
            WIDGET_MIME in out.get("data", {})
            and not PROGRESS.search("".join(out["data"].get("text/plain", "")))
            for cell in self.cells()
            for out in cell["outputs"]
        )

    def close(self) -> None:
        """Close the notebook and shut its kernel down (frees the kernel's memory)."""
        with contextlib.suppress(Exception):
            self.page.evaluate(
                "async () => { const w = window.jupyterapp.shell.currentWidget;"
                " if (w && w.sessionContext) { await w.sessionContext.shutdown(); }"
                " if (w) { w.dispose(); } }"
            )


class WidgetView:
    """One rendered widget: its controls and output, change-and-settle measurements."""

    def __init__(self, lab: LabPage, locator: Any, index: int) -> None:
        self.lab = lab
        self.page = lab.page
        self.locator = locator
        self.index = index

    @property
    def title(self) -> str:
        heading = self.locator.locator("h3, h2, h4").first
        if heading.count():
            return heading.inner_text().strip().splitlines()[0][:60]
        return f"widget {self.index}"

    def controls(self) -> list[Control]:
        """The widget's controls in page order: sliders, dropdowns, checkboxes, toggle
        buttons, number boxes and text boxes."""
        loc = self.locator.locator(_CONTROLS)
        found = []
        for i in range(loc.count()):
            item = loc.nth(i)
            kind, label = item.evaluate(_JS_CONTROL)
            found.append(Control(kind, item, label.strip()))
        return found

    def watch(self) -> float:
        """Start recording DOM changes of this widget; the page-clock time now."""
        self.page.evaluate(_JS_KERNEL_LOG)
        return self.locator.evaluate(_JS_WATCH)

    def snapshot(self) -> str:
        return self.locator.evaluate(_JS_SNAPSHOT)

    def settle(self, t0: float, before: str, timeout_s: float = 60, quiet_ms: float = 300) -> float:
        """Wait for the output to change from ``before`` and then stay still for ``quiet_ms``
        with the kernel idle again; returns the milliseconds from ``t0`` (page clock) to the
        last DOM change. Raises `TimeoutError` if nothing changed or it never settled."""
        deadline = time.monotonic() + timeout_s
        changed = False
        while time.monotonic() < deadline:
            now, last, log = self.locator.evaluate(
                "e => [performance.now(), e.__fpxLast, window.__fpxKernelLog || []]"
            )
            busy_after = [t for s, t in log if s == "busy" and t >= t0]
            idle_after = [t for s, t in log if s == "idle" and busy_after and t >= busy_after[0]]
            kernel_done = bool(busy_after) and bool(idle_after) and idle_after[-1] >= busy_after[-1]
            if not changed and last > t0:
                changed = self.snapshot() != before
            if changed and kernel_done and now - last >= quiet_ms:
                return last - t0
            time.sleep(0.02)
        raise TimeoutError(
            f"{self.title}: output {'changed but did not settle' if changed else 'never changed'}"
            f" within {timeout_s} s"
        )

    def move(self, control: Control, step: int = 1) -> None:
        """Change one control by one step (``step`` = +1 forward, -1 back)."""
        loc = control.locator
        if control.kind == "slider":
            now, low, high = (
                float(loc.get_attribute(a) or 0)
                for a in ("aria-valuenow", "aria-valuemin", "aria-valuemax")
            )
            if (step > 0 and now >= high) or (step < 0 and now <= low):
                step = -step  # at an end: step the other way
            loc.focus()
            loc.press("ArrowRight" if step > 0 else "ArrowLeft")
        elif control.kind == "select":
            options = loc.evaluate("e => Array.from(e.options).map(o => o.value)")
            current = loc.evaluate("e => e.value")
            i = options.index(current) if current in options else -1  # none chosen yet
            loc.select_option(options[(i + step) % len(options)])
        elif control.kind == "checkbox":
            loc.click()
        elif control.kind == "toggle":  # press the next button of its group
            group = loc.locator("xpath=..").locator("button")
            n = group.count()
            active = [
                i for i in range(n) if "mod-active" in (group.nth(i).get_attribute("class") or "")
            ]
            group.nth(((active[0] if active else -1) + step) % n).click()
        elif control.kind == "number":
            loc.focus()
            loc.press("ArrowUp" if step > 0 else "ArrowDown")
            loc.press("Enter")
        elif control.kind == "text":
            raise ValueError(f"a text control needs a value: use type_text ({control.label})")
        else:  # pragma: no cover
            raise ValueError(control.kind)

    def type_text(self, control: Control, text: str) -> None:
        control.locator.fill(text)
        control.locator.press("Enter")

    def change(
        self, control: Control, step: int = 1, text: str | None = None, timeout_s: float = 60
    ) -> float:
        """Move ``control`` and wait for the output to settle: milliseconds, control change
        to the last DOM change (page clock)."""
        before = self.snapshot()
        t0 = self.watch()
        if control.kind == "text":
            self.type_text(control, text or "")
        else:
            self.move(control, step)
        try:
            return self.settle(t0, before, timeout_s=timeout_s)
        except TimeoutError as exc:
            raise TimeoutError(f"{exc} (after moving {control.kind} {control.label!r})") from None


def notebooks(root: Path = ROOT) -> list[str]:
    """Every notebook of the series (paths relative to ``root``), discovered, index included."""
    return sorted(str(p.relative_to(root)) for p in (root / "notebooks").glob("*.ipynb"))


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def chromium_browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright, for one test module (fails with the fix if absent).
    Module scope: Playwright's event loop stops with the module, so later tests see none."""
    missing = browser_missing()
    if missing:
        pytest.fail(missing)
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="session")
def lab_server() -> Iterator[LabServer]:
    """One JupyterLab server on a free port for the whole session, stopped at the end."""
    missing = browser_missing()
    if missing:
        pytest.fail(missing)
    with LabServer() as server:
        yield server
