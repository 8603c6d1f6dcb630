"""Every lesson's claims hold (or are "not checked") under every dispatch switch this CPU has.

Each switch runs in a fresh process (the switches are read when a library loads), with every
lesson at its quick parameters and at the edge values of `fpexplore.dispatch.matrix.EXTRA`.
A failure names the switch, the lesson, its parameters and the claim.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from fpexplore.dispatch import SWITCHES, applicable, matrix

PLAN = matrix.plan()
WORKERS = 2  # fresh processes at once: each spends most of its time in one core


@pytest.fixture(scope="module")
def cells(request: pytest.FixtureRequest):
    """The selected switches' processes, started together, `WORKERS` at a time."""
    chosen = [
        item.callspec.params["switch"]
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_claims_hold_under_switch"
    ]
    pool = ThreadPoolExecutor(max_workers=WORKERS)
    futures: dict[str, Future] = {
        s.name: pool.submit(matrix.run_cell, s, PLAN) for s in chosen if applicable(s)
    }
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.slow
@pytest.mark.parametrize("switch", SWITCHES, ids=[s.name for s in SWITCHES])
def test_claims_hold_under_switch(switch, cells):
    if not applicable(switch):
        pytest.skip(f"{switch.name}: this CPU lacks {', '.join(switch.needs)}")
    cell = cells[switch.name].result()
    print(f"{switch.name}: {cell.seconds:.1f} s, {cell.states}, paths {cell.paths}")
    assert not cell.errors, "\n".join(cell.errors)
    assert not cell.failures, f"under {switch.name} ({dict(switch.env)}):\n" + "\n".join(
        cell.failures
    )
    assert cell.states["holds"] > 0
    # the process took the path the switch asks for
    env = switch.env
    if env.get("TF_ENABLE_ONEDNN_OPTS") in ("0", "1"):
        assert cell.paths["onednn"] is (env["TF_ENABLE_ONEDNN_OPTS"] == "1")
    if "ATEN_CPU_CAPABILITY" in env and "torch_capability" in cell.paths:
        assert cell.paths["torch_capability"] == env["ATEN_CPU_CAPABILITY"].upper()
    if "OMP_NUM_THREADS" in env and "torch_threads" in cell.paths:
        assert cell.paths["torch_threads"] == int(env["OMP_NUM_THREADS"])


def _recorded_claims():
    from fpexplore import machines
    from fpexplore.paths import data_dir

    found = sorted((data_dir() / "gpu" / "claims").glob("*.json"))
    assert found, "no recorded GPU claims run in data/gpu/claims"
    return [machines.load_claims(p) for p in found]


def test_claims_held_live_on_a_gpu():
    """The recorded live run on a GPU machine (``fpexplore verify`` there): no claim failed,
    no run raised, and the CUDA-only claims were decided there, not skipped."""
    for record in _recorded_claims():
        card = record["provenance"]["card"]
        failed = [
            f"{r['lesson']} {r['params']} {k}"
            for r in record["runs"]
            for k, c in r["claims"].items()
            if c["state"] == "fails"
        ]
        assert not failed, f"on {card}: {failed}"
        assert not [r for r in record["runs"] if r["error"]]
        cuda_runs = [
            r
            for r in record["runs"]
            if r["lesson"] == "gpu_determinism" and r["params"].get("device") == "cuda"
        ]
        assert cuda_runs and cuda_runs[0]["claims"]["atomics_vary"]["state"] == "holds", card
