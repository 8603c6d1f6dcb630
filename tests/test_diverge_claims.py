"""The divergence report's claims (notebook 10): "agree" and, where a mistake was planted or
a divergence is expected, "first_divergence", checked as `Comparison.check` does; the
tolerance advice's "within_bound". Also the facts notebook 10 prints but does not claim."""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest

from fpexplore import backends, diverge, tolerance
from fpexplore.diverge import zoo
from fpexplore.diverge.report import CLAIMS
from fpexplore.errors import ClaimFailed, ClaimNotChecked, InvalidParameter

backends.load("torch")  # a set-up framework that is missing fails the tests


def test_unplanted_report_claims_agreement(capsys):
    r = diverge.run_zoo("mlp", "torch")
    assert set(r.claims) == {"agree"} and r.holds("agree") is True
    assert r.claims["agree"].text == f"{CLAIMS['agree']}: {r.verdict()}"
    r.check()
    out = capsys.readouterr().out
    assert out.startswith("[holds] agree: ") and "[observed] final_outputs_differ: " in out
    with pytest.raises(KeyError, match="first_divergence"):
        r.check("first_divergence")


@pytest.mark.parametrize(("model", "plant"), [("cnn", "padding"), ("transformer", "epsilon")])
def test_planted_report_claims_the_planted_layer(model, plant, capsys):
    r = diverge.run_zoo(model, "torch", plant)
    r.check("first_divergence")
    line = capsys.readouterr().out
    layer = zoo.PLANTED_LAYER[(model, plant)]
    assert f"expected '{layer}' on {r.names[1]}; found at '{layer}'" in line.replace("\n    ", " ")
    # the two sides disagree: "agree" is a claim that fails here
    with pytest.raises(ClaimFailed, match="agree"):
        r.check("agree")
    assert json.loads(json.dumps(r.to_dict()))["claims"]["first_divergence"]["holds"] is True


def test_a_wrong_expectation_fails():
    """The claim is computed: expecting the plant at another layer, or on the other side,
    fails."""
    x = zoo.example_input("cnn")
    a = diverge.capture_torch(zoo.torch_model("cnn"), x)
    b = diverge.capture_torch(zoo.torch_model("cnn", "padding"), x, name="torch variant")
    assert diverge.compare(a, b, expect=("conv2", "torch variant")).holds("first_divergence")
    wrong_layer = diverge.compare(a, b, expect=("conv1", "torch variant"))
    with pytest.raises(ClaimFailed, match="expected 'conv1'"):
        wrong_layer.check("first_divergence")
    assert diverge.compare(a, b, expect=("conv2", "torch")).holds("first_divergence") is False
    unplanted = diverge.compare(a, a, expect=("conv2", "torch B"))
    assert unplanted.holds("first_divergence") is False
    assert "no layer is outside its bound" in unplanted.claims["first_divergence"].text
    with pytest.raises(InvalidParameter, match="expect"):
        diverge.compare(a, b, expect=("conv2", "keras"))
    with pytest.raises(InvalidParameter, match="expect"):
        diverge.compare(a, b, expect="conv2")


def test_own_model_expectation_as_in_notebook_10():
    torch = backends.load("torch")
    import copy

    torch.manual_seed(0)
    mine = torch.nn.Sequential(
        torch.nn.Linear(12, 24), torch.nn.LayerNorm(24), torch.nn.GELU(), torch.nn.Linear(24, 3)
    ).eval()
    theirs = copy.deepcopy(mine)
    theirs[1].eps = 1e-6
    xb = torch.randn(5, 12)
    report = diverge.compare(
        diverge.capture_torch(mine, xb, name="mine"),
        diverge.capture_torch(theirs, xb, name="theirs"),
        expect=("1", "theirs"),
    )
    assert report.holds("first_divergence") is True


