"""The same float32 ops on the CPU and on an accelerator (CUDA, MPS, XPU, DirectML...)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import backends
from ...backends.torch_device import torch_module
from ...figures import WIDTH_IN
from ...params import Text
from ...result import Claim, Comparison, Observation, Outcome
from .._base import Lesson, declare_texts, missing_part
from .._gpu import present
from .._gpu.recording import GpuExperiment, GpuSession
from .._gpu.source import record_param, resolve
from . import articles, cpu_modes, edges
from . import experiment as acc
from .data import AcceleratorData, Settings, Sums
from .experiment import Side

DEVICE_HELP = (
    "'auto' (live on CUDA when torch sees a GPU, else the recorded GPU run beside "
    "a live CPU run), 'recorded', or any torch device string: cuda, cuda:1, mps, "
    "xpu, privateuseone:0 (DirectML), cpu"
)

EXPLANATION = """\
"My model gives different numbers on the GPU (or DirectML, or MPS) than on the CPU" is one of
the most common complaints. The same float32 ops are run here on the CPU and on the
accelerator, on the very same input bits, and each result is measured against the exact
answer. Sums reduce in a different order on each device; a chain of small matmuls compounds
each step's rounding, so two devices that start a few ULPs apart drift further apart;
convolutions may use TF32 tensor cores on NVIDIA GPUs by default (see the tf32 lesson); relu
only copies or zeroes numbers, so it is exact everywhere and serves as the control. Neither
side is "right": both are within rounding of the truth, in different directions.
"""

#: The claims, as stated before measuring: comparing the CPU with the accelerator needs the
#: live CPU side (torch) and an "accelerator" run in both modes (live, or the record); relu on
#: normal inputs needs any "device runs"; the articles' and the relu edges' are theirs.
CLAIMS = {
    **declare_texts(
        {
            "relu_identical": "on normal inputs (which never hold −0.0 or NaN) relu gives "
            "exactly max(x, 0), bit for bit, on every device",
            "tenthousand_differs": "the CPU and the accelerator give different float32 sums of "
            "10000 x float32(0.0001)",
            "chain_drifts": "after the chain of matmuls every device has drifted from the exact "
            "product, and the CPU and the accelerator disagree",
            "conv_tf32_default": "the accelerator's default convolution differs from its "
            "convolution with TF32 off",
            "conv_tf32_error": "the accelerator's default convolution is over 100 times further "
            "from the exact result than its convolution with TF32 off",
            "conv_fp32_differs_cpu": "with TF32 off the accelerator's convolution still differs "
            "from the CPU's in sampled outputs (another algorithm), its error within 10 times the "
            "CPU's",
        },
        ("torch", "accelerator"),
        {
            "relu_identical": ("device runs",),
            "conv_tf32_default": ("accelerator",),
            "conv_tf32_error": ("accelerator",),
            "conv_fp32_differs_cpu": ("accelerator",),
        },
        applies="a CPU beside an accelerator (live or recorded)",
        test="tests/test_gpu_lessons.py",
    ),
    **articles.CLAIMS,
    **edges.CLAIMS,
    **cpu_modes.CLAIMS,
    **cpu_modes.CUDA_CLAIMS,
}
C = CLAIMS
SEEN = declare_texts(
    {
        "sum_differs": "the CPU and the accelerator give different float32 sums",
        "cpu_matches_recording_cpu": "this machine's CPU gives the same bits as the recording "
        "machine's CPU for every op",
    },
    by_key={"sum_differs": ("torch", "accelerator")},
)
OBSERVATIONS = {
    **SEEN,
    **edges.OBSERVATIONS,
    **present.OBSERVATIONS,
    **cpu_modes.OBSERVATIONS,
}
NO_ACCELERATOR = (
    "no accelerator ran. Fix: pass an accelerator's device string, or device='recorded' for "
    "the recorded GPU run"
)
OPS = ("sum_uniform", "sum_tenthousand", "chain", "conv", "relu")


def _op_label(op: str, s: Settings) -> str:
    return {
        "sum_uniform": f"sum of {s.sum_n} uniform[0,1) floats",
        "sum_tenthousand": "sum of 10000 x float32(0.0001)",
        "chain": f"{s.chain_steps} chained {s.chain_dim}x{s.chain_dim} matmuls",
        "conv": f"conv2d {'x'.join(map(str, s.conv))}, 3x3, sampled outputs",
        "relu": f"relu of {s.relu_n} normal floats",
    }[op]


def _sides(src: Any, inp: dict[str, Any], tr: dict[str, Any]) -> tuple[list[Side], dict[str, Any]]:
    """Every side and a description of the run; without torch there is no live CPU side and
    ``info["cpu_missing"]`` says why."""
    missing = backends.missing("torch")
    info: dict[str, Any] = {"cpu_missing": missing}
    if missing is not None:
        if src.live or src.record is None:  # resolve() only goes live with torch
            return [], {**info, "banner": missing, "ran_on": []}
        rec = src.record
        info.update(
            banner=f"CPU: not run here ({missing}). Accelerator: {rec.banner()}",
            ran_on=[f"{rec.card} (recorded {rec.date})"],
        )
        return _recorded_sides(rec, info), info
    torch = backends.load("torch")

    def live(dev: Any, mode: str, label: str) -> Side:
        js = acc.side_to_json(acc.run_side(dev, inp, mode), tr)
        return Side.from_json(js, label=label, kind="framework", version=torch.__version__)

    n = torch.get_num_threads()
    cpu = live(torch.device("cpu"), "torch default", f"cpu (live, this machine, {n} threads)")
    if not src.live:
        rec = src.record
        info.update(
            banner=f"CPU: live on this machine (torch {torch.__version__}). Accelerator: "
            f"{rec.banner()}",
            ran_on=["cpu (live)", f"{rec.card} (recorded {rec.date})"],
        )
        return [cpu, *_recorded_sides(rec, info)], info
    dev = src.device
    if dev.type == "cpu":
        info.update(
            banner=f"LIVE run on the CPU only (torch {torch.__version__}): pass an "
            "accelerator's device string to compare one",
            ran_on=["cpu (live)"],
        )
        return [cpu], info
    sides = [cpu] + [live(dev, mode, f"{src.label} (live), {mode}") for mode in acc.MODES]
    info.update(
        banner=f"LIVE run on the CPU and on {src.label} ({dev}), torch {torch.__version__}",
        ran_on=["cpu (live)", f"{src.label} (live)"],
    )
    return sides, info


def _recorded_sides(rec: Any, info: dict[str, Any]) -> list[Side]:
    """The record's sides: its accelerator runs and its CPU run (also ``info["recorded_cpu"]``)."""
    sides = []
    threads = rec.provenance.get("cpu_threads")
    for js in rec.experiments["cpu_vs_accelerator"]["sides"]:
        cpu = js["device"] == "cpu"
        label = (
            f"the recording machine's CPU ({threads} threads, recorded)"
            if cpu
            else f"{rec.card} (recorded), {js['mode']}"
        )
        side = Side.from_json(js, label=label, version=rec.provenance["torch"])
        if cpu:
            info["recorded_cpu"] = side
            if side.mode != "torch default":
                continue
        sides.append(side)
    return sides


