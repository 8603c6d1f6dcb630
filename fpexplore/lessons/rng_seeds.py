"""Lesson: the same seed gives different numbers in every stack, and why, down to the bit.

torch CPU, numpy's legacy RandomState and Python's random all run MT19937, yet print
different numbers for seed 42: torch and numpy share the 32-bit words but map them to floats
differently (24 vs 53 bits), Python seeds the state differently. torch CUDA (Philox), numpy's
Generator (PCG64), TensorFlow and java.util.Random are different generators altogether.
Weight initialization inherits all of this: the same seed gives different weights in torch
and Keras, and only transferring the weights makes the layers agree.
"""

from __future__ import annotations

import os
import random
from typing import Any

import numpy as np

from .. import backends, formats
from ..params import Flag, Interval, Options
from ..result import Claim, Comparison, Outcome
from ..rng import (
    JavaRandom,
    TorchCPURandom,
    random_bits,
    shared_bits_agree,
)
from ._base import Lesson
from ._rng_layer import weight_init_outcomes

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


def bits_of(values: Any) -> list[str]:
    """IEEE bit patterns, sign|exponent|mantissa, of float32 or float64 values."""
    arr = np.asarray(values)
    fmt = "float32" if arr.dtype == np.float32 else "float64"
    return [formats.bit_string(v, fmt) for v in arr.astype(fmt).ravel()]


def _torch_streams(torch: Any, seed: int, n: int) -> dict[str, np.ndarray]:
    out = {}
    for name, fn, dtype in (
        ("rand32", torch.rand, torch.float32),
        ("rand64", torch.rand, torch.float64),
        ("randn32", torch.randn, torch.float32),
        ("randn64", torch.randn, torch.float64),
    ):
        torch.manual_seed(seed)
        out[name] = fn(n, dtype=dtype).numpy()
    return out


def _cuda_outcome(torch: Any, seed: int, k: int) -> Outcome:
    """torch CUDA live when a GPU is present, else the recorded GPU run, else missing."""
    if torch.cuda.is_available():
        torch.manual_seed(seed)
        vals = torch.rand(k, device="cuda").cpu().numpy()
        return Outcome(
            "torch CUDA",
            "torch",
            value=vals,
            version=torch.__version__,
            device=torch.cuda.get_device_name(0),
            note="Philox4x32-10, live",
        )
    from .. import records

    if not records.available():
        return Outcome.missing(
            "torch CUDA",
            "torch",
            "no CUDA device here and no recorded GPU run in data/gpu; record one with: "
            f"{records.RECORD_FIX}",
            kind="recorded",
        )
    run = records.load()
    exp = run.experiments["rng"]
    table = exp["cuda_rand_bits"]
    if str(seed) not in table:
        seeds = ", ".join(map(str, exp["seeds"]))
        return Outcome.missing(
            "torch CUDA",
            "torch",
            f"the recorded GPU run has seeds {seeds}, not {seed}; pick one of those or "
            f"record this seed with: {records.RECORD_FIX}",
            kind="recorded",
        )
    vals = records.from_bits32(table[str(seed)])[:k]
    return Outcome(
        "torch CUDA",
        "torch",
        kind="recorded",
        value=vals,
        version=str(run.provenance["torch"]),
        device=run.card,
        note=f"Philox4x32-10; {run.banner()}",
    )


def _tensorflow(seed: int, k: int) -> tuple[list[Outcome], dict[str, Any]]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
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
    facts = {
        "tf_stateful": bool((first == again).all() and not (first[:k] == second[:k]).all()),
        "tf_op_seed_needs_global": bool(not (op_a == op_b).all()),
        "tf_stateless_repeats": bool((s1 == s2).all()),
        "tf_bits32": random_bits(s1),
        "tf_bits64": random_bits(s64),
    }
    v = tf.__version__
    outs = [
        Outcome(
            "TensorFlow",
            "tensorflow",
            value=first[:k],
            version=v,
            note="tf.random.set_seed(seed); tf.random.uniform (Philox, stateful)",
        ),
        Outcome(
            "TensorFlow stateless",
            "tensorflow",
            value=s1[:k],
            version=v,
            note="tf.random.stateless_uniform(seed=[seed, 0])",
        ),
    ]
    return outs, facts


