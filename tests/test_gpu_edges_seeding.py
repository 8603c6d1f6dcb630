"""relu on edge values across devices, and seeding across GPUs, streams and host threads: the
recorded runs load, bad records are refused, and the lessons' claims are decided from them."""

from __future__ import annotations

import copy
import json

import pytest

from fpexplore.errors import RecordError
from fpexplore.lessons import get
from fpexplore.lessons.cpu_vs_accelerator import edges
from fpexplore.lessons.rng_seeds import multi_gpu

torch = pytest.importorskip("torch")


def _edges_record():
    recs = edges.recorded()
    assert recs, "data/gpu/edges holds a record"
    return recs[0]


def test_edges_record_has_cpu_and_two_gpus():
    rec = _edges_record()
    assert {"cpu", "cuda:0", "cuda:1"} <= set(rec["devices"])
    zeros = edges.relu_neg_zero(rec["devices"])
    assert zeros == {"cpu": "-0.0", "cuda:0": "+0.0", "cuda:1": "+0.0"}


def test_live_cpu_matches_every_device_on_nonzero_values():
    rec = _edges_record()
    here = edges.run_device("cpu")
    sides = {"here": here, **{k: v for k, v in rec["devices"].items()}}
    assert edges._nonzero_rows(sides) == []
    # the splits that exist are on zeros and NaNs only
    assert set(edges.summary(sides)["edges"]) <= {"-0.0", "+0.0", "NaN", "-NaN"}


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d.update(format="other"),
        lambda d: d.update(version=2),
        lambda d: d.update(devices={}),
        lambda d: d["devices"]["cuda:0"]["float32"]["torch.relu"].update(short=[1.5] * 14),
        lambda d: d["devices"]["cuda:0"]["float16"]["F.relu"].update(long=[1 << 16] * 14),
        lambda d: d["devices"]["cuda:0"]["float32"]["torch.relu"].update(short=[0] * 3),
        lambda d: d["devices"]["cuda:0"].pop("bfloat16"),
    ],
)
def test_bad_edges_records_are_refused(corrupt, tmp_path):
    data = copy.deepcopy(_edges_record())
    data.pop("path")
    edges.validate(data, "ok")
    corrupt(data)
    with pytest.raises(RecordError, match="gpu_edges_run"):
        edges.validate(data, "bad")
    (tmp_path / "bad.json").write_text(json.dumps(data))
    assert edges.recorded(tmp_path) == []


def test_seeding_record_verdicts():
    data = multi_gpu.recorded()
    assert data is not None and len(data["cards"]) >= 2
    v = multi_gpu.verdicts(data)
    assert v["gpus_same_stream"] and v["streams_reproduce"] and v["race_same_draws"]
    assert not v["race_reproduces"] and not v["unseeded_reproduces"]


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d.update(runs=d["runs"][:1]),
        lambda d: d["runs"][0].pop(multi_gpu.PROBES[0]),
        lambda d: d["runs"][0].update({multi_gpu.PROBES[0]: 7}),
        lambda d: d.update(cards="H100"),
    ],
)
def test_bad_seeding_records_are_refused(corrupt, tmp_path):
    data = copy.deepcopy(multi_gpu.recorded())
    data.pop("path")
    corrupt(data)
    with pytest.raises(RecordError):
        multi_gpu.validate(data, "bad")
    (tmp_path / "x.json").write_text(json.dumps(data))
    assert multi_gpu.recorded(tmp_path) is None


def test_without_records_the_claims_are_not_checked(monkeypatch):
    monkeypatch.setattr(multi_gpu, "recorded", lambda directory=None: None)
    claims, shown = multi_gpu.lesson_parts()
    assert shown is None
    assert all(c.state == "not checked" and "gpu_edges_run" in c.reason for c in claims.values())
    monkeypatch.setattr(edges, "recorded", lambda directory=None: [])
    claims, _obs, _data, missing = edges.lesson_parts(None)
    assert "relu_negzero_by_device" not in claims and "gpu_edges_run" in missing["edges record"]
    assert claims["relu_nonzero_identical"].state == "holds"
    c = get("cpu_vs_accelerator").run()
    assert c.claims["relu_negzero_by_device"].state == "not checked"
    assert "gpu_edges_run" in c.claims["relu_negzero_by_device"].reason


def test_lessons_decide_the_claims():
    from fpexplore.lessons import get

    c = get("cpu_vs_accelerator").run()
    for key in ("relu_identical", "relu_nonzero_identical", "relu_negzero_by_device"):
        assert c.claims[key].state == "holds", c.claims[key].text
    assert c.claims["where_drops_nan"].state == "holds"
    r = get("rng_seeds").run()
    for key in (
        "seed_reaches_every_gpu",
        "current_device_seed_misses_others",
        "streams_reproduce",
        "thread_race_varies",
        "unseeded_cuda_varies",
    ):
        assert r.claims[key].state == "holds", r.claims[key].text


def test_linear_flag_record_and_claim():
    from fpexplore.lessons.gpu_determinism import linear_flag

    data = linear_flag.recorded()
    assert data is not None and "cuda" in data["digests"]
    claims, summary = linear_flag.lesson_parts()
    assert claims["linear_ignores_cudnn_flags"].state == "holds"
    assert summary.seeds_same == summary.seeds == len(linear_flag.SEEDS)
    # this CPU computes the same MLP: its bits under every setting equal each other
    digests = {linear_flag.probe("cpu", s, 0) for s in linear_flag.SETTINGS}
    assert len(digests) == 1


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d.update(format="x"),
        lambda d: d["digests"].pop("cuda"),
        lambda d: d["digests"]["cuda"].pop("cudnn.benchmark"),
        lambda d: d["digests"]["cuda"]["default"].update({"0": []}),
        lambda d: d["digests"]["cuda"]["default"].update({"9": ["ab"]}),
        lambda d: d.update(card=None),
    ],
)
def test_bad_linear_flag_records_are_refused(corrupt, tmp_path):
    from fpexplore.lessons.gpu_determinism import linear_flag

    data = copy.deepcopy(linear_flag.recorded())
    data.pop("path")
    corrupt(data)
    with pytest.raises(RecordError):
        linear_flag.validate(data, "bad")
    (tmp_path / "x.json").write_text(json.dumps(data))
    assert linear_flag.recorded(tmp_path) is None
