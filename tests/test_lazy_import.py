"""``import fpexplore`` is cheap: no framework loads, and it takes under 0.3 s."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("torch", "tensorflow", "jpype", "ipywidgets", "matplotlib", "keras")
IMPORT_LIMIT_S = 0.3

PROBE = f"""
import json, sys
import fpexplore
from fpexplore import backends, formats, metrics, widgets
from fpexplore.lessons import all_lessons
lessons = all_lessons()
names = backends.names()
available = {{n: backends.get(n).available() for n in names}}
widgets.__all__
print(json.dumps({{"lessons": sorted(lessons), "backends": list(names),
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})}}))
"""

TIMER = """
import time
start = time.perf_counter()
import fpexplore
print(time.perf_counter() - start)
"""


def test_import_loads_no_framework():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["loaded"] == [], f"imported at import time: {report['loaded']}"
    assert {"numpy", "torch", "tensorflow", "djl", "libtorch"} <= set(report["backends"])


def test_import_takes_under_a_third_of_a_second():
    """Measured in fresh interpreters (best of 3, interpreter start-up excluded)."""
    times = []
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", TIMER], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        times.append(float(done.stdout))
    assert min(times) < IMPORT_LIMIT_S, f"import fpexplore took {min(times):.3f} s (best of 3)"
