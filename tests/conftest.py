"""Shared fixtures: scoped mpmath precision, so no test leaks a global setting into another.

The session keeps fresh processes' results on disk (`fpexplore.dispatch.fresh`: each
configuration is taken once, and reused while code, machine and versions are unchanged;
``FPEXPLORE_FRESH_CACHE=0`` takes every one anew), reuses the passes of tests marked
``reusable`` while the tree and the machine are unchanged (`suite_reuse`; ``FPEXPLORE_REUSE=0``
runs them all), and ends by saying what it reused."""

from __future__ import annotations

import json
import os
import sys
import time

import mpmath
import pytest
import suite_parallel
import suite_reuse
from binder_env import binder_replay  # noqa: F401  (the Binder environment, once)
from browser_support import chromium_browser, lab_server  # noqa: F401  (browser fixtures)

from fpexplore.dispatch import fresh

# set before any test starts a child, so that every child (kernels included) shares the cache
os.environ.setdefault(fresh.CACHE_ENV, "1")
os.environ.setdefault(fresh.RUN_ENV, f"pytest-{os.getpid()}-{time.time_ns()}")


def pytest_sessionstart(session):
    """The tree and the machine as the session starts (what reused passes are keyed by), and a
    fresh-process cache kept small."""
    fresh.prune()
    suite_reuse.tree_hash()
    suite_reuse.machine_key()


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    prec = mpmath.mp.prec
    yield
    mpmath.mp.prec = prec


@pytest.fixture(autouse=True)
def _torch_threads_kept():
    """No test leaves torch on another intra-op thread count: the tests after it in the same
    process would run on it, and results that depend on the thread count would then depend on
    the order the tests ran in."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    yield
    if before is None or (after := torch.get_num_threads()) == before:
        return
    torch.set_num_threads(before)
    pytest.fail(f"the test left torch on {after} intra-op thread(s); it had {before}")


def _fresh_log() -> list[dict]:
    """This session's lines of the fresh-process cache's log."""
    from fpexplore.paths import cache_dir

    run = os.environ.get(fresh.RUN_ENV)
    try:
        text = (cache_dir() / "fresh" / "log.jsonl").read_text(encoding="utf-8")
    except OSError:
        return []
    lines = []
    for raw in text.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if line.get("run") == run:
            lines.append(line)
    return lines


def pytest_terminal_summary(terminalreporter):
    """What the session reused: passes, and fresh processes (and what it took)."""
    _summarize_reused(terminalreporter)
    if not fresh.cache_on():
        return
    lines = _fresh_log()
    if not lines:
        return
    reused = [ln for ln in lines if ln["reused"]]
    tr = terminalreporter
    tr.section("fresh processes (fpexplore.dispatch.fresh cache)")
    tr.write_line(
        f"{len(lines) - len(reused)} taken, {len(reused)} reused "
        f"(FPEXPLORE_FRESH_CACHE=0 takes every one anew)"
    )
    for ln in reused:
        tr.write_line(f"reused {ln['kind']} {ln['what']} under {ln['env']} (key {ln['key']})")


def pytest_xdist_make_scheduler(config, log):
    """With ``-n`` (pytest-xdist): a module, or a group of modules sharing a fixture, per unit of
    work, the longest first (`suite_parallel`)."""
    return suite_parallel.make_scheduler(config, log)


# ----------------------------------------------------------------------------- reused passes
_MARKED: set[str] = set()
_REUSED: list[dict] = []
_PHASES: dict[str, list[pytest.TestReport]] = {}


def pytest_collection_modifyitems(items):
    # the longest units of work first, each unit's tests together (`suite_parallel`)
    items[:] = [items[i] for i in suite_parallel.ordered([i.nodeid for i in items])]
    _MARKED.update(i.nodeid for i in items if i.get_closest_marker(suite_reuse.MARKER))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """A ``reusable`` test that passed on this tree and machine: reported passed, not run."""
    if item.nodeid not in _MARKED:
        return None
    record = suite_reuse.reused(item.nodeid)
    if record is None:
        return None
    _REUSED.append(record)
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for when in ("setup", "call", "teardown"):
        report = pytest.TestReport(
            item.nodeid,
            item.location,
            dict.fromkeys(item.keywords, 1),
            "passed",
            None,
            when,
            user_properties=[("reused", record.get("when", "")), ("seconds", record["seconds"])],
        )
        ihook.pytest_runtest_logreport(report=report)
    # what the skipped teardown would have done: tear down the fixtures (a module's, a
    # session's) that the next test does not need, so that it starts on a clean stack
    item.session._setupstate.teardown_exact(nextitem)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def pytest_runtest_logreport(report):
    """Keep the pass of a ``reusable`` test that ran (setup, call and teardown passed); note a
    reused one that another process (an xdist worker) reported."""
    if any(r["test"] == report.nodeid for r in _REUSED):
        return
    props = dict(report.user_properties)
    if "reused" in props:  # an xdist worker's (this process collected nothing)
        if report.when == "call":
            _REUSED.append({"test": report.nodeid, "when": props["reused"], **props})
        return
    if report.nodeid not in _MARKED:
        return
    phases = _PHASES.setdefault(report.nodeid, [])
    phases.append(report)
    if report.when == "teardown":
        _PHASES.pop(report.nodeid, None)
        done = {r.when: r for r in phases}
        if set(done) == {"setup", "call", "teardown"} and all(r.passed for r in phases):
            suite_reuse.keep(report.nodeid, sum(r.duration for r in phases))


def _summarize_reused(tr) -> None:
    if not _REUSED:
        return
    saved = sum(r.get("seconds", 0) for r in _REUSED)
    tree = (suite_reuse.tree_hash() or "")[:12]
    tr.section(f"reused passes (tree {tree}, same machine)")
    tr.write_line(
        f"{len(_REUSED)} tests passed earlier on this tree and machine were not run again "
        f"(their runs took {saved:.0f} s; FPEXPLORE_REUSE=0 runs them)"
    )
    for r in _REUSED:
        tr.write_line(f"reused {r['test']} (passed {r.get('when', '?')}, {r.get('seconds', 0)} s)")
