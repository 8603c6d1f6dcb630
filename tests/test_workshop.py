"""The workshop kit: plans timed from the map, handouts and facilitator notes generated from the
notebooks and the recorded runs, slides by `fpexplore export`, the pre-workshop check, and
exercise checks that Run All keeps collapsed."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from fpexplore import cli, myths, series, workshop
from fpexplore.workshop import answers, check, pages, plan

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell: dict) -> str:
    return "".join(cell["source"])


# --- timings: one declaration --------------------------------------------------------------


def test_the_map_lists_every_notebook_of_the_folder():
    files = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    assert [nb.file for nb in workshop.NOTEBOOKS] == files
    for nb in workshop.NOTEBOOKS:
        assert 0 < nb.core <= nb.minutes


@pytest.mark.parametrize("p", workshop.PLANS, ids=lambda p: p.title.split(" (")[0])
def test_each_plan_fills_its_length_from_the_map(p):
    p.check()
    assert sum(s.minutes for s in p.slots) == p.minutes
    for s in p.slots:
        for key in s.notebooks:
            nb = series.notebook(key)
            assert s.time in ("core", "full")
            assert (nb.minutes if s.time == "full" else nb.core) <= s.minutes
    # the half-day plan is 3.5 hours, the short ones 2 hours and 90 minutes: the titles say so
    assert {p.minutes for p in workshop.PLANS} == {90, 120, 210}


def test_a_plan_that_overruns_is_refused():
    bad = plan.Plan("short", 20, (plan.Slot("all of 01", ("01",), time="full"),))
    with pytest.raises(ValueError, match=r"sum to 30 min, not 20"):
        bad.check()


def test_plan_tables_run_from_the_map():
    short = workshop.PLANS[0]
    html = workshop.plan_html(short)
    ends = [int(m) for m in re.findall(r"<td style='white-space:nowrap'>\d+–(\d+)</td>", html)]
    assert ends[-1] == short.minutes
    assert ends == sorted(ends)


def test_the_index_renders_the_map_and_plans_from_the_package():
    cells = _cells(NOTEBOOKS / "index.ipynb")
    code = "\n".join(_src(c) for c in cells if c["cell_type"] == "code")
    text = "\n".join(_src(c) for c in cells if c["cell_type"] == "markdown")
    assert "workshop.map_html" in code and "workshop.plan_html" in code and "check()" in code
    assert "| 0–10 |" not in text  # no hand-typed plan table
    assert re.search(r"\b\d+ min\b", text) is None  # no typed estimate beside the map
    for words in ("fpexplore export", "fpexplore doctor --workshop", "make slides"):
        assert words in text


def test_binder_placeholder_is_said_to_be_one(monkeypatch):
    from fpexplore import paths

    monkeypatch.setattr(paths, "BINDER_URL", paths.BINDER_PLACEHOLDER)
    assert "not published yet" in workshop.binder_note()
    assert paths.BINDER_PLACEHOLDER not in workshop.binder_note()
    monkeypatch.setattr(paths, "BINDER_URL", "https://example.org/binder")
    assert workshop.binder_note() == "Binder: https://example.org/binder"


# --- Run All never reveals an answer ---------------------------------------------------------


def _exercise_checks():
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        cells = _cells(path)
        for i, c in enumerate(cells):
            if c["cell_type"] == "markdown" and pages.ANSWER.search(_src(c)):
                j = next(k for k in range(i + 1, len(cells)) if cells[k]["cell_type"] == "code")
                yield path.name, j, _src(cells[j])


def test_every_exercise_check_prints_only_inside_a_collapsed_element():
    checks = list(_exercise_checks())
    assert len({name for name, *_ in checks}) == 14
    for name, j, src in checks:
        tree = ast.parse(src)
        body = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom)]
        assert len(body) == 1 and isinstance(body[0], ast.With), (name, j)
        call = body[0].items[0].context_expr
        assert isinstance(call, ast.Call) and getattr(call.func, "id", "") == "hidden_answer"


def test_hidden_answer_collapses_what_the_check_prints(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    with answers.hidden_answer():
        print("the answer is 65504")
    (bundle,) = shown
    assert "<details>" in bundle["text/html"] and "<details open" not in bundle["text/html"]
    assert "65504" in bundle["text/html"] and "65504" not in bundle["text/plain"]


def test_hidden_answer_shows_a_failing_check_collapsed_and_raises(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    with pytest.raises(AssertionError), answers.hidden_answer():
        print("went wrong")
        raise AssertionError
    assert "went wrong" in shown[0]["text/html"]


def test_run_all_of_notebook_00_shows_no_answer():
    """Executed top to bottom, the exercise checks leave no printed text, only the closed
    element (notebook 00 needs nothing but numpy and mpmath)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOKS / "00_floating_point_formats.ipynb", as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    checked = 0
    for cell in nb.cells:
        if cell.cell_type == "code" and "hidden_answer()" in cell.source:
            checked += 1
            assert not [o for o in cell.outputs if o.output_type == "stream"], cell.source
            htmls = [o.data["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]
            assert htmls and all(h.startswith("<details><summary>") for h in htmls)
    assert checked == 3


# --- handouts, facilitator notes, slides --------------------------------------------------------


@pytest.mark.parametrize("nb", workshop.NOTEBOOKS, ids=lambda nb: nb.key)
def test_handout_is_generated_from_the_notebook(nb):
    path = NOTEBOOKS / nb.file
    page = pages.handout_html(nb)
    ex = pages.exercises(path)
    assert ex, nb.file
    for x in ex:  # every question, no answer
        first = re.sub(r"[`*]", "", pages.NUMBER.sub("", x.question)).split()[:4]
        assert all(w.split("`")[0] in re.sub(r"<[^>]+>", "", page) for w in first if w.isalpha())
        assert x.answer[:60] not in page
    assert "What you'll see" in page and page.count("<tr><td><code>") == 3
    assert "not published yet" in page or "Binder: http" in page
    assert pages.learn(path)


@pytest.mark.parametrize("nb", workshop.NOTEBOOKS, ids=lambda nb: nb.key)
def test_facilitator_notes_hold_the_answers_and_what_each_answer_cell_printed(nb):
    page = pages.facilitator_html(nb)
    ex = pages.exercises(NOTEBOOKS / nb.file)
    for x in ex:
        assert "hidden_answer" in x.check
    assert page.count("<b>Answer.</b>") == len(ex)
    # every exercise has its recorded print (the shipped record covers the whole series)
    assert page.count("<b>Expected: what this cell printed on ") >= len(ex), nb.key
    assert "fingerprinted on the reference machines" not in page  # no fingerprint tables


def test_facilitator_notes_render_a_record_of_the_answer_cells(tmp_path):
    """The expected numbers are read from data/machines/*/answers.json: change it, the page
    changes; a cell that raised says so."""
    from fpexplore.workshop import printed

    nb = plan.notebook("00")
    n = len(pages.exercises(NOTEBOOKS / nb.file))
    folder = tmp_path / "data/machines/m1"
    folder.mkdir(parents=True)
    got = [{"printed": f"answer {i} prints 0.{i}25 ULP", "error": ""} for i in range(n)]
    got[-1] = {"printed": "", "error": "AssertionError: went wrong"}
    rec = {"label": "m1", "notebooks": {"00": got}}
    (folder / printed.FILE).write_text(json.dumps(rec))
    page = pages.facilitator_html(nb, NOTEBOOKS, tmp_path)
    assert "answer 0 prints 0.025 ULP" in page and "printed on m1" in page
    assert "AssertionError: went wrong" in page
    empty = pages.facilitator_html(nb, NOTEBOOKS, tmp_path / "none")
    assert "fpexplore record answers" in empty and "printed on" not in empty


def _printed_by_running(nb_key: str, number: int, monkeypatch) -> str:
    """Run exercise ``number``'s check cell of notebook ``nb_key`` (after the notebook's
    imports) and return what it printed into its collapsed element."""
    from fpexplore.workshop import check as _check  # noqa: F401  (the package, loaded)

    path = NOTEBOOKS / plan.notebook(nb_key).file
    imports = [
        ast.unparse(node)
        for c in _cells(path) if c["cell_type"] == "code"
        for node in ast.parse(_src(c)).body if isinstance(node, ast.Import | ast.ImportFrom)
    ]  # fmt: skip
    shown: list[dict] = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    namespace: dict = {}
    exec("\n".join(imports), namespace)
    exec(pages.exercises(path)[number - 1].check, namespace)
    (bundle,) = shown
    from fpexplore.workshop import printed

    return printed.printed_by({"outputs": [{"output_type": "display_data",
                                            "data": bundle}]})["printed"]  # fmt: skip


@pytest.mark.parametrize("key, number", [("00", 3), ("00", 1), ("06", 2)])
def test_the_notes_hold_what_the_answer_cell_prints(key, number, monkeypatch):
    """Exercises whose answer prints exact numbers (the same on every machine): the notes'
    expected text is what running the answer's cell prints now."""
    import html

    text = _printed_by_running(key, number, monkeypatch)
    assert text.strip()
    page = html.unescape(pages.facilitator_html(plan.notebook(key)))
    assert text in page


def test_the_kit_index_lists_every_page(tmp_path):
    index = pages.build(tmp_path, ["00", "01"])
    text = index.read_text()
    for name in ("00-handout.html", "01-facilitator.html"):
        assert name in text and (tmp_path / name).exists()
    assert "02-handout" not in text


def test_slides_cover_every_notebook_with_a_live_control(tmp_path, monkeypatch):
    """`workshop --slides` writes a slide for every notebook, 00 and 10 included, each with an
    embedded control over its pre-computed views."""
    from fpexplore.workshop import slides

    made = []

    def fake(nb, notebooks, run=None):
        made.append(nb.key)
        return "<html></html>"

    monkeypatch.setattr(slides, "slide", fake)
    assert cli.main(["workshop", "--out", str(tmp_path), "--only", "00,10,13", "--slides"]) == 0
    assert made == ["00", "10", "13"]
    index = (tmp_path / "index.html").read_text()
    assert all(f"{k}-slides.html" in index for k in made)


def test_slide_00_switches_between_the_values_the_notebook_shows(tmp_path):
    from fpexplore.workshop import slides

    page = slides.slide(plan.notebook("00"), NOTEBOOKS)
    assert "widget-view+json" in page and "widget-state+json" in page
    shown = slides.formats_slide(NOTEBOOKS)
    assert shown["labels"][:2] == ["0.1", "1/3"] and len(shown["views"]) == len(shown["labels"])


@pytest.mark.parametrize(
    "nb", [nb for nb in workshop.NOTEBOOKS if nb.lesson], ids=lambda nb: nb.key
)
def test_a_lesson_slide_runs_the_notebooks_parameters_and_switches_one(nb):
    from fpexplore.workshop import slides

    p = slides.plan(nb, NOTEBOOKS)
    calls = slides.lesson_calls(nb, NOTEBOOKS)
    assert calls, nb.key  # read from the notebook
    assert all(p.params[k] == v for k, v in calls[0].items())
    assert p.vary and len(p.values) >= 2 and p.values[0] == p.params[p.vary]
    for section, (lesson, params) in myths.SECTIONS.items():  # the myths' runs agree
        if section.startswith(nb.key) and lesson == nb.lesson and params == calls[0]:
            assert all(p.params[k] == v for k, v in params.items())


def test_slide_01_uses_the_notebooks_n():
    from fpexplore.workshop import slides

    p = slides.plan(plan.notebook("01"), NOTEBOOKS)
    assert p.params["n"] == myths.SECTIONS["01 the motivating sum"][1]["n"] == 10_000
    assert p.vary == "distribution" and p.values[0] == "allequal"


def _claims(**states):
    from fpexplore.result import Claim

    return {k: Claim(f"{k} text", v, "" if v else "why") for k, v in states.items()}


def test_a_slides_headline_is_never_a_failing_claim():
    from fpexplore.result import Comparison
    from fpexplore.workshop import slides

    c = Comparison(lesson="x", params={}, truth=None, outcomes=(),
                   claims=_claims(broken=False, unknown=None, fine=True))  # fmt: skip
    assert slides.headline(c) == ("fine", "fine text")
    none = Comparison(lesson="x", params={}, truth=None, outcomes=(),
                      claims=_claims(broken=False))  # fmt: skip
    assert slides.headline(none) == ("", "")


def test_slide_12_compares_this_machine_with_a_configuration_that_differs(monkeypatch):
    from types import SimpleNamespace

    from fpexplore.lessons import cpu_dispatch
    from fpexplore.workshop import slides

    monkeypatch.setattr(cpu_dispatch, "configs_here", lambda: (cpu_dispatch.HERE, "p", "q"))
    differ = {"p": False, "q": True}

    def run(lesson, params):
        assert params["a"] != params["b"]  # never the machine against itself
        rows = [1] if differ[params["b"]] else []
        data = SimpleNamespace(diff=SimpleNamespace(rows=rows))
        return SimpleNamespace(claims=_claims(ok=True), observations={}, data=data)

    nb = plan.notebook("12")
    p = slides.plan(nb, NOTEBOOKS)
    shown = slides.dispatch_slide(nb, p, run, view=lambda lesson, c: "<p>view</p>")
    assert shown["start"] == 1 and shown["params"]["b"] == "q"
    assert "1 of the 2 configurations" in shown["note"]
    assert all(label != "this-machine vs this-machine" for label in shown["labels"])
    differ["q"] = False
    none = slides.dispatch_slide(nb, p, run, view=lambda lesson, c: "<p>view</p>")
    assert "None of the 2 configurations" in none["note"] and none["headline"][0] == ""


def test_make_slides_target_builds_the_kit():
    text = (ROOT / "Makefile").read_text()
    rule = re.search(r"^slides:.*\n((?:\t.*\n)+)", text, re.M)
    assert rule and "fpexplore workshop" in rule.group(1) and "--slides" in rule.group(1)


# --- fpexplore doctor --workshop -----------------------------------------------------------------


class _Info:
    def __init__(self, name, available, devices=("cpu",), fix=""):
        self.name, self.available, self.devices, self.fix = name, available, devices, fix


def test_workshop_check_says_what_runs_and_what_cannot_with_the_fix():
    infos = [_Info(n, True) for n in ("numpy", "torch", "torchvision", "tensorflow", "libtorch")]
    infos.append(_Info("djl", False, fix="make djl"))
    lines: list[str] = []
    rc = check.report(infos, probe_s=check.REFERENCE_PROBE_S * 2, say=lines.append, probes={})
    text = "\n".join(lines)
    assert rc == 1
    row01 = next(line for line in lines if line.strip().startswith("01"))
    assert "NO" in row01 and "make djl" in row01
    row07 = next(line for line in lines if line.strip().startswith("07"))
    assert "recorded GPU runs" in row07
    assert "Estimate:" in text and "An estimate" in text and "2.0×" in text
    assert check.REFERENCE_MACHINE in text  # the reference is named, not only a number


def test_estimate_scales_the_waiting_part_only():
    total = sum(nb.minutes for nb in workshop.NOTEBOOKS)
    assert check.estimate_minutes(check.REFERENCE_PROBE_S) == pytest.approx(total)
    slower = check.estimate_minutes(check.REFERENCE_PROBE_S * 3)
    assert slower == pytest.approx(total * (1 + 2 * check.COMPUTE_SHARE))


def test_probe_runs_long_enough_to_mean_something(monkeypatch):
    clock = iter(range(10_000))  # a clock that moves one second per reading
    monkeypatch.setattr(check.time, "perf_counter", lambda: float(next(clock)))
    assert check.probe(repeat=1, least_s=30) == 1.0  # each run read as one second long
    assert next(clock) >= 30  # repeated until 30 (clock) seconds had passed, not once


def test_a_notebook_whose_claim_probe_crashes_does_not_run(monkeypatch):
    from fpexplore.errors import WorkerError

    def crash(plan, env, timeout):
        raise WorkerError("the fresh process under {} exited with -4 and no result:\ntrace")

    monkeypatch.setattr("fpexplore.testing.runner.run_claims", crash)
    probe = check.claim_probe("cpu_dispatch")
    assert not probe.ran and "exited with -4" in probe.problem and "trace" not in probe.problem
    infos = [_Info(n, True) for n in ("numpy", "torch", "torchvision", "tensorflow", "libtorch")]
    infos.append(_Info("djl", True))
    lines: list[str] = []
    rc = check.report(infos, 0.05, lines.append, probes={"12": probe, "01": check.Probe(True, 4)})
    row12 = next(line for line in lines if line.strip().startswith("12"))
    row01 = next(line for line in lines if line.strip().startswith("01"))
    assert rc == 1 and "NO" in row12 and "claim probe" in row12
    assert "yes" in row01 and "claim probe 4 s" in row01


def test_a_failing_claim_is_a_notebook_that_does_not_run(monkeypatch):
    result = {"runs": [{"error": None, "claims": {"k": {"state": "fails", "text": "a sum"}}}]}
    monkeypatch.setattr("fpexplore.testing.runner.run_claims", lambda *a, **k: result)
    probe = check.claim_probe("summation_order")
    assert not probe.ran and "a sum" in probe.problem


def test_the_java_row_says_the_jvms_version_not_jpypes():
    from fpexplore import backends

    java = backends.get("java")
    if backends.java_version() == "":
        pytest.skip("no java here")
    assert java.version().startswith(f"Java {backends.java_version()}")
    assert re.match(r"\d+(\.\d+)*", backends.java_version())


def test_doctor_workshop_option(monkeypatch, capsys):
    monkeypatch.setattr(check, "probe", lambda repeat=3: check.REFERENCE_PROBE_S)
    monkeypatch.setattr(check, "claim_probes", lambda: {})
    rc = cli.main(["doctor", "--workshop"])
    out = capsys.readouterr().out
    assert "Workshop check" in out and "Estimate:" in out
    assert rc in (0, 1)


# --- the day: run sheet, pre-flight, troubleshooting, glossary -----------------------------


def test_the_run_sheet_has_a_2_hour_and_a_half_day_plan_with_goals_and_exercises():
    from fpexplore.workshop import day

    page = day.runsheet()
    for p in workshop.PLANS:
        assert p.title in page
    two = next(p for p in workshop.PLANS if p.minutes == 120)
    assert any(p.minutes >= 180 for p in workshop.PLANS)
    for p in workshop.PLANS:
        assert all(s.goal for s in p.slots if not s.break_minutes), p.title
    assert f"{120 - two.slots[-1].minutes}–120" in page and "0–10" in page
    n01 = len(pages.exercises(NOTEBOOKS / series.notebook("01").file))
    assert "01: exercise 1" in page  # a core slot takes the first exercise
    assert f"exercises 1–{n01}" in day.runsheet(
        (plan.Plan("x", 30, (plan.Slot("all of 01", ("01",), time="full"),)),)
    )


def test_preflight_lists_the_laptop_check():
    from fpexplore.workshop import day

    page = day.preflight()
    assert "fpexplore doctor --workshop" in page and "make djl" in page


def test_troubleshooting_shows_the_rows_a_laptop_without_the_part_gets():
    """The C++ build missing (a fresh interpreter whose program path is not a program): the
    C++ rows are Unavailable and name the fix, the claims that needed them are not checked;
    the page shows the rows and the AVX-512 case."""
    from fpexplore.workshop import day

    cpp = next(m for m in day.MISSING if "C++" in m.what)
    rows, ran, claims = day.without(cpp, "libtorch_vs_pytorch")
    assert rows and ran > 0
    assert all("C++" in row and "make libtorch" in why for row, why in rows)
    assert claims and all("make libtorch" in why for _, why in claims)

    seen = []

    def run(m, name):
        seen.append(name)
        return (rows, ran, claims) if m is cpp else ([], 3, [])

    page = day.troubleshooting(run)
    assert seen == [n for m in day.MISSING for n in m.lessons]
    assert "Without the C++ build" in page and "Unavailable" in page
    assert rows[0][0] in page and "Without AVX-512" in page and "aten-avx512" in page


def test_without_avx512_the_avx512_paths_are_listed_as_not_taken():
    from fpexplore.lessons.cpu_dispatch import CONFIGS
    from fpexplore.workshop import day

    zen3 = frozenset({"sse4_2", "avx", "avx2", "fma"})  # AVX2 and FMA, no AVX-512
    shown = day.no_avx512(zen3)
    assert not shown["here_has"] and "aten-avx512" in shown["not_taken"]
    assert "aten-avx2" in shown["taken"] and "aten-avx512" not in shown["taken"]
    assert set(shown["taken"]) | set(shown["not_taken"]) == set(CONFIGS)
    avx512 = day.no_avx512(zen3 | {"avx512f", "avx512bw", "avx512vl", "avx512dq"})
    assert avx512["here_has"] and avx512["not_taken"] == shown["not_taken"]


def test_notebook_12s_handout_starts_its_exercises_with_a_question():
    nb = series.notebook("12")
    first = pages.exercises(NOTEBOOKS / nb.file)[0]
    assert first.question.startswith("**1.**") and "fpexplore fingerprint" not in first.question


def test_every_link_of_the_kit_lands_on_a_page_and_an_anchor_of_it(tmp_path):
    pages.build(tmp_path)
    ids: dict[str, set[str]] = {}
    for page in tmp_path.glob("*.html"):
        ids[page.name] = set(re.findall(r'id="([^"]+)"', page.read_text()))
    glossary_links = 0
    for page in tmp_path.glob("*.html"):
        for href in re.findall(r'href="([^"#:]*)(?:#([^"]*))?"', page.read_text()):
            target, anchor = href
            if not target or target in ("runsheet.html", "preflight.html", "troubleshooting.html"):
                continue
            assert target in ids, f"{page.name}: {target}"
            if anchor:
                assert anchor in ids[target], f"{page.name}: {target}#{anchor}"
            glossary_links += target == "glossary.html"
    assert glossary_links > 10


def test_the_recorded_answers_read_at_the_notebooks_width():
    """What each answer cell printed on the reference machines (the facilitator notes'
    expected numbers) reads in a notebook 1000 px wide: no line over 70 characters, no raw
    dict or list of a program's values."""
    from fpexplore.workshop import printed

    bad = []
    for rec in printed.load_all(ROOT):
        for key, entries in rec["notebooks"].items():
            for i, entry in enumerate(entries, 1):
                for line in entry["printed"].splitlines():
                    if len(line) > 70 or re.search(r"[{\[]'", line):
                        bad.append(f"{rec['label']} {key} exercise {i}: {line[:90]}")
    assert not bad, "\n".join(bad)