def _java(seed: int, k: int) -> tuple[list[Outcome], dict[str, Any]]:
    from ..backends import get
    from ..rng import java as jr

    emu = JavaRandom(seed).floats(k)
    outs = [
        Outcome(
            "java.util.Random emulator",
            "fpexplore",
            kind="emulator",
            value=emu,
            note="48-bit LCG, nextFloat = next(24) / 2**24",
        )
    ]
    facts: dict[str, Any] = {}
    try:
        real = jr.run_java([seed], k)[seed]["float"]
        outs.insert(
            0,
            Outcome(
                "java.util.Random",
                "java",
                value=real,
                version=jr.java_version(),
                note="new java.util.Random(seed).nextFloat() on the JVM",
            ),
        )
        facts["java_emulator_matches"] = bool((real.view(np.uint32) == emu.view(np.uint32)).all())
    except Exception as exc:  # no JVM: say so, keep the emulator
        outs.insert(0, Outcome.missing("java.util.Random", "java", f"{exc}"))
    djl = get("djl")
    if djl.available():
        try:
            mod = djl.load()
            vals = np.asarray(mod.random_uniform(seed % 2**31, k), dtype=np.float32)
            outs.append(
                Outcome(
                    "DJL randomUniform",
                    "djl",
                    value=vals,
                    version=djl.version(),
                    note="Engine.setRandomSeed; NDManager.randomUniform (libtorch)",
                )
            )
        except Exception as exc:
            outs.append(
                Outcome.missing(
                    "DJL randomUniform",
                    "djl",
                    f"the DJL worker failed: {exc}. Check it with: fpexplore doctor",
                )
            )
    else:
        reason = getattr(djl, "missing", lambda: "DJL is not set up")() or "DJL is not set up"
        outs.append(Outcome.missing("DJL randomUniform", "djl", f"{reason} Fix: {djl.fix}"))
    return outs, facts


