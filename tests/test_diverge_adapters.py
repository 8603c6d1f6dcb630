"""The divergence finder against DJL (marker ``java``) and the C++ LibTorch program: the torch
model's TorchScript export, every layer's inputs and output returned, run by the other runtime;
planted mistakes found at their layer; a missing runtime named with its fix."""

from __future__ import annotations

import pytest

from fpexplore import backends, cli, diverge
from fpexplore.backends import libtorch_program
from fpexplore.diverge import export, runtimes, zoo
from fpexplore.errors import BackendUnavailable, InvalidInput, InvalidParameter

backends.load("torch")  # a set-up framework that is missing fails the tests

java = pytest.mark.java
CASES = [(m, p) for m in zoo.MODELS for p in zoo.PLANTS[m]]


def _program() -> None:
    """The set-up builds the program; a test run without it fails, saying how to build it."""
    if libtorch_program.executable() is None:
        pytest.fail(
            f"the LibTorch program is not built: {libtorch_program.missing()} "
            f"Build it with: {libtorch_program.fix()}"
        )


@pytest.mark.filterwarnings("ignore:`torch.jit.load` is deprecated:FutureWarning")
def test_export_returns_every_layer_as_torch_sees_it(tmp_path):
    """The traced export, run by torch itself, gives the very taps the hooks capture."""
    torch = backends.load("torch")
    x = zoo.example_input("transformer")
    model = zoo.torch_model("transformer")
    exp = export.export_taps(model, [x], tmp_path / "block.pt")
    assert export.file_format_version(exp.path) <= runtimes.DJL_MAX_FILE_FORMAT
    assert (tmp_path / "block.pt.json").is_file()
    loaded = torch.jit.load(str(exp.path))
    with torch.no_grad():
        arrays = [t.numpy() for t in loaded(torch.from_numpy(x))]
    taps = exp.taps(arrays)
    ref = diverge.capture_torch(model, x)
    assert list(taps) == list(ref.taps)
    for name, tap in ref.taps.items():
        assert len(taps[name].inputs) == len(tap.inputs)
        assert taps[name].output.tobytes() == tap.output.tobytes(), name
    with pytest.raises(InvalidInput, match="layout expects"):
        exp.taps(arrays[:-1])


def test_libtorch_threads_are_checked():
    with pytest.raises(InvalidParameter, match="threads"):
        diverge.capture_libtorch(zoo.torch_model("mlp"), zoo.example_input("mlp"), threads=0)


# -- the LibTorch program ------------------------------------------------------------------


@pytest.mark.parametrize("model", zoo.MODELS)
def test_libtorch_agrees_within_rounding(model):
    _program()
    r = diverge.run_zoo(model, "libtorch")
    assert r.names == ("torch", "LibTorch")
    assert r.agree, r.table()
    assert diverge.AGREE in r.verdict()
    ref = diverge.capture_torch(zoo.torch_model(model), zoo.example_input(model))
    assert [row.name for row in r.rows] == list(ref.taps)
    assert all(row.b is not None and row.b.within for row in r.rows if row.kind != "?")


@pytest.mark.parametrize(("model", "plant"), CASES)
def test_libtorch_finds_the_plant_in_the_export(model, plant):
    _program()
    r = diverge.run_zoo(model, "libtorch", plant)
    assert r.first is not None, r.table()
    assert r.first.name == zoo.PLANTED_LAYER[(model, plant)], r.table()
    assert r.first.culprits(r.names) == ["LibTorch"]


def test_libtorch_missing_names_the_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    monkeypatch.delenv(libtorch_program.ENV_EXE, raising=False)
    with pytest.raises(BackendUnavailable, match=r"make libtorch|apt-get install"):
        diverge.run_zoo("mlp", "libtorch")
    assert cli.main(["diverge", "mlp", "--against", "libtorch"]) == 2
    err = capsys.readouterr().err
    assert "libtorch is unavailable" in err and "Traceback" not in err


def test_cli_against_libtorch(capsys):
    _program()
    assert cli.main(["diverge", "mlp", "--against", "libtorch", "--plant", "dropout"]) == 0
    out = capsys.readouterr().out
    assert "first divergence at layer 'drop'" in out and "LibTorch" in out


# -- DJL -------------------------------------------------------------------------------------


@java
@pytest.mark.parametrize("model", zoo.MODELS)
def test_djl_agrees_within_rounding(model):
    r = diverge.run_zoo(model, "djl")
    assert r.names == ("torch", "DJL") and "libtorch 2.7.1" in r.versions[1]
    assert r.agree, r.table()
    assert all(row.b is not None and row.b.within for row in r.rows if row.kind != "?")


# one plant per model through DJL (all of them go through the LibTorch program above)
DJL_CASES = [("mlp", "dropout"), ("cnn", "padding"), ("transformer", "gelu")]


@java
@pytest.mark.parametrize(("model", "plant"), DJL_CASES)
def test_djl_finds_the_plant_in_the_export(model, plant):
    r = diverge.run_zoo(model, "djl", plant)
    assert r.first is not None, r.table()
    assert r.first.name == zoo.PLANTED_LAYER[(model, plant)], r.table()
    assert r.first.culprits(r.names) == ["DJL"]


@java
def test_djl_worker_rejects_a_path_that_is_no_torchscript_file(tmp_path):
    from fpexplore.jvm import client

    with pytest.raises(InvalidInput, match="TorchScript"):
        client.call("run_torchscript", path=str(tmp_path / "none.pt"), inputs=[])


def test_djl_missing_names_the_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))  # no jars there
    with pytest.raises(BackendUnavailable, match="make djl"):
        diverge.capture_djl(zoo.torch_model("mlp"), zoo.example_input("mlp"))
    assert cli.main(["diverge", "mlp", "--against", "djl"]) == 2
    err = capsys.readouterr().err
    assert "djl is unavailable" in err and "make djl" in err and "Traceback" not in err


def test_bad_against_names_the_choices():
    with pytest.raises(InvalidParameter, match="djl, libtorch"):
        diverge.run_zoo("mlp", "onnx")
