"""Resize to the short edge: DJL's ResizeShort, torch(vision) and TensorFlow against the
exact antialiased resize."""

from typing import Any

import numpy as np

from .... import backends
from ....memo import Memo
from ....result import Claim
from ....truth import Truth, once, reference
from .. import pipelines as P
from .. import reference as T
from ..claims import CLAIMS
from ..data import BitEqual, Wrapped
from .common import StageResult, Thunks, levels, missing, nearest, optional, rows

_RESIZE_TRUTHS = Memo(keep=8)


def resize_truth(img: np.ndarray, oh: int, ow: int, kind: str) -> Truth:
    """The exact antialiased resize of an HWC image (libtorch's filters, rational weights),
    kept per input: the resize stage and the pipeline's truth share it."""
    key = (img.shape, img.dtype.str, hash(img.tobytes()), oh, ow, kind)
    return _RESIZE_TRUTHS.get(key, lambda: once(_resize_truth(img, oh, ow, kind)))


def _resize_truth(img: np.ndarray, oh: int, ow: int, kind: str) -> Truth:
    if kind != "bilinear":
        return T.resize(img, oh, ow, kind)
    x = img.transpose(2, 0, 1).astype(np.float32)
    chw = reference.resize_bilinear(x, (oh, ow), antialias=True)
    label = f"exact antialiased bilinear resize to {oh}x{ow}"
    return Truth(label, exact=chw.exact.transpose(1, 2, 0))


def resize_stage(p: dict, djl: Any, versions: dict, decoded: np.ndarray) -> StageResult:
    tf = optional("tensorflow")
    torch = backends.load("torch")
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
    t_float = torch.nn.functional.interpolate(chw, size=(oh, ow), mode=interp, **extra_kw)
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
        claims["antialias_matters"] = CLAIMS["antialias_matters"].claim(
            lv["tensorflow default"].max_abs_levels > 5
            and lv["tensorflow antialias"].max_abs_levels < 1.0
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
    data["heat"] = P.heat(d_u8, tv_pil)
    data["heat_title"] = "|DJL ResizeShort uint8 - torchvision Resize(PIL)| (levels)"
    claims["resize_square"] = CLAIMS["resize_square"].claim(
        square.shape[:2] == (size, size)
        and d_u8.shape[:2] == (oh, ow) == tv_pil.shape[:2]
        and (oh, ow) != (size, size),
        size=size,
        oh=oh,
        ow=ow,
    )
    # Bit equality is not a fact of DJL: it depends on the two libtorch builds (DJL's and
    # this torch) and on how many input pixels each output sums (an antialiased downscale by
    # s sums about s times more taps, and builds that accumulate them differently part in the
    # last bits). So the claim is the rounding-level agreement, and the bits an observation.
    gap = float(np.abs(d_f32.astype(np.float64) - t_float).max()) if d_f32.size else 0.0
    claims["resize_is_torch_interpolate"] = CLAIMS["resize_is_torch_interpolate"].claim(
        d_f32.shape == t_float.shape and gap < 1e-3,
        interp=interp,
        antialias=", antialias=True" if aa else "",
        gap=gap,
    )
    differ = d_f32 != t_float
    scale = max(h / oh, w / ow)
    data["resize_bit_equal"] = BitEqual(
        int(differ.sum()),
        int(d_f32.size),
        float((np.abs(d_f32 - t_float)[differ] / np.spacing(np.abs(t_float[differ]))).max())
        if differ.any()
        else 0.0,
        f"{'down' if scale > 1 else 'up'}scale ×{max(scale, 1 / scale):.3g}",
    )
    inside = (d_f32 >= 0) & (d_f32 < 256) & (exact >= 0) & (exact <= 255)
    claims["resize_uint8_truncates"] = CLAIMS["resize_uint8_truncates"].claim(
        bool(np.array_equal(d_u8[inside], np.floor(d_f32[inside]).astype(np.uint8)))
    )
    wrapped = (d_f32 <= -1) | (d_f32 >= 256)
    if wrapped.any():
        err = np.abs(d_u8.astype(np.float64) - exact)[wrapped]
        data["wrapped"] = Wrapped(int(wrapped.sum()), float(err.max()))
        claims["resize_uint8_wraps"] = CLAIMS["resize_uint8_wraps"].claim(
            bool(
                np.array_equal(
                    d_u8[wrapped].astype(np.int64), np.trunc(d_f32[wrapped]).astype(np.int64) % 256
                )
                and err.min() > 128
                and np.array_equal(d_fix[wrapped], np.where(d_f32[wrapped] < 0, 0, 255))
            ),
            interp=interp,
            wrapped=int(wrapped.sum()),
            err_min=err.min(),
            err_max=err.max(),
        )
    fix_gap = int(np.abs(d_fix.astype(int) - tv_tensor).max())
    claims["resize_fix_matches_torchvision_tensor"] = CLAIMS[
        "resize_fix_matches_torchvision_tensor"
    ].claim(
        fix_gap == 0 if interp == "bilinear" else fix_gap <= 1,
        interp=interp,
        closeness="bit for bit" if interp == "bilinear" else "to within 1 level",
    )
    lv["djl uint8 (truncated)"] = levels(d_u8, exact)
    lv["djl rounded (fix)"] = levels(d_fix, exact)
    if aa:
        t_in, r_in = levels(d_u8, exact, inside), levels(d_fix, exact, inside)
        claims["rounding_halves_error"] = CLAIMS["rounding_halves_error"].claim(
            t_in.max_levels <= 1e-3
            and t_in.min_levels > -1 - 1e-3
            and r_in.max_abs_levels < 0.5 + 1e-3
        )
    return truth, rows(values, truth, versions) + extra, claims, data