def compute(
    seed: int, n: int, k: int, a: str, b: str, tensorflow: bool, java: bool, weights: bool
) -> Comparison:
    import torch

    tv = torch.__version__
    real = _torch_streams(torch, seed, n)
    emu = {
        "rand32": TorchCPURandom(seed).rand(n, "float32"),
        "rand64": TorchCPURandom(seed).rand(n, "float64"),
        "randn32": TorchCPURandom(seed).randn(n, "float32"),
        "randn64": TorchCPURandom(seed).randn(n, "float64"),
    }
    same = {key: bool((real[key].view(np.uint8) == emu[key].view(np.uint8)).all()) for key in emu}

    legacy = np.random.RandomState(seed).random_sample(max(32, k))
    pcg = np.random.Generator(np.random.PCG64(seed)).random(k)
    pyr = random.Random(seed)
    py_vals = np.array([pyr.random() for _ in range(max(32, k))])
    torch.manual_seed(seed)
    real["share32"] = torch.rand(2 * legacy.size).numpy()  # two torch words per numpy value

    outcomes = [
        Outcome(
            "torch CPU",
            "torch",
            value=real["rand32"][:k],
            version=tv,
            note="MT19937; float32 = (word & 0xFFFFFF) / 2**24",
        ),
        Outcome(
            "torch CPU emulator",
            "fpexplore",
            kind="emulator",
            value=emu["rand32"][:k],
            note="independent MT19937 + torch's mapping",
        ),
        _cuda_outcome(torch, seed, k),
        Outcome(
            "numpy RandomState",
            "numpy",
            value=legacy[:k],
            version=np.__version__,
            note="MT19937 (same words as torch); two words -> 53 bits",
        ),
        Outcome("numpy Generator", "numpy", value=pcg, version=np.__version__, note="PCG64"),
        Outcome(
            "Python random",
            "python",
            value=py_vals[:k],
            note="MT19937 seeded by init_by_array; two words -> 53 bits",
        ),
    ]
    facts: dict[str, Any] = {}
    if tensorflow:
        tf_outs, tf_facts = _tensorflow(seed, k)
        outcomes += tf_outs
        facts.update(tf_facts)
    if java:
        j_outs, j_facts = _java(seed, k)
        outcomes += j_outs
        facts.update(j_facts)

    shared = shared_bits_agree(real["share32"], legacy)
    shared_py = shared_bits_agree(real["share32"], py_vals)
    firsts = {
        o.implementation: float(np.asarray(o.value).ravel()[0])
        for o in outcomes
        if o.ran
        and o.kind != "emulator"
        and o.implementation not in ("TensorFlow stateless", "DJL randomUniform")
    }
    bits = {
        "torch CPU float32": random_bits(real["rand32"]),
        "torch CPU float64": random_bits(real["rand64"]),
        "numpy RandomState": random_bits(legacy),
        "Python random": random_bits(py_vals),
        "numpy Generator float32": random_bits(
            np.random.Generator(np.random.PCG64(seed)).random(4096, dtype=np.float32)
        ),
    }
    if "tf_bits32" in facts:
        bits["TensorFlow float32"] = facts["tf_bits32"]
        bits["TensorFlow float64"] = facts["tf_bits64"]

    claims = {
        "torch_rand_reproduced": Claim(
            f"torch.manual_seed({seed}); torch.rand({n}) is reproduced bit for bit from an "
            "independent MT19937 (float32 and float64)",
            same["rand32"] and same["rand64"],
        ),
        "torch_randn_reproduced": Claim(
            f"torch.randn({n}) is reproduced bit for bit (Box-Muller, "
            f"{'16-wide float32 kernel' if n >= 16 else 'per-pair float64 path'})",
            same["randn32"] and same["randn64"],
        ),
        "same_seed_different_numbers": Claim(
            f"seed {seed} gives a different first value in each of the {len(firsts)} "
            "generators that ran",
            len(set(firsts.values())) == len(firsts),
        ),
        "torch_numpy_share_words": Claim(
            "torch CPU and numpy RandomState draw the same MT19937 words: the 19 bits both "
            "mappings keep from each word agree at every position",
            bool(shared.all()),
        ),
        "python_stream_unrelated": Claim(
            "Python's random (seeded through init_by_array) shares no words with torch",
            bool(shared_py.mean() < 0.5),
        ),
        "mappings_differ": Claim(
            "stacks keep different numbers of random bits per float: torch float32 "
            f"{bits['torch CPU float32']}, numpy legacy {bits['numpy RandomState']}"
            + (
                f", TensorFlow float32 {bits['TensorFlow float32']}" if "tf_bits32" in facts else ""
            ),
            bits["torch CPU float32"] != bits["numpy RandomState"],
        ),
    }
    if "tf_stateful" in facts:
        claims["tf_global_seed_is_stateful"] = Claim(
            "after tf.random.set_seed, each tf.random.uniform call continues the stream; "
            "re-seeding repeats it",
            facts["tf_stateful"],
        )
        claims["tf_op_seed_with_global"] = Claim(
            "the same op seed under a different global seed gives different numbers",
            facts["tf_op_seed_needs_global"],
        )
        claims["tf_stateless_repeats"] = Claim(
            "tf.random.stateless_uniform returns the same numbers for the same seed pair, "
            "with no hidden state",
            facts["tf_stateless_repeats"],
        )
    if "java_emulator_matches" in facts:
        claims["java_emulator_matches"] = Claim(
            "the java.util.Random emulator matches the JVM bit for bit",
            facts["java_emulator_matches"],
        )
    djl = next((o for o in outcomes if o.implementation == "DJL randomUniform"), None)
    if djl is not None and djl.ran:
        d = np.asarray(djl.value, dtype=np.float32).view(np.uint32)
        claims["djl_is_torch_cpu"] = Claim(
            "DJL's randomUniform (PyTorch engine) is torch's CPU stream bit for bit: libtorch "
            "runs the same MT19937 and mapping",
            bool((d == real["rand32"][: d.size].view(np.uint32)).all()),
        )
    cuda = next(o for o in outcomes if o.implementation == "torch CUDA")
    if cuda.ran:
        cpu_bits = real["rand32"][:k].view(np.uint32)
        claims["cuda_differs_from_cpu"] = Claim(
            f"torch CUDA ({cuda.kind}) gives other numbers than torch CPU for seed {seed}",
            bool((np.asarray(cuda.value, dtype=np.float32).view(np.uint32) != cpu_bits).any()),
        )

    truth = None
    if weights:
        w_outs, w_claims, truth, w_data = weight_init_outcomes(seed, tensorflow)
        outcomes += w_outs
        claims.update(w_claims)
    else:
        w_data = {}

    data = {
        "k": k,
        "bits_per_float": bits,
        "shared_bits": shared,
        "firsts": firsts,
        "relation": relation(outcomes, a, b, real, legacy, py_vals, seed),
        "matches": same,
        **w_data,
    }
    return Comparison(
        "rng_seeds",
        {
            "seed": seed,
            "n": n,
            "k": k,
            "a": a,
            "b": b,
            "tensorflow": tensorflow,
            "java": java,
            "weights": weights,
        },
        truth,
        tuple(outcomes),
        claims,
        data,
        EXPLANATION,
    )