def _truths(tr: dict[str, Any]) -> dict[str, Any]:
    from ...truth import Truth

    return {
        "sum_uniform": Truth("exact sum", exact=tr["sum_uniform_exact"]),
        "sum_tenthousand": Truth("exact sum", exact=tr["sum_tenthousand_exact"]),
        "chain": Truth("exact chained product", exact=tr["chain_exact_final"]),
        "conv": Truth("exact conv at sampled outputs", exact=tr["conv_exact"]),
    }


def _value(side: Side, op: str) -> Any:
    if op in ("sum_uniform", "sum_tenthousand"):
        return np.float32(getattr(side, op))
    if op == "chain":
        return np.asarray(side.chain[-1], dtype=np.float32)
    return np.asarray(side.conv, dtype=np.float32)


def _drift(side: Side, tr: dict[str, Any], ref: Any = None) -> list[float]:
    """||x_k - ref_k|| / ||truth_k|| after each step of the chain (``ref``: the truth's)."""
    t = tr["chain"]
    num = np.sqrt(
        ((side.chain.astype(np.float64) - (t if ref is None else ref)) ** 2).sum(axis=(1, 2))
    )
    return (num / np.sqrt((t**2).sum(axis=(1, 2)))).tolist()


@functools.cache
def _cpu_modes() -> tuple[dict[str, Claim], dict[str, Any], dict[str, Any]]:
    """Flush-to-zero and fallback kernels on this CPU (`cpu_modes`), measured once."""

    return cpu_modes.claims_and_data(backends.load("torch"))


