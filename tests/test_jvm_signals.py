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
