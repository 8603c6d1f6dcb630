"""Without the DJL jars: BackendUnavailable naming `make djl`, and the lesson's DJL outcomes
become Outcome.missing while the other frameworks still run."""

from __future__ import annotations

import numpy as np
import pytest

from fpexplore import backends
from fpexplore.backends import djl
from fpexplore.errors import BackendUnavailable


@pytest.fixture
def no_jars(tmp_path, monkeypatch):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    return tmp_path


def test_backend_reports_missing_jars_with_the_fix(no_jars):
    b = backends.get("djl")
    assert not b.available()
    info = b.probe()
    assert not info.available and "make djl" in info.fix
    with pytest.raises(BackendUnavailable, match="make djl") as exc:
        djl.ndsum(np.ones(3, dtype=np.float32))
    assert str(no_jars) in str(exc.value)


def test_lesson_turns_missing_djl_into_outcome_missing(no_jars):
    from fpexplore.lessons import get

    comp = get("djl_normalization").run(stage="std")
    missing = [o for o in comp.outcomes if not o.ran]
    assert [o.backend for o in missing] == ["djl"]
    assert "make djl" in missing[0].unavailable
    assert all(o.ran for o in comp.outcomes if o.backend != "djl")
    assert "std_ddof" in comp.claims and comp.holds("std_ddof")
    assert "std_djl_population" not in comp.claims
