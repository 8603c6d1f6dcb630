"""Claims in three states, observations, and `Comparison.check`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fpexplore import Claim, ClaimFailed, ClaimNotChecked, Comparison, Observation, Outcome


def _comparison() -> Comparison:
    return Comparison(
        lesson="demo",
        params={},
        truth=None,
        outcomes=(Outcome.missing("java loop", "djl", "no Java. Fix: make djl"),),
        claims={
            "yes": Claim("one plus one is two", np.bool_(True)),
            "no": Claim("one plus one is three", False),
            "unknown": Claim("Java sums like numpy", None, "needs Java: make djl"),
        },
        explanation="Why the numbers differ.",
        observations={"cpu": Observation("this CPU matches the recording CPU", False)},
    )


def test_three_states_and_the_old_constructor():
    c = _comparison()
    assert [c.holds(k) for k in ("yes", "no", "unknown")] == [True, False, None]
    assert type(c.claims["yes"].holds) is bool
    assert [c.claims[k].state for k in ("yes", "no", "unknown")] == [
        "holds",
        "fails",
        "not checked",
    ]
    assert c.claims["unknown"].line("unknown").startswith("[not checked] unknown")
    assert "make djl" in c.claims["unknown"].line("unknown")


def test_check_prints_and_asserts(capsys):
    c = _comparison()
    c.check("yes")
    assert "[holds] yes: one plus one is two" in capsys.readouterr().out
    with pytest.raises(ClaimFailed, match="'no'"):
        c.check("yes", "no")
    with pytest.raises(ClaimNotChecked, match="make djl"):
        c.check("unknown")
    with pytest.raises(AssertionError):  # both are assertion errors, for notebooks
        c.check()
    with pytest.raises(KeyError, match="claims: yes, no, unknown"):
        c.check("nope")


def test_check_under_a_table_asserts_without_repeating(capsys):
    """Under a comparison's table (which lists the claims and observations) `check` asserts
    them and says so in one line, printing no claim or observation a second time."""
    c = _comparison()
    c.check("yes", listed=True)
    assert capsys.readouterr().out == "checked: the 1 claim asserted here, listed above, holds\n"
    with pytest.raises(ClaimFailed, match="'no'"):
        c.check(listed=True)
    assert "[observed]" not in capsys.readouterr().out


def test_check_of_the_decided_claims_names_the_others(capsys):
    """`check(decided=True)` asserts what this run decided and prints each claim it could not
    check with its reason, raising nothing for those (a notebook runs on)."""
    c = _comparison()
    c.check("yes", "unknown", decided=True)
    out = capsys.readouterr().out
    assert "[holds] yes" in out and "[not checked] unknown" in out and "make djl" in out
    with pytest.raises(ClaimFailed, match="'no'"):
        c.check(decided=True)
    with pytest.raises(KeyError):
        c.check("nope", decided=True)


def test_observations_are_shown_never_failed(capsys):
    c = _comparison()
    line = c.observations["cpu"].line("cpu")
    assert line.startswith("[observed] cpu") and "False" in line and "FAILS" not in line
    with pytest.raises(ClaimFailed):
        c.check()
    assert "[observed] cpu" in capsys.readouterr().out


def test_to_dict_carries_states_observations_and_explanation():
    d = json.loads(_comparison().to_json())
    assert d["claims"]["unknown"] == {
        "text": "Java sums like numpy",
        "holds": None,
        "state": "not checked",
        "reason": "needs Java: make djl",
    }
    assert d["observations"]["cpu"]["value"] is False
    assert d["explanation"] == "Why the numbers differ."


def test_with_claims_shows_only_the_named_claims_and_names_an_unknown_one():
    c = _comparison()
    part = c.with_claims("yes")
    assert list(part.claims) == ["yes"] and not part.observations
    assert part.outcomes == c.outcomes and list(c.claims) == ["yes", "no", "unknown"]
    with pytest.raises(KeyError, match="claims: yes, no, unknown"):
        c.with_claims("nope")
