"""Lesson: the same seed gives different numbers in every stack, and why, down to the bit.

torch CPU, numpy's legacy RandomState and Python's random all run MT19937, yet print
different numbers for seed 42: torch and numpy share the 32-bit words but map them to floats
differently (24 vs 53 bits), Python seeds the state differently. torch CUDA (Philox), numpy's
Generator (PCG64), TensorFlow and java.util.Random are different generators altogether.
Weight initialization inherits all of this: the same seed gives different weights in torch
and Keras, and only transferring the weights makes the layers agree.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...memo import Memo
from ...params import Flag, Interval, Options
from ...result import Claim, Comparison, Outcome
from ...rng import TorchCPURandom, random_bits, shared_bits_agree
from .._base import ClaimSpec, Lesson, declare_texts
from .._gpu.recording import GpuExperiment, GpuSession
from . import augment as _augment
from . import devices as _rng_devices
from . import djl_layers as _djl_layers
from . import experiment as _experiment
from . import layer as _layer
from . import multi_gpu as _multi_gpu
from . import stacks as _rng_stacks
from .data import Relation, RngData
from .djl_layers import djl_layers
from .layer import weight_init_outcomes
from .views import bits_of, figure, figure_svg, stream_table
from .workers import CLAIMS as WORKER_CLAIMS
from .workers import worker_claims

__all__ = ["LESSON", "STREAMS", "bits_of", "figure", "figure_svg", "relation", "stream_table"]


#: parts that do not depend on the streams' settings, kept so that changing those reruns none
#: of them: TensorFlow's by (seed, k), the weights by (seed, TensorFlow included), the DJL
#: layers by (seed, what is missing), the DataLoader claims by seed (shared: never changed)
_TENSORFLOW = Memo(keep=8)
_WEIGHTS = Memo(keep=8)
_DJL_LAYERS = Memo(keep=8)
_WORKERS = Memo(keep=8)

STREAMS = (
    "torch CPU",
    "torch CUDA",
    "numpy RandomState",
    "numpy Generator",
    "Python random",
    "TensorFlow",
    "java.util.Random",
    "DJL randomUniform",
)


_TEST = "tests/test_rng_seeds.py"
#: the claims that compare against torch itself (as stated before measuring)
TORCH_CLAIMS = declare_texts(
    {
        "torch_rand_reproduced": "torch.rand is reproduced bit for bit from an independent "
        "MT19937 (float32 and float64)",
        "torch_randn_reproduced": "torch.randn is reproduced bit for bit (Box-Muller)",
        "same_seed_different_numbers": "one seed gives a different first value in each "
        "generator that ran",
        "torch_numpy_share_words": "torch CPU and numpy RandomState draw the same MT19937 "
        "words: the 19 bits both mappings keep from each word agree at every position",
        "python_stream_unrelated": "Python's random (seeded through init_by_array) shares no "
        "words with torch",
        "mappings_differ": "stacks keep different numbers of random bits per float",
        "cuda_differs_from_cpu": "torch CUDA gives other numbers than torch CPU",
    },
    ("torch",),
    {
        "torch_randn_reproduced": ("torch", "randn path"),
        "same_seed_different_numbers": (),
        "cuda_differs_from_cpu": ("torch", "cuda stream"),
    },
    test=_TEST,
)
#: every claim, by the flag that includes it (None: always)
CLAIMS_BY_FLAG = {
    None: {**TORCH_CLAIMS, **WORKER_CLAIMS, **_rng_devices.CUDA_CLAIMS, **_multi_gpu.CLAIMS},
    "tensorflow": _rng_stacks.TF_CLAIMS,
    "java": {
        **_rng_stacks.JAVA_CLAIMS,
        **_rng_devices.DJL_CLAIMS,
        **_djl_layers.CLAIMS,
        **_augment.CLAIMS,
    },
    "weights": {**_layer.TORCH_CLAIMS, **_layer.KERAS_CLAIMS},
}
CLAIMS = {k: spec for specs in CLAIMS_BY_FLAG.values() for k, spec in specs.items()}
C = CLAIMS


def compute(
    seed: int, n: int, k: int, a: str, b: str, tensorflow: bool, java: bool, weights: bool
) -> Comparison:
    from ... import backends

    torch_missing = backends.missing("torch")
    torch = None if torch_missing else backends.load("torch")
    real, same, torch_bits = _rng_stacks.torch_cpu(torch, seed, n)  # emulated without torch
    legacy = np.random.RandomState(seed).random_sample(max(32, k))
    pyr = random.Random(seed)
    py_vals = np.array([pyr.random() for _ in range(max(32, k))])
    if torch is not None:
        torch.manual_seed(seed)
        share32 = torch.rand(2 * legacy.size).numpy()  # two torch words per numpy value
    else:
        share32 = TorchCPURandom(seed).rand(2 * legacy.size)

    outcomes = _torch_cpu_outcomes(torch, torch_missing, seed, k, real)
    cuda_outs, claims, cuda_source = _rng_devices.cuda(torch, seed, n, k)
    outcomes += cuda_outs + _numpy_python_outcomes(seed, k, legacy, py_vals)
    bits = {
        **torch_bits,
        "numpy RandomState": random_bits(legacy),
        "Python random": random_bits(py_vals),
        "numpy Generator float32": random_bits(
            np.random.Generator(np.random.PCG64(seed)).random(4096, dtype=np.float32)
        ),
    }
    djl_equal = djl_same = layers = flips = None  # DJL randomUniform vs torch.rand; layers; flips
    if tensorflow:
        tf_outs, tf_claims, tf_bits = _TENSORFLOW.get(
            (seed, k), lambda: _rng_stacks.tensorflow(seed, k)
        )
        outcomes += tf_outs
        claims.update(tf_claims)
        bits.update(tf_bits)
    if java:
        j_outs, j_claims, *java_data = _java_parts(seed, n, k, torch, torch_missing)
        outcomes += j_outs
        claims.update(j_claims)
        djl_equal, djl_same, layers, flips = java_data
    gpus_note = None  # why the live run cannot decide the two-GPU claim
    if torch is not None:
        w_claims_, gpus_note = _WORKERS.get(seed, lambda: worker_claims(torch, seed))
        claims.update(w_claims_)

    shared = shared_bits_agree(share32, legacy)
    py_shared = shared_bits_agree(share32, py_vals)
    cuda = next(o for o in outcomes if o.implementation == "torch CUDA")
    claims.update(_claims(seed, n, same, outcomes, shared, py_shared, real, bits, cuda))
    gpu_claims, gpu_data = _multi_gpu.lesson_parts()
    claims.update(gpu_claims)
    truth = None
    if weights:
        w_outs, w_claims, truth = _WEIGHTS.get(
            (seed, tensorflow), lambda: weight_init_outcomes(seed, tensorflow)
        )
        outcomes += w_outs
        claims.update(w_claims)

    rel = relation(outcomes, a, b, share32, bool(djl_equal))
    data = RngData(bits, rel, same, cuda_source, gpu_data, djl_equal, layers, djl_same, flips=flips)
    observations = {}
    if gpus_note is not None:
        if gpu_data:
            gpus_note += f"; decided from the recorded run instead ({gpu_data.path})"
        observations["seeding_two_gpus"] = OBSERVED.observe(gpus_note)
    return Comparison(
        truth=truth,
        outcomes=tuple(outcomes),
        claims=claims,
        data=data,
        explanation=EXPLANATION,
        observations=observations,
        missing=_not_checked(seed, n, cuda, gpu_data),
    )


def _torch_cpu_outcomes(
    torch: Any, torch_missing: str | None, seed: int, k: int, real: dict[str, np.ndarray]
) -> list[Outcome]:
    """torch CPU's first ``k`` values (missing without torch) and the emulator's."""
    emulator = Outcome(
        "torch CPU emulator",
        "fpexplore",
        kind="emulator",
        value=TorchCPURandom(seed).rand(k),
        note="independent MT19937 + torch's mapping",
    )
    if torch is None:
        return [Outcome.missing("torch CPU", "torch", torch_missing), emulator]
    note = "MT19937; float32 = (word & 0xFFFFFF) / 2**24"
    real_cpu = Outcome("torch CPU", "torch", value=real["rand32"][:k], version=torch.__version__,
                       note=note)  # fmt: skip
    return [real_cpu, emulator]


def _numpy_python_outcomes(
    seed: int, k: int, legacy: np.ndarray, py_vals: np.ndarray
) -> list[Outcome]:
    """numpy's RandomState (``legacy``) and Generator, and Python's random: first ``k`` values."""
    note = "MT19937 (same words as torch); two words -> 53 bits"
    generator = np.random.Generator(np.random.PCG64(seed)).random(k)
    return [
        Outcome("numpy RandomState", "numpy", value=legacy[:k], version=np.__version__, note=note),
        Outcome("numpy Generator", "numpy", value=generator, version=np.__version__, note="PCG64"),
        Outcome(
            "Python random",
            "python",
            value=py_vals[:k],
            note="MT19937 seeded by init_by_array; two words -> 53 bits",
        ),
    ]


def _java_parts(seed: int, n: int, k: int, torch: Any, torch_missing: str | None) -> tuple:
    """java.util.Random, DJL's streams and layers and the flips: outcomes, claims, DJL's
    uniform equality and counts, its layers, and the flips."""
    from ... import backends

    j_outs, j_claims = _rng_stacks.java(seed, k)
    d_outs, d_claims, djl_equal, djl_same = _rng_devices.djl(seed, n, k)
    djl_missing = backends.missing("djl") or torch_missing
    l_outs, l_claims, layers = _DJL_LAYERS.get(
        (seed, djl_missing), lambda: djl_layers(seed, djl_missing, torch)
    )
    claims, flips = {**j_claims, **d_claims, **l_claims}, None
    if torch is not None and backends.missing("java") is None:
        a_claims, flips = _augment.run(torch, seed, _rng_stacks.java_floats)
        claims.update(a_claims)
    return j_outs + d_outs + l_outs, claims, djl_equal, djl_same, layers, flips


def _not_checked(seed: int, n: int, cuda: Outcome, gpu_data: Any) -> dict[str, str | None]:
    """Why each part's claims went unchecked (None: they were checked)."""
    path, said = _rng_stacks.emulated_path()
    too_big = (
        f"DJL's Engine.setRandomSeed takes a Java int; seed {seed} is too big. Fix: "
        f"choose a seed below {2**31 - _djl_layers.SEEDS}"
    )
    return {
        "randn path": said if path is None and n >= 16 else None,
        "cpu path": said if path is None else None,
        "cuda stream": None if cuda.ran else cuda.unavailable,
        "two-GPU record": None if gpu_data else _multi_gpu.NO_RECORD,
        "java int seed": None if seed + _djl_layers.SEEDS <= 2**31 else too_big,
    }


