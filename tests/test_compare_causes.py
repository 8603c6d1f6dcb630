"""`compare` tells the truth about causes: effective values, not whether a variable is set;
the paths inside the libraries (MKL's branch, CBWR mode and vendor path, OpenBLAS's core
kernel, oneDNN's ISA, ATen's capability); a cause explains a result only when the fingerprints
show a path to it that differs; a version of the result's library comes first; ``--check``
reruns here under the suggested environment (a fake fresh process: no interpreter starts).

The pairs are built from the shipped real-machine fingerprints by changing one recorded field
and the digests of chosen results, so each test knows which results a cause may explain."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import fpexplore
from fpexplore import cli
from fpexplore.dispatch import causes, fingerprint, fresh
from fpexplore.dispatch.compare import compare
from fpexplore.paths import data_dir
from fpexplore.probe import libpaths

MACHINES = Path(__file__).resolve().parents[2] / "shared" / "machines"
SHIPPED = sorted((data_dir() / "fingerprints").glob("*.json"))
DEV = data_dir() / "fingerprints" / "dev-xeon-avx512-amx.json"

#: torch's BLAS results (MKL), its ATen results, numpy's BLAS (OpenBLAS) and SIMD results
MKL_KEYS = {"torch:cpu:dot", "torch:cpu:matmul", "libtorch:cpu:matmul", "torch:cpu:conv2d"}
OPENBLAS_KEYS = {"numpy:cpu:dot", "numpy:cpu:matmul"}


def _real(name: str) -> dict:
    path = MACHINES / name / "fingerprint.json"
    if not path.exists():
        path = data_dir() / "machines" / name / "fingerprint.json"
    if not path.exists():
        pytest.skip(f"no record of {name} here")
    return fingerprint.load(path)


def _new_style(fp: dict, **machine: object) -> dict:
    """``fp`` as a fingerprint of this version records it (library paths), with ``machine``'s
    fields set."""
    out = copy.deepcopy(fp)
    m = out["machine"]
    m.setdefault("cpu_vendor", "GenuineIntel")
    m["mkl"] = {"version": "2024.2", "cbwr": "OFF", "branch": "AVX512_E1", "intel_paths": True}
    m["numpy"]["openblas"] = {"core": "SkylakeX", "threads": 2, "config": "OpenBLAS 0.3.31"}
    m["onednn_isa"] = "AVX512_CORE_AMX"
    for path, value in machine.items():
        node = m
        *head, last = path.split("__")
        for p in head:
            node = node[p]
        node[last] = value
    return out


def _flip(fp: dict, keys: set[str]) -> dict:
    """``fp`` with other bits for ``keys``."""
    out = copy.deepcopy(fp)
    for k in keys:
        out["ops"][k]["digest"] = "f" * 16 if out["ops"][k]["digest"] != "f" * 16 else "0" * 16
    return out


def _names(d) -> list[str]:
    return [c.name for c in d.causes]


def test_a_variable_set_on_one_side_is_no_cause_when_the_effective_count_is_the_same():
    """OMP_NUM_THREADS=2 on B, unset on A, both run torch on 2 threads: no thread cause, no
    variable named; the differing result stays not explained."""
    a = fingerprint.load(DEV)
    b = _flip(a, {"torch:cpu:sum_large"})
    b["machine"]["env"] = {"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
    d = compare(a, b)
    assert not d.causes and d.unexplained == ("torch:cpu:sum_large",)
    assert "OMP_NUM_THREADS" not in d.text() and "not explained" in d.text()
    b["machine"]["torch"]["threads"] = 4  # now the count itself differs
    d = compare(a, b)
    assert _names(d) == ["torch's thread count"] and d.causes[0].explains == (
        "torch:cpu:sum_large",
    )
    assert dict(d.reproduce_env)["OMP_NUM_THREADS"] == "4"


@pytest.mark.parametrize(
    ("field", "value", "cause", "reached"),
    [
        ("mkl__branch", "AVX2", "MKL's branch and CBWR mode", MKL_KEYS),
        ("mkl__cbwr", "AUTO,STRICT", "MKL's branch and CBWR mode", MKL_KEYS),
        ("numpy__openblas__core", "Haswell", "OpenBLAS's core kernel", OPENBLAS_KEYS),
        ("numpy__openblas__threads", 1, "OpenBLAS's thread count", OPENBLAS_KEYS),
        ("onednn_isa", "AVX2", "oneDNN's ISA", {"torch:cpu:conv2d"}),
        ("torch__capability", "AVX2", "ATen's CPU path", {"torch:cpu:exp", "libtorch:cpu:sum"}),
        ("numpy__simd_targets", ["X86_V3"], "numpy's SIMD targets", {"numpy:cpu:exp"}),
    ],
)
def test_a_library_path_explains_only_the_results_its_engine_computes(field, value, cause, reached):
    """One recorded path differs; every battery result is given other bits. The path explains
    exactly the results its engine computes; all others are listed as not explained."""
    a = _new_style(fingerprint.load(DEV))
    cpu = {k for k, o in a["ops"].items() if o["device"] == "cpu"}
    b = _flip(_new_style(a, **{field: value}), cpu)
    d = compare(a, b)
    assert _names(d) == [cause], d.text()
    explained = set(d.causes[0].explains)
    assert reached <= explained and explained < cpu
    assert set(d.unexplained) == cpu - explained
    assert d.causes[0].confirm


def test_old_fingerprints_without_library_paths_are_read_and_name_no_recorded_path():
    """The shipped fingerprints predate the library paths: read as before, and a MKL or
    OpenBLAS variable whose effect they do not record is a suspect, not an explanation."""
    for path in SHIPPED:
        fp = fingerprint.load(path)
        assert "mkl" not in fp["machine"] and not compare(fp, fp).rows
    a = fingerprint.load(DEV)
    b = _flip(a, MKL_KEYS)
    b["machine"]["env"] = {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}
    d = compare(a, b)
    assert not d.causes and set(d.unexplained) == MKL_KEYS
    assert [c.name for c in d.suspects] == ["environment MKL_ENABLE_INSTRUCTIONS"]
    assert set(d.suspects[0].explains) == MKL_KEYS
    b["ops"]["torch:cpu:exp"]["digest"] = "e" * 16
    b["machine"]["torch"]["capability"] = "AVX2"  # explains exp
    b["machine"]["cpu"] = "another CPU"  # a suspect that could reach every CPU result
    d = compare(a, b)
    assert "torch:cpu:exp" not in d.unexplained and "the CPU" in [c.name for c in d.suspects]
    assert all(set(s.explains) <= set(d.unexplained) for s in d.suspects)  # only what is left
    assert "MKL_ENABLE_INSTRUCTIONS=SSE4_2" in d.reproduce  # not recorded: still suggested


def test_a_version_of_the_results_library_comes_before_its_paths_and_the_cpu():
    a = _new_style(fingerprint.load(DEV))
    b = _flip(_new_style(a, torch__version="2.11.0", torch__capability="AVX2"), MKL_KEYS)
    b["machine"]["cpu"] = "another CPU"
    d = compare(a, b)
    assert _names(d)[0] == "torch version" and d.causes[0].rank == 0
    assert "the CPU" not in _names(d)  # the CPU shows no path: never an explanation


def test_amd_against_the_gpu_host_names_versions_first_and_mkl_s_vendor_path():
    """The two real machines in data/machines: torch and numpy versions first, then MKL's
    vendor path for torch.dot, oneDNN's ISA for conv2d; the suggested environment for the
    GPU host caps its paths at the AMD machine's, and says MKL's AMD path is out of reach."""
    gpu, amd = _real("gpu-host-h200x4"), _real("amd-epyc-zen3")
    d = compare(gpu, amd)
    names = _names(d)
    assert names[:2] == ["torch version", "numpy version"], d.text()
    assert "MKL's CPU-vendor path" in names and "oneDNN's ISA" in names
    mkl = d.causes[names.index("MKL's CPU-vendor path")]
    assert set(mkl.explains) == MKL_KEYS & set(d.differs)
    assert not any(c.name.startswith("environment") for c in d.causes)
    env = dict(d.reproduce_env)
    assert env["OMP_NUM_THREADS"] == "2" and env["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert env["ATEN_CPU_CAPABILITY"] == "avx2"
    assert any("AuthenticAMD" in n and "MKL_CBWR=COMPATIBLE" in n for n in d.unreachable)
    print(d.text())


def test_onednn_isa_follows_the_flags_and_its_cap():
    flags = frozenset({"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl"})
    full = flags | {"avx512dq", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"}
    assert libpaths.onednn_isa(flags, {}) == "AVX2"  # no avx512dq: not AVX512_CORE
    assert libpaths.onednn_isa(full, {}) == "AVX512_CORE_AMX"
    for cap in ("SSE41", "AVX", "AVX2", "AVX512_CORE", "AVX512_CORE_VNNI"):
        assert libpaths.onednn_isa(full, {"ONEDNN_MAX_CPU_ISA": cap.lower()}) == cap
    assert libpaths.onednn_isa(flags, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_AMX"}) == "AVX2"
    assert libpaths.onednn_isa(frozenset(), {}) == "DEFAULT"


def test_this_process_reports_its_library_paths():
    """The paths are asked of the loaded libraries: OpenBLAS's core, and MKL's branch and CBWR
    mode where torch is installed."""
    import numpy  # noqa: F401  (loads OpenBLAS)

    blas = libpaths.openblas_paths()
    assert blas is None or (isinstance(blas["core"], str) and blas["core"])
    torch = pytest.importorskip("torch")
    mkl = libpaths.mkl_paths(torch)
    if mkl is not None:
        assert mkl["cbwr"] in ("OFF", *libpaths.CBWR_NAMES.values()) or "," in mkl["cbwr"]
        assert isinstance(mkl["branch"], str) and mkl["branch"]
        assert causes.vendor({"cpu_vendor": "AuthenticAMD"}) == "AuthenticAMD"


def _fake_fresh(b: dict, keep: set[str], seen: list):
    """A stand-in for `fresh.fingerprint`: B's bits, except ``keep`` (which stay A's)."""

    def fake(env, label, values=False, timeout=300.0):
        seen.append(dict(env))
        out = copy.deepcopy(b)
        out["label"] = label
        for k in keep:
            out["ops"][k]["digest"] = "0" * 16
        return out

    return fake


def test_check_reruns_here_under_the_suggested_environment(monkeypatch, tmp_path, capsys):
    a = _new_style(fingerprint.load(DEV))
    b = _flip(
        _new_style(a, torch__capability="AVX2", torch__threads=1), MKL_KEYS | {"torch:cpu:exp"}
    )
    seen: list = []
    monkeypatch.setattr(fresh, "fingerprint", _fake_fresh(b, {"torch:cpu:dot"}, seen))
    d = fpexplore.compare(a, b, check=True)
    assert seen == [dict(d.reproduce_env)] and seen[0]["ATEN_CPU_CAPABILITY"] == "avx2"
    c = d.checked
    assert c.before == len(d.rows) and c.remain == ("torch:cpu:dot",) and not c.new
    assert set(c.removed) == set(d.differs) - {"torch:cpu:dot"}
    assert f"removed {len(c.removed)} of {c.before} differences; 1 remain" in d.text()
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    assert cli.main(["compare", str(pa), str(pb), "--check"]) == 0
    assert (
        "checked here, in a fresh process under ATEN_CPU_CAPABILITY=avx2" in capsys.readouterr().out
    )
    assert cli.main(["compare", str(pa), str(pb), "--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["checked"]["remain"] == ["torch:cpu:dot"]
    assert len(seen) == 3
    assert fpexplore.compare(a, b).checked is None and len(seen) == 3  # only when asked


def test_a_path_only_one_side_records_is_a_suspect_never_an_explanation():
    old = fingerprint.load(DEV)
    new = _new_style(old)
    d = compare(new, _flip(old, OPENBLAS_KEYS | {"torch:cpu:dot"}))
    assert not d.causes and set(d.unexplained) == OPENBLAS_KEYS | {"torch:cpu:dot"}
    found = {c.name: set(c.explains) for c in d.suspects}
    assert found == {"OpenBLAS's core kernel": OPENBLAS_KEYS, "MKL's branch": {"torch:cpu:dot"}}
    assert "not recorded" in d.text()


def test_check_says_when_this_machine_is_not_a(monkeypatch):
    a = fingerprint.load(DEV)
    b = _flip(a, {"numpy:cpu:exp"})
    b["machine"]["numpy"]["simd_targets"] = ["X86_V3"]
    seen: list = []
    fake = _fake_fresh(b, set(), seen)
    monkeypatch.setattr(fresh, "fingerprint", fake)
    assert fpexplore.compare(a, b, check=True).checked.not_a == ""

    def elsewhere(env, label, values=False, timeout=300.0):
        out = fake(env, label)
        out["machine"]["cpu"] = "AMD EPYC"
        return out

    monkeypatch.setattr(fresh, "fingerprint", elsewhere)
    d = fpexplore.compare(a, b, check=True)
    assert d.checked.removed == ("numpy:cpu:exp",) and "cpu here AMD EPYC" in d.checked.not_a
    assert "note: this machine is not A" in d.text()
