"""The same float32 ops on the CPU and on an accelerator (CUDA, MPS, XPU, DirectML...)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ...figures import WIDTH_IN
from ...params import Text
from ...result import Claim, Comparison, Outcome
from .._base import Lesson, declare_texts, missing_part
from .._gpu import present
from .._gpu.recording import GpuExperiment, GpuSession
from .._gpu.source import record_param, resolve
from . import articles, cpu_modes, edges
from .data import AcceleratorData, Sums

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


def _op_label(op: str, s: dict[str, Any]) -> str:
    return {
        "sum_uniform": f"sum of {s['sum_n']} uniform[0,1) floats",
        "sum_tenthousand": "sum of 10000 x float32(0.0001)",
        "chain": f"{s['chain_steps']} chained {s['chain_dim']}x{s['chain_dim']} matmuls",
        "conv": f"conv2d {'x'.join(map(str, s['conv']))}, 3x3, sampled outputs",
        "relu": f"relu of {s['relu_n']} normal floats",
    }[op]


def _sides(
    src: Any, inp: dict[str, Any], tr: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every side (dicts as in the record, arrays unpacked) and a description of the run;
    without torch there is no live CPU side and ``info["cpu_missing"]`` says why."""
    from ... import backends
    from . import experiment as acc

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

    def live(dev: Any, mode: str, label: str) -> dict[str, Any]:
        side = acc.run_side(dev, inp, mode)
        js = acc.side_to_json(side)
        js["relu_mismatches"] = int(np.sum(side["relu"] != tr["relu"]))
        return {
            **acc.side_from_json(js),
            "label": label,
            "kind": "framework",
            "version": torch.__version__,
        }

    cpu = live(
        torch.device("cpu"),
        "torch default",
        f"cpu (live, this machine, {torch.get_num_threads()} threads)",
    )
    if not src.live:
        rec = src.record
        info.update(
            banner=(
                f"CPU: live on this machine (torch {torch.__version__}). Accelerator: "
                + rec.banner()
            ),
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


def _recorded_sides(rec: Any, info: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's sides: its accelerator runs and its CPU run (also ``info["recorded_cpu"]``)."""
    from . import experiment as acc

    sides = []
    for js in rec.experiments["cpu_vs_accelerator"]["sides"]:
        side = {**acc.side_from_json(js), "kind": "recorded", "version": rec.provenance["torch"]}
        if js["device"] == "cpu":
            threads = rec.provenance.get("cpu_threads")
            side["label"] = f"the recording machine's CPU ({threads} threads, recorded)"
            info["recorded_cpu"] = side
            if js["mode"] != "torch default":
                continue
        else:
            side["label"] = f"{rec.card} (recorded), {js['mode']}"
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


def _value(side: dict[str, Any], op: str) -> Any:
    if op in ("sum_uniform", "sum_tenthousand"):
        return np.float32(side[op])
    if op == "chain":
        return np.asarray(side["chain"][-1], dtype=np.float32)
    return np.asarray(side["conv"], dtype=np.float32)


def _sums(side: dict[str, Any]) -> Sums:
    return Sums(float(side["sum_uniform"]), float(side["sum_tenthousand"]))


def _drift(side: dict[str, Any], tr: dict[str, Any], ref: Any = None) -> list[float]:
    """||x_k - ref_k|| / ||truth_k|| after each step of the chain (``ref``: the truth's)."""
    t = tr["chain"]
    num = np.sqrt(
        ((side["chain"].astype(np.float64) - (t if ref is None else ref)) ** 2).sum(axis=(1, 2))
    )
    return (num / np.sqrt((t**2).sum(axis=(1, 2)))).tolist()


def _article_claims(seed: int) -> dict[str, Claim]:
    """The articles' DirectML example, run through torch on this machine's CPU."""
    return {} if missing_part(("torch",)) else dict(_articles(seed))


@functools.cache
def _cpu_modes() -> tuple[dict[str, Claim], dict[str, Any], dict[str, Any]]:
    """Flush-to-zero and fallback kernels on this CPU (`cpu_modes`), measured once."""
    from ... import backends

    return cpu_modes.claims_and_data(backends.load("torch"))


@functools.cache
def _articles(seed: int) -> dict[str, Claim]:
    from ... import backends

    return articles.article_claims(backends.load("torch"), seed)[0]


def compute(device: str, record: str) -> Comparison:
    from . import experiment as acc

    src = resolve(device, record)
    with src.reading("cpu_vs_accelerator"):
        return _compute(src, acc)


def _compute(src: Any, acc: Any) -> Comparison:
    s = acc.settings() if src.live else src.record.experiments["cpu_vs_accelerator"]["settings"]
    inp = acc.inputs(s)
    tr = acc.truth(inp)
    sides, info = _sides(src, inp, tr)
    truths = _truths(tr)
    cpu_missing = info.get("cpu_missing")
    outcomes = [
        Outcome.missing(f"{_op_label(op, s)} — cpu (live)", "torch", cpu_missing)
        for op in OPS
        if cpu_missing
    ]
    for op in OPS:
        for side in sides:
            impl = f"{_op_label(op, s)} — {side['label']}"
            kw = {
                "kind": side["kind"],
                "version": side["version"],
                "device": side["device"],
                "settings": {"mode": side["mode"]},
            }
            if op == "relu":
                outcomes.append(
                    Outcome(
                        impl,
                        "torch",
                        value=(f"{side['relu_mismatches']} of {s['relu_n']} differ from max(x, 0)"),
                        **kw,
                    )
                )
            else:
                outcomes.append(Outcome.measured(impl, "torch", _value(side, op), truths[op], **kw))
    cpu = None if cpu_missing else sides[0]
    accs = [sd for sd in sides if sd["device"] != "cpu"]
    default = next((a for a in accs if a["mode"] == "torch default"), None)
    strict = next((a for a in accs if a["mode"] != "torch default"), None)
    rec_cpu = info.get("recorded_cpu")
    conv_error = {sd["label"]: acc.conv_error(sd, tr) for sd in sides}
    near = cpu if cpu is not None else rec_cpu  # the CPU the accelerator is compared with
    conv_vs_cpu = {
        a["label"]: int(np.sum(np.asarray(a["conv"]) != np.asarray(near["conv"])))
        for a in (accs if near is not None else [])
    }
    tf32_ratio = (
        conv_error[default["label"]] / conv_error[strict["label"]]
        if default is not None and strict is not None and conv_error[strict["label"]]
        else 0.0
    )
    decided: dict[str, Claim] = {}
    if sides:
        decided["relu_identical"] = C["relu_identical"].claim(
            all(sd["relu_mismatches"] == 0 for sd in sides)
            and len({sd["relu_digest"] for sd in sides}) == 1
        )
    if cpu is not None and default is not None:
        decided["tenthousand_differs"] = C["tenthousand_differs"].claim(
            default["sum_tenthousand"] != cpu["sum_tenthousand"]
        )
        decided["chain_drifts"] = C["chain_drifts"].claim(
            all(_drift(sd, tr)[-1] > 0 for sd in sides)
            and not np.array_equal(default["chain"], cpu["chain"]),
            f" ({s['chain_steps']} matmuls)",
        )
    if default is not None and strict is not None:
        decided["conv_tf32_default"] = C["conv_tf32_default"].claim(
            default["conv_digest"] != strict["conv_digest"]
        )
        decided["conv_tf32_error"] = C["conv_tf32_error"].claim(
            tf32_ratio > 100, f" (here {tf32_ratio:.0f} times)"
        )
    if strict is not None and near is not None:
        apart = conv_vs_cpu[strict["label"]]
        e_acc, e_cpu = conv_error[strict["label"]], acc.conv_error(near, tr)
        decided["conv_fp32_differs_cpu"] = C["conv_fp32_differs_cpu"].claim(
            apart > 0 and e_acc <= 10 * e_cpu and e_cpu <= 10 * e_acc,
            f" (here {apart} of {len(near['conv'])} sampled outputs differ; relative error "
            f"{e_acc:.3g} TF32 off, {e_cpu:.3g} on the CPU, {near['label']})",
        )
    decided.update(_article_claims(int(s.get("seed", 0))))
    observations = {}
    modes_data = None
    if cpu_missing is None:
        modes_claims, modes_seen, modes_data = _cpu_modes()
        decided.update(modes_claims)
        observations.update(modes_seen)
    if cpu is not None and default is not None:
        # whether two orders of a long sum land on the same float depends on the CPU's
        # vector width and thread count: observed, not claimed
        observations["sum_differs"] = SEEN["sum_differs"].observe(
            bool(default["sum_uniform"] != cpu["sum_uniform"]),
            f"CPU {float(cpu['sum_uniform'])!r}, accelerator {float(default['sum_uniform'])!r}",
            f" ({s['sum_n']} values)",
        )
    if rec_cpu is not None:
        same = cpu is not None and (
            all(
                np.array_equal(np.asarray(_value(rec_cpu, op)), np.asarray(_value(cpu, op)))
                for op in ("sum_uniform", "sum_tenthousand", "chain", "conv")
            )
            and rec_cpu["conv_digest"] == cpu["conv_digest"]
        )
        observations["cpu_matches_recording_cpu"] = SEEN["cpu_matches_recording_cpu"].observe(
            "not measured" if cpu is None else same,
            "CPUs differ in SIMD width, thread count and library kernels; equal bits are "
            "common, not guaranteed",
        )
    edge_claims, edge_obs, edge_data, edge_missing = edges.lesson_parts(cpu_missing)
    why = {
        "torch": cpu_missing,
        "accelerator": None if default is not None and strict is not None else NO_ACCELERATOR,
        "device runs": None if sides else cpu_missing,
        "cuda ftz record": modes_data["cuda_missing"] if modes_data else cpu_missing,
        **edge_missing,
    }
    observations.update(edge_obs)
    data = AcceleratorData(
        banner=info["banner"],
        ran_on=info["ran_on"],
        settings=s,
        steps=list(range(s["chain_steps"] + 1)),
        drift={sd["label"]: _drift(sd, tr) for sd in sides},
        gap={
            sd["label"]: _drift(sd, tr, cpu["chain"].astype(np.float64))
            for sd in (accs if cpu is not None else [])
        },
        sums={sd["label"]: _sums(sd) for sd in sides},
        truth_sums=_sums(tr),
        conv_error=conv_error,
        relu_edges=edge_data,
        conv_vs_cpu=conv_vs_cpu,
        conv_cpu="" if near is None else near["label"],
        conv_samples=0 if near is None else len(near["conv"]),
        cpu_modes=modes_data,
    )
    return present.comparison(
        src,
        outcomes,
        decided | edge_claims,
        data,
        EXPLANATION,
        observations,
        why,
    )


def figure(comparison: Comparison) -> Any:
    """Chain drift against the exact product, step by step, for every device; and the gap
    between the CPU and each accelerator run."""
    import matplotlib.pyplot as plt

    data: AcceleratorData = comparison.data
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(WIDTH_IN, 7.0))
    for label, curve in data.drift.items():
        ax.semilogy(data.steps[1:], curve[1:], label=label)
    ax.set_xlabel("matmul step")
    ax.set_ylabel("relative error vs exact")
    ax.set_title("chained matmuls: drift from the exact product", fontsize=10)
    ax.legend(fontsize=7)
    for label, curve in data.gap.items():
        ax2.semilogy(data.steps[1:], [max(v, 1e-17) for v in curve[1:]], label=label)
    ax2.set_xlabel("matmul step")
    ax2.set_ylabel("||accelerator - CPU|| / ||exact||")
    ax2.set_title("distance between the CPU and the accelerator", fontsize=10)
    if data.gap:
        ax2.legend(fontsize=7)
    return present.with_banner(fig, data.banner, fontsize=8)


def record_gpu(s: GpuSession) -> dict[str, Any]:
    """The accelerator experiment on the CPU and on the session's device."""
    from ...backends.torch_device import torch_module
    from .experiment import run_accelerator

    devices = [torch_module().device("cpu")] + ([s.device] if s.device.type != "cpu" else [])
    return run_accelerator(devices, quick=s.quick, progress=s.say)


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
