"""The RNG lesson's device streams: torch CUDA (live or recorded) against the Philox emulator,
and DJL's libtorch stream against torch's and the independent MT19937."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...memo import Memo
from ...result import Claim, Outcome
from ...result.spec import declare_texts
from ...rng import TorchCPURandom
from ...rng.philox import torch_cuda_rand
from .._base import missing_part

_PHILOX_NOTE = "Philox4x32-10, one curand_uniform4 block per thread, (0, 1] -> [0, 1)"


def u32(values: Any) -> np.ndarray:
    """float32 values' bit patterns."""
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def _emulator(seed: int, k: int, n: int, sm_count: int, where: str) -> Outcome:
    vals = torch_cuda_rand(seed, n, sm_count)
    return Outcome(
        "torch CUDA emulator",
        "fpexplore",
        kind="emulator",
        value=vals[:k],
        note=f"independent Philox4x32-10 + torch's CUDA launch layout for {sm_count} SMs ({where})",
    )


#: torch CUDA's stream (live, or the recorded GPU run: the "cuda stream") against the emulator;
#: the recording machine's CPU stream, stated only where the record is read
CUDA_CLAIMS = declare_texts(
    {
        "cuda_philox_reproduced": "torch.rand(n, device='cuda') is reproduced bit for bit by "
        "fpexplore's Philox4x32-10",
        "record_cpu_matches_emulator": "torch CPU rand/randn recorded on the GPU machine equal "
        "fpexplore's MT19937 run here, bit for bit (the recording machine's x86-64 CPU took "
        "ATen's AVX2/AVX-512 path, whatever path this CPU takes)",
    },
    ("cuda stream",),
    applies="CUDA devices (live or recorded)",
    test="tests/test_rng_seeds.py",
)
CUDA_CLAIMS["record_cpu_matches_emulator"] = replace(
    CUDA_CLAIMS["record_cpu_matches_emulator"], needs=(), occasional=True
)


def cuda(torch: Any, seed: int, n: int, k: int) -> tuple[list[Outcome], dict[str, Claim], str]:
    """torch CUDA live when a GPU is present, else the recorded GPU run (its banner), else a
    missing outcome with the fix; the Philox emulator beside it, and the claims they support.
    Returns (outcomes, claims, source line)."""
    from ... import records

    if torch is not None and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        torch.manual_seed(seed)
        vals = torch.rand(n, device="cuda").cpu().numpy()
        emu = torch_cuda_rand(seed, n, props.multi_processor_count)
        where = f"{props.name}, live, torch {torch.__version__}"
        real = Outcome(
            "torch CUDA",
            "torch",
            value=vals[:k],
            version=torch.__version__,
            device=props.name,
            note=_PHILOX_NOTE + ", live",
        )
        claims = {
            "cuda_philox_reproduced": CUDA_CLAIMS["cuda_philox_reproduced"].claim(
                bool((u32(vals) == u32(emu)).all()), f" (n = {n}, seed {seed}, {props.name})"
            )
        }
        return [real, _emulator(seed, k, n, props.multi_processor_count, where)], claims, where

    if not records.available():
        reason = (
            "no CUDA device here and no recorded GPU run in data/gpu; record one with: "
            f"{records.RECORD_FIX}"
        )
        return [Outcome.missing("torch CUDA", "torch", reason, kind="recorded")], {}, reason
    rec = records.load()
    exp = rec.experiments["rng"]
    sm = int(rec.provenance.get("sm_count") or 132)
    claims = _record_cpu_claim(rec, exp)
    if str(seed) not in exp["cuda_rand_bits"]:
        seeds = ", ".join(map(str, exp["seeds"]))
        missing = Outcome.missing(
            "torch CUDA",
            "torch",
            f"the recorded GPU run ({rec.card}, {rec.date}) has seeds {seeds}, not {seed}; "
            f"pick one of those or record this seed with: {records.RECORD_FIX}",
            kind="recorded",
        )
        return [missing, _emulator(seed, k, k, sm, f"{rec.card}, not recorded")], claims, ""
    bits = np.asarray(exp["cuda_rand_bits"][str(seed)], dtype=np.uint32)
    emu = torch_cuda_rand(seed, int(exp["n"]), sm)
    recorded = Outcome(
        "torch CUDA",
        "torch",
        kind="recorded",
        value=records.from_bits32(bits)[:k],
        version=str(rec.provenance["torch"]),
        device=rec.card,
        note=f"{_PHILOX_NOTE}; {rec.banner()}",
    )
    claims["cuda_philox_reproduced"] = CUDA_CLAIMS["cuda_philox_reproduced"].claim(
        bool((bits == u32(emu)).all()),
        f" (recorded: n = {exp['n']}, seed {seed}, {rec.card}, {rec.date})",
    )
    return [recorded, _emulator(seed, k, int(exp["n"]), sm, rec.card)], claims, rec.banner()


