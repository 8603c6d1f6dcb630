"""Robustness of `fpexplore.diverge` and of every output path: non-finite activations, numpy
names, a model that is not a module or that raises, and paths refused before any work."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from fpexplore import cli, diverge
from fpexplore.errors import InvalidParameter, ModelRaised
from fpexplore.paths import check_out

torch = pytest.importorskip("torch")
from fpexplore.diverge import zoo  # noqa: E402


def test_compare_reports_where_nan_and_inf_first_appear():
    x = zoo.example_input("mlp")
    broken = zoo.torch_model("mlp")
    with torch.no_grad():
        broken.fc2.weight[0, 0] = float("inf")
        broken.fc2.weight[1, 0] = float("nan")
    report = diverge.compare(
        diverge.capture_torch(zoo.torch_model("mlp"), x),
        diverge.capture_torch(broken, x, name="broken"),
    )
    first = report.first_nonfinite
    assert first is not None and first.name == "fc2"
    assert first.nonfinite[0] == 0 and first.nonfinite[1] > 0
    assert first.b is None and "NaN/inf" in first.note
    assert report.row("fc1").b is not None  # layers before it are still measured
    assert "first appear in the output of layer 'fc2'" in report.verdict()
    data = report.to_dict()
    assert data["first_nonfinite"] == "fc2"
    json.dumps(data)
    assert "fc2" in report.table()


def test_compare_handles_a_non_finite_model_input():
    x = zoo.example_input("mlp").copy()
    x[0, 0], x[1, 1] = np.nan, np.inf
    model = zoo.torch_model("mlp")
    report = diverge.compare(diverge.capture_torch(model, x), diverge.capture_torch(model, x))
    assert report.first_nonfinite is not None and report.first_nonfinite.name == "fc1"
    assert report.first_nonfinite.nonfinite_input
    assert "first appear in the input of layer 'fc1'" in report.verdict()
    # no layer could be measured: nothing says the two agree
    assert not report.agree and "not shown to agree: 0 of" in report.verdict()


def test_zoo_names_given_as_numpy_strings():
    for name in (np.array("mlp"), np.str_("mlp"), np.array(b"mlp")):
        model, plant = zoo.check(name, np.str_("dropout"))
        assert (model, plant) == ("mlp", "dropout") and type(model) is str
    assert zoo.example_input(np.array("mlp")).shape == (4, 16)
    assert set(zoo.weights(np.str_("mlp"))) == {"fc1", "fc2", "fc3"}
    for bad in (np.array(["mlp"]), np.array([["mlp"]]), np.array(1.0)):
        with pytest.raises(InvalidParameter, match="'model'"):
            zoo.check(bad)
    with pytest.raises(InvalidParameter, match="'plant'"):
        zoo.check("mlp", np.array(["dropout", "x"]))
    with pytest.raises(InvalidParameter, match="'against'"):
        diverge.run_zoo("mlp", np.array(["torch"]))


def test_capture_refuses_a_model_that_is_not_a_module():
    for model in (None, "mlp", lambda x: x):
        with pytest.raises(InvalidParameter, match="'model' parameter of capture_torch"):
            diverge.capture_torch(model, zoo.example_input("mlp"))


def test_an_error_of_the_users_model_names_the_layer_that_raised():
    with pytest.raises(ModelRaised, match=r"layer 'fc1' \(Linear\).*mat1 and mat2") as info:
        diverge.capture_torch(zoo.torch_model("mlp"), np.zeros((2, 15), np.float32))
    assert info.value.layer == "fc1"
    assert isinstance(info.value.__cause__, RuntimeError)

    class Raises(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Identity())

        def forward(self, x):
            return self.inner(x) if x.shape[0] > 1 else self.fail(x)

        def fail(self, x):
            raise ValueError("the model's own message")

    with pytest.raises(ModelRaised, match=r"in the model itself \(Raises\).*own message"):
        diverge.capture_torch(Raises(), np.zeros((1, 2), np.float32))
    model = Raises()
    model.inner[1].forward = lambda x: (_ for _ in ()).throw(KeyError("inside"))
    with pytest.raises(ModelRaised, match=r"layer 'inner.1' \(Identity\).*KeyError") as info:
        diverge.capture_torch(model, np.zeros((2, 2), np.float32))
    assert isinstance(info.value.__cause__, KeyError)


def _bad_paths(tmp_path):
    afile = tmp_path / "a-file"
    afile.write_text("x")
    bad = ["", str(tmp_path), str(tmp_path / "missing" / "x"), str(afile / "x"), "/dev/null/x"]
    return bad + (["/proc/x"] if os.path.isdir("/proc/self") else [])


def _must_not_run(*args, **kwargs):
    raise AssertionError("the work started before the output path was checked")


def test_output_paths_are_refused_before_any_work(tmp_path, capsys, monkeypatch):
    import fpexplore.diverge as diverge_mod
    import fpexplore.export as export_mod
    import fpexplore.report as report_mod

    monkeypatch.setattr(diverge_mod, "run_zoo", _must_not_run)
    monkeypatch.setattr(report_mod, "run_lessons", _must_not_run)
    monkeypatch.setattr(export_mod, "export", _must_not_run)
    faces = [
        (["diverge", "mlp", "--plot"], "--plot"),
        (["report", "--out"], "--out"),
        (["export", "summation_order", "--html"], "--html"),
    ]
    for argv, option in faces:
        for out in _bad_paths(tmp_path):
            assert cli.main([*argv, out]) == 2, (argv, out)
            err = capsys.readouterr().err
            assert err.startswith("fpexplore: error:") and f"'{option}'" in err, err
            assert "Traceback" not in err


def test_api_output_paths_are_refused_before_the_lesson_runs(tmp_path, monkeypatch):
    from fpexplore import export, lessons, report

    lesson = lessons.get("summation_order")
    monkeypatch.setattr(type(lesson), "run", _must_not_run)
    monkeypatch.setattr(report, "run_lessons", _must_not_run)
    for out in _bad_paths(tmp_path):
        with pytest.raises(InvalidParameter, match="'out'"):
            export.export("summation_order", out, lesson.quick)
        with pytest.raises(InvalidParameter, match="'out'"):
            report.write(out, ["summation_order"])


def test_check_out_leaves_no_file_and_keeps_fingerprint_working(tmp_path):
    from fpexplore.dispatch import fingerprint

    new = tmp_path / "new.html"
    assert check_out(new, "--html") == new and not new.exists()
    old = tmp_path / "old.html"
    old.write_text("kept")
    assert check_out(str(old), "--html") == old and old.read_text() == "kept"
    with pytest.raises(InvalidParameter, match=r"'--out'.*does not exist"):
        fingerprint.main_take(str(tmp_path / "missing" / "f.json"), "")
    with pytest.raises(InvalidParameter, match="'--html'"):
        check_out(None, "--html")


def test_diverge_plot_is_written_where_asked(tmp_path, capsys):
    out = tmp_path / "errors.png"
    assert cli.main(["diverge", "mlp", "--plot", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    assert "agree within rounding" in capsys.readouterr().out


def test_diverge_plot_without_a_suffix_keeps_the_name_given(tmp_path):
    out = tmp_path / "errors"  # matplotlib alone would write errors.png
    assert cli.main(["diverge", "mlp", "--plot", str(out)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    assert not (tmp_path / "errors.png").exists()
