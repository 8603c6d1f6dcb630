"""The JVM worker process: ``python -m fpexplore.jvm.worker READ_FD WRITE_FD THREADS MODE``.

It starts the JVM with JPype, then answers requests from `fpexplore.jvm.client` until its pipe
closes. MODE ``djl``: DJL jars + fpexplore's helpers on the class path, offline, CPU libtorch;
MODE ``java``: the JVM alone (``java.util.Random``, no DJL set-up needed). It never imports
torch: DJL's libtorch and Python's torch must not share a process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from . import artifacts, protocol


class Java:
    """The started JVM and the DJL objects every operation needs."""

    def __init__(self, threads: int, djl: bool = True) -> None:
        import jpype
        import jpype.imports  # enables `from ai.djl... import ...`

        # DJL_OFFLINE, PYTORCH_FLAVOR and DJL_CACHE_DIR come from `client.Worker`'s environment
        jpype.startJVM(
            "-Xrs",  # the JVM leaves SIGTERM/SIGINT/SIGHUP to this process (see `serve`)
            "-Dai.djl.offline=true",
            f"-Dai.djl.pytorch.num_threads={threads}",
            "-Dai.djl.pytorch.num_interop_threads=1",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-Djava.awt.headless=true",
            # Memory (the worker shares a 2 GB Binder session with the kernel): a heap that
            # starts small and grows as needed under the serial collector, and the client
            # compiler only; about 20 MB less resident than the JVM's defaults.
            "-XX:+UseSerialGC",
            "-Xms16m",
            "-Xmx1g",
            "-XX:TieredStopAtLevel=1",
            "-XX:ReservedCodeCacheSize=48m",
            # a crash report where the client reads it back (`client.fatal_signal`): the JVM
            # catches SIGSEGV, SIGBUS, SIGFPE and SIGILL, writes this file and aborts
            f"-XX:ErrorFile={artifacts.djl_dir() / 'hs_err_worker_%p.log'}",
            classpath=artifacts.classpath() if djl else [],
            convertStrings=True,
        )
        self.jpype = jpype
        if not djl:
            return
        from ai.djl.engine import Engine  # type: ignore[import-not-found]

        self.engine = Engine.getEngine("PyTorch")
        self.manager = self.engine.newBaseManager()
        self.Fpx = jpype.JClass("fpexplore.Fpx")
        self.JniUtils = jpype.JClass("ai.djl.pytorch.jni.JniUtils")

    # -- bits in and out
    def array(self, manager: Any, packed: dict[str, Any]) -> Any:
        raw = self.jpype.JArray(self.jpype.JByte)(packed["bits"])
        shape = self.jpype.JArray(self.jpype.JLong)(list(packed["shape"]))
        return self.Fpx.fromBytes(manager, raw, shape, packed["dtype"])

    def shape(self, dims: list[int]) -> Any:
        from ai.djl.ndarray.types import Shape  # type: ignore

        return Shape(self.jpype.JArray(self.jpype.JLong)([int(d) for d in dims]))

    def bits(self, nd: Any) -> dict[str, Any]:
        return {
            "dtype": np.dtype(str(nd.getDataType().asNumpy())).name,
            "shape": tuple(int(s) for s in nd.getShape().getShape()),
            "bits": bytes(memoryview(self.Fpx.toBytes(nd))),
        }


class Ops:
    """One method per request name; arguments arrive as keywords, arrays packed as bits."""

    def __init__(self, java: Java) -> None:
        self.j = java

    def info(self) -> dict[str, Any]:
        System = self.j.jpype.JClass("java.lang.System")
        return {
            **self.jvm_info(),
            "engine": str(self.j.engine.getEngineName()),
            "engine_version": str(self.j.engine.getVersion()),
            "djl_version": artifacts.DJL_VERSION,
            "threads": int(self.j.JniUtils.getNumThreads()),
            "interop_threads": int(self.j.JniUtils.getNumInteropThreads()),
            "offline": {
                "DJL_OFFLINE": os.environ.get("DJL_OFFLINE"),
                "ai.djl.offline": str(System.getProperty("ai.djl.offline")),
                "Utils.isOfflineMode": bool(
                    self.j.jpype.JClass("ai.djl.util.Utils").isOfflineMode()
                ),
            },
            "djl_cache_dir": os.environ.get("DJL_CACHE_DIR"),
        }

    def jvm_info(self) -> dict[str, Any]:
        """What any worker answers, DJL set up or not."""
        System = self.j.jpype.JClass("java.lang.System")
        return {
            "java_version": str(System.getProperty("java.version")),
            "pid": os.getpid(),
            "torch_imported": "torch" in sys.modules,
        }

    def java_random(self, seeds: list[int], n: int) -> dict[int, dict[str, bytes]]:
        """Per seed, ``n`` draws of ``new java.util.Random(seed)``'s nextFloat, nextDouble,
        nextGaussian and nextInt (each kind from a fresh generator), as raw bits."""
        Random, JLong = self.j.jpype.JClass("java.util.Random"), self.j.jpype.JLong
        kinds = {"float": np.float32, "double": np.float64, "gaussian": np.float64, "int": np.int32}
        out: dict[int, dict[str, bytes]] = {}
        for seed in map(int, seeds):
            out[seed] = {}
            for kind, dtype in kinds.items():
                draw = getattr(Random(JLong(seed)), "next" + kind.capitalize())
                out[seed][kind] = np.array([draw() for _ in range(int(n))], dtype=dtype).tobytes()
        return out

    def set_threads(self, n: int) -> int:
        self.j.JniUtils.setNumThreads(int(n))
        return int(self.j.JniUtils.getNumThreads())

    def _unary(self, x: dict[str, Any], fn: Any) -> dict[str, Any]:
        with self.j.manager.newSubManager() as m:
            return self.j.bits(fn(self.j.array(m, x)))

    def roundtrip(self, x: dict[str, Any]) -> dict[str, Any]:
        return self._unary(x, lambda a: a)

    def sum(self, x: dict[str, Any]) -> dict[str, Any]:
        return self._unary(x, lambda a: a.sum())

    def mean(self, x: dict[str, Any]) -> dict[str, Any]:
        return self._unary(x, lambda a: a.mean())

    def std(self, x: dict[str, Any]) -> dict[str, Any]:
        return self._unary(x, lambda a: a.sub(a.mean()).square().mean().sqrt())

    def normalize_by_stats(self, x: dict[str, Any]) -> dict[str, Any]:
        """(x - x.mean()) / population std, all in DJL NDArray ops."""
        return self._unary(x, lambda a: a.sub(a.mean()).div(a.sub(a.mean()).square().mean().sqrt()))

    def to_tensor(self, x: dict[str, Any]) -> dict[str, Any]:
        from ai.djl.modality.cv.transform import ToTensor  # type: ignore[import-not-found]

        return self._unary(x, lambda a: ToTensor().transform(a))

    def normalize(self, x: dict[str, Any], mean: list[float], std: list[float]) -> dict:
        from ai.djl.modality.cv.transform import Normalize  # type: ignore[import-not-found]

        f = self.j.jpype.JArray(self.j.jpype.JFloat)
        return self._unary(x, lambda a: Normalize(f(mean), f(std)).transform(a))

    def _interp(self, name: str) -> Any:
        from ai.djl.modality.cv import Image  # type: ignore[import-not-found]

        return Image.Interpolation.valueOf(name.upper())

    def resize(
        self,
        x: dict[str, Any],
        width: int,
        height: int | None = None,
        interpolation: str | None = None,
    ) -> dict[str, Any]:
        from ai.djl.modality.cv.transform import Resize  # type: ignore[import-not-found]

        if interpolation is None:
            t = Resize(int(width)) if height is None else Resize(int(width), int(height))
        else:
            h = int(height if height is not None else width)
            t = Resize(int(width), h, self._interp(interpolation))
        return self._unary(x, lambda a: t.transform(a))

    def resize_short(
        self, x: dict[str, Any], short_edge: int, long_edge: int, interpolation: str
    ) -> dict[str, Any]:
        from ai.djl.modality.cv.transform import ResizeShort  # type: ignore

        t = ResizeShort(int(short_edge), int(long_edge), self._interp(interpolation))
        return self._unary(x, lambda a: t.transform(a))

    def center_crop(self, x: dict[str, Any], width: int, height: int) -> dict[str, Any]:
        from ai.djl.modality.cv.transform import CenterCrop  # type: ignore

        return self._unary(x, lambda a: CenterCrop(int(width), int(height)).transform(a))

    def crop(self, x: dict[str, Any], left: int, top: int, width: int, height: int) -> dict:
        from ai.djl.modality.cv.util import NDImageUtils  # type: ignore

        return self._unary(
            x, lambda a: NDImageUtils.crop(a, int(left), int(top), int(width), int(height))
        )

    def round_uint8(self, x: dict[str, Any]) -> dict[str, Any]:
        """``x.round().clip(0, 255).toType(UINT8, false)``: round half to even, clamp, cast."""
        from ai.djl.ndarray.types import DataType  # type: ignore

        return self._unary(x, lambda a: a.round().clip(0, 255).toType(DataType.UINT8, False))

    def to_float32(self, x: dict[str, Any]) -> dict[str, Any]:
        from ai.djl.ndarray.types import DataType  # type: ignore

        return self._unary(x, lambda a: a.toType(DataType.FLOAT32, False))

    def decode(self, path: str, flag: str = "color") -> dict[str, Any]:
        from ai.djl.modality.cv import BufferedImageFactory, Image  # type: ignore
        from java.nio.file import Paths  # type: ignore[import-not-found]

        image = BufferedImageFactory().fromFile(Paths.get(str(Path(path).resolve())))
        with self.j.manager.newSubManager() as m:
            return self.j.bits(image.toNDArray(m, Image.Flag.valueOf(flag.upper())))

    def random(self, kind: str, seed: int, shape: list[int], a: float, b: float) -> dict[str, Any]:
        from ai.djl.ndarray.types import DataType  # type: ignore

        self.j.engine.setRandomSeed(int(seed))
        with self.j.manager.newSubManager() as m:
            draw = m.randomUniform if kind == "uniform" else m.randomNormal
            return self.j.bits(draw(float(a), float(b), self.j.shape(shape), DataType.FLOAT32))

    def dropout(self, seed: int, n: int, rate: float) -> dict[str, Any]:
        """``ai.djl.nn.norm.Dropout.dropout`` of n ones in training mode after
        ``Engine.setRandomSeed(seed)``."""
        from ai.djl.ndarray.types import DataType  # type: ignore
        from ai.djl.nn.norm import Dropout  # type: ignore

        self.j.engine.setRandomSeed(int(seed))
        with self.j.manager.newSubManager() as m:
            ones = m.ones(self.j.shape([n]), DataType.FLOAT32)
            return self.j.bits(Dropout.dropout(ones, float(rate), True).singletonOrThrow())

    def default_init(self, seed: int, block: str, inputs: int, units: int) -> dict[str, Any]:
        """The parameters a ``Linear`` (or ``Conv2d`` with 3x3 kernels) block gets from its
        default initializer after ``Engine.setRandomSeed(seed)``, by parameter name."""
        from ai.djl.ndarray.types import DataType, Shape  # type: ignore
        from ai.djl.nn.convolutional import Conv2d  # type: ignore
        from ai.djl.nn.core import Linear  # type: ignore

        if block == "linear":
            b = Linear.builder().setUnits(int(units)).build()
            dims = self.j.shape([1, inputs])
        else:
            kernel = self.j.shape([3, 3])
            b = Conv2d.builder().setKernelShape(kernel).setFilters(int(units)).build()
            dims = self.j.shape([1, inputs, 8, 8])
        self.j.engine.setRandomSeed(int(seed))
        with self.j.manager.newSubManager() as m:
            b.initialize(m, DataType.FLOAT32, self.j.jpype.JArray(Shape)([dims]))
            return {
                str(pair.getKey()): self.j.bits(pair.getValue().getArray())
                for pair in b.getParameters()
            }

    def java_names(self, names: list[str]) -> dict[str, bool]:
        """Whether each ``package.Class`` or ``package.Class#method`` exists on the class path."""
        found = {}
        for name in names:
            cls, _, method = name.partition("#")
            try:
                c = self.j.jpype.JClass(cls)
            except Exception:  # ClassNotFoundException, as a Python exception
                found[name] = False
                continue
            found[name] = not method or any(
                str(m.getName()) == method for m in c.class_.getMethods()
            )
        return found

    def java_loop_sum(self, x: dict[str, Any]) -> Any:
        arr = protocol.unpack(x).ravel()
        jp = self.j.jpype
        if arr.dtype == np.float32:
            return float(self.j.Fpx.floatLoopSum(jp.JArray(jp.JFloat)(arr)))
        return float(self.j.Fpx.doubleLoopSum(jp.JArray(jp.JDouble)(arr.astype(np.float64))))

    def java_random_floats(self, seed: int, n: int) -> dict[str, Any]:
        out = np.asarray(self.j.Fpx.randomFloats(int(seed), int(n)), dtype=np.float32)
        return protocol.pack(out)

    def run_torchscript(self, path: str, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        """Load the TorchScript file ``path`` as a DJL PyTorch model (``Model.load``, a
        ``PtSymbolBlock``), run ``forward`` once on ``inputs`` through a predictor with
        ``NoopTranslator``, and return every array of the resulting NDList (a returned tuple
        arrives flattened) as bits, with the load and run times."""
        import time

        from ai.djl import Model  # type: ignore[import-not-found]
        from ai.djl.ndarray import NDList  # type: ignore[import-not-found]
        from ai.djl.translate import NoopTranslator  # type: ignore[import-not-found]
        from java.nio.file import Paths  # type: ignore[import-not-found]

        file = Path(path).resolve()
        if file.suffix != ".pt" or not file.is_file():
            raise ValueError(f"path must be an existing TorchScript .pt file; got {path!r}")
        t0 = time.perf_counter()
        with Model.newInstance("fpx_torchscript", "PyTorch") as model:
            model.load(Paths.get(str(file.parent)), file.stem)
            loaded = time.perf_counter()
            with (
                model.newPredictor(NoopTranslator()) as predictor,
                self.j.manager.newSubManager() as m,
            ):
                xs = NDList()
                for x in inputs:
                    xs.add(self.j.array(m, x))
                out = predictor.predict(xs)
                ran = time.perf_counter()
                arrays = [self.j.bits(out.get(i)) for i in range(int(out.size()))]
                out.close()
        return {"outputs": arrays, "load_s": loaded - t0, "run_s": ran - loaded}

    def sleep(self, seconds: float) -> float:
        self.j.Fpx.sleep(int(seconds * 1000))
        return seconds


def _error(exc: BaseException) -> tuple[str, str, str]:
    """('error', kind, message): kind 'invalid' for Java's IllegalArgumentException."""
    get_class = getattr(exc, "getClass", None)
    java_name = str(get_class().getName()) if callable(get_class) else ""
    invalid = java_name.endswith("IllegalArgumentException") or isinstance(
        exc, TypeError | ValueError
    )
    text = f"{java_name or type(exc).__name__}: {exc}"
    if not java_name and not invalid:
        text += "\n" + "".join(traceback.format_exception(exc)[-3:])
    return ("error", "invalid" if invalid else "failed", text)


#: Exit status ``STOPPED + signum`` on SIGTERM, SIGINT or SIGHUP (`client` names the signal).
STOPPED = 128
_STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


def _stop(signum: int, _frame: Any) -> None:
    """Leave at once, cleanly: no traceback, no JVM shutdown hooks that could hang."""
    with contextlib.suppress(Exception):
        sys.stderr.write(f"fpexplore DJL worker: stopped by signal {signum}\n")
        sys.stderr.flush()
    os._exit(STOPPED + signum)


def _jvm_alive(java: Java) -> bool:
    try:
        return bool(java.jpype.isJVMStarted())
    except Exception:
        return False


def _run_op(method: Any, kwargs: dict[str, Any]) -> Any:
    """Run one operation in a helper thread while the main thread waits in short steps, so
    that a stop signal is handled at once even while Java is busy."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["ok"] = method(**kwargs)
        except BaseException as exc:  # handed to the main thread
            box["exc"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.2)
    if "exc" in box:
        raise box["exc"]
    return box["ok"]


def serve(conn: Connection, threads: int, djl: bool = True) -> None:
    java = Java(threads, djl)
    for name in _STOP_SIGNALS:  # after the JVM started (-Xrs: it installed none of its own)
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _stop)
    ops = Ops(java)
    conn.send(("ready", ops.info() if djl else ops.jvm_info()))
    while True:
        try:
            op, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        method = getattr(ops, op, None) if isinstance(op, str) and not op.startswith("_") else None
        try:
            if method is None:
                raise LookupError(f"unknown worker operation {op!r}")
            reply: tuple = ("ok", _run_op(method, dict(kwargs)))
        except Exception as exc:
            if not _jvm_alive(java):  # a dead JVM is a dead worker: the client starts anew
                conn.send(("fatal", f"the JVM is no longer running ({_error(exc)[2]})"))
                return
            reply = _error(exc)
        conn.send(reply)


def main(argv: list[str]) -> int:
    read_fd, write_fd, threads = int(argv[0]), int(argv[1]), int(argv[2])
    djl = argv[3:4] != ["java"]
    conn_in = Connection(read_fd, writable=False)
    conn_out = Connection(write_fd, readable=False)

    class Duplex:
        recv = conn_in.recv
        send = conn_out.send

    try:
        serve(Duplex(), threads, djl)  # type: ignore[arg-type]
    except Exception as exc:
        with contextlib.suppress(OSError):
            conn_out.send(("fatal", "".join(traceback.format_exception(exc))))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
