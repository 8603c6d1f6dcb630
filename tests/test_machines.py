"""The fleet of real machines (``data/machines``) and ``fpexplore verify``, which makes their
claims records: the rule that a claim failed on a real machine is not universal, the loader
(both record shapes, and clear errors on bad files), the class table, and the command."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fpexplore import cli, machines, verify
from fpexplore.dispatch import classroom
from fpexplore.errors import InvalidInput, InvalidParameter
from fpexplore.lessons import all_lessons
from fpexplore.paths import data_dir

FLEET = data_dir() / "machines"
SHIPPED = sorted(p for p in FLEET.iterdir() if p.is_dir())


def _claim(state: str, text: str = "a claim") -> dict:
    holds = {"holds": True, "fails": False}.get(state)
    return {"text": text, "holds": holds, "state": state, "reason": ""}


def _run(lesson: str, params: dict, error: str | None = None, **claims: str) -> dict:
    return {
        "lesson": lesson,
        "params": params,
        "error": error,
        "observations": {},
        "claims": {k: _claim(s, f"{k} text") for k, s in claims.items()},
    }


def _machine(root: Path, name: str, runs: list[dict], old: bool = False) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    if old:  # the shape of benchmarks/gpu_claims_run.py: no format, no label
        record = {"paths": {}, "runs": runs, "provenance": {"card": "no CUDA device"}}
    else:
        record = {
            "format": machines.FORMAT,
            "version": machines.VERSION,
            "paths": {},
            "runs": runs,
            "provenance": {"label": f"{name} label"},
        }
    (folder / machines.CLAIMS_FILE).write_text(json.dumps(record))
    return folder


# ------------------------------------------------------------------------------- the rule
def test_claims_that_failed_on_a_real_machine_are_not_declared_for_every_machine():
    """A claim is universal only when it held on every shipped real machine that had its
    parts: one that failed anywhere must be scoped with ``applies`` or be an observation."""
    problems = machines.unscoped_failures(machines.load_all(), all_lessons())
    assert not problems, "\n".join(problems)


def test_the_rule_names_the_lesson_claim_machine_and_fix(tmp_path):
    lessons = all_lessons()
    lesson = next(n for n, ls in lessons.items() if ls.claims)
    key = next(iter(lessons[lesson].claims))
    _machine(tmp_path, "broke-it", [_run(lesson, {"n": 3}, **{key: "fails"})])
    _machine(tmp_path, "held-it", [_run(lesson, {}, **{key: "holds"})], old=True)
    fleet = machines.load_all(tmp_path)
    [problem] = machines.unscoped_failures(fleet, lessons)
    for word in (lesson, repr(key), "broke-it", "n=3", f"{key} text", "applies=", "observation"):
        assert word in problem, word
    assert "held-it" not in problem
    spec = replace(lessons[lesson].claims[key], applies="the machines where it held")
    scoped = {lesson: replace(lessons[lesson], claims={**lessons[lesson].claims, key: spec})}
    assert machines.unscoped_failures(fleet, scoped) == []
    # a key that is no claim (an observation now, or gone) and a lesson that is gone: no rule
    gone = _machine(tmp_path / "more", "old", [_run("no_such_lesson", {}, x="fails")])
    assert machines.unscoped_failures(machines.load_all(gone.parent), lessons) == []


# --------------------------------------------------------------------------- the shipped fleet
def test_every_shipped_machine_has_a_fingerprint_and_a_claims_record():
    assert len(SHIPPED) >= 2
    assert machines.names() == [p.name for p in SHIPPED]
    for m in machines.load_all():
        assert m.fingerprint is not None, f"{m.name} has no {machines.FINGERPRINT_FILE}"
        assert m.runs and m.label, m.name
        assert sum(machines.counts(m.runs).values()) > 0, m.name
    text = (FLEET / "README.md").read_text(encoding="utf-8")
    assert all(f"## {p.name}" in text for p in SHIPPED), "README.md describes every machine"


def test_both_record_shapes_are_read():
    old = machines.load_claims(FLEET / "amd-epyc-zen3" / machines.CLAIMS_FILE)
    assert "format" not in json.loads((FLEET / "amd-epyc-zen3/claims.json").read_text())
    assert old["format"] == machines.FORMAT and old["runs"]
    amd = machines.load("amd-epyc-zen3")
    assert amd.label == amd.fingerprint.label  # the old shape has no label of its own
    states = amd.states()
    assert states[("summation_order", "offset_same_bits")] == "fails"  # the record as shipped


def test_verdicts_combine_runs_and_machines(tmp_path):
    _machine(
        tmp_path,
        "a",
        [
            _run("l", {"n": 1}, k="holds", j="holds"),
            _run("l", {"n": 2}, k="fails", j="not checked"),
        ],
    )
    _machine(tmp_path, "b", [_run("l", {}, k="holds", j="not checked")], old=True)
    _machine(tmp_path, "c", [_run("l", {}, error="ValueError: boom")])
    v = machines.verdicts(machines.load_all(tmp_path))
    assert (v[("l", "k")].held, v[("l", "k")].failed) == (("b",), ("a",))
    assert v[("l", "j")].held == ("a",) and v[("l", "j")].not_checked == ("b",)
    [f] = v[("l", "k")].failures
    assert (f.machine, f.params, f.text) == ("a", {"n": 2}, "k text")
    table = machines.broken_table(machines.load_all(tmp_path), all_lessons())
    assert "l.k: FAILS on a; holds on b" in table and "l.j" not in table


# ------------------------------------------------------------------------------- robustness
@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "not a readable JSON claims record"),
        ("[" * 100_000 + "]" * 100_000, "not a readable JSON claims record"),
        ("[1, 2]", "not a claims record"),
        ('{"format": "fpexplore-fingerprint", "runs": []}', "format 'fpexplore-fingerprint'"),
        ('{"format": "fpexplore-claims", "version": 9, "runs": []}', "version 9"),
        ('{"runs": {}}', "a list 'runs'"),
        ('{"runs": [{"lesson": 3}]}', "run 0 is not an object with a 'lesson'"),
        ('{"runs": [{"lesson": "x", "params": {}}]}', "'params' and 'claims'"),
        ('{"runs": [{"lesson": "x", "params": {}, "claims": {}, "error": 5}]}', "'error'"),
        (
            '{"runs": [{"lesson": "x", "params": {}, "claims": {"k": {"state": "maybe"}}}]}',
            "claim 'k' has no 'state'",
        ),
    ],
)
def test_a_bad_claims_record_is_a_clear_error_naming_its_file(tmp_path, text, words):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / machines.CLAIMS_FILE).write_text(text)
    with pytest.raises(InvalidInput) as exc:
        machines.load_all(tmp_path)
    assert words in str(exc.value) and str(folder / machines.CLAIMS_FILE) in str(exc.value)
    found, why = machines.try_load_all(tmp_path)
    assert found == [] and words in why


def test_missing_folders_and_files(tmp_path):
    assert machines.names(tmp_path / "none") == [] and machines.load_all(tmp_path / "none") == []
    (tmp_path / "empty").mkdir()  # no claims record: not a machine
    assert machines.names(tmp_path) == []
    with pytest.raises(InvalidInput, match="no claims record at"):
        machines.load(tmp_path / "empty")
    with pytest.raises(InvalidInput, match="not a machine's folder"):
        machines.load("no-such-machine", tmp_path)
    folder = _machine(tmp_path, "m", [_run("l", {}, k="holds")])
    (folder / machines.FINGERPRINT_FILE).write_text('{"format": "x"}')
    with pytest.raises(InvalidInput, match="not an fpexplore fingerprint"):
        machines.load("m", tmp_path)


# --------------------------------------------------------------------- the class table, pages
def test_the_class_table_and_the_kit_show_which_machine_broke_which_claim(tmp_path):
    from fpexplore import series
    from fpexplore.workshop import pages

    shipped = classroom.shipped()
    labels = [fp.label for fp in shipped]
    for m in machines.load_all():
        assert m.fingerprint.label in labels
    fleet = [
        *machines.load_all(),
        machines.Machine(
            "x",
            "x",
            machines.check_claims(
                {"runs": [_run("summation_order", {"n": 5}, numpy_emulated="fails")]}
            ),
        ),
    ]
    table = classroom.class_table(shipped, machines=fleet, lessons=all_lessons())
    assert "claims on real machines:" in table
    assert "summation_order.numpy_emulated: FAILS on x" in " ".join(table.split())
    assert "claims on real machines" not in classroom.class_table(shipped)
    # the facilitator notes of the notebook that narrates the lesson, from the records
    root = tmp_path / "root"
    (root / "data/fingerprints").mkdir(parents=True)
    (root / "data/gpu").mkdir(parents=True)
    _machine(
        root / "data/machines", "x", [_run("summation_order", {"n": 5}, numpy_emulated="fails")]
    )
    nb = next(n for n in series.NOTEBOOKS if n.lesson == "summation_order")
    page = pages.reference_numbers(nb, root)
    assert "summation_order.numpy_emulated" in page and "numpy_emulated text" in page
    assert "n=5" in page


def test_the_report_lists_the_fleet(tmp_path, monkeypatch):
    from fpexplore import machines, report

    monkeypatch.setattr(machines, "folder", lambda: tmp_path / "machines")
    _machine(tmp_path / "machines", "x", [_run("l", {"n": 5}, k="fails", j="holds")])
    fleet = report._fleet()
    assert fleet["machines"][0][0] == "x (x label)" and "1 fails" in fleet["machines"][0][-1]
    assert fleet["broken"][0][:2] == ("l.k", "x") and not fleet["error"]
    (tmp_path / "machines/x/claims.json").write_text("{")
    assert "not a readable JSON" in report._fleet()["error"]


# ------------------------------------------------------------------------------ fpexplore verify
def _fake_claims(runs: list[dict]):
    seen: list = []

    def run_claims(plan, env, timeout=0.0):
        seen.append(list(plan))
        return {"paths": {"torch_capability": "AVX2", "onednn_reason": "why"}, "runs": runs}

    return seen, run_claims


def test_verify_records_provenance_and_the_summary_names_failures(monkeypatch):
    runs = [
        _run("summation_order", {"n": 1}, a="holds", b="fails"),
        _run("summation_order", {"n": 2}, b="fails"),
        _run("tf32", {"device": "cpu"}, error="RuntimeError: boom"),
    ]
    seen, fake = _fake_claims(runs)
    monkeypatch.setattr("fpexplore.testing.runner.run_claims", fake)
    monkeypatch.setattr(verify, "cards", lambda: [])
    record = verify.verify("my box", command="the command")
    assert machines.check_claims(record)["runs"] == runs
    assert record["counts"] == {"holds": 1, "fails": 2, "not checked": 0}
    prov = record["provenance"]
    assert prov["label"] == "my box" and prov["command"] == "the command"
    assert prov["card"] == "no CUDA device" and prov["versions"]["numpy"]
    for key in ("date", "cpu", "vendor", "cpu_flags", "cores"):
        assert key in prov, key
    assert not any(p.get("device") == "cuda" for _, p in seen[0])
    text = verify.summary(record)
    assert "claims: 1 hold, 2 fail, 0 not checked" in text
    assert "FAILS summation_order b at (n=1); (n=2):\n  b text" in text
    assert "ERROR tf32 (device=cpu): RuntimeError: boom" in text
    assert "torch_capability AVX2" in text and "why" not in text
    # with a card: the CUDA runs join the plan
    monkeypatch.setattr(verify, "cards", lambda: ["Some GPU"])
    assert verify.verify()["provenance"]["card"] == "Some GPU"
    assert all((n, dict(p)) in seen[1] for n, p in verify.CUDA_EXTRA)


@pytest.mark.parametrize(
    ("kw", "named"),
    [
        ({"label": 5}, "'label'"),
        ({"label": "a\nb"}, "'label'"),
        ({"runs": "summation_order"}, "'runs'"),
        ({"runs": [("summation_order",)]}, "'runs'"),
        ({"runs": [(3, {})]}, "'runs'"),
        ({"timeout": 0}, "'timeout'"),
        ({"timeout": True}, "'timeout'"),
    ],
)
def test_verify_refuses_bad_arguments_before_running(kw, named, monkeypatch):
    monkeypatch.setattr("fpexplore.testing.runner.run_claims", None)  # never reached
    with pytest.raises(InvalidParameter, match=named):
        verify.verify(**kw)


def test_verify_on_one_tiny_lesson_run_in_a_fresh_process():
    record = verify.verify("t", runs=[("summation_order", {"n": 1})])
    [run] = machines.check_claims(record)["runs"]
    assert run["lesson"] == "summation_order" and run["error"] is None
    assert sum(record["counts"].values()) == len(run["claims"]) > 0
    assert "torch_threads" in record["paths"] or "onednn" in record["paths"]


def _main(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_command_writes_the_record_and_exits_by_what_failed(tmp_path, monkeypatch, capsys):
    out = tmp_path / "claims.json"
    runs = [_run("summation_order", {"n": 1}, a="holds", b="fails")]
    monkeypatch.setattr("fpexplore.testing.runner.run_claims", _fake_claims(runs)[1])
    monkeypatch.setattr(verify, "cards", lambda: [])
    code, text, _ = _main(capsys, "verify", "--out", str(out), "--label", "lab 3")
    assert code == 1 and "1 hold, 1 fail" in text and f"wrote {out}" in text
    record = machines.load_claims(out)
    assert record["provenance"]["label"] == "lab 3"
    assert record["provenance"]["command"] == f"fpexplore verify --out {out} --label 'lab 3'"
    runs[0]["claims"]["b"] = _claim("not checked")
    code, text, _ = _main(capsys, "verify")
    assert code == 0 and "no record written" in text


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--out", "/no/such/folder/claims.json"], "'--out'"),
        (["--out", "."], "'--out'"),
        (["--out", ""], "'--out'"),
        (["--label", ""], "'--label'"),
        (["--label", "a\nb"], "'--label'"),
        (["--bogus"], "--bogus"),
    ],
)
def test_bad_verify_arguments_exit_2_with_one_line(argv, named, monkeypatch, capsys):
    def never(*a, **k):
        raise AssertionError("verify ran")

    monkeypatch.setattr(verify, "verify", never)
    code, out, err = _main(capsys, "verify", *argv)
    assert code == 2 and out == "" and named in err
    assert len(err.strip().splitlines()) == 1, err


def test_findings_read_one_finding_across_the_fleet(tmp_path):
    """Claims with their state, observations with their value, each machine once per key."""
    from fpexplore import machines

    _machine(tmp_path, "x", [_run("l", {"n": 5}, k="fails", j="holds")])
    fleet = machines.load_all(tmp_path)
    lines = machines.findings(fleet, "l", ("k", "nothing"))
    assert len(lines) == 1 and lines[0].startswith("x · k: [fails]")
    real = machines.findings(machines.load_all(), "summation_order", ("offset_same_bits",))
    assert any("amd-epyc-zen3" in line and "[fails]" in line for line in real)
    # a key this version no longer states says so beside the old verdict
    from fpexplore.lessons import get

    lesson = get("summation_order")
    stated = {*lesson.claims, *lesson.observations}
    real = machines.findings(machines.load_all(), "summation_order", ("offset_same_bits",), stated)
    assert real and all("no longer states" in line for line in real), real
    now = machines.findings(machines.load_all(), "summation_order", ("blas_offset_bits",), stated)
    assert now and not any("no longer states" in line for line in now)


def test_a_retired_claim_is_shown_as_history():
    """offset_same_bits failed on the AMD machines and became an observation: the class table
    still shows the old failure, marked as no longer a claim."""
    from fpexplore import machines

    fleet = machines.load_all()
    assert "offset_same_bits (no longer a claim): FAILS on amd-epyc-zen3" in (
        machines.broken_table(fleet, all_lessons())
    )
    assert all(
        "(no longer a claim)" in row[0] for row in machines.broken_rows(fleet, all_lessons())
    )
