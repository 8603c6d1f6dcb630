"""Same code, different machine: one battery of computations under each dispatch switch.

Each configuration is a fresh process under one switch (`fpexplore.dispatch.switches`) that
takes the path another CPU would take; the same inputs go through numpy, torch and TensorFlow,
each result measured against the exact truth. Results are kept per configuration.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ...dispatch import SWITCHES, switch
from ...dispatch.battery import OP_NOTES, OPS, runs_op, truths
from ...dispatch.compare import Difference, compare
from ...dispatch.fingerprint import PATH_ENV, parse
from ...dispatch.fresh import each, fingerprint
from ...dispatch.record import Fingerprint
from ...errors import WorkerError
from ...memo import Memo
from ...params import Options
from ...probe.cpu import cpu_flags
from ...result import Claim, Comparison, Observation, Outcome
from .._base import Lesson, declare_texts

HERE = "this-machine"
#: every configuration the lesson knows; `configs_here` are those this CPU can take
CONFIGS = (HERE, *(s.name for s in SWITCHES))
LIBRARIES = ("numpy", "torch", "tensorflow", "libtorch", "djl")


@dataclass(frozen=True)
class Failed:
    """A configuration with no fingerprint: why (a path this CPU lacks, a process that died)."""

    why: str


@dataclass(frozen=True)
class DispatchData:
    """One op under two configurations: both fingerprints and what differs."""

    op: str
    a: Fingerprint | Failed  # the first configuration's fingerprint
    b: Fingerprint | Failed  # the second configuration's fingerprint
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


def _take(config: str) -> Fingerprint | Failed:
    """``config``'s fingerprint, or why not: a path this CPU lacks is never started, and a
    fresh process that died (a signal, no result) is named, never raised."""
    if missing := lacking(config):
        return Failed(_lacks(missing))
    try:
        return parse(fingerprint(env_of(config), config, values=True), config)
    except WorkerError as exc:
        return Failed(str(exc).splitlines()[0])


def _lacks(missing: tuple[str, ...]) -> str:
    return (
        f"not started: this CPU has no {', '.join(f.upper() for f in missing)} (starting that "
        "path would die with SIGILL, an instruction the CPU does not have)"
    )


def taken(config: str) -> Fingerprint | Failed:
    """The fingerprint (with values) of ``config``, taken once in a fresh process and kept;
    `Failed` where it could not be taken (`not_taken` lists those)."""
    return _TAKEN.get(_key(config), lambda: _take(config))


def _take_missing(configs: list[str], done: Callable[[], object] | None = None) -> None:
    """Take and keep the fingerprints of ``configs`` not kept yet, in as many fresh processes
    at once as the machine holds (`fpexplore.dispatch.fresh.jobs`)."""
    missing = [c for c in dict.fromkeys(configs) if _key(c) not in _TAKEN]
    for config, fp in zip(missing, each(_take, missing, done), strict=True):
        _TAKEN.get(_key(config), lambda fp=fp: fp)


def take_all(progress: bool = True) -> dict[str, Fingerprint]:
    """The fingerprint of every configuration this CPU can take (those already taken are a
    lookup), with a progress bar while the others are computed, several at once where the
    machine holds them. The others, and why, are in `not_taken`."""
    from tqdm.auto import tqdm

    here = list(configs_here())
    with tqdm(total=len(here), desc="configurations", disable=not progress, leave=False) as bar:
        bar.update(sum(_key(c) in _TAKEN for c in here))
        _take_missing(here, lambda: bar.update(1))
    return {c: fp for c in here if isinstance(fp := taken(c), Fingerprint)}


def not_taken(flags: frozenset[str] | None = None) -> dict[str, str]:
    """The configurations with no fingerprint here, and why: a path this CPU (or one with
    ``flags``) lacks, never started; or a fresh process that died, with its signal."""
    out = {c: _lacks(missing) for c in CONFIGS if (missing := lacking(c, flags))}
    for c in CONFIGS:
        if c not in out and _key(c) in _TAKEN and isinstance(fp := taken(c), Failed):
            out[c] = fp.why
    return out


def contrast() -> str | None:
    """A configuration that changes a path this machine takes by default, to compare it with:
    TensorFlow's oneDNN state flipped (off where this CPU turns it on, on where it is off),
    else ATen's default kernels where torch vectorizes, else numpy without AVX-512. None where
    this machine's fingerprint could not be taken or no switch changes anything here (a
    switch equal to this machine's default would compare it with itself)."""
    here = taken(HERE)
    if isinstance(here, Failed):
        return None
    m, can = here.machine, configs_here()
    picks = []
    if m.tensorflow is not None:
        picks.append("onednn-off" if m.tensorflow.onednn else "onednn-on")
    if m.torch is not None and str(m.torch.capability).upper() != "DEFAULT":
        picks.append("aten-default")
    picks.append("numpy-no-avx512")
    return next((c for c in picks if c in can), None)


