"""`check_lesson`: the lesson contract checked on one lesson (see `fpexplore.testing`)."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import FpexploreError, InvalidParameter, shown
from ..lessons import Lesson, get
from ..lessons._base import hidden
from ..params import MAX_TEXT, Flag, Interval, Options, Param, Text, declared_at, resolved
from ..result import Claim, Comparison

__all__ = ["LessonCheck", "LessonContractError", "bad_values", "check_lesson", "valid_draws"]


class LessonContractError(FpexploreError, AssertionError):
    """A lesson breaks the contract; the message lists every breach."""


@dataclass(frozen=True)
class LessonCheck:
    """What `check_lesson` tried: how many bad values were refused, and each valid run with
    its parameters, its claims' states and its time."""

    lesson: str
    bad_cases: int
    runs: tuple[tuple[dict[str, Any], dict[str, str], float], ...] = ()
    problems: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        states: dict[str, int] = {}
        for _, claims, _ in self.runs:
            for s in claims.values():
                states[s] = states.get(s, 0) + 1
        return (
            f"{self.lesson}: {self.bad_cases} bad values refused, {len(self.runs)} valid runs "
            f"({sum(r[2] for r in self.runs):.1f} s), claims {states}"
        )


class _Odd:
    """An object no parameter takes."""

    def __repr__(self) -> str:
        return "<odd object>"


def bad_values(param: Param) -> list[Any]:
    """Values ``param`` must refuse: wrong types, bool for numbers, NaN/inf, out of range."""
    import numpy as np

    common: list[Any] = [None, b"x", [param.default], {"v": 1}, _Odd(), 1j]
    if isinstance(param, Interval):
        low, high = param.low, param.high
        out = [*common, "1", "", True, False, math.nan, math.inf, -math.inf, 10**400]
        step = 1 if param.integer else max(abs(low), abs(high), 1.0) * 1e-6
        out += [low - step, high + step, -(10**30) if low > -(10**30) else None]
        if param.integer:
            out += [low + 0.5, float(low) + 0.25]
        out += [np.float64("nan"), np.array([low, high]), np.bool_(True)]
        return [v for v in out if v is not None or param.default is not None]
    if isinstance(param, Options):
        out = [*common, "no such choice", 2**70, -1.5]
        for c in param.choices:
            if isinstance(c, str):
                out.append(c.upper() if c.upper() not in param.choices else c + "!")
            elif isinstance(c, bool):
                out.append(int(c))
            elif isinstance(c, int):
                out += [str(c), float(c)]
        return [v for v in out if not any(type(v) is type(c) and v == c for c in param.choices)]
    if isinstance(param, Flag):
        return [*common, 1, 0, "true", "False", 1.0, math.nan, np.array([True, False])]
    if isinstance(param, Text):
        return [*common, 5, 1.5, True, "", "x" * (MAX_TEXT + 1), "a\nb", "\x00"]
    return common


def _draw_interval(p: Interval, i: int, rng: random.Random, bound: tuple[Any, Any]) -> Any:
    low, high = max(p.low, bound[0]), min(p.high, bound[1])
    if i == 0:
        x: float = low
    elif i == 1:
        x = high
    elif p.log and low > 0:
        x = math.exp(rng.uniform(math.log(low), math.log(high)))
    else:
        x = rng.uniform(low, high)
    if p.integer:
        x = min(max(round(x), math.ceil(low)), math.floor(high))
        return int(x)
    return float(min(max(x, low), high))


