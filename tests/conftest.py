"""Shared fixtures: scoped mpmath precision, so no test leaks a global setting into another.

The session keeps fresh processes' results on disk (`fpexplore.dispatch.fresh`: each
configuration is taken once, and reused while code, machine and versions are unchanged;
``FPEXPLORE_FRESH_CACHE=0`` takes every one anew) and ends by saying what it reused."""

from __future__ import annotations

import json
import os
import time

import mpmath
import pytest
from browser_support import chromium_browser, lab_server  # noqa: F401  (browser fixtures)

from fpexplore.dispatch import fresh

# set before any test starts a child, so that every child (kernels included) shares the cache
os.environ.setdefault(fresh.CACHE_ENV, "1")
os.environ.setdefault(fresh.RUN_ENV, f"pytest-{os.getpid()}-{time.time_ns()}")


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    prec = mpmath.mp.prec
    yield
    mpmath.mp.prec = prec


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
    """What the session reused from the fresh-process cache, and what it took."""
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
