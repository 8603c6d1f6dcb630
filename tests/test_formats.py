"""Formats: conversions agree with numpy and torch on 10^5 bit patterns each, and with an
independent Fraction-arithmetic rounding written here."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from fpexplore import formats
from fpexplore.errors import InvalidInput, InvalidParameter

N = 100_000
NAMES = formats.names()


def _grid_values(f: formats.Format, n: int, rng: np.random.Generator) -> np.ndarray:
    """Random finite values of format ``f`` (as float64), from random bit patterns."""
    top = (1 << f.ebits) - 1
    e = rng.integers(0, top, n)  # biased exponent field, never the inf/nan one
    m = rng.integers(0, 1 << f.mbits, n, dtype=np.uint64).astype(np.float64)
    mag = np.where(
        e == 0,
        np.ldexp(m, f.emin - f.mbits),
        np.ldexp(m + 2.0**f.mbits, (e - f.bias - f.mbits).astype(np.int32)),
    )
    return np.where(rng.random(n) < 0.5, -mag, mag)


def patterns(fmt: str, n: int = N, seed: int = 0) -> np.ndarray:
    """float64 inputs for rounding to ``fmt``: raw random bit patterns (NaN, inf, subnormal
    included), values spread over the format's exponent range, exact ties and near-ties,
    and the boundaries (max, overflow threshold, subnormal thresholds)."""
    with np.errstate(over="ignore"):
        return _patterns(formats.get(fmt), n, np.random.default_rng(seed))


def _patterns(f: formats.Format, n: int, rng: np.random.Generator) -> np.ndarray:
    k = n // 5
    raw = rng.integers(0, 2**64, k, dtype=np.uint64).view(np.float64)
    raw[: k // 20] = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -2.2e-308])[
        rng.integers(0, 7, k // 20)
    ]
    exps = rng.integers(f.emin - f.mbits - 3, f.emax + 2, k)
    spread = np.ldexp(1.0 + rng.random(k), exps.astype(np.int32)) * rng.choice([-1, 1], k)
    grid = _grid_values(f, 2 * k, rng)
    half = np.asarray(formats.ulp(grid, f)) / 2
    half = np.where(np.abs(grid) == 0, f.min_subnormal / 2, half)
    ties = grid + np.copysign(half, grid) * rng.choice([-1, 1], 2 * k) if f.mbits < 52 else grid
    near = np.nextafter(ties, rng.choice([-np.inf, np.inf], 2 * k))
    edges = np.array(
        [
            f.max,
            np.nextafter(f.max + f.max * f.eps / 4, np.inf),
            f.max * (1 + f.eps / 2),
            f.tiny,
            f.min_subnormal,
            f.min_subnormal / 2,
            f.min_subnormal * 0.75,
            f.tiny - f.min_subnormal / 2,
            np.nextafter(f.min_subnormal / 2, 1),
        ]
    )
    edges = np.concatenate([edges, -edges])
    out = np.concatenate([raw, spread, ties[:k], near[:k], grid[:k], edges])
    return out[:n] if out.size >= n else np.concatenate([out, grid[: n - out.size]])


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: equal bit patterns, any two NaNs counting as equal."""
    a, b = np.asarray(a), np.asarray(b)
    width = a.dtype.itemsize
    ui = {2: np.uint16, 4: np.uint32, 8: np.uint64}[width]
    return (a.view(ui) == b.view(ui)) | (np.isnan(a) & np.isnan(b))


# --------------------------------------------------------------------------------------------
# an independent reference: Fraction comparisons against the two candidate neighbours