def valid_draws(
    lesson: Lesson,
    draws: int = 3,
    seed: int = 0,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    choices: Mapping[str, Sequence[Any]] | None = None,
) -> list[dict[str, Any]]:
    """Parameter sets to run: the first at every range's low edge, the second at its high
    edge, the rest random (seeded); options and flags cycle so that every choice comes up
    (at least ``max(draws, most choices)`` sets). ``bounds`` narrows a range (to keep a run
    short), ``choices`` names the values to take for a parameter (required for `Text`)."""
    bounds, choices = dict(bounds or {}), dict(choices or {})
    rng = random.Random(seed)
    picks: dict[str, Sequence[Any]] = {}
    for p in lesson.params:
        if p.name in choices:
            picks[p.name] = list(choices[p.name])
        elif isinstance(p, Options):
            picks[p.name] = list(p.choices)
        elif isinstance(p, Flag):
            picks[p.name] = [False, True]
        elif isinstance(p, Text):
            picks[p.name] = [lesson.quick.get(p.name, p.default)]
    count = max([draws, *(len(v) for v in picks.values())])
    offsets = {name: rng.randrange(len(v)) for name, v in picks.items()}
    sets = []
    for i in range(count):
        params: dict[str, Any] = {}
        for p in lesson.params:
            q = declared_at(p, params)  # as it applies with the values drawn before it
            if p.name in picks:
                v = picks[p.name]
                params[p.name] = v[(i + offsets[p.name]) % len(v)]
            elif isinstance(q, Options):
                params[p.name] = q.choices[i % len(q.choices)]
            elif isinstance(q, Interval):
                bound = bounds.get(p.name, (-math.inf, math.inf))
                params[p.name] = _draw_interval(q, i, rng, bound)
            else:
                params[p.name] = lesson.quick.get(p.name, p.default)
        sets.append(params)
    return sets


def _run_joint(lesson: Lesson, params: dict[str, Any]) -> tuple[dict[str, Any], Comparison]:
    """Run ``params``; where a value is valid alone but not with the others (a refusal inside
    the lesson's work, beyond what its declarations say), the lesson refuses it naming it:
    retry with that parameter at its quick value, then its default, then its low edge."""
    params = dict(params)
    tried: set[tuple[str, Any]] = set()
    while True:
        try:
            return params, lesson.run(**params)
        except InvalidParameter as exc:
            p = next((q for q in resolved(lesson.params, params) if q.name == exc.name), None)
            if p is None:
                raise
            fallbacks = [lesson.quick.get(p.name, p.default), p.default]
            if isinstance(p, Interval):
                fallbacks.append(int(p.low) if p.integer else p.low)
            for value in fallbacks:
                if (p.name, repr(value)) not in tried and value != params[p.name]:
                    tried.add((p.name, repr(value)))
                    params[p.name] = value
                    break
            else:
                raise


def _claim_problems(c: Comparison, lesson: Lesson, params: dict[str, Any]) -> list[str]:
    problems = []
    if not isinstance(c, Comparison):
        return [f"{lesson.name} {params}: run returned {type(c).__name__}, not a Comparison"]
    if c.lesson != lesson.name:
        problems.append(f"{lesson.name} {params}: the comparison names lesson {c.lesson!r}")
    if not c.claims:
        problems.append(f"{lesson.name} {params}: no claim was declared")
    for key, claim in c.claims.items():
        where = f"{lesson.name} {params}: claim {key!r}"
        if not isinstance(claim, Claim) or not claim.text:
            problems.append(f"{where} is not a Claim with a text")
        elif claim.holds is False:
            problems.append(f"{where} FAILS: {claim.text} ({claim.reason})")
        elif claim.holds is None and not claim.reason.strip():
            problems.append(f"{where} is not checked and gives no reason")
        spec = lesson.claims.get(key)
        if spec is not None and isinstance(claim, Claim) and not spec.says(claim.text):
            problems.append(f"{where} says {claim.text!r}, not what it declares: {spec.text!r}")
    if not isinstance(c.data, lesson.data):
        problems.append(
            f"{lesson.name} {params}: its data is a {type(c.data).__name__}, not the declared "
            f"{getattr(lesson.data, '__name__', lesson.data)}"
        )
    for kind, returned, declared in (
        ("claim", c.claims, lesson.claims),
        ("observation", c.observations, lesson.observations),
    ):
        problems += [
            f"{lesson.name} {params}: {kind} {k!r} is not declared on the lesson"
            for k in returned
            if k not in declared
        ]
    for face, render in (
        ("_repr_html_", c._repr_html_),
        ("table", c.table),
        ("to_json", c.to_json),
    ):
        try:
            text = render()
        except Exception as exc:
            problems.append(f"{lesson.name} {params}: {face} raised {type(exc).__name__}: {exc}")
            continue
        if not isinstance(text, str) or not text:
            problems.append(f"{lesson.name} {params}: {face} rendered nothing")
    return problems