def stated(params: Mapping[str, Any]) -> list[ClaimSpec]:
    """The claims of the parts ``params`` include (`CLAIMS_BY_FLAG`)."""
    flags = {None: True, **{f: params[f] for f in CLAIMS_BY_FLAG if f is not None}}
    return [s for flag, group in CLAIMS_BY_FLAG.items() if flags[flag] for s in group.values()]


def _claims(
    seed: int,
    n: int,
    same: dict[str, bool],
    outcomes: list[Outcome],
    shared: np.ndarray,
    py_shared: np.ndarray,
    real: dict[str, np.ndarray],
    bits: dict[str, int],
    cuda: Outcome,
) -> dict[str, Claim]:
    """The claims about torch CPU, numpy, Python and the float mappings."""
    firsts = {
        o.implementation: float(np.asarray(o.value).ravel()[0])
        for o in outcomes
        if o.ran
        and o.kind != "emulator"
        and o.implementation not in ("TensorFlow stateless", "DJL randomUniform")
    }
    tf_bits = bits.get("TensorFlow float32")
    # placeholders without torch: the claims that use them are replaced by "not checked"
    bits = {"torch CPU float32": 0, **bits}
    same = {"rand32": False, "rand64": False, "randn32": False, "randn64": False, **same}
    # randn is "not checked" (the "randn path" part) where torch's path is not rebuilt here
    kernel = "16-wide float32 kernel" if n >= 16 else "per-pair float64 path"
    said = f"; {_rng_stacks.emulated_path()[1]}" if n >= 16 else ""
    claims = {
        "torch_rand_reproduced": C["torch_rand_reproduced"].claim(
            same["rand32"] and same["rand64"], f" (torch.manual_seed({seed}); torch.rand({n}))"
        ),
        "torch_randn_reproduced": C["torch_randn_reproduced"].claim(
            same["randn32"] and same["randn64"], f" (n = {n}, {kernel}{said})"
        ),
        "same_seed_different_numbers": C["same_seed_different_numbers"].claim(
            len(set(firsts.values())) == len(firsts), f" (seed {seed}, {len(firsts)} generators)"
        ),
        "torch_numpy_share_words": C["torch_numpy_share_words"].claim(bool(shared.all())),
        "python_stream_unrelated": C["python_stream_unrelated"].claim(bool(py_shared.mean() < 0.5)),
        "mappings_differ": C["mappings_differ"].claim(
            bits["torch CPU float32"] != bits["numpy RandomState"],
            f": torch float32 {bits['torch CPU float32']}, numpy legacy "
            f"{bits['numpy RandomState']}"
            + (f", TensorFlow float32 {tf_bits}" if tf_bits is not None else ""),
        ),
    }
    if cuda.ran:
        # the values both sides drew (the CUDA run may hold more than n values, or fewer)
        gpu = np.asarray(cuda.value, dtype=np.float32).reshape(-1)
        m = min(gpu.size, np.asarray(real["rand32"]).size)
        cpu_bits = np.asarray(real["rand32"], dtype=np.float32)[:m].view(np.uint32)
        claims["cuda_differs_from_cpu"] = C["cuda_differs_from_cpu"].claim(
            bool((gpu[:m].view(np.uint32) != cpu_bits).any()),
            f" ({cuda.kind}, {cuda.device}; seed {seed}, first {m} values)",
        )
    return claims


