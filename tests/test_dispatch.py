"""The dispatch switches and paths: TensorFlow's oneDNN rule, ATen's capability, the RNG
rebuild's choice of path, checked against real torch under each capability."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fpexplore.dispatch import SWITCHES, applicable, cpu_flags, onednn_state, switch
from fpexplore.errors import InvalidParameter, NotEmulated
from fpexplore.rng.torch_cpu import path_for


def test_onednn_rule_follows_the_cpu_and_the_switch():
    old = frozenset({"avx2", "fma", "avx512f"})
    for flag in ("avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile"):
        on, why = onednn_state({}, old | {flag})
        assert on and flag.upper() in why
    on, why = onednn_state({}, old)
    assert not on and "none of" in why
    assert onednn_state({"TF_ENABLE_ONEDNN_OPTS": "0"}, old | {"avx512_vnni"}) == (
        False,
        "oneDNN is off: TF_ENABLE_ONEDNN_OPTS=0",
    )
    assert onednn_state({"TF_ENABLE_ONEDNN_OPTS": "1"}, old)[0] is True


def test_switches_are_named_and_scoped():
    assert switch("aten-default").env == {"ATEN_CPU_CAPABILITY": "default"}
    with pytest.raises(InvalidParameter, match="switch"):
        switch("nope")
    assert applicable(switch("aten-avx512"), frozenset()) is False
    assert applicable(switch("aten-default"), frozenset()) is True  # caps apply everywhere
    assert len({s.name for s in SWITCHES}) == len(SWITCHES)


def test_rebuild_path_by_capability():
    assert path_for("AVX512", "x86_64") == path_for("AVX2", "x86_64") == "avx2"
    assert path_for("DEFAULT", "x86_64") == "default"
    with pytest.raises(NotEmulated, match="aarch64"):
        path_for("DEFAULT", "aarch64")
    with pytest.raises(NotEmulated):
        path_for("SVE256", "x86_64")


_AGAINST_TORCH = r"""
import json, math, sys
import numpy as np
import torch
from fpexplore.rng import TorchCPURandom
from fpexplore.rng.mt19937 import MT19937
from fpexplore.rng.torch_cpu import running_path, uniform_from_u32
bad, cases = [], 0
for seed in (0, 1, 42, 2**31 - 1, 123456789):
    for n in (1, 15, 16, 17, 31, 33, 64, 100, 1000):
        for dtype in ("float32", "float64"):
            torch.manual_seed(seed)
            real = torch.randn(n, dtype=getattr(torch, dtype)).numpy()
            emu = TorchCPURandom(seed).randn(n, dtype)
            cases += 1
            if real.tobytes() != emu.tobytes():
                bad.append(("randn", seed, n, dtype))
    for lo, hi in ((-0.35, 0.35), (0.0, 1.0), (-3.0, 7.5), (-1 / math.sqrt(8), 1 / math.sqrt(8))):
        torch.manual_seed(seed)
        real = torch.empty(997).uniform_(lo, hi).numpy()
        emu = uniform_from_u32(MT19937.from_seed(seed).next_u32(997), lo, hi)
        cases += 1
        if real.tobytes() != emu.tobytes():
            bad.append(("uniform", seed, lo, hi))
print(json.dumps({"path": running_path(), "cap": torch.backends.cpu.get_cpu_capability(),
                  "bad": bad, "cases": cases}))
"""


@pytest.mark.parametrize("capability", ["default", "avx2", "avx512"])
def test_rng_rebuild_matches_torch_under_each_capability(capability):
    pytest.importorskip("torch")
    needs = {"avx2": ("avx2", "fma"), "avx512": ("avx512f", "avx512bw", "avx512vl")}
    if not all(f in cpu_flags() for f in needs.get(capability, ())):
        pytest.skip(f"this CPU has no {capability} path")
    out = subprocess.run(
        [sys.executable, "-c", _AGAINST_TORCH],
        env={**__import__("os").environ, "ATEN_CPU_CAPABILITY": capability},
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["cap"] == capability.upper()
    assert r["path"] == ("default" if capability == "default" else "avx2")
    assert r["cases"] >= 100 and not r["bad"], r["bad"]


def test_the_partial_libraries_declare_the_ops_they_run():
    """A missing DJL or LibTorch is "not run" only for ops it computes: `battery.PARTIAL`
    names them, as the shipped fingerprints of machines where they ran record them."""
    import json
    from pathlib import Path

    from fpexplore.dispatch import battery

    shipped = Path(__file__).resolve().parents[1] / "data" / "fingerprints"
    seen: dict[str, set[str]] = {}
    for path in shipped.glob("*.json"):
        for key in json.loads(path.read_text())["ops"]:
            lib, device, op = key.split(":", 2)
            if lib in battery.PARTIAL and device == "cpu":
                seen.setdefault(lib, set()).add(op)
    assert seen
    for lib, ops in battery.PARTIAL.items():
        assert seen.get(lib, set(ops)) == set(ops), lib
    assert not battery.runs_op("djl", "softmax") and battery.runs_op("torch", "softmax")
