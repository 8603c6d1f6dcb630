"""Exact products computed level by level (`fpexplore.truth.levels`) against integer oracles.

Every answer a leveled truth gives (roundings to four formats, exact values at chosen outputs,
the whole expansion, `metrics.measure` of results) is compared with exact integer arithmetic
on generated adversarial inputs: the whole float32 exponent range, subnormals, +-max,
cancellation to exactly zero, zero rows and columns, single huge elements. The planning
policy is forced both ways (deeper levels always, or exact dot products at once).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import fpexplore.truth as T
from fpexplore import formats, metrics
from fpexplore.truth import levels
from fpexplore.truth.expansion import fractions

FORMATS = ("float16", "bfloat16", "float32", "float64")
UNIT = 298  # float32 products are integer multiples of 2**-298


def _wide(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float32 values with every binade equally likely (subnormals included), mixed signs."""
    e = rng.integers(-149, 128, shape)
    x = np.ldexp(rng.uniform(1, 2, shape), e) * rng.choice([-1.0, 1.0], shape)
    with np.errstate(over="ignore", under="ignore"):
        out = x.astype(np.float32)
    out[~np.isfinite(out)] = np.float32(3.4028235e38)
    return out


def _batch(rng: np.random.Generator, m: int, k: int, n: int, kind: str):
    a, b = _wide(rng, (m, k)), _wide(rng, (k, n))
    if kind == "cancel":  # terms in pairs u * v and u * -v: outputs exactly zero (even k)
        h = k // 2
        a[:, h : 2 * h] = a[:, :h]
        b[h : 2 * h] = -b[:h]
    elif kind == "zeros":  # zero rows and columns beside wide ones
        a[::3] = 0
        b[:, 1::3] = 0
    elif kind == "extremes":  # +-max, the smallest subnormal, one huge element per row
        a[:, 0] = np.float32(3.4028235e38)
        a[:, -1] = np.float32(1e-45)
        b[0, ::2] = -np.float32(3.4028235e38)
        b[-1] = np.float32(-1e-45)
    elif kind == "subnormal":
        a = (rng.standard_normal((m, k)) * 1e-39).astype(np.float32)
        b[: k // 2] = _wide(rng, (k // 2, n))
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


def _ints(x: np.ndarray) -> np.ndarray:
    """float32 values as Python ints in units of 2**-149 (object array)."""
    out = np.empty(x.shape, dtype=object)
    for i, v in np.ndenumerate(x.astype(np.float64)):
        f = Fraction(float(v)) * 2**149
        assert f.denominator == 1
        out[i] = int(f)
    return out


def _oracle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The exact product in units of 2**-298 (object array of ints)."""
    return _ints(a).dot(_ints(b))


def _round(v: int, fmt: str) -> float:
    return float(formats.round_exact(Fraction(v, 1 << UNIT), fmt))


def _leveled(a: np.ndarray, b: np.ndarray) -> T.Truth:
    t = T.matmul(a, b)
    assert t._leveled is not None, "wide rows are computed level by level"
    return t


CASES = [
    (m, k, n, kind)
    for (m, k, n) in ((7, 3, 5), (9, 40, 11), (6, 256, 8), (4, 1024, 5), (1, 300, 17), (13, 64, 1))
    for kind in ("wide", "cancel", "zeros", "extremes", "subnormal")
]


@pytest.fixture(params=["planned", "deepest", "exact_at_once"])
def policy(request, monkeypatch):
    """The planner as shipped, forced to deepen always, or to go exact at once."""
    if request.param == "deepest":
        monkeypatch.setattr(levels, "ELEMENTWISE_COST", 1e30)
    elif request.param == "exact_at_once":
        monkeypatch.setattr(levels, "ELEMENTWISE_COST", 0.0)
    return request.param


def test_roundings_are_exact(policy):
    rng = np.random.default_rng(11)
    checked = leveled = 0
    for m, k, n, kind in CASES * 2:
        a, b = _batch(rng, m, k, n, kind)
        want = _oracle(a, b)
        leveled += T.matmul(a, b)._leveled is not None
        for fmt in FORMATS:
            t = T.matmul(a, b)
            got = np.asarray(t.round(fmt), dtype=np.float64)
            exp = np.array([[_round(v, fmt) for v in row] for row in want])
            same = (got == exp) & (np.signbit(got) == np.signbit(exp))
            assert same.all(), (m, k, n, kind, fmt, got[~same][:3], exp[~same][:3])
            checked += got.size
    assert checked > 9000 and leveled >= 40, (checked, leveled)


def test_ties_and_neighbours_of_rounding_boundaries():
    """Outputs that are exactly float32 midpoints or a hair beside them (k = 2 * 3 terms)."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        base = rng.standard_normal(8).astype(np.float32)
        half = np.spacing(base) / 2  # a float32 midpoint above each base value
        tiny = np.ldexp(np.float32(1), rng.integers(-149, -60, 8)).astype(np.float32)
        sign = rng.choice([-1, 0, 1], 8).astype(np.float32)
        a = np.stack([base, half.astype(np.float32), tiny * sign], axis=1)  # rows (8, 3)
        huge = _wide(rng, (8, 3))  # and wide rows beside them, for the leveled path
        a = np.concatenate([a, huge], axis=1)
        b = np.concatenate([np.ones((3, 1), np.float32), np.zeros((3, 1), np.float32)])
        b = np.concatenate([b, _wide(rng, (6, 1))], axis=1)
        b[3:, 0] = 0
        want = _oracle(a, b)
        t = T.matmul(a, b)
        for fmt in FORMATS:
            got = np.asarray(T.matmul(a, b).round(fmt), dtype=np.float64).ravel()
            exp = [_round(v, fmt) for v in want.ravel()]
            assert got.tolist() == exp
        assert t.round("float32").shape == (8, 2)


def test_bound_holds_at_every_level():
    rng = np.random.default_rng(3)
    for m, k, n, kind in CASES[::2]:
        a, b = _batch(rng, m, k, n, kind)
        want = _oracle(a, b)
        lv = levels.LeveledProduct(a, b, levels=0)
        while True:
            have = np.array(fractions(lv.coefficients).tolist()) if lv.coefficients else 0
            rest = np.abs(np.asarray(want, dtype=object) / Fraction(1 << UNIT) - have)
            bound = np.vectorize(Fraction, otypes=[object])(lv.bound())
            assert (rest <= bound).all(), (m, k, n, kind, lv.levels)
            if lv.complete:
                assert (rest == 0).all()
                break
            lv.extend()


def test_exact_values_at_outputs_and_whole_expansion():
    rng = np.random.default_rng(7)
    for m, k, n, kind in CASES:
        a, b = _batch(rng, m, k, n, kind)
        want = (np.asarray(_oracle(a, b), dtype=object) / Fraction(1 << UNIT)).ravel()
        t = T.matmul(a, b)
        idx = rng.permutation(m * n)[: max(1, m * n // 2)]
        at = fractions(t.parts_at(idx))
        assert list(at) == list(want[idx])
        assert list(np.ravel(t.exact)) == list(want)  # the whole product, completed


def test_measure_agrees_with_the_completed_product():
    """measure() on a leveled truth gives the same flags as on the whole expansion, and its
    errors to a few parts in 2**50."""
    rng = np.random.default_rng(13)
    for m, k, n, kind in CASES:
        a, b = _batch(rng, m, k, n, kind)
        exact = _oracle(a, b)
        for fmt in ("float32", "float64"):
            correct = np.array([[_round(v, fmt) for v in row] for row in exact])
            with np.errstate(over="ignore"):
                near = np.nextafter(correct.astype(fmt), np.asarray(np.inf, fmt))
            for got in (correct.astype(fmt), near):
                lazy = metrics.measure(got, T.matmul(a, b))
                whole = T.matmul(a, b)
                assert whole.expansion is not None  # completes it
                ref = metrics.measure(got, whole)
                for name in ("correctly_rounded_each", "faithful_each"):
                    assert np.array_equal(getattr(lazy, name), getattr(ref, name)), (kind, fmt)
                for name in ("ulp", "rel"):
                    x, y = getattr(lazy, name), getattr(ref, name)
                    fin = np.isfinite(y)
                    assert np.array_equal(np.isfinite(x), fin)
                    assert np.allclose(x[fin], y[fin], rtol=2.0**-40, atol=0), (kind, fmt, name)
                # a correctly rounded result is said to be so
                if got is not near:
                    assert lazy.correctly_rounded


def test_exact_dots_against_the_oracle():
    rng = np.random.default_rng(17)
    for m, k, n, kind in CASES:
        a, b = _batch(rng, m, k, n, kind)
        want = (np.asarray(_oracle(a, b), dtype=object) / Fraction(1 << UNIT)).ravel()
        rows, cols = np.divmod(np.arange(m * n), n)
        got = fractions(levels.exact_dots(a, b, rows, cols))
        assert list(got) == list(want)


def test_narrow_rows_keep_the_whole_expansion():
    """Normal data needs a few BLAS products for the whole product: no levels are planned."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 16)).astype(np.float32)
    t = T.matmul(a, b)
    assert t._leveled is None and t.expansion is not None


def test_deepen_meets_a_rigorous_aim_or_leaves_it_to_exact_values():
    rng = np.random.default_rng(19)
    a, b = _batch(rng, 12, 256, 12, "wide")
    t = _leveled(a, b)
    hi = t.split_bounded()[0]
    aim = np.abs(hi).reshape(-1) * 2.0**-80
    t.deepen(aim)
    after = t.split_bounded()[3].reshape(-1)
    lv = t._leveled
    assert lv is not None and lv.levels > 2
    # the depth is optimal against one level more: that would not save more exact values
    # than it costs (each level divides the bound by 2**beta)
    over = int((after > aim).sum())
    over_next = int((after * 2.0**-lv.beta > aim).sum())
    assert lv.exact_cost(over) <= lv.extend_cost() + lv.exact_cost(over_next)
    # and what is left above the aim is decided exactly by measure/round (parts_at)
    idx = np.flatnonzero(after > aim)
    if idx.size:
        assert len(t.parts_at(idx)[0]) == idx.size


def test_measure_of_infinite_and_nan_results_matches_fractions():
    """Results that overflowed (or are NaN) are measured from the exact rounding and the
    exact sign of |truth| - max, all at once: the same as element by element with Fractions."""
    rng = np.random.default_rng(23)
    for m, k, n, kind in CASES:
        a, b = _batch(rng, m, k, n, kind)
        exact = np.asarray(_oracle(a, b), dtype=object) / Fraction(1 << UNIT)
        with np.errstate(over="ignore"):
            got = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        flat = got.reshape(-1)
        pick = rng.permutation(flat.size)[: max(1, flat.size // 3)]
        flat[pick[::3]] = np.inf
        flat[pick[1::3]] = -np.inf
        flat[pick[2::3]] = np.nan
        for t in (T.matmul(a, b), T.Truth("whole", expansion=T.matmul(a, b).expansion)):
            lazy = metrics.measure(got, t)
            ref = metrics.measure(got, T.Truth("fractions", exact=exact))
            for name in ("correctly_rounded_each", "faithful_each", "ulp", "rel", "bits"):
                x, y = getattr(lazy, name), getattr(ref, name)
                assert np.array_equal(x, y, equal_nan=True) or np.allclose(
                    x, y, rtol=2.0**-40, equal_nan=True
                ), (kind, name)


def test_infinite_result_beside_the_largest_value():
    """A truth a hair above, at or below float32's max: got = inf is faithful only above."""
    big, tiny = np.float32(3.4028235e38), np.float32(1e-45)
    for s in (1, 0, -1):
        a = np.array([[big, tiny, np.float32(2.0**-100)]], dtype=np.float32)
        b = np.array([[1.0], [s * tiny], [0.0]], dtype=np.float32)
        exact = np.asarray(_oracle(a, b), dtype=object) / Fraction(1 << UNIT)
        for t in (T.matmul(a, b), T.Truth("fractions", exact=exact)):
            for got in (np.float32(np.inf), np.float32(-np.inf), big):
                res = metrics.measure(np.array([[got]]), t)
                assert bool(res.faithful) == ((got == np.inf and s > 0) or got == big), (
                    s,
                    got,
                    type(t),
                )
                assert not res.correctly_rounded if np.isinf(got) else res.correctly_rounded