def ref_round(v: Fraction, p: int, emin: int, emax: int) -> float:
    """Round ``v`` to precision ``p`` with exponent range [emin, emax], half to even."""
    if v == 0:
        return 0.0
    sign = -1 if v < 0 else 1
    a = abs(v)
    e = emin
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    quantum = Fraction(2) ** (e - p + 1)
    lower = (a // quantum) * quantum
    upper = lower + quantum
    if a - lower < upper - a:
        r = lower
    elif a - lower > upper - a:
        r = upper
    else:
        r = lower if (lower / quantum) % 2 == 0 else upper
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if r > largest:
        return sign * math.inf
    return sign * float(r)


def ref_round_value(x: float, f: formats.Format) -> float:
    if not math.isfinite(x):
        return x
    if x == 0:
        return x
    return ref_round(Fraction(x), f.precision, f.emin, f.emax)


def as_objects(x: np.ndarray) -> np.ndarray:
    return np.array([Fraction(v) if math.isfinite(v) else v for v in x.tolist()], dtype=object)


# --------------------------------------------------------------------------------------------
# agreement with numpy on 10^5 patterns


@pytest.mark.parametrize("name", ["binary16", "binary32", "binary64"])
def test_round_array_agrees_with_numpy(name):
    f = formats.get(name)
    x = patterns(name)
    assert x.size == N
    assert np.isnan(x).any() and np.isinf(x).any() and (np.abs(x) < f.tiny).any()
    with np.errstate(invalid="ignore", over="ignore"):
        expected = x.astype(f.dtype)
    got = formats.round_array(x, name)
    assert got.dtype == f.dtype
    assert same_bits(got, expected).all()


@pytest.mark.parametrize("name", ["binary16", "binary32", "binary64"])
def test_round_exact_of_fractions_agrees_with_numpy(name):
    f = formats.get(name)
    x = patterns(name, seed=1)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = x.astype(f.dtype)
    got = formats.round_exact(as_objects(x), name)
    assert got.dtype == f.dtype and got.shape == x.shape
    # Fraction has no -0: compare zeros by value, everything else bit for bit
    assert (same_bits(got, expected) | ((got == 0) & (expected == 0))).all()


def test_float32_inputs_to_binary16_agree_with_numpy():
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x[:1000] = np.ldexp(1.0 + rng.random(1000), rng.integers(-27, 17, 1000)).astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        assert same_bits(formats.round_array(x, "half"), x.astype(np.float16)).all()


# --------------------------------------------------------------------------------------------
# bfloat16 against torch, bfloat16 and TF32 against Fraction arithmetic


def _torch_bf16_bits(x: np.ndarray) -> np.ndarray:
    import torch

    return torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def test_bfloat16_agrees_with_torch_on_float32_patterns():
    with np.errstate(over="ignore", invalid="ignore"):
        x = patterns("bfloat16", seed=3).astype(np.float32)
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = np.concatenate([x[: N // 2], raw[: N // 2]])
    assert x.size == N
    ours = formats.bits(x, "bfloat16")
    theirs = _torch_bf16_bits(x)
    assert ((ours == theirs) | np.isnan(x)).all()
    assert np.isnan(formats.from_bits(ours[np.isnan(x)], "bfloat16")).all()


def test_torch_rounds_float64_to_bfloat16_through_float32():
    """torch converts float64 -> bfloat16 via float32: two roundings. On near-ties that is not
    the correctly rounded bfloat16 value; our two-step rounding reproduces torch bit for bit."""
    x = patterns("bfloat16", seed=4)
    theirs = _torch_bf16_bits(x)
    two_step = formats.bits(formats.round_array(x, "float32"), "bfloat16")
    direct = formats.bits(x, "bfloat16")
    assert ((two_step == theirs) | np.isnan(x)).all()
    assert ((direct != theirs) & ~np.isnan(x)).any()


@pytest.mark.parametrize("name", ["bfloat16", "tf32", "binary16"])
def test_rounding_agrees_with_fraction_reference(name):
    f = formats.get(name)
    x = patterns(name, seed=5)
    fast = formats.round_array(x, name)
    exact = formats.round_exact(as_objects(x), name)
    assert (same_bits(fast, exact) | ((fast == 0) & (exact == 0))).all()
    # the Fraction reference is slower: a spread-out sample of the same patterns
    rng = np.random.default_rng(5)
    idx = np.concatenate([rng.choice(N, 3000, replace=False), np.arange(N - 18, N)])
    ref = np.array([ref_round_value(v, f) for v in x[idx].tolist()], dtype=np.float64)
    assert same_bits(fast[idx].astype(np.float64), ref).all()


def test_bfloat16_grid_and_tf32_grid():
    x = patterns("tf32", seed=6)
    for name, low_bits in (("bfloat16", 16), ("tf32", 13)):
        r = formats.round_array(x, name)
        assert r.dtype == np.float32
        finite = r[np.isfinite(r)]
        assert (finite.view(np.uint32) & np.uint32((1 << low_bits) - 1) == 0).all()


# --------------------------------------------------------------------------------------------
# exact inputs of every kind


@pytest.mark.parametrize("name", NAMES)
def test_mpmath_values_round_like_their_fractions(name):
    rng = np.random.default_rng(7)
    f = formats.get(name)
    with mpmath.workprec(200):
        for _ in range(300):
            man = int(rng.integers(1, 2**62)) << 100 | int(rng.integers(0, 2**62))
            exp = int(rng.integers(f.emin - f.mbits - 170, f.emax - 160))
            v = mpmath.ldexp(mpmath.mpf(man), exp) * (1 if rng.random() < 0.5 else -1)
            frac = Fraction(int(v.man) * (-1 if v < 0 else 1)) * Fraction(2) ** int(v.exp)
            assert formats.round_exact(v, name) == formats.round_exact(frac, name)
    assert np.isnan(formats.round_exact(mpmath.nan, name))
    assert formats.round_exact(-mpmath.inf, name) == -np.inf
    assert formats.round_exact(mpmath.mpf("1e-100000"), name) == 0
    assert formats.round_exact(mpmath.mpf("1e100000"), name) == np.inf


def test_classic_values():
    assert formats.round_exact(16777217, "float32") == 16777216  # tie to even
    assert formats.round_exact(16777219, "float32") == 16777220  # tie to even, upwards
    assert formats.round_exact(Fraction(65519), "half") == 65504
    assert formats.round_exact(Fraction(65520), "half") == np.inf  # the overflow threshold
    assert formats.round_exact(Fraction(1, 10), "float64") == 0.1
    assert formats.round_exact(Fraction(1, 3), "bfloat16") == np.float32(0.333984375)
    assert formats.round_exact(Fraction(1, 3), "tf32") == np.float32(0.333251953125)
    assert formats.round_exact(-0.0, "half").tobytes() == np.float16(-0.0).tobytes()
    assert isinstance(formats.round_exact(1, "tf32"), np.float32)
    assert formats.round_bits(1, "bfloat16") == 0x3F80
    assert formats.round_bits(1, "tf32") == 0x3F80 << 3


def test_round_exact_rejects_what_it_cannot_read():
    with pytest.raises(InvalidInput, match="str"):
        formats.round_exact("0.1", "half")


def test_get_accepts_names_and_dtypes_and_lists_the_accepted():
    assert formats.get("half") is formats.get(np.float16) is formats.get("binary16")
    assert formats.get(np.dtype("float32")).name == "binary32"
    assert formats.get("double").name == "binary64"
    assert formats.get("BF16").name == "bfloat16"
    import torch

    assert formats.get(torch.bfloat16).name == "bfloat16"
    assert formats.get(torch.float64).name == "binary64"
    with pytest.raises(InvalidParameter) as info:
        formats.get("float8")
    msg = str(info.value)
    assert "'fmt'" in msg and "float8" in msg
    assert all(n in msg for n in NAMES)
    assert formats.named("half") is formats.get("binary16")
    with pytest.raises(InvalidParameter, match="float8"):
        formats.named("float8")


# --------------------------------------------------------------------------------------------
# fields, classes, ulp, neighbours


@pytest.mark.parametrize("name", ["binary16", "binary32", "binary64"])
def test_bits_classes_ulp_and_neighbours_agree_with_numpy(name):
    f = formats.get(name)
    with np.errstate(invalid="ignore", over="ignore"):
        x = patterns(name, n=20_000, seed=8).astype(f.dtype)
    ui = f.bits_dtype
    assert (formats.bits(x, name) == x.view(ui)).all()
    cls = formats.classify(x, name)
    a = np.abs(x)
    assert (cls == "nan").sum() == np.isnan(x).sum()
    assert ((cls == "inf") == np.isinf(x)).all()
    assert ((cls == "zero") == (x == 0)).all()
    assert ((cls == "subnormal") == ((a > 0) & (a < f.tiny))).all()
    with np.errstate(invalid="ignore", over="ignore"):
        up, down = np.nextafter(x, f.dtype.type(np.inf)), np.nextafter(x, f.dtype.type(-np.inf))
        finite = np.isfinite(x) & (a < f.max)
        spacing = np.nextafter(a, f.dtype.type(np.inf)).astype(np.float64) - a
    assert same_bits(formats.next_up(x, name), up).all()
    assert same_bits(formats.next_down(x, name), down).all()
    assert (formats.ulp(x[finite], name) == spacing[finite]).all()
    fl = formats.fields(x, name)
    assert ((fl.sign == 1) == np.signbit(x)).all()
    assert (fl.exponent < (1 << f.ebits)).all() and (fl.mantissa < (1 << f.mbits)).all()


@pytest.mark.parametrize("name", ["bfloat16", "tf32"])
def test_every_pattern_of_the_narrow_formats(name):
    f = formats.get(name)
    p = np.arange(1 << f.width, dtype=np.uint32)
    v = formats.from_bits(p, name)
    nan = np.isnan(v)
    assert nan.sum() == 2 * ((1 << f.mbits) - 1)
    assert (formats.bits(v[~nan], name) == p[~nan]).all()
    cls = formats.classify(v, name)
    assert (cls == "subnormal").sum() == 2 * ((1 << f.mbits) - 1)
    assert (cls == "zero").sum() == 2 and (cls == "inf").sum() == 2
    # next_up walks the positive patterns one by one
    pos = v[: ((1 << f.ebits) - 1) << f.mbits]  # +0 ... largest finite
    assert (formats.next_up(pos, name)[:-1] == pos[1:]).all()
    assert formats.next_up(pos[-1], name) == np.inf
    assert formats.next_up(np.float32(f.max), name) == np.inf
    assert formats.next_down(np.float32(0.0), name) == -f.min_subnormal
    finite_pos = pos[:-1]
    gaps = pos[1:].astype(np.float64) - finite_pos
    assert (formats.ulp(finite_pos, name) == gaps).all()


def test_fields_and_bit_strings():
    assert formats.bit_string(1.0, "bfloat16") == "0 01111111 0000000"
    assert formats.bit_string(-2.0, "half") == "1 10000 0000000000"
    assert formats.fields(Fraction(1, 10), "tf32") == formats.Fields(
        0, 123, 0b1001100110, 0x3DCCC000 >> 13
    )
    assert formats.classify(1e-40, "float32") == "subnormal"
    assert formats.classify(1e-40, "half") == "zero"
    assert formats.classify(1e-40, "float64") == "normal"
    assert formats.ulp(Fraction(1, 3), "half") == 2.0**-12
    assert formats.ulp(0.0, "bfloat16") == 2.0**-133
    assert np.isnan(formats.ulp(np.nan, "half")) and formats.ulp(-np.inf, "half") == np.inf
    with pytest.raises(InvalidParameter, match="pattern"):
        formats.from_bits(1 << 16, "bfloat16")
    with pytest.raises(InvalidInput):
        formats.bit_string(np.zeros(2), "half")


def test_round_exact_of_values_beyond_float64_range():
    """Fractions and ints too large for a float still round (to ±inf, or ±0 when tiny)."""
    for name in formats.names():
        assert formats.round_exact(Fraction(10**400), name) == math.inf
        assert formats.round_exact(-(10**400), name) == -math.inf
        tiny = formats.round_exact(Fraction(-1, 10**400), name)
        assert tiny == 0 and math.copysign(1, tiny) == -1
