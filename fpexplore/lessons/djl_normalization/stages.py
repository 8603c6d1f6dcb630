"""The stages of `djl_normalization`, one function each: the classic std example, decode,
resize, centre crop, ToTensor and Normalize.

Each stage runs DJL (in its worker), torch/torchvision, numpy and TensorFlow on the same input
bits and returns ``(truth, outcomes, claims, data)``. Outcomes are thunks: measuring against
the exact truth is the slow part, so only the stage on show is measured. ``djl`` is the DJL
backend module, or the reason (with the fixing command) that it cannot run.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from ... import backends, images
from ...memo import Memo
from ...result import Claim, Outcome
from ...truth.value import Truth
from . import pipelines as P
from . import reference as T

Thunks = list[Callable[[], Outcome]]
StageResult = tuple[Truth, Thunks, dict[str, Claim], dict[str, Any]]
CLASSIC = np.array([10, 20, 30, 40, 50], dtype=np.float32)


# -- shared helpers -------------------------------------------------------------------------


def optional(name: str) -> Any:
    """Backend ``name``'s module, or None where it is missing (its claims are then "not
    checked", `djl_normalization.CLAIMS` says which)."""
    return None if backends.missing(name) else backends.load(name)


def _split_one(v: Any) -> tuple[float, float, bool]:
    """`Truth.split_known` of one Fraction (or int) in integer arithmetic: int / int is
    correctly rounded, as float(Fraction) is, and the rest is exact integers, so the three
    values are the same at a fifth of the cost."""
    n, d = v.numerator, v.denominator
    try:
        h = n / d
    except OverflowError:
        return (math.inf if n > 0 else -math.inf), 0.0, False
    a, b = h.as_integer_ratio()
    rn, rd = n * b - a * d, d * b
    if rn == 0:
        return h, 0.0, True
    lo = rn / rd
    la, lb = lo.as_integer_ratio()
    return h, lo, rn * lb == la * rd


_split_rational = np.frompyfunc(_split_one, 1, 3)


