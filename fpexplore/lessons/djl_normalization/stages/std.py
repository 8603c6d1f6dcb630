"""The classic example: (x - mean) / std in numpy, TensorFlow, torch and DJL's idiom."""

from functools import partial
from typing import Any

import numpy as np

from .... import backends
from ....result import Claim, Outcome
from .. import pipelines as P
from .. import reference as T
from ..claims import CLAIMS
from ..data import Classic
from .common import StageResult, optional

CLASSIC = np.array([10, 20, 30, 40, 50], dtype=np.float32)


def std_stage(djl: Any, versions: dict[str, str]) -> StageResult:
    tf, torch = optional("tensorflow"), optional("torch")

    x = CLASSIC
    truth = T.standardize(x, ddof=0)
    numpy_vals = (x - x.mean()) / x.std()
    unbiased = (x - x.mean()) / x.std(ddof=1)

    def out(name: str, backend: str, value: np.ndarray, note: str, ddof: int) -> Outcome:
        version, settings = versions.get(backend, ""), {"ddof": ddof}
        return Outcome.measured(
            name, backend, value, truth, version=version, settings=settings, note=note
        )

    outs = [out("numpy: (x - mean) / np.std(x)", "numpy", numpy_vals, "", 0)]
    classic: dict[str, Any] = {"x": x, "numpy": numpy_vals}
    if tf is None:
        why = backends.missing("tensorflow") or ""
        outs.append(Outcome.missing("tensorflow: reduce_std", "tensorflow", why))
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
        unbiased_note = "torch.std divides by N-1 (unbiased)"
        outs[:0] = [
            out("torch: (x - mean) / x.std()", "torch", torch_default, unbiased_note, 1),
            out("torch: x.std(correction=0)", "torch", torch_fixed, "the fix: population std", 0),
        ]
        claims["std_ddof"] = CLAIMS["std_ddof"].claim(
            bool(
                np.allclose(torch_default * np.sqrt(n / (n - 1)), numpy_vals, rtol=1e-6)
                and not np.allclose(torch_default, numpy_vals, rtol=1e-3)
            )
        )
        claims["std_fix"] = CLAIMS["std_fix"].claim(
            bool(P.ulp_distance(torch_fixed, numpy_vals).max() <= 1)
        )
    idiom = "djl: x.sub(x.mean()).square().mean().sqrt()"
    if isinstance(djl, str):
        outs.append(Outcome.missing(idiom, "djl", djl))
    else:
        djl_vals = djl.normalize_by_stats(x)
        classic["djl"] = djl_vals
        outs.append(out(idiom, "djl", djl_vals, "DJL has no std(): the idiom divides by N", 0))
        claims["std_djl_population"] = CLAIMS["std_djl_population"].claim(
            bool(
                P.ulp_distance(djl_vals, numpy_vals).max() <= 1
                and not np.allclose(djl_vals, unbiased, rtol=1e-3)
            )
        )
        names = _article_names()
        gone = [n for n in ARTICLE_NAMES if not names[n]]
        here = [n for n in PRESENT_NAMES if names[n]]
        claims["article_names_gone"] = CLAIMS["article_names_gone"].claim(
            gone == list(ARTICLE_NAMES) and here == list(PRESENT_NAMES),
            gone=", ".join(gone) or "none",
            names=", ".join(ARTICLE_NAMES),
            here=", ".join(here),
        )
    return truth, [partial(lambda o: o, o) for o in outs], claims, {"classic": Classic(**classic)}


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
    from ....jvm import client

    return client.call("java_names", names=[*ARTICLE_NAMES, *PRESENT_NAMES])
