"""How the suite is spread over processes: units of work, and the order they start in."""

from __future__ import annotations

from pathlib import Path

import suite_parallel as sp

ROOT = Path(__file__).resolve().parents[1]


def test_grouped_and_first_units_name_modules_that_exist() -> None:
    for modules in sp.GROUPS.values():
        for module in modules:
            assert (ROOT / module).is_file(), module
    for name in sp.FIRST:
        assert name in sp.GROUPS or (ROOT / name).is_file(), name


def test_a_unit_is_its_group_or_its_module() -> None:
    assert sp.unit("tests/test_browser_notebooks.py::test_x[01]") == "binder"
    assert sp.unit("tests/test_wheel_install.py::test_y") == "binder"
    assert sp.unit("tests/test_formats.py::test_z[a::b]") == "tests/test_formats.py"


def test_the_longest_units_start_first_and_each_unit_stays_together() -> None:
    ids = [
        "tests/test_a.py::t1",
        "tests/test_claims_any_machine.py::m1",
        "tests/test_b.py::t2",
        "tests/test_wheel_install.py::w1",
        "tests/test_a.py::t3",
        "tests/test_binder_replay.py::r1",
        "tests/test_claims_any_machine.py::m2",
    ]
    order = [ids[i] for i in sp.ordered(ids)]
    assert order == [
        "tests/test_wheel_install.py::w1",
        "tests/test_binder_replay.py::r1",
        "tests/test_claims_any_machine.py::m1",
        "tests/test_claims_any_machine.py::m2",
        "tests/test_a.py::t1",
        "tests/test_a.py::t3",
        "tests/test_b.py::t2",
    ]
    assert sorted(sp.ordered(ids)) == list(range(len(ids)))
