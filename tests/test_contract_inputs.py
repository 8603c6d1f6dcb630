"""Contract: bad input anywhere on the public surface is the package's own error or a correct
answer, never a raw exception and never a hang.

Hypothesis generates values of every kind (wrong types, numpy scalars and arrays, huge ints,
nan/inf, bools, strings that are too long or not printable, objects whose repr or == raise) for
every declared parameter of every lesson (discovered, so new lessons are covered), for
`fpexplore.run` and `Lesson.run`, the DJL argument checks, the record validator and the
backend registry. Each case is bounded in time by Hypothesis' deadline.
"""

from __future__ import annotations

import collections
import contextlib
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fpexplore
from fpexplore import backends, records
from fpexplore.errors import FpexploreError, InvalidParameter, UnknownParameter
from fpexplore.lessons import all_lessons
from fpexplore.params import Flag, Interval, Options, Text, resolved, validate_all

LESSONS = all_lessons()
CASES: collections.Counter[str] = collections.Counter()
FAST = settings(
    max_examples=120,
    deadline=2000,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class BadEq:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no ==")

    __hash__ = object.__hash__


ODD = [
    None,
    np.int64(3),
    np.int8(-1),
    np.uint64(2**63),
    np.float32(0.5),
    np.float16(1e4),
    np.longdouble(64),
    np.longdouble("1e4000"),
    np.bool_(True),
    np.array(5),
    np.array(2.5),
    np.array([1, 2]),
    np.array([]),
    np.array(["cpu"]),
    np.str_("cpu"),
    complex(1, 2),
    Fraction(1, 3),
    Fraction(4, 1),
    Decimal("1.5"),
    Decimal("nan"),
    b"cpu",
    bytearray(b"x"),
    object(),
    BadRepr(),
    BadEq(),
    [1],
    (1, 2),
    {"a": 1},
    {1, 2},
    range(3),
    10**400,
    -(10**400),
    2**63,
    2**64 + 1,
    float("nan"),
    float("inf"),
    -0.0,
    5e-324,
    "",
    "x" * 1000,
    "cpu\x00",
    "cuda:99",
    "\u202e",
]

anything = st.one_of(
    st.sampled_from(ODD),
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**53, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=250),
    st.lists(st.integers(), max_size=4),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def near(p: object) -> st.SearchStrategy:
    """Values near what the parameter accepts: bounds, just outside, other types of a choice."""
    if isinstance(p, Interval):
        lo, hi = p.low, p.high
        edges = [lo, hi, lo - 1, hi + 1, (lo + hi) / 2, math.nextafter(hi, math.inf)]
        edges += [int(lo), int(hi), np.float64(hi), np.int64(int(lo))]
        return st.one_of(st.sampled_from(edges), st.floats(lo - 10, hi + 10))
    if isinstance(p, Options):
        alts = [c for choice in p.choices for c in (choice, str(choice), [choice])]
        alts += [float(c) for c in p.choices if isinstance(c, int) and not isinstance(c, bool)]
        return st.sampled_from(alts)
    if isinstance(p, Flag):
        return st.sampled_from([True, False, 0, 1, "true", np.bool_(False), None])
    if isinstance(p, Text):
        return st.sampled_from([p.default, "", " ", "a" * 201, "cpu\n", "recorded", "newest"])
    return st.nothing()


#: each declared parameter as it applies at the others' defaults (a parameter declared per
#: value of another: that case)
PARAMS = [
    (name, p)
    for name, lesson in LESSONS.items()
    for p in resolved(lesson.params, lesson.defaults())
]


def _check_accepted(p: object, value: object) -> None:
    """A value validation accepted is of the declared kind and validates to itself."""
    if isinstance(p, Interval):
        assert type(value) is (int if p.integer else float)
        assert p.low <= value <= p.high
    elif isinstance(p, Options):
        assert any(value is c or (type(value) is type(c) and value == c) for c in p.choices)
    elif isinstance(p, Flag):
        assert type(value) is bool
    elif isinstance(p, Text):
        assert type(value) is str and value
    assert p.validate(value) == value


@pytest.mark.parametrize(("lesson", "param"), PARAMS, ids=[f"{n}.{p.name}" for n, p in PARAMS])
@settings(FAST, max_examples=30)
@given(value=anything, other=st.data())
def test_every_declared_parameter_refuses_or_accepts_cleanly(lesson, param, value, other):
    """validate_all: the package's error, or a value of the declared kind."""
    lesson_obj = LESSONS[lesson]
    for v in (value, other.draw(near(param))):
        CASES["parameter values"] += 1
        try:
            got = validate_all(lesson_obj.params, {param.name: v}, f"lesson '{lesson}'")
        except InvalidParameter as exc:
            assert exc.name == param.name and f"lesson '{lesson}'" in str(exc)
            continue
        _check_accepted(param, got[param.name])


@pytest.mark.parametrize("lesson", sorted(LESSONS))
@settings(max_examples=40, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_run_refuses_bad_values_before_any_work(lesson, data):
    """fpexplore.run and Lesson.run with a refused value: InvalidParameter at once."""
    obj = LESSONS[lesson]
    if not obj.params:
        return
    p = data.draw(st.sampled_from(resolved(obj.params, obj.defaults())))
    value = data.draw(st.one_of(anything, near(p)))
    try:
        validate_all(obj.params, {p.name: value}, "probe")
    except InvalidParameter:
        pass
    else:
        return  # a valid value would run the lesson: validation is covered above
    CASES["run with a bad value"] += 1
    with pytest.raises(InvalidParameter):
        fpexplore.run(lesson, **{p.name: value})
    with pytest.raises(InvalidParameter):
        obj.run(**{p.name: value})


@FAST
@given(name=anything, key=st.text(min_size=1, max_size=30))
def test_run_names_unknown_lessons_and_parameters(name, key):
    CASES["lesson and parameter names"] += 1
    if not (isinstance(name, str) and name in LESSONS):
        with pytest.raises(InvalidParameter, match="'lesson'"):
            fpexplore.run(name)
    lesson = next(iter(LESSONS.values()))
    if key not in {p.name for p in lesson.params}:
        with pytest.raises(UnknownParameter, match="its parameters are"):
            fpexplore.run(lesson.name, **{key: 1})


def test_run_takes_its_lesson_positionally_only():
    lesson = next(iter(LESSONS))
    for key in ("self", "lesson", "name"):
        with pytest.raises(UnknownParameter, match=f"no parameter '{key}'"):
            fpexplore.run(lesson, **{key: 1})
    with pytest.raises(InvalidParameter):
        fpexplore.run(["tf32"])


class _WouldCall(Exception):
    """The arguments passed every check and reached the DJL worker."""


@pytest.fixture()
def no_worker(monkeypatch):
    from fpexplore.jvm import client

    def refuse(*_a, **_k):
        raise _WouldCall

    monkeypatch.setattr(client, "call", refuse)
    monkeypatch.setattr(client, "_threads", client._threads)  # set_threads(256) must not leak
    monkeypatch.setattr("fpexplore.backends.djl.require", lambda: None, raising=False)
    from fpexplore.backends import djl

    return djl


IMAGE = np.zeros((4, 6, 3), np.uint8)


@FAST
@given(a=anything, b=anything, c=anything)
def test_djl_argument_checks(no_worker, a, b, c):
    djl = no_worker
    calls = [
        lambda: djl.random_uniform(a, b),
        lambda: djl.random_uniform(0, 4, a, b),
        lambda: djl.random_normal(0, b, c, a),
        lambda: djl.java_random_floats(a, b),
        lambda: djl.resize(IMAGE, a),
        lambda: djl.resize(IMAGE, (a, b)),
        lambda: djl.resize_short(IMAGE, a, c),
        lambda: djl.center_crop(IMAGE, a, b),
        lambda: djl.crop(IMAGE, a, b, c, 1),
        lambda: djl.set_threads(a),
    ]
    for call in calls:
        CASES["DJL arguments"] += 1
        with contextlib.suppress(FpexploreError, _WouldCall):
            call()


def test_djl_checks_named_in_the_issue(no_worker):
    djl = no_worker
    with pytest.raises(InvalidParameter, match="'shape'"):
        djl.random_uniform(0, 2.0)
    with pytest.raises(InvalidParameter, match="'size'"):
        djl.resize(IMAGE, (5,))
    with pytest.raises(InvalidParameter, match="at most the image's 4x4"):
        djl.center_crop(np.zeros((4, 4, 3), np.uint8), 8, 8)


json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


@pytest.fixture(scope="module")
def good_record() -> dict:
    import json

    return json.loads(records.find().read_text())


@FAST
@given(junk=json_like, where=st.lists(st.text(max_size=12), min_size=1, max_size=4))
def test_record_validation(good_record, junk, where):
    """A record with any field replaced by junk: RecordError or a record lessons can read."""
    import copy

    CASES["records"] += 1
    data = copy.deepcopy(good_record)
    node = data
    for key in where[:-1]:
        if isinstance(node, dict) and key in node and isinstance(node[key], dict):
            node = node[key]
    if isinstance(node, dict):
        node[where[-1] if where[-1] in node or not node else next(iter(node))] = junk
    with contextlib.suppress(FpexploreError):
        records.validate(data)
    CASES["records"] += 1
    with contextlib.suppress(FpexploreError):
        records.validate(junk)


@FAST
@given(name=anything)
def test_backend_registry_and_record_lookup(name):
    CASES["registry"] += 1
    for call in (
        lambda: backends.get(name),
        lambda: backends.missing(name),
        lambda: records.find(name) if isinstance(name, str) else records.find(),
    ):
        with contextlib.suppress(FpexploreError):
            call()


def test_cases_tried(capsys):
    """How many generated cases the contract tries (printed with -s)."""
    with capsys.disabled():
        print(f"\ncontract cases: {dict(CASES)} total {sum(CASES.values())}")
