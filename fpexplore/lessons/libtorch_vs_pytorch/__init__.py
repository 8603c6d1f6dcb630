"""Lesson: LibTorch (C++) vs PyTorch (Python), bit for bit, and custom CUDA kernels.

The C++ side is a real program (``fpexplore/backends/libtorch``) linked against the libtorch
inside the installed torch wheel; `sides` runs both, `cuda_view` the CUDA part (live on a GPU
with nvcc, else the recorded run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import backends, metrics, orders
from ...backends.libtorch_program import ProgramInfo
from ...errors import BackendUnavailable, NotEmulated
from ...params import Interval, Options
from ...result import Comparison, Outcome
from .._base import Lesson, declare_texts
from . import cuda_view, inputs, loops, sides
from .cuda_view import Part
from .data import LibtorchData

THREADS = (1, 2)
OP_TEXT = {
    "mm": "mm(a, b)",
    "grad": "the gradient of (x @ x.T).sum()",
    "mlp": "the MLP (linear, relu, linear)",
}

EXPLANATION = """\
Python's torch is a thin layer over libtorch: `torch.mm` in Python and `torch::mm` in C++ call
the same function in the same libtorch_cpu library, which picks the same kernel (MKL's sgemm,
oneDNN, or ATen's own vectorized loops) for the same shapes, dtypes, CPU and thread count.
The interpreter, the garbage collector and the memory allocator decide nothing about the order
of floating-point operations, so they cannot change a result. Here the C++ program links the
very libtorch_cpu of the installed wheel, and the lesson measures every op bit for bit.

What does change results is a setting: the intra-op thread count (`at::set_num_threads` in C++,
`torch.set_num_threads` in Python) splits a large `sum` into per-thread partial sums, added in
another order — `fpexplore.orders.emulate(x, "torch", threads)` reproduces both orders bit for
bit. Two programs that default to different thread counts (OMP_NUM_THREADS, a container's CPU
quota, a C++ program that calls `at::set_num_threads`) therefore disagree, whatever language.
A LibTorch of another version, or a build for another CPU path (AVX2, AVX-512, ARM), may pick
other kernels too.

Compiler flags reach only the code they compile. libtorch's kernels are already compiled, so
`-ffast-math` on the C++ program changes no torch op; on the user's own loop it lets the
compiler reassociate the additions (4 vector lanes on x86-64 SSE, then a horizontal sum), and
the loop's result changes.

The random numbers agree because `torch::manual_seed` and `torch.manual_seed` seed the same
CPU generator (MT19937 in libtorch_cpu) and `torch::randn`/`torch.randn` run the same
transform; fpexplore.rng rebuilds that stream from MT19937 alone.

On the GPU, a hand-written naive matmul (one thread per output, accumulating in k order) is a
chain of fused multiply-adds: nvcc contracts `acc += a * b` into one FMA per step by default
(`__fmul_rn`/`__fadd_rn` prevent it, and change the bits). cuBLAS picks a kernel by shape and
card: where it also runs one k-order FMA chain per output it gives the naive kernel's very bits,
where it splits k into partial sums it does not; none of them is the exact result. An
atomicAdd reduction adds in the order the threads happen to arrive, so its result changes from
run to run, while torch.sum's fixed tree gives the same bits every time.
"""


_BOTH = ("torch", "libtorch")
#: The claims, as stated before measuring (each decided claim appends what it measured): the
#: comparisons need both sides (Python's torch and the C++ program), the loop the C++ program,
#: the thread count either side (the C++ one where both ran); the CUDA part's are `cuda_view`'s.
CLAIMS = {
    **declare_texts(
        {
            "mm_same_bits": "C++ torch::mm and Python torch.mm return the same bits",
            "grad_same_bits": "the autograd gradient of (x @ x.T).sum() is the same bits in C++ "
            "and Python",
            "mlp_same_bits": "the MLP forward (linear, relu, linear) is the same bits in C++ and "
            "Python",
            "sum_same_bits": "C++ and Python sum(v) return the same bits",
            "emulator_reproduces_sum": "orders.emulate(v, 'torch', threads) reproduces the C++ "
            "sum (equal to Python's) bit for bit at 1 and at 2 threads",
            "threads_explain_sum": "the thread count explains every difference in the sum: the 1- "
            "and 2-thread sums differ exactly when the emulator's 1- and 2-thread orders differ",
            "plain_loop_is_sequential": "the hand-written loop built without -ffast-math adds "
            "left to right in float32: it equals the sequential emulator bit for bit",
            "randn_same_bits": "torch::manual_seed + torch::randn in C++ gives the same bits as "
            "torch.manual_seed; torch.randn in Python (and so does rand)",
        },
        _BOTH,
        {"threads_explain_sum": ("torch",), "plain_loop_is_sequential": ("libtorch",)},
        test="tests/test_libtorch_vs_pytorch.py",
    ),
    **cuda_view.CLAIMS,
}
C = CLAIMS
#: The observations (what depends on the CPU, the compiler and the card), as stated before
#: measuring; the CUDA part's are `cuda_view`'s.
OBSERVATIONS = {
    **declare_texts(
        {
            "sum_threads_differ": "sum of these elements differs between 1 and 2 threads",
            **{
                f"{op}_threads_differ": f"{OP_TEXT[op]} differs between 1 and 2 threads here"
                for op in ("mm", "grad", "mlp")
            },
            "fastmath_changes_loop": "-ffast-math changed the hand-written loop's result",
            "fastmath_is_4_lanes": "the -ffast-math loop equals the 4-lane emulator (GCC on "
            "x86-64 SSE)",
            "randn_rebuilt": "fpexplore.rng's rebuild of torch's CPU generator gives the same "
            "randn bits",
        },
        by_key={"fastmath_changes_loop": ("libtorch",), "fastmath_is_4_lanes": ("libtorch",)},
    ),
    **cuda_view.OBSERVATIONS,
}
S = OBSERVATIONS


def _measure_all(results: dict[tuple[str, str, int], np.ndarray], truths: dict[str, Any]) -> dict:
    """Error summaries, measured once per distinct result of each op."""
    cache: dict[tuple[str, bytes], Any] = {}
    out = {}
    for (side, op, t), arr in results.items():
        key = (op, np.ascontiguousarray(arr).tobytes())
        if key not in cache:
            cache[key] = metrics.measure(arr, truths[op])
        out[(side, op, t)] = cache[key]
    return out


def _rng_emulated(seed: int, n: int, capability: str) -> np.ndarray | None:
    from ...rng import TorchCPURandom

    path = "avx2" if capability.upper().startswith("AVX") else "default"
    try:
        return TorchCPURandom(seed, path=path).randn(n)
    except (NotEmulated, TypeError):
        return None


def _name(op: str, side: str, t: int) -> str:
    return f"{op} · {side} · {t} thread{'s' * (t > 1)}"


@dataclass(frozen=True)
class _Sides:
    """Both sides run on the same inputs (a side's results None where it did not run)."""

    inp: inputs.Inputs
    truths: dict[str, Any]
    torch: Any  # Python's torch, or None
    cpp: sides.Results | None
    py: sides.Results | None
    info: ProgramInfo | None  # what the C++ program reported of its libtorch
    missing: dict[str, str]  # why a side did not run, with its fix, by part
    results: dict[tuple[str, str, int], np.ndarray]  # by (side, op, threads)
    errors: dict[tuple[str, str, int], Any]

    @property
    def ref(self) -> sides.Results | None:
        return self.cpp if self.cpp is not None else self.py


def _run_sides(seed: int, size: int, sum_length: int) -> _Sides:
    inp = inputs.make(seed, size, sum_length)
    truths = inputs.all_truths(inp)
    missing: dict[str, str] = {}
    try:
        torch = backends.load("torch")
    except BackendUnavailable as exc:
        torch = None
        missing["torch"] = str(exc)
    try:
        cpp, info = sides.cpp(inp, THREADS)
    except BackendUnavailable as exc:
        cpp, info = None, None
        missing["libtorch"] = str(exc)
    py = sides.python(torch, inp, THREADS) if torch is not None else None
    results: dict[tuple[str, str, int], np.ndarray] = {}
    for side, res in (("C++", cpp), ("Python", py)):
        if res is not None:
            results.update({(side, op, t): v for (op, t), v in res.items() if op in truths})
    errors = _measure_all(results, truths)
    return _Sides(inp, truths, torch, cpp, py, info, missing, results, errors)


def _op_outcome(s: _Sides, op: str, t: int, side: str) -> Outcome:
    """Op ``op`` on one side at ``t`` threads; its note compares it with the other side's."""
    backend = "libtorch" if side == "C++" else "torch"
    name = _name(op, side, t)
    if (side, op, t) not in s.results:
        reason = s.missing.get(backend, "")
        return Outcome.missing(name, backend, reason, settings={"threads": t})
    version = s.torch.__version__ if side == "Python" else s.info.torch_version
    value, error = s.results[(side, op, t)], s.errors[(side, op, t)]
    other = s.results.get(("Python" if side == "C++" else "C++", op, t))
    note = "" if other is None else "bits differ from the other language"
    if other is not None and sides.same_bits(other, value):
        note = "same bits as the other language"
    settings = {"threads": t}
    return Outcome(
        name, backend, value=value, error=error, version=version, settings=settings, note=note
    )


def _torch_ops(s: _Sides, part: Part) -> None:
    """The four torch ops, both sides, both thread counts."""
    for op in sides.TORCH_OPS:
        for t in THREADS:
            part.outcomes += [_op_outcome(s, op, t, side) for side in ("C++", "Python")]
    for op in sides.TORCH_OPS if s.cpp is not None and s.py is not None else ():
        part.claims[f"{op}_same_bits"] = C[f"{op}_same_bits"].claim(
            all(sides.same_bits(s.cpp[(op, t)], s.py[(op, t)]) for t in THREADS),
            " at 1 and at 2 threads, on the same input bits",
        )


def _sum(s: _Sides, part: Part) -> bool:
    """The sum: the thread count explains it, the emulator reproduces it. Whether the
    emulated 1- and 2-thread sums differ."""
    emulated = {t: np.asarray(orders.emulate(s.inp.v, "torch", t)) for t in THREADS}
    for t in THREADS:
        part.outcomes.append(
            Outcome.measured(
                _name("sum", "orders.emulate 'torch'", t),
                "fpexplore.orders",
                emulated[t],
                s.truths["sum"],
                kind="emulator",
                settings={"threads": t},
            )
        )
    cpp, py, ref = s.cpp, s.py, s.ref
    if cpp is not None and py is not None:
        part.claims["emulator_reproduces_sum"] = C["emulator_reproduces_sum"].claim(
            all(sides.same_bits(emulated[t], cpp[("sum", t)]) for t in THREADS)
            and all(sides.same_bits(cpp[("sum", t)], py[("sum", t)]) for t in THREADS)
        )
    differ = not sides.same_bits(emulated[1], emulated[2])
    if ref is not None:
        part.claims["threads_explain_sum"] = C["threads_explain_sum"].claim(
            (not sides.same_bits(ref[("sum", 1)], ref[("sum", 2)])) == differ
        )
    part.observations["sum_threads_differ"] = S["sum_threads_differ"].observe(
        differ,
        "torch splits a sum over threads only above 32768 elements",
        f" ({len(s.inp.v)} elements)",
    )
    for op in ("mm", "grad", "mlp") if ref is not None else ():
        part.observations[f"{op}_threads_differ"] = S[f"{op}_threads_differ"].observe(
            not sides.same_bits(ref[(op, 1)], ref[(op, 2)]),
            "depends on the CPU, MKL/oneDNN and the shapes",
        )
    return differ


def _loop(s: _Sides, part: Part) -> None:
    """The user's own loop, plain and -ffast-math."""
    emu = {"loop_sum": loops.plain(s.inp.v), "loop_sum_fastmath": loops.lanes(s.inp.v)}
    for op, label, emu_label in (
        ("loop_sum", "C++ -O2", "sequential emulator"),
        ("loop_sum_fastmath", "C++ -O3 -ffast-math", "4-lane emulator"),
    ):
        if s.cpp is None:
            why_not = "; ".join(s.missing.values())
            part.outcomes.append(Outcome.missing(f"loop · {label}", "c++", why_not))
        else:
            part.outcomes.append(
                Outcome(
                    f"loop · {label}",
                    "c++",
                    value=s.cpp[(op, 0)],
                    error=s.errors[("C++", op, 0)],
                    settings={"flags": label.removeprefix("C++ ")},
                )
            )
        part.outcomes.append(
            Outcome.measured(
                f"loop · {emu_label}", "fpexplore.orders", emu[op], s.truths["sum"], kind="emulator"
            )
        )
    if s.cpp is None:
        return
    plain, fast = s.cpp[("loop_sum", 0)], s.cpp[("loop_sum_fastmath", 0)]
    part.claims["plain_loop_is_sequential"] = C["plain_loop_is_sequential"].claim(
        sides.same_bits(plain, emu["loop_sum"])
    )
    part.observations["fastmath_changes_loop"] = S["fastmath_changes_loop"].observe(
        not sides.same_bits(plain, fast)
    )
    part.observations["fastmath_is_4_lanes"] = S["fastmath_is_4_lanes"].observe(
        sides.same_bits(fast, emu["loop_sum_fastmath"]),
        "another compiler, -march or CPU vectorizes differently",
    )


def _rng(s: _Sides, part: Part) -> None:
    """RNG: torch::manual_seed + torch::randn vs torch.manual_seed + torch.randn."""
    seed, cpp, py, ref = s.inp.seed, s.cpp, s.py, s.ref
    if cpp is not None and py is not None:
        rng_same = all(sides.same_bits(cpp[(k, 0)], py[(k, 0)]) for k in ("randn", "rand"))
        part.claims["randn_same_bits"] = C["randn_same_bits"].claim(
            rng_same, f" (seed {seed}, {inputs.RNG_N} numbers)"
        )
    if ref is None:
        return
    capability = s.info.cpu_capability if s.info else ""
    if not capability and s.torch is not None:
        capability = s.torch.backends.cpu.get_cpu_capability()
    emu = _rng_emulated(seed, inputs.RNG_N, capability)
    for side, backend, res in (("C++", "libtorch", cpp), ("Python", "torch", py)):
        if res is not None:
            value, name = res[("randn", 0)], f"randn · {side}"
            part.outcomes.append(Outcome(name, backend, value=value, settings={"seed": seed}))
    if emu is not None:
        part.outcomes.append(
            Outcome(
                "randn · fpexplore.rng MT19937",
                "fpexplore.rng",
                kind="emulator",
                value=emu,
                settings={"seed": seed},
            )
        )
        part.observations["randn_rebuilt"] = S["randn_rebuilt"].observe(
            sides.same_bits(emu, ref[("randn", 0)]), f"CPU path {capability or 'unknown'}"
        )


def compute(seed: int, size: int, sum_length: int, cuda: str) -> Comparison:
    s = _run_sides(seed, size, sum_length)
    part = Part()
    _torch_ops(s, part)
    sum_threads_differ = _sum(s, part)
    _loop(s, part)
    _rng(s, part)
    cu = cuda_view.compare(cuda)  # the custom CUDA kernels (live, or the recorded run)
    return Comparison(
        outcomes=tuple(part.outcomes + cu.outcomes),
        claims=part.claims | cu.claims,
        missing=cu.missing | s.missing,
        data=LibtorchData(THREADS, s.inp, sum_threads_differ, cu.data),
        explanation=EXPLANATION,
        observations=part.observations | cu.observations,
    )


LESSON = Lesson(
    name="libtorch_vs_pytorch",
    title="LibTorch (C++) vs PyTorch: the same bits, unless a setting differs",
    summary="mm, autograd, an MLP and sum in a real C++ LibTorch program and in Python at 1 and "
    "2 threads against the exact results; RNG seeds; -ffast-math on your own loop; custom CUDA "
    "kernels vs cuBLAS and atomics",
    params=(
        Interval(
            "seed",
            0,
            "seed of the numpy inputs and of torch's generator",
            0,
            2**31 - 1,
            integer=True,
        ),
        Options(
            "size", 64, "n of the n x n matrices (mm, gradient)", choices=(16, 32, 64, 128, 256)
        ),
        Options(
            "sum_length",
            100_000,
            "elements summed (threads split sums above 32768)",
            choices=(1_000, 10_000, 100_000, 1_000_000),
        ),
        Options(
            "cuda",
            "auto",
            "CUDA kernels: 'auto' (live with a GPU and nvcc, else the "
            "recorded run), 'recorded', or 'live'",
            choices=("auto", "recorded", "live"),
        ),
    ),
    compute=compute,
    explanation=EXPLANATION,
    quick={"size": 16, "sum_length": 1_000, "cuda": "recorded"},
    claims=CLAIMS,
    observations=OBSERVATIONS,
    data=LibtorchData,
)