GENERATORS = {
    "torch CPU": "MT19937 (init_genrand)",
    "numpy RandomState": "MT19937 (init_genrand)",
    "Python random": "MT19937 (init_by_array)",
    "torch CUDA": "Philox4x32-10 (seed, offset)",
    "numpy Generator": "PCG64",
    "TensorFlow": "Philox4x32-10 (global + op seed)",
    "java.util.Random": "48-bit LCG",
    "DJL randomUniform": "libtorch's CPU generator",
}


def relation(
    outcomes: tuple[Outcome, ...] | list[Outcome],
    a: str,
    b: str,
    share32: np.ndarray,
    djl_is_torch: bool,
) -> Relation:
    """Whether streams ``a`` and ``b`` come from the same random words, measured on their
    values: torch CPU against numpy RandomState or Python random through the bits both keep of
    each word (`shared_bits_agree` on ``share32``, torch's stream at twice the length), any
    other pair by bit-equal values. DJL counts as torch CPU only where that was measured."""
    vals = {o.implementation: np.asarray(o.value) for o in outcomes if o.ran}
    absent = [s for s in (a, b) if s not in vals]
    if absent:
        return Relation(None, f"{' and '.join(absent)} did not run")
    alias = {"DJL randomUniform": "torch CPU"} if djl_is_torch else {}
    x, y = alias.get(a, a), alias.get(b, b)
    note = "DJL randomUniform is torch CPU's stream (measured); " if x != a or y != b else ""
    if {x, y} in ({"torch CPU", "numpy RandomState"}, {"torch CPU", "Python random"}):
        agree = shared_bits_agree(share32, vals[y if x == "torch CPU" else x])
        return Relation(
            bool(agree.all()),
            f"{note}{int(agree.sum())}/{agree.size} values share bits 5..23 of their MT19937 word",
        )
    m = min(vals[a].size, vals[b].size)
    eq = vals[a].ravel()[:m].astype(np.float64) == vals[b].ravel()[:m].astype(np.float64)
    return Relation(bool(eq.all()), f"{note}{int(eq.sum())}/{m} values equal")