@functools.cache
def _articles(seed: int) -> dict[str, Claim]:
    """The articles' DirectML example, run through torch on this machine's CPU."""

    return articles.article_claims(backends.load("torch"), seed)[0]


def compute(device: str, record: str) -> Comparison:
    src = resolve(device, record)
    with src.reading("cpu_vs_accelerator"):
        return _compute(src)


@dataclass(frozen=True)
class _Picked:
    """The sides a run compares."""

    sides: list[Side]
    cpu: Side | None  # the live CPU side (None without torch)
    accs: list[Side]  # the accelerator sides
    default: Side | None  # the accelerator under torch's defaults
    strict: Side | None  # the accelerator with TF32 off
    rec_cpu: Side | None  # the recording machine's CPU
    near: Side | None  # the CPU the accelerator is compared with


def _pick(sides: list[Side], info: dict[str, Any]) -> _Picked:
    cpu = None if info.get("cpu_missing") else sides[0]
    accs = [sd for sd in sides if sd.device != "cpu"]
    default = next((a for a in accs if a.mode == "torch default"), None)
    strict = next((a for a in accs if a.mode != "torch default"), None)
    rec_cpu = info.get("recorded_cpu")
    near = cpu if cpu is not None else rec_cpu
    return _Picked(sides, cpu, accs, default, strict, rec_cpu, near)


def _outcomes(
    p: _Picked, s: Settings, tr: dict[str, Any], cpu_missing: str | None
) -> list[Outcome]:
    """One outcome per op and side (the live CPU's missing ones say why)."""
    truths = _truths(tr)
    outcomes = [
        Outcome.missing(f"{_op_label(op, s)} — cpu (live)", "torch", cpu_missing)
        for op in OPS
        if cpu_missing
    ]
    for op in OPS:
        for side in p.sides:
            impl = f"{_op_label(op, s)} — {side.label}"
            kw = {
                "kind": side.kind,
                "version": side.version,
                "device": side.device,
                "settings": {"mode": side.mode},
            }
            if op == "relu":
                value = f"{side.relu_mismatches} of {s.relu_n} differ from max(x, 0)"
                outcomes.append(Outcome(impl, "torch", value=value, **kw))
            else:
                outcomes.append(Outcome.measured(impl, "torch", _value(side, op), truths[op], **kw))
    return outcomes


def _conv_claims(
    p: _Picked, tr: dict[str, Any], conv_error: dict[str, float], conv_vs_cpu: dict[str, int]
) -> dict[str, Claim]:
    """The accelerator's convolution: TF32 by default, and with TF32 off against the CPU."""
    default, strict, near = p.default, p.strict, p.near
    decided: dict[str, Claim] = {}
    if default is not None and strict is not None:
        e_strict = conv_error[strict.label]
        ratio = conv_error[default.label] / e_strict if e_strict else 0.0
        decided["conv_tf32_default"] = C["conv_tf32_default"].claim(
            default.conv_digest != strict.conv_digest
        )
        decided["conv_tf32_error"] = C["conv_tf32_error"].claim(
            ratio > 100, f" (here {ratio:.0f} times)"
        )
    if strict is not None and near is not None:
        apart = conv_vs_cpu[strict.label]
        e_acc, e_cpu = conv_error[strict.label], acc.conv_error(near.conv, tr)
        decided["conv_fp32_differs_cpu"] = C["conv_fp32_differs_cpu"].claim(
            apart > 0 and e_acc <= 10 * e_cpu and e_cpu <= 10 * e_acc,
            f" (here {apart} of {len(near.conv)} sampled outputs differ; relative error "
            f"{e_acc:.3g} TF32 off, {e_cpu:.3g} on the CPU, {near.label})",
        )
    return decided


