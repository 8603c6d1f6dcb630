"""The on-disk cache of fresh processes (`fpexplore.dispatch.fresh`): one take per key, a
reuse for the same key, a new take where the environment, the CPU, the versions or the code
differ, nothing kept from a failed run, and every take and reuse logged."""

from __future__ import annotations

import json

import pytest

from fpexplore.dispatch import fresh
from fpexplore.testing.runner import run_claims


def _fake_fingerprint(label: str) -> dict:
    op = {"op": "sum", "library": "numpy", "device": "cpu", "digest": "0" * 16}
    return {
        "label": label,
        "ops": {"numpy:cpu:sum": {**op, "shape": [1], "values": ["0x1.0p+0"]}},
        "unavailable": {},
        "machine": {},
    }


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """Fresh processes started, as (args, env); the cache in a temporary folder, on."""
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    monkeypatch.setenv(fresh.CACHE_ENV, "1")
    monkeypatch.setenv(fresh.RUN_ENV, "unit")
    started: list[tuple[list[str], dict]] = []

    def fake(args, payload, env, timeout, module=fresh.WORKER):
        started.append((list(args), dict(env)))
        if args[:1] == ["--fingerprint"]:
            return _fake_fingerprint(args[1])
        plan = json.loads(payload)
        state = env.get("FPEXPLORE_STATE", "holds")
        return {
            "paths": {},
            "runs": [
                {"lesson": n, "params": p, "error": None, "claims": {"c": {"state": state}}}
                for n, p in plan
            ],
        }

    monkeypatch.setattr(fresh, "spawn", fake)
    return started


