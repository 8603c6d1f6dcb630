"""Myths, measured: every verdict is computed from a lesson run, never typed.

Each judge gets a stand-in comparison of its lesson (the outcome names and data it reads) with all
its claims holding, then all failing, then not checked, then absent: the verdict must follow the
claims. A judge that returned a fixed verdict fails here.
"""

from dataclasses import replace

import numpy as np
import pytest

from fpexplore import myths
from fpexplore.result import Claim, Comparison, Outcome

DATA = {
    "djl_normalization": {"classic": {"torch": [-1.26], "numpy": [-1.41], "DJL": [-1.41]}},
    "tf_vs_torch": {
        "seed_gradients": {"torch": 192.0, "tensorflow": 192.0, "exact": 192},
        "seed_example": {"torch": [0.09, 0.24, 0.67], "tensorflow": [0.09, 0.24, 0.67]},
        "values": {k: [[1.5, 2.5], [3.5, 4.5]] for k in ("tf eager", "tf.function", "tf XLA")},
        "torch_keras_diff_by_step": [1e-8, 3e-8],
        "length": 2,
        "points": [1.0, -1.0],
        "bits_differ": 3,
        "compared": 48,
        "worst_u": {"torch": 1e-7, "tf": 2e-7},
        "tolerances": {
            "float32": {"numpy pinv[2,2]": 1e6, "torch pinv[2,2]": 1e6, "tf pinv[2,2]": 0.0}
        },
    },
    "rng_seeds": {
        "djl_layers": {
            "dropout_same": 60,
            "dropout_total": 60,
            "weights": 10,
            "weights_equal_torch": 0,
            "outside_torch_bound": 5,
            "linear": {"sigma": 0.17, "torch_bound": 0.125},
        }
    },
    "train_vs_eval": {"autograd_modes": {"same": 3, "seeds": 3}, "rrelu_train_distinct": 5},
    "summation_order": {
        "layout": {
            "offset_same": 9,
            "offset_tried": 9,
            "gelu_strided_differ": 2,
            "gelu_strided_n": 8,
        },
        "residual": {"differ": 4, "total": 16, "worst_of_bound": 0.03},
    },
    "gpu_determinism": {
        "rows": [
            {"op": op, "case": "c", "output": "result", "config": config, "distinct": 1}
            | {"digests": ["ab12"], "raised": None}
            for op in ("index_add_", "sum (control)", "conv2d")
            for config in ("default", "cudnn.deterministic")
        ]
    },
    "cpu_vs_accelerator": {
        "drift": {
            "cpu (live, here)": [0.0, 2e-6],
            "NVIDIA H200 (recorded), torch default": [0, 3e-6],
        },
        "conv_error": {"NVIDIA (recorded), torch default": 3e-4, "NVIDIA, fp32 (TF32 off)": 4e-7},
        "settings": {"chain_steps": 100},
    },
}


class StandIn(Comparison):
    """A comparison whose every named outcome exists (a small float32 array)."""

    def outcome(self, implementation):
        found = [o for o in self.outcomes if o.implementation == implementation]
        if found:
            return found[0]
        return Outcome(implementation, "test", value=np.array([0.25, 0.5], np.float32))


def _stand_in(myth, holds, also=()):
    claims = {}
    # the claim keys a judge reads: a rule's keys, or the string constants of its code
    consts = [k for m in (myth, *also) for k in _judge_keys(m.judge)]
    keys = [k for k in consts if isinstance(k, str) and k.isidentifier()]
    for key in keys:
        claims[key] = Claim(f"claim {key}", holds)
    outcomes = (
        Outcome("relu of x — cpu", "test", value="0 of 10 differ from max(x, 0)"),
        Outcome("conv — gpu", "test", kind="recorded", value="varies; fixed by det_algos"),
    )
    return StandIn(
        myth.lesson, dict(myth.params), None, outcomes, claims, DATA.get(myth.lesson, {})
    )


def _judge_keys(judge):
    if hasattr(judge, "keys"):  # a `_Rule`: its claims, and what its number reads
        return [*judge.keys, *_all_constants(judge.number.__code__)]
    return list(_all_constants(judge.__code__))


def _all_constants(code):
    for c in code.co_consts:
        if hasattr(c, "co_consts"):
            yield from _all_constants(c)
        elif isinstance(c, tuple):
            yield from c
        else:
            yield c


JUDGED = [m for m in myths.MYTHS if m.judge is not None]


@pytest.mark.parametrize("myth", JUDGED, ids=lambda m: f"myth{m.number}")
def test_verdict_follows_the_claims(myth):
    yes = myths.judge(myth, _stand_in(myth, True))
    no = myths.judge(myth, _stand_in(myth, False))
    assert yes.verdict in myths.VERDICTS[:3] and no.verdict in myths.VERDICTS[:3]
    assert yes.verdict != no.verdict, (yes, no)
    assert yes.number and yes.why
    unchecked = _stand_in(myth, True)
    unchecked = replace(
        unchecked, claims={k: Claim(c.text, None) for k, c in unchecked.claims.items()}
    )
    assert myths.judge(myth, unchecked).verdict == myths.NOT_MEASURED
    assert (
        myths.judge(myth, replace(_stand_in(myth, True), claims={})).verdict == myths.NOT_MEASURED
    )


def test_every_claim_to_check_is_listed_once_in_order():
    assert [m.number for m in myths.MYTHS] == list(range(1, 29))
    assert all(m.notebook.endswith(".ipynb") for m in myths.MYTHS)


def test_lessons_not_written_are_marked(monkeypatch):
    ran = []

    def fake_run(lesson, **params):
        ran.append(lesson)
        same = [m for m in JUDGED if m.lesson == lesson]
        return _stand_in(same[0], True, also=same[1:])

    monkeypatch.setattr(myths, "_catalog", lambda: {"train_vs_eval": object()})
    verdicts = myths.judge_all(run=fake_run)
    assert ran == ["train_vs_eval"]  # one run for both of its myths
    by = {v.myth.number: v for v in verdicts}
    assert by[6].verdict == myths.FAILS and by[7].verdict == myths.DEPENDS
    assert by[16].verdict == myths.NOT_MEASURED and "not written yet" in by[16].why
    page = myths.verdict_table(verdicts)
    assert page.count("<tr>") == len(myths.MYTHS) + 1 and "03_train_vs_eval.ipynb#" in page


def test_cudnn_flag_judge_reads_the_bits_of_non_cudnn_ops():
    """Myth 4: same bits with the flag on and off on the non-cuDNN ops (conv2d is left out,
    and so is an op that varies run to run); one op whose bits move makes it "depends"."""
    myth = next(m for m in myths.MYTHS if m.number == 4)
    comp = _stand_in(myth, True)
    assert myths.judge(myth, comp).verdict == myths.FAILS
    assert myths.judge(myth, comp).number.startswith("2 of 2 ")
    rows = [dict(r) for r in comp.data["rows"]]
    moved = next(r for r in rows if r["op"] == "sum (control)" and r["config"] != "default")
    moved["digests"] = ["cd34"]
    verdict = myths.judge(myth, replace(comp, data={"rows": rows}))
    assert verdict.verdict == myths.DEPENDS and verdict.number.startswith("1 of 2 ")
    for r in rows:
        r["distinct"] = 3  # everything varies: nothing to compare
    assert myths.judge(myth, replace(comp, data={"rows": rows})).verdict == myths.NOT_MEASURED
