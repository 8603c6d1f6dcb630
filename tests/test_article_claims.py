"""The articles' claims, accounted: each judged by a myth that exists and the lesson claims its
verdict rests on (declared by the lesson and really produced), or out of reach with the reason;
what stays uncovered is ranked, and the README shows that ranking."""

import json
from pathlib import Path

import pytest
from test_myths import _judge_keys

from fpexplore import article_claims, lessons, myths
from fpexplore.article_claims import ARTICLE_CLAIMS

ROOT = Path(__file__).resolve().parent.parent
BY_NUMBER = {m.number: m for m in myths.MYTHS}


def _recorded():
    """(lesson, claim key) of every claim a real machine's record holds."""
    found = set()
    paths = [*ROOT.glob("data/machines/*/claims.json"), *ROOT.glob("data/gpu/claims/*.json")]
    assert paths
    for path in paths:
        for run in json.loads(path.read_text())["runs"]:
            found |= {(run["lesson"], k) for k in run.get("claims") or {}}
    return found


def _refs():
    return [(c, *ref.split(":")) for c in ARTICLE_CLAIMS for ref in c.claims]


def test_claims_are_numbered_distinct_and_counted():
    assert [c.number for c in ARTICLE_CLAIMS] == list(range(1, len(ARTICLE_CLAIMS) + 1))
    texts = [c.text.lower().rstrip(".") for c in ARTICLE_CLAIMS]
    assert len(set(texts)) == len(texts)
    # the project records 48 distinct claims of the articles (the module's docstring says
    # why not the 64 a fact-check counted): a claim added or merged changes this on purpose
    assert len(ARTICLE_CLAIMS) == 48
    judged = sum(c.judged for c in ARTICLE_CLAIMS)
    assert article_claims.summary() == f"48 distinct article claims: {judged} judged, " + (
        f"{48 - judged} out of reach"
    )


def test_each_claim_is_judged_or_out_of_reach_with_its_evidence():
    for c in ARTICLE_CLAIMS:
        if c.out_of_reach:
            assert not c.claims and c.rank > 0, c
            # a myth that judges it must say it cannot be measured here, never a stand-in
            assert all(BY_NUMBER[m].not_here for m in c.myths), c
        else:
            assert c.myths or c.claims, c
            assert not any(BY_NUMBER[m].not_here for m in c.myths), c
        assert bool(c.left) == (c.judged and c.rank > 0), c


def test_every_myth_judges_an_article_claim():
    used = {m for c in ARTICLE_CLAIMS for m in c.myths}
    assert used == set(BY_NUMBER), set(BY_NUMBER) ^ used


def test_lesson_claims_are_declared_and_read_by_the_myths_judge():
    for c, lesson, key in _refs():
        assert key in lessons.get(lesson).claims, (c.number, lesson, key)
    for c in ARTICLE_CLAIMS:
        for m in c.myths:
            myth = BY_NUMBER[m]
            if myth.not_here:
                continue
            read = {k for k in _judge_keys(myth.judge) if isinstance(k, str)}
            mine = {
                k for ref in c.claims for lesson, k in [ref.split(":")] if lesson == myth.lesson
            }
            # the verdict rests on at least one of the claims listed as its evidence
            assert mine & read, (c.number, m, sorted(mine), sorted(read))


def test_lesson_claims_are_really_produced():
    """Each in a real machine's record, or else produced by a run of its lesson here (a
    claim declared after the last record)."""
    recorded = _recorded()
    missing = {(lesson, key) for _, lesson, key in _refs() if (lesson, key) not in recorded}
    assert len(missing) < len(_refs()) // 4, missing  # the records are not stale wholesale
    for lesson, key in sorted(missing):
        # tf_vs_torch states a section's claims (keyed ``section.claim``) in a run of that op
        params = {"op": key.split(".", 1)[0]} if lesson == "tf_vs_torch" else {}
        ran = _run(lesson, **params)
        assert key in ran.claims, (lesson, key, sorted(ran.claims))


_RUNS: dict = {}


def _run(lesson: str, **params):
    key = (lesson, tuple(sorted(params.items())))
    if key not in _RUNS:
        _RUNS[key] = lessons.run(lesson, **params)
    return _RUNS[key]


def test_uncovered_is_ranked_and_shown_in_the_readme():
    ranked = article_claims.uncovered()
    assert [c.rank for c in ranked] == list(range(1, len(ranked) + 1))
    assert ranked[0].out_of_reach  # a claim nothing here can judge comes before a part left
    readme = (ROOT / "README.md").read_text()
    assert article_claims.uncovered_markdown() in readme
    assert article_claims.summary() + "." in readme


@pytest.mark.parametrize("with_verdicts", [False, True])
def test_report_shows_each_claim_with_its_evidence(with_verdicts):
    verdicts = []
    if with_verdicts:
        verdicts = [myths.Verdict(m, myths.HOLDS, "why", f"number {m.number}") for m in myths.MYTHS]
    text = article_claims.report(verdicts)
    for c in ARTICLE_CLAIMS:
        assert f"{c.number:2d}. {c.text}" in text
        for m in c.myths:
            shown = f"[holds] number {m}" if with_verdicts else "(not judged in this run)"
            assert f"myth {m}: {shown}" in text
    assert article_claims.summary() in text
