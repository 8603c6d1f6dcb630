"""Normalize: (x - m) / s in DJL, torchvision, numpy (also folded) and TensorFlow."""

from typing import Any

import numpy as np

from .... import backends
from ....truth import by_value, reference
from .. import pipelines as P
from ..claims import CLAIMS
from .common import StageResult, Thunks, missing, optional, rows


def normalize_stage(p: dict, djl: Any, versions: dict, tensor: np.ndarray) -> StageResult:
    tf = optional("tensorflow")
    torch = backends.load("torch")
    TV = backends.load("torchvision").transforms

    label = f"normalize(float32[{'x'.join(map(str, tensor.shape))}])"
    truth = by_value(tensor, lambda u: reference.normalize(u, P.MEAN, P.STD), label)
    m, s = P.MEAN[:, None, None], P.STD[:, None, None]
    tv = TV.Normalize(P.MEAN.tolist(), P.STD.tolist())(torch.from_numpy(tensor.copy())).numpy()
    npf = (tensor - m) / s
    m64, s64 = m.astype(np.float64), s.astype(np.float64)
    np64 = ((tensor.astype(np.float64) - m64) / s64).astype(np.float32)
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
        "normalize_folded_differs": CLAIMS["normalize_folded_differs"].claim(
            not np.array_equal(fused, npf)
        )
    }
    if isinstance(djl, str):
        extra.append(missing("djl: Normalize", djl))
        return truth, rows(values, truth, versions) + extra, claims, {}
    d = djl.normalize(tensor, P.MEAN.tolist(), P.STD.tolist())
    values = {"djl: Normalize": d, **values}
    data = {
        "heat": P.heat(d, fused),
        "heat_title": "|DJL Normalize - folded x*(1/s) - m/s| (float32)",
    }
    claims["normalize_bit_equal"] = CLAIMS["normalize_bit_equal"].claim(
        all(np.array_equal(d, v) for v in (tv, npf))
    )
    if tf is not None:
        claims["normalize_tf_bit_equal"] = CLAIMS["normalize_tf_bit_equal"].claim(
            bool(np.array_equal(d, values["tensorflow: (x - m) / s"]))
        )
    return truth, rows(values, truth, versions) + extra, claims, data
