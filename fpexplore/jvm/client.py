"""The caller's side of the JVM worker, the one JVM this package runs: start it lazily, reuse
it, time out, survive its death. It serves DJL and, without any DJL set-up, `JVM_OPS`
(``java.util.Random``): a worker started for those alone is replaced by a DJL one when a DJL
operation comes.

`call(op, timeout=..., **kwargs)` sends one request to the worker process and returns its
answer. If the worker crashes (the JVM dies, it is killed) or does not answer in time, the
call raises `WorkerError` with what happened and the tail of the worker's log; the next call
starts a fresh worker. The worker is a plain subprocess (``python -m fpexplore.jvm.worker``)
talking over two pipes, so nothing of the caller's process (torch included) is inherited.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..errors import BackendUnavailable, InvalidInput, InvalidParameter, WorkerError
from . import artifacts
from .worker import STOPPED

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 1e9  # seconds (about 32 years): more is a mistake
START_TIMEOUT = 300.0
#: libtorch intra-op threads in the worker (``ai.djl.pytorch.num_threads``); see `set_threads`.
DEFAULT_THREADS = int(os.environ.get("FPEXPLORE_DJL_THREADS", "1"))
#: Operations that need a JVM only (no DJL jars): any worker answers them.
JVM_OPS = frozenset({"jvm_info", "java_random"})


def signal_name(number: int) -> str:
    """``SIGTERM``, ``SIGRTMIN+5``, or ``signal 99``: any signal number, named if it can be."""
    try:
        return signal.Signals(number).name
    except ValueError:
        low, high = getattr(signal, "SIGRTMIN", None), getattr(signal, "SIGRTMAX", None)
        if low is not None and high is not None and low <= number <= high:
            return f"SIGRTMIN+{number - low}"
        return f"signal {number}"


def fatal_signal(log_path: Path, pid: int) -> str | None:
    """The signal the JVM's fatal-error handler reported for worker ``pid`` (``SIGSEGV``...),
    read from its crash report (``-XX:ErrorFile``) or its log; None if it wrote none. The JVM
    handles SIGSEGV, SIGBUS, SIGFPE and SIGILL itself and then aborts, so the process's own
    exit status says SIGABRT whatever the signal was."""
    for path in (log_path.parent / f"hs_err_worker_{pid}.log", log_path):
        try:
            with open(path, "rb") as f:
                text = f.read(1 << 20).decode("utf-8", "replace")
        except OSError:
            continue
        found = _FATAL.search(text)
        if found:
            return found.group(1)
    return None


#: The header line of a JVM crash report: ``#  SIGSEGV (0xb) at pc=0x..., pid=123, tid=456``.
_FATAL = re.compile(r"^#\s+(SIG[A-Z]+) \(0x[0-9a-f]+\)", re.MULTILINE)


class Worker:
    """One running worker process: DJL's, or (``djl=False``) a JVM alone."""

    djl = True

    @property
    def what(self) -> str:
        return "DJL" if self.djl else "JVM"

    def __init__(self, threads: int, djl: bool = True) -> None:
        reason = artifacts.missing_jars() if djl else None
        if reason:
            raise BackendUnavailable("djl", reason, artifacts.FIX)
        self.djl = djl
        self.log_path = artifacts.djl_dir() / "worker.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        env = dict(os.environ)
        env.update(
            DJL_OFFLINE="true",
            PYTORCH_FLAVOR="cpu",
            DJL_CACHE_DIR=str(artifacts.native_dir()),
            PYTORCH_VERSION=artifacts.LIBTORCH_VERSION,
        )
        env.pop("PYTORCH_LIBRARY_PATH", None)  # DJL's own libtorch, never another copy
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "fpexplore.jvm.worker",
                    str(to_child_r),
                    str(from_child_w),
                    str(threads),
                    "djl" if djl else "java",
                ],
                pass_fds=(to_child_r, from_child_w),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                start_new_session=True,
            )
        os.close(to_child_r)
        os.close(from_child_w)
        self.send_conn = Connection(to_child_w, readable=False)
        self.recv_conn = Connection(from_child_r, writable=False)
        self.info: dict[str, Any] = self._await("ready", START_TIMEOUT, "starting")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.strip().splitlines()[-lines:])

    def _death(self, doing: str) -> WorkerError:
        code = self.proc.wait(timeout=10)
        caught = fatal_signal(self.log_path, self.pid) if code == -signal.SIGABRT else None
        if caught and caught != "SIGABRT":
            how = f"was killed by {caught} (the JVM caught it, wrote its crash report and aborted)"
        elif code < 0:
            how = f"was killed by {signal_name(-code)}"
        elif code >= STOPPED:  # the worker's own handler: a clean exit on a signal
            how = f"stopped on {signal_name(code - STOPPED)}"
        else:
            how = f"exited with status {code}"
        tail = self.log_tail()
        return WorkerError(
            f"The {self.what} worker process (pid {self.pid}) {how} while {doing}. Your Python "
            f"process is unaffected; the next {self.what} call starts a fresh worker."
            + (f"\nLast lines of its log ({self.log_path}):\n{tail}" if tail else "")
        )

    def _await(self, expect: str, timeout: float, doing: str) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                ready = self.recv_conn.poll(min(max(left, 0), 0.5))
            except (EOFError, OSError):
                ready = True
            if ready:
                try:
                    reply = self.recv_conn.recv()
                except (EOFError, OSError):
                    self.kill()
                    raise self._death(doing) from None
                break
            if not self.alive():
                raise self._death(doing)
            if left <= 0:
                self.kill()
                raise WorkerError(
                    f"The {self.what} worker did not answer within {timeout:g} s while {doing}; "
                    f"it was stopped, and the next {self.what} call starts a fresh worker "
                    "(pass a larger timeout= for long operations)."
                )
        status = reply[0]
        if status == expect:
            return reply[1]
        if status == "error":
            _, kind, text = reply
            if kind == "invalid":
                raise InvalidInput(f"{self.what} rejected the input while {doing}: {text}")
            raise WorkerError(f"{self.what} failed while {doing}: {text}")
        self.kill()
        raise WorkerError(
            f"The {self.what} worker failed while {doing}:\n{reply[1]}\n{self.log_tail()}"
        )

    def call(self, op: str, timeout: float, kwargs: dict[str, Any]) -> Any:
        doing = f"running '{op}'"
        try:
            self.send_conn.send((op, kwargs))
        except (BrokenPipeError, OSError):
            self.kill()
            raise self._death(doing) from None
        return self._await("ok", timeout, doing)

    def kill(self) -> None:
        if self.alive():
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        self.proc.wait(timeout=30)
        for c in (self.send_conn, self.recv_conn):
            with contextlib.suppress(OSError):
                c.close()

    def close(self) -> None:
        """Ask the worker to finish (closing its pipe), then make sure it has."""
        try:
            self.send_conn.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()


