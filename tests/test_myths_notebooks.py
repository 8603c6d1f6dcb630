"""The myths table agrees with the notebooks, and with the machines' records.

Each myth is judged on a notebook section's run (`myths.SECTIONS`). The notebooks' own calls
are read from their code: every section is a call its notebook makes, at the same parameters.
Each claim a myth's verdict rests on (`Myth.reads`) is named in that notebook, or the run's
every claim is checked there. Then every section runs once, and each myth's row in the table
(`myths.judge_all`) is compared with the notebook's run: the same states for the claims it
reads, and the same verdict. Last, no "holds" or "does not hold" may be contradicted by a
shipped machine record (`myths.records`): that record's states for the claims, put in place of
this run's, must give the judge the same verdict.
"""

from __future__ import annotations

import ast
import contextlib
import json
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

import fpexplore
from fpexplore import lessons, myths
from fpexplore.params import validate_all
from fpexplore.result import Claim

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MEASURED = [m for m in myths.MYTHS if not m.not_here]


def _full(lesson: str, params) -> dict:
    """``params`` with the lesson's defaults filled in: two calls run the same when equal."""
    return validate_all(lessons.get(lesson).params, dict(params), lesson)


@cache
def _cells(notebook: str) -> tuple[ast.Module, ...]:
    cells = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]
    return tuple(ast.parse("".join(c["source"])) for c in cells if c["cell_type"] == "code")


def _constants(notebook: str) -> dict:
    """The notebook's names bound to a literal (``SEED = 42``) or to a lesson (``get(...)``)."""
    out = {}
    for tree in _cells(notebook):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                if not isinstance(target, ast.Name):
                    continue
                if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "get":
                    out[target.id] = ("lesson", ast.literal_eval(value.args[0]))
                else:
                    with contextlib.suppress(ValueError):
                        out[target.id] = ("value", ast.literal_eval(value))
    return out


UNKNOWN = object()


def _literal(node: ast.expr, names: dict):
    """A literal's value, or a name's bound literal; `UNKNOWN` for anything else."""
    if isinstance(node, ast.Name):
        kind, value = names.get(node.id, (None, UNKNOWN))
        return value if kind == "value" else UNKNOWN
    try:
        return ast.literal_eval(node)
    except ValueError:
        return UNKNOWN


