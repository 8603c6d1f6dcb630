import pytest

from fpexplore.errors import InvalidParameter
from fpexplore.params import Flag, Interval, Options, Text, validate_all

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
    assert "'n'" in msg and "[1, 1e+07]" in msg and "lesson 'x'" in msg and repr(bad) in msg


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
    with pytest.raises(InvalidParameter, match=r"'size'.*one of the parameters n, p"):
        validate_all((N, P), {"size": 3}, "w")
