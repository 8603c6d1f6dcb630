"""DJL vs PyTorch (and numpy, TensorFlow): normalization and image preprocessing, stage by stage.

Real DJL runs in a JVM worker process; torch/torchvision, numpy and TensorFlow run here. Each
stage is measured against an exact truth computed on the same input bits, and the pipelines
are compared stage by stage to find where they first diverge, and whether each fix works.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from .. import backends, images
from ..errors import BackendUnavailable, InvalidParameter
from ..params import Interval, Options
from ..result import Claim, Comparison, Outcome
from ..truth.value import Truth
from . import _djl_pipelines as P
from ._base import Lesson

CLASSIC = np.array([10, 20, 30, 40, 50], dtype=np.float32)
STAGE_CHOICES = ("pipeline", "std", *P.STAGES)

PARAMS = (
    Options("stage", "pipeline", "which stage's outcomes and heat map to show", STAGE_CHOICES),
    Options("image", "texture_q75.jpg", "a sample image from data/images", images.names()),
    Interval("size", 64, "target short edge of the resize (pixels)", 16, 128, integer=True),
    Interval("crop", 57, "centre-crop size (pixels, at most size)", 8, 128, integer=True),
    Options("interpolation", "bilinear", "resize filter", ("bilinear", "bicubic", "nearest")),
)


def _import_frameworks() -> None:
    """torchvision before TensorFlow: torchvision loads torch._dynamo and triton, whose LLVM
    aborts the process if TensorFlow's LLVM registered its options first."""
    import importlib

    for name in ("torch", "torchvision", "tensorflow"):  # this order
        importlib.import_module(name)


def _versions() -> dict[str, str]:
    from ..backends import get

    return {name: get(name).version() for name in ("torch", "tensorflow", "djl", "numpy")}


def _djl() -> Any:
    """The DJL backend module, or the reason it cannot run (with the fixing command)."""
    try:
        from ..backends import load

        mod = load("djl")
        mod.require()
        return mod
    except BackendUnavailable as exc:
        return str(exc)


def _measured(
    name: str,
    backend: str,
    value: Any,
    truth: Any,
    versions: dict[str, str],
    note: str = "",
    **settings: Any,
) -> Outcome:
    if truth is not None and tuple(np.shape(value)) != tuple(truth.shape):
        note = (note + "; " if note else "") + (
            f"shape {tuple(np.shape(value))} differs from the truth's {tuple(truth.shape)}: "
            "not measured"
        )
        truth = None
    return Outcome.measured(
        name, backend, value, truth, version=versions.get(backend, ""), settings=settings, note=note
    )


def _rows(
    rows: dict[str, Any],
    truth: Any,
    versions: dict[str, str],
    backend_of: Callable[[str], str] | None = None,
) -> list[Callable[[], Outcome]]:
    """Outcomes to measure only if their stage is shown (measuring is the slow part)."""
    of = backend_of or (lambda k: k.split(":")[0])
    return [partial(_measured, k, of(k), v, truth, versions) for k, v in rows.items()]


def _missing(name: str, reason: str) -> Callable[[], Outcome]:
    return partial(Outcome.missing, name, "djl", reason)


class _Once(Truth):
    """A Truth whose float64 (hi, lo) split is computed once for all the outcomes it measures."""

    _hilo: tuple[np.ndarray, np.ndarray] | None = None

    def split(self) -> tuple[np.ndarray, np.ndarray]:
        if self._hilo is None:
            self._hilo = super().split()
        return self._hilo[0].copy(), self._hilo[1].copy()


def _once(t: Truth) -> Truth:
    if not t.is_exact:
        return t
    return _Once(t.label, exact=t.exact, prec=t.prec, input_format=t.input_format)


# -- the classic example --------------------------------------------------------------------


