"""The GPU records' ULP fields count in ULPs of the exact value: the recorder says so, an older
record says which unit it holds, and the committed records were converted by an offline check
of their seeded sampled truths (none rounds up to a power of two)."""

import copy
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from fpexplore import formats, gpu_recheck, metrics, records
from fpexplore.lessons._gpu import ulp_unit
from fpexplore.lessons.gpu_determinism import experiment as determinism
from fpexplore.lessons.tf32 import experiment as tf32
from fpexplore.truth import Truth

ROOT = Path(__file__).resolve().parent.parent
RECORDS = sorted((ROOT / "data" / "gpu").glob("*.json"))


def test_boundary_counts_a_truth_that_rounds_up_to_a_power_of_two():
    below_one = 1 - Fraction(1, 2**30)  # rounds to 1.0 in float32, whose ULP is twice its own
    t = Truth("t", exact=np.array([below_one, Fraction(3, 4), Fraction(3)], dtype=object))
    assert ulp_unit.boundary(t) == 1
    assert metrics.truth_ulp(t, "float32")[0] == 2.0**-24
    assert formats.ulp(np.float64(1.0), "float32") == 2.0**-23


def test_the_offline_truths_are_the_recorders_own():
    """Quick shapes: the sampled truths made with no device are the ones the rows measure."""
    det = determinism.sampled_truths(quick=True, seed=0)
    a = determinism._atomic_cases(determinism.ATOMIC_VALUES[True], 100)
    sample = determinism.atomic_samples(a)["index_add_"]
    key = ("index_add_", determinism._atomic_case_text("index_add_", a), "result")
    assert np.array_equal(det[key].round("float64"), sample[1].round("float64"))
    rec = {"seed": 0, "matmul_sizes": [16], "conv_channels": [4], "conv_side": 8, "conv_batch": 2}
    truths = tf32.sampled_truths(rec)
    a32, b32, ii, jj, _ = tf32.matmul_inputs(16, 0)
    want = (a32.astype(np.float64) @ b32.astype(np.float64))[ii, jj]
    assert np.allclose(truths[("matmul", 16)].round("float64"), want, rtol=1e-12)


def test_a_record_without_the_unit_reads_as_the_old_one_and_says_the_command():
    assert ulp_unit.unit({}) == ulp_unit.ROUNDED
    assert ulp_unit.COMMAND in ulp_unit.words({})
    assert ulp_unit.unit({"ulp_unit": ulp_unit.EXACT}) == ulp_unit.EXACT
    assert ulp_unit.words({"ulp_unit": ulp_unit.EXACT}) == "float32 ULPs of the exact value"


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.name)
def test_committed_records_are_in_the_exact_unit_by_the_offline_check(path):
    data = json.loads(path.read_text())
    records.validate(copy.deepcopy(data), path.name)
    for name in ulp_unit.EXPERIMENTS:
        assert ulp_unit.unit(data["experiments"][name]) == ulp_unit.EXACT, name
    # the conversion stands only while the recheck finds nothing counted differently
    assert gpu_recheck.recheck(data) == dict.fromkeys(ulp_unit.EXPERIMENTS, 0)
    old = copy.deepcopy(data)
    for name in ulp_unit.EXPERIMENTS:
        del old["experiments"][name]["ulp_unit"]
    assert gpu_recheck.mark(old) == dict.fromkeys(ulp_unit.EXPERIMENTS, 0)
    assert old == data  # mark() makes exactly what is committed


def test_mark_leaves_the_old_unit_where_a_value_would_count_differently(monkeypatch):
    data = json.loads(RECORDS[0].read_text())
    for name in ulp_unit.EXPERIMENTS:
        del data["experiments"][name]["ulp_unit"]
    monkeypatch.setattr(gpu_recheck, "recheck", lambda record: {"determinism": 0, "tf32": 2})
    gpu_recheck.mark(data)
    assert ulp_unit.unit(data["experiments"]["determinism"]) == ulp_unit.EXACT
    assert ulp_unit.unit(data["experiments"]["tf32"]) == ulp_unit.ROUNDED


def test_a_bad_unit_field_is_refused():
    data = json.loads(RECORDS[0].read_text())
    data["experiments"]["tf32"]["ulp_unit"] = 3
    with pytest.raises(records.RecordError, match="ulp_unit"):
        records.validate(data, "bad")


def test_the_tf32_lesson_names_the_unit_of_its_record():
    from fpexplore import lessons

    c = lessons.run("tf32", record=RECORDS[0].name)
    notes = [o.note for o in c.outcomes if o.ran and "median" in (o.note or "")]
    assert notes and all("float32 ULPs of the exact value" in n for n in notes)
