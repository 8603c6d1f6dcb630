"""The lock (constraints.txt): make and Binder install from it, this environment matches it,
and doctor names every package whose installed version drifts from it."""

from __future__ import annotations

import pytest

from fpexplore import cli, lock
from fpexplore.paths import REPO_DIR


def test_make_and_binder_install_at_the_locks_versions():
    assert "-c constraints.txt" in (REPO_DIR / "Makefile").read_text()
    assert "-c constraints.txt" in (REPO_DIR / "binder" / "postBuild").read_text()
    assert "make lock" in (REPO_DIR / "README.md").read_text()


def test_the_lock_pins_every_framework_and_this_environment_matches_it():
    pinned = lock.read_lock(lock.lock_path())
    assert {"numpy", "torch", "tensorflow-cpu", "mpmath", "jpype1"} <= set(pinned)
    assert lock.drift(pinned) == [], "run `make setup` (or `make lock` to move the lock)"
    assert lock.report()[0].startswith("versions: numpy, torch")


def test_a_drift_is_named_with_both_versions(capsys, monkeypatch):
    monkeypatch.setattr(lock, "read_lock", lambda path: {"numpy": "1.0.0", "mpmath": "0.1"})
    lines = lock.report()
    assert "differ from the lock" in lines[0]
    assert any(line.strip().startswith("numpy ") and "(lock: 1.0.0)" in line for line in lines)
    assert cli.main(["doctor"]) == 0
    assert "mpmath" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("installed", "locked", "same"),
    [("2.15.0+cpu", "2.15.0", True), ("2.15.0", "2.15.0", True), ("2.11.0+cu130", "2.15.0", False)],
)
def test_a_local_build_label_is_the_same_release(installed, locked, same):
    assert lock.same_release(installed, locked) is same


def test_a_line_that_is_no_pin_is_refused(tmp_path):
    bad = tmp_path / "c.txt"
    bad.write_text("# a comment\nnumpy>=2\n")
    with pytest.raises(ValueError, match="numpy>=2"):
        lock.read_lock(bad)


def test_everything_counts_absent_packages(monkeypatch):
    found = lock.drift({"no-such-package-anywhere": "1.0"}, everything=True)
    assert [(d.name, d.installed) for d in found] == [("no-such-package-anywhere", None)]
    assert lock.drift({"no-such-package-anywhere": "1.0"}) == []
