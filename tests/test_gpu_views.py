"""GPU lessons on a CPU: the two recorded cards compared, the live CPU parts, the widgets."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from fpexplore import cards, records
from fpexplore.errors import InvalidParameter


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<style>.*?</style>|<[^>]+>", " ", html))


def test_card_choices_name_every_record():
    found = cards.choices()
    assert [key for _, key in found] == [p.stem for p in records.available()]
    for label, key in found:
        assert records.find(key).stem == key
        assert "recorded" in label


def test_differences_of_a_record_with_itself_are_none():
    rec = records.load(records.find("h200"))
    d = cards.differences(rec, rec)
    assert d.card_fields == []
    det = d.determinism
    assert det.same_bits == det.deterministic_on_both > 0
    assert det.distinct_counts_differ == [] and det.raises_same
    assert d.tf32.same_error == d.tf32.compared > 0
    assert all(all(v.values()) for v in d.cpu_vs_accelerator.values())
    assert d.rng_same and all(d.sums_same.values())


def test_differences_see_a_changed_record(tmp_path):
    src = records.find("h200")
    data = json.loads(src.read_text())
    data["provenance"]["gpu_name"] = "Other card"
    data["experiments"]["sum"]["cases"][0]["cuda_bits"] += 1
    row = next(r for r in data["experiments"]["tf32"]["rows"] if not r.get("raised"))
    row["rel_error"] *= 2
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    d = cards.differences(records.load(src), records.load(other))
    assert ("gpu_name", "NVIDIA H200", "Other card") in d.card_fields
    assert d.sums_same[data["experiments"]["sum"]["cases"][0]["name"]] is False
    assert d.tf32.same_error == d.tf32.compared - 1
    text = " ".join(cards.summary(d))
    assert "gpu_name NVIDIA H200 vs Other card" in text
    assert f"{len(d.sums_same) - 1} of {len(d.sums_same)} sums" in text


def test_compare_all_needs_two_cards(tmp_path, monkeypatch):
    h200, h100 = records.find("h200"), records.find("h100")
    monkeypatch.setattr(records, "gpu_dir", lambda: tmp_path)
    monkeypatch.setattr(records, "gpu_dirs", lambda: [tmp_path])  # this folder alone
    shutil.copy(h200, tmp_path)
    assert cards.compare_all() is None
    shutil.copy(h100, tmp_path)
    d = cards.compare_all()
    assert d is not None and set(d.cards) == {records.load(p).card for p in records.available()}


def test_cpu_determinism_one_thread_repeats():
    from fpexplore.lessons.gpu_determinism import cpu_live

    r = cpu_live.run_on_cpu("index_add_", 1)
    assert r.distinct == 1 and r.same_as_one_thread
    assert max(r.ulp_vs_truth_max) > 0  # repeatable, not exact
    with pytest.raises(InvalidParameter, match=r"'op'.*'nope'"):
        cpu_live.run_on_cpu("nope", 1)
    with pytest.raises(InvalidParameter, match=r"'n_threads'.*0"):
        cpu_live.run_on_cpu("index_add_", 0)


def test_tf32_input_rounding_explains_the_recorded_error():
    from fpexplore.lessons.tf32 import cpu_live

    rec = records.load(records.find("h200")).experiments["tf32"]["rows"]
    card = {r["size"]: r["rel_error"] for r in rec if r["op"] == "matmul" and r["mode"] == "TF32"}
    emulated = cpu_live.matmul_on_cpu(128, "TF32 (inputs rounded to TF32)").rel_error
    assert 0.95 < card[128] / emulated < 1.05
    fp32 = cpu_live.matmul_on_cpu(128, cpu_live.CPU_MODE, 1).rel_error
    assert fp32 < emulated / 100
    with pytest.raises(InvalidParameter, match=r"'size'.*100"):
        cpu_live.matmul_on_cpu(100, cpu_live.CPU_MODE)


def test_cpu_side_by_threads_against_the_exact_sum():
    from fpexplore import formats
    from fpexplore.lessons.cpu_vs_accelerator import cpu_live

    rec = cpu_live.recorded("h200")
    settings, exact = rec.settings, rec.exact
    side = cpu_live.cpu_side(settings, 1)
    ulp = float(formats.ulp(exact.sum_uniform, "float32"))
    assert abs(side.sum_uniform - exact.sum_uniform) < 8 * ulp
    assert rec.cpu.sum_uniform > 0
    with pytest.raises(InvalidParameter, match=r"'side'.*'tpu'"):
        rec.side("tpu")
    with pytest.raises(InvalidParameter, match="'n_threads'"):
        cpu_live.cpu_side(settings, 0)


def _move_each(view):
    """Move every control to its next option: the output changes, no error shows."""
    status, out = view.children[2], view.children[3]
    for control in view.children[1].children:
        before = out.value
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        control.value = values[(values.index(control.value) + 1) % len(values)]
        assert status.value == "", (control.description, status.value)
        assert out.value != before, control.description


def test_determinism_view_answers_every_control():
    from fpexplore.widgets.gpu_views import determinism_view

    view = determinism_view(threads=(1, 2))
    text = _text(view.children[3].value)
    assert "RECORDED run" in text and "Live on this CPU" in text and "use_deterministic" in text
    _move_each(view)


def test_tf32_view_answers_every_control():
    from fpexplore.widgets.gpu_views import tf32_view

    view = tf32_view(threads=(1, 2))
    assert "inputs rounded to TF32" in _text(view.children[3].value)
    _move_each(view)


def test_accelerator_view_answers_every_control():
    from fpexplore.widgets.gpu_views import accelerator_view

    view = accelerator_view(threads=(1, 16))
    text = _text(view.children[3].value)
    assert "this CPU, 1 thread (live)" in text and "exact sum" in text
    _move_each(view)
