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
    assert "'--size'" in capsys.readouterr().err  # named as it is typed


class _Node:
    """An autograd node's Python wrapper as torch hands it out: one live wrapper per node,
    made anew once the last reference is gone (so a freed wrapper's id can come back)."""

    def __init__(self, graph: _Graph, key: int) -> None:
        self.graph, self.key = graph, key
        self.variable = graph.leaves.get(key)

    @property
    def next_functions(self) -> tuple:
        return tuple((self.graph.node(k), 0) for k in self.graph.edges.get(self.key, ()))


class _Graph:
    def __init__(self, edges: dict, leaves: dict) -> None:
        import weakref

        self.edges, self.leaves = edges, leaves
        self._live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

    def node(self, key: int) -> _Node:
        found = self._live.get(key)
        if found is None:
            found = _Node(self, key)
            self._live[key] = found
        return found


def test_leaves_are_found_when_wrapper_ids_come_back():
    # a chain 0 -> 1 -> ... -> 199, each node with a leaf of its own, plus diamonds (node i
    # also reaches i + 2) so that a node is reached twice: every leaf once, none skipped
    n = 200
    edges = {i: [j for j in (i + 1, i + 2) if j < n] for i in range(n)}
    leaves = {i: f"leaf {i}" for i in range(n)}
    graph = _Graph(edges, leaves)

    class Out:
        grad_fn = graph.node(0)

    found = determinism_check._leaves(None, Out())
    assert sorted(found) == sorted(leaves.values())
    assert len(found) == n
