"""The RNG lesson's host stacks: torch CPU (real and emulated), TensorFlow, java.util.Random."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import backends
from ...errors import BackendUnavailable, NotEmulated, WorkerError
from ...memo import Memo
from ...result import Claim, Outcome
from ...result.spec import declare_texts
from ...rng import MT19937, JavaRandom, TorchCPURandom, random_bits
from ...rng.torch_cpu import PATH_NAMES, running_path

KINDS = {
    "rand32": ("rand", "float32"),
    "rand64": ("rand", "float64"),
    "randn32": ("randn", "float32"),
    "randn64": ("randn", "float64"),
}


class _Words:
    """An MT19937 stream whose first words were drawn once: every kind torch_cpu compares
    starts from ``torch.manual_seed(seed)``, i.e. from the same words, so they are generated
    once for all kinds instead of once per kind (words past them come from the generator)."""

    def __init__(self, mt: Any, ahead: int) -> None:
        self.mt, self.words, self.pos = mt, mt.next_u32(ahead), 0

    def next_u32(self, n: int) -> np.ndarray:
        short = self.pos + n - self.words.size
        if short > 0:
            self.words = np.concatenate([self.words, self.mt.next_u32(short)])
        self.pos += n
        return self.words[self.pos - n : self.pos]

    def replay(self) -> _Words:
        """The same stream from its first word again."""
        again = _Words.__new__(_Words)
        again.mt, again.words, again.pos = self.mt, self.words, 0
        return again


def emulated_path() -> tuple[str | None, str]:
    """The rebuild's path for the CPU path torch takes here, and how to say it; None (with
    the reason) where this CPU's path is not rebuilt."""
    try:
        path = running_path()
    except NotEmulated as exc:
        return None, str(exc)
    return path, f"{PATH_NAMES[path]}, the one torch takes on this CPU"


def _emulator(seed: int, words: _Words, path: str | None) -> TorchCPURandom:
    """`TorchCPURandom(seed)` on ``path`` drawing from ``words`` (that seed's MT19937 stream);
    without a rebuilt path, the AVX2 one (only the kinds that do not depend on it are read)."""
    emu = TorchCPURandom(seed, path=path or "avx2")  # type: ignore[arg-type]
    emu.mt = words.replay()
    return emu


