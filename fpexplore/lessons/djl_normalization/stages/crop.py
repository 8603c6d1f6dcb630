"""Centre crop: DJL's floor offset, torchvision's rounded one, against the exact centre."""

from typing import Any

import numpy as np

from .... import backends
from ....result import Claim
from ....truth import once, reference
from .. import pipelines as P
from ..claims import CLAIMS
from .common import StageResult, missing, rows


def crop_stage(p: dict, djl: Any, versions: dict, resized: np.ndarray) -> StageResult:
    from PIL import Image

    TV = backends.load("torchvision").transforms

    crop = p["crop"]
    h, w = resized.shape[:2]
    off = P.crop_offsets(h, w, crop)
    truth = once(reference.center_crop(resized, crop))
    tv = np.asarray(TV.CenterCrop(crop)(Image.fromarray(resized)))
    (ft, fl), (rt, rl) = off["floor"], off["round"]
    values = {
        "torchvision: CenterCrop (round half to even)": tv,
        "numpy: slicing at the floor offset": resized[ft : ft + crop, fl : fl + crop],
    }
    claims: dict[str, Claim] = {}
    data: dict[str, Any] = {"offsets": off}
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
    djl_rule = resized[ft : ft + crop if ft > 0 else h, fl : fl + crop if fl > 0 else w]
    differ = off["floor"] != off["round"]
    keeps = [n for n, dd, full in (("height", ft, h), ("width", fl, w)) if dd == 0 and full != crop]
    claims["crop_offset"] = CLAIMS["crop_offset"].claim(
        bool(np.array_equal(d, djl_rule))
        and bool(np.array_equal(d, tv)) == (not differ and not keeps),
        h=h,
        w=w,
        floor=off["floor"],
        rounded=off["round"],
        shift="a one-pixel shift" if differ else "the same offset here",
        uncropped=f"; DJL leaves the {' and '.join(keeps)} uncropped (offset 0)" if keeps else "",
    )
    claims["crop_fix"] = CLAIMS["crop_fix"].claim(bool(np.array_equal(fixed, tv)))
    return truth, rows(values, truth, versions), claims, data
