import pytest

from fpexplore.errors import InvalidParameter
from fpexplore.params import Depends, Flag, Interval, Options, Text, resolved, settle, validate_all

N = Interval("n", 10, "size", low=1, high=10_000_000, integer=True, log=True)
P = Interval("p", 0.5, "probability", low=0.0, high=1.0)
D = Options("dtype", "float32", "dtype", choices=("float16", "float32"))


def test_interval_accepts_and_converts():
    assert N.validate(5) == 5
    assert N.validate(5.0) == 5
    assert P.validate(1) == 1.0


@pytest.mark.parametrize("bad", [0, 10_000_001, 2.5, "7", True, float("nan")])
def test_interval_rejects_with_name_and_range(bad):
    with pytest.raises(InvalidParameter) as info:
        N.validate(bad, "lesson 'x'")
    msg = str(info.value)
    assert "'n'" in msg and "[1, 10000000]" in msg and "lesson 'x'" in msg and repr(bad) in msg


def test_options_and_flags():
    assert D.validate("float16") == "float16"
    with pytest.raises(InvalidParameter, match="one of 'float16', 'float32'"):
        D.validate("float8")
    assert Flag("train", False).parse("yes") is True
    with pytest.raises(InvalidParameter, match="'train'"):
        Flag("train", False).validate(1)
    with pytest.raises(InvalidParameter, match="device"):
        Text("device", "cpu", pattern_help="a torch device string").validate("")


def test_parse_from_cli_text():
    assert N.parse("1e4") == 10_000
    assert D.parse("float16") == "float16"
    with pytest.raises(InvalidParameter):
        N.parse("many")


def test_validate_all_fills_defaults_and_rejects_unknown():
    assert validate_all((N, P), {"n": 3}, "w") == {"n": 3, "p": 0.5}
    with pytest.raises(
        InvalidParameter, match=r"w has no parameter 'size'; its parameters are n, p"
    ):
        validate_all((N, P), {"size": 3}, "w")


def test_numpy_scalars_are_coerced_and_bools_refused():
    import numpy as np

    assert N.validate(np.int64(7)) == 7 and type(N.validate(np.int64(7))) is int
    assert N.validate(np.longdouble(64)) == 64
    assert P.validate(np.float32(0.25)) == 0.25
    assert Options("size", 256, choices=(256, 512)).validate(np.int64(512)) == 512
    assert Flag("f", False).validate(np.bool_(True)) is True
    for bad in (True, np.bool_(False), np.array([1, 2]), [1], None, 10**400, 1e400):
        with pytest.raises(InvalidParameter):
            N.validate(bad)
    with pytest.raises(InvalidParameter, match=r"\[0, 1\]"):
        P.validate(10**400)  # too large for a float: refused, not an OverflowError


def test_options_match_by_value_and_type():
    sizes = Options("size", 256, choices=(256, 512))
    for bad in (256.0, True, "256", [256], {"a": 1}):
        with pytest.raises(InvalidParameter):
            sizes.validate(bad)
    with pytest.raises(InvalidParameter):
        D.validate(["float16"])  # unhashable: refused, not a TypeError


def test_ranges_print_exactly():
    assert "[1e-08, 0.1]" in Interval("eps", 1e-5, low=1e-8, high=0.1).accepted()
    assert "[0, 4294967295]" in Interval("seed", 0, low=0, high=2**32 - 1, integer=True).accepted()
    assert "[0.1, 0.30000000000000004]" in Interval("x", 0.2, low=0.1, high=0.1 + 0.2).accepted()


OP = Options("op", "sum", "which op", choices=("sum", "conv", "none"))
SIZE = Depends(
    "size",
    8,
    "elements or image side",
    on="op",
    cases=(
        ("sum", Interval("size", 8, low=1, high=1000, integer=True)),
        ("conv", Interval("size", 16, low=4, high=64, integer=True)),
        ("none", Interval("size", 0, low=0, high=0, integer=True)),
    ),
)


def test_depends_checks_the_case_its_parameter_picks():
    got = validate_all((OP, SIZE), {"op": "conv"}, "x")
    assert got == {"op": "conv", "size": 16}  # that case's default
    assert validate_all((OP, SIZE), {"op": "sum", "size": 1000}, "x")["size"] == 1000
    with pytest.raises(InvalidParameter, match=r"'size' .*\[4, 64\] when op='conv'. Got 100"):
        validate_all((OP, SIZE), {"op": "conv", "size": 100}, "x")
    assert "[4, 64] (default 16) when op is 'conv'" in SIZE.accepted()
    assert SIZE.parse("12") == 12 and SIZE.kind == "int"
    assert [p.high for p in resolved((OP, SIZE), {"op": "conv"})[1:]] == [64]
    assert SIZE.case("conv").name == "size" and SIZE.case("conv").help == SIZE.help


def test_settle_keeps_a_value_the_new_case_takes():
    assert settle((OP, SIZE), {"op": "conv", "size": 50})["size"] == 50
    assert settle((OP, SIZE), {"op": "conv", "size": 500})["size"] == 16
    assert settle((OP, SIZE), {"op": "none", "size": 50})["size"] == 0


def test_an_interval_capped_by_an_earlier_parameter():
    """``most``: a crop at most the size, refused by the declaration on every face."""
    params = (
        Interval("size", 64, low=16, high=128, integer=True),
        Interval("crop", 57, low=8, high=128, integer=True, most="size"),
    )
    assert validate_all(params, {"size": 32}, "x") == {"size": 32, "crop": 32}  # capped default
    assert validate_all(params, {"size": 32, "crop": 32}, "x")["crop"] == 32
    with pytest.raises(InvalidParameter, match=r"'crop'.*\[8, 32\] when size=32. Got 33"):
        validate_all(params, {"size": 32, "crop": 33}, "x")
    crop = resolved(params, {"size": 40})[1]  # what a widget or a grid offers
    assert (crop.low, crop.high, crop.default, crop.most) == (8, 40, 40, "")
    assert settle(params, {"size": 20, "crop": 57}) == {"size": 20, "crop": 20}
    assert settle(params, {"size": 100, "crop": 57}) == {"size": 100, "crop": 57}
    assert "at most size" in params[1].accepted()


def test_djl_crop_is_declared_at_most_the_size():
    from fpexplore import lessons
    from fpexplore.widgets.explorer import controls_for

    lesson = lessons.get("djl_normalization")
    with pytest.raises(InvalidParameter, match="'crop'"):
        lesson.run(stage="std", size=32, crop=40)
    crop = {s.name: s for s in controls_for(lesson, size=32)}["crop"]
    assert crop.settings["max"] == 32 and crop.value == 32