def _claims(p: _Picked, s: Settings, tr: dict[str, Any]) -> dict[str, Claim]:
    """relu, the sums and the chain on every side; the convolutions (`_conv_claims`)."""
    cpu, default = p.cpu, p.default
    decided: dict[str, Claim] = {}
    if p.sides:
        decided["relu_identical"] = C["relu_identical"].claim(
            all(sd.relu_mismatches == 0 for sd in p.sides)
            and len({sd.relu_digest for sd in p.sides}) == 1
        )
    if cpu is not None and default is not None:
        decided["tenthousand_differs"] = C["tenthousand_differs"].claim(
            default.sum_tenthousand != cpu.sum_tenthousand
        )
        decided["chain_drifts"] = C["chain_drifts"].claim(
            all(_drift(sd, tr)[-1] > 0 for sd in p.sides)
            and not np.array_equal(default.chain, cpu.chain),
            f" ({s.chain_steps} matmuls)",
        )
    return decided


def _observations(p: _Picked, s: Settings) -> dict[str, Observation]:
    """The sums' order on the CPU and the accelerator; the two CPUs, bit for bit."""
    cpu, default, rec_cpu = p.cpu, p.default, p.rec_cpu
    observations = {}
    if cpu is not None and default is not None:
        # whether two orders of a long sum land on the same float depends on the CPU's
        # vector width and thread count: observed, not claimed
        observations["sum_differs"] = SEEN["sum_differs"].observe(
            bool(default.sum_uniform != cpu.sum_uniform),
            f"CPU {float(cpu.sum_uniform)!r}, accelerator {float(default.sum_uniform)!r}",
            f" ({s.sum_n} values)",
        )
    if rec_cpu is not None:
        same = cpu is not None and (
            all(
                np.array_equal(np.asarray(_value(rec_cpu, op)), np.asarray(_value(cpu, op)))
                for op in ("sum_uniform", "sum_tenthousand", "chain", "conv")
            )
            and rec_cpu.conv_digest == cpu.conv_digest
        )
        observations["cpu_matches_recording_cpu"] = SEEN["cpu_matches_recording_cpu"].observe(
            "not measured" if cpu is None else same,
            "CPUs differ in SIMD width, thread count and library kernels; equal bits are "
            "common, not guaranteed",
        )
    return observations