#: the recorded CPU streams' check, per record: it does not depend on the seed asked for
_RECORD_CHECKS = Memo(keep=4)


def _record_cpu_claim(rec: Any, exp: dict[str, Any]) -> dict[str, Claim]:
    """The recording machine's CPU stream against this machine's MT19937 emulator (checked
    once per record and kept: every seed's run states the same claim)."""

    def check() -> dict[str, Claim]:
        n = int(exp["n"])
        same = all(
            (
                np.asarray(exp["cpu_rand_bits"][str(s)], np.uint32)
                == u32(TorchCPURandom(s).rand(n))
            ).all()
            and (
                np.asarray(exp["cpu_randn_bits"][str(s)], np.uint32)
                == u32(TorchCPURandom(s, path="avx2").randn(n))
            ).all()
            for s in exp["seeds"]
        )
        seeds = ", ".join(map(str, exp["seeds"]))
        said = f" ({rec.card}, torch {rec.provenance['torch']}, seeds {seeds})"
        return {key: CUDA_CLAIMS[key].claim(bool(same), said)}

    key = "record_cpu_matches_emulator"
    place = (str(rec.path), str(rec.provenance.get("date")), str(exp["n"]), str(exp["seeds"]))
    return dict(_RECORD_CHECKS.get(place, check))


#: DJL's and torch's streams and the emulator's check, by (seed, n): a JVM round trip and
#: four draws of n values, kept so that changing k or another stack reruns none of it
_DJL_STREAMS = Memo(keep=8)


def _djl_streams(seed: int, n: int) -> tuple[dict[str, Any], bool]:
    from ... import backends

    s = backends.load("djl").seed_streams(seed, n)
    emulated = TorchCPURandom(seed).rand(n)
    return s, bool((u32(s["djl_uniform"]) == u32(emulated)).all())


DJL_CLAIMS = declare_texts(
    {
        "djl_matches_torch_cpu": (
            "measured: DJL randomUniform equals torch.manual_seed(seed) + "
            "torch.rand(n) bit for bit",
            ": {djl} {verb} torch.manual_seed({seed}) + "
            "torch.rand({n}) (torch {torch}): {same_u}/{n} values bit-identical; randomNormal and "
            "torch.randn: {same_n}/{n} bit-identical",
        ),
        "djl_is_mt19937": "DJL's uniform stream is fpexplore's independent MT19937 with "
        "torch's 24-bit mapping",
    },
    ("djl", "torch"),
    test="tests/test_rng_seeds.py",
)


def djl(
    seed: int, n: int, k: int
) -> tuple[list[Outcome], dict[str, Claim], bool | None, tuple[int, int] | None]:
    """DJL ``randomUniform`` after ``Engine.setRandomSeed(seed)``, measured against
    ``torch.manual_seed(seed); torch.rand(n)`` here and against the MT19937 emulator; then
    whether the two streams are equal and (values bit-identical, values) (None: DJL did not
    run)."""
    from ...errors import BackendUnavailable, WorkerError

    reason = missing_part(("djl", "torch"))
    if seed >= 2**31:
        reason = f"DJL's Engine.setRandomSeed takes a Java int; seed {seed} is not below 2**31"
    if reason is None:
        try:
            s, is_mt19937 = _DJL_STREAMS.get((seed, n), lambda: _djl_streams(seed, n))
        except (BackendUnavailable, WorkerError) as exc:
            reason = str(exc)
    if reason is not None:
        claims = {k: spec.not_checked(reason) for k, spec in DJL_CLAIMS.items()}
        return [Outcome.missing("DJL randomUniform", "djl", reason)], claims, None, None
    out = Outcome(
        "DJL randomUniform",
        "djl",
        value=s["djl_uniform"][:k],
        version=s["djl"],
        note="Engine.setRandomSeed(seed); NDManager.randomUniform (PyTorch engine)",
    )
    same_u = int((u32(s["djl_uniform"]) == u32(s["torch_uniform"])).sum())
    same_n = int((u32(s["djl_normal"]) == u32(s["torch_normal"])).sum())
    verb = "equals" if s["uniform_equal"] else "differs from"
    claims = {
        "djl_matches_torch_cpu": DJL_CLAIMS["djl_matches_torch_cpu"].claim(
            bool(s["uniform_equal"]),
            djl=s["djl"],
            verb=verb,
            seed=seed,
            n=n,
            torch=s["torch_version"],
            same_u=same_u,
            same_n=same_n,
        ),
        "djl_is_mt19937": DJL_CLAIMS["djl_is_mt19937"].claim(is_mt19937),
    }
    return [out], claims, bool(s["uniform_equal"]), (same_u, n)
