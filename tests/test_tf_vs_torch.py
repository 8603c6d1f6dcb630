"""TensorFlow vs PyTorch lesson: every section's claims hold, its references are right, a
missing framework degrades to Unavailable rows, and the CLI runs it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fpexplore import backends
from fpexplore.errors import BackendUnavailable, InvalidParameter
from fpexplore.lessons.tf_vs_torch import LESSON, SECTIONS, adam, lstm_reference

FAST = {"lstm": {"length": 30}, "adam": {"length": 20}, "autograd": {"length": 50}}
_RUNS: dict[tuple, object] = {}


def run(**params):
    """LESSON.run, each distinct set of parameters once per session."""
    key = tuple(sorted(params.items()))
    if key not in _RUNS:
        _RUNS[key] = LESSON.run(**params)
    return _RUNS[key]


@pytest.fixture(scope="module")
def frameworks():
    from fpexplore.lessons.tf_vs_torch import frameworks as fw

    return fw.load()


@pytest.mark.parametrize("op", list(SECTIONS))
def test_every_section_checks_its_claims(frameworks, op):
    c = run(op=op, **FAST.get(op, {}))
    failed = {k: v.text for k, v in c.claims.items() if not v.holds}
    assert not failed, failed
    assert c.truth is not None and c.outcomes and all(o.ran for o in c.outcomes)
    if op == "softmax":  # the environment is stated once, by the first section
        env = c.observations["versions_threads"].value
        assert env["torch"] and env["tensorflow"] and env["torch threads"] >= 1
    else:
        assert "versions_threads" not in c.observations
    assert all(o.version for o in c.outcomes if o.kind == "framework")  # each names its own


@pytest.mark.parametrize(
    "params",
    [
        {"op": "softmax", "dtype": "bfloat16", "size": 64},
        {"op": "log_softmax", "dtype": "float16", "size": 64, "seed": 3},
        {"op": "conv_same", "size": 9},
        {"op": "layer_norm", "size": 7, "seed": 5},
        {"op": "reduce_sum", "size": 40_000, "seed": 2},
        {"op": "cross_entropy", "size": 2, "seed": 1},
        {"op": "adam", "size": 1, "length": 5},
        {"op": "lstm", "length": 1},
        {"op": "graph_mode", "size": 33, "seed": 9},
    ],
)
def test_claims_hold_away_from_the_defaults(frameworks, params):
    c = LESSON.run(**params)
    failed = {k: v.text for k, v in c.claims.items() if not v.holds}
    assert not failed, failed


def test_agree_switch_shows_the_fixed_rows(frameworks):
    plain = LESSON.run(op="gelu")
    fixed = LESSON.run(op="gelu", agree=True)
    assert "keras.ops.gelu(x)" in [o.implementation for o in plain.outcomes]
    names = [o.implementation for o in fixed.outcomes]
    assert "keras.ops.gelu(x, approximate=False)" in names
    err = {o.implementation: o.error for o in plain.outcomes}
    # in ULPs of the largest |GELU|: the tanh default is a formula gap, torch's erf form rounding
    assert err["keras.ops.gelu(x)"].max_abs_ulp > 100 > 4 > err["torch F.gelu(x)"].max_abs_ulp
    assert plain.claims.keys() == fixed.claims.keys()
    small = LESSON.run(op="gelu", size=8)  # size points: 7 on [-6, 6], then x = 1
    assert {np.shape(o.value) for o in small.outcomes} == {(8,)}


def test_seed_gradient_is_exactly_192(frameworks):
    c = run(op="autograd", **FAST["autograd"])
    g = c.data.seed_gradients
    assert g.torch == g.tensorflow == 192.0 == float(g.exact)
    assert str(g) == "torch 192, TensorFlow 192, exact 6·x⁵ = 192"  # notebook 06 prints it


def test_lstm_reference_matches_torch_in_float64(frameworks):
    torch = frameworks.torch
    g = np.random.default_rng(1)
    x = g.standard_normal((6, 3)).astype(np.float32)
    torch.manual_seed(0)
    net = torch.nn.LSTM(3, 4, batch_first=True).double()
    w = {k: v.detach().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    net.load_state_dict({k: torch.from_numpy(v.astype(np.float64)) for k, v in w.items()})
    xt = torch.from_numpy(x.astype(np.float64))[None].requires_grad_(True)
    out, _ = net(xt)
    out[0, -1].sum().backward()
    h, d = lstm_reference.reference(
        x, w["weight_ih_l0"], w["weight_hh_l0"], w["bias_ih_l0"], w["bias_hh_l0"]
    )
    assert h.digits > 15 and d.digits > 15
    np.testing.assert_allclose(h.split()[0], out[0].detach().numpy(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(d.split()[0], xt.grad[0].numpy(), rtol=0, atol=1e-14)


def test_adam_reference_matches_torch_in_float64(frameworks):
    torch = frameworks.torch
    w0 = np.float32([0.5, -1.25, 2.0])
    grads = adam._gradients(0, 3, 5)
    p = torch.nn.Parameter(torch.from_numpy(w0.astype(np.float64)))
    opt = torch.optim.Adam([p], lr=adam.LR, betas=(adam.BETA1, adam.BETA2))
    for gr in grads:
        p.grad = torch.from_numpy(gr.astype(np.float64))
        opt.step()
    t = adam.reference(w0, grads, 1e-8, "torch")
    np.testing.assert_allclose(t.split()[0], p.detach().numpy(), rtol=1e-13)
    # epsilon-hat = eps·sqrt(1 - beta2**t) at one step: the two placements are one function
    one_t = adam.reference(w0, grads[:1], 1e-8, "torch").split()[0]
    one_k = adam.reference(w0, grads[:1], 1e-8 * np.sqrt(1 - adam.BETA2), "keras").split()[0]
    np.testing.assert_allclose(one_t, one_k, rtol=1e-15)


def test_the_fix_rows_say_how_often_they_round(frameworks):
    """The float64 fix rounds once to float32, and twice (through float32) to float16 and
    bfloat16: the rows and claims say so, never "round once" where the code rounds twice."""
    for dtype, phrase in (("float32", "rounded once"), ("bfloat16", "then to bfloat16")):
        c = run(op="softmax", dtype=dtype, size=16)
        text = " ".join(
            [*(o.implementation for o in c.outcomes), c.claims["softmax.fix_agrees"].text]
        )
        assert phrase in text
        assert ("rounded once" in text) == (dtype == "float32")


def test_adam_states_one_measure_once(frameworks):
    """Adam's rows, its data and its claims count the same errors in the same unit (ULPs of the
    weight's largest size along the way): the claim's number is the table's."""
    c = run(op="adam", **FAST["adam"])
    n = FAST["adam"]["length"]
    rows = {o.implementation: o for o in c.outcomes}
    torch_row = rows[f"torch.optim.Adam, {n} step(s)"]
    assert torch_row.error.at == "given" and "largest size" in torch_row.note
    shown = torch_row.error.max_abs_ulp
    assert c.data.max_abs_ulp[n]["torch"] == shown
    assert f"of torch's exact Adam ({shown:.3g})" in c.claims["adam.fix_many_steps"].text