def relation(
    outcomes: tuple[Outcome, ...] | list[Outcome],
    a: str,
    b: str,
    real: dict,
    legacy: np.ndarray,
    py_vals: np.ndarray,
    seed: int,
) -> dict[str, Any]:
    """Whether streams ``a`` and ``b`` come from the same underlying random words."""
    words = {
        "torch CPU": ("MT19937", "init_genrand"),
        "numpy RandomState": ("MT19937", "init_genrand"),
        "Python random": ("MT19937", "init_by_array"),
        "torch CUDA": ("Philox4x32-10", "seed, offset"),
        "numpy Generator": ("PCG64", ""),
        "TensorFlow": ("Philox4x32-10", "global + op seed"),
        "java.util.Random": ("48-bit LCG", "seed ^ 0x5DEECE66D"),
        "DJL randomUniform": ("MT19937", "init_genrand (libtorch)"),
    }
    out: dict[str, Any] = {"a": a, "b": b, "generator_a": words.get(a), "generator_b": words.get(b)}
    if {a, b} == {"torch CPU", "numpy RandomState"}:
        agree = shared_bits_agree(real["share32"], legacy)
        out.update(
            related=bool(agree.all()),
            evidence=f"{int(agree.sum())}/{agree.size} "
            "values share bits 5..23 of their MT19937 word",
        )
    elif {a, b} == {"torch CPU", "Python random"}:
        agree = shared_bits_agree(real["share32"], py_vals)
        out.update(
            related=bool(agree.all()),
            evidence=f"{int(agree.sum())}/{agree.size} values share bits 5..23 of a word",
        )
    elif a == b:
        out.update(related=True, evidence="the same stream")
    elif {a, b} == {"torch CPU", "DJL randomUniform"}:
        vals = {o.implementation: o.value for o in outcomes if o.ran}
        if "DJL randomUniform" in vals:
            d = np.asarray(vals["DJL randomUniform"], dtype=np.float32)
            eq = d.view(np.uint32) == real["rand32"][: d.size].view(np.uint32)
            out.update(
                related=bool(eq.all()),
                evidence=f"{int(eq.sum())}/{eq.size} values equal bit for bit",
            )
        else:
            out.update(related=None, evidence="DJL did not run")
    else:
        same_gen = words.get(a) == words.get(b)
        out.update(
            related=same_gen,
            evidence="different generators or seeding"
            if not same_gen
            else "same generator and seeding",
        )
    return out


