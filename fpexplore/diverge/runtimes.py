"""Captures from runtimes that load a TorchScript export: DJL and the LibTorch program.

Both run the file written by `export.export_taps` (every layer's inputs and output as one flat
tuple) and give a `Capture` like `capture_torch`'s, so `compare` measures them the same way:

- `capture_djl`: DJL's PyTorch engine in the JVM worker (`fpexplore.jvm`), i.e. the libtorch
  DJL ships (2.7.1 for DJL 0.36.0), not the installed torch's;
- `capture_libtorch`: the C++ program built against the installed torch wheel's libtorch
  (`fpexplore.backends.libtorch_program`), TorchScript interpreter instead of Python eager.

Neither imports torch into the runtime's process; without Java/the jars or the built program
they raise `BackendUnavailable` naming the fix.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .capture import Capture
from .export import export_taps, file_format_version

#: The newest TorchScript file format libtorch reads (``kMaxSupportedFileFormatVersion`` in
#: caffe2/serialize/versions.h; 0xA in the installed torch's headers). The zoo's exports are
#: written as version 3 (the oldest format holding their ops), which DJL's libtorch loads.
DJL_MAX_FILE_FORMAT = 0xA


def _inputs(inputs: tuple[Any, ...]) -> list[np.ndarray]:
    return [np.ascontiguousarray(np.asarray(x)) for x in inputs]


def capture_djl(model: Any, *inputs: Any, name: str = "DJL", timeout: float = 300.0) -> Capture:
    """Export ``model`` (a torch module) with its layer taps and run it once in DJL's PyTorch
    engine (``Model.load``, a ``NoopTranslator`` predictor): the bits DJL's libtorch computed."""
    from ..backends import djl
    from ..errors import BackendUnavailable
    from ..jvm import client
    from ..jvm.protocol import pack, unpack

    djl.require()
    xs = _inputs(inputs)
    with tempfile.TemporaryDirectory(prefix="fpx-djl-") as tmp:
        exp = export_taps(model, xs, Path(tmp) / "model.pt")
        version = file_format_version(exp.path)
        if version > DJL_MAX_FILE_FORMAT:
            raise BackendUnavailable(
                "djl",
                f"torch {exp.torch_version} wrote TorchScript file format {version}; DJL's "
                f"libtorch {djl.artifacts.LIBTORCH_VERSION} reads up to {DJL_MAX_FILE_FORMAT}.",
                "export with a torch no newer than DJL's libtorch",
            )
        got = client.call(
            "run_torchscript",
            timeout=timeout,
            path=str(exp.path),
            inputs=[pack(x, "input") for x in xs],
        )
    arrays = [unpack(a) for a in got["outputs"]]
    return Capture(name, djl.version(), exp.taps(arrays))


def capture_libtorch(
    model: Any, *inputs: Any, threads: int = 1, name: str = "LibTorch", timeout: float = 300.0
) -> Capture:
    """Export ``model`` with its layer taps and run it once in the C++ LibTorch program
    (``torch::jit::load``, forward under no-grad, ``threads`` intra-op threads)."""
    from ..backends import libtorch_program
    from ..errors import InvalidParameter

    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256:
        raise InvalidParameter("threads", threads, "an int in the range [1, 256]", name)
    libtorch_program._require()
    xs = _inputs(inputs)
    with tempfile.TemporaryDirectory(prefix="fpx-libtorch-") as tmp:
        exp = export_taps(model, xs, Path(tmp) / "model.pt")
        arrays, info, _ = libtorch_program.run_script(exp.path, xs, threads, timeout)
    version = f"LibTorch {info.torch_version} (C++, TorchScript)"
    return Capture(name, version, exp.taps(arrays))
