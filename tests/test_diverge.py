"""The divergence finder: planted mistakes found at their layer, unplanted models agree."""

from __future__ import annotations

from html import unescape

import numpy as np
import pytest

from fpexplore import backends, diverge
from fpexplore.diverge import zoo
from fpexplore.errors import InvalidParameter

backends.load("torch")  # a set-up framework that is missing fails the tests

CASES = [(m, p) for m in zoo.MODELS for p in zoo.PLANTS[m]]


@pytest.mark.parametrize("model", zoo.MODELS)
def test_unplanted_torch_variant_agrees(model):
    r = diverge.run_zoo(model, "torch")
    assert r.agree, r.table()
    assert diverge.AGREE in r.verdict()
    assert all(row.a is not None and row.a.within for row in r.rows)


@pytest.mark.parametrize(("model", "plant"), CASES)
def test_planted_layer_is_found_torch(model, plant):
    r = diverge.run_zoo(model, "torch", plant)
    assert r.first is not None, r.table()
    assert r.first.name == zoo.PLANTED_LAYER[(model, plant)], r.table()
    # the reference side is within its bound there, the planted side is not
    assert r.first.a.within and not r.first.b.within
    assert r.first.culprits(r.names) == [r.names[1]]
    # every layer before it agrees bit for bit (same code, same inputs)
    for row in r.rows[: r.rows.index(r.first)]:
        assert row.diff_ulp == 0


def test_bounds_are_not_vacuous():
    """A change of one ULP in one element of an exact layer, or far beyond rounding in a
    dot product, is caught: the bound is tight enough to matter."""
    x = zoo.example_input("mlp")
    a = diverge.capture_torch(zoo.torch_model("mlp"), x)
    taps = dict(a.taps)
    out = taps["fc1"].output.copy()
    out[0, 0] = out[0, 0] * np.float32(1 + 2e-4)
    taps["fc1"] = diverge.Tap(taps["fc1"].inputs, out)
    relu = taps["relu1"].output.copy()
    i = np.flatnonzero(relu.ravel() > 0)[0]
    relu.ravel()[i] = np.nextafter(relu.ravel()[i], np.float32(np.inf))
    taps["relu1"] = diverge.Tap(taps["relu1"].inputs, relu)
    b = diverge.Capture("edited", "", taps)
    r = diverge.compare(a, b)
    assert r.first.name == "fc1"
    assert not r.row("relu1").b.within and r.row("relu1").b.n_outside == 1


def test_keras_agrees_and_finds_plants():
    backends.load("tensorflow")  # through the registry: triton before TensorFlow
    for model in ("mlp", "transformer"):
        r = diverge.run_zoo(model, "keras")
        assert r.agree, r.table()
        assert r.rows[-1].diff_ulp > 0  # different bits, yet within rounding layer by layer
    r = diverge.run_zoo("cnn", "keras", "padding")
    assert r.first.name == "conv2" and r.first.culprits(r.names) == ["keras"], r.table()


def test_report_faces():
    r = diverge.run_zoo("cnn", "torch", "epsilon")
    d = r.to_dict()
    assert d["first"] == "bn1" and not d["agree"]
    assert "first divergence at layer 'bn1'" in r.table()
    fig = diverge.plot(r)
    assert fig.axes[0].texts  # the culprit is annotated
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_bad_input_names_the_argument():
    with pytest.raises(InvalidParameter, match="'model'"):
        diverge.run_zoo("resnet")
    with pytest.raises(InvalidParameter, match="'plant'"):
        diverge.run_zoo("mlp", "torch", "padding")
    with pytest.raises(InvalidParameter, match="'against'"):
        diverge.run_zoo("mlp", "onnx")


def test_layers_and_reports_are_looked_up_by_name():
    """A layer of a capture and a model's report, by name: an unknown one names those there are."""
    cap = diverge.capture_torch(zoo.torch_model("mlp"), zoo.example_input("mlp"))
    assert cap.tap("fc1") is cap.taps["fc1"]
    with pytest.raises(KeyError, match=r"no layer 'fc9'.*fc1"):
        cap.tap("fc9")
    reports = diverge.Reports(mlp=diverge.run_zoo("mlp"))
    assert reports.of("mlp").agree
    with pytest.raises(KeyError, match="no report of 'cnn'; there are: mlp"):
        reports.of("cnn")


def test_widget_builds_and_redraws():
    from fpexplore.diverge.widget import explore

    box = explore("mlp", "torch", "dropout")
    title, controls, _against, verdict, _figure = box.children
    assert "Find the divergence" in title.value
    plant = controls.children[1]
    assert "first divergence at layer 'drop'" in unescape(verdict.value)
    plant.value = None  # no plant: agreement
    assert diverge.AGREE in verdict.value
    plant.value = "dropout"  # back to a setting shown before
    assert "first divergence at layer 'drop'" in unescape(verdict.value)


def test_widget_plant_menu_never_blank_after_a_model_change():
    """A model without the chosen plant selects "none" (index 0, not an empty selection on
    which picking "none" would change nothing)."""
    from fpexplore.diverge import widget

    box = widget.explore("cnn", "torch", "padding")
    _title, controls, _against, verdict, _figure = box.children
    model, plant = controls.children
    model.value = "mlp"  # has no padding plant
    assert plant.index == 0 and plant.value is None
    assert diverge.AGREE in verdict.value
    plant.value = "dropout"
    assert "first divergence at layer 'drop'" in unescape(verdict.value)