_lock = threading.RLock()
_worker: Worker | None = None
_threads = DEFAULT_THREADS


def worker(djl: bool = True) -> Worker:
    """The running worker, started now if there is none (or the last one died, or ``djl`` is
    asked of one started without DJL)."""
    global _worker
    with _lock:
        if _worker is None or not _worker.alive() or (djl and not _worker.djl):
            if _worker is not None:
                _worker.close()
            _worker = None
            _worker = Worker(_threads, djl)
        return _worker


def call(op: str, *, timeout: float = DEFAULT_TIMEOUT, **kwargs: Any) -> Any:
    """Run operation ``op`` in the worker (DJL's unless ``op`` is in `JVM_OPS`); `WorkerError`
    if it dies or times out."""
    global _worker
    if not isinstance(op, str) or not op:
        raise InvalidParameter("op", op, "the name of a worker operation (a str)", "djl")
    real = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if not real or not 0 < timeout <= MAX_TIMEOUT:
        raise InvalidParameter(
            "timeout",
            timeout,
            f"a finite positive number of seconds, at most {MAX_TIMEOUT:g}",
            "djl",
        )
    with _lock:
        w = worker(op not in JVM_OPS)
        try:
            return w.call(op, timeout, kwargs)
        except WorkerError:
            if not w.alive():
                _worker = None
            raise


def current_pid() -> int | None:
    """The pid of the running worker, or None."""
    w = _worker
    return w.pid if w is not None and w.alive() else None


def set_threads(n: int) -> int:
    """libtorch intra-op threads in the worker, now and for any worker started later."""
    global _threads
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 256:
        raise InvalidParameter("threads", n, "an int in the range [1, 256]", "djl.set_threads")
    if _worker is not None and _worker.alive() and _worker.djl:
        n = int(call("set_threads", n=n))
    _threads = n
    return n


def threads() -> int:
    return _threads


def shutdown() -> None:
    """Stop the worker (if any). Registered at exit."""
    global _worker
    with _lock:
        if _worker is not None:
            _worker.close()
            _worker = None


atexit.register(shutdown)
