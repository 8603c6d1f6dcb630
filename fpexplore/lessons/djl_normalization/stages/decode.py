"""Decode: DJL's ImageIO, PIL and TensorFlow against the pixels each sample was encoded from."""

from typing import Any

import numpy as np

from .... import backends, images
from ....memo import Memo
from ....result import Claim
from ....truth import Truth, once
from .. import pipelines as P
from ..claims import CLAIMS
from ..data import DecodeRow
from .common import StageResult, Thunks, missing, optional, rows

_DECODE_TABLES = Memo(keep=2)


def decode_stage(p: dict, djl: Any, versions: dict) -> StageResult:
    tf = optional("tensorflow")

    def gap(a: np.ndarray, b: np.ndarray) -> int:
        return int(np.abs(a.astype(int) - b).max())

    def every_image() -> list[DecodeRow]:
        table = []
        for name in images.names():
            path = images.path(name)
            pil = P.pil_decode(path)
            tf_gap = accurate_gap = imageio_gap = None
            if name.endswith(".jpg") and tf is not None:
                tf_gap = gap(P.tf_decode(path).numpy(), pil)
                accurate_gap = gap(P.tf_decode(path, "INTEGER_ACCURATE").numpy(), pil)
            if not isinstance(djl, str):
                imageio_gap = gap(djl.decode(path), pil)
            table.append(DecodeRow(name, tf_gap, accurate_gap, imageio_gap))
        return table

    # every sample image, whichever is shown: kept (it depends on which decoders are here)
    here = (djl if isinstance(djl, str) else "djl", tf is None, tuple(images.names()))
    table = _DECODE_TABLES.get(here, every_image)
    name = p["image"]
    path = images.path(name)
    pixels = images.source(name).astype(object)
    truth = once(Truth(f"the pixels {name} was encoded from", exact=pixels))
    values = {"PIL (torchvision's loader)": P.pil_decode(path)}
    extra: Thunks = []
    if tf is None:
        extra.append(missing("tensorflow: decode", backends.missing("tensorflow") or ""))
    elif name.endswith(".jpg"):
        values["tensorflow: decode_jpeg (default dct_method)"] = P.tf_decode(path).numpy()
        accurate = P.tf_decode(path, "INTEGER_ACCURATE").numpy()
        values["tensorflow: decode_jpeg(dct_method='INTEGER_ACCURATE')"] = accurate
    else:
        values["tensorflow: decode_png"] = P.tf_decode(path).numpy()
    jpgs = [r for r in table if r.tf_vs_pil is not None]
    claims: dict[str, Claim] = {}
    if tf is not None:
        claims["decode_tf_default_differs"] = CLAIMS["decode_tf_default_differs"].claim(
            any(r.tf_vs_pil > 0 for r in jpgs) and all(r.tf_accurate_vs_pil == 0 for r in jpgs)
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
        claims["decode_imageio_equals_pil"] = CLAIMS["decode_imageio_equals_pil"].claim(
            all(r.imageio_vs_pil == 0 for r in table)
        )
    return truth, rows(values, truth, versions) + extra, claims, data
