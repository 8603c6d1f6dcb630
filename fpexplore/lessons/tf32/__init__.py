"""TF32 and reduced-precision autocast: how much accuracy a float32 matmul or conv gives up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ... import backends
from ...backends.torch_device import flags, tf32_defaults, torch_module
from ...errors import InvalidParameter
from ...figures import WIDTH_IN
from ...params import Options
from ...result import Claim, Comparison, Outcome
from .._base import Lesson, declare_texts, missing_part, missing_parts
from .._gpu import present, ulp_unit
from .._gpu.recording import GpuExperiment, GpuSession
from .._gpu.source import device_param, record_param, resolve, torch_version
from .rows import Row

EXPLANATION = """\
TF32 is a tensor-core mode for float32 inputs: each input is rounded to 10 fraction bits (like
float16, with float32's exponent range), products are exact, and sums are kept in float32. The
result is still stored as float32, so nothing in its dtype tells you it lost about 13 bits.
bf16 autocast keeps 7 fraction bits, fp16 autocast 10 (and rounds the output too).

torch has two separate switches: `torch.backends.cuda.matmul.allow_tf32` for matmuls (off by
default since 1.12) and `torch.backends.cudnn.allow_tf32` for convolutions (on by default);
newer releases expose the same as `fp32_precision` ('ieee' or 'tf32'). The defaults shown
here are read from the torch that ran. Errors are measured on 64 sampled output entries against
the exact dot products of the very float32 inputs: the relative error is
||got - truth|| / ||truth|| over those entries.
"""


@dataclass(frozen=True)
class TF32Data:
    """A run (live or recorded): each op's error by size and precision mode."""

    defaults: dict[str, Any]  # torch's TF32 settings where it ran
    modes: list[str]
    rows: list[Row]  # one per op, size and mode
    source: str  # the outcomes' kind: "framework" (live) or "recorded"
    banner: str
    focus_size: int  # the matmul size the outcomes show
    focus_channels: int  # the conv channel count the outcomes show
    defaults_here: dict[str, Any]  # this machine's torch, read now ({} without torch)

    def errors(self, op: str, mode: str) -> dict[int, float]:
        """``op``'s relative error by size (matmul side, conv channels) under ``mode``, for
        the sizes where it ran; an op or mode this run lacks raises `InvalidParameter`."""
        if op not in ("matmul", "conv2d"):
            raise InvalidParameter("op", op, "'matmul' or 'conv2d'")
        if mode not in self.modes:
            raise InvalidParameter("mode", mode, "one of " + ", ".join(self.modes))
        return {r.size: r.rel_error for r in _rows(self, op, mode)}


def _rows(data: TF32Data, op: str, mode: str) -> list[Row]:
    return sorted(
        (r for r in data.rows if r.op == op and r.mode == mode and r.raised is None),
        key=lambda r: r.size,
    )


def _at(data: TF32Data, op: str, mode: str, size: int) -> Row | None:
    return next((r for r in _rows(data, op, mode) if r.size == size), None)


def _pick(sizes: list[int], want: int) -> int:
    return want if want in sizes else max(s for s in sizes if s <= max(want, min(sizes)))


#: the narrowest convolution the claim about cuDNN's default TF32 is decided on
WIDE_CONV = 64

#: The claims, as stated before measuring (each decided claim appends what it measured). The
#: card's claims need a "tf32 card" (a recorded run, or a live CUDA card of compute capability
#: 8.0 or later); comparing with input rounding needs "matmul rows" at `cpu_live.SIZES`; the
#: claim about cuDNN's default needs a "wide conv" (``WIDE_CONV`` channels or more).
CLAIMS = declare_texts(
    {
        "tf32_costs_accuracy": "the TF32 matmul's relative error is over 100 times the fp32 one",
        "matmul_default_is_fp32": "torch's default matmul gives the fp32 result at every size",
        "conv_default_uses_tf32": "torch's default convolution gives the TF32 result, not the "
        "fp32 one, for some channel counts",
        "bf16_worst": "bf16 autocast has the largest error of all modes at every size",
        "fp16_like_tf32": "fp16 autocast and TF32 matmul errors are within a factor of 3 of "
        "each other at every size (both keep 10 fraction bits)",
        "tf32_is_input_rounding": "the card's TF32 matmul error is the error of rounding its "
        "inputs to TF32 alone, within 5 %: its products and float32 sums add almost nothing",
        "autocast_rounds_output": "bf16 and fp16 autocast lose more than rounding their inputs "
        "alone: autocast also rounds the output to 16 bits",
        "cpu_ignores_allow_tf32": "torch.backends.cuda.matmul.allow_tf32 leaves a CPU matmul's "
        "bits unchanged",
    },
    ("tf32 card",),
    {
        "conv_default_uses_tf32": ("tf32 card", "wide conv"),
        "tf32_is_input_rounding": ("tf32 card", "matmul rows"),
        "autocast_rounds_output": ("tf32 card", "matmul rows"),
        "cpu_ignores_allow_tf32": ("torch",),
    },
    applies="TF32-capable GPUs (recorded or live)",
    test="tests/test_gpu_lessons.py",
)
CLAIMS["cpu_ignores_allow_tf32"] = replace(CLAIMS["cpu_ignores_allow_tf32"], applies="CPUs")
C = CLAIMS


def _claims(data: TF32Data) -> dict[str, Claim]:
    d = data.defaults
    size = data.focus_size
    fp32, tf = _at(data, "matmul", "fp32 (TF32 off)", size), _at(data, "matmul", "TF32", size)
    ratio = tf.rel_error / fp32.rel_error if fp32 and tf and fp32.rel_error else 0.0
    mm_default = _rows(data, "matmul", "torch default")
    conv_default = _rows(data, "conv2d", "torch default")

    def same(a: Row, mode: str) -> bool:
        b = _at(data, a.op, mode, a.size)
        return b is not None and a.rel_error == b.rel_error

    modes = ("fp32 (TF32 off)", "TF32", "fp16 autocast")
    bf16_worst = all(
        r.rel_error > max(_at(data, r.op, m, r.size).rel_error for m in modes)
        for op in ("matmul", "conv2d")
        for r in _rows(data, op, "bf16 autocast")
    )
    fp16_tf32 = all(
        1 / 3 < r.rel_error / _at(data, "matmul", "fp16 autocast", r.size).rel_error < 3
        for r in _rows(data, "matmul", "TF32")
    )
    decided = {  # (holds, what was measured)
        "tf32_costs_accuracy": (ratio > 100, f" (at size {size}: {ratio:.0f} times)"),
        "matmul_default_is_fp32": (
            bool(mm_default) and all(same(r, "fp32 (TF32 off)") for r in mm_default),
            f" (allow_tf32 = {d.get('cuda.matmul.allow_tf32')})",
        ),
        "conv_default_uses_tf32": (
            any(same(r, "TF32") and not same(r, "fp32 (TF32 off)") for r in conv_default),
            f" (cudnn.allow_tf32 = {d.get('cudnn.allow_tf32')})",
        ),
        "bf16_worst": (bf16_worst, ""),
        "fp16_like_tf32": (fp16_tf32, ""),
    }
    return {k: C[k].claim(*v) for k, v in decided.items()}


def _input_rounding_claims(data: TF32Data) -> dict[str, Claim]:
    """The card's matmul errors against rounding the inputs alone, emulated exactly here
    (`cpu_live`: the same inputs, rounded to TF32/bfloat16/float16, multiplied exactly)."""
    from . import cpu_live

    ratios: dict[tuple[int, str], float] = {}
    for n in cpu_live.SIZES:
        for emulated, card_mode in cpu_live.RECORDED_MODE.items():
            card = _at(data, "matmul", card_mode, n)
            here = cpu_live.matmul_on_cpu(n, emulated).rel_error
            if card is not None and here:
                ratios[(n, card_mode)] = card.rel_error / here
    tf = [r for (_, m), r in ratios.items() if m == "TF32"]
    auto = [r for (_, m), r in ratios.items() if m != "TF32"]
    sizes = ", ".join(map(str, cpu_live.SIZES))
    out = {}
    if tf:
        out["tf32_is_input_rounding"] = C["tf32_is_input_rounding"].claim(
            all(0.95 < r < 1.05 for r in tf),
            f" (sizes {sizes}: ratios {min(tf):.3f} to {max(tf):.3f})",
        )
    if auto:
        out["autocast_rounds_output"] = C["autocast_rounds_output"].claim(
            all(r > 1 for r in auto), f" (sizes {sizes})"
        )
    return out


def _missing(data: TF32Data, src: Any) -> Callable[[str], str | None]:
    """Why a part the claims need is missing from this run, with its fix (None if present)."""
    from . import cpu_live

    def why(part: str) -> str | None:
        if part == "tf32 card":
            return _no_tf32(src) or None
        if part == "matmul rows":
            ran = {r.size for r in _rows(data, "matmul", "TF32")}
            if ran.isdisjoint(cpu_live.SIZES):
                sizes = ", ".join(map(str, cpu_live.SIZES))
                return f"the run has no matmul rows at sizes {sizes}. Fix: run those sizes"
        if part == "wide conv":
            chans = {r.size for r in data.rows if r.op == "conv2d"}
            if chans and max(chans) < WIDE_CONV:
                return (
                    f"only {', '.join(map(str, sorted(chans)))} channels ran: cuDNN's heuristics "
                    "pick non-TF32 algorithms for such narrow convolutions on some cards (an "
                    f"H100 did); the claim is about {WIDE_CONV} channels and more. Fix: choose "
                    f"max_size ≥ {8 * WIDE_CONV}"
                )
        return None

    return why


def _no_tf32(src: Any) -> str:
    """Why a live device has no TF32 mode ("" where it has one): TF32 tensor cores and
    cuDNN's TF32 convolutions exist on NVIDIA cards of compute capability 8.0 (Ampere) and
    later only; other devices (mps, xpu, older cards) run these modes as plain float32."""
    if not src.live:
        return ""
    if src.device.type == "cpu":
        return (
            "this run is on a CPU, which has no TF32 or cuDNN modes. Fix: run on a CUDA card "
            "(--device cuda) or read a recorded run (--device recorded)"
        )
    if src.device.type != "cuda":
        return (
            f"TF32 is a mode of NVIDIA cards (Ampere and later); {src.label} is a "
            f"{src.device.type} device. Fix: run on such a card or read a recorded run"
        )
    major, minor = torch_module().cuda.get_device_capability(src.device)
    if major < 8:
        return (
            f"{src.label} has compute capability {major}.{minor}: TF32 exists from 8.0 "
            "(Ampere) on, so its claims apply to such cards only. Fix: read a recorded run"
        )
    return ""


def _cpu_flag_claim() -> dict[str, Claim]:
    """``allow_tf32`` governs CUDA matmuls only: a CPU matmul keeps its bits either way."""
    from . import cpu_live

    if missing_part(C["cpu_ignores_allow_tf32"].needs):
        return {}
    torch = backends.load("torch")
    inp = cpu_live.inputs(256)
    a, b = torch.from_numpy(inp.a), torch.from_numpy(inp.b)

    def product(tf32: bool) -> bytes:  # its bits
        with flags(matmul_tf32=tf32):
            return (a @ b).numpy().tobytes()

    same = product(False) == product(True)
    return {
        "cpu_ignores_allow_tf32": C["cpu_ignores_allow_tf32"].claim(same, " (256×256, float32)")
    }


def _outcomes(data: TF32Data, src: Any) -> tuple[Outcome, ...]:
    out = []
    version = src.record.provenance["torch"] if not src.live else torch_version()
    unit = "float32 ULPs of the exact value"
    if not src.live:  # a record made before the recorder counted in that unit says so
        unit = ulp_unit.words(src.record.experiments["tf32"])
    where = {"kind": src.kind, "device": src.label}
    for op, size in (("matmul", data.focus_size), ("conv2d", data.focus_channels)):
        for mode in data.modes:
            r = _at(data, op, mode, size)
            what = f"{size}x{size} matmul" if op == "matmul" else f"conv2d {size} ch"
            if r is None:
                why = "this mode raised or was not run"
                out.append(Outcome.missing(f"{what}, {mode}", "torch", why, **where))
                continue
            out.append(
                Outcome(
                    f"{what}, {mode}: relative error",
                    "torch",
                    value=r.rel_error,
                    version=version,
                    settings={"mode": mode, "output dtype": r.out_dtype},
                    note=f"median {r.median_abs_ulp32:.3g} {unit}; {r.ms:.3g} ms",
                    **where,
                )
            )
    return tuple(out)


#: A live run on a CPU is bounded (a CPU has no TF32 or tensor cores: every mode is IEEE
#: float32 there, and a 4096 matmul in five modes would take minutes).
CPU_MAX_SIZE = 512
CPU_MAX_CHANNELS = 64


def _defaults_here() -> tuple[dict[str, Any], Outcome | None]:
    """This machine's torch TF32 settings, read now, or an Unavailable row without torch."""
    why = backends.missing("torch")
    if why is not None:
        return {}, Outcome.missing("torch here: TF32 defaults read live", "torch", why)
    return tf32_defaults(), None


def compute(device: str, max_size: int, record: str) -> Comparison:
    src = resolve(device, record)
    bounded = ""
    if src.live:
        from .experiment import CONV_CHANNELS, MATMUL_SIZES, run_tf32

        cap, ccap = max_size, max(CONV_CHANNELS[0], max_size // 8)
        if src.device.type == "cpu":
            cap, ccap = min(cap, CPU_MAX_SIZE), min(ccap, CPU_MAX_CHANNELS)
            bounded = (
                f" (bounded on a CPU: matmul up to {min(max_size, CPU_MAX_SIZE)}, "
                f"conv up to {ccap} channels)"
            )
        sizes = tuple(s for s in MATMUL_SIZES if s <= cap)
        channels = tuple(c for c in CONV_CHANNELS if c <= ccap)
        run = run_tf32(src.device, sizes=sizes, channels=channels)
    else:
        run = src.record.experiments["tf32"]
    defaults_here, missing_here = _defaults_here()
    with src.reading("tf32"):
        rows = [Row.from_dict(r) for r in run["rows"]]
        sizes = sorted({r.size for r in rows if r.op == "matmul"})
        chans = sorted({r.size for r in rows if r.op == "conv2d"})
        data = TF32Data(
            run["defaults"],
            run["modes"],
            rows,
            src.kind,
            src.banner + bounded,
            _pick(sizes, 1024),
            _pick(chans, 256),
            defaults_here,
        )
        return present.comparison(
            src,
            _outcomes(data, src) + ((missing_here,) if missing_here else ()),
            {**_claims(data), **_input_rounding_claims(data), **_cpu_flag_claim()},
            data,
            EXPLANATION,
            missing=missing_parts(CLAIMS.values(), _missing(data, src)),
        )


def figure(comparison: Comparison) -> Any:
    """Relative error against the exact result by size, one line per mode, matmul and conv."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    data = comparison.data
    fig, axes = plt.subplots(2, 1, figsize=(WIDTH_IN, 7.0))
    for ax, op, xlabel in (
        (axes[0], "matmul", "matrix size n (n x n times n x n)"),
        (axes[1], "conv2d", "reduction length 9 x channels"),
    ):
        for mode in data.modes:
            rows = _rows(data, op, mode)
            xs = [r.size if op == "matmul" else r.k for r in rows]
            # torch's default coincides with one of the modes: hollow squares over its line
            look = (
                {"ls": "--", "marker": "s", "mfc": "none", "ms": 9, "zorder": 3}
                if mode == "torch default"
                else {"ls": "-", "marker": "o"}
            )
            ax.loglog(xs, [r.rel_error for r in rows], label=mode, **look)
        sizes = sorted({r.size if op == "matmul" else r.k for r in _rows(data, op, data.modes[0])})
        ax.set_xticks(sizes, [f"{v:g}" for v in sizes])  # the sizes run, no labels run together
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(xlabel)
        ax.set_ylabel("relative error vs exact")
        ax.set_title(op, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    return present.with_banner(fig, data.banner)


def record_gpu(s: GpuSession) -> dict[str, Any]:
    """TF32 against float32 on the session's device."""
    from .experiment import run_tf32

    return run_tf32(s.device, quick=s.quick, seed=0, defaults=s.tf32_defaults, progress=s.say)


LESSON = Lesson(
    name="tf32",
    title="TF32 and autocast: float32 in name, fewer bits in fact",
    summary="fp32 vs TF32 vs bf16/fp16 autocast matmul and conv on a GPU, error against the "
    "exact result by size, with torch's defaults read live",
    params=(
        device_param(),
        Options(
            "max_size",
            4096,
            "largest matmul size (live runs only)",
            choices=(256, 512, 1024, 2048, 4096),
        ),
        record_param(),
    ),
    compute=compute,
    explanation=EXPLANATION,
    figure=figure,
    data=TF32Data,
    quick={"max_size": 256},
    claims=CLAIMS,
    observations=present.OBSERVATIONS,
    gpu_experiment=GpuExperiment("tf32", record_gpu),
)