def _log(tmp_path) -> list[dict]:
    text = (tmp_path / "fresh" / "log.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_one_take_per_key_serves_every_label_and_both_values(calls, tmp_path):
    a = fresh.fingerprint({"X_SWITCH": "1", "TF_ENABLE_ONEDNN_OPTS": "0"}, "A")
    b = fresh.fingerprint({"X_SWITCH": "1", "TF_ENABLE_ONEDNN_OPTS": "0"}, "B", values=True)
    assert len(calls) == 1 and calls[0][0] == ["--fingerprint", "", "--values"]
    assert a["label"] == "A" and b["label"] == "B"
    assert "values" not in a["ops"]["numpy:cpu:sum"] and b["ops"]["numpy:cpu:sum"]["values"]
    assert [ln["reused"] for ln in _log(tmp_path)] == [False, True]
    assert _log(tmp_path)[1]["env"] == {"X_SWITCH": "1", "TF_ENABLE_ONEDNN_OPTS": "0"}


def test_a_path_switch_the_cpu_the_versions_or_the_code_make_a_new_key(calls, monkeypatch):
    fresh.fingerprint({}, "x")
    fresh.fingerprint({"TF_ENABLE_ONEDNN_OPTS": "0"}, "x")  # a switch
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a variable of this process the child inherits
    fresh.fingerprint({}, "x")
    monkeypatch.delenv("OMP_NUM_THREADS")
    fresh.fingerprint({"UNRELATED_NAME": "1"}, "x")  # no path reads it: the first key
    assert len(calls) == 3
    machine = fresh._machine()
    for changed in ({"flags": ["sse2"]}, {"distributions": "other"}):
        monkeypatch.setattr(fresh, "_machine", lambda c=changed: {**machine, **c})
        fresh.fingerprint({}, "x")
    monkeypatch.setattr(fresh, "_machine", lambda: machine)
    monkeypatch.setattr(fresh, "code_hash", lambda: "edited")
    fresh.fingerprint({}, "x")
    assert len(calls) == 6


def test_claims_are_kept_per_plan_and_a_failure_is_never_kept(calls, tmp_path):
    plan = [("summation_order", {"n": 1})]
    run_claims(plan, {})
    run_claims(plan, {})
    run_claims([("summation_order", {"n": 2})], {})
    assert len(calls) == 2
    failing = {"FPEXPLORE_STATE": "fails"}
    for _ in range(2):
        assert run_claims(plan, failing)["runs"][0]["claims"]["c"]["state"] == "fails"
    assert len(calls) == 4  # taken again: a failure may be a flake, and is shown each time


def test_without_the_switch_every_call_takes_a_process(calls, monkeypatch, tmp_path):
    monkeypatch.setenv(fresh.CACHE_ENV, "0")
    fresh.fingerprint({}, "x")
    fresh.fingerprint({}, "x")
    assert len(calls) == 2 and not (tmp_path / "fresh").exists()


def test_the_code_hash_is_of_the_package_sources():
    assert fresh.code_hash() == fresh.code_hash() and len(fresh.code_hash()) == 64
    key = fresh.fresh_key({"ATEN_CPU_CAPABILITY": "avx2"})
    assert key["env"]["ATEN_CPU_CAPABILITY"] == "avx2" and key["code"] == fresh.code_hash()
    assert fresh.CACHE_ENV not in key["env"] and fresh.RUN_ENV not in key["env"]


def test_prune_drops_the_oldest_past_the_size_and_age_limits(tmp_path, monkeypatch):
    import os
    import time

    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    folder = tmp_path / "fresh"
    folder.mkdir()
    now = time.time()
    for i, age_days in enumerate((0, 1, 2, 40)):
        p = folder / f"fingerprint-{i}.json"
        p.write_text("x" * 100)
        (folder / f"fingerprint-{i}.lock").touch()
        os.utime(p, (now - age_days * 86400, now - age_days * 86400))
    fresh.prune(max_bytes=250)
    assert sorted(p.name for p in folder.glob("*.json")) == [
        "fingerprint-0.json",
        "fingerprint-1.json",
    ]
    assert not (folder / "fingerprint-3.lock").exists()


def test_a_fresh_process_seeds_its_own_fingerprint_for_nested_calls(calls, monkeypatch):
    """`seed_fingerprint` keeps this process's fingerprint under the key a nested
    ``fingerprint({}, …)`` reads: that call starts no process; another environment still does."""
    from fpexplore.dispatch import fingerprint

    monkeypatch.setattr(fingerprint, "take", lambda label, values: _fake_fingerprint("seeded"))
    fresh.seed_fingerprint()
    here = fresh.fingerprint({}, "this-machine", values=True)
    assert calls == [] and here["ops"] == _fake_fingerprint("")["ops"]
    assert here["label"] == "this-machine"
    fresh.fingerprint({"OMP_NUM_THREADS": "1"}, "other")
    assert len(calls) == 1


def test_without_the_cache_nothing_is_seeded(calls, monkeypatch, tmp_path):
    from fpexplore.dispatch import fingerprint

    monkeypatch.setenv(fresh.CACHE_ENV, "0")
    monkeypatch.setattr(fingerprint, "take", lambda *a, **k: pytest.fail("taken"))
    fresh.seed_fingerprint()
    assert not (tmp_path / "fresh").exists()


@pytest.mark.slow
def test_a_seeded_fingerprint_has_the_bits_of_a_nested_fresh_one():
    """Live: the fingerprint a fresh process seeds (the claims matrix's runner, first thing)
    has every result's bits of the one a separate fresh interpreter takes under the same
    environment (a variable of its own makes the key this test's alone)."""
    import os
    import subprocess
    import sys
    import uuid

    from fpexplore.paths import cache_dir

    mine = {"FPEXPLORE_TEST_SEED": uuid.uuid4().hex}
    run = f"seed-{mine['FPEXPLORE_TEST_SEED']}"
    env = {**os.environ, **mine, fresh.CACHE_ENV: "1", fresh.RUN_ENV: run}
    code = (
        "import json; from fpexplore.dispatch import fresh; fresh.seed_fingerprint(); "
        "fp = fresh.fingerprint({}, 'x', values=True); "
        "print(json.dumps({k: v['values'] for k, v in fp['ops'].items()}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    seeded = json.loads(done.stdout.strip().splitlines()[-1])
    log = (cache_dir() / "fresh" / "log.jsonl").read_text().splitlines()
    reused = [json.loads(ln)["reused"] for ln in log if f'"{run}"' in ln]
    assert reused == [False, True]  # seeded, then read back by the nested call
    nested = fresh._take_fingerprint(mine, "", True, 300.0)  # an interpreter of its own
    assert seeded == {k: v["values"] for k, v in nested["ops"].items()}
