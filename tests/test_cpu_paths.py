"""Nothing starts a path the CPU lacks: cpu_dispatch's configurations on a CPU faked from a
shipped real machine's record (an AMD EPYC without AVX-512), and a fresh process that dies by a
signal named as a row, never raised."""

from __future__ import annotations

import json
import subprocess

import pytest

from fpexplore.dispatch import fresh, switches
from fpexplore.dispatch.record import Fingerprint
from fpexplore.errors import WorkerError
from fpexplore.lessons import cpu_dispatch
from fpexplore.memo import Memo
from fpexplore.paths import shipped_data_dir

RECORDS = sorted((shipped_data_dir() / "machines").glob("*/fingerprint.json"))


def _flags(path) -> frozenset[str]:
    return frozenset(json.loads(path.read_text())["machine"]["cpu_flags"])


@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.parent.name)
def test_only_the_paths_a_real_cpu_has_are_offered(record):
    flags = _flags(record)
    here = cpu_dispatch.configs_here(flags)
    skipped = cpu_dispatch.not_taken(flags)
    assert set(here) | set(skipped) == set(cpu_dispatch.CONFIGS)
    for name in skipped:
        assert not switches.applicable(switches.switch(name), flags)
        assert "SIGILL" in skipped[name] and "not started" in skipped[name]
    for name in here[1:]:
        assert switches.applicable(switches.switch(name), flags)


def test_the_amd_record_has_no_avx512_path():
    (amd,) = (r for r in RECORDS if r.parent.name == "amd-epyc-zen3")  # AVX2, no AVX-512
    flags = _flags(amd)
    assert "aten-avx512" not in cpu_dispatch.configs_here(flags)
    assert "AVX512F" in cpu_dispatch.not_taken(flags)["aten-avx512"]


def test_a_lacking_path_is_never_started(monkeypatch):
    monkeypatch.setattr(cpu_dispatch, "cpu_flags", lambda: frozenset({"avx2", "fma"}))
    monkeypatch.setattr(
        cpu_dispatch, "fingerprint", lambda *a, **k: pytest.fail("a process was started")
    )
    got = cpu_dispatch._take("aten-avx512")
    assert "not started" in got.why and "AVX512F" in got.why


def test_a_process_killed_by_a_signal_is_named(monkeypatch):
    def killed(*args, **kwargs):
        return subprocess.CompletedProcess(args, -4, "", "")

    monkeypatch.setattr(fresh.subprocess, "run", killed)
    monkeypatch.setenv(fresh.CACHE_ENV, "0")  # a kept fingerprint would answer instead
    with pytest.raises(WorkerError, match="died by SIGILL: an instruction this CPU"):
        fresh.fingerprint({"ATEN_CPU_CAPABILITY": "avx512"}, "x")


def test_a_configuration_that_died_is_a_row_not_a_traceback(monkeypatch):
    def died(env, label, values=False, timeout=300.0):
        raise WorkerError(f"the fresh process under {env} {fresh.died_by(-4)}")

    monkeypatch.setattr(cpu_dispatch, "_TAKEN", Memo(keep=40))
    monkeypatch.setattr(cpu_dispatch, "fingerprint", died)
    c = cpu_dispatch.LESSON.run(op="sum", a="this-machine", b="threads-1")
    assert all(o.unavailable and "SIGILL" in o.unavailable for o in c.outcomes)
    assert {k: v.holds for k, v in c.claims.items()} == dict.fromkeys(cpu_dispatch.CLAIMS)
    assert "SIGILL" in cpu_dispatch.not_taken()["threads-1"]
    assert cpu_dispatch.take_all(progress=False) == {}
    table = cpu_dispatch.config_table({}, cpu_dispatch.not_taken())
    assert "not run: threads-1: the fresh process" in table and "SIGILL" in table


def _notebook_cells() -> list[tuple[str, str]]:
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "notebooks/12_same_code_different_machine.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [(c["cell_type"], "".join(c["source"])) for c in cells]


def test_notebook_12_runs_to_its_end_where_every_configuration_died(monkeypatch, capsys):
    """Run All on a machine where every fresh process dies (SIGILL): each cell runs, the
    lacking paths become rows and lines that say why, and the exercises still check (no
    NameError from a cell that had a problem, no claim asserted that could not be checked)."""

    def died(env, label, values=False, timeout=300.0):
        raise WorkerError(f"the fresh process under {env} {fresh.died_by(-4)}")

    monkeypatch.setattr(cpu_dispatch, "_TAKEN", Memo(keep=40))
    monkeypatch.setattr(cpu_dispatch, "fingerprint", died)
    shown: list[object] = []
    space: dict[str, object] = {"display": shown.append}
    for kind, source in _notebook_cells():
        if kind == "code":
            exec(compile(source, "<notebook 12>", "exec"), space)
    out = capsys.readouterr().out
    assert "this machine's fingerprint: the fresh process" in out and "SIGILL" in out
    assert "nothing to compare" in out and "[not checked] differences_explained" in out


def test_the_comparison_partner_differs_from_this_machines_default(monkeypatch):
    """Notebook 12 compares this machine with a configuration that changes one of its paths:
    TensorFlow's oneDNN switched against this CPU's default, never to it."""
    machine = {"numpy": {}, "tensorflow": {"onednn": True}, "torch": {"capability": "AVX2"}}

    def taken(config: str) -> Fingerprint:
        return Fingerprint.from_dict({"machine": machine})

    monkeypatch.setattr(cpu_dispatch, "configs_here", lambda: cpu_dispatch.CONFIGS)
    monkeypatch.setattr(cpu_dispatch, "taken", taken)
    assert cpu_dispatch.contrast() == "onednn-off"
    machine["tensorflow"]["onednn"] = False
    assert cpu_dispatch.contrast() == "onednn-on"
    del machine["tensorflow"]
    assert cpu_dispatch.contrast() == "aten-default"
    machine["torch"]["capability"] = "DEFAULT"
    assert cpu_dispatch.contrast() == "numpy-no-avx512"
    monkeypatch.setattr(cpu_dispatch, "configs_here", lambda: ("this-machine",))
    assert cpu_dispatch.contrast() is None
    monkeypatch.setattr(cpu_dispatch, "taken", lambda c: cpu_dispatch.Failed("died"))
    assert cpu_dispatch.contrast() is None


def test_notebook_12_links_to_the_index_once_per_navigation_line():
    cells = _notebook_cells()
    for _, source in (cells[0], cells[-1]):
        nav = next(line for line in source.splitlines() if "index.ipynb" in line)
        assert nav.count("(index.ipynb)") == 1