def test_advice_claims_within_bound(capsys):
    advice = tolerance.advise("matmul", "float32", 64)
    advice.check("within_bound")
    assert capsys.readouterr().out.startswith("[holds] within_bound: ")
    broken = type(advice)(**{**advice.to_dict(), "within_bound": False})
    with pytest.raises(ClaimFailed, match="within_bound"):
        broken.check()
    unmeasured = type(advice)(
        **{**advice.to_dict(), "within_bound": None, "measured_max_abs": None, "note": "no torch"}
    )
    with pytest.raises(ClaimNotChecked, match="no torch"):
        unmeasured.check("within_bound")


def test_advice_claims_growth():
    advice = tolerance.advise("dot", "float32", 100)
    assert advice.claims["growth"].holds is True
    assert "from 100 to 10000 terms" in advice.claims["growth"].text
    assert "growth" not in tolerance.advise("gelu", "float32", 100).claims
    from fpexplore.tolerance import _growth_claim

    assert _growth_claim(10**6, "float32").holds is None  # 100 n u is not small there


# --- what notebook 10 prints and these tests check (not claims of a report)


def test_notebook_10_facts():
    backends.load("tensorflow")  # through the registry: triton before TensorFlow
    x = zoo.example_input("cnn")
    torch_out = diverge.capture_torch(zoo.torch_model("cnn"), x).tap("fc").output
    keras_model, groups = zoo.keras_model("cnn", plant="padding")
    keras_out = diverge.capture_keras(keras_model, x, groups=groups).tap("fc").output
    assert not np.allclose(torch_out, keras_out, rtol=1e-5, atol=1e-6)

    u = tolerance.unit_roundoff("float32")
    assert tolerance.gamma(65) == 65 * u / (1 - 65 * u)
    row = diverge.run_zoo("transformer", "torch").row("fc2")
    assert row.terms == 65 and row.a.within and row.b.within

    eps = diverge.run_zoo("cnn", "torch", "epsilon")
    assert eps.first.name == "bn1" and eps.row("bn2").parted and not eps.row("conv2").parted
    pad = diverge.run_zoo("cnn", "torch", "padding")
    assert pad.row("conv1").diff_ulp == 0 and pad.row("conv2").parted

    from fpexplore.diverge.specs import conv_pads

    spec = {"padding": "same_tf", "weight": np.zeros((1, 1, 3, 3)), "stride": (2, 2)}
    spec["dilation"] = (1, 1)
    assert conv_pads(spec, (1, 1, 8, 8)) == (0, 1, 0, 1)
    assert conv_pads({**spec, "stride": (1, 1)}, (1, 1, 8, 8)) == (1, 1, 1, 1)

    g = [tolerance.gamma(k) for k in (100, 10_000)]
    p = [tolerance.probabilistic_gamma(k) for k in (100, 10_000)]
    assert 99 < g[1] / g[0] < 101 and 9 < p[1] / p[0] < 11


def test_notebook_10_torchscript_file_format(tmp_path):
    from fpexplore.diverge import export, runtimes

    exp = export.export_taps(zoo.torch_model("cnn"), [zoo.example_input("cnn")], tmp_path / "c.pt")
    assert export.file_format_version(exp.path) <= runtimes.DJL_MAX_FILE_FORMAT


def test_notebook_10_gelu_gap_maximum():
    def gelu_gap(x):
        with mpmath.workdps(30):
            x = mpmath.mpf(x)
            erf_form = x / 2 * (1 + mpmath.erf(x / mpmath.sqrt(2)))
            inner = mpmath.sqrt(2 / mpmath.pi) * (x + mpmath.mpf("0.044715") * x**3)
            return x / 2 * (1 + mpmath.tanh(inner)) - erf_form

    grid = np.linspace(-8, 8, 1601)
    coarse = max(grid, key=lambda x: abs(gelu_gap(x)))
    with mpmath.workdps(30):
        at = mpmath.findroot(lambda x: mpmath.diff(gelu_gap, x), coarse)
    assert abs(float(gelu_gap(at))) >= max(abs(gelu_gap(x)) for x in grid[::5])
