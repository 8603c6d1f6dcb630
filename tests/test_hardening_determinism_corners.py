"""Corners of check-determinism, the exact conv2d, DJL's normalize, the JVM client, the order
emulators and the GPU records: bad input gets a package error naming it, never a traceback."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from fpexplore import backends, cli, determinism_check, orders, records, truth
from fpexplore.errors import FpexploreError, InvalidInput, InvalidParameter, RecordError

torch = backends.load("torch")


def _script(tmp_path, text: str, name: str = "model.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# 1. every flag set raising is no verdict ------------------------------------------------------


def test_every_flag_set_raising_is_reported_not_called_deterministic(tmp_path, capsys):
    def forward():
        raise RuntimeError("boom")

    r = determinism_check.check(forward, runs=2, flag_sets=["default", "threads=1"])
    assert not r.ran() and not r.deterministic_sets()
    assert "no flag set ran" in r.verdict() and "RuntimeError: boom" in r.verdict()
    assert "deterministic under" not in r.verdict()
    target = _script(tmp_path, "def forward():\n    raise RuntimeError('boom')\n")
    code = cli.main(["check-determinism", target, "--runs", "2", "--flags", "default"])
    out = capsys.readouterr().out
    assert code == 1
    assert "boom" in out and "deterministic under" not in out


def test_keyword_only_device_and_a_leaf_output_run(tmp_path):
    kw = _script(
        tmp_path, "import torch\ndef forward(*, device):\n    return torch.ones(3, device=device)\n"
    )
    r = determinism_check.check(kw, runs=2, flag_sets=["default"])
    assert r.ran() and r.result("default").deterministic
    leaf = _script(
        tmp_path,
        "import torch\ndef forward():\n    return torch.ones(3, requires_grad=True)\n",
        "leaf.py",
    )
    r = determinism_check.check(leaf, runs=2, flag_sets=["default"], backward=True)
    assert r.ran() and r.result("default").deterministic


def test_some_flag_sets_raising_are_named_in_the_verdict():
    def forward():
        if torch.get_num_threads() == 1:
            raise RuntimeError("no single thread")
        return torch.ones(2)

    if torch.get_num_threads() == 1:
        pytest.skip("needs more than one torch thread")
    r = determinism_check.check(forward, runs=2, flag_sets=["default", "threads=1"])
    assert r.ran()
    assert "1 of 2" in r.verdict() and "raised under: threads=1" in r.verdict()


# 2. targets that cannot be loaded ---------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "def forward(:\n",  # SyntaxError
        "x = 1\x00\ndef forward():\n    pass\n",  # NUL byte
        "raise RuntimeError('at import')\n",
        "import sys\nsys.exit(3)\n",
    ],
)
def test_a_broken_script_is_a_package_error_naming_it(tmp_path, capsys, source):
    target = _script(tmp_path, source)
    with pytest.raises(InvalidParameter, match="'target'") as info:
        determinism_check.load_target(target)
    assert "model.py" in str(info.value)
    assert cli.main(["check-determinism", target]) == 2
    assert capsys.readouterr().err.startswith("fpexplore: error:")


@pytest.mark.parametrize("spec", [":forward", ".rel:f", "..pkg.mod:f"])
def test_empty_or_relative_module_is_a_package_error(capsys, spec):
    with pytest.raises(InvalidParameter, match="absolute module name"):
        determinism_check.load_target(spec)
    assert cli.main(["check-determinism", spec]) == 2
    assert "'target'" in capsys.readouterr().err


def test_a_module_raising_at_import_is_a_package_error(tmp_path, monkeypatch):
    (tmp_path / "fpx_raises_at_import.py").write_text("raise RuntimeError('at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InvalidParameter, match="RuntimeError: at import"):
        determinism_check.load_target("fpx_raises_at_import:forward")


# 3. meta and sparse ----------------------------------------------------------------------------


def test_meta_device_is_refused_up_front(capsys):
    with pytest.raises(InvalidParameter, match=r"'device'.*meta tensors have no values"):
        determinism_check.check(determinism_check.threads_sum, runs=2, device="meta")
    args = ["check-determinism", "fpexplore.determinism_check:threads_sum", "--device", "meta"]
    assert cli.main(args) == 2
    assert "'device'" in capsys.readouterr().err

    def meta_out():
        return torch.empty(3, device="meta")

    with pytest.raises(InvalidParameter, match="meta tensors have none"):
        determinism_check.check(meta_out, runs=2, flag_sets=["default"])


@pytest.mark.filterwarnings("ignore:Sparse:UserWarning")
def test_sparse_outputs_hash_through_their_coalesced_values():
    def coo():  # duplicate entries: coalescing sums them
        return torch.sparse_coo_tensor([[0, 2, 0]], [1.0, 2.0, 3.0], (4,))

    def csr():
        return torch.eye(3).to_sparse_csr()

    for fn in (coo, csr):
        r = determinism_check.check(fn, runs=2, flag_sets=["default"])
        assert r.result("default").deterministic
    same = torch.sparse_coo_tensor([[0, 2]], [4.0, 2.0], (4,))
    other = torch.sparse_coo_tensor([[0, 2]], [4.0, 2.5], (4,))
    h = determinism_check._digest
    assert h(torch, [coo()]) == h(torch, [same]) != h(torch, [other])
    assert h(torch, [csr()]) == h(torch, [torch.eye(3).to_sparse()])


# 4. device and seed --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"device": None}, "device"),
        ({"device": ""}, "device"),
        ({"device": 0}, "device"),
        ({"seed": 1.5}, "seed"),
        ({"seed": True}, "seed"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**64}, "seed"),
    ],
)
def test_device_and_seed_are_validated(kw, name):
    with pytest.raises(InvalidParameter, match=f"'{name}'"):
        determinism_check.check(determinism_check.threads_sum, runs=2, **kw)


# 5. a report read back -----------------------------------------------------------------------


def test_from_dict_names_the_missing_field():
    with pytest.raises(RecordError, match="'target'"):
        determinism_check.DeterminismReport.from_dict({})
    good = determinism_check.check(
        determinism_check.threads_sum, runs=2, flag_sets=["default"]
    ).to_dict()
    back = determinism_check.DeterminismReport.from_dict(json.loads(json.dumps(good)))
    assert back.result("default").deterministic
    bad = dict(good, results=[{"name": "default"}])
    with pytest.raises(RecordError, match=r"results\[0\].*'flags'"):
        determinism_check.DeterminismReport.from_dict(bad)
    with pytest.raises(RecordError, match="'results'"):
        determinism_check.DeterminismReport.from_dict(dict(good, results=None))
    with pytest.raises(RecordError):
        determinism_check.DeterminismReport.from_dict([])


# 6. smaller corners ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [{"stride": True}, {"groups": True}, {"padding": False}, {"dilation": (1, True)}],
)
def test_conv2d_refuses_bools_for_geometry(kw):
    x = np.ones((1, 1, 3, 3), np.float32)
    w = np.ones((1, 1, 1, 1), np.float32)
    assert truth.conv2d(x, w).shape == (1, 1, 3, 3)
    with pytest.raises(InvalidParameter, match=f"'{next(iter(kw))}'"):
        truth.conv2d(x, w, **kw)


@pytest.mark.parametrize(
    ("mean", "std", "name"),
    [
        ("abc", [1.0, 1.0, 1.0], "mean"),
        (None, [1.0, 1.0, 1.0], "mean"),
        ([0.5, 0.5, math.nan], [1.0, 1.0, 1.0], "mean"),
        ([0.5, 0.5, 0.5], [1.0, 0.0, 1.0], "std"),
        ([0.5, 0.5, 0.5], [1.0, 1.0], "std"),
        ([0.5, 0.5, 0.5], [1.0, 1.0, 10**400], "std"),
    ],
)
def test_djl_normalize_validates_before_calling_java(monkeypatch, mean, std, name):
    from fpexplore.backends import djl
    from fpexplore.jvm import client

    def no_worker(*a, **k):
        raise AssertionError("the worker was contacted")

    monkeypatch.setattr(client, "worker", no_worker)
    monkeypatch.setattr(djl, "_array", no_worker)
    t = np.zeros((3, 2, 2), np.float32)
    with pytest.raises(InvalidParameter, match=f"'{name}'"):
        djl.normalize(t, mean, std)


@pytest.mark.parametrize(
    "timeout", [math.nan, math.inf, 0, -1.0, True, "5", pytest.param(10**400, id="10**400")]
)
def test_jvm_call_validates_timeout_before_the_worker(monkeypatch, timeout):
    from fpexplore.jvm import client

    def no_worker(*a, **k):
        raise AssertionError("the worker was contacted")

    monkeypatch.setattr(client, "worker", no_worker)
    with pytest.raises(InvalidParameter, match="'timeout'"):
        client.call("info", timeout=timeout)


def test_orders_refuse_ragged_and_string_input():
    with pytest.raises(InvalidInput, match="'x'"):
        orders.emulate([[1.0], [1.0, 2.0]], "sequential")
    with pytest.raises(InvalidInput, match="'x'"):
        orders.emulate(["a", "b"], "numpy")
    with pytest.raises(FpexploreError, match="'values'"):
        orders.tree(3, "sorted", values=["a", "b", "c"])
    with pytest.raises(FpexploreError, match="'values'"):
        orders.tree(3, "sorted", values=[[1.0], [1.0, 2.0], [3.0]])
    assert orders.tree(2, "sorted", values=[2.0, 1.0]) is not None


@pytest.fixture()
def record() -> dict:
    return json.loads(records.find().read_text())


@pytest.mark.parametrize("value", [pytest.param(10**400, id="10**400"), math.nan, math.inf, 1e300])
def test_a_recipe_value_out_of_range_is_a_record_error(record, value):
    case = record["experiments"]["sum"]["cases"][0]
    assert case["input"]["generator"] == "np.full" and case["input"]["dtype"] == "float32"
    case["input"]["value"] = value
    with pytest.raises(RecordError, match=r"cases\[0\]\.input"):
        records.validate(record)


def test_summation_order_degrades_on_an_overflowing_recipe(record, tmp_path, monkeypatch):
    from fpexplore.lessons.summation_order import recorded

    recipe = {"generator": "np.full", "n": 4, "value": 10**400, "dtype": "float32"}
    assert recorded._recipe_digest(recipe) is None
    case = record["experiments"]["sum"]["cases"][0]
    case["input"]["value"] = 10**400
    record["provenance"]["date"] = "2999-01-01T00:00:00Z"  # the newest
    (tmp_path / "overflow.json").write_text(json.dumps(record))
    monkeypatch.setattr(records, "gpu_dir", lambda: tmp_path)
    x = np.full(case["input"]["n"], np.float32(1e-4))
    with pytest.warns(records.RecordWarning, match="overflow.json"):
        out = recorded.outcome("recorded", x, truth.sum(x))
    assert out.kind == "recorded"


def test_a_long_value_in_a_message_keeps_its_start_and_its_end():
    from fpexplore.errors import shown

    path = "/tmp/" + "deep/" * 30 + "model.py"
    text = shown(path)
    assert text.startswith("'/tmp/deep/") and text.endswith(f"model.py' ({len(path) + 2} chars)")
    assert len(text) < 100
    assert shown("short") == "'short'"
