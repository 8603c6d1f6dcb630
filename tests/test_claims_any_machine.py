"""Every lesson's claims hold (or are "not checked") under every dispatch switch this CPU has.

Each switch runs in a fresh process (the switches are read when a library loads), with every
lesson at its quick parameters and at the edge values of `fpexplore.testing.matrix.EXTRA`,
where the switch can change the lesson's bits; elsewhere the pair shares the run without any
switch (the default), for the reason `fpexplore.testing.matrix.share` gives: the switch
reaches none of the lesson's libraries (from its claims' ``needs``), or it takes this CPU's
default paths (`fpexplore.probe.paths.effective_paths`, checked against the paths the
default process reports). A failure names the switch, the lesson, its parameters and the claim.
"""

from __future__ import annotations

import re
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from fpexplore import backends, lessons
from fpexplore.dispatch import SWITCHES, applicable
from fpexplore.dispatch.switches import Switch
from fpexplore.testing import matrix

PLAN = matrix.plan()
WORKERS = 2  # fresh processes at once: each spends most of its time in one core
DEFAULT = "default"
MATRIX_TESTS = ("test_claims_hold_under_switch", "test_claims_hold_by_default")


@pytest.fixture(scope="module")
def cells(request: pytest.FixtureRequest):
    """The default process and the selected switches' processes (each with the runs the switch
    reaches), started together, `WORKERS` at a time, the largest first."""
    selected = [i for i in request.session.items if getattr(i, "originalname", "") in MATRIX_TESTS]
    chosen = [
        i.callspec.params["switch"]
        for i in selected
        if getattr(i, "originalname", "") == "test_claims_hold_under_switch"
    ]
    work: list[tuple[str, Switch | None, list]] = [(DEFAULT, None, list(PLAN))]
    for s in chosen:
        runs, _ = matrix.switch_plan(s, PLAN)
        if applicable(s) and runs:
            work.append((s.name, s, runs))
    work.sort(key=lambda w: -len(w[2]))
    pool = ThreadPoolExecutor(max_workers=WORKERS)
    futures: dict[str, Future] = {
        name: pool.submit(matrix.run_cell, s, runs) for name, s, runs in work
    }
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def _problems(cell: matrix.Cell, only: set[str] | None = None) -> list[str]:
    """The cell's runs that raised and claims that failed (of the lessons ``only``)."""

    def mine(line: str) -> bool:
        return only is None or line.split(" ", 1)[0] in only

    return [e for e in cell.errors if mine(e)] + [f for f in cell.failures if mine(f)]


def _check_paths(switch: Switch, paths: dict) -> None:
    """The process took the paths ``switch`` asks for."""
    env = switch.env
    if env.get("TF_ENABLE_ONEDNN_OPTS") in ("0", "1"):
        assert paths["onednn"] is (env["TF_ENABLE_ONEDNN_OPTS"] == "1"), paths
    if "ATEN_CPU_CAPABILITY" in env and "torch_capability" in paths:
        assert paths["torch_capability"] == env["ATEN_CPU_CAPABILITY"].upper(), paths
    if "OMP_NUM_THREADS" in env and "torch_threads" in paths:
        assert paths["torch_threads"] == int(env["OMP_NUM_THREADS"]), paths


