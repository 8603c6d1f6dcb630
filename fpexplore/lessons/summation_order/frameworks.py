"""Run the real frameworks' sum on one array, now: numpy, torch, TensorFlow, DJL, a Java loop.

Each runner returns a `Ran` (the result as a numpy scalar of the input's format, the version,
the settings it really ran with, a note) or raises `BackendUnavailable` with the fix. Frameworks
are imported on first use only, through `fpexplore.backends`.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import backends
from ...errors import BackendUnavailable
from .._base import torch_threads
from .inputs import in_format

_TF_FIX_NOTE = (
    "TensorFlow fixes its intra-op thread count the first time it runs in a process; restart "
    "the kernel to run it with another count."
)


@dataclass(frozen=True)
class Ran:
    """One framework's result: ``value`` is a numpy scalar in the input's format."""

    value: Any
    version: str
    settings: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    threads: int = 1  # the thread count it really ran with (for its emulator)


def run_numpy(x: np.ndarray) -> Ran:
    note = ""
    if x.dtype.name == "bfloat16":
        note = "numpy has no bfloat16: ml_dtypes.bfloat16 (adds in bfloat16, left to right)"
    return Ran(in_format(np.sum(x), x.dtype), np.__version__, {"call": "np.sum(x)"}, note)


def run_torch(x: np.ndarray, threads: int) -> Ran:
    """``torch.sum`` on CPU with ``torch.set_num_threads(threads)``, restored afterwards."""
    torch = backends.load("torch")
    if x.dtype.name == "bfloat16":  # same bits, viewed as torch.bfloat16
        t = torch.from_numpy(x.view(np.uint16).view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(x)
    with torch_threads(torch, threads) as ran_with:
        result = torch.sum(t)
    value = in_format(
        result.float().item() if result.dtype == torch.bfloat16 else result.numpy(), x.dtype
    )
    settings = {"call": "torch.sum(x)", "torch.set_num_threads": ran_with}
    return Ran(value, torch.__version__, settings, threads=ran_with)


_tf_state: dict[str, Any] = {}


def tensorflow_threads(requested: int) -> tuple[int, bool]:
    """Ask TensorFlow for ``requested`` intra-op threads; returns (threads it runs with, whether
    that is what was asked). Only possible before TensorFlow first runs in this process."""
    tf = backends.load("tensorflow")
    cfg = tf.config.threading
    if "tried" not in _tf_state:
        _tf_state["tried"] = True
        # RuntimeError: TensorFlow already ran in this process, its pool is fixed
        with contextlib.suppress(RuntimeError):
            cfg.set_intra_op_parallelism_threads(requested)
    configured = cfg.get_intra_op_parallelism_threads()
    actual = configured or _tf_default_threads()
    return actual, actual == requested


def _tf_default_threads() -> int:
    """TensorFlow's intra-op default: $TF_NUM_INTRAOP_THREADS, else the schedulable CPUs."""
    env = os.environ.get("TF_NUM_INTRAOP_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def run_tensorflow(x: np.ndarray, threads: int) -> Ran:
    """``tf.reduce_sum`` on CPU; the thread count is the one TensorFlow really runs with."""
    actual, as_asked = tensorflow_threads(threads)
    tf = backends.load("tensorflow")
    with tf.device("/CPU:0"):
        result = tf.reduce_sum(tf.constant(x))
    value = in_format(result.numpy(), x.dtype)
    note = "" if as_asked else f"asked for {threads} thread(s), ran with {actual}: {_TF_FIX_NOTE}"
    settings = {"call": "tf.reduce_sum(x)", "intra-op threads": actual}
    return Ran(value, tf.__version__, settings, note, actual)


_java_version: dict[str, str] = {}


def run_djl(x: np.ndarray, threads: int) -> Ran:
    """DJL ``NDArray.sum()`` in the JVM worker (libtorch's order) with ``threads`` libtorch
    intra-op threads, the worker's own count restored afterwards."""
    djl = backends.load("djl")  # BackendUnavailable with the fix when Java/jars are missing
    before = djl.threads()
    ran_with = djl.set_threads(threads) if before != threads else before
    try:
        result = djl.ndsum(x)
    finally:
        if before != threads:
            djl.set_threads(before)
    settings = {"call": "NDArray.sum()", "libtorch threads": ran_with}
    return Ran(in_format(result, x.dtype), djl.version(), settings, threads=ran_with)


def run_java(x: np.ndarray) -> Ran:
    """``float s = 0; for (float v : x) s += v;`` in Java (``double`` for float64), in the JVM
    of DJL's worker: where it cannot start, Java is what is missing."""
    try:
        djl = backends.load("djl")
    except BackendUnavailable as exc:
        raise BackendUnavailable("the Java loop (DJL's JVM)", exc.reason, exc.fix) from None
    if "java" not in _java_version:
        _java_version["java"] = "Java " + str(djl.info().get("java_version", ""))
    acc = "double" if x.dtype == np.float64 else "float"
    value = in_format(djl.java_loop_sum(x), x.dtype)
    return Ran(value, _java_version["java"], {"call": f"{acc} s = 0; for (v : x) s += v;"})
