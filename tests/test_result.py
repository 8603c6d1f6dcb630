import json
from fractions import Fraction

import numpy as np
import pytest

from fpexplore.result import Claim, Comparison, Outcome
from fpexplore.truth import Truth


def _comparison() -> Comparison:
    truth = Truth("exact third", exact=Fraction(1, 3))
    got = np.float32(1) / np.float32(3)
    return Comparison(
        lesson="demo",
        params={"n": 3},
        truth=truth,
        outcomes=(
            Outcome.measured("float32 divide", "numpy", got, truth),
            Outcome.missing("djl divide", "djl", "no Java runtime. Fix: make djl"),
        ),
        claims={"rounded": Claim("float32 1/3 is correctly rounded", True)},
    )


def test_table_json_and_html_show_every_outcome():
    c = _comparison()
    table = c.table()
    assert "float32 divide" in table and "djl divide" in table and "make djl" in table
    assert "[holds] rounded" in table
    data = json.loads(c.to_json())
    assert data["outcomes"][1]["unavailable"].startswith("no Java")
    assert data["truth"]["exact"] is True
    assert "<table" in c._repr_html_()


def test_error_is_measured_in_ulps_of_the_result_format():
    c = _comparison()
    err = c.outcome("float32 divide").error
    assert err.max_abs_ulp <= 0.5 and err.correctly_rounded
    assert c.outcome("djl divide").error is None and not c.outcome("djl divide").ran


def test_unknown_names_list_what_exists():
    c = _comparison()
    with pytest.raises(KeyError, match="float32 divide"):
        c.outcome("nope")
    with pytest.raises(KeyError, match="rounded"):
        c.holds("nope")
    assert c.holds("rounded")


def test_show_prints_observations_and_claims_wrapped_never_asserting(capsys):
    from fpexplore.result import Claim, Comparison, Observation
    from fpexplore.result.text_table import COLUMNS

    c = Comparison(
        "demo",
        {},
        None,
        (),
        claims={"fails": Claim("a claim that does not hold " * 4, False)},
        observations={"seen": Observation("a long observation " * 8, 3)},
    )
    c.show("seen", "fails")  # a failing claim is printed, not raised
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[observed] seen:") and any("[FAILS] fails" in x for x in out)
    assert max(map(len, out)) <= COLUMNS
    with pytest.raises(KeyError, match="seen, fails"):
        c.show("nope")
