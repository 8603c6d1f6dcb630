"""mpmath reference operations: certification, and agreement with torch on random inputs."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import pytest
import torch

from fpexplore.errors import InvalidInput, InvalidParameter, PrecisionError
from fpexplore.truth import reference as R
from fpexplore.truth.certify import agreement

F = torch.nn.functional


def f32(t) -> np.ndarray:
    return np.asarray(t.round("float32"), dtype=np.float32)


def f64(t) -> np.ndarray:
    return np.asarray(t.round("float64"), dtype=np.float64)


def ulp_err(truth32: np.ndarray, got: np.ndarray) -> float:
    """Largest |got - truth| in float32 ULPs of the truth."""
    d = np.abs(truth32.astype(np.float64) - got.astype(np.float64))
    return float(np.max(d / np.spacing(np.abs(truth32)).astype(np.float64)))


@pytest.fixture
def rng():
    return np.random.default_rng(11)


@pytest.mark.parametrize(
    "name,ours,theirs,scale",
    [
        ("exp", R.exp, torch.exp, 3),
        ("tanh", R.tanh, torch.tanh, 3),
        ("erf", R.erf, torch.erf, 2),
        ("sigmoid", R.sigmoid, torch.sigmoid, 5),
        ("log", lambda x: R.log(np.abs(x)), lambda t: torch.log(t.abs()), 10),
    ],
)
def test_elementwise_and_softmax_within_2_ulp_of_torch(rng, name, ours, theirs, scale):
    x = (rng.standard_normal((6, 9)) * scale).astype(np.float32)
    t = ours(x)
    assert t.digits > 30
    assert ulp_err(f32(t), theirs(torch.tensor(x)).numpy()) <= 2, name


@pytest.mark.parametrize("log_form", [False, True])
def test_softmax_matches_torch(rng, log_form):
    x = (rng.standard_normal((6, 9)) * 4).astype(np.float32)
    ours, theirs = (R.log_softmax, torch.log_softmax) if log_form else (R.softmax, torch.softmax)
    t = ours(x, 1)
    assert np.allclose(f64(t), theirs(torch.tensor(x, dtype=torch.float64), 1).numpy(), rtol=1e-14)
    # float32: x - max carries up to half an ULP of max|x|, which exp turns into relative error
    got = theirs(torch.tensor(x), 1).numpy()
    err = np.abs(f32(t).astype(np.float64) - got)
    bound = 2 * np.spacing(np.float32(np.abs(x).max() * 2)).astype(np.float64)
    assert (err <= bound * (np.abs(got) if not log_form else 1) + np.spacing(np.abs(got))).all()


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_torch_float64(rng, approximate):
    x = (rng.standard_normal(50) * 3).astype(np.float32)
    t = R.gelu(x, approximate=approximate)
    ref = F.gelu(torch.tensor(x, dtype=torch.float64), approximate=approximate).numpy()
    assert np.allclose(f64(t), ref, rtol=1e-13, atol=1e-15)
    pos = x > 0  # well conditioned there: float32 torch within 2 ULP
    got = F.gelu(torch.tensor(x), approximate=approximate).numpy()
    assert ulp_err(f32(t)[pos], got[pos]) <= 4


def test_var_std_exact_and_against_torch(rng):
    x = rng.standard_normal((5, 7)).astype(np.float32)
    v = R.var(x, ddof=1)
    xs = [Fraction(float(a)) for a in x.ravel()]
    mean = sum(xs, Fraction(0)) / len(xs)
    assert v.exact == sum(((a - mean) ** 2 for a in xs), Fraction(0)) / (len(xs) - 1)
    ref = torch.tensor(x, dtype=torch.float64)
    assert np.allclose(f64(R.std(x, ddof=1, axis=0)), torch.std(ref, 0).numpy(), rtol=1e-14)
    assert np.allclose(f64(R.var(x, axis=(0, 1))), np.var(x.astype(np.float64)), rtol=1e-14)
    assert np.isnan(f64(R.var(np.array([1.0, np.inf]))))
    with pytest.raises(InvalidParameter, match="ddof"):
        R.var(np.zeros(3), ddof=3)


def test_layer_norm_and_batch_norm_against_torch_float64(rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    x64 = torch.tensor(x, dtype=torch.float64)
    t = R.layer_norm(x, (4, 5), w, b, eps=1e-5)
    ref = F.layer_norm(
        x64, (4, 5), torch.tensor(w, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
    )
    assert np.allclose(f64(t), ref.numpy(), rtol=1e-12, atol=1e-14)
    c = 3
    rm, rv = rng.standard_normal(c).astype(np.float32), rng.random(c).astype(np.float32) + 0.5
    g, be = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    d = {k: torch.tensor(v, dtype=torch.float64) for k, v in dict(rm=rm, rv=rv, g=g, be=be).items()}
    for training in (True, False):
        t = R.batch_norm(x, rm, rv, g, be, training=training, eps=1e-3)
        ref = F.batch_norm(
            x64, d["rm"].clone(), d["rv"].clone(), d["g"], d["be"], training=training, eps=1e-3
        )
        assert np.allclose(f64(t), ref.numpy(), rtol=1e-12, atol=1e-14), training
        assert t.digits > 30
    with pytest.raises(InvalidInput, match="running_mean"):
        R.batch_norm(x, training=False)


def test_normalize_is_exact_and_matches_torchvision(rng):
    x = rng.random((3, 8, 6)).astype(np.float32)
    mean = np.float32([0.485, 0.456, 0.406])
    std = np.float32([0.229, 0.224, 0.225])
    t = R.normalize(x, mean, std)
    assert t.is_exact
    assert t.exact[1, 2, 3] == (Fraction(float(x[1, 2, 3])) - Fraction(float(mean[1]))) / Fraction(
        float(std[1])
    )
    import torchvision.transforms.functional as tv

    got = tv.normalize(torch.tensor(x), mean.tolist(), std.tolist()).numpy()
    assert ulp_err(f32(t), got) <= 2 or np.allclose(f32(t), got, rtol=0, atol=2e-7)
    with pytest.raises(InvalidInput, match="'std' must be non-zero"):
        R.normalize(x, mean, [1, 0, 1])


def test_cross_entropy_against_torch(rng):
    x = (rng.standard_normal((6, 5)) * 2).astype(np.float32)
    tgt = rng.integers(0, 5, 6)
    for red in ("mean", "sum", "none"):
        t = R.cross_entropy(x, tgt, reduction=red)
        ref = F.cross_entropy(
            torch.tensor(x, dtype=torch.float64), torch.tensor(tgt), reduction=red
        )
        assert np.allclose(f64(t), ref.numpy(), rtol=1e-13), red
    with pytest.raises(InvalidInput, match="target"):
        R.cross_entropy(x, tgt[:3])


@pytest.mark.parametrize("antialias", [False, True])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(5, 7), (17, 29), (11, 4), (2, 3)])
def test_resize_bilinear_matches_torch(rng, antialias, align_corners, size):
    x = rng.standard_normal((2, 2, 11, 13)).astype(np.float32)
    t = R.resize_bilinear(x, size, align_corners=align_corners, antialias=antialias)
    assert t.is_exact and t.shape == (2, 2, *size)
    kw = dict(size=size, mode="bilinear", align_corners=align_corners, antialias=antialias)
    ref64 = F.interpolate(torch.tensor(x, dtype=torch.float64), **kw).numpy()
    scale = np.abs(x).max()
    assert np.abs(f64(t) - ref64).max() <= 1e-13 * scale
    # torch float32 computes source coordinates in float32: its weights carry errors up to
    # about an ULP of the largest coordinate, on top of rounding the result
    ref32 = F.interpolate(torch.tensor(x), **kw).numpy()
    coord_ulp = np.spacing(np.float32(max(*x.shape[2:], *size)))
    bound = 2 * np.spacing(np.float32(scale)) + scale * coord_ulp
    assert np.abs(f32(t).astype(np.float64) - ref32).max() <= bound


def test_certified_digits_hold_at_four_times_the_precision(rng):
    x = (rng.standard_normal(8) * 4).astype(np.float32)
    for op in (R.exp, R.tanh, R.sigmoid, lambda v, prec: R.softmax(v, 0, prec=prec)):
        for prec in (24, 53, 113):
            t = op(x, prec=prec)
            four = op(x, prec=4 * prec)
            with mpmath.workprec(8 * prec + 64):
                got = agreement(t.mp(), four.mp(), 8 * prec + 64)
            assert got >= t.digits, (prec, got, t.digits)
            assert t.digits >= 0.9 * prec * np.log10(2)
            with pytest.raises(PrecisionError):
                t.mp(digits=t.digits + 1)


def test_certification_reports_lost_digits():
    # log_softmax([0, -40])[0] = -log(1 + e**-40): at 53 bits the sum rounds to 1 and every
    # digit is lost; at 113 bits about 58 bits of the 113 survive.
    x = np.array([0.0, -40.0])
    t = R.log_softmax(x, prec=53)
    assert t.digits < 1
    t = R.log_softmax(x, prec=113)
    assert 12 < t.digits < 30
    with mpmath.workprec(600):
        exact = -mpmath.log(1 + mpmath.exp(-40))
        assert agreement(t.mp()[0], exact, 600) >= t.digits


def test_reference_input_errors():
    with pytest.raises(InvalidParameter, match="'prec'"):
        R.exp(np.zeros(2), prec=4)
    with pytest.raises(InvalidInput, match="'x' has dtype int64"):
        R.tanh(np.arange(3))
    with pytest.raises(InvalidParameter, match="'approximate'"):
        R.gelu(np.zeros(2), approximate="fast")
    with pytest.raises(InvalidParameter, match="'normalized_shape'"):
        R.layer_norm(np.zeros((2, 3)), 4)
    with pytest.raises(InvalidParameter, match="'size'"):
        R.resize_bilinear(np.zeros((4, 4)), (0, 3))
    with pytest.raises(InvalidInput, match="finite"):
        R.resize_bilinear(np.array([[np.nan, 1.0]]), 3)


def test_ieee_specials_propagate():
    t = R.exp(np.array([np.inf, -np.inf, np.nan]))
    v = t.mp()
    assert v[0] == mpmath.inf and v[1] == 0 and mpmath.isnan(v[2])
    assert np.isnan(f64(R.log(np.array([-1.0])))[0])
    assert f64(R.log(np.array([0.0])))[0] == -np.inf
    assert np.isnan(f64(R.softmax(np.array([np.nan, 1.0])))).all()


def _wide(rng: np.random.Generator, shape: tuple[int, ...], dt: type) -> np.ndarray:
    """Values over a wide exponent range, repeated values, zeros and both signs."""
    n = int(np.prod(shape))
    lo, hi = (-140, 120) if dt == np.float32 else (-1060, 1000)
    x = np.ldexp(rng.uniform(1, 2, n), rng.integers(lo, hi, n)) * rng.choice([-1, 1], n)
    x[rng.integers(0, n, n // 4)] = x[0]
    x[rng.integers(0, n, n // 8)] = 0.0
    return x.astype(dt).reshape(shape)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_normalize_against_fractions_on_wide_ranges(rng, dt):
    for i in range(6):
        shape = (2, 3, 4, 5) if i % 2 else (3, 5, 7)
        x = _wide(rng, shape, dt)
        mean = _wide(rng, (3,), dt)
        std = _wide(rng, (3,), dt)
        std[std == 0] = 1
        got = R.normalize(x, mean, std).exact
        xc = np.moveaxis(x, -3, 0)
        gc = np.moveaxis(got, -3, 0)
        for c in range(3):
            fm, fs = Fraction(float(mean[c])), Fraction(float(std[c]))
            for j, v in enumerate(xc[c].reshape(-1).tolist()):
                assert gc[c].reshape(-1)[j] == (Fraction(v) - fm) / fs, (i, c, j)


@pytest.mark.parametrize("antialias", [False, True])
def test_resize_against_fraction_weights_on_wide_ranges(rng, antialias):
    for i, (h, w, oh, ow) in enumerate([(5, 7, 3, 9), (6, 4, 6, 2), (1, 3, 4, 1), (9, 8, 4, 5)]):
        x = _wide(rng, (2, h, w), np.float32 if i % 2 else np.float64)
        for ac in (False, True):
            got = R.resize_bilinear(x, (oh, ow), align_corners=ac, antialias=antialias).exact
            mk = R._aa_weights if antialias else R._linear_weights
            wy, wx = mk(h, oh, ac), mk(w, ow, ac)
            for p in range(2):
                for o in range(oh):
                    for q in range(ow):
                        want = sum(
                            (
                                a * b * Fraction(float(x[p, r, c]))
                                for r, a in wy[o].items()
                                for c, b in wx[q].items()
                            ),
                            Fraction(0),
                        )
                        assert got[p, o, q] == want, (i, ac, p, o, q)


def test_center_crop_interpolates_half_pixel_offsets(rng):
    img = rng.integers(0, 256, (10, 12, 3), dtype=np.uint8)
    whole = R.center_crop(img, 4).exact  # offsets 3 and 4: a plain slice
    assert whole.dtype == object and np.array_equal(whole, img[3:7, 4:8].astype(object))
    half = R.center_crop(img, 5).exact  # offsets 2.5 and 3.5: the mean of four slices
    four = [img[y : y + 5, x : x + 5].astype(object) for y in (2, 3) for x in (3, 4)]
    assert all(isinstance(v, Fraction) for v in half.flat)
    assert np.array_equal(half, sum(four) / Fraction(4))
