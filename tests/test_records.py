"""Recorded GPU runs: schema validation, loading, and the recorder itself (on the CPU)."""

import json
import os
import shutil
from fractions import Fraction

import numpy as np
import pytest

from fpexplore import recorder, records, truth
from fpexplore.errors import RecordError
from fpexplore.lessons.summation_order.experiment import regenerate


@pytest.fixture(scope="module")
def recorded():
    return records.load()


def test_the_committed_record_is_valid_and_newest(recorded):
    assert records.available()[0] == recorded.path
    p = recorded.provenance
    assert p["gpu_name"] and p["sm_count"] > 0 and p["cuda"] and p["cudnn"]
    assert p["total_memory_bytes"] > 0 and p["driver"] and p["torch"]
    assert "host" not in json.dumps(p).lower()
    assert recorded.card in recorded.banner() and recorded.date in recorded.banner()
    assert not recorded.data["settings"]["quick"]


def test_recorded_layouts_that_other_lessons_read(recorded):
    rng = recorded.experiments["rng"]
    assert rng["seeds"] == [0, 1, 42, 1234] and rng["n"] == 64
    for key in ("cuda_rand_bits", "cuda_randn_bits", "cpu_rand_bits"):
        assert all(len(rng[key][str(s)]) == 64 for s in rng["seeds"])
    cpu42 = records.from_bits32(rng["cpu_rand_bits"]["42"][:3])
    np.testing.assert_allclose(cpu42, [0.8823, 0.9150, 0.3829], atol=1e-4)
    cases = recorded.experiments["sum"]["cases"]
    assert cases[0]["name"] == "10000 x float32(0.0001)"
    for case in cases:
        x = regenerate(case["input"])
        assert x.size == case["input"]["n"] and x.dtype == np.float32
        assert isinstance(case["cuda_bits"], int)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(RecordError, match=r"no GPU record at .*record-gpu"):
        records.load(tmp_path / "nope.json")


def test_empty_folder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FPEXPLORE_DATA", str(tmp_path))
    assert records.available() == []
    with pytest.raises(RecordError, match="no GPU record in"):
        records.load()


def test_not_json_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(RecordError, match="not a readable JSON record"):
        records.load(bad)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("provenance"), r"provenance is missing"),
        (lambda d: d["provenance"].update(sm_count="many"), r"provenance.sm_count must be int"),
        (lambda d: d["experiments"]["tf32"].update(rows={}), r"experiments.tf32.rows must be"),
        (lambda d: d["experiments"]["sum"]["cases"][0].pop("cuda_bits"), r"cuda_bits is miss"),
        (lambda d: d["experiments"]["determinism"]["rows"][0].update(op=3), r"rows\[0\].op"),
        (lambda d: d["experiments"]["rng"]["cuda_rand_bits"].pop("42"), r"cuda_rand_bits\[42"),
        (lambda d: d.update(version=99), r"version 99"),
    ],
)
def test_bad_records_name_the_bad_field(recorded, tmp_path, mutate, message):
    data = json.loads(json.dumps(recorded.data))
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match=message):
        records.load(path)


def test_available_skips_quick_and_broken_records(recorded, tmp_path):
    shutil.copy(recorded.path, tmp_path / "a.json")
    quick = json.loads(recorded.path.read_text())
    quick["settings"]["quick"] = True
    (tmp_path / "b-quick.json").write_text(json.dumps(quick))
    (tmp_path / "c.json").write_text("[]")
    assert records.available(tmp_path) == [tmp_path / "a.json"]


def test_the_recorder_truths_match_fractions():
    gen = np.random.default_rng(3)
    x = gen.standard_normal(500) * np.exp(gen.uniform(-40, 40, 500))
    assert truth.sum(x).exact == sum(Fraction(v) for v in x.tolist())
    a, b = gen.standard_normal((2, 300), dtype=np.float32)
    assert truth.dot(a, b).exact == sum(
        Fraction(float(p)) * Fraction(float(q)) for p, q in zip(a, b, strict=True)
    )
    assert float(truth.sum(np.full(10000, np.float32(1e-4))).exact) == pytest.approx(
        0.99999997473787516, rel=1e-16
    )


def test_float32_bits_round_trip():
    x = np.random.default_rng(4).standard_normal(50).astype(np.float32)
    bits = records.bits32(x)
    assert all(isinstance(b, int) and 0 <= b < 2**32 for b in bits)
    assert records.from_bits32(bits).tobytes() == x.tobytes()
    assert records.bits32(np.float32(1.0)) == [0x3F800000]


def test_recorder_runs_on_cpu_quick_and_its_output_loads(tmp_path, monkeypatch):
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    path = recorder.record_gpu(out_dir=tmp_path, device="cpu", quick=True, n_runs=2, processes=1)
    # the experiments leave the process's environment as they found it
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ
    assert path.name.endswith("-quick.json") and path.parent == tmp_path
    rec = records.load(path)
    exp = rec.experiments
    assert rec.provenance["device"] == "cpu" and rec.data["settings"]["quick"]
    assert set(exp) == {"determinism", "tf32", "cpu_vs_accelerator", "rng", "sum"}
    # on a CPU every op is deterministic and nothing raises for lack of a deterministic kernel
    assert all(r["distinct"] == 1 for r in exp["determinism"]["rows"] if not r["raised"])
    assert exp["determinism"]["fresh_processes"]["completed"] == 1
    fp32 = [r for r in exp["tf32"]["rows"] if r["mode"] == "fp32 (TF32 off)"]
    assert fp32 and all(r["rel_error"] < 1e-6 for r in fp32)
    # the recorded rand bits are torch's CPU stream for seed 42 (checked independently)
    import torch

    torch.manual_seed(42)
    assert exp["rng"]["cpu_rand_bits"]["42"] == records.bits32(torch.rand(64).numpy())
    assert records.available(tmp_path) == []  # quick records are never picked by load()


def test_unknown_device_is_a_clear_error(tmp_path):
    from fpexplore.errors import BackendUnavailable

    with pytest.raises(BackendUnavailable, match="no_such_device"):
        recorder.record_gpu(out_dir=tmp_path, device="no_such_device", quick=True)
