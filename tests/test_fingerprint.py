"""fpexplore fingerprint / compare, the class table and the cpu_dispatch lesson: a fingerprint
compared with itself shows nothing; pairs built by flipping one switch name that switch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import fpexplore
from fpexplore import cli
from fpexplore.dispatch import battery, classroom, fingerprint, switch
from fpexplore.dispatch.compare import compare
from fpexplore.dispatch.fresh import each
from fpexplore.dispatch.fresh import fingerprint as fresh_fingerprint
from fpexplore.errors import InvalidInput
from fpexplore.paths import data_dir

SHIPPED = sorted((data_dir() / "fingerprints").glob("*.json"))


@pytest.fixture(scope="module")
def here():
    return fingerprint.take("here")


def test_fingerprint_holds_every_op_with_bits_and_truth_errors(here):
    assert fingerprint.check(here) is here
    libs = {op["library"] for op in here["ops"].values()}
    assert {"numpy", "torch", "tensorflow"} <= libs  # the suite's set-up has all three
    for key, op in here["ops"].items():
        assert len(op["digest"]) == 16 and op["op"] in battery.OPS
        if op["op"] in battery.truths():
            assert op["max_ulp"] is not None and 0 <= op["max_ulp"] < 1e6, key
    m = here["machine"]
    assert m["torch"]["capability"] and "onednn_reason" in m["tensorflow"]
    assert m["numpy"]["version"] and isinstance(m["cpu_flags"], list)


def test_a_fingerprint_compared_with_itself_shows_no_difference(here):
    for fp in [here, *(fingerprint.load(p) for p in SHIPPED)]:
        d = compare(fp, fp)
        assert not d.rows and not d.causes and "no difference" in d.text()


FLIPPED = [
    ("onednn-on", "onednn-off", "TensorFlow's oneDNN kernels"),
    (None, "aten-default", "ATen's CPU path"),
    (None, "mkl-avx2", "MKL's branch and CBWR mode"),
    (None, "mkl-cbwr", "MKL's branch and CBWR mode"),
    (None, "openblas-haswell", "OpenBLAS's core kernel"),
    ("threads-1", "threads-2", "torch's thread count"),
]


def _env(name):
    return {} if name is None else dict(switch(name).env)


@pytest.fixture(scope="module")
def fresh_pairs():
    """Every side of `FLIPPED` as a fresh process's fingerprint ("A" the first, "B" the
    second), each distinct one taken once, as many at a time as the machine holds
    (`fresh.each`): {(label, switch): fingerprint}."""
    sides = sorted({("A", a) for a, _, _ in FLIPPED} | {("B", b) for _, b, _ in FLIPPED}, key=str)
    taken = each(lambda side: fresh_fingerprint(_env(side[1]), side[0]), sides)
    return dict(zip(sides, taken, strict=True))


def _pair(pairs, a, b):
    return pairs["A", a], pairs["B", b]


@pytest.mark.slow
@pytest.mark.parametrize(("a", "b", "cause"), FLIPPED)
def test_one_switch_flipped_is_named_first(fresh_pairs, a, b, cause):
    """Two fresh processes that differ in one switch: every difference is explained, and the
    first cause is that switch (where the switch changes any bit on this CPU)."""
    fa, fb = _pair(fresh_pairs, a, b)
    d = compare(fa, fb)
    print(d.text())
    assert not d.unexplained
    if d.rows:
        assert d.causes[0].name == cause
        reached = set(switch(b).reaches) | (set(switch(a).reaches) if a else set())
        assert all(r.key.split(":")[0] in reached for r in d.rows)


@pytest.mark.slow  # the fresh processes of `fresh_pairs`, as the test above
def test_the_onednn_pair_differs_and_gives_the_command(here, fresh_pairs):
    if (
        here["machine"]["tensorflow"]["onednn"] is False
        and "avx512_vnni" not in here["machine"]["cpu_flags"]
    ):
        pytest.skip("TensorFlow's oneDNN switch changes no bit that the battery sees here")
    fa, fb = _pair(fresh_pairs, "onednn-on", "onednn-off")
    d = compare(fa, fb)
    assert d.rows and "TF_ENABLE_ONEDNN_OPTS=0" in d.causes[0].confirm
    assert d.reproduce.startswith("TF_ENABLE_ONEDNN_OPTS=0")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[]", "not an fpexplore fingerprint"),
        ('{"format": "other"}', "not an fpexplore fingerprint"),
        ('{"format": "fpexplore-fingerprint", "version": 99}', "version 99"),
        ('{"format": "fpexplore-fingerprint", "version": 1}', "'ops' and 'machine'"),
        (
            '{"format": "fpexplore-fingerprint", "version": 1, "machine": {}, '
            '"ops": {"x": {"digest": 3}}}',
            "no 'digest'",
        ),
        ("{not json", "not a readable JSON"),
    ],
)
def test_bad_or_foreign_files_get_a_clear_message(tmp_path, capsys, text, match):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(InvalidInput, match=match):
        fingerprint.load(bad)
    assert cli.main(["compare", str(bad), str(bad)]) == 2
    assert "fpexplore: error:" in capsys.readouterr().err


def test_output_paths_are_checked_before_any_work(tmp_path, capsys):
    for out in ("", str(tmp_path), str(tmp_path / "missing" / "x.json")):
        assert cli.main(["fingerprint", "--out", out]) == 2
        assert "--out" in capsys.readouterr().err
    assert cli.main(["compare", str(tmp_path / "nope.json"), str(tmp_path / "nope.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_writes_compares_and_renders_html(tmp_path):
    out, page = tmp_path / "me.json", tmp_path / "cmp.html"
    run = [sys.executable, "-c", "from fpexplore.cli import main; raise SystemExit(main())"]
    subprocess.run([*run, "fingerprint", "--out", str(out), "--label", "me"], check=True)
    assert json.loads(out.read_text())["label"] == "me"
    shown = subprocess.run(
        [*run, "compare", str(out), str(SHIPPED[0]), "--html", str(page)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert (shown.startswith("A: me") and "<table" in page.read_text()) or "no difference" in shown
    d = fpexplore.compare(str(out), fpexplore.fingerprint("again"))
    assert not d.rows  # the same machine twice, in two processes


def test_fingerprints_read_into_types_and_write_back_unchanged():
    """Every shipped file reads into its record and writes back the same JSON (keys and their
    order); a field this version does not know is refused where the file is read."""
    for path in SHIPPED + sorted((data_dir() / "machines").glob("*/fingerprint.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        fp = fingerprint.parse(data, str(path))
        assert json.dumps(fp.to_dict()) == json.dumps(data)
        assert fp.machine.cpu_flags == tuple(data["machine"]["cpu_flags"])
        assert all(fp.result(k).digest == op["digest"] for k, op in data["ops"].items())
    data["machine"]["torch"]["capabilty"] = "AVX2"
    with pytest.raises(InvalidInput, match="'capabilty'"):
        fingerprint.parse(data)
    with pytest.raises(KeyError, match="no result 'torch:cpu:nope'"):
        fp.result("torch:cpu:nope")


def test_shipped_fingerprints_are_three_machines_and_the_class_table_names_causes():
    fps = classroom.load_folder(data_dir() / "fingerprints")
    assert len(fps) >= 3
    described = {repr([fp.machine.env, fp.machine.cards]) for fp in fps}
    assert len(described) == len(fps)  # genuinely different set-ups
    assert any(fp.machine.cards for fp in fps)  # a GPU machine's card
    table = classroom.class_table(fps)
    capped = next(fp for fp in fps if "ATEN_CPU_CAPABILITY" in fp.machine.env)
    dev = next(fp for fp in fps if not fp.machine.env and not fp.machine.cards)
    d = compare(dev, capped)
    assert "ATen's CPU path" in [c.name for c in d.causes] and "ATen's CPU path" in table
    assert classroom.groups(fps)["torch:cpu:randn"][fps.index(capped)] != "A" or (
        fps.index(dev) != 0
    )


def test_folder_errors(tmp_path):
    with pytest.raises(InvalidInput, match="no fingerprints"):
        classroom.load_folder(tmp_path)
    with pytest.raises(InvalidInput, match="not a folder"):
        classroom.load_folder(tmp_path / "x")


def test_lesson_claims_hold_and_lookups_are_kept():
    c = fpexplore.run("cpu_dispatch", op="randn", a="this-machine", b="aten-default")
    c.check()
    assert c.observations["results_differ"].value == len(c.data.diff.rows)
    again = fpexplore.run("cpu_dispatch", op="exp", a="aten-default", b="this-machine")
    assert again.data.a is c.data.b  # a lookup, not a new process


def test_missing_frameworks_are_named_and_the_rest_still_runs(tmp_path):
    """torch and TensorFlow hidden (as the degrade tests hide them): numpy's results alone,
    each missing library named with its fix, and compare still explains the pair."""
    from pathlib import Path

    support = Path(__file__).parent / "support"
    hidden = fresh_fingerprint(
        {"FPEXPLORE_TEST_HIDE": "torch,tensorflow", "PYTHONPATH": str(support)}, "numpy only"
    )
    libs = {op["library"] for op in hidden["ops"].values()}
    assert "numpy" in libs and not libs & {"torch", "tensorflow"}
    assert {"torch", "tensorflow"} <= set(hidden["unavailable"])
    assert all("make" in hidden["unavailable"][k] for k in ("torch", "tensorflow"))
    full = fingerprint.take("all")  # this process has every framework
    d = compare(full, hidden)
    assert not d.rows
    assert {k for k in full["ops"] if k.split(":")[0] in ("torch", "tensorflow")} <= set(d.only_a)


def test_fresh_processes_run_as_many_at_once_as_cores_and_memory_hold(monkeypatch):
    """`fresh.each` keeps the order of its items; `fresh.jobs` never goes past the cores, the
    items or what ``$FPEXPLORE_MEMORY_LIMIT`` leaves (Binder's 2 GB: one at a time)."""
    from fpexplore.dispatch import fresh

    monkeypatch.delenv(fresh.MEMORY_LIMIT_ENV, raising=False)
    assert 1 <= fresh.jobs(13) <= min(13, os.cpu_count() or 1)
    assert fresh.jobs(1) == 1
    monkeypatch.setenv(fresh.MEMORY_LIMIT_ENV, "2e9")
    assert fresh.jobs(13) == 1
    monkeypatch.setenv(fresh.MEMORY_LIMIT_ENV, str(40 * fresh.PROCESS_BYTES))
    ticks = []
    assert fresh.each(lambda x: x * x, range(7), lambda: ticks.append(1)) == [
        x * x for x in range(7)
    ]
    assert len(ticks) == 7


def test_tables_fit_a_notebook_at_1000px():
    """Every line of the class and configuration tables fits the 70 columns JupyterLab shows
    at 1000 px with the file browser open; 13 configurations get one character each."""
    from fpexplore.lessons import cpu_dispatch
    from fpexplore.result.text_table import COLUMNS

    fps = classroom.load_folder(data_dir() / "fingerprints")
    configs = {f"config-{i}": fps[i % len(fps)] for i in range(13)}
    for text in (classroom.class_table(fps), cpu_dispatch.config_table(configs)):
        assert max(len(line) for line in text.splitlines()) <= COLUMNS, text
    table = cpu_dispatch.config_table(configs).splitlines()
    head = next(r for r in table if r.startswith("result"))
    assert "123456789abcd" in head and any("ABA" in r for r in table)