@pytest.mark.slow
def test_claims_hold_by_default(cells):
    """Every run of the plan without any switch: what the pairs that share it stand on."""
    cell = cells[DEFAULT].result()
    print(f"default: {cell.seconds:.1f} s, {cell.states}, paths {cell.paths}")
    assert list(cell.lessons) == [name for name, _ in PLAN]
    problems = _problems(cell)
    assert not problems, "without any switch:\n" + "\n".join(problems)
    assert cell.states["holds"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("switch", SWITCHES, ids=[s.name for s in SWITCHES])
def test_claims_hold_under_switch(switch, cells):
    if not applicable(switch):
        pytest.skip(f"{switch.name}: this CPU lacks {', '.join(switch.needs)}")
    runs, shared = matrix.switch_plan(switch, PLAN)
    # every lesson of the plan runs under the switch or shares the default's run, with a reason
    assert {n for n, _ in PLAN} == {n for n, _ in runs} | set(shared)
    assert not {n for n, _ in runs} & set(shared)
    for lesson, why in shared.items():
        print(f"{switch.name} × {lesson}: the default's run: {why}")
    default = cells[DEFAULT].result()
    problems = _problems(default, set(shared))
    assert not problems, f"{switch.name} shares these failed default runs:\n" + "\n".join(problems)
    if matrix.same_as_default(switch):
        # shown equivalent: the default process took every path the switch asks for
        _check_paths(switch, default.paths)
    if not runs:
        return
    cell = cells[switch.name].result()
    print(f"{switch.name}: {cell.seconds:.1f} s, {cell.states}, paths {cell.paths}")
    assert list(cell.lessons) == [n for n, _ in runs]
    assert not cell.errors, "\n".join(cell.errors)
    assert not cell.failures, f"under {switch.name} ({dict(switch.env)}):\n" + "\n".join(
        cell.failures
    )
    assert cell.states["holds"] > 0
    _check_paths(switch, cell.paths)


def test_every_lesson_and_switch_pair_runs_or_shares_with_a_reason():
    """The plan of the matrix on this CPU: for each (lesson, switch), a run of its own, or the
    default's run and why (nothing it needs is in reach, or the default's paths), or no run as
    the CPU lacks the path."""
    names = list(dict.fromkeys(name for name, _ in PLAN))
    assert set(names) == set(lessons.all_lessons())
    table = []
    for s in SWITCHES:
        runs, shared = matrix.switch_plan(s, PLAN)
        ran = {n for n, _ in runs}
        for name in names:
            if not applicable(s):
                how = f"no run: this CPU lacks {', '.join(s.needs)}"
            elif name in ran:
                how = "runs"
                assert matrix.share(s, name) is None and matrix.reaches(s, name)
            else:
                how = shared[name]
                assert how and (matrix.same_as_default(s) or not matrix.reaches(s, name))
            table.append(f"{s.name:18s} {name:22s} {how}")
        # a switch that reaches a lesson's library runs all of that lesson's runs
        for name in ran:
            assert [p for n, p in runs if n == name] == [p for n, p in PLAN if n == name]
    print("\n".join(table))
    # the default run stands for every pair that shares: no switch shares everything unless
    # it takes the default's paths
    for s in SWITCHES:
        runs, _ = matrix.switch_plan(s, PLAN)
        assert runs or matrix.same_as_default(s)


def test_switches_that_take_the_default_paths_are_decided_from_the_cpu():
    """`same_as_default` on made-up CPUs: caps at or above what the CPU has, and oneDNN forced
    to the state it is in by default, change nothing; anything else may."""
    by = {s.name: s for s in SWITCHES}
    avx2 = frozenset({"avx2", "fma"})
    avx512 = avx2 | {"avx512f", "avx512bw", "avx512vl", "avx512dq"}
    vnni = avx512 | {"avx512_vnni"}
    same = {
        avx2: {"onednn-off", "aten-avx2", "aten-avx512", "mkl-avx2"},
        avx512: {"onednn-off", "aten-avx512"},
        vnni: {"onednn-on", "aten-avx512"},
    }
    for flags, want in same.items():
        got = {s.name for s in SWITCHES if matrix.same_as_default(s, flags)}
        assert got == want, sorted(flags)
    # never for threads, MKL's reproducibility mode, OpenBLAS's core type or numpy's targets
    for name in ("threads-1", "threads-2", "mkl-cbwr", "openblas-haswell", "numpy-no-avx512"):
        assert all(matrix.same_as_default(by[name], f) is None for f in same)


LOADED = re.compile(
    r"""backends\.(?:load|missing)\(\s*["']([a-z_]+)["']|load\(\s*["']([a-z_]+)["']"""
)


def test_lesson_libraries_cover_what_their_code_loads():
    """A lesson's libraries (from its claims' needs) include every backend its code loads, so
    that no switch that reaches its code is taken for one that cannot."""
    root = Path(lessons.__file__).parent
    for name in lessons.all_lessons():
        folder = root / name
        files = list(folder.rglob("*.py")) if folder.is_dir() else [root / f"{name}.py"]
        loaded = {
            a or b for f in files for a, b in LOADED.findall(f.read_text()) if (a or b)
        } & set(backends.names())
        wanted = {lib for part in loaded for lib in matrix.part_libraries(part)}
        switchable = wanted & set(matrix.LIBRARIES)
        assert switchable <= matrix.lesson_libraries(name), (name, switchable)


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
