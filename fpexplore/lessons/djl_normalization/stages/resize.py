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


_TORCH = "torch: interpolate(antialias=True), float32"
_TV_PIL = "torchvision: Resize(size) on PIL (uint8)"
_TV_TENSOR = "torchvision: Resize(size) on a uint8 tensor"
_TF_PLAIN = "tensorflow: image.resize (antialias=False default)"
_TF_AA = "tensorflow: image.resize(antialias=True)"


def _framework_values(
    decoded: np.ndarray, size: int, interp: str, shape: tuple[int, int]
) -> tuple[dict[str, np.ndarray], Thunks]:
    """torch's interpolate, torchvision's Resize (on PIL and on a uint8 tensor) and, where it
    is installed, TensorFlow's resize (else its missing row)."""
    tf = optional("tensorflow")
    torch = backends.load("torch")
    from PIL import Image

    TV = backends.load("torchvision").transforms

    chw = torch.from_numpy(decoded.astype(np.float32)).permute(2, 0, 1)[None]
    extra_kw = {"antialias": True, "align_corners": False} if interp != "nearest" else {}
    t_float = torch.nn.functional.interpolate(chw, size=shape, mode=interp, **extra_kw)
    mode = TV.InterpolationMode[interp.upper()]
    u8 = torch.from_numpy(decoded.copy()).permute(2, 0, 1)
    tv_tensor = TV.Resize(size, interpolation=mode, antialias=True)(u8)
    values = {
        _TORCH: t_float[0].permute(1, 2, 0).contiguous().numpy(),
        _TV_PIL: np.asarray(TV.Resize(size, interpolation=mode)(Image.fromarray(decoded))),
        _TV_TENSOR: tv_tensor.permute(1, 2, 0).numpy(),
    }
    if tf is None:
        return values, [missing("tensorflow: image.resize", backends.missing("tensorflow") or "")]
    values[_TF_PLAIN] = tf.image.resize(decoded, shape, method=interp).numpy()
    values[_TF_AA] = tf.image.resize(decoded, shape, method=interp, antialias=True).numpy()
    return values, []


def resize_stage(p: dict, djl: Any, versions: dict, decoded: np.ndarray) -> StageResult:
    size, interp = p["size"], p["interpolation"]
    h, w = decoded.shape[:2]
    oh, ow = P.short_edge_shape(h, w, size)
    truth = resize_truth(decoded, oh, ow, interp)
    exact = nearest(truth)
    values, extra = _framework_values(decoded, size, interp, (oh, ow))
    lv = {"torchvision PIL": levels(values[_TV_PIL], exact)}
    data: dict[str, Any] = {"resize_shape": (oh, ow), "levels": lv}
    claims: dict[str, Claim] = {}
    if _TF_PLAIN in values and interp != "nearest" and (h > oh or w > ow):
        lv["tensorflow default"] = levels(values[_TF_PLAIN], exact)
        lv["tensorflow antialias"] = levels(values[_TF_AA], exact)
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
    data["heat"] = P.heat(d_u8, values[_TV_PIL])
    data["heat_title"] = "|DJL ResizeShort uint8 - torchvision Resize(PIL)| (levels)"
    claims["resize_square"] = CLAIMS["resize_square"].claim(
        square.shape[:2] == (size, size)
        and d_u8.shape[:2] == (oh, ow) == values[_TV_PIL].shape[:2]
        and (oh, ow) != (size, size),
        size=size,
        oh=oh,
        ow=ow,
    )
    claims["resize_is_torch_interpolate"], data["resize_bit_equal"] = _versus_torch(
        d_f32, values[_TORCH], interp, max(h / oh, w / ow)
    )
    claims.update(_rounding(d_u8, d_f32, d_fix, exact, values[_TV_TENSOR], interp, data))
    values = {
        "djl: ResizeShort (uint8: truncated)": d_u8,
        "djl: ResizeShort on float32": d_f32,
        "djl: float32 then round() (the fix)": d_fix,
        **values,
    }
    return truth, rows(values, truth, versions) + extra, claims, data


def _versus_torch(
    d_f32: np.ndarray, t_float: np.ndarray, interp: str, scale: float
) -> tuple[Claim, BitEqual]:
    """DJL's float32 resize against torch's interpolate: equal to rounding (the claim), and
    bit for bit.

    Bit equality is not a fact of DJL: it depends on the two libtorch builds (DJL's and this
    torch) and on how many input pixels each output sums (an antialiased downscale by s sums
    about s times more taps, and builds that accumulate them differently part in the last
    bits). So the claim is the rounding-level agreement, and the bits an observation."""
    gap = float(np.abs(d_f32.astype(np.float64) - t_float).max()) if d_f32.size else 0.0
    claim = CLAIMS["resize_is_torch_interpolate"].claim(
        d_f32.shape == t_float.shape and gap < 1e-3,
        interp=interp,
        antialias=", antialias=True" if interp != "nearest" else "",
        gap=gap,
    )
    differ = d_f32 != t_float
    bits = BitEqual(
        int(differ.sum()),
        int(d_f32.size),
        float((np.abs(d_f32 - t_float)[differ] / np.spacing(np.abs(t_float[differ]))).max())
        if differ.any()
        else 0.0,
        f"{'down' if scale > 1 else 'up'}scale ×{max(scale, 1 / scale):.3g}",
    )
    return claim, bits


def _rounding(
    d_u8: np.ndarray,
    d_f32: np.ndarray,
    d_fix: np.ndarray,
    exact: np.ndarray,
    tv_tensor: np.ndarray,
    interp: str,
    data: dict[str, Any],
) -> dict[str, Claim]:
    """DJL's uint8 cast truncates (and wraps what overshoots); rounding first fixes both.
    Adds the wrapped values and DJL's levels to ``data``."""
    claims: dict[str, Claim] = {}
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
    data["levels"]["djl uint8 (truncated)"] = levels(d_u8, exact)
    data["levels"]["djl rounded (fix)"] = levels(d_fix, exact)
    if interp != "nearest":
        t_in, r_in = levels(d_u8, exact, inside), levels(d_fix, exact, inside)
        claims["rounding_halves_error"] = CLAIMS["rounding_halves_error"].claim(
            t_in.max_levels <= 1e-3
            and t_in.min_levels > -1 - 1e-3
            and r_in.max_abs_levels < 0.5 + 1e-3
        )
    return claims
