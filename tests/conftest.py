"""Shared fixtures: scoped mpmath precision, so no test leaks a global setting into another."""

from __future__ import annotations

import mpmath
import pytest
from browser_support import chromium_browser, lab_server  # noqa: F401  (browser fixtures)


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    prec = mpmath.mp.prec
    yield
    mpmath.mp.prec = prec