def _std_stage(djl: Any, versions: dict[str, str]) -> tuple[Any, list[Outcome], dict, dict]:
    tf = backends.load("tensorflow")
    import torch

    from . import _djl_truth as T

    x = CLASSIC
    truth = T.standardize(x, ddof=0)
    t = torch.from_numpy(x.copy())
    torch_default = ((t - t.mean()) / t.std()).numpy()
    torch_fixed = ((t - t.mean()) / t.std(correction=0)).numpy()
    numpy_vals = (x - x.mean()) / x.std()
    tf_vals = ((tf.constant(x) - tf.reduce_mean(x)) / tf.math.reduce_std(x)).numpy()
    outs = [
        _measured(
            "torch: (x - mean) / x.std()",
            "torch",
            torch_default,
            truth,
            versions,
            "torch.std divides by N-1 (unbiased)",
            ddof=1,
        ),
        _measured(
            "torch: x.std(correction=0)",
            "torch",
            torch_fixed,
            truth,
            versions,
            "the fix: population std",
            ddof=0,
        ),
        _measured("numpy: (x - mean) / np.std(x)", "numpy", numpy_vals, truth, versions, ddof=0),
        _measured("tensorflow: reduce_std", "tensorflow", tf_vals, truth, versions, ddof=0),
    ]
    n = x.size
    claims = {
        "std_ddof": Claim(
            "torch.std is unbiased (divides by N-1), np.std divides by N: torch's normalized "
            "values are sqrt((N-1)/N) times numpy's",
            bool(
                np.allclose(torch_default * np.sqrt(n / (n - 1)), numpy_vals, rtol=1e-6)
                and not np.allclose(torch_default, numpy_vals, rtol=1e-3)
            ),
        ),
        "std_fix": Claim(
            "torch.std(correction=0) fixes it: torch then agrees with numpy to within 1 ULP",
            bool(P.ulp_distance(torch_fixed, numpy_vals).max() <= 1),
        ),
    }
    data: dict[str, Any] = {
        "classic": {
            "x": x,
            "torch": torch_default,
            "torch_fixed": torch_fixed,
            "numpy": numpy_vals,
            "tensorflow": tf_vals,
        }
    }
    if isinstance(djl, str):
        outs.append(Outcome.missing("djl: x.sub(x.mean()).square().mean().sqrt()", "djl", djl))
    else:
        djl_vals = djl.normalize_by_stats(x)
        data["classic"]["djl"] = djl_vals
        outs.append(
            _measured(
                "djl: x.sub(x.mean()).square().mean().sqrt()",
                "djl",
                djl_vals,
                truth,
                versions,
                "DJL has no std(): the idiom is a population std",
                ddof=0,
            )
        )
        claims["std_djl_population"] = Claim(
            "DJL's std idiom is the population std: its normalized values agree with numpy's "
            "to within 1 ULP and differ from torch's default",
            bool(
                P.ulp_distance(djl_vals, numpy_vals).max() <= 1
                and not np.allclose(djl_vals, torch_default, rtol=1e-3)
            ),
        )
    return truth, [partial(lambda o: o, o) for o in outs], claims, data


# -- image stages ---------------------------------------------------------------------------


def _resize_truth(img: np.ndarray, oh: int, ow: int, kind: str) -> Any:
    from ..truth.value import Truth

    if kind == "bilinear":
        try:
            from ..truth import reference
        except ImportError:
            reference = None
        if reference is not None and hasattr(reference, "resize_bilinear"):
            t = reference.resize_bilinear(
                img.transpose(2, 0, 1).astype(np.float32), (oh, ow), antialias=True
            )
            return Truth(
                f"exact antialiased bilinear resize to {oh}x{ow}", exact=t.exact.transpose(1, 2, 0)
            )
    from . import _djl_truth as T

    return T.resize(img, oh, ow, kind)


def _normalize_truth(tensor: np.ndarray) -> Any:
    try:
        from ..truth import reference

        return reference.normalize(tensor, P.MEAN, P.STD)
    except (ImportError, AttributeError):
        from . import _djl_truth as T

        return T.normalize(tensor, P.MEAN, P.STD)


def _levels(got: np.ndarray, truth: Any, where: np.ndarray | None = None) -> dict[str, float]:
    """Error in grey levels against an exact HWC truth: max |error| and mean signed error
    (over the pixels in ``where`` if given)."""
    exact = np.vectorize(float, otypes=[np.float64])(truth.exact)
    err = np.asarray(got, dtype=np.float64) - exact
    if where is not None:
        err = err[where]
    return {
        "max_abs_levels": float(np.abs(err).max()),
        "mean_levels": float(err.mean()),
        "min_levels": float(err.min()),
        "max_levels": float(err.max()),
    }


