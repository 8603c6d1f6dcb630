"""Every claim's state on every lesson's quick and edge parameters (the claims matrix's plan),
as JSON ``{lesson: {params: {claim: state}}}``; with ``--compare OLD NEW`` the differences of
two such records, key by key.

    python benchmarks/claims_record.py OUT.json [--texts TEXTS.json] [LESSON ...]
    python benchmarks/claims_record.py --compare BEFORE.json AFTER.json [--section L=P:D ...]

``params`` is the run's parameters as sorted JSON; a run that raised records ``{"error": ...}``.
``--texts`` also writes each claim's text (the numbers it measured change between runs);
``--section tf_vs_torch=op:softmax`` compares a lesson whose keys gained their section (the
value of ``op``, ``softmax`` where the run left it at its default) with its older record.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any


def plan() -> list[tuple[str, dict[str, Any]]]:
    """The claims matrix's plan: every lesson at its quick parameters, then the edges."""
    try:
        from fpexplore.testing import claims_plan
    except ImportError:
        from fpexplore.dispatch.matrix import plan as claims_plan
    return claims_plan()


def record(only: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(states, texts)`` of every run of the plan (of the lessons ``only`` names, if any)."""
    from fpexplore import lessons

    states: dict[str, Any] = {}
    texts: dict[str, Any] = {}
    for name, params in plan():
        if only and name not in only:
            continue
        key = json.dumps(params, sort_keys=True)
        print(f"{name} {key}", file=sys.stderr, flush=True)
        try:
            c = lessons.run(name, **params)
        except Exception as exc:  # recorded, the others go on
            states.setdefault(name, {})[key] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        states.setdefault(name, {})[key] = {k: v.state for k, v in c.claims.items()}
        texts.setdefault(name, {})[key] = {k: v.text for k, v in c.claims.items()}
    return states, texts


def compare(before: dict[str, Any], after: dict[str, Any], sections: dict[str, tuple[str, str]]):
    """The lines that differ between two records; where ``sections`` names a lesson's
    ``(parameter, default)``, the keys of ``before`` gain that parameter's value as their
    section (``fix_agrees`` -> ``softmax.fix_agrees``)."""
    lines = []
    for lesson in sorted(set(before) | set(after)):
        b_runs, a_runs = before.get(lesson, {}), after.get(lesson, {})
        for params in sorted(set(b_runs) | set(a_runs)):
            b = b_runs.get(params)
            a = a_runs.get(params)
            if b is None or a is None:
                lines.append(f"{lesson} {params}: only {'after' if b is None else 'before'}")
                continue
            if lesson in sections and "error" not in b:
                name, default = sections[lesson]
                section = json.loads(params).get(name, default)
                b = {f"{section}.{k}": v for k, v in b.items()}
            for key in sorted(set(b) | set(a)):
                if b.get(key) != a.get(key):
                    lines.append(f"{lesson} {params} {key}: {b.get(key)} -> {a.get(key)}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="where the record is written")
    ap.add_argument("lessons", nargs="*", help="only these lessons (default: all)")
    ap.add_argument("--texts", help="where the claims' texts are written")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--section", action="append", default=[], metavar="LESSON=PARAM:DEFAULT")
    args = ap.parse_args()
    if args.compare:
        before, after = (json.loads(Path(p).read_text()) for p in args.compare)
        sections = {}
        for item in args.section:
            lesson, _, rest = item.partition("=")
            name, _, default = rest.partition(":")
            sections[lesson] = (name, default)
        lines = compare(before, after, sections)
        print("\n".join(lines) if lines else "no difference")
        sys.exit(1 if lines else 0)
    if not args.out:
        ap.error("name the record to write (or --compare BEFORE AFTER)")
    warnings.simplefilter("ignore")
    states, texts = record(args.lessons)
    with open(args.out, "w") as f:
        json.dump(states, f, indent=1, sort_keys=True)
    if args.texts:
        with open(args.texts, "w") as f:
            json.dump(texts, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
