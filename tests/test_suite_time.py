"""benchmarks/suite_time.py: durations and JUnit XML read per test, tiers from markers."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import suite_time as st  # noqa: E402  (a script, not a package module)


def test_durations_lines_add_up_per_test():
    text = """
============================= slowest durations =============================
12.50s call     tests/test_a.py::test_x[one]
0.50s setup    tests/test_a.py::test_x[one]
3.00s call     tests/test_b.py::TestC::test_y
(2 durations < 0.005s hidden.  Use -vv to show these durations.)
"""
    assert st.from_durations(text) == {
        "tests/test_a.py::test_x[one]": 13.0,
        "tests/test_b.py::TestC::test_y": 3.0,
    }


def test_junit_names_map_to_node_ids(tmp_path):
    xml = tmp_path / "run.xml"
    xml.write_text(
        '<testsuites><testsuite name="pytest">'
        '<testcase classname="tests.test_a" name="test_x[one]" time="2.5"/>'
        '<testcase classname="tests.test_b.TestC" name="test_y" time="1.0"/>'
        "</testsuite></testsuites>"
    )
    times = st.from_junit(xml)
    assert times[st._classname("tests/test_a.py::test_x[one]")] == 2.5
    assert times[st._classname("tests/test_b.py::TestC::test_y")] == 1.0


def test_tiers_by_marker_and_the_slowest_first():
    times = {"a": 1.0, "b": 5.0, "c": 2.0, "d": 0.5}
    marks = {"a": [], "b": ["browser", "slow"], "c": ["slow", "java"], "d": ["java"]}
    data = st.report(times, marks)
    assert data["tiers"] == {
        "unit": {"tests": 1, "seconds": 1.0},
        "browser": {"tests": 1, "seconds": 5.0},
        "slow": {"tests": 1, "seconds": 2.0},
        "java": {"tests": 1, "seconds": 0.5},
    }
    assert [r["test"] for r in data["slowest"]] == ["b", "c", "a", "d"]
    assert "browser" in st.show(data) and data["total_seconds"] == 8.5
