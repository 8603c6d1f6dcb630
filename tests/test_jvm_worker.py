"""The DJL worker process: lazy start, reuse, per-call timeout, crash isolation."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

from fpexplore.errors import BackendUnavailable, InvalidInput, WorkerError
from fpexplore.jvm import artifacts, client

java = pytest.mark.java


def _needs_djl() -> None:
    reason = artifacts.missing_jars()
    if reason:
        pytest.fail(f"DJL jars missing ({reason}); run `make djl` (make test does it).")


@java
def test_worker_starts_lazily_and_is_reused():
    _needs_djl()
    client.shutdown()
    assert client.current_pid() is None
    first = client.call("info")
    assert first["engine"] == "PyTorch"
    assert first["engine_version"] == artifacts.LIBTORCH_VERSION
    assert first["torch_imported"] is False
    assert first["offline"] == {
        "DJL_OFFLINE": "true",
        "ai.djl.offline": "true",
        "Utils.isOfflineMode": True,
    }
    assert first["djl_cache_dir"] == str(artifacts.native_dir())
    assert client.call("info")["pid"] == first["pid"] == client.current_pid()
    assert first["pid"] != os.getpid()


@java
def test_killed_mid_call_raises_worker_error_and_next_call_recovers():
    _needs_djl()
    pid = client.call("info")["pid"]
    errors: list[BaseException] = []

    def long_call():
        try:
            client.call("sleep", seconds=60, timeout=120)
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=long_call)
    t.start()
    time.sleep(1.0)  # the worker is now inside Thread.sleep in Java
    assert t.is_alive()
    os.kill(pid, signal.SIGKILL)
    t.join(timeout=30)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], WorkerError)
    assert "SIGKILL" in str(errors[0]) and "next DJL call starts a fresh worker" in str(errors[0])
    info = client.call("info")
    assert info["pid"] != pid
    x = np.array([1.5, 2.25], dtype=np.float32)
    from fpexplore.jvm.protocol import pack, unpack

    assert unpack(client.call("sum", x=pack(x))) == np.float32(3.75)
    assert client.call("info")["torch_imported"] is False  # still none after DJL ran ops


@java
def test_timeout_stops_the_worker_and_the_next_call_works():
    _needs_djl()
    pid = client.call("info")["pid"]
    t0 = time.monotonic()
    with pytest.raises(WorkerError, match="did not answer within 1 s"):
        client.call("sleep", seconds=30, timeout=1)
    assert time.monotonic() - t0 < 15
    assert client.call("info")["pid"] != pid


@java
def test_java_exception_is_reported_and_worker_survives():
    _needs_djl()
    pid = client.call("info")["pid"]
    with pytest.raises(WorkerError, match="unknown worker operation"):
        client.call("no_such_op")
    from fpexplore.jvm.protocol import pack

    hwc = np.zeros((4, 5, 3), dtype=np.float32)
    with pytest.raises(InvalidInput, match=r"IllegalArgumentException.*CHW"):
        client.call("normalize", x=pack(hwc), mean=[0.0] * 3, std=[1.0] * 3)
    assert client.call("info")["pid"] == pid


def test_missing_jars_make_worker_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    assert "not in" in (artifacts.missing_jars() or "")
    with pytest.raises(BackendUnavailable, match="make djl"):
        client.Worker(1)


def test_worker_module_never_imports_torch():
    import subprocess

    code = (
        "import sys, fpexplore.jvm.worker, fpexplore.jvm.client, fpexplore.backends.djl;"
        "print('torch' in sys.modules, 'jpype' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "False"]
