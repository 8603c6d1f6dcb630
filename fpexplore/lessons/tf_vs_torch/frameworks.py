"""What every section shares: loading both frameworks, their versions and thread settings,
inputs on a format's grid with identical bits in both, and the section result."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import backends, formats
from ...errors import BackendUnavailable
from ...result import Claim, Observation, Outcome
from ...result.spec import ClaimSpec, declare_texts
from .data import NotRun, SectionData

#: a fix that computes in float64 and rounds once is correctly rounded, give or take the
#: float64 computation's own error and the float32 step on the way to float16/bfloat16
ROUND_ONCE_BOUND = 0.5 + 2.0**-12


@dataclass
class Frameworks:
    """torch, TensorFlow and Keras modules, loaded through the backend registry."""

    torch: Any
    tf: Any
    keras: Any

    def env(self) -> dict[str, Any]:
        """Versions and thread settings, printed by every section."""
        t = self.tf.config.threading
        return {
            "torch": self.torch.__version__,
            "tensorflow": self.tf.__version__,
            "keras": self.keras.__version__,
            "numpy": np.__version__,
            "torch threads": self.torch.get_num_threads(),
            "torch interop threads": self.torch.get_num_interop_threads(),
            "tf intra-op threads": t.get_intra_op_parallelism_threads() or "default (0)",
            "tf inter-op threads": t.get_inter_op_parallelism_threads() or "default (0)",
            "cpu count": os.cpu_count(),
        }

    def measured(
        self,
        lib: str,
        implementation: str,
        value: Any,
        truth: Any,
        *,
        note: str = "",
        at: Any = None,
        **settings: Any,
    ) -> Outcome:
        """One framework's row, measured against ``truth`` (``at``: the magnitudes whose ULP
        counts the errors, `fpexplore.metrics.measure`). ``lib`` is "torch", "tensorflow" or
        "keras" (a TensorFlow row that names Keras's version); the row's settings are its
        framework's thread settings plus ``settings``."""
        module = {"torch": self.torch, "tensorflow": self.tf, "keras": self.keras}[lib]
        if lib == "torch":
            threads = {"threads": self.torch.get_num_threads()}
        else:
            threads = {
                "intra_op_threads": self.tf.config.threading.get_intra_op_parallelism_threads()
            }
        return Outcome.measured(
            implementation,
            "torch" if lib == "torch" else "tensorflow",
            value,
            truth,
            at=at,
            version=module.__version__,
            settings={**threads, **settings},
            note=note,
        )


def load() -> Frameworks:
    """Both frameworks, or `BackendUnavailable` naming the missing one and its fix."""
    torch = backends.load("torch")  # torch first: see backends._TensorFlow.load
    return Frameworks(torch, backends.load("tensorflow"), backends.load("keras"))


#: What the sections observe (each where it runs): findings that depend on the CPU, the
#: thread pools and the versions.
OBSERVATIONS = declare_texts(
    {
        "versions_threads": "versions and thread settings of this run",
        "seed_bits": "elements of the op on [1, 2, 3] in float32 whose bits differ between "
        "torch and TensorFlow on this CPU",
        "bits_differ": "elements of the op whose bits differ between torch and TensorFlow",
        "identical_steps": "steps where torch's and Keras's h are bit-identical",
        "torch_sums_by_threads": "torch.sum at 1, 2, 4, 8 threads",
        "tf_pool_matches": "thread counts whose Eigen emulation equals this TensorFlow's sum",
        "higher_order_bits_differ": "values whose bits differ between torch and TensorFlow "
        "(their exp/sin/tanh kernels round differently)",
        "lstsq_float32": "lstsq's x[2] for b = 1 in float32 (TensorFlow solves the normal "
        "equations by Cholesky: no cut-off)",
        "xla_rows_differ": "rows where XLA's log-sum-exp bits differ from eager's",
        "lse_function_same_seeds": "seeds where default tf.function's log-sum-exp has eager's bits",
        "divide_differ_arithmetic_off": "x / 3.0 elements (by seed) that differ from eager with "
        "only the arithmetic optimizer off: it is not the switch",
        "xla_divide_same_seeds": "seeds where XLA's x / 3.0 has eager's bits",
    },
    ("torch", "tensorflow"),
)


@dataclass
class Section:
    """What one section (one value of ``op``) found."""

    outcomes: list[Outcome]
    claims: dict[str, Claim]
    truth: Any
    data: SectionData
    observations: dict[str, Observation] = field(default_factory=dict)
    #: why a part the claims need is missing (`Comparison.missing`)
    missing: dict[str, str] = field(default_factory=dict)


def unavailable(exc: BackendUnavailable, rows: tuple[tuple[str, str], ...]) -> Section:
    """The section when a framework is missing: its rows say why and how to fix it, its
    claims are not checked (`Lesson.run` settles them, naming the missing framework)."""
    reason = f"{exc.reason} To fix it, run: {exc.fix}" if exc.fix else exc.reason
    why = f"{exc.backend} is missing; run {exc.fix}" if exc.fix else f"{exc.backend} is missing"
    outcomes = [Outcome.missing(name, backend, reason) for name, backend in rows]
    not_run = NotRun(missing=exc.backend, fix=exc.fix)
    return Section(outcomes, {}, None, not_run, missing={exc.backend: why})


def raised(
    exc: Exception, rows: tuple[tuple[str, str], ...], claims: dict[str, ClaimSpec]
) -> Section:
    """The section when a framework raised inside its kernel (e.g. TensorFlow's oneDNN
    softmax has no bfloat16 primitive when oneDNN is capped at AVX2): every row says which
    framework raised and what, the claims are not checked, never failed."""
    module = type(exc).__module__.split(".")[0]
    who = {"tensorflow": "TensorFlow", "keras": "Keras", "torch": "torch"}.get(module, module)
    text = str(exc).strip()
    if "message:" in text:  # TensorFlow's status: the words after its op-name preamble
        text = text.split("message:", 1)[1]
    message = (text.strip().splitlines() or [""])[0].split(". Run workload")[0][:240]
    reason = (
        f"{who} raised {type(exc).__name__} on this machine's path ({message}); "
        "a framework error under these settings, not a verdict on the claim"
    )
    outcomes = [Outcome.missing(name, backend, reason) for name, backend in rows]
    checked = {key: spec.not_checked(reason) for key, spec in claims.items()}
    return Section(outcomes, checked, None, NotRun(raised=f"{who}: {type(exc).__name__}"))


def shown(
    outcomes: dict[str, Outcome], agree: bool, fixed: list[str], defaults: list[str]
) -> list[Outcome]:
    """The rows a section shows: those of the one-line fix when ``agree``, else those of the
    defaults."""
    return [outcomes[k] for k in (fixed if agree else defaults)]


def on_grid(values: np.ndarray, dtype: str) -> np.ndarray:
    """``values`` rounded once (correctly) to ``dtype``, as a numpy array of that dtype
    (ml_dtypes bfloat16 for bfloat16): the bits both frameworks receive."""
    rounded = formats.round_array(np.asarray(values, dtype=np.float64), dtype)
    return np.asarray(rounded).astype(np_dtype(dtype))


def np_dtype(dtype: str) -> Any:
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return np.dtype(dtype)


def to_torch(fw: Frameworks, a: np.ndarray, requires_grad: bool = False) -> Any:
    """A torch tensor with exactly the bits of ``a`` (bfloat16 via float32, exact)."""
    t = fw.torch
    if a.dtype.name == "bfloat16":
        out = t.from_numpy(a.astype(np.float32)).to(t.bfloat16)
    else:
        out = t.from_numpy(np.ascontiguousarray(a).copy())
    return out.requires_grad_(requires_grad)


def to_tf(fw: Frameworks, a: np.ndarray) -> Any:
    """A TensorFlow tensor with exactly the bits of ``a``."""
    tf = fw.tf
    if a.dtype.name == "bfloat16":
        return tf.cast(tf.constant(a.astype(np.float32)), tf.bfloat16)
    return tf.constant(a)


def from_torch(t: Any) -> np.ndarray:
    """A numpy array with the tensor's dtype and bits (bfloat16 as ml_dtypes)."""
    t = t.detach().cpu()
    if str(t.dtype) == "torch.bfloat16":
        return t.float().numpy().astype(np_dtype("bfloat16"))
    return t.numpy()


def from_tf(t: Any) -> np.ndarray:
    return np.asarray(t.numpy() if hasattr(t, "numpy") else t)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit equality (NaNs with equal payloads are equal, +0 differs from -0)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def n_different(a: np.ndarray, b: np.ndarray) -> int:
    """Elements whose bits differ."""
    a, b = np.asarray(a), np.asarray(b)
    view = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    return int((a.view(view) != b.view(view)).sum())


def rounded_once(values: list[Any], errors: list[float]) -> bool:
    """Whether a fix's results are equal bit for bit, each within `ROUND_ONCE_BOUND` ULP."""
    same = all(same_bits(v, values[0]) for v in values)
    return same and all(e <= ROUND_ONCE_BOUND for e in errors)


def abs_error(y: np.ndarray, truth: Any) -> np.ndarray:
    """|y - exact| elementwise, in float64."""
    return np.abs(y.astype(np.float64) - truth.split()[0])


def rng(seed: int, salt: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64([seed, salt]))