def bits_per_float(values: np.ndarray, head: int = 4096) -> int:
    """`random_bits` of ``values``, the same number, with `random_bits` run on the first
    ``head`` values and on those (if any) that are not multiples of 2**-b for the b found
    there (a vectorized test; `random_bits` is a loop over values, ~1 ms per 1000)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    b = random_bits(v[:head])
    with np.errstate(over="ignore", invalid="ignore"):
        rest = v[head:][np.ldexp(v[head:], b) % 1 != 0]  # inf or nan (overflow): kept too
    return max(b, random_bits(rest)) if rest.size else b


#: torch_cpu's results by (torch or not, seed, n): the largest part of a run, kept so that
#: changing k, the relation's streams or a checkbox reruns none of it
_TORCH_CPU = Memo(keep=8)


def torch_cpu(
    torch: Any, seed: int, n: int
) -> tuple[dict[str, np.ndarray], dict[str, bool], dict[str, int]]:
    """``torch.manual_seed(seed)`` then rand/randn (float32, float64) for real, whether the
    MT19937 emulator gives the same bytes, per kind, and the random bits per float of torch's
    rand (float32, float64). Without torch (``torch`` None): the emulator's streams, no
    comparison and no bits. Kept by (seed, n); the arrays are shared: do not write to them."""
    return _TORCH_CPU.get((torch is not None, seed, n), lambda: _torch_cpu(torch, seed, n))


def _torch_cpu(
    torch: Any, seed: int, n: int
) -> tuple[dict[str, np.ndarray], dict[str, bool], dict[str, int]]:
    words = _Words(MT19937.from_seed(seed), 2 * n + 32)  # the most any kind draws: randn64
    path, _ = emulated_path()
    real, same = {}, {}
    if torch is None:
        for key, (fn, dtype) in KINDS.items():
            real[key] = getattr(_emulator(seed, words, path), fn)(n, dtype)
        return real, same, {}
    for key, (fn, dtype) in KINDS.items():
        torch.manual_seed(seed)
        real[key] = getattr(torch, fn)(n, dtype=getattr(torch, dtype)).numpy()
        emu = getattr(_emulator(seed, words, path), fn)(n, dtype)
        same[key] = bool((real[key].view(np.uint8) == emu.view(np.uint8)).all())
    return real, same, {f"torch CPU float{b}": bits_per_float(real[f"rand{b}"]) for b in (32, 64)}


_TEST = "tests/test_rng_seeds.py"
TF_CLAIMS = declare_texts(
    {
        "tf_global_seed_is_stateful": "after tf.random.set_seed, each tf.random.uniform call "
        "continues the stream; re-seeding repeats it",
        "tf_op_seed_with_global": "the same op seed under a different global seed gives "
        "different numbers",
        "tf_stateless_repeats": "tf.random.stateless_uniform returns the same numbers for the "
        "same seed pair, with no hidden state",
    },
    ("tensorflow",),
    test=_TEST,
)
JAVA_CLAIMS = declare_texts(
    {"java_emulator_matches": "the java.util.Random emulator matches the JVM bit for bit"},
    ("java",),
    test=_TEST,
)


def tensorflow(seed: int, k: int) -> tuple[list[Outcome], dict[str, Claim], dict[str, int]]:
    """Global-seed (stateful) and stateless uniform streams, with the claims about seeding."""
    why = backends.missing("tensorflow")
    if why is not None:
        missing = [
            Outcome.missing(name, "tensorflow", why)
            for name in ("TensorFlow", "TensorFlow stateless")
        ]
        return missing, {}, {}  # not checked: `Lesson.run` names TensorFlow
    tf = backends.load("tensorflow")

    tf.random.set_seed(seed)
    first = tf.random.uniform([4096]).numpy()
    second = tf.random.uniform([4096]).numpy()
    tf.random.set_seed(seed)
    again = tf.random.uniform([4096]).numpy()
    tf.random.set_seed(seed)
    op_a = tf.random.uniform([k], seed=7).numpy()
    tf.random.set_seed(seed + 1)
    op_b = tf.random.uniform([k], seed=7).numpy()
    s1 = tf.random.stateless_uniform([4096], seed=[seed, 0]).numpy()
    s2 = tf.random.stateless_uniform([4096], seed=[seed, 0]).numpy()
    s64 = tf.random.stateless_uniform([4096], seed=[seed, 0], dtype=tf.float64).numpy()
    outcomes = [
        Outcome(name, "tensorflow", value=values[:k], version=tf.__version__, note=note)
        for name, values, note in (
            ("TensorFlow", first, "tf.random.set_seed(seed); tf.random.uniform (Philox, stateful)"),
            ("TensorFlow stateless", s1, "tf.random.stateless_uniform(seed=[seed, 0])"),
        )
    ]
    holds = {
        "tf_global_seed_is_stateful": bool(
            (first == again).all() and not (first[:k] == second[:k]).all()
        ),
        "tf_op_seed_with_global": bool(not (op_a == op_b).all()),
        "tf_stateless_repeats": bool((s1 == s2).all()),
    }
    claims = {key: TF_CLAIMS[key].claim(h) for key, h in holds.items()}
    bits = {"TensorFlow float32": random_bits(s1), "TensorFlow float64": random_bits(s64)}
    return outcomes, claims, bits


#: ``java.util.Random`` floats by (seed, k), and the JVM's version line: each request to the
#: JVM worker (started once) also draws the seeds next to the one asked for
_JAVA_DRAWS = Memo(keep=64)
_JAVA_VERSION = Memo(keep=1)
JAVA_SEEDS_AROUND = 2


def java_floats(seed: int, k: int) -> np.ndarray:
    """``new java.util.Random(seed).nextFloat()`` k times, from the JVM worker, drawn with
    its `JAVA_SEEDS_AROUND` neighbours on each side (kept for when they are asked for)."""
    from ...rng import java as jr

    def start() -> np.ndarray:
        near = range(seed - JAVA_SEEDS_AROUND, seed + JAVA_SEEDS_AROUND + 1)
        seeds = [s for s in near if 0 <= s < 2**63]
        draws = jr.run_java(seeds, k)
        for s in seeds:
            if s != seed:
                _JAVA_DRAWS.get((s, k), lambda s=s: draws[s]["float"])
        return draws[seed]["float"]

    return _JAVA_DRAWS.get((seed, k), start)


def java(seed: int, k: int) -> tuple[list[Outcome], dict[str, Claim]]:
    """``new java.util.Random(seed).nextFloat()`` on a JVM (when ``java`` runs) and emulated."""
    from ...rng import java as jr

    emu = JavaRandom(seed).floats(k)
    emulated = Outcome(
        "java.util.Random emulator",
        "fpexplore",
        kind="emulator",
        value=emu,
        note="48-bit LCG, nextFloat = next(24) / 2**24",
    )
    try:
        real = java_floats(seed, k)
        version = _JAVA_VERSION.get("java", jr.java_version)
    except (BackendUnavailable, WorkerError) as exc:  # no JVM: say so, keep the emulator
        why = str(exc)
        missing = [Outcome.missing("java.util.Random", "java", why), emulated]
        return missing, {k: spec.not_checked(why) for k, spec in JAVA_CLAIMS.items()}
    outcome = Outcome(
        "java.util.Random",
        "java",
        value=real,
        version=version,
        note="new java.util.Random(seed).nextFloat() on the JVM",
    )
    claims = {
        "java_emulator_matches": JAVA_CLAIMS["java_emulator_matches"].claim(
            bool((real.view(np.uint32) == emu.view(np.uint32)).all()), f" (JVM {version})"
        )
    }
    return [outcome, emulated], claims