def test_missing_tensorflow_gives_unavailable_rows(monkeypatch):
    real = backends.load

    def load(name):
        if name == "tensorflow":
            raise BackendUnavailable(name, "not installed here.", "make test")
        return real(name)

    monkeypatch.setattr(backends, "load", load)
    c = LESSON.run(op="lstm", length=5)
    assert c.outcomes and not any(o.ran for o in c.outcomes)
    assert all("make test" in o.unavailable for o in c.outcomes)
    assert c.claims and all(v.holds is None for v in c.claims.values())
    assert "not checked" in c.table()
    json.loads(c.to_json())


def test_bad_parameters_are_named():
    with pytest.raises(InvalidParameter, match=r"'dtype'.*'lstm'"):
        LESSON.run(op="lstm", dtype="bfloat16")
    with pytest.raises(InvalidParameter, match=r"'size'.*conv_same"):
        LESSON.run(op="conv_same", size=3)
    with pytest.raises(InvalidParameter, match="'op'"):
        LESSON.run(op="matmul")
    with pytest.raises(InvalidParameter, match="'length'"):
        LESSON.run(op="lstm", length=1001)


def test_cli_runs_a_section_as_json(frameworks, capsys):
    from fpexplore import cli

    assert cli.main(["run", "tf_vs_torch", "--op", "autograd", "--length", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["params"]["op"] == "autograd" and out["params"]["length"] == 5
    assert all(c["holds"] for c in out["claims"].values())


@pytest.mark.parametrize(
    "params",
    [{"op": "lstm", **FAST["lstm"]}, {"op": "autograd", **FAST["autograd"]}, {"op": "softmax"}],
)
def test_figures_draw(frameworks, params):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = run(**params)
    fig = LESSON.figure(c)
    assert fig.axes and all(ax.has_data() for ax in fig.axes)
    plt.close(fig)


@pytest.mark.slow
def test_torch_compile_row_is_measured_or_says_why(frameworks):
    """torch.compile builds C++ on first use (tens of seconds): measured, or Unavailable."""
    c = LESSON.run(op="graph_mode", torch_compile=True, size=64)
    row = c.outcome("torch.compile")
    if row.ran:
        assert c.holds("graph_mode.torch_compile") and row.error.max_abs_ulp <= 4
    else:
        assert "torch.compile did not run here" in row.unavailable


@pytest.mark.parametrize("op", ["control_flow", "higher_order", "tolerances"])
def test_article_sections_hold(op):
    """Claims 26-28: control flow under a tape, higher derivatives, near-singular cut-offs."""
    c = run(op=op, seed=3)
    if backends.missing("tensorflow") or backends.missing("torch"):
        assert all(cl.holds is None for cl in c.claims.values())
        return
    c.check()
    assert c.claims and all(cl.holds for cl in c.claims.values())


@pytest.mark.parametrize("op", ["layer_norm", "conv_same", "autograd", "lstm"])
def test_rows_within_their_rounding_bound_are_not_drawn_as_failures(frameworks, op):
    """The rows the section's claims find within its rounding bound carry that bound, and are
    coloured as correct; a row of another computation (a wrong port) stays red."""
    from fpexplore.result.html import ulp_class

    c = run(op=op, **FAST.get(op, {}))
    classes = {o.implementation: ulp_class(o) for o in c.outcomes if o.error is not None}
    good = [n for n, cls in classes.items() if cls in ("exact", "correct", "faithful", "bounded")]
    assert good, classes
    from fpexplore.result.html import _bar

    for o in c.outcomes:
        if o.error is not None and classes[o.implementation] == "many":
            assert o.within_bound is not True, o.implementation
        if o.within_bound:  # a count, never an event such as "sign flip"
            assert _bar(o)["text"].startswith(("max", "+", "-")), (o.implementation, _bar(o))
