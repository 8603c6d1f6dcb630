"""The training-drift lesson: its trajectories against the reference, the growth-rate fit, the
stability study's and the diversity table's claims (decided, and able to fail), TensorFlow and
the GPU record hidden, and the exercises' checks."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest

import fpexplore
from fpexplore.lessons import get
from fpexplore.lessons._base import hidden
from fpexplore.lessons.training_drift import (
    _study_claims,
    _table_claims,
    exercises,
    gpu_record,
    growth,
    models,
    table,
)
from fpexplore.lessons.training_drift.data import Study
from fpexplore.lessons.training_drift.train import distance, flip_ulp, train
from fpexplore.testing import check_lesson


@pytest.fixture(scope="module")
def run():
    return fpexplore.run("training_drift", steps=100)


def test_fit_rate_recovers_a_known_exponential():
    steps = np.arange(300)
    pair = 1e-8 * np.exp(0.07 * steps)
    g = growth.fit_rate(pair, np.full(300, 10.0))
    assert g["rate"] == pytest.approx(0.07, rel=1e-6)
    # 1% of a norm of 10 is 0.1: reached where 1e-8 e^(0.07 s) >= 0.1
    assert g["apart_at"] == int(np.ceil(np.log(1e7) / 0.07))
    flat = growth.fit_rate(np.zeros(50), np.ones(50))
    assert flat["rate"] is None and flat["apart_at"] is None


def test_flip_ulp_changes_one_weight_by_one_ulp():
    w0 = models.init("mlp", 0)
    w1 = flip_ulp(w0, 3)
    a, b = (np.concatenate([x.ravel() for x in w]) for w in (w0, w1))
    (i,) = np.flatnonzero(a != b)
    assert i == 3 and np.float32(b[i]) == np.nextafter(np.float32(a[i]), np.float32(1))


def test_the_first_step_of_float32_is_near_the_reference(run):
    d = run.data.trajectories
    assert d.base_truth[0] == 0 and 0 < d.base_truth[1] < 1e-5 * d.norm[1]
    assert d.f64_truth.max() < 1e-13 * d.norm[0] and d.certified_gap < 1e-25
    assert run.holds("reference_certified") and run.holds("float64_tracks_reference")


def test_the_rnn_pair_leaves_and_the_logistic_pair_stays(run):
    g = run.data.trajectories.growth
    assert g["rate"] > 0 and g["apart_at"] is not None
    c = fpexplore.run("training_drift", model="logistic", steps=100)
    assert c.data.trajectories.growth["max_share"] < 1e-5


def test_study_claims_fail_on_numbers_that_break_them(run):
    study = run.data.study
    assert all(c.holds for c in _study_claims(study).values())
    flat = replace(study, rnn=tuple(replace(r, rate=1e-4, apart_at=None) for r in study.rnn))
    assert _study_claims(flat)["rnn_grows_exponentially"].holds is False
    grown = replace(study, logistic=tuple(replace(r, max_share=0.2) for r in study.logistic))
    assert _study_claims(grown)["convex_stays_at_rounding"].holds is False
    fast = tuple(replace(r, rate=r.rate * (10 if "float64" in r.pair else 1))
                 for r in study.rnn)  # fmt: skip
    assert _study_claims(replace(study, rnn=fast))["instability_not_the_format"].holds is False
    kept = {"rnn": [{**vars(r), "apart": r.apart_at} for r in study.rnn]}  # a renamed field
    with pytest.raises(TypeError, match="apart"):
        Study.from_dict(kept)


def test_table_claims_fail_when_one_source_stands_apart(run):
    rows = run.data.table
    assert set(table.SINGLE) <= set(rows) and "framework" in rows
    assert all(c.holds for c in _table_claims(rows).values())
    quiet = [replace(r, disagreement=r.disagreement / 100) for r in rows["one bit"]]
    broken = _table_claims({**rows, "one bit": quiet})
    assert broken["one_bit_among_them"].holds is False
    assert broken["sources_same_order"].holds is False
    assert all(r.models == table.N_MODELS for r in rows["init seed"])


def test_the_same_setting_gives_the_same_bits():
    data, w0 = models.dataset("rnn", 1), models.init("rnn", 1)
    a = train("rnn", models.numpy_ops("float32"), w0, data, 1.0, 30)
    b = train("rnn", models.numpy_ops("float32"), w0, data, 1.0, 30)
    assert not distance(a, b).any()


def test_without_tensorflow_its_run_is_missing_with_the_fix():
    with hidden("tensorflow"):
        c = fpexplore.run("training_drift", perturbation="tensorflow", steps=50)
    missing = [o for o in c.outcomes if not o.ran]
    assert len(missing) == 1 and "Fix" in missing[0].unavailable
    assert c.data.trajectories.pair is None
    get("training_drift").figure(c)  # draws, saying what did not run


def test_without_torch_the_framework_claim_is_not_checked():
    with hidden("torch"):
        c = fpexplore.run("training_drift", perturbation="torch", steps=50)
    assert c.claims["framework_same_order"].holds is None
    assert "Fix" in c.claims["framework_same_order"].reason


def test_torchs_row_runs_on_one_thread_and_leaves_the_count_as_it_was():
    """torch's run (and the table's framework row) train on one intra-op thread, then set the
    count back: the next computation in the process runs on the threads it had."""
    from fpexplore.lessons.training_drift import models

    class FakeTorch:
        threads, seen = 3, []

        def get_num_threads(self):
            return self.threads

        def set_num_threads(self, n):
            self.seen.append(n)
            self.threads = n

    fake = FakeTorch()
    with models.one_torch_thread(fake):
        assert fake.get_num_threads() == 1
    assert fake.seen == [1, 3] and fake.get_num_threads() == 3
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    fpexplore.run("training_drift", perturbation="torch", steps=30, seed=11)
    assert torch.get_num_threads() == before


def test_gpu_row_is_not_checked_without_a_record(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_record, "read", lambda directory=None: None)
    c = fpexplore.run("training_drift", steps=50)
    claim = c.claims["gpu_atomics_same_order"]
    assert claim.holds is None and "fpexplore record training-drift" in claim.reason


def test_a_gpu_record_round_trips_through_the_reader(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    folder = tmp_path / "training_drift"
    monkeypatch.setattr(gpu_record, "RUNS", 2)
    monkeypatch.setattr(gpu_record, "DETERMINISTIC", 2)
    monkeypatch.setattr(table, "BASE_SEEDS", (0,))
    monkeypatch.setattr(table, "STEPS", 20)
    monkeypatch.setattr(gpu_record, "_runs", _short_runs(torch))
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    path = gpu_record.record(folder, "cpu")
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ  # a CPU record sets nothing
    rec = gpu_record.read(folder)
    assert rec is not None and rec["path"] == path.name
    s = gpu_record.summary(rec)
    assert s["deterministic_same"] and len(s["rows"]) == 1


def _short_runs(torch):
    original = gpu_record._runs

    def short(torch_, dev, base, n):
        return original(torch_, dev, base, n)

    return short


def test_a_record_with_other_settings_is_refused():
    bad = {"format": gpu_record.FORMAT, "version": gpu_record.VERSION, "settings": {"lr": 9}}
    with pytest.raises(fpexplore.errors.RecordError, match="other settings"):
        gpu_record.validate(bad, "x.json")


def test_exercise_checks_say_right_and_wrong():
    step = exercises.apart_step()
    assert exercises.check_apart_step(step).startswith("right")
    assert exercises.check_apart_step(max(step - 40, 0)).startswith("not yet")
    assert exercises.check_dies_out(0.02).startswith("right")
    assert exercises.check_dies_out(1.0).startswith("not yet")


def test_tensorflow_row_runs_where_tensorflow_is():
    pytest.importorskip("tensorflow")
    c = fpexplore.run("training_drift", perturbation="tensorflow", steps=40)
    assert c.data.trajectories.pair is not None and "TensorFlow" in c.data.trajectories.second


def test_the_lesson_meets_its_contract_on_a_few_draws():
    check_lesson(
        "training_drift",
        draws=2,
        seed=3,
        bounds={"steps": (20, 120)},
        choices={"perturbation": ["one-ulp", "float64"]},
    )


def test_the_svg_figure_draws_the_three_panels(run):
    import xml.etree.ElementTree as ET

    from fpexplore.lessons.training_drift import figure_svg
    from fpexplore.lessons.training_drift.figures import SVG_W

    root = ET.fromstring(figure_svg(run))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("width") == str(SVG_W)
    labels = [t.text for t in root.iter(f"{ns}text")]
    assert {"step", "epoch", "test disagreement between models"} <= set(labels)
    # one bar per source of the table, each with its value in its tooltip
    bars = [r for r in root.iter(f"{ns}rect") if r.find(f"{ns}title") is not None]
    assert len(bars) == len(run.data.table)
    for (source, rows), bar in zip(run.data.table.items(), bars, strict=True):
        mean = np.mean([r.disagreement for r in rows])
        assert bar.find(f"{ns}title").text.startswith(f"{source}: {mean:.3f}")
    # the pair, each run against the reference, and the loss curves: every point in the frame
    lines = list(root.iter(f"{ns}polyline"))
    assert len(lines) >= 6
    for line in lines:
        for xy in line.get("points").split():
            x, y = map(float, xy.split(","))
            assert 0 <= x <= SVG_W and 0 <= y <= float(root.get("height"))


def test_a_new_setting_shows_a_progress_bar_and_a_cached_one_none(tmp_path, monkeypatch):
    """The explorer computes a setting's missing parts with a progress bar in its status line;
    a setting whose runs are cached (on disk, not in the view) shows none."""
    import shutil

    from fpexplore.lessons.training_drift import figure_svg, pending, store
    from fpexplore.paths import cache_dir
    from fpexplore.widgets import explore

    lesson = get("training_drift")
    lesson.run(model="logistic", steps=20, seed=96)  # the shared parts, and one setting
    (tmp_path / "training_drift").mkdir()
    for path in (cache_dir() / "training_drift").glob("*.json"):
        if path.name.split("-")[0] in ("study", "table", "framework"):
            shutil.copy(path, tmp_path / "training_drift")
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    box = explore(lesson, svg=figure_svg, work=pending, model="logistic", steps=20, seed=96)
    status, seed = box.children[2], box.children[1].children[-1]
    shown: list[str] = []
    status.observe(lambda change: shown.append(change["new"]), names="value")
    key = ("logistic", "one-ulp", repr(1.0), 20, 97)
    assert not store.is_cached("trajectory", key)
    seed.value = 97
    bars = [s for s in shown if "<progress" in s]
    assert bars and "the mpmath reference" in bars[0] and "the two runs" in "".join(bars)
    assert store.is_cached("trajectory", key) and status.value == ""
    assert box.state["comparison"].params["seed"] == 97
    lesson.run(model="logistic", steps=20, seed=95)  # cached, never shown in this view
    shown.clear()
    seed.value = 95
    assert shown and not any("<progress" in s for s in shown)
    assert box.state["comparison"].params["seed"] == 95
    assert box.children[4].value.startswith("<svg")


def test_another_framework_starts_at_rounding_or_the_claim_fails():
    from types import SimpleNamespace

    from fpexplore.lessons import training_drift as td

    norm = np.array([1.0, 1.0, 1.0])
    near = SimpleNamespace(pair=np.array([0.0, 1e-8, 1e-3]), norm=norm)
    far = SimpleNamespace(pair=np.array([0.0, 1e-2, 1e-1]), norm=norm)
    assert td._framework_claim(near, "tensorflow")["tensorflow_starts_at_rounding"].holds
    assert not td._framework_claim(far, "torch")["torch_starts_at_rounding"].holds
    assert td._framework_claim(near, "one-ulp") == {}