EXPLANATION = (
    "A seed fixes a generator's state, not the numbers you see. torch CPU and numpy's legacy "
    "RandomState seed the same MT19937 the same way, so they draw identical 32-bit words; torch "
    "turns each word into a float32 from its low 24 bits, numpy glues two words into 53 bits, "
    "so their floats differ while sharing bits. Python's random runs the same MT19937 but "
    "seeds it through init_by_array: unrelated words. torch CUDA and TensorFlow use Philox, "
    "numpy's Generator PCG64, java.util.Random a 48-bit LCG; each maps integers to floats in "
    "its own way (TensorFlow keeps 23 bits for float32). Same seed, same framework, different "
    "device or CPU instruction set can still give different normals."
)

OBSERVED = ClaimSpec(
    "seeding_two_gpus",
    "manual_seed across two GPUs and CUDA streams",
    applies="where the live run cannot decide the two-GPU claim",
)


def record_gpu(s: GpuSession) -> dict[str, Any]:
    """The generators' streams on the session's device."""
    return _experiment.run_rng(s.device)


LESSON = Lesson(
    name="rng_seeds",
    title="Same seed, different numbers: random streams across stacks",
    summary="Seeds in torch (CPU, CUDA), numpy, TensorFlow, Python and Java, compared in bits",
    params=(
        Interval("seed", 42, "the seed given to every generator", 0, 2**32 - 1, integer=True),
        Interval("n", 64, "values drawn to reproduce torch bit for bit", 1, 100_000, integer=True),
        Interval("k", 4, "values shown per stream", 1, 64, integer=True),
        Options("a", "torch CPU", "first stream of the relation view", choices=STREAMS),
        Options("b", "numpy RandomState", "second stream of the relation view", choices=STREAMS),
        Flag("tensorflow", True, "include TensorFlow (imports it)"),
        Flag("java", True, "include java.util.Random (starts a JVM) and DJL"),
        Flag("weights", True, "compare torch Linear and Keras Dense initialization"),
    ),
    compute=compute,
    claims=CLAIMS,
    stated_by=stated,
    observations={OBSERVED.key: OBSERVED},
    data=RngData,
    explanation=EXPLANATION,
    figure=figure,
    quick={"n": 64, "k": 4},
    gpu_experiment=GpuExperiment("rng", record_gpu, seed=_experiment.SEEDS),
)
