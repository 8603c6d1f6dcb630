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
    assert comp.claims["std_djl_population"].state == "not checked"
    assert "make djl" in comp.claims["std_djl_population"].reason


def test_lesson_without_jars_runs_every_stage_and_names_the_fix(no_jars):
    from fpexplore.lessons import get
    from fpexplore.lessons.djl_normalization import CLAIMS

    lesson = get("djl_normalization")
    for stage in ("pipeline", "decode", "resize", "center_crop", "to_tensor", "normalize"):
        comp = lesson.run(stage=stage, size=32, crop=31)
        djl_rows = [o for o in comp.outcomes if o.backend == "djl"]
        assert djl_rows and all(not o.ran and "make djl" in o.unavailable for o in djl_rows)
        assert all(o.ran for o in comp.outcomes if o.backend != "djl")
        assert all(c.holds is not False for c in comp.claims.values()), comp.table()
        djl_only = ("pipeline_", "crop_", "resize_", "std_djl", "decode_imageio", "to_tensor_bit")
        djl_only += ("rounding_halves", "article_names")
        for key, claim in comp.claims.items():
            if key.startswith((*djl_only, "normalize_bit", "normalize_tf_bit")):
                assert "djl" in CLAIMS[key].needs, key
                assert claim.holds is None and "make djl" in claim.reason, key
            else:
                assert claim.holds is True, key
        assert "make djl" in comp.data.djl_unavailable
    fig = lesson.figure(comp)  # no heat map without DJL: the figure says why
    assert "make djl" in fig.axes[0].texts[0].get_text()


def test_lesson_without_java_on_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    from fpexplore.lessons import get

    comp = get("djl_normalization").run(stage="std")
    (row,) = [o for o in comp.outcomes if o.backend == "djl"]
    assert "no Java runtime" in row.unavailable and "make djl" in row.unavailable
