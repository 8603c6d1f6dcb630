"""Same code, different machine: one battery of computations under each dispatch switch.

Each configuration is a fresh process under one switch (`fpexplore.dispatch.switches`) that
takes the path another CPU would take; the same inputs go through numpy, torch and TensorFlow,
each result measured against the exact truth. Results are kept per configuration.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...dispatch import SWITCHES, switch
from ...dispatch.battery import OP_NOTES, OPS, truths
from ...dispatch.compare import Difference, compare
from ...dispatch.fingerprint import PATH_ENV
from ...dispatch.fresh import each, fingerprint
from ...errors import WorkerError
from ...memo import Memo
from ...params import Options
from ...probe.cpu import cpu_flags
from ...result import Comparison, Outcome
from .._base import Lesson, declare_texts

HERE = "this-machine"
#: every configuration the lesson knows; `configs_here` are those this CPU can take
CONFIGS = (HERE, *(s.name for s in SWITCHES))
LIBRARIES = ("numpy", "torch", "tensorflow", "libtorch", "djl")


@dataclass(frozen=True)
class DispatchData:
    """One op under two configurations: both fingerprints and what differs."""

    op: str
    a: dict[str, Any]  # the first configuration's fingerprint
    b: dict[str, Any]  # the second configuration's fingerprint
    diff: Difference | None  # None where a configuration could not be taken (`not_taken`)
    note: str  # what the op is (`OP_NOTES`)


EXPLANATION = """\
Each configuration is the same Python, the same library versions and the same input bits; only
the path each library chose at start-up differs. What a vector path changes:
- lane count: a sum over 8 float lanes (AVX2) and one over 16 (AVX-512) add in other orders;
- FMA: a*b + c rounded once (fused) or twice, as the compiler of each kernel decided;
- polynomial approximations: exp, log, tanh are polynomials or tables per SIMD path (oneDNN's,
  MKL's VML, numpy's, ATen's Sleef or libm), each within a few ULP, rarely the same bits;
- blocking: a matrix product or a convolution split into tiles sums each output in another
  order per kernel (MKL, OpenBLAS, oneDNN pick by CPU);
- threads: a reduction long enough to be split adds one partial sum per thread.
TensorFlow turns oneDNN on by default only on CPUs with AVX512_VNNI, AVX512_BF16, AVX_VNNI or
AMX; ATen takes AVX-512, AVX2 or its default kernels (the path of CPUs without AVX2; ARM builds
have their own); numpy dispatches its loops by the CPU's SIMD targets.
"""

#: fingerprints by (configuration, the path-picking environment of this process)
_TAKEN = Memo(keep=len(CONFIGS) * 2)


def lacking(config: str, flags: frozenset[str] | None = None) -> tuple[str, ...]:
    """The CPU flags ``config``'s path needs that this CPU (or one with ``flags``) lacks:
    where any is lacking, the configuration is never started (it would die with SIGILL)."""
    if config == HERE:
        return ()
    flags = cpu_flags() if flags is None else flags
    return tuple(f for f in switch(config).needs if f not in flags)


def configs_here(flags: frozenset[str] | None = None) -> tuple[str, ...]:
    """The configurations this CPU (or one with ``flags``) can take."""
    return tuple(c for c in CONFIGS if not lacking(c, flags))


def env_of(config: str) -> dict[str, str]:
    """The environment a configuration adds to this process's."""
    return {} if config == HERE else dict(switch(config).env)


def _key(config: str) -> tuple[str, tuple[tuple[str, str | None], ...]]:
    return config, tuple((k, os.environ.get(k)) for k in PATH_ENV)


def _take(config: str) -> dict[str, Any]:
    """``config``'s fingerprint, or ``{"failed": why}``: a path this CPU lacks is never
    started, and a fresh process that died (a signal, no result) is named, never raised."""
    if missing := lacking(config):
        return {"failed": _lacks(missing)}
    try:
        return fingerprint(env_of(config), config, values=True)
    except WorkerError as exc:
        return {"failed": str(exc).splitlines()[0]}


def _lacks(missing: tuple[str, ...]) -> str:
    return (
        f"not started: this CPU has no {', '.join(f.upper() for f in missing)} (starting that "
        "path would die with SIGILL, an instruction the CPU does not have)"
    )


def taken(config: str) -> dict[str, Any]:
    """The fingerprint (with values) of ``config``, taken once in a fresh process and kept;
    ``{"failed": why}`` where it could not be taken (`not_taken` lists those)."""
    return _TAKEN.get(_key(config), lambda: _take(config))


def _take_missing(configs: list[str], done: Callable[[], object] | None = None) -> None:
    """Take and keep the fingerprints of ``configs`` not kept yet, in as many fresh processes
    at once as the machine holds (`fpexplore.dispatch.fresh.jobs`)."""
    missing = [c for c in dict.fromkeys(configs) if _key(c) not in _TAKEN]
    for config, fp in zip(missing, each(_take, missing, done), strict=True):
        _TAKEN.get(_key(config), lambda fp=fp: fp)


def take_all(progress: bool = True) -> dict[str, dict[str, Any]]:
    """The fingerprint of every configuration this CPU can take (those already taken are a
    lookup), with a progress bar while the others are computed, several at once where the
    machine holds them. The others, and why, are in `not_taken`."""
    from tqdm.auto import tqdm

    here = list(configs_here())
    with tqdm(total=len(here), desc="configurations", disable=not progress, leave=False) as bar:
        bar.update(sum(_key(c) in _TAKEN for c in here))
        _take_missing(here, lambda: bar.update(1))
    return {c: fp for c in here if "failed" not in (fp := taken(c))}


def not_taken(flags: frozenset[str] | None = None) -> dict[str, str]:
    """The configurations with no fingerprint here, and why: a path this CPU (or one with
    ``flags``) lacks, never started; or a fresh process that died, with its signal."""
    out = {c: _lacks(missing) for c in CONFIGS if (missing := lacking(c, flags))}
    for c in CONFIGS:
        if c not in out and _key(c) in _TAKEN and "failed" in (fp := taken(c)):
            out[c] = fp["failed"]
    return out


def contrast() -> str | None:
    """A configuration that changes a path this machine takes by default, to compare it with:
    TensorFlow's oneDNN state flipped (off where this CPU turns it on, on where it is off),
    else ATen's default kernels where torch vectorizes, else numpy without AVX-512. None where
    this machine's fingerprint could not be taken or no switch changes anything here (a
    switch equal to this machine's default would compare it with itself)."""
    here = taken(HERE)
    if "failed" in here:
        return None
    m, can = here["machine"], configs_here()
    picks = []
    if "tensorflow" in m:
        picks.append("onednn-off" if m["tensorflow"]["onednn"] else "onednn-on")
    if "torch" in m and str(m["torch"]["capability"]).upper() != "DEFAULT":
        picks.append("aten-default")
    picks.append("numpy-no-avx512")
    return next((c for c in picks if c in can), None)


def _values(op: dict[str, Any]) -> np.ndarray:
    flat = np.array([float.fromhex(v) for v in op["values"]], dtype=np.float32)
    return flat.reshape(op["shape"])


def _reaches(config: str) -> set[str]:
    return set() if config == HERE else set(switch(config).reaches)


def _paths(fp: dict[str, Any]) -> str:
    m = fp["machine"]
    parts = []
    if "torch" in m:
        parts.append(f"ATen {m['torch']['capability']}, {m['torch']['threads']} thread(s)")
    if "tensorflow" in m:
        parts.append(m["tensorflow"]["onednn_reason"])
    parts.append("numpy " + (", ".join(m["numpy"]["simd_targets"]) or "baseline"))
    return "; ".join(parts)


_TEST = "tests/test_dispatch.py"
#: The claims, as stated before measuring: the one about untouched libraries needs "an untouched
#: library" (one that neither configuration's switch reaches, and that ran).
CLAIMS = declare_texts(
    {
        "untouched_libraries_identical": "results of libraries the switches do not reach keep "
        "their bits",
        "differences_explained": "each result that differs between the two configurations is "
        "explained by a difference compare() names in the two machines' descriptions",
        "self_compare_empty": "comparing a configuration's fingerprint with itself reports no "
        "difference",
    },
    by_key={"untouched_libraries_identical": ("an untouched library",)},
    test=_TEST,
)
C = CLAIMS
OBSERVATIONS = declare_texts(
    {
        "results_differ": "results whose bits differ between the two configurations",
        "op_differs": "the op's libraries whose bits differ between the two configurations",
        "paths": "the paths each configuration took",
        "top_cause": "the most likely cause compare() names",
    },
    test=_TEST,
)


def _not_run(op: str, a: str, b: str, fa: dict[str, Any], fb: dict[str, Any]) -> Comparison:
    """The comparison where ``a`` or ``b`` could not be taken: a row per configuration that
    names why (the signal, or the instructions this CPU lacks), every claim not checked."""
    why = "; ".join(f"{c}: {fp['failed']}" for c, fp in ((a, fa), (b, fb)) if "failed" in fp)
    outcomes = tuple(
        Outcome.missing(
            f"{op} · {c}",
            "fingerprint",
            f"{fp['failed']}. Fix: pick a configuration this CPU has ({', '.join(configs_here())})",
            settings={"config": c},
        )
        if "failed" in fp
        else Outcome.missing(f"{op} · {c}", "fingerprint", f"not compared: {why}")
        for c, fp in ((a, fa), (b, fb))
    )
    reason = f"{why}. Fix: pick another configuration"
    return Comparison(
        truth=truths().get(op),
        outcomes=outcomes,
        claims={k: spec.not_checked(reason) for k, spec in CLAIMS.items()},
        data=DispatchData(op, fa, fb, None, OP_NOTES[op]),
        explanation=f"{op}: {OP_NOTES[op]}.\n" + EXPLANATION,
    )


def compute(op: str, a: str, b: str) -> Comparison:
    _take_missing([a, b])  # both at once where neither is kept yet
    fa, fb = taken(a), taken(b)
    if "failed" in fa or "failed" in fb:
        return _not_run(op, a, b, fa, fb)
    truth = truths().get(op)
    outcomes: list[Outcome] = []
    for config, fp in ((a, fa), (b, fb)):
        for lib in LIBRARIES:
            key = f"{lib}:cpu:{op}"
            name = f"{lib} {op} · {config}"
            if key not in fp["ops"]:
                if lib in fp["unavailable"]:  # a library missing here, not an op it lacks
                    why = fp["unavailable"][lib]
                    outcomes.append(Outcome.missing(name, lib, why, settings={"config": config}))
                continue
            entry = fp["ops"][key]
            outcomes.append(
                Outcome.measured(
                    name,
                    lib,
                    _values(entry),
                    truth,
                    version=fp["machine"].get(lib, {}).get("version", ""),
                    settings={"config": config, **env_of(config)},
                    note=f"bits {entry['digest']}",
                )
            )
    diff = compare(fa, fb)
    reached = _reaches(a) | _reaches(b)
    untouched = [lib for lib in LIBRARIES if lib not in reached]
    untouched_keys = [
        k for k, o in fa["ops"].items() if o["library"] in untouched and o["device"] == "cpu"
    ]
    same_untouched = all(k not in diff.differs for k in untouched_keys)
    decided = {
        "untouched_libraries_identical": C["untouched_libraries_identical"].claim(
            same_untouched,
            f" ({', '.join(untouched)}: {len(untouched_keys)} results, {a!r} vs {b!r})",
        ),
        "differences_explained": C["differences_explained"].claim(
            not diff.unexplained, f" ({len(diff.rows)} differ, {a!r} vs {b!r})"
        ),
        "self_compare_empty": C["self_compare_empty"].claim(not compare(fa, fa).rows, f" ({a!r})"),
    }
    why = (
        ""
        if untouched and untouched_keys
        else f"{a!r} and {b!r} between them reach every library that ran. Fix: choose a pair "
        "whose switches leave some library alone"
    )
    per_op = [r for r in diff.rows if r["op"] == op]
    observations = {
        "results_differ": OBSERVATIONS["results_differ"].observe(
            len(diff.rows),
            measured=f" ({len(diff.rows) + len(diff.same)} results, {a!r} vs {b!r})"
            + (f": {', '.join(diff.differs)}" if diff.rows else ""),
        ),
        "op_differs": OBSERVATIONS["op_differs"].observe(
            len(per_op),
            measured=f" ({op})"
            + "".join(
                f"; {r['key'].split(':')[0]} {r['ulp_a']:.3g} vs {r['ulp_b']:.3g} ULP from the "
                "truth"
                for r in per_op
                if r["ulp_a"] is not None and r["ulp_b"] is not None
            ),
        ),
        "paths": OBSERVATIONS["paths"].observe(
            {a: _paths(fa), b: _paths(fb)}, measured=f": {a!r} vs {b!r}"
        ),
    }
    if diff.causes:
        top = diff.causes[0]
        observations["top_cause"] = OBSERVATIONS["top_cause"].observe(
            top.name, measured=f": {top.name}: {top.detail}"
        )
    data = DispatchData(op, fa, fb, diff, OP_NOTES[op])
    text = f"{op}: {OP_NOTES[op]}.\n" + EXPLANATION
    return Comparison(
        truth=truth,
        outcomes=tuple(outcomes),
        claims=decided,
        data=data,
        explanation=text,
        observations=observations,
        missing={"an untouched library": why},
    )


LESSON = Lesson(
    name="cpu_dispatch",
    title="Same code, different machine",
    summary="one battery under each CPU dispatch switch: which bits change, and why",
    params=(
        Options("op", "softmax", "the computation to show", choices=OPS),
        Options("a", HERE, "the first configuration", choices=configs_here()),
        Options("b", "onednn-off", "the second configuration", choices=configs_here()),
    ),
    compute=compute,
    claims=CLAIMS,
    observations=OBSERVATIONS,
    data=DispatchData,
    explanation=EXPLANATION,
    quick={"b": HERE},
)


def config_table(
    fingerprints: dict[str, dict[str, Any]], skipped: dict[str, str] | None = None
) -> str:
    """Every CPU result (rows) under every configuration (columns, one character each: 1–9,
    then a, b, …): letters group the configurations that gave the same bits (``A`` = the
    first configuration's), and each row ends with the range of its errors against the exact
    truth; then each configuration of ``skipped`` (`not_taken`) with why. Narrow enough for a
    notebook at 1000 px (`fpexplore.wrapped`)."""
    from ...dispatch.classroom import groups
    from ...result.text_table import wrapped

    names = list(fingerprints)
    fps = [fingerprints[n] for n in names]
    rows = {k: v for k, v in groups(fps).items() if ":cpu:" in k}
    width = max(len(k) for k in rows) if rows else 6
    marks = "123456789abcdefghijklmnopqrstuvwxyz"[: len(names)]
    lines = [
        "configurations: " + ", ".join(f"{m}={n}" for m, n in zip(marks, names, strict=False)),
        f"{'result':{width}s} {marks}  max ULP error (range)",
    ]
    for key, letters in rows.items():
        ulps = [
            fp["ops"][key]["max_ulp"]
            for fp in fps
            if key in fp["ops"] and fp["ops"][key]["max_ulp"] is not None
        ]
        lo, hi = (f"{min(ulps):.3g}", f"{max(ulps):.3g}") if ulps else ("", "")
        span = "no truth (random)" if not ulps else lo if lo == hi else f"{lo}–{hi}"
        lines.append(f"{key:{width}s} {''.join(letters)}  {span}")
    lines += [f"not run: {c}: {why}" for c, why in (skipped or {}).items()]
    return wrapped("\n".join(lines))