def _reaches(config: str) -> set[str]:
    return set() if config == HERE else set(switch(config).reaches)


def _paths(fp: Fingerprint) -> str:
    m = fp.machine
    parts = []
    if m.torch is not None:
        parts.append(f"ATen {m.torch.capability}, {m.torch.threads} thread(s)")
    if m.tensorflow is not None:
        parts.append(str(m.tensorflow.onednn_reason))
    simd = m.numpy.simd_targets if m.numpy is not None else ()
    parts.append("numpy " + (", ".join(simd) or "baseline"))
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


def _not_run(
    op: str, a: str, b: str, fa: Fingerprint | Failed, fb: Fingerprint | Failed
) -> Comparison:
    """The comparison where ``a`` or ``b`` could not be taken: a row per configuration that
    names why (the signal, or the instructions this CPU lacks), every claim not checked."""
    pairs = ((a, fa), (b, fb))
    why = "; ".join(f"{c}: {fp.why}" for c, fp in pairs if isinstance(fp, Failed))
    outcomes = tuple(
        Outcome.missing(
            f"{op} · {c}",
            "fingerprint",
            f"{fp.why}. Fix: pick a configuration this CPU has ({', '.join(configs_here())})",
            settings={"config": c},
        )
        if isinstance(fp, Failed)
        else Outcome.missing(f"{op} · {c}", "fingerprint", f"not compared: {why}")
        for c, fp in pairs
    )
    reason = f"{why}. Fix: pick another configuration"
    return Comparison(
        truth=truths().get(op),
        outcomes=outcomes,
        claims={k: spec.not_checked(reason) for k, spec in CLAIMS.items()},
        data=DispatchData(op, fa, fb, None, OP_NOTES[op]),
        explanation=f"{op}: {OP_NOTES[op]}.\n" + EXPLANATION,
    )


def _outcomes(op: str, pairs: tuple[tuple[str, Fingerprint], ...]) -> tuple[Outcome, ...]:
    """Each library's result of ``op`` under each configuration, against the exact truth; a
    library missing there (not an op it lacks) is a row that says why."""
    truth = truths().get(op)
    outcomes: list[Outcome] = []
    for config, fp in pairs:
        for lib in LIBRARIES:
            key = f"{lib}:cpu:{op}"
            name = f"{lib} {op} · {config}"
            if key not in fp.ops:
                if lib in fp.unavailable and runs_op(lib, op):
                    why = fp.unavailable[lib]
                    outcomes.append(Outcome.missing(name, lib, why, settings={"config": config}))
                continue
            entry = fp.ops[key]
            outcomes.append(
                Outcome.measured(
                    name,
                    lib,
                    entry.array(),
                    truth,
                    version=fp.machine.version_of(lib),
                    settings={"config": config, **env_of(config)},
                    note=f"bits {entry.digest}",
                )
            )
    return tuple(outcomes)


def _claims(a: str, b: str, fa: Fingerprint, diff: Difference) -> tuple[dict[str, Claim], str]:
    """The claims, and why the untouched-libraries claim could not be checked ('' if it was)."""
    untouched_keys = [
        k
        for k, o in fa.ops.items()
        if o.library in LIBRARIES
        and o.library not in _reaches(a) | _reaches(b)
        and o.device == "cpu"
    ]
    ran = {fa.ops[k].library for k in untouched_keys}
    untouched = [lib for lib in LIBRARIES if lib in ran]  # those that ran, in their order
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
    return decided, why


