"""check-determinism: hashes per flag set, which sets agree, what they cost; CLI faces."""

from __future__ import annotations

import json

import pytest

from fpexplore import backends, cli, determinism_check
from fpexplore.errors import InvalidParameter

backends.load("torch")  # a set-up framework that is missing fails the tests


def test_threads_change_bits_but_each_is_deterministic():
    r = determinism_check.check(
        determinism_check.threads_sum, runs=2, flag_sets=["default", "threads=1"]
    )
    assert [x.name for x in r.results] == ["default", "threads=1"]
    assert all(x.deterministic for x in r.results)
    assert r.result("threads=1").same_as_default is False  # another thread count, other bits
    assert r.result("default").relative_time == 1.0
    assert "deterministic under every flag set" in r.verdict()


def test_nondeterministic_target_is_reported(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(
        "import torch\n"
        "def forward():\n"
        "    return torch.rand(4)\n"  # a fresh draw per run when torch is not seeded
    )
    r = determinism_check.check(f"{script}:forward", runs=3, flag_sets=["default"], seed=None)
    assert not r.result("default").deterministic and r.result("default").distinct == 4
    assert "NOT deterministic" in r.verdict()
    seeded = determinism_check.check(str(script), runs=3, flag_sets=["default"])
    assert seeded.result("default").deterministic


def test_backward_hashes_gradients():
    r = determinism_check.check(
        determinism_check.example, runs=2, flag_sets=["default"], backward=True
    )
    assert r.backward and r.result("default").deterministic


def test_bad_input_names_the_argument():
    with pytest.raises(InvalidParameter, match="'runs'"):
        determinism_check.check(determinism_check.threads_sum, runs=1)
    with pytest.raises(InvalidParameter, match="'flag_sets'"):
        determinism_check.check(determinism_check.threads_sum, flag_sets=["fast"])
    with pytest.raises(InvalidParameter, match="'target'"):
        determinism_check.check("no_such_module_xyz:f")


def test_cli_faces(capsys):
    assert (
        cli.main(
            [
                "check-determinism",
                "fpexplore.determinism_check:threads_sum",
                "--runs",
                "2",
                "--flags",
                "default",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["results"][0]["deterministic"] is True
    assert cli.main(["tolerance", "dot", "--size", "100"]) == 0
    assert "rtol=" in capsys.readouterr().out
    assert cli.main(["diverge", "mlp", "--plant", "dropout"]) == 0
    assert "first divergence at layer 'drop'" in capsys.readouterr().out
    assert cli.main(["tolerance", "dot", "--size", "0"]) == 2
    assert "'size'" in capsys.readouterr().err
