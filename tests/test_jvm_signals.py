"""The DJL worker on a signal: it exits cleanly, the caller hears which signal (any number),
and the next call starts a fresh worker."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from fpexplore.errors import WorkerError
from fpexplore.jvm import artifacts, client


def test_any_signal_number_is_named():
    assert client.signal_name(signal.SIGKILL) == "SIGKILL"
    assert client.signal_name(signal.SIGRTMIN + 5) == "SIGRTMIN+5"
    assert client.signal_name(200) == "signal 200"


@pytest.mark.java
def test_stop_signals_mid_call_end_the_worker_cleanly_and_the_next_call_recovers():
    if artifacts.missing_jars():
        pytest.fail("DJL jars missing; run `make djl` (make test does it).")
    for sig, said in (
        (signal.SIGTERM, "stopped on SIGTERM"),
        (signal.SIGINT, "stopped on SIGINT"),
        (signal.SIGHUP, "stopped on SIGHUP"),
    ):
        pid = client.call("info")["pid"]
        errors: list[BaseException] = []

        def long_call(errors=errors) -> None:
            try:
                client.call("sleep", seconds=60, timeout=120)
            except BaseException as exc:
                errors.append(exc)

        t = threading.Thread(target=long_call)
        t.start()
        time.sleep(1.0)  # inside Thread.sleep in Java
        os.kill(pid, sig)
        t.join(30)
        assert not t.is_alive(), f"the worker did not stop on {said}"
        assert len(errors) == 1 and isinstance(errors[0], WorkerError), errors
        assert said in str(errors[0]) and "Traceback" not in str(errors[0]), str(errors[0])
    again = client.call("info")
    assert again["pid"] != pid and client.call("set_threads", n=1) == 1


class _Dead:
    """A worker process that already died with ``code``."""

    def __init__(self, code: int) -> None:
        self.code, self.pid = code, 424242

    def wait(self, timeout: float | None = None) -> int:
        return self.code

    def poll(self) -> int:
        return self.code


def _dead_worker(tmp_path, code: int) -> client.Worker:
    w = object.__new__(client.Worker)
    w.proc = _Dead(code)  # type: ignore[assignment]
    w.log_path = tmp_path / "worker.log"
    w.log_path.write_text("starting\n")
    return w


def test_a_segfault_the_jvm_caught_is_reported_as_sigsegv_not_sigabrt(tmp_path):
    """The JVM handles SIGSEGV itself, writes its crash report and aborts: the exit status says
    SIGABRT, the crash report says which signal it was."""
    w = _dead_worker(tmp_path, -signal.SIGABRT)
    (tmp_path / "hs_err_worker_424242.log").write_text(
        "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
        "#  SIGSEGV (0xb) at pc=0x00007f0000000000, pid=424242, tid=424243\n#\n"
    )
    message = str(w._death("running a call"))
    assert "killed by SIGSEGV" in message and "SIGABRT" not in message, message


def test_a_plain_abort_is_still_reported_as_sigabrt(tmp_path):
    message = str(_dead_worker(tmp_path, -signal.SIGABRT)._death("running a call"))
    assert "killed by SIGABRT" in message, message


@pytest.mark.java
def test_sigsegv_sent_to_the_worker_is_reported_as_sigsegv():
    if artifacts.missing_jars():
        pytest.fail("DJL jars missing; run `make djl` (make test does it).")
    pid = client.call("info")["pid"]
    os.kill(pid, signal.SIGSEGV)
    with pytest.raises(WorkerError, match="SIGSEGV"):
        for _ in range(50):
            client.call("info")
            time.sleep(0.2)
    assert client.call("info")["pid"] != pid
