"""The custom autograd op (`tf_vs_torch.custom_op`): its claims follow the gradients given,
over several seeds and the breaking inputs."""

import numpy as np
import pytest

from fpexplore.lessons.tf_vs_torch import custom_op as co

torch = pytest.importorskip("torch")
SEEDS = (0, 1)


def _inputs():
    return [co.inputs(s)[:64].copy() for s in SEEDS]


def _with_edges(xs):
    return [np.concatenate([x, np.array(co.EDGES, np.float32)]) for x in xs]


def _exact_rounded(xs):
    return [co.exact_derivative(x).astype(np.float32) for x in xs]


def test_identical_gradients_do_not_differ():
    xs = _with_edges(_inputs())
    g = _exact_rounded(xs)
    claims, data = co.decide_claims({"torch": g, "hand-written": g}, xs)
    assert claims["custom_backward_differs"].holds is False
    assert claims["custom_backward_close"].holds is True
    assert claims["custom_backward_overflows"].holds is False  # nothing zeroed
    assert data.differ == [0, 0]


def test_the_live_gradients_differ_stay_close_and_overflow():
    xs = _with_edges(_inputs())
    got = {"torch": [], "hand-written": []}
    for x in xs:
        for k, v in co.gradients(torch, x).items():
            got[k].append(v)
    claims, data = co.decide_claims(got, xs)
    assert all(c.holds for c in claims.values()), claims
    assert data.edge_ulp["hand-written"][-100.0] > co.ROUNDINGS


def test_a_gradient_off_by_more_than_the_bound_fails():
    xs = _with_edges(_inputs())
    g = _exact_rounded(xs)
    off = [v.copy() for v in g]
    off[0][3] = np.float32(off[0][3] * (1 + 2.0**-19))  # 16 ULP off
    claims, _ = co.decide_claims({"torch": g, "hand-written": off}, xs)
    assert claims["custom_backward_close"].holds is False


def test_nan_in_must_give_nan_out():
    xs = _with_edges(_inputs())
    g = _exact_rounded(xs)
    bad = [v.copy() for v in g]
    bad[1][np.isnan(xs[1])] = 0.5
    claims, _ = co.decide_claims({"torch": g, "hand-written": bad}, xs)
    assert claims["custom_backward_close"].holds is False


def test_signed_zero_and_subnormals_have_derivative_one_half():
    x = np.array([-0.0, 0.0, 1e-40, -1e-40], np.float32)
    assert (co.exact_derivative(x) == 0.5).all()
    g = co.gradients(torch, x)
    assert (g["torch"] == 0.5).all() and (g["hand-written"] == 0.5).all()