def _compute(src: Any) -> Comparison:
    if src.live:
        s = acc.settings()
    else:
        s = Settings.from_dict(src.record.experiments["cpu_vs_accelerator"]["settings"])
    inp = acc.inputs(s)
    tr = acc.truth(inp)
    sides, info = _sides(src, inp, tr)
    cpu_missing = info.get("cpu_missing")
    p = _pick(sides, info)
    outcomes = _outcomes(p, s, tr, cpu_missing)
    conv_error = {sd.label: acc.conv_error(sd.conv, tr) for sd in sides}
    conv_vs_cpu = {
        a.label: int(np.sum(np.asarray(a.conv) != np.asarray(p.near.conv)))
        for a in (p.accs if p.near is not None else [])
    }
    decided = _claims(p, s, tr) | _conv_claims(p, tr, conv_error, conv_vs_cpu)
    if not missing_part(("torch",)):
        decided.update(_articles(s.seed))
    observations: dict[str, Observation] = {}
    modes_data = None
    if cpu_missing is None:
        modes_claims, modes_seen, modes_data = _cpu_modes()
        decided.update(modes_claims)
        observations.update(modes_seen)
    observations.update(_observations(p, s))
    edge_claims, edge_obs, edge_data, edge_missing = edges.lesson_parts(cpu_missing)
    why = {
        "torch": cpu_missing,
        "accelerator": None if p.default is not None and p.strict is not None else NO_ACCELERATOR,
        "device runs": None if sides else cpu_missing,
        "cuda ftz record": modes_data["cuda_missing"] if modes_data else cpu_missing,
        **edge_missing,
    }
    observations.update(edge_obs)
    cpu, near = p.cpu, p.near
    data = AcceleratorData(
        banner=info["banner"],
        ran_on=info["ran_on"],
        settings=s,
        steps=list(range(s.chain_steps + 1)),
        drift={sd.label: _drift(sd, tr) for sd in sides},
        gap={
            sd.label: _drift(sd, tr, cpu.chain.astype(np.float64))
            for sd in (p.accs if cpu is not None else [])
        },
        sums={sd.label: Sums(float(sd.sum_uniform), float(sd.sum_tenthousand)) for sd in sides},
        truth_sums=Sums(float(tr["sum_uniform"]), float(tr["sum_tenthousand"])),
        conv_error=conv_error,
        relu_edges=edge_data,
        conv_vs_cpu=conv_vs_cpu,
        conv_cpu="" if near is None else near.label,
        conv_samples=0 if near is None else len(near.conv),
        cpu_modes=modes_data,
    )
    return present.comparison(
        src, outcomes, decided | edge_claims, data, EXPLANATION, observations, why
    )


def figure(comparison: Comparison) -> Any:
    """Chain drift against the exact product, step by step, for every device; and the gap
    between the CPU and each accelerator run."""
    import matplotlib.pyplot as plt

    data: AcceleratorData = comparison.data
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(WIDTH_IN, 7.0))
    # curves that coincide stay visible: each its own dash pattern, the first drawn widest
    dashes = ("-", "--", ":", "-.")
    for i, (label, curve) in enumerate(data.drift.items()):
        ax.semilogy(data.steps[1:], curve[1:], dashes[i % 4], lw=2.6 - 0.4 * min(i, 3), label=label)
    ax.set_xlabel("matmul step")
    ax.set_ylabel("relative error vs exact")
    ax.set_title("chained matmuls: drift from the exact product", fontsize=10)
    ax.legend(fontsize=8)
    for i, (label, curve) in enumerate(data.gap.items()):
        gap = [max(v, 1e-17) for v in curve[1:]]
        ax2.semilogy(data.steps[1:], gap, dashes[i % 4], lw=2.6 - 0.4 * min(i, 3), label=label)
    ax2.set_xlabel("matmul step")
    ax2.set_ylabel("||accelerator - CPU|| / ||exact||")
    ax2.set_title("distance between the CPU and the accelerator", fontsize=10)
    if data.gap:
        ax2.legend(fontsize=8)
    return present.with_banner(fig, data.banner, fontsize=8)


def record_gpu(s: GpuSession) -> dict[str, Any]:
    """The accelerator experiment on the CPU and on the session's device."""
    devices = [torch_module().device("cpu")] + ([s.device] if s.device.type != "cpu" else [])
    return acc.run_accelerator(devices, quick=s.quick, progress=s.say)


LESSON = Lesson(
    name="cpu_vs_accelerator",
    title="CPU vs accelerator: the same ops, different numbers, the same truth",
    summary="Sum, 100 chained matmuls, conv and relu on the CPU and on any torch device "
    "(CUDA, MPS, XPU, DirectML), each against the exact result",
    params=(
        Text("device", "auto", "the accelerator: " + DEVICE_HELP, pattern_help=DEVICE_HELP),
        record_param(),
    ),
    compute=compute,
    claims=CLAIMS,
    observations=OBSERVATIONS,
    explanation=EXPLANATION,
    figure=figure,
    data=AcceleratorData,
    gpu_experiment=GpuExperiment("cpu_vs_accelerator", record_gpu),
)
