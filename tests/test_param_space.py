"""Every lesson's declared parameter space is exactly what `Lesson.run` accepts: every choice and
both ends of every range pass its validation, values just outside are refused naming the
argument and what it takes, and a parameter declared per value of another (`Depends`) is walked
case by case. Validation only (the lessons' work is replaced); tf_vs_torch then runs for real at
each op's range ends and dtypes, and the widget, the export grid and the CLI follow the op."""

from __future__ import annotations

import dataclasses
import math
import types

import pytest

from fpexplore import cli, export
from fpexplore.errors import BackendUnavailable, InvalidParameter
from fpexplore.lessons import all_lessons
from fpexplore.lessons.tf_vs_torch import LESSON as TF_VS_TORCH
from fpexplore.lessons.tf_vs_torch import SECTIONS
from fpexplore.params import Depends, Flag, Interval, Options, Param, Text, declared_at
from fpexplore.result import Comparison
from fpexplore.widgets.explorer import controls_for

LESSONS = all_lessons()


def _validating(lesson):
    """A stand-in for ``lesson`` whose ``run`` returns the validated parameters (those
    `Lesson.run` fills in) instead of doing the work."""
    stub = dataclasses.replace(
        lesson, compute=lambda **params: Comparison(), claims={}, stated_by=None
    )
    return types.SimpleNamespace(run=lambda **params: dict(stub.run(**params).params))


def _inside(p: Param) -> list:
    if isinstance(p, Options):
        return list(p.choices)
    if isinstance(p, Interval):
        return [int(p.low), int(p.high)] if p.integer else [p.low, p.high]
    if isinstance(p, Flag):
        return [False, True]
    if isinstance(p, Text):
        return [p.default]
    raise AssertionError(f"no values known for {type(p).__name__}")


def _outside(p: Param, others: tuple = ()) -> list:
    """Values just outside ``p`` (``others``: what other cases of the same parameter take)."""
    if isinstance(p, Options):
        near = [c + "!" if isinstance(c, str) else c + 1 for c in p.choices if type(c) is not bool]
        return [v for v in [*near, *others] if v not in p.choices]
    if isinstance(p, Interval):
        if p.integer:
            return [int(p.low) - 1, int(p.high) + 1]
        return [math.nextafter(p.low, -math.inf), math.nextafter(p.high, math.inf)]
    if isinstance(p, Flag):
        return [1, "true"]
    return [""]


def _space(lesson):
    """(fixed, param, others): each parameter with the values of the parameters it depends on
    (a `Depends` once per case, an `Interval` capped by another at that one's ends)."""
    for p in lesson.params:
        if isinstance(p, Depends):
            union = {v for _, c in p.cases if isinstance(c, Options) for v in c.choices}
            for key, _ in p.cases:
                yield {p.on: key}, p.case(key), tuple(sorted(union, key=repr))
        elif isinstance(p, Interval) and p.most:  # capped at both ends of the other's range
            cap = lesson.param(p.most)
            for v in (int(cap.low), int(cap.high)) if cap.integer else (cap.low, cap.high):
                yield {p.most: v}, declared_at(p, {p.most: v}), ()
        else:
            yield {}, p, ()


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_run_accepts_exactly_the_declared_space(name):
    lesson = LESSONS[name]
    run = _validating(lesson).run
    where = f"lesson '{name}'"
    for fixed, p, others in _space(lesson):
        for value in _inside(p):
            got = run(**fixed, **{p.name: value})
            assert got[p.name] == value and type(got[p.name]) is type(value), (fixed, p.name)
        for value in _outside(p, others):
            with pytest.raises(InvalidParameter) as info:
                run(**fixed, **{p.name: value})
            exc, text = info.value, str(info.value)
            assert exc.name == p.name and where in text and p.accepted() in text, text
            for key, on_value in fixed.items():
                assert f"{key}={on_value!r}" in text, text


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_dependent_declarations_are_complete(name):
    """A `Depends` follows the parameter it depends on, has one case per value of it, and its
    default is the case's at that parameter's default."""
    lesson = LESSONS[name]
    seen: list[str] = []
    for p in lesson.params:
        if isinstance(p, Depends):
            on = lesson.param(p.on)
            assert p.on in seen and isinstance(on, Options), p.name
            assert [k for k, _ in p.cases] == list(on.choices), p.name
            assert p.default == p.case(on.default).default, p.name
            assert _validating(lesson).run()[p.name] == p.default
        seen.append(p.name)


def test_tf_vs_torch_declares_each_ops_dtypes_and_sizes():
    size, dtype = TF_VS_TORCH.param("size"), TF_VS_TORCH.param("dtype")
    assert isinstance(size, Depends) and isinstance(dtype, Depends)
    for op, spec in SECTIONS.items():
        assert dtype.case(op).choices == spec.dtypes and "float64" not in spec.dtypes
        s = size.case(op)
        assert (s.default, s.low, s.high) == (spec.size or (0, 0, 0)), op
    with pytest.raises(InvalidParameter, match=r"'size'.*\[2, 10000\] when op='gelu'. Got 1"):
        TF_VS_TORCH.run(op="gelu", size=1)
    with pytest.raises(InvalidParameter, match=r"'dtype'.*'float32' when op='gelu'"):
        TF_VS_TORCH.run(op="gelu", dtype="float16")
    assert _validating(TF_VS_TORCH).run(op="gelu")["size"] == 121  # that op's default


