"""Distributed reductions: gloo over 1, 2, 4 ranks on this CPU, the fixes, the NCCL record."""

from __future__ import annotations

import numpy as np
import pytest

import fpexplore
from fpexplore import backends, truth
from fpexplore.errors import BackendUnavailable, InvalidParameter
from fpexplore.lessons import distributed_reduction as dr
from fpexplore.lessons.distributed_reduction import nccl_record, sums

CLAIMS = (
    "world_sizes_differ",
    "plain_not_exact",
    "fixed_order_reproducible",
    "float64_exact",
    "kahan_faithful",
)


@pytest.fixture(scope="module")
def comparison():
    backends.load("torch")
    return fpexplore.run("distributed_reduction", n=2048, seed=0)


def test_claims_hold_live_with_gloo(comparison):
    for key in CLAIMS:
        assert comparison.claims[key].holds is True, comparison.claims[key]
    # one outcome per method and world size, each measured against the exact sum
    assert len(comparison.outcomes) == len(dr.METHODS) * len(dr.WORLDS)
    assert comparison.truth.is_exact
    f64 = [o for o in comparison.outcomes if o.settings["method"] == "float64"]
    assert all(o.error.correctly_rounded for o in f64)
    plain = [o for o in comparison.outcomes if o.settings["method"] == "plain"]
    assert all(not o.error.correctly_rounded for o in plain)


def test_rank_ordered_partials_are_what_was_summed(comparison):
    """The gathered partial sums, added in rank order, are at most a few ULP from exact."""
    r = comparison.data.results["rank_ordered"][4]
    assert sums.ulp_distance(r, comparison.data.exact).max() < 2**12


def test_exact_rounding_matches_truth():
    rng = np.random.default_rng(3)
    for w in (2, 3, 4):
        d = np.stack([sums.rank_data(7, r, 2000) for r in range(w)])
        d[:, :40] *= np.float32(2.0**-40) ** rng.integers(0, 3, (w, 40)).astype(np.float32)
        d[0, 50], d[1, 50] = np.float32(3e38), np.float32(-3e38)
        want = np.asarray(truth.sum(d, axis=0).round("float32"), dtype=np.float32)
        assert np.array_equal(sums.exact_rounded(d).view(np.uint32), want.view(np.uint32))


def test_without_torch_claims_are_not_checked(monkeypatch):
    def missing(*_a, **_k):
        raise BackendUnavailable("torch", "the Python module 'torch' is not installed.", "make")

    monkeypatch.setattr(dr, "_gloo", missing)
    c = dr.LESSON.run(n=64)
    assert all(c.claims[k].holds is None for k in CLAIMS)
    assert all(not o.ran and "torch" in o.unavailable for o in c.outcomes)


def test_bad_parameter():
    with pytest.raises(InvalidParameter, match="'n'"):
        dr.LESSON.run(n=3)


def test_nccl_record_validates_and_rechecks():
    try:
        _path, data = nccl_record.load()
    except fpexplore.RecordError as exc:
        pytest.fail(f"the NCCL record is missing: {exc}")
    assert data["provenance"]["backend"] == "nccl" and data["provenance"]["gpu_count"] >= 4
    worlds = {r["world"] for r in data["runs"] if r["ok"]}
    assert {2, 3, 4} <= worlds
    for row in nccl_record.recheck_bits(data):
        assert row["n_differ_exact"] == row["recorded_n_differ_exact"], row
        assert row["n_differ_rank_ordered"] == row["recorded_n_differ_rank_ordered"], row
    with pytest.raises(fpexplore.RecordError, match="format"):
        nccl_record.validate({**data, "format": "other"})


def test_notebook_11s_facts_about_the_gloo_run(comparison):
    """What notebook 11's answers show: at 2 ranks the plain all-reduce is the rank-ordered
    sum, and the fixed order is reproducible but not exact at any world size."""
    res = comparison.data.results
    assert np.array_equal(res["plain"][2], res["rank_ordered"][2])
    assert all(v > 0 for v in comparison.data.not_exact["fixed_order"].values())


def test_notebook_11s_facts_about_the_nccl_record(comparison):
    """The recorded NCCL run: the default setting is the ring element for element, Tree with
    four ranks is the reverse chain, and the default differs from rank order at four ranks."""
    rows = [r for r in comparison.data.nccl.rows if r.ok]
    by = {(r.algo, r.world, r.size): r for r in rows}
    default = {k[1:]: r for k, r in by.items() if k[0] == "default"}
    assert all(r.n_equal_order == by[("Ring", *k)].n_equal_order for k, r in default.items())
    tree4 = [r for r in rows if r.algo == "Tree" and r.world == 4]
    assert all(r.equal_to("reverse ring from rank 3") == r.n for r in tree4)
    four = max((r for r in default.values() if r.world == 4), key=lambda r: r.size)
    assert four.n_differ_rank_ordered > 0
