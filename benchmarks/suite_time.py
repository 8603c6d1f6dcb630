"""Where the test suite's time goes: seconds by tier (marker) and the 20 slowest tests.

    .venv/bin/python benchmarks/suite_time.py [-- PYTEST ARGS]        # runs pytest, then reports
    .venv/bin/python benchmarks/suite_time.py --junit .cache/suite/test.xml   # a finished run
    .venv/bin/python benchmarks/suite_time.py --durations pytest-output.txt   # --durations lines

``make test`` and ``make check`` write their JUnit XML under ``.cache/suite/`` (``make
suite-time`` reports the last ``make test``). A test's tier is its first marker among
``browser``, ``slow``, ``java`` and ``gpu`` (markers are read by collecting the tests, without
running them), else ``unit``; its time is setup, call and teardown together, so a fixture
shared by a module (the claims matrix's processes, a JupyterLab server) counts where it starts.
``--json FILE`` also writes the numbers. Time is measured here, never asserted by a test.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIERS = ("browser", "slow", "java", "gpu")
SLOWEST = 20

#: a line of pytest's --durations report: "12.34s call     tests/test_x.py::test_y[a]"
DURATION = re.compile(r"^\s*([\d.]+)s\s+(setup|call|teardown)\s+(\S.*?)\s*$")

#: run in the collecting pytest: prints each test's node id and markers as one JSON line
_COLLECT = """
import json, sys, pytest

class Markers:
    def pytest_collection_finish(self, session):
        out = {i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in session.items}
        sys.__stdout__.write("SUITE_MARKERS " + json.dumps(out) + "\\n")

sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *sys.argv[1:]],
                     plugins=[Markers()]))
"""


def markers(paths: list[str]) -> dict[str, list[str]]:
    """Every collected test's markers, by node id (pytest's --collect-only, nothing runs)."""
    done = subprocess.run(
        [sys.executable, "-c", _COLLECT, *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("SUITE_MARKERS "):
            return json.loads(line.split(" ", 1)[1])
    raise SystemExit(f"collecting the tests failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def _classname(nodeid: str) -> tuple[str, str]:
    """JUnit's (classname, name) of a pytest node id."""
    parts = nodeid.split("::")
    module = parts[0].removesuffix(".py").replace("/", ".")
    return ".".join([module, *parts[1:-1]]), parts[-1]


def from_junit(path: Path) -> dict[tuple[str, str], float]:
    """Seconds per test, by JUnit (classname, name)."""
    times: dict[tuple[str, str], float] = defaultdict(float)
    for case in ET.parse(path).getroot().iter("testcase"):
        times[case.get("classname", ""), case.get("name", "")] += float(case.get("time") or 0)
    return dict(times)


def from_durations(text: str) -> dict[str, float]:
    """Seconds per node id from pytest's --durations lines (run with --durations=0 for all)."""
    times: dict[str, float] = defaultdict(float)
    for line in text.splitlines():
        m = DURATION.match(line)
        if m:
            times[m.group(3)] += float(m.group(1))
    return dict(times)


def tier(marks: list[str]) -> str:
    return next((t for t in TIERS if t in marks), "unit")


def report(times: dict[str, float], marks: dict[str, list[str]]) -> dict:
    """Seconds and counts by tier, and the slowest tests, as a JSON-ready dict."""
    by_tier: dict[str, dict[str, float]] = {}
    for nodeid, s in times.items():
        t = tier(marks.get(nodeid, []))
        row = by_tier.setdefault(t, {"tests": 0, "seconds": 0.0})
        row["tests"] += 1
        row["seconds"] += s
    slowest = sorted(times.items(), key=lambda kv: -kv[1])[:SLOWEST]
    return {
        "total_seconds": sum(times.values()),
        "tiers": by_tier,
        "slowest": [{"test": n, "seconds": s, "tier": tier(marks.get(n, []))} for n, s in slowest],
    }


def show(data: dict) -> str:
    total = data["total_seconds"] or 1.0
    lines = [f"{'tier':8s} {'tests':>6s} {'seconds':>9s} {'share':>6s}"]
    for t in (*TIERS, "unit"):
        row = data["tiers"].get(t)
        if row:
            share = 100 * row["seconds"] / total
            lines.append(f"{t:8s} {row['tests']:6d} {row['seconds']:9.1f} {share:5.1f}%")
    lines.append(
        f"{'all':8s} {sum(r['tests'] for r in data['tiers'].values()):6d} "
        f"{data['total_seconds']:9.1f}"
    )
    lines += ["", f"the {len(data['slowest'])} slowest tests:"]
    lines += [f"{r['seconds']:8.1f} s  {r['tier']:7s} {r['test']}" for r in data["slowest"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--junit", type=Path, help="a finished run's JUnit XML (pytest --junitxml)")
    src.add_argument("--durations", type=Path, help="a file of pytest --durations=0 output")
    ap.add_argument("--json", type=Path, help="also write the numbers to this file")
    ap.add_argument("pytest_args", nargs="*", help="after --: what pytest runs (default tests)")
    args = ap.parse_args(argv)

    paths = [a for a in args.pytest_args if (ROOT / a.split("::")[0]).exists()] or ["tests"]
    if args.durations:
        times = from_durations(args.durations.read_text())
        marks = markers(paths)
    else:
        junit = args.junit
        if junit is None:  # run the suite (or what the arguments select) now
            junit = Path(tempfile.mkdtemp(prefix="suite-time-")) / "run.xml"
            subprocess.run(
                [sys.executable, "-m", "pytest", f"--junitxml={junit}", *args.pytest_args]
                + ([] if args.pytest_args else ["tests"]),
                cwd=ROOT,
                check=False,
            )
        if not junit.is_file():
            raise SystemExit(f"no JUnit XML at {junit}: run `make test` (or pass --junit)")
        marks = markers(paths)
        by_class = {_classname(n): n for n in marks}
        times = {by_class.get(k, "::".join(k)): s for k, s in from_junit(junit).items()}
    data = report(times, marks)
    print(show(data))
    if args.json:
        args.json.write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
