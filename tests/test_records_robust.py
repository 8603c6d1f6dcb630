"""Records that cannot be read, or that lessons cannot use, are skipped with a named warning."""

from __future__ import annotations

import json

import pytest

from fpexplore import records
from fpexplore.errors import RecordError


@pytest.fixture(scope="module")
def good() -> dict:
    return json.loads(records.find().read_text())


def _write(folder, name: str, data) -> None:
    (folder / name).write_text(data if isinstance(data, str) else json.dumps(data))


BAD = {
    "deep.json": "[" * 100_000 + "]" * 100_000,  # RecursionError in json.loads
    "settings.json": lambda d: d.update(settings=True),
    "word.json": lambda d: d["experiments"]["rng"]["cuda_rand_bits"]["42"].__setitem__(2, 2**40),
    "tf32.json": lambda d: d["experiments"]["tf32"]["rows"][0].pop("rel_error"),
    "recipe.json": lambda d: d["experiments"]["sum"]["cases"][0]["input"].update(n=10**12),
    "sm.json": lambda d: d["provenance"].update(sm_count=10**9),
    "binary.json": "\x00\xff not json",
}


def test_bad_records_beside_a_good_one_are_skipped_with_a_warning(good, tmp_path):
    _write(tmp_path, "good.json", good)
    for name, bad in BAD.items():
        if callable(bad):
            data = json.loads(json.dumps(good))
            bad(data)
            bad = data
        _write(tmp_path, name, bad)
    with pytest.warns(records.RecordWarning) as caught:
        assert records.available(tmp_path) == [tmp_path / "good.json"]
    named = " ".join(str(w.message) for w in caught)
    assert all(name in named for name in BAD), named
    for name in BAD:
        with pytest.raises(RecordError):
            records.load(tmp_path / name)


def test_a_lesson_reads_the_good_record_beside_bad_ones(good, tmp_path, monkeypatch):
    from fpexplore.lessons import get

    _write(tmp_path, "good.json", good)
    _write(tmp_path, "deep.json", BAD["deep.json"])
    monkeypatch.setattr(records, "gpu_dir", lambda: tmp_path)
    with pytest.warns(records.RecordWarning, match="deep.json"):
        c = get("tf32").run(device="recorded")
    assert c.data.source == "recorded"
