"""Train vs eval lesson: claims hold across settings; the BN reference is certified."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore
from fpexplore.errors import InvalidParameter
from fpexplore.lessons import train_vs_eval
from fpexplore.truth import reference


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"batch": 2, "p": 0.1, "eps": 1e-3, "momentum": 0.5, "seed": 3, "mode": "eval"},
        {"batch": 64, "p": 0.0, "runs": 5},
        {"batch": 1, "p": 0.9, "eps": 1e-8, "momentum": 0.01, "seed": 11, "runs": 10},
        {"batch": 16, "p": 0.2, "eps": 1e-3, "momentum": 0.9, "seed": 5, "runs": 20},
    ],
)
def test_claims_hold(params):
    c = fpexplore.run("train_vs_eval", **params)
    failed = [k for k, v in c.claims.items() if not v.holds]
    assert not failed, [c.claims[k].text for k in failed]


def test_dropout_removed_is_eval_bit_for_bit_on_many_seeds():
    for seed in range(5):
        c = fpexplore.run("train_vs_eval", seed=seed, runs=3, p=0.3)
        assert c.holds("dropout_removed_equals_eval")
        ev = c.outcome("torch MLP with Dropout, eval()").value
        plain = c.outcome("torch MLP without Dropout, copied weights").value
        assert (ev.view(np.uint32) == plain.view(np.uint32)).all()


def test_p_zero_and_keras_eps_cases_make_measured_claims():
    c = fpexplore.run("train_vs_eval", p=0.0, runs=4)
    assert "p=0" in c.claims["dropout_train_varies"].text and c.holds("dropout_train_varies")
    c = fpexplore.run("train_vs_eval", eps=1e-3, runs=4)
    assert "coincide" in c.claims["keras_defaults_disagree"].text
    assert c.holds("keras_defaults_disagree")


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_figure_draws_the_chosen_mode(mode):
    import matplotlib

    matplotlib.use("Agg")
    c = fpexplore.run("train_vs_eval", mode=mode, runs=50, batch=4)
    fig = train_vs_eval.LESSON.figure(c)
    hist, bars = fig.axes
    assert sum(p.get_data().values.sum() for p in hist.patches) == 2 * 50  # both modes, 50 runs
    labels = [t.get_text() for t in bars.get_yticklabels()]
    assert labels and all(mode in k or k == "keras default" for k in labels)
    assert c.truth.label.startswith(f"batch_norm[{mode}]")


def test_bn_reference_is_certified_and_matches_float64():
    g = np.random.default_rng(0)
    x = g.standard_normal((5, 3)).astype(np.float32)
    gamma, beta = np.float32([1, 2, 0.5]), np.float32([0, 1, -1])
    t = reference.batch_norm(x, weight=gamma, bias=beta, training=True, eps=1e-5)
    assert t.digits > 20
    m, v = x.astype(np.float64).mean(0), x.astype(np.float64).var(0)
    ref64 = (x - m) / np.sqrt(v + 1e-5) * gamma + beta
    assert np.allclose(t.split()[0], ref64, rtol=1e-12, atol=1e-12)


def test_bad_parameters_are_named():
    with pytest.raises(InvalidParameter, match="'p'"):
        fpexplore.run("train_vs_eval", p=1.0)
    with pytest.raises(InvalidParameter, match="'mode'"):
        fpexplore.run("train_vs_eval", mode="test")


@pytest.mark.parametrize("hidden", ["tensorflow", "torch"])
def test_each_claim_needs_only_its_framework(monkeypatch, hidden):
    """Without TensorFlow torch's BatchNorm claims are still checked (and Keras's alone
    without torch); only what needs the missing part is "not checked"."""
    real = train_vs_eval.backends.missing
    reason = f"{hidden} hidden by the test. Fix: pip install {hidden}"
    monkeypatch.setattr(
        train_vs_eval.backends, "missing", lambda name: reason if name == hidden else real(name)
    )
    c = fpexplore.run("train_vs_eval", runs=3, batch=4)
    own = train_vs_eval.TORCH_BN_CLAIMS if hidden == "tensorflow" else train_vs_eval.KERAS_BN_CLAIMS
    gone = (
        train_vs_eval.KERAS_BN_CLAIMS if hidden == "tensorflow" else train_vs_eval.TORCH_BN_CLAIMS
    )
    assert all(c.claims[k].state == "holds" for k in own), {k: c.claims[k] for k in own}
    for k in (*gone, *train_vs_eval.BOTH_BN_CLAIMS):
        assert c.claims[k].state == "not checked" and reason in c.claims[k].reason
    assert any(o.unavailable == reason for o in c.outcomes)
    assert c.truth is not None and c.data.bn_ulp


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_svg_figure_shows_the_chosen_mode(mode):
    """The explorer's SVG figure: well-formed, both panels, the mode's bars with their ULPs."""
    import xml.etree.ElementTree as ET

    c = fpexplore.run("train_vs_eval", mode=mode, runs=20, batch=4)
    svg = train_vs_eval.figure_svg(c)
    root = ET.fromstring(svg)
    tips = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    ulps = c.data.bn_ulp
    shown = [k for k in ulps if mode in k or (mode == "eval" and k == "keras default")]
    for k in shown:
        assert f"{k}: {ulps[k]:.3g} ULP" in tips
    assert sum(f"{mode}():" in t for t in tips) >= 1  # the histogram of the chosen mode
    assert f"rounding bound: {c.data.bn_bound_by_mode[mode]:.3g} ULP" in tips


def test_autograd_modes_rrelu_and_the_state_dict_example():
    """Claims 21 and 23 and the dropout-removal example as written, on two seeds."""
    torch = pytest.importorskip("torch")
    from fpexplore.lessons.train_vs_eval import modes as _train_modes

    for seed in (0, 17):
        _, claims, _fields = _train_modes.torch_part(torch, seed, 3)
        assert all(c.holds for c in claims.values()), claims  # the error names a missing key


@pytest.mark.parametrize("moved", [2700, 0])
def test_transformer_claims_read_the_gpu_myths_record(monkeypatch, moved):
    """Claim 21 on CUDA comes from the GPU myths record: stated only where one is, holding
    when grad changed the bits in every seed, failing when a seed kept them."""
    torch = pytest.importorskip("torch")
    from fpexplore.lessons._gpu import myth_record
    from fpexplore.lessons.train_vs_eval import modes as _train_modes

    row = {"values": 4096, "no_grad_vs_inference": 0, "max_abs_diff": 7e-7}
    rec = {
        "card": "NVIDIA H200",
        "torch": "2.11.0+cu130",
        "path": "h200.json",
        "autograd_modes": [
            {**row, "seed": s, "grad_vs_no_grad": moved if s else 2700} for s in range(3)
        ],
    }
    monkeypatch.setattr(myth_record, "recorded", lambda directory=None: rec)
    _, claims, fields = _train_modes.torch_part(torch, 0, 3)
    claim = claims["transformer_grad_changes_bits_cuda"]
    assert claim.holds is (moved > 0) and "NVIDIA H200" in claim.text
    assert fields["autograd_modes"].gpu_rows == rec["autograd_modes"]
    assert claims["transformer_grad_changes_bits"].holds  # this CPU, live
    monkeypatch.setattr(myth_record, "recorded", lambda directory=None: None)
    _, claims, fields = _train_modes.torch_part(torch, 0, 3)
    assert "transformer_grad_changes_bits_cuda" not in claims
    assert myth_record.COMMAND in fields["autograd_modes"].gpu_where


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_each_row_shows_the_error_against_its_own_modes_truth(mode):
    """Whichever mode's truth the comparison leads with, an eval() row is read against the
    eval-mode truth and a train() row against the train-mode one: no "sign flip", and the
    table's number is the one the claim states."""
    c = fpexplore.run("train_vs_eval", mode=mode, runs=5, batch=8)
    rows = {r["implementation"]: r for r in c.rows()}
    page = c._repr_html_()
    assert "sign flip" not in page and "0 vs ≠0" not in page
    # a correct result is never drawn as a failure: each BatchNorm row with torch's settings
    # is within the layer's rounding bound, and coloured so; Keras's defaults are not
    from fpexplore.result.html import ulp_class

    classes = {o.implementation: ulp_class(o) for o in c.outcomes if o.error is not None}
    for name, cls in classes.items():
        if "BatchNorm1d" in name or "matched" in name:
            assert cls in ("exact", "correct", "faithful", "bounded"), (name, cls)
        if "defaults" in name:
            assert cls == "many", (name, cls)
    shown = rows["torch BatchNorm1d eval()"]["ulp error"]
    assert (
        shown.startswith("+")
        and f"within {shown[1:]} ULP" in c.claims["bn_eval_uses_running_stats"].text
    )