def _resize_stage(p: dict, djl: Any, versions: dict, decoded: np.ndarray):
    tf = backends.load("tensorflow")
    import torch
    import torch.nn.functional as F
    from PIL import Image
    from torchvision import transforms as TV

    size, interp = p["size"], p["interpolation"]
    h, w = decoded.shape[:2]
    oh, ow = P.short_edge_shape(h, w, size)
    truth = _once(_resize_truth(decoded, oh, ow, interp))
    chw = torch.from_numpy(decoded.astype(np.float32)).permute(2, 0, 1)[None]
    aa = interp != "nearest"
    t_float = F.interpolate(
        chw,
        size=(oh, ow),
        mode=interp,
        antialias=aa,
        **({} if interp == "nearest" else {"align_corners": False}),
    )
    t_float = t_float[0].permute(1, 2, 0).contiguous().numpy()
    mode = TV.InterpolationMode[interp.upper()]
    tv_pil = np.asarray(TV.Resize(size, interpolation=mode)(Image.fromarray(decoded)))
    tv_tensor = (
        TV.Resize(size, interpolation=mode, antialias=True)(
            torch.from_numpy(decoded.copy()).permute(2, 0, 1)
        )
        .permute(1, 2, 0)
        .numpy()
    )
    tf_plain = tf.image.resize(decoded, (oh, ow), method=interp).numpy()
    tf_aa = tf.image.resize(decoded, (oh, ow), method=interp, antialias=True).numpy()
    rows: dict[str, np.ndarray] = {
        "torch: interpolate(antialias=True), float32": t_float,
        "torchvision: Resize(size) on PIL (uint8)": tv_pil,
        "torchvision: Resize(size) on a uint8 tensor": tv_tensor,
        "tensorflow: image.resize (antialias=False default)": tf_plain,
        "tensorflow: image.resize(antialias=True)": tf_aa,
    }
    data: dict[str, Any] = {"resize_shape": (oh, ow)}
    claims: dict[str, Claim] = {}
    missing: list[Callable[[], Outcome]] = []
    if isinstance(djl, str):
        missing.append(_missing("djl: ResizeShort (uint8)", djl))
    else:
        square = djl.resize(decoded, size)
        d_u8 = djl.resize_short(decoded, size, interp)
        d_f32 = djl.resize_short(djl.to_float32(decoded), size, interp)
        d_fix = djl.round_uint8(d_f32)
        rows = {
            "djl: ResizeShort (uint8: truncated)": d_u8,
            "djl: ResizeShort on float32": d_f32,
            "djl: float32 then round() (the fix)": d_fix,
            **rows,
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
        gap = float(np.abs(d_f32.astype(np.float64) - t_float).max())
        same = bool(np.array_equal(d_f32, t_float))
        claims["resize_is_torch_interpolate"] = Claim(
            f"DJL's resize is libtorch interpolate({interp}"
            f"{', antialias=True' if aa else ''}): on float32 input it equals torch's "
            + ("bit for bit" if interp == "bilinear" else "to within 1e-3 levels"),
            same if interp == "bilinear" else gap < 1e-3,
        )
        exact = np.vectorize(float, otypes=[np.float64])(truth.exact)
        inside = (d_f32 >= 0) & (d_f32 < 256) & (exact >= 0) & (exact <= 255)
        claims["resize_uint8_truncates"] = Claim(
            "on uint8 input DJL casts the float result back by truncation: its output is the "
            "floor of its own float32 resize (wherever that lies in [0, 256))",
            bool(np.array_equal(d_u8[inside], np.floor(d_f32[inside]).astype(np.uint8))),
        )
        fix_gap = int(np.abs(d_fix.astype(int) - tv_tensor).max())
        claims["resize_fix_matches_torchvision_tensor"] = Claim(
            "the fix (resize float32, round, clamp) reproduces torchvision's uint8-tensor Resize "
            + ("bit for bit" if interp == "bilinear" else "to within 1 level"),
            fix_gap == 0 if interp == "bilinear" else fix_gap <= 1,
        )
        lv_t, lv_r = _levels(d_u8, truth), _levels(d_fix, truth)
        if interp != "nearest":
            t_in, r_in = _levels(d_u8, truth, inside), _levels(d_fix, truth, inside)
            claims["rounding_halves_error"] = Claim(
                "truncation only rounds down: its errors lie in (-1, 0] level (up to float32 "
                "noise); rounding keeps every in-range pixel within 0.5 level of the exact resize",
                t_in["max_levels"] <= 1e-3
                and t_in["min_levels"] > -1 - 1e-3
                and r_in["max_abs_levels"] < 0.5 + 1e-3,
            )
        data["levels"] = {"djl uint8 (truncated)": lv_t, "djl rounded (fix)": lv_r}
    if aa and (h > oh or w > ow):
        lv_tf, lv_aa = _levels(tf_plain, truth), _levels(tf_aa, truth)
        claims["antialias_matters"] = Claim(
            "downscaling without antialias (TensorFlow's default) errs by many levels against "
            "the antialiased resize; antialias=True brings TensorFlow within a level",
            lv_tf["max_abs_levels"] > 5 and lv_aa["max_abs_levels"] < 1.0,
        )
        data.setdefault("levels", {}).update(
            {"tensorflow default": lv_tf, "tensorflow antialias": lv_aa}
        )
    pil_lv = _levels(tv_pil, truth)
    data.setdefault("levels", {})["torchvision PIL"] = pil_lv
    return truth, _rows(rows, truth, versions) + missing, claims, data


def _crop_stage(p: dict, djl: Any, versions: dict, resized: np.ndarray):
    from fractions import Fraction

    from PIL import Image
    from torchvision import transforms as TV

    from ..truth.value import Truth

    crop = p["crop"]
    h, w = resized.shape[:2]
    off = P.crop_offsets(h, w, crop)
    # The exact centre crop samples at half-pixel offsets when H - crop or W - crop is odd:
    # the average of the two neighbouring integer crops along that axis.
    th, tw = Fraction(h - crop, 2), Fraction(w - crop, 2)
    exact = np.empty((crop, crop, 3), dtype=object)
    ys = [(int(th), 1 - (th - int(th))), (int(th) + 1, th - int(th))]
    xs = [(int(tw), 1 - (tw - int(tw))), (int(tw) + 1, tw - int(tw))]
    acc = np.zeros((crop, crop, 3), dtype=object)
    for y0, wy in ys:
        for x0, wx in xs:
            if wy and wx:
                acc = acc + resized[y0 : y0 + crop, x0 : x0 + crop].astype(object) * (wy * wx)
    exact[...] = acc
    truth = _once(
        Truth(
            f"exact centre crop {crop}x{crop} (half-pixel offsets interpolated)",
            exact=np.vectorize(Fraction, otypes=[object])(exact),
        )
    )
    tv = np.asarray(TV.CenterCrop(crop)(Image.fromarray(resized)))
    (ft, fl), (rt, rl) = off["floor"], off["round"]
    rows = {
        "torchvision: CenterCrop (round half to even)": tv,
        "numpy: slicing at the floor offset": resized[ft : ft + crop, fl : fl + crop],
    }
    claims: dict[str, Claim] = {}
    data: dict[str, Any] = {"offsets": off, "crop_input_shape": (h, w)}
    outs: list[Callable[[], Outcome]] = []
    if isinstance(djl, str):
        outs.append(_missing("djl: CenterCrop", djl))
    else:
        d = djl.center_crop(resized, crop, crop)
        fixed = djl.crop(resized, rl, rt, crop, crop)
        rows = {
            "djl: CenterCrop (floor)": d,
            "djl: crop at torchvision's offset (the fix)": fixed,
            **rows,
        }
        data["heat"] = P.heat(d, tv)
        data["heat_title"] = "|DJL CenterCrop - torchvision CenterCrop| (levels)"
        # DJL's rule: offset (W - w) / 2 in int division, and an axis whose offset is 0 is
        # not cropped at all (a margin of 1 pixel is kept).
        dh, dw = (h - crop) // 2, (w - crop) // 2
        djl_rule = resized[dh : dh + crop if dh > 0 else h, dw : dw + crop if dw > 0 else w]
        differ = off["floor"] != off["round"]
        keeps = [
            n for n, dd, full in (("height", dh, h), ("width", dw, w)) if dd == 0 and full != crop
        ]
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
    outs = _rows(rows, truth, versions) + outs
    return truth, outs, claims, data


def _to_tensor_stage(p: dict, djl: Any, versions: dict, cropped: np.ndarray):
    tf = backends.load("tensorflow")
    from PIL import Image
    from torchvision import transforms as TV

    from . import _djl_truth as T

    truth = _once(T.to_tensor(cropped))
    tv = TV.ToTensor()(Image.fromarray(cropped)).numpy()
    npf = cropped.transpose(2, 0, 1).astype(np.float32) / np.float32(255)
    tfc = tf.transpose(
        tf.image.convert_image_dtype(tf.constant(cropped), tf.float32), (2, 0, 1)
    ).numpy()
    tfd = tf.transpose(tf.cast(cropped, tf.float32) / 255.0, (2, 0, 1)).numpy()
    levels = np.arange(256, dtype=np.uint8)
    conv = tf.image.convert_image_dtype(tf.constant(levels), tf.float32).numpy()
    n_bad = int((conv != levels.astype(np.float32) / np.float32(255)).sum())
    rows = {
        "torchvision: ToTensor": tv,
        "numpy: x.astype(float32) / 255": npf,
        "tensorflow: convert_image_dtype (x * (1/255))": tfc,
        "tensorflow: cast / 255 (the fix)": tfd,
    }
    claims = {
        "to_tensor_convert_image_dtype": Claim(
            f"tf.image.convert_image_dtype multiplies by 1/255: {n_bad} of the 256 levels come "
            "out 1 ULP away from x/255",
            n_bad > 0
            and bool(P.ulp_distance(conv, levels.astype(np.float32) / np.float32(255)).max() == 1),
        ),
        "to_tensor_tf_fix": Claim(
            "tf.cast(x, float32) / 255 equals torchvision's ToTensor bit for bit",
            bool(np.array_equal(tfd, tv)),
        ),
    }
    data: dict[str, Any] = {"convert_image_dtype_off_levels": n_bad}
    outs: list[Callable[[], Outcome]] = []
    if isinstance(djl, str):
        outs.append(_missing("djl: ToTensor", djl))
    else:
        d = djl.to_tensor(cropped)
        rows = {"djl: ToTensor": d, **rows}
        data["heat"] = P.heat(d, tfc)
        data["heat_title"] = "|DJL ToTensor - TF convert_image_dtype| (float32)"
        claims["to_tensor_bit_equal"] = Claim(
            "DJL's ToTensor, torchvision's ToTensor and numpy's x/255 are bit-identical and "
            "correctly rounded",
            bool(np.array_equal(d, tv) and np.array_equal(d, npf)),
        )
    outs = _rows(rows, truth, versions) + outs
    if "to_tensor_bit_equal" in claims:
        rounded = np.asarray(truth.round("binary32"), dtype=np.float32)
        claims["to_tensor_bit_equal"] = Claim(
            claims["to_tensor_bit_equal"].text,
            claims["to_tensor_bit_equal"].holds
            and bool(np.array_equal(rows["djl: ToTensor"], rounded)),
        )
    return truth, outs, claims, data


def _normalize_stage(p: dict, djl: Any, versions: dict, tensor: np.ndarray):
    tf = backends.load("tensorflow")
    import torch
    from torchvision import transforms as TV

    truth = _once(_normalize_truth(tensor))
    m, s = P.MEAN[:, None, None], P.STD[:, None, None]
    tv = TV.Normalize(P.MEAN.tolist(), P.STD.tolist())(torch.from_numpy(tensor.copy())).numpy()
    npf = (tensor - m) / s
    np64 = ((tensor.astype(np.float64) - m.astype(np.float64)) / s.astype(np.float64)).astype(
        np.float32
    )
    fused = tensor * (np.float32(1) / s) + (-m / s)
    tfv = ((tf.constant(tensor) - m) / s).numpy()
    rows = {
        "torchvision: Normalize": tv,
        "numpy: (x - m) / s in float32": npf,
        "numpy: in float64, then float32": np64,
        "numpy: x * (1/s) + (-m/s) (folded)": fused,
        "tensorflow: (x - m) / s": tfv,
    }
    claims = {
        "normalize_folded_differs": Claim(
            "folding Normalize into x * (1/s) - m/s (as when it is merged into a layer) is not "
            "bit-equal to (x - m) / s",
            not np.array_equal(fused, npf),
        )
    }
    data: dict[str, Any] = {}
    outs: list[Callable[[], Outcome]] = []
    if isinstance(djl, str):
        outs.append(_missing("djl: Normalize", djl))
    else:
        d = djl.normalize(tensor, P.MEAN.tolist(), P.STD.tolist())
        rows = {"djl: Normalize": d, **rows}
        data["heat"] = P.heat(d, fused)
        data["heat_title"] = "|DJL Normalize - folded x*(1/s) - m/s| (float32)"
        claims["normalize_bit_equal"] = Claim(
            "DJL's Normalize, torchvision's Normalize, numpy float32 and TensorFlow give the same "
            "bits (each is one float32 subtraction and one division)",
            all(np.array_equal(d, v) for v in (tv, npf, tfv)),
        )
    outs = _rows(rows, truth, versions) + outs
    return truth, outs, claims, data


def _decode_stage(p: dict, djl: Any, versions: dict):
    tf = backends.load("tensorflow")

    from ..truth.value import Truth

    table = []
    for name in images.names():
        path = images.path(name)
        pil = P.pil_decode(path)
        raw = path.read_bytes()
        row: dict[str, Any] = {"image": name}
        if name.endswith(".jpg"):
            tf_default = tf.io.decode_jpeg(raw, channels=3).numpy()
            tf_acc = tf.io.decode_jpeg(raw, channels=3, dct_method="INTEGER_ACCURATE").numpy()
            row["tf_vs_pil"] = int(np.abs(tf_default.astype(int) - pil).max())
            row["tf_accurate_vs_pil"] = int(np.abs(tf_acc.astype(int) - pil).max())
        if not isinstance(djl, str):
            row["imageio_vs_pil"] = int(np.abs(djl.decode(path).astype(int) - pil).max())
        table.append(row)
    name = p["image"]
    path = images.path(name)
    src = images.source(name)
    truth = _once(Truth(f"the pixels {name} was encoded from", exact=src.astype(object)))
    pil = P.pil_decode(path)
    rows = {"PIL (torchvision's loader)": pil}
    if name.endswith(".jpg"):
        rows["tensorflow: decode_jpeg (default dct_method)"] = tf.io.decode_jpeg(
            path.read_bytes(), channels=3
        ).numpy()
        rows["tensorflow: decode_jpeg(dct_method='INTEGER_ACCURATE')"] = tf.io.decode_jpeg(
            path.read_bytes(), channels=3, dct_method="INTEGER_ACCURATE"
        ).numpy()
    else:
        rows["tensorflow: decode_png"] = tf.io.decode_png(path.read_bytes(), channels=3).numpy()
    jpgs = [r for r in table if "tf_vs_pil" in r]
    claims = {
        "decode_tf_default_differs": Claim(
            "TensorFlow's decode_jpeg with its default (fast) IDCT differs from PIL on the "
            "sample JPEGs; dct_method='INTEGER_ACCURATE' gives PIL's bits",
            any(r["tf_vs_pil"] > 0 for r in jpgs)
            and all(r["tf_accurate_vs_pil"] == 0 for r in jpgs),
        ),
    }
    data: dict[str, Any] = {"decode_table": table}
    outs: list[Callable[[], Outcome]] = []
    if isinstance(djl, str):
        outs.append(_missing("djl: BufferedImageFactory (ImageIO)", djl))
    else:
        d = djl.decode(path)
        rows = {"djl: BufferedImageFactory (ImageIO)": d, **rows}
        data["heat"] = P.heat(d, rows[next(k for k in rows if k.startswith("tensorflow"))])
        data["heat_title"] = "|DJL ImageIO decode - TensorFlow decode| (levels)"
        claims["decode_imageio_equals_pil"] = Claim(
            "Java ImageIO (DJL's BufferedImageFactory) and PIL decode every sample PNG and JPEG "
            "to the same bits",
            all(r["imageio_vs_pil"] == 0 for r in table),
        )
    outs = _rows(rows, truth, versions, lambda k: k.split(":")[0].split(" ")[0].lower()) + outs
    return truth, outs, claims, data


# -- whole pipelines ------------------------------------------------------------------------


def _pipelines(p: dict, djl: Any) -> dict[str, dict[str, Any]]:
    path = images.path(p["image"])
    args = (path, p["size"], p["crop"], p["interpolation"])
    tv = P.torchvision_pipeline(*args)
    runs = {
        "torchvision": tv,
        "numpy": P.numpy_pipeline(tv["decode"], tv["resize"], p["crop"]),
        "tensorflow": P.tensorflow_pipeline(*args),
    }
    if not isinstance(djl, str):
        runs["djl (as written)"] = P.djl_naive_pipeline(*args)
        runs["djl (fixed)"] = P.djl_fixed_pipeline(*args)
    return runs


def first_divergence(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    """The first stage at which two pipeline runs differ, with its comparison, or None."""
    for stage in P.STAGES:
        c = P.compare(a[stage], b[stage])
        if not c["bit_equal"]:
            return {"stage": stage, **c}
    return None


def _pipeline_truth(tv: dict[str, Any], p: dict) -> Any:
    """torchvision's pipeline in exact arithmetic: exact resize (no uint8 rounding), crop at
    torchvision's offset, /255, (x - m) / s with the float32 m and s."""
    from fractions import Fraction

    from ..truth.value import Truth

    decoded = tv["decode"]
    oh, ow = P.short_edge_shape(*decoded.shape[:2], p["size"])
    r = _resize_truth(decoded, oh, ow, p["interpolation"]).exact
    top, left = P.crop_offsets(oh, ow, p["crop"])["round"]
    c = r[top : top + p["crop"], left : left + p["crop"]].transpose(2, 0, 1)
    ms = [Fraction(float(v)) for v in P.MEAN]
    ss = [Fraction(float(v)) for v in P.STD]
    out = np.empty(c.shape, dtype=object)
    for idx, v in np.ndenumerate(c):
        out[idx] = (v / 255 - ms[idx[0]]) / ss[idx[0]]
    return Truth("torchvision's pipeline in exact arithmetic", exact=out)


def compute(stage: str, image: str, size: int, crop: int, interpolation: str) -> Comparison:
    if crop > size:
        raise InvalidParameter("crop", crop, f"at most size ({size})", "lesson 'djl_normalization'")
    p = {"stage": stage, "image": image, "size": size, "crop": crop, "interpolation": interpolation}
    _import_frameworks()
    djl = _djl()
    versions = _versions()
    claims: dict[str, Claim] = {}
    data: dict[str, Any] = {}

    truth, outs, c, d = _std_stage(djl, versions)
    claims.update(c)
    data.update(d)
    per_stage = {"std": (truth, outs, d)}

    runs = _pipelines(p, djl)
    tv = runs["torchvision"]
    stage_fns = {
        "decode": lambda: _decode_stage(p, djl, versions),
        "resize": lambda: _resize_stage(p, djl, versions, tv["decode"]),
        "center_crop": lambda: _crop_stage(p, djl, versions, tv["resize"]),
        "to_tensor": lambda: _to_tensor_stage(p, djl, versions, tv["center_crop"]),
        "normalize": lambda: _normalize_stage(p, djl, versions, tv["to_tensor"]),
    }
    for name, fn in stage_fns.items():
        t, o, c, d = fn()
        claims.update(c)
        per_stage[name] = (t, o, d)
        data.update({k: v for k, v in d.items() if k not in ("heat", "heat_title")})

    # Where do the pipelines first diverge from torchvision's?
    divergence = {}
    for name, run in runs.items():
        if name != "torchvision":
            divergence[name] = first_divergence(run, tv)
    data["divergence"] = divergence
    data["stage_table"] = [
        {"pipeline": name, "stage": s, **P.compare(run[s], tv[s])}
        for name, run in runs.items()
        if name != "torchvision"
        for s in P.STAGES
    ]
    if stage == "pipeline":
        pt = _once(_pipeline_truth(tv, p))
        pipe_outs: list[Callable[[], Outcome]] = [
            partial(
                Outcome.measured,
                name,
                name.split(" ")[0],
                run["normalize"],
                pt,
                version=versions.get(name.split(" ")[0], ""),
                note=_divergence_note(divergence.get(name)),
            )
            for name, run in runs.items()
        ]
        if isinstance(djl, str):
            pipe_outs.append(_missing("djl (as written)", djl))
        per_stage["pipeline"] = (pt, pipe_outs, {})
    if "djl (as written)" in divergence:
        naive, fixed = divergence["djl (as written)"], divergence["djl (fixed)"]
        claims["pipeline_first_divergence"] = Claim(
            "DJL's pipeline as usually written first diverges from torchvision's at the resize "
            "(Resize(int) is square)",
            naive is not None and naive["stage"] == "resize" and not naive["same_shape"],
        )
        fixed_rows = [r for r in data["stage_table"] if r["pipeline"] == "djl (fixed)"]
        claims["pipeline_fixed"] = Claim(
            "with ResizeShort, round-and-clamp and torchvision's crop offset, DJL's pipeline has "
            "torchvision's shapes at every stage and first differs (if at all) at the resize, "
            "where PIL's resampler and libtorch's differ",
            all(r["same_shape"] for r in fixed_rows)
            and (fixed is None or fixed["stage"] == "resize"),
        )
        data["heat_pipeline"] = P.heat(runs["djl (as written)"]["normalize"], tv["normalize"])
        data["heat_pipeline_fixed"] = P.heat(runs["djl (fixed)"]["normalize"], tv["normalize"])

    truth, thunks, sd = per_stage[stage]
    outcomes = [f() for f in thunks]
    if stage == "pipeline":
        exact = np.vectorize(float, otypes=[np.float64])(truth.exact)
        data["pipeline_max_abs_error"] = {
            o.implementation: float(np.abs(np.asarray(o.value, np.float64) - exact).max())
            for o in outcomes
            if o.ran
        }
    if stage == "pipeline":
        data["heat"] = data.get("heat_pipeline")
        data["heat_title"] = "|DJL (as written) - torchvision| after Normalize"
    else:
        data["heat"] = sd.get("heat")
        data["heat_title"] = sd.get("heat_title", "")
    data["runs"] = runs
    return Comparison("djl_normalization", p, truth, tuple(outcomes), claims, data, EXPLANATION)


def _divergence_note(d: dict[str, Any] | None) -> str:
    if d is None:
        return "bit-identical to torchvision at every stage"
    if not d["same_shape"]:
        return f"first diverges at {d['stage']}: shapes {d['shapes'][0]} vs {d['shapes'][1]}"
    ulp = f", {d['max_ulp']} ULP" if d["max_ulp"] is not None else ""
    return f"first diverges at {d['stage']}: max |diff| {d['max_abs_diff']:.3g}{ulp}"


def figure(comparison: Comparison) -> Any:
    """The heat map of the selected stage's difference (or the classic example's values)."""
    import matplotlib.pyplot as plt

    heat = comparison.data.get("heat")
    fig, ax = plt.subplots(figsize=(5, 4))
    if heat is None:
        c = comparison.data["classic"]
        xs = np.arange(len(c["x"]))
        for i, key in enumerate(k for k in ("torch", "numpy", "djl", "torch_fixed") if k in c):
            ax.bar(xs + 0.2 * i, c[key], width=0.2, label=key)
        ax.set_xticks(xs + 0.3, [f"{v:g}" for v in c["x"]])
        ax.set_title("(x - mean) / std for x = [10, 20, 30, 40, 50]")
        ax.legend()
    else:
        im = ax.imshow(heat, cmap="magma")
        fig.colorbar(im, ax=ax)
        ax.set_title(comparison.data.get("heat_title", ""), fontsize=9)
    fig.tight_layout()
    return fig


EXPLANATION = """\
DJL is not "wrong": it makes different choices from torchvision, each visible in the bits.
torch.std is unbiased (N-1) while numpy and DJL's idiom divide by N. DJL's Resize(int) is
square; ResizeShort is torchvision's Resize(int). DJL resizes through libtorch's antialiased
interpolate and casts uint8 results back by truncation; torchvision (PIL or uint8 tensors)
rounds. DJL's CenterCrop floors the offset, torchvision rounds it half to even. ToTensor and
Normalize are single correctly-rounded float32 operations in DJL, torchvision and numpy, so
they agree to the bit given the same input; TensorFlow's convert_image_dtype multiplies by
1/255 instead, and its JPEG decoder defaults to a faster IDCT. Each fix is checked above."""

LESSON = Lesson(
    name="djl_normalization",
    title="DJL vs PyTorch: normalization and image preprocessing",
    summary="Real DJL, torchvision, numpy and TensorFlow pipelines on the same image, stage by "
    "stage against an exact truth: where they diverge and the fix for each.",
    params=PARAMS,
    compute=compute,
    explanation=EXPLANATION,
    figure=figure,
    notebook="05_djl_vs_pytorch.ipynb",
)