def _lesson_of(call: ast.Call, names: dict) -> str | None:
    """The lesson a call runs: ``fpexplore.run("x", ...)`` or ``<lesson>.run(...)``."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "run" and isinstance(f.value, ast.Name)):
        return None
    if f.value.id == "fpexplore" and call.args:
        lesson = _literal(call.args[0], names)
        return lesson if isinstance(lesson, str) else None
    kind, lesson = names.get(f.value.id, (None, None))
    return lesson if kind == "lesson" else None


def _calls(notebook: str) -> list[tuple[str, dict, str, int]]:
    """(lesson, full parameters, the name the run is bound to, cell) of each lesson run the
    notebook's code makes; a keyword bound by a ``for`` over literals gives one per value."""
    names, out = _constants(notebook), []
    for cell, tree in enumerate(_cells(notebook)):
        loops = {
            n.target.id: _literal(n.iter, names)
            for n in ast.walk(tree)
            if isinstance(n, ast.For) and isinstance(n.target, ast.Name)
        }  # fmt: skip
        loops = {k: v for k, v in loops.items() if isinstance(v, tuple | list)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            lesson = _lesson_of(node.value, names)
            if lesson is None or not isinstance(node.targets[0], ast.Name):
                continue
            fixed, looped = {}, {}
            for kw in node.value.keywords:
                v = kw.value
                if isinstance(v, ast.Name) and v.id in loops:
                    looped[kw.arg] = loops[v.id]
                else:
                    fixed[kw.arg] = _literal(v, names)
            if UNKNOWN in fixed.values() or None in fixed:  # a value only the run knows
                continue
            combos = [{}]
            for k, values in looped.items():
                combos = [{**c, k: v} for c in combos for v in values]
            for extra in combos:
                params = _full(lesson, {**fixed, **extra})
                out.append((lesson, params, node.targets[0].id, cell))
    return out


def _section_call(myth: myths.Myth) -> tuple[str, dict, str, int]:
    lesson, params = myths.SECTIONS[myth.section]
    want = _full(lesson, params)
    found = [c for c in _calls(myth.notebook) if c[0] == lesson and c[1] == want]
    assert found, (myth.number, myth.section, "not a call of", myth.notebook)
    return found[0]


def test_the_extractor_reads_a_loop_and_a_named_lesson():
    """The reader of the notebooks' calls: 06's loop over three ops, 09's ``lesson.run()``,
    02's ``seed=SEED``."""
    ops = {c[1]["op"] for c in _calls("06_tensorflow_vs_pytorch.ipynb")}
    assert {"control_flow", "higher_order", "tolerances", "autograd", "lstm"} <= ops
    nine = _calls("09_libtorch_vs_pytorch.ipynb")
    assert ("libtorch_vs_pytorch", _full("libtorch_vs_pytorch", {})) in [c[:2] for c in nine]
    two = [c for c in _calls("02_rng_seeds.ipynb") if c[2] == "c"]
    assert two[0][1]["seed"] == 42 and two[0][1]["n"] == 1000


def test_every_section_is_a_call_its_notebook_makes():
    for name, (lesson, _) in myths.SECTIONS.items():
        myth = next((m for m in myths.MYTHS if m.section == name), None)
        assert myth is not None, f"section {name!r} judges no myth"
        _section_call(myth)
        assert lessons.get(lesson).notebook == myth.notebook


def test_every_myth_is_judged_on_its_notebooks_run():
    for m in myths.MYTHS:
        assert m.section in myths.SECTIONS, m.number
        lesson, params = myths.SECTIONS[m.section]
        assert (m.lesson, dict(m.params)) == (lesson, dict(params)), m.number
    with pytest.raises(ValueError, match="not the run of"):
        replace(myths.MYTHS[0], params={"n": 1000})


def _filtered(notebook: str, key: str) -> bool:
    """Whether the notebook picks ``key`` from a run's claims by its ending or beginning
    (``[k for k in c.claims if k.endswith("_emulated")]``)."""
    for tree in _cells(notebook):
        for comp in ast.walk(tree):
            if not isinstance(comp, ast.ListComp | ast.GeneratorExp | ast.SetComp):
                continue
            for gen in comp.generators:
                if not (isinstance(gen.iter, ast.Attribute) and gen.iter.attr == "claims"):
                    continue
                for test in gen.ifs:
                    f = test.func if isinstance(test, ast.Call) else None
                    if isinstance(f, ast.Attribute) and f.attr in ("endswith", "startswith"):
                        part = _literal(test.args[0], {})
                        if isinstance(part, str) and getattr(key, f.attr)(part):
                            return True
    return False


@pytest.mark.parametrize("myth", MEASURED, ids=lambda m: f"myth{m.number}")
def test_the_notebook_names_the_claims_its_myth_reads(myth):
    """Each claim the verdict rests on is named in the notebook's code, or the section's run
    has every claim checked in the cell that makes it."""
    assert myth.reads, myth.number
    _, _, var, cell = _section_call(myth)
    tree = _cells(myth.notebook)[cell]
    checks_all = any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and isinstance(n.func.value, ast.Name)
        and n.func.value.id == var
        and n.func.attr == "check"
        and not n.args
        for n in ast.walk(tree)
    ) or f"{var}.claims.items()" in ast.unparse(tree)
    named = {
        n.value
        for t in _cells(myth.notebook)
        for n in ast.walk(t)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }
    missing = [k for k in myth.reads if k not in named and not _filtered(myth.notebook, k)]
    assert checks_all or not missing, (myth.number, myth.notebook, missing)


@cache
def _run(lesson: str, frozen: tuple) -> fpexplore.Comparison:
    """One run of each distinct full parameter set, kept for the module."""
    return lessons.run(lesson, **dict(frozen))


def _run_at(lesson: str, params) -> fpexplore.Comparison:
    return _run(lesson, tuple(sorted(_full(lesson, params).items())))


@pytest.fixture(scope="module")
def table():
    """The table's default-case rows, each from its own run through `myths.judge_all`."""
    pytest.importorskip("torch")
    alone = tuple(replace(m, cases=()) for m in myths.MYTHS)
    rows = myths.judge_all(alone, run=lambda lesson, **p: _run_at(lesson, p))
    return {v.myth.number: v for v in rows}


