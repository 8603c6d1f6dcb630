"""Benchmark: every widget of the series, end to end in a real browser, as a student feels it.

JupyterLab runs in headless Chromium (Debian's, driven by Playwright; the fixture of the browser
tests, ``tests/browser_support.py``). Each notebook in ``notebooks/`` is opened and run; every
widget it displays is found in the page; then its controls are moved one step and back, in
turn, at least ``--changes`` times. One measurement is the time, in the page's own clock, from
the control change to the last change of the widget's DOM before it went quiet with the kernel
idle ("output DOM settled"). Sliders move one notch from their start (the summation
explorer's n goes 10^4 -> 2x10^4 and back, inside n <= 10^5), dropdowns to the next option
and back, checkboxes on and off, number boxes up and down.

    .venv/bin/python benchmarks/bench_widgets_browser.py [--changes 20] [--notebooks 00 01]

Targets (p95): 250 ms for the float-bits view (00) and the summation explorer (01), 500 ms for
every other widget at its defaults. A do-nothing widget (a dropdown echoed into HTML, written to
``.cache/``) is measured first: the round trip between the page and the kernel on this machine,
the floor under every other row.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser_support import (  # noqa: E402
    LabPage,
    LabServer,
    browser_missing,
    chromium,
    new_page,
    notebooks,
)

#: p95 targets in ms: notebooks whose widgets must answer within 250 ms, the rest 500 ms
FAST_NOTEBOOKS = ("00_", "01_")
TARGET_FAST_MS, TARGET_MS = 250.0, 500.0


BASELINE = ROOT / ".cache" / "bench_widgets_browser" / "baseline_echo.ipynb"
_BASELINE_CODE = """\
import ipywidgets as w

choice = w.Dropdown(options=[str(i) for i in range(10)], description="value")
echo = w.HTML()


def show(_=None):
    echo.value = f"<b>{choice.value}</b>"


choice.observe(show, names="value")
show()
w.VBox([w.HTML("<h3>baseline: a dropdown echoed into HTML</h3>"), choice, echo])
"""


def write_baseline() -> str:
    """A one-widget notebook that does no work: the browser/kernel round trip alone."""
    BASELINE.parent.mkdir(parents=True, exist_ok=True)
    cell = {
        "cell_type": "code",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
        "source": _BASELINE_CODE,
    }
    nb = {
        "cells": [cell],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    BASELINE.write_text(json.dumps(nb))
    return str(BASELINE.relative_to(ROOT))


def _target(notebook: str) -> float:
    if Path(notebook) == BASELINE.relative_to(ROOT):
        return TARGET_FAST_MS
    return TARGET_FAST_MS if Path(notebook).name.startswith(FAST_NOTEBOOKS) else TARGET_MS


def measure_widget(widget, changes: int, verbose: bool = False) -> tuple[list[float], list[str]]:
    """``changes`` control changes (each control one step forward, then back, in turn)."""
    controls = [c for c in widget.controls() if c.kind != "text"]
    times: list[float] = []
    moved: list[str] = []
    if not controls:
        return times, moved
    widget.locator.scroll_into_view_if_needed()
    i = 0
    while len(times) < changes:
        control = controls[(i // 2) % len(controls)]
        step = +1 if i % 2 == 0 else -1
        times.append(widget.change(control, step, timeout_s=120))
        moved.append(control.label or control.kind)
        if verbose:
            print(
                f"    {control.kind} {control.label!r} {step:+d}: {times[-1]:.0f} ms",
                file=sys.stderr,
            )
        i += 1
    return times, moved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20, help="control changes per widget")
    parser.add_argument(
        "--notebooks", nargs="*", default=None, help="notebook name prefixes (default: all)"
    )
    parser.add_argument("--verbose", action="store_true", help="print every change")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the do-nothing widget that measures the browser/kernel round trip",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    missing = browser_missing()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    # a TERM signal unwinds like Ctrl-C, so the server and the browser are stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    chosen = [
        nb
        for nb in notebooks()
        if not args.notebooks or Path(nb).name.startswith(tuple(args.notebooks))
    ]
    if not args.no_baseline:
        chosen.insert(0, write_baseline())
    rows = []
    t_start = time.monotonic()
    with LabServer() as server, chromium() as browser:
        page = new_page(browser)
        for nb in chosen:
            lab = LabPage(server, page).open(nb)
            try:
                lab.run_all()
                errors = lab.errors()
                if errors:
                    print(f"{nb}: {errors[0]} (its widgets are skipped)", file=sys.stderr)
                    continue
                for widget in lab.widgets():
                    try:
                        times, moved = measure_widget(widget, args.changes, args.verbose)
                    except Exception as exc:  # one widget's failure does not end the table
                        print(f"  {Path(nb).stem} · {widget.title}: {exc}", file=sys.stderr)
                        rows.append(
                            {
                                "notebook": Path(nb).stem,
                                "widget": widget.title,
                                "error": str(exc)[:200],
                                "target_ms": _target(nb),
                            }
                        )
                        continue
                    if not times:
                        continue
                    ms = np.asarray(times)
                    rows.append(
                        {
                            "notebook": Path(nb).stem,
                            "widget": widget.title,
                            "controls": sorted(set(moved)),
                            "changes": len(times),
                            "p50_ms": float(np.percentile(ms, 50)),
                            "p95_ms": float(np.percentile(ms, 95)),
                            "max_ms": float(ms.max()),
                            "target_ms": _target(nb),
                        }
                    )
                    print(
                        f"  {Path(nb).stem} · {widget.title}: p95 {rows[-1]['p95_ms']:.0f} ms",
                        file=sys.stderr,
                        flush=True,
                    )
            finally:
                lab.close()

    print()
    print(
        f"{'notebook':28s} {'widget':44s} {'n':>3s} {'p50 ms':>7s} {'p95 ms':>7s} "
        f"{'max ms':>7s} {'target':>6s}  ok"
    )
    for r in rows:
        if "error" in r:
            print(f"{r['notebook'][:28]:28s} {r['widget'][:44]:44s} failed: {r['error'][:60]}")
            continue
        ok = "yes" if r["p95_ms"] <= r["target_ms"] else "NO"
        print(
            f"{r['notebook'][:28]:28s} {r['widget'][:44]:44s} {r['changes']:3d} "
            f"{r['p50_ms']:7.0f} {r['p95_ms']:7.0f} {r['max_ms']:7.0f} {r['target_ms']:6.0f}  {ok}"
        )
    print(f"\n{len(rows)} widgets, {time.monotonic() - t_start:.0f} s in all")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if all(r.get("p95_ms", float("inf")) <= r["target_ms"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