def figure(comparison: Comparison) -> Any:
    """Bits per float for each stack, and the first k values of every stream."""
    import matplotlib.pyplot as plt

    data = comparison.data
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
    names = list(data["bits_per_float"])
    ax1.barh(names, [data["bits_per_float"][k] for k in names], color="tab:blue")
    ax1.set_xlabel("random bits per float (measured)")
    ax1.invert_yaxis()
    shown = [
        o
        for o in comparison.outcomes
        if o.ran
        and np.ndim(o.value) == 1
        and np.asarray(o.value).size <= 64
        and not o.implementation.startswith(("torch Linear", "Keras"))
    ]
    for i, o in enumerate(shown):
        v = np.asarray(o.value, dtype=np.float64)
        ax2.scatter(
            np.arange(v.size),
            np.full(v.size, i),
            c=v,
            cmap="viridis",
            vmin=0,
            vmax=1,
            s=60,
            marker="s",
        )
    ax2.set_yticks(range(len(shown)), [o.implementation for o in shown])
    ax2.set_xlabel(f"first {data['k']} values (colour = value in [0, 1))")
    ax2.invert_yaxis()
    fig.suptitle(f"seed {comparison.params['seed']}: same seed, different numbers")
    fig.tight_layout()
    return fig


def stream_table(comparison: Comparison) -> list[dict[str, str]]:
    """One row per value: stream, index, value, bit pattern (for the bits view)."""
    rows = []
    for o in comparison.outcomes:
        if not o.ran or o.implementation.startswith(("torch Linear", "Keras")):
            continue
        vals = np.asarray(o.value).ravel()[: comparison.params["k"]]
        for i, (v, b) in enumerate(zip(vals.tolist(), bits_of(vals), strict=True)):
            rows.append({"stream": o.implementation, "i": str(i), "value": repr(v), "bits": b})
    return rows


def bits_view() -> Any:
    """Widget: seed, streams a/b, k; the first k values of both streams in bits, and whether
    the two streams are related (the generic `fpexplore.widgets.explore` shows the table)."""
    import ipywidgets as w
    from IPython.display import display

    seed = w.BoundedIntText(value=42, min=0, max=2**32 - 1, description="seed")
    k = w.IntSlider(value=4, min=1, max=16, description="k")
    a = w.Dropdown(options=STREAMS, value="torch CPU", description="stream a")
    b = w.Dropdown(options=STREAMS, value="numpy RandomState", description="stream b")
    out = w.Output()

    def show(*_: Any) -> None:
        out.clear_output(wait=True)
        with out:
            c = LESSON.run(
                seed=seed.value,
                k=k.value,
                n=max(64, 2 * k.value),
                a=a.value,
                b=b.value,
                tensorflow="TensorFlow" in (a.value, b.value),
                java=bool({"java.util.Random", "DJL randomUniform"} & {a.value, b.value}),
                weights=False,
            )
            for r in stream_table(c):
                if r["stream"] in (a.value, b.value):
                    print(f"{r['stream']:>18} [{r['i']}] {r['bits']}  {r['value']}")
            rel = c.data["relation"]
            print(f"\nrelated: {rel['related']}  ({rel['evidence']})")
            missing = [
                o for o in c.outcomes if not o.ran and o.implementation in (a.value, b.value)
            ]
            for o in missing:
                print(f"{o.implementation}: {o.unavailable}")

    for control in (seed, k, a, b):
        control.observe(show, names="value")
    show()
    box = w.VBox([w.HBox([seed, k]), w.HBox([a, b]), out])
    display(box)
    return box


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
    explanation=EXPLANATION,
    figure=figure,
    notebook="02_rng_seeds.ipynb",
)