@pytest.mark.slow
@pytest.mark.parametrize("myth", MEASURED, ids=lambda m: f"myth{m.number}")
def test_the_table_row_is_what_the_notebooks_run_decides(table, myth):
    """The notebook's call, run at the parameters read from its code: the claims the myth
    reads are decided there as in the table's run, and judge the same verdict."""
    lesson, params, _, _ = _section_call(myth)
    shown = _run_at(lesson, params)
    row = table[myth.number]
    ran = _run_at(myth.lesson, myth.params)
    missing = [k for k in myth.reads if k not in shown.claims]
    assert not missing, (myth.number, missing)
    assert {k: shown.claims[k].state for k in myth.reads} == {
        k: ran.claims[k].state for k in myth.reads
    }
    assert myths.judge(myth, shown).verdict == row.verdict, (myth.number, row.why)
    assert row.verdict != myths.NOT_MEASURED or not any(
        shown.claims[k].holds is not None for k in myth.reads
    ), (myth.number, row.why)


def _as_recorded(comparison, lesson: str, states: dict) -> tuple[fpexplore.Comparison, dict]:
    """``comparison`` with a record's decided states in place of its own, and the claims
    whose state that changes."""
    decided = {
        k: states[(lesson, k)]
        for k in comparison.claims
        if states.get((lesson, k)) in ("holds", "fails")
    }
    claims = {**comparison.claims}
    for k, s in decided.items():
        claims[k] = Claim(claims[k].text, s == "holds")
    changed = {k for k, s in decided.items() if comparison.claims[k].state != s}
    return replace(comparison, claims=claims), changed


@pytest.mark.slow
@pytest.mark.parametrize("myth", MEASURED, ids=lambda m: f"myth{m.number}")
def test_no_verdict_contradicts_a_machine_record(table, myth):
    """A "holds" or "does not hold" stands only where every shipped record's states for the
    claims it reads give the judge that verdict too; else the row must scope it."""
    row = table[myth.number]
    if row.verdict not in (myths.HOLDS, myths.FAILS):
        return
    ran = _run_at(myth.lesson, myth.params)
    assert myths.records(), "no machine records found"
    for name, states in myths.records():
        there, changed = _as_recorded(ran, myth.lesson, states)
        if not changed:
            continue
        try:
            verdict = myth.judge(there)[0]
        except myths.NotMeasured:
            continue
        assert verdict == row.verdict, (myth.number, name, sorted(changed), row.why)


def test_records_are_the_shipped_machines_and_gpu_claims():
    names = [name for name, _ in myths.records()]
    root = Path(__file__).resolve().parents[1] / "data"
    fleet = sorted(p.parent.name for p in root.glob("machines/*/claims.json"))
    gpu = sorted(p.stem for p in root.glob("gpu/claims/*.json"))
    assert fleet and gpu and names == fleet + gpu
    states = dict(myths.records())
    assert states[fleet[0]][("summation_order", "torch_emulated")] == "holds"


def test_a_record_that_breaks_a_claim_scopes_the_verdict(monkeypatch):
    """A record where a claim the verdict reads went the other way makes the row "depends",
    naming the machine and the claim; the same record agreeing leaves the verdict."""
    from test_myths import _stand_in

    myth = next(m for m in myths.MYTHS if m.number == 6)
    c = _stand_in(myth, True)
    monkeypatch.setattr(myths, "records", lambda: ())
    alone = myths.judge(myth, c)
    assert alone.verdict in (myths.HOLDS, myths.FAILS)
    key = next(k for k in myth.reads if k in c.claims)
    agree = {("train_vs_eval", k): "holds" for k in c.claims}
    broke = {**agree, ("train_vs_eval", key): "fails"}
    monkeypatch.setattr(myths, "records", lambda: (("box-a", agree),))
    assert myths.judge(myth, c).verdict == alone.verdict
    monkeypatch.setattr(myths, "records", lambda: (("box-a", agree), ("box-b", broke)))
    v = myths.judge(myth, c)
    assert v.verdict == myths.DEPENDS, v
    assert f"on box-b (recorded: {key} fails)" in v.why and "box-a" not in v.why
    assert v.why.startswith(f"{alone.verdict} in this run")
    assert "recorded on box-b" in v.number