def test_widget_follows_the_op():
    """The size and dtype controls carry the op's range and choices (fixed ones greyed out)."""
    specs = {s.name: s for s in controls_for(TF_VS_TORCH, op="gelu")}
    assert (specs["size"].settings["min"], specs["size"].settings["max"]) == (2, 10_000)
    assert specs["size"].value == 121 and specs["dtype"].options == ("float32",)
    assert specs["dtype"].settings.get("disabled")
    specs = {s.name: s for s in controls_for(TF_VS_TORCH, op="lstm")}
    assert specs["size"].value == 0 and specs["size"].settings.get("disabled")
    specs = {s.name: s for s in controls_for(TF_VS_TORCH)}
    assert specs["dtype"].options == ("float32", "float16", "bfloat16")
    with pytest.raises(InvalidParameter, match=r"'size'.*when op='conv_same'"):
        controls_for(TF_VS_TORCH, op="conv_same", size=3)


def test_explorer_rebuilds_the_controls_that_follow_the_op():
    pytest.importorskip("ipywidgets")
    from fpexplore.result import Comparison
    from fpexplore.widgets import explore

    ran = []

    def compute(**p):
        ran.append(p)
        return Comparison("tf_vs_torch", p, None, ())

    lesson = dataclasses.replace(TF_VS_TORCH, compute=compute, figure=None)
    box = explore(lesson, op="softmax", dtype="bfloat16", size=64)
    row = box.children[1]
    names = [c.description for c in row.children]
    row.children[names.index("op")].value = "log_softmax"  # takes both: kept
    assert ran[-1]["dtype"] == "bfloat16" and ran[-1]["size"] == 64
    row.children[names.index("op")].value = "gelu"  # float32 only; the size is kept
    assert ran[-1]["dtype"] == "float32" and ran[-1]["size"] == 64
    assert row.children[names.index("dtype")].disabled
    size = row.children[names.index("size")]
    assert (size.min, size.max) == (2, 10_000)
    size.value = 10_000  # the rebuilt control runs the lesson
    assert ran[-1]["size"] == 10_000 and "error" not in box.children[2].value
    row.children[names.index("op")].value = "lstm"  # takes no size
    assert ran[-1]["size"] == 0 and row.children[names.index("size")].disabled
    row.children[names.index("op")].value = "reduce_sum"  # 0 is not its: its default
    assert ran[-1]["size"] == 300_000
    assert row.children[names.index("size")].max == 1_000_000


def test_export_grid_offers_only_what_runs():
    """The export page varies dtype over the op's formats (no float64), and a varied op
    runs each op at a size and dtype it takes."""
    dtype = export._pick_vary(TF_VS_TORCH, None, {"op": "softmax"})
    assert dtype.name == "dtype" and export.grid(dtype, "float32") == (
        "float32",
        "float16",
        "bfloat16",
    )
    size = export._pick_vary(TF_VS_TORCH, "size", {"op": "conv_same"})
    assert all(4 <= v <= 64 for v in export.grid(size, 8))
    from fpexplore.params import settle

    for op in SECTIONS:
        params = settle(TF_VS_TORCH.params, {"op": op, "dtype": "bfloat16", "size": 64})
        _validating(TF_VS_TORCH).run(**params)


def test_cli_refuses_a_size_the_op_does_not_take(capsys):
    assert cli.main(["run", "tf_vs_torch", "--op", "gelu", "--size", "1"]) == 2
    err = capsys.readouterr().err
    assert "'size'" in err and "[2, 10000] when op='gelu'" in err


#: lengths that keep a run short, where the op uses one
LENGTH = {"lstm": 30, "autograd": 50, "adam": 5}
#: range ends that take more than ten seconds here
SLOW = {("gelu", 10_000), ("graph_mode", 10_000), ("layer_norm", 1024), ("adam", 1024)}


def _real_runs():
    size, dtype = TF_VS_TORCH.param("size"), TF_VS_TORCH.param("dtype")
    for op in SECTIONS:
        s = size.case(op)
        for n in sorted({int(s.low), int(s.high)}):
            marks = [pytest.mark.slow] if (op, n) in SLOW else []
            for d in dtype.case(op).choices:
                params = {"op": op, "size": n, "dtype": d}
                params.update({"length": LENGTH[op]} if op in LENGTH else {})
                yield pytest.param(params, marks=marks, id=f"{op}-{n}-{d}")


@pytest.fixture(scope="module")
def frameworks():
    """torch and TensorFlow, loaded in the order the backends need (or the tests skipped)."""
    from fpexplore.lessons.tf_vs_torch import frameworks as fw

    try:
        return fw.load()
    except BackendUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("params", list(_real_runs()))
def test_tf_vs_torch_runs_at_each_ops_range_ends(frameworks, params):
    c = TF_VS_TORCH.run(**params)
    assert c.params["size"] == params["size"] and c.params["dtype"] == params["dtype"]
    assert c.outcomes and all(o.ran for o in c.outcomes)
    failed = {k: v.text for k, v in c.claims.items() if v.holds is False}
    assert not failed, failed