def hidden_problems(lesson: Lesson, params: Mapping[str, Any]) -> list[str]:
    """Run ``params`` with every part the declared claims need hidden: each claim that needs
    one must come back "not checked", its reason naming the fix."""
    parts = sorted({p for spec in lesson.claims.values() for p in spec.needs})
    if not parts:
        return []
    where = f"{lesson.name} {dict(params)} with {', '.join(parts)} hidden"
    try:
        with hidden(*parts):
            c = lesson.run(**params)
    except Exception as exc:
        return [f"{where}: raised {type(exc).__name__}: {exc}"]
    problems = []
    for key, claim in c.claims.items():
        spec = lesson.claims.get(key)
        if spec is None or not spec.needs or spec.occasional:
            continue
        if claim.holds is not None or "fix" not in claim.reason.lower():
            problems.append(f"{where}: claim {key!r} is {claim.state} ({claim.reason!r})")
    return problems


def check_lesson(
    lesson: Lesson | str,
    *,
    draws: int = 3,
    seed: int = 0,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    choices: Mapping[str, Sequence[Any]] | None = None,
    runs: bool = True,
) -> LessonCheck:
    """Check ``lesson`` (a `Lesson` or its name) against the contract; see the module's text.

    ``draws``: the fewest valid parameter sets to run (more when an option has more choices);
    ``seed``: seeds the draws; ``bounds``/``choices``: see `valid_draws`; ``runs=False`` checks
    only the refusal of bad values (cheap). Raises `LessonContractError` listing every breach.
    """
    if isinstance(lesson, str):
        lesson = get(lesson)
    if not isinstance(lesson, Lesson):
        raise InvalidParameter("lesson", lesson, "a Lesson or a lesson's name", "check_lesson")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise InvalidParameter("draws", draws, "an int >= 1", "check_lesson")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidParameter("seed", seed, "an int", "check_lesson")
    problems: list[str] = []
    bad = 0
    for p in resolved(lesson.params, lesson.defaults()):
        for value in bad_values(p):
            bad += 1
            try:
                lesson.run(**{p.name: value})
            except InvalidParameter as exc:
                if exc.name != p.name:
                    problems.append(
                        f"{lesson.name}: {p.name}={shown(value)} was refused naming {exc.name!r}"
                    )
            except Exception as exc:
                problems.append(
                    f"{lesson.name}: {p.name}={shown(value)} raised {type(exc).__name__}: {exc}"
                )
            else:
                problems.append(f"{lesson.name}: {p.name}={shown(value)} was accepted")
    done = []
    if runs:
        for params in valid_draws(lesson, draws, seed, bounds, choices):
            start = time.perf_counter()
            try:
                params, c = _run_joint(lesson, params)
            except Exception as exc:
                problems.append(f"{lesson.name} {params}: raised {type(exc).__name__}: {exc}")
                continue
            seconds = time.perf_counter() - start
            problems += _claim_problems(c, lesson, params)
            states = {k: getattr(v, "state", "?") for k, v in getattr(c, "claims", {}).items()}
            done.append((params, states, seconds))
    if runs and done:
        problems += hidden_problems(lesson, done[0][0])
    result = LessonCheck(lesson.name, bad, tuple(done), tuple(problems))
    if problems:
        raise LessonContractError(
            f"lesson {lesson.name!r} breaks the contract in {len(problems)} place(s):\n  "
            + "\n  ".join(problems)
        )
    return result
