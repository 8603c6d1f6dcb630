"""ToTensor: x / 255 in DJL, torchvision, numpy and TensorFlow's two spellings."""

from typing import Any

import numpy as np

from .... import backends
from ....result import Claim
from ....truth import by_value
from .. import pipelines as P
from .. import reference as T
from ..claims import CLAIMS
from .common import StageResult, Thunks, missing, optional, rows


def to_tensor_stage(p: dict, djl: Any, versions: dict, cropped: np.ndarray) -> StageResult:
    tf = optional("tensorflow")
    from PIL import Image

    TV = backends.load("torchvision").transforms

    truth = by_value(cropped.transpose(2, 0, 1), lambda u: T.to_tensor(u.transpose(1, 2, 0)))
    tv = TV.ToTensor()(Image.fromarray(cropped)).numpy()
    npf = cropped.transpose(2, 0, 1).astype(np.float32) / np.float32(255)
    values = {"torchvision: ToTensor": tv, "numpy: x.astype(float32) / 255": npf}
    claims: dict[str, Claim] = {}
    extra: Thunks = []
    tfc = None
    if tf is None:
        why = backends.missing("tensorflow") or ""
        extra.append(missing("tensorflow: convert_image_dtype", why))
    else:
        tfc, tf_claims, tf_values = _tf_to_tensor(tf, cropped, tv)
        values.update(tf_values)
        claims.update(tf_claims)
    if isinstance(djl, str):
        extra.append(missing("djl: ToTensor", djl))
        return truth, rows(values, truth, versions) + extra, claims, {}
    d = djl.to_tensor(cropped)
    values = {"djl: ToTensor": d, **values}
    other = "TF convert_image_dtype" if tfc is not None else "torchvision ToTensor"
    data = {
        "heat": P.heat(d, tfc if tfc is not None else tv),
        "heat_title": f"|DJL ToTensor - {other}| (float32)",
    }
    rounded = np.asarray(truth.round("binary32"), dtype=np.float32)
    claims["to_tensor_bit_equal"] = CLAIMS["to_tensor_bit_equal"].claim(
        all(np.array_equal(d, v) for v in (tv, npf, rounded))
    )
    return truth, rows(values, truth, versions) + extra, claims, data


def _tf_to_tensor(tf: Any, cropped: np.ndarray, tv: np.ndarray) -> tuple[Any, dict, dict]:
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
        "to_tensor_convert_image_dtype": CLAIMS["to_tensor_convert_image_dtype"].claim(
            n_bad > 0
            and bool(
                P.ulp_distance(conv, all_levels.astype(np.float32) / np.float32(255)).max() == 1
            ),
            n_bad=n_bad,
        ),
        "to_tensor_tf_fix": CLAIMS["to_tensor_tf_fix"].claim(bool(np.array_equal(tfd, tv))),
    }
    return tfc, claims, values