def _observations(
    op: str, a: str, b: str, fa: Fingerprint, fb: Fingerprint, diff: Difference
) -> dict[str, Observation]:
    per_op = [r for r in diff.rows if r.op == op]
    obs = OBSERVATIONS
    observations = {
        "results_differ": obs["results_differ"].observe(
            len(diff.rows),
            measured=f" ({len(diff.rows) + len(diff.same)} results, {a!r} vs {b!r})"
            + (f": {', '.join(diff.differs)}" if diff.rows else ""),
        ),
        "op_differs": obs["op_differs"].observe(
            len(per_op),
            measured=f" ({op})"
            + "".join(
                f"; {r.key.split(':')[0]} {r.ulp_a:.3g} vs {r.ulp_b:.3g} ULP from the truth"
                for r in per_op
                if r.ulp_a is not None and r.ulp_b is not None
            ),
        ),
        "paths": obs["paths"].observe({a: _paths(fa), b: _paths(fb)}, measured=f": {a!r} vs {b!r}"),
    }
    if diff.causes:
        top = diff.causes[0]
        observations["top_cause"] = obs["top_cause"].observe(
            top.name, measured=f": {top.name}: {top.detail}"
        )
    return observations


def compute(op: str, a: str, b: str) -> Comparison:
    _take_missing([a, b])  # both at once where neither is kept yet
    fa, fb = taken(a), taken(b)
    if isinstance(fa, Failed) or isinstance(fb, Failed):
        return _not_run(op, a, b, fa, fb)
    diff = compare(fa, fb)
    decided, why = _claims(a, b, fa, diff)
    return Comparison(
        truth=truths().get(op),
        outcomes=_outcomes(op, ((a, fa), (b, fb))),
        claims=decided,
        data=DispatchData(op, fa, fb, diff, OP_NOTES[op]),
        explanation=f"{op}: {OP_NOTES[op]}.\n" + EXPLANATION,
        observations=_observations(op, a, b, fa, fb, diff),
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
    fingerprints: dict[str, Fingerprint],
    skipped: dict[str, str] | None = None,
    only_differing: bool = False,
) -> str:
    """Every CPU result (rows) under every configuration (columns, one character each: 1–9,
    then a, b, …): letters group the configurations that gave the same bits (``A`` = the
    first configuration's), and each row ends with the range of its errors against the exact
    truth; then each configuration of ``skipped`` (`not_taken`) with why. Narrow enough for a
    notebook at 1000 px (`fpexplore.wrapped`). ``only_differing``: the rows whose bits differ
    somewhere, then the others named in one line."""
    from ...dispatch.classroom import groups
    from ...result.text_table import wrapped

    names, fps = list(fingerprints), list(fingerprints.values())
    rows = {k: v for k, v in groups(fps).items() if ":cpu:" in k}
    width = max(len(k) for k in rows) if rows else 6
    marks = "123456789abcdefghijklmnopqrstuvwxyz"[: len(names)]
    lines = [
        "configurations: " + ", ".join(f"{m}={n}" for m, n in zip(marks, names, strict=False)),
        f"{'result':{width}s} {marks}  max ULP error (range)",
    ]
    same = [k for k, letters in rows.items() if set(letters) <= {"A", "·"}]
    for key, letters in rows.items():
        if only_differing and key in same:
            continue
        ulps = [u for fp in fps if key in fp.ops and (u := fp.ops[key].max_ulp) is not None]
        lo, hi = (f"{min(ulps):.3g}", f"{max(ulps):.3g}") if ulps else ("", "")
        span = "no truth (random)" if not ulps else lo if lo == hi else f"{lo}–{hi}"
        lines.append(f"{key:{width}s} {''.join(letters)}  {span}")
    if only_differing and same:
        lines.append(f"the same bits under every configuration: {', '.join(same)}")
    lines += [f"not run: {c}: {why}" for c, why in (skipped or {}).items()]
    return wrapped("\n".join(lines))