class _Once(Truth):
    """A Truth whose float64 (hi, lo, known) split is computed once for all the outcomes it
    measures (each `Outcome.measured` asks for it)."""

    _known: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def split_known(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._known is None:
            exact = self.exact
            if isinstance(exact, np.ndarray) and exact.size:
                hi, lo, known = _split_rational(exact)
                self._known = (
                    hi.astype(np.float64),
                    lo.astype(np.float64),
                    known.astype(bool),
                )
            else:
                self._known = super().split_known()
        return tuple(a.copy() for a in self._known)  # type: ignore[return-value]

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        hi, lo, _ = self.split_known()
        return hi, lo


class _Gathered(_Once):
    """A `by_value` truth: rounded once per distinct value too (rounding is elementwise)."""

    _round_small: Callable[[Any], np.ndarray]

    def round(self, fmt: Any = "float64") -> Any:
        return self._round_small(fmt)


def once(t: Truth) -> Truth:
    if not t.is_exact:
        return t
    return _Once(t.label, exact=t.exact, prec=t.prec, input_format=t.input_format)


def by_value(
    values: np.ndarray, truth_of: Callable[[np.ndarray], Truth], label: str | None = None
) -> Truth:
    """The elementwise truth ``truth_of`` over ``values`` (C, H, W), computed once per distinct
    value of each channel and gathered back: an image has at most 256 levels per channel, so
    its exact x / 255 or (x - m) / s costs hundreds of Fractions, not tens of thousands.
    ``truth_of`` gets a (C, 1, K) array holding every distinct value in each channel;
    ``label``: the truth's label (default: the one ``truth_of`` gives)."""
    values = np.asarray(values)
    uniq, inv = np.unique(values, return_inverse=True)
    inv = inv.reshape(values.shape)
    small = truth_of(np.ascontiguousarray(np.broadcast_to(uniq, (values.shape[0], 1, uniq.size))))
    ch = np.arange(values.shape[0])[:, None, None]

    def gather(a: np.ndarray) -> np.ndarray:
        return np.asarray(a).reshape(values.shape[0], uniq.size)[ch, inv]

    out = _Gathered(
        label or small.label,
        exact=gather(small.exact),
        prec=small.prec,
        input_format=small.input_format,
    )
    out._known = tuple(gather(a) for a in small.split_known())  # type: ignore[assignment]
    out._round_small = lambda fmt: gather(small.round(fmt))
    return out


def nearest(truth: Truth) -> np.ndarray:
    """The truth rounded to float64 (plenty to measure errors in grey levels)."""
    return truth.split()[0]


def _measured(
    name: str, backend: str, value: Any, truth: Truth, versions: dict[str, str]
) -> Outcome:
    note = ""
    if tuple(np.shape(value)) != tuple(truth.shape):
        note = (
            f"shape {tuple(np.shape(value))} differs from the truth's {tuple(truth.shape)}: "
            "not measured"
        )
        return Outcome(name, backend, value=value, version=versions.get(backend, ""), note=note)
    if np.asarray(value).dtype == np.uint8:  # ULPs of float64 say nothing about grey levels
        err = np.abs(np.asarray(value, np.float64) - nearest(truth))
        note = f"uint8: max |error| {err.max():.3g} levels, mean {err.mean():.3g}"
    return Outcome.measured(
        name, backend, value, truth, version=versions.get(backend, ""), note=note
    )


def rows(
    values: dict[str, Any],
    truth: Truth,
    versions: dict[str, str],
    backend_of: Callable[[str], str] = lambda k: k.split(":")[0],
) -> Thunks:
    return [partial(_measured, k, backend_of(k), v, truth, versions) for k, v in values.items()]


def missing(name: str, reason: str) -> Callable[[], Outcome]:
    return partial(Outcome.missing, name, "djl", reason)


def levels(got: np.ndarray, exact: np.ndarray, where: np.ndarray | None = None) -> dict:
    """Error in grey levels against the exact values: max |error|, mean, min and max signed
    error (over the pixels in ``where`` if given)."""
    err = np.asarray(got, dtype=np.float64) - exact
    if where is not None:
        err = err[where]
    return {
        "max_abs_levels": float(np.abs(err).max()),
        "mean_levels": float(err.mean()),
        "min_levels": float(err.min()),
        "max_levels": float(err.max()),
    }


# -- the classic example --------------------------------------------------------------------


def std_stage(djl: Any, versions: dict[str, str]) -> StageResult:
    tf, torch = optional("tensorflow"), optional("torch")

    x = CLASSIC
    truth = T.standardize(x, ddof=0)
    numpy_vals = (x - x.mean()) / x.std()
    unbiased = (x - x.mean()) / x.std(ddof=1)

    def out(name: str, backend: str, value: np.ndarray, note: str, ddof: int) -> Outcome:
        return Outcome.measured(
            name,
            backend,
            value,
            truth,
            version=versions.get(backend, ""),
            settings={"ddof": ddof},
            note=note,
        )

    outs = [out("numpy: (x - mean) / np.std(x)", "numpy", numpy_vals, "", 0)]
    classic: dict[str, Any] = {"x": x, "numpy": numpy_vals}
    if tf is None:
        outs.append(
            Outcome.missing(
                "tensorflow: reduce_std", "tensorflow", backends.missing("tensorflow") or ""
            )
        )
    else:
        tf_vals = ((tf.constant(x) - tf.reduce_mean(x)) / tf.math.reduce_std(x)).numpy()
        outs.append(out("tensorflow: reduce_std", "tensorflow", tf_vals, "", 0))
        classic["tensorflow"] = tf_vals
    n = x.size
    claims: dict[str, Claim] = {}
    if torch is None:
        why = backends.missing("torch") or ""
        outs += [
            Outcome.missing("torch: (x - mean) / x.std()", "torch", why),
            Outcome.missing("torch: x.std(correction=0)", "torch", why),
        ]
    else:
        t = torch.from_numpy(x.copy())
        torch_default = ((t - t.mean()) / t.std()).numpy()
        torch_fixed = ((t - t.mean()) / t.std(correction=0)).numpy()
        classic.update(torch=torch_default, torch_fixed=torch_fixed)
        outs[:0] = [
            out(
                "torch: (x - mean) / x.std()",
                "torch",
                torch_default,
                "torch.std divides by N-1 (unbiased)",
                1,
            ),
            out("torch: x.std(correction=0)", "torch", torch_fixed, "the fix: population std", 0),
        ]
        claims["std_ddof"] = Claim(
            "torch.std is unbiased (divides by N-1), np.std divides by N: torch's normalized "
            "values are sqrt((N-1)/N) times numpy's",
            bool(
                np.allclose(torch_default * np.sqrt(n / (n - 1)), numpy_vals, rtol=1e-6)
                and not np.allclose(torch_default, numpy_vals, rtol=1e-3)
            ),
        )
        claims["std_fix"] = Claim(
            "torch.std(correction=0) fixes it: torch then agrees with numpy to within 1 ULP",
            bool(P.ulp_distance(torch_fixed, numpy_vals).max() <= 1),
        )
    idiom = "djl: x.sub(x.mean()).square().mean().sqrt()"
    if isinstance(djl, str):
        outs.append(Outcome.missing(idiom, "djl", djl))
    else:
        djl_vals = djl.normalize_by_stats(x)
        classic["djl"] = djl_vals
        outs.append(out(idiom, "djl", djl_vals, "DJL has no std(): the idiom divides by N", 0))
        claims["std_djl_population"] = Claim(
            "DJL's std idiom is the population std: its normalized values agree with numpy's "
            "(divided by N) to within 1 ULP and differ from the unbiased ones (N-1, torch's "
            "default)",
            bool(
                P.ulp_distance(djl_vals, numpy_vals).max() <= 1
                and not np.allclose(djl_vals, unbiased, rtol=1e-3)
            ),
        )
        names = _article_names()
        gone = [n for n in ARTICLE_NAMES if not names[n]]
        here = [n for n in PRESENT_NAMES if names[n]]
        claims["article_names_gone"] = Claim(
            "the articles' DJL code does not compile against the 0.36 api jar: "
            f"{', '.join(gone) or 'none'} missing (of {', '.join(ARTICLE_NAMES)}); what exists "
            f"is {', '.join(here)} (no std: hence the idiom above)",
            gone == list(ARTICLE_NAMES) and here == list(PRESENT_NAMES),
        )
    return truth, [partial(lambda o: o, o) for o in outs], claims, {"classic": classic}


#: names the articles' DJL code uses, as Class or Class#method, and what 0.36 has instead
ARTICLE_NAMES = (
    "ai.djl.ndarray.NDArrays#sum",
    "ai.djl.ndarray.NDArrays#mean",
    "ai.djl.ndarray.NDArrays#std",
    "ai.djl.random.RandomGenerator",
)
PRESENT_NAMES = ("ai.djl.ndarray.NDArray#sum", "ai.djl.ndarray.NDArray#mean")


def _article_names() -> dict[str, bool]:
    """Which of the names exist on the DJL class path (asked of the JVM worker)."""
    from ...jvm import client

    return client.call("java_names", names=[*ARTICLE_NAMES, *PRESENT_NAMES])


# -- decode ---------------------------------------------------------------------------------


def decode_stage(p: dict, djl: Any, versions: dict) -> StageResult:
    tf = optional("tensorflow")

    def tf_decode(raw: bytes, jpeg: bool, dct_method: str = "") -> np.ndarray:
        if jpeg:
            return tf.io.decode_jpeg(raw, channels=3, dct_method=dct_method).numpy()
        return tf.io.decode_png(raw, channels=3).numpy()

    def gap(a: np.ndarray, b: np.ndarray) -> int:
        return int(np.abs(a.astype(int) - b).max())

    def every_image() -> list[dict[str, Any]]:
        table = []
        for name in images.names():
            path = images.path(name)
            pil = P.pil_decode(path)
            row: dict[str, Any] = {"image": name}
            if name.endswith(".jpg") and tf is not None:
                raw = path.read_bytes()
                row["tf_vs_pil"] = gap(tf_decode(raw, True), pil)
                row["tf_accurate_vs_pil"] = gap(tf_decode(raw, True, "INTEGER_ACCURATE"), pil)
            if not isinstance(djl, str):
                row["imageio_vs_pil"] = gap(djl.decode(path), pil)
            table.append(row)
        return table

    # every sample image, whichever is shown: kept (it depends on which decoders are here)
    here = (djl if isinstance(djl, str) else "djl", tf is None, tuple(images.names()))
    table = _DECODE_TABLES.get(here, every_image)
    name = p["image"]
    path, jpeg = images.path(name), name.endswith(".jpg")
    raw = path.read_bytes()
    truth = once(
        Truth(f"the pixels {name} was encoded from", exact=images.source(name).astype(object))
    )
    values = {"PIL (torchvision's loader)": P.pil_decode(path)}
    extra: Thunks = []
    if tf is None:
        extra.append(missing("tensorflow: decode", backends.missing("tensorflow") or ""))
    elif jpeg:
        values["tensorflow: decode_jpeg (default dct_method)"] = tf_decode(raw, True)
        values["tensorflow: decode_jpeg(dct_method='INTEGER_ACCURATE')"] = tf_decode(
            raw, True, "INTEGER_ACCURATE"
        )
    else:
        values["tensorflow: decode_png"] = tf_decode(raw, False)
    jpgs = [r for r in table if "tf_vs_pil" in r]
    claims: dict[str, Claim] = {}
    if tf is not None:
        claims["decode_tf_default_differs"] = Claim(
            "TensorFlow's decode_jpeg with its default (fast) IDCT differs from PIL on the "
            "sample JPEGs; dct_method='INTEGER_ACCURATE' gives PIL's bits",
            any(r["tf_vs_pil"] > 0 for r in jpgs)
            and all(r["tf_accurate_vs_pil"] == 0 for r in jpgs),
        )
    data: dict[str, Any] = {"decode_table": table}
    if isinstance(djl, str):
        extra.append(missing("djl: BufferedImageFactory (ImageIO)", djl))
    else:
        d = djl.decode(path)
        other = next(
            (k for k in values if k.startswith("tensorflow")), "PIL (torchvision's loader)"
        )
        values = {"djl: BufferedImageFactory (ImageIO)": d, **values}
        data["heat"] = P.heat(d, values[other])
        data["heat_title"] = f"|DJL ImageIO decode - {other.split(':')[0]} decode| (levels)"
        claims["decode_imageio_equals_pil"] = Claim(
            "Java ImageIO (DJL's BufferedImageFactory) and PIL decode every sample PNG and JPEG "
            "to the same bits",
            all(r["imageio_vs_pil"] == 0 for r in table),
        )
    backend_of = lambda k: k.split(":")[0].split(" ")[0].lower()  # noqa: E731
    return truth, rows(values, truth, versions, backend_of) + extra, claims, data


# -- resize ---------------------------------------------------------------------------------


_RESIZE_TRUTHS = Memo(keep=8)
_DECODE_TABLES = Memo(keep=2)


def resize_truth(img: np.ndarray, oh: int, ow: int, kind: str) -> Truth:
    """The exact antialiased resize of an HWC image (libtorch's filters, rational weights),
    kept per input: the resize stage and the pipeline's truth share it."""
    key = (img.shape, img.dtype.str, hash(img.tobytes()), oh, ow, kind)
    return _RESIZE_TRUTHS.get(key, lambda: once(_resize_truth(img, oh, ow, kind)))


def _resize_truth(img: np.ndarray, oh: int, ow: int, kind: str) -> Truth:
    if kind != "bilinear":
        return T.resize(img, oh, ow, kind)
    from ...truth import reference

    chw = reference.resize_bilinear(
        img.transpose(2, 0, 1).astype(np.float32), (oh, ow), antialias=True
    )
    return Truth(
        f"exact antialiased bilinear resize to {oh}x{ow}", exact=chw.exact.transpose(1, 2, 0)
    )


def resize_stage(p: dict, djl: Any, versions: dict, decoded: np.ndarray) -> StageResult:
    tf = optional("tensorflow")
    torch = backends.load("torch")
    F = backends.load("torch").nn.functional
    from PIL import Image

    TV = backends.load("torchvision").transforms

    size, interp = p["size"], p["interpolation"]
    h, w = decoded.shape[:2]
    oh, ow = P.short_edge_shape(h, w, size)
    truth = resize_truth(decoded, oh, ow, interp)
    exact = nearest(truth)
    aa = interp != "nearest"
    chw = torch.from_numpy(decoded.astype(np.float32)).permute(2, 0, 1)[None]
    extra_kw = {"antialias": True, "align_corners": False} if aa else {}
    t_float = F.interpolate(chw, size=(oh, ow), mode=interp, **extra_kw)
    t_float = t_float[0].permute(1, 2, 0).contiguous().numpy()
    mode = TV.InterpolationMode[interp.upper()]
    tv_pil = np.asarray(TV.Resize(size, interpolation=mode)(Image.fromarray(decoded)))
    u8 = torch.from_numpy(decoded.copy()).permute(2, 0, 1)
    tv_tensor = TV.Resize(size, interpolation=mode, antialias=True)(u8).permute(1, 2, 0).numpy()
    values: dict[str, np.ndarray] = {
        "torch: interpolate(antialias=True), float32": t_float,
        "torchvision: Resize(size) on PIL (uint8)": tv_pil,
        "torchvision: Resize(size) on a uint8 tensor": tv_tensor,
    }
    extra: Thunks = []
    if tf is None:
        extra.append(missing("tensorflow: image.resize", backends.missing("tensorflow") or ""))
    else:
        tf_plain = tf.image.resize(decoded, (oh, ow), method=interp).numpy()
        tf_aa = tf.image.resize(decoded, (oh, ow), method=interp, antialias=True).numpy()
        values["tensorflow: image.resize (antialias=False default)"] = tf_plain
        values["tensorflow: image.resize(antialias=True)"] = tf_aa
    lv = {"torchvision PIL": levels(tv_pil, exact)}
    data: dict[str, Any] = {"resize_shape": (oh, ow), "levels": lv}
    claims: dict[str, Claim] = {}
    if tf is not None and aa and (h > oh or w > ow):
        lv["tensorflow default"] = levels(tf_plain, exact)
        lv["tensorflow antialias"] = levels(tf_aa, exact)
        text = (
            "downscaling without antialias (TensorFlow's default) errs by many levels against "
            "the antialiased resize; antialias=True brings TensorFlow within a level"
        )
        if str(p.get("image", "")).startswith("gradient"):  # nothing for aliasing to fold
            claims["antialias_matters"] = Claim.not_checked(
                text,
                "a smooth gradient has no detail finer than the new pixel spacing, so skipping "
                "the antialias filter loses little there; pick a texture or edges image",
            )
        else:
            claims["antialias_matters"] = Claim(
                text,
                lv["tensorflow default"]["max_abs_levels"] > 5
                and lv["tensorflow antialias"]["max_abs_levels"] < 1.0,
            )
    if isinstance(djl, str):
        extra.append(missing("djl: ResizeShort (uint8)", djl))
        return truth, rows(values, truth, versions) + extra, claims, data
    square = djl.resize(decoded, size)
    d_u8 = djl.resize_short(decoded, size, interp)
    d_f32 = djl.resize_short(djl.to_float32(decoded), size, interp)
    d_fix = djl.round_uint8(d_f32)
    values = {
        "djl: ResizeShort (uint8: truncated)": d_u8,
        "djl: ResizeShort on float32": d_f32,
        "djl: float32 then round() (the fix)": d_fix,
        **values,
    }
    data["djl_square_shape"] = square.shape
    data["heat"] = P.heat(d_u8, tv_pil)
    data["heat_title"] = "|DJL ResizeShort uint8 - torchvision Resize(PIL)| (levels)"
    claims["resize_square"] = Claim(
        f"DJL Resize({size}) gives {size}x{size}, torchvision Resize({size}) keeps the aspect "
        f"ratio ({oh}x{ow}); DJL's ResizeShort({size}) gives torchvision's shape",
        square.shape[:2] == (size, size)
        and d_u8.shape[:2] == (oh, ow) == tv_pil.shape[:2]
        and (oh, ow) != (size, size),
    )
    # Bit equality is not a fact of DJL: it depends on the two libtorch builds (DJL's and
    # this torch) and on how many input pixels each output sums (an antialiased downscale by
    # s sums about s times more taps, and builds that accumulate them differently part in the
    # last bits). So the claim is the rounding-level agreement, and the bits an observation.
    gap = float(np.abs(d_f32.astype(np.float64) - t_float).max()) if d_f32.size else 0.0
    claims["resize_is_torch_interpolate"] = Claim(
        f"DJL's resize is libtorch interpolate({interp}"
        f"{', antialias=True' if aa else ''}): on float32 input it equals torch's to within "
        f"float32 rounding (max |diff| {gap:.2g} < 1e-3 levels) at every size and scale",
        d_f32.shape == t_float.shape and gap < 1e-3,
    )
    differ = d_f32 != t_float
    scale = max(h / oh, w / ow)
    data["resize_bit_equal"] = {
        "values differing": int(differ.sum()),
        "values": int(d_f32.size),
        "max ULP": float(
            (np.abs(d_f32 - t_float)[differ] / np.spacing(np.abs(t_float[differ]))).max()
        )
        if differ.any()
        else 0.0,
        "scale": f"{'down' if scale > 1 else 'up'}scale ×{max(scale, 1 / scale):.3g}",
    }
    inside = (d_f32 >= 0) & (d_f32 < 256) & (exact >= 0) & (exact <= 255)
    claims["resize_uint8_truncates"] = Claim(
        "on uint8 input DJL casts the float result back by truncation: its output is the "
        "floor of its own float32 resize (wherever that lies in [0, 256))",
        bool(np.array_equal(d_u8[inside], np.floor(d_f32[inside]).astype(np.uint8))),
    )
    wrapped = (d_f32 <= -1) | (d_f32 >= 256)
    if wrapped.any():
        err = np.abs(d_u8.astype(np.float64) - exact)[wrapped]
        data["wrapped"] = {"count": int(wrapped.sum()), "max_error_levels": float(err.max())}
        claims["resize_uint8_wraps"] = Claim(
            f"{interp} overshoots: {int(wrapped.sum())} values of DJL's float resize fall "
            "outside (-1, 256), and its uint8 cast wraps them (trunc modulo 256) instead of "
            f"clamping: errors of {err.min():.0f} to {err.max():.0f} levels against the exact "
            "resize; the fix clamps them to 0 or 255",
            bool(
                np.array_equal(
                    d_u8[wrapped].astype(np.int64), np.trunc(d_f32[wrapped]).astype(np.int64) % 256
                )
                and err.min() > 128
                and np.array_equal(d_fix[wrapped], np.where(d_f32[wrapped] < 0, 0, 255))
            ),
        )
    fix_gap = int(np.abs(d_fix.astype(int) - tv_tensor).max())
    claims["resize_fix_matches_torchvision_tensor"] = Claim(
        "the fix (resize float32, round, clamp) reproduces torchvision's uint8-tensor Resize "
        + ("bit for bit" if interp == "bilinear" else "to within 1 level"),
        fix_gap == 0 if interp == "bilinear" else fix_gap <= 1,
    )
    lv["djl uint8 (truncated)"] = levels(d_u8, exact)
    lv["djl rounded (fix)"] = levels(d_fix, exact)
    if aa:
        t_in, r_in = levels(d_u8, exact, inside), levels(d_fix, exact, inside)
        claims["rounding_halves_error"] = Claim(
            "truncation only rounds down: its errors lie in (-1, 0] level (up to float32 "
            "noise); rounding keeps every in-range pixel within 0.5 level of the exact resize",
            t_in["max_levels"] <= 1e-3
            and t_in["min_levels"] > -1 - 1e-3
            and r_in["max_abs_levels"] < 0.5 + 1e-3,
        )
    return truth, rows(values, truth, versions) + extra, claims, data


# -- centre crop ----------------------------------------------------------------------------


def _exact_center_crop(img: np.ndarray, crop: int) -> Truth:
    """The centre crop at the exact offset (H - crop) / 2, (W - crop) / 2: where an offset
    is half a pixel, the average of the two neighbouring integer crops along that axis."""
    h, w = img.shape[:2]

    def taps(margin: int) -> list[tuple[int, Fraction]]:
        half = Fraction(margin, 2)
        lo = int(half)
        return [(lo, 1 - (half - lo)), (lo + 1, half - lo)]

    # the weights are 1, 1/2 or 1/4: sum in integers times 4, then one Fraction per value
    acc = np.zeros((crop, crop, img.shape[2]), dtype=np.int64)
    for y0, wy in taps(h - crop):
        for x0, wx in taps(w - crop):
            if wy and wx:
                acc += img[y0 : y0 + crop, x0 : x0 + crop].astype(np.int64) * int(wy * wx * 4)
    exact = np.frompyfunc(lambda n: Fraction(int(n), 4), 1, 1)(acc).astype(object)
    label = f"exact centre crop {crop}x{crop} (half-pixel offsets interpolated)"
    return Truth(label, exact=exact)


def crop_stage(p: dict, djl: Any, versions: dict, resized: np.ndarray) -> StageResult:
    from PIL import Image

    TV = backends.load("torchvision").transforms

    crop = p["crop"]
    h, w = resized.shape[:2]
    off = P.crop_offsets(h, w, crop)
    truth = once(_exact_center_crop(resized, crop))
    tv = np.asarray(TV.CenterCrop(crop)(Image.fromarray(resized)))
    (ft, fl), (rt, rl) = off["floor"], off["round"]
    values = {
        "torchvision: CenterCrop (round half to even)": tv,
        "numpy: slicing at the floor offset": resized[ft : ft + crop, fl : fl + crop],
    }
    claims: dict[str, Claim] = {}
    data: dict[str, Any] = {"offsets": off, "crop_input_shape": (h, w)}
    if isinstance(djl, str):
        return truth, [*rows(values, truth, versions), missing("djl: CenterCrop", djl)], {}, data
    d = djl.center_crop(resized, crop, crop)
    fixed = djl.crop(resized, rl, rt, crop, crop)
    values = {
        "djl: CenterCrop (floor)": d,
        "djl: crop at torchvision's offset (the fix)": fixed,
        **values,
    }
    data["heat"] = P.heat(d, tv)
    data["heat_title"] = "|DJL CenterCrop - torchvision CenterCrop| (levels)"
    # DJL's rule: offset (W - w) / 2 in int division, and an axis whose offset is 0 is not
    # cropped at all (a margin of 1 pixel is kept).
    dh, dw = (h - crop) // 2, (w - crop) // 2
    djl_rule = resized[dh : dh + crop if dh > 0 else h, dw : dw + crop if dw > 0 else w]
    differ = off["floor"] != off["round"]
    keeps = [n for n, dd, full in (("height", dh, h), ("width", dw, w)) if dd == 0 and full != crop]
    claims["crop_offset"] = Claim(
        f"on a {h}x{w} input DJL crops at (top, left) = {off['floor']} (floor), torchvision "
        f"at {off['round']} (round half to even): "
        + ("a one-pixel shift" if differ else "the same offset here")
        + (f"; DJL leaves the {' and '.join(keeps)} uncropped (offset 0)" if keeps else ""),
        bool(np.array_equal(d, djl_rule))
        and bool(np.array_equal(d, tv)) == (not differ and not keeps),
    )
    claims["crop_fix"] = Claim(
        "cropping at torchvision's offset in DJL gives torchvision's crop bit for bit",
        bool(np.array_equal(fixed, tv)),
    )
    return truth, rows(values, truth, versions), claims, data


# -- ToTensor and Normalize -----------------------------------------------------------------


def to_tensor_stage(p: dict, djl: Any, versions: dict, cropped: np.ndarray) -> StageResult:
    tf = optional("tensorflow")
    from PIL import Image

    TV = backends.load("torchvision").transforms

    truth = by_value(cropped.transpose(2, 0, 1), lambda u: T.to_tensor(u.transpose(1, 2, 0)))
    tv = TV.ToTensor()(Image.fromarray(cropped)).numpy()
    npf = cropped.transpose(2, 0, 1).astype(np.float32) / np.float32(255)
    values = {"torchvision: ToTensor": tv, "numpy: x.astype(float32) / 255": npf}
    claims: dict[str, Claim] = {}
    data: dict[str, Any] = {}
    extra: Thunks = []
    if tf is None:
        extra.append(
            missing("tensorflow: convert_image_dtype", backends.missing("tensorflow") or "")
        )
        tfc = None
    else:
        tfc, tf_claims, n_bad, tf_values = _tf_to_tensor(tf, cropped, tv)
        values.update(tf_values)
        claims.update(tf_claims)
        data["convert_image_dtype_off_levels"] = n_bad
    if isinstance(djl, str):
        return (
            truth,
            [*rows(values, truth, versions), *extra, missing("djl: ToTensor", djl)],
            claims,
            data,
        )
    d = djl.to_tensor(cropped)
    values = {"djl: ToTensor": d, **values}
    data["heat"] = P.heat(d, tfc if tfc is not None else tv)
    data["heat_title"] = (
        "|DJL ToTensor - TF convert_image_dtype| (float32)"
        if tfc is not None
        else "|DJL ToTensor - torchvision ToTensor| (float32)"
    )
    rounded = np.asarray(truth.round("binary32"), dtype=np.float32)
    claims["to_tensor_bit_equal"] = Claim(
        "DJL's ToTensor, torchvision's ToTensor and numpy's x/255 are bit-identical and "
        "correctly rounded",
        all(np.array_equal(d, v) for v in (tv, npf, rounded)),
    )
    return truth, rows(values, truth, versions) + extra, claims, data


def _tf_to_tensor(tf: Any, cropped: np.ndarray, tv: np.ndarray) -> tuple[Any, dict, int, dict]:
    """TensorFlow's two ToTensor spellings and their claims."""
    tfc = tf.transpose(
        tf.image.convert_image_dtype(tf.constant(cropped), tf.float32), (2, 0, 1)
    ).numpy()
    tfd = tf.transpose(tf.cast(cropped, tf.float32) / 255.0, (2, 0, 1)).numpy()
    all_levels = np.arange(256, dtype=np.uint8)
    conv = tf.image.convert_image_dtype(tf.constant(all_levels), tf.float32).numpy()
    n_bad = int((conv != all_levels.astype(np.float32) / np.float32(255)).sum())
    values = {
        "tensorflow: convert_image_dtype (x * (1/255))": tfc,
        "tensorflow: cast / 255 (the fix)": tfd,
    }
    claims = {
        "to_tensor_convert_image_dtype": Claim(
            f"tf.image.convert_image_dtype multiplies by 1/255: {n_bad} of the 256 levels come "
            "out 1 ULP away from x/255",
            n_bad > 0
            and bool(
                P.ulp_distance(conv, all_levels.astype(np.float32) / np.float32(255)).max() == 1
            ),
        ),
        "to_tensor_tf_fix": Claim(
            "tf.cast(x, float32) / 255 equals torchvision's ToTensor bit for bit",
            bool(np.array_equal(tfd, tv)),
        ),
    }
    return tfc, claims, n_bad, values


def normalize_stage(p: dict, djl: Any, versions: dict, tensor: np.ndarray) -> StageResult:
    tf = optional("tensorflow")
    torch = backends.load("torch")
    TV = backends.load("torchvision").transforms

    from ...truth import reference

    truth = by_value(
        tensor,
        lambda u: reference.normalize(u, P.MEAN, P.STD),
        f"normalize(float32[{'x'.join(map(str, tensor.shape))}])",
    )
    m, s = P.MEAN[:, None, None], P.STD[:, None, None]
    tv = TV.Normalize(P.MEAN.tolist(), P.STD.tolist())(torch.from_numpy(tensor.copy())).numpy()
    npf = (tensor - m) / s
    np64 = ((tensor.astype(np.float64) - m.astype(np.float64)) / s.astype(np.float64)).astype(
        np.float32
    )
    fused = tensor * (np.float32(1) / s) + (-m / s)
    values = {
        "torchvision: Normalize": tv,
        "numpy: (x - m) / s in float32": npf,
        "numpy: in float64, then float32": np64,
        "numpy: x * (1/s) + (-m/s) (folded)": fused,
    }
    extra: Thunks = []
    if tf is None:
        extra.append(missing("tensorflow: (x - m) / s", backends.missing("tensorflow") or ""))
    else:
        values["tensorflow: (x - m) / s"] = ((tf.constant(tensor) - m) / s).numpy()
    claims = {
        "normalize_folded_differs": Claim(
            "folding Normalize into x * (1/s) - m/s (as when it is merged into a layer) is not "
            "bit-equal to (x - m) / s",
            not np.array_equal(fused, npf),
        )
    }
    if isinstance(djl, str):
        return (
            truth,
            [*rows(values, truth, versions), *extra, missing("djl: Normalize", djl)],
            claims,
            {},
        )
    d = djl.normalize(tensor, P.MEAN.tolist(), P.STD.tolist())
    values = {"djl: Normalize": d, **values}
    data = {
        "heat": P.heat(d, fused),
        "heat_title": "|DJL Normalize - folded x*(1/s) - m/s| (float32)",
    }
    claims["normalize_bit_equal"] = Claim(
        "DJL's Normalize, torchvision's Normalize and numpy float32 give the same bits (each is "
        "one float32 subtraction and one division)",
        all(np.array_equal(d, v) for v in (tv, npf)),
    )
    if tf is not None:
        claims["normalize_tf_bit_equal"] = Claim(
            "TensorFlow's (x - m) / s gives DJL's Normalize bits too",
            bool(np.array_equal(d, values["tensorflow: (x - m) / s"])),
        )
    return truth, rows(values, truth, versions) + extra, claims, data
