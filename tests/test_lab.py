"""`make lab` serves JupyterLab: start it on a free port in the background, GET /lab, stop it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest
from browser_support import JUPYTER, ROOT, free_port, wait_until_served


def _setup_is_current() -> bool:
    """Whether `make setup` has nothing left to do (true after `make test` set up)."""
    if shutil.which("make") is None:
        return False
    done = subprocess.run(["make", "-q", "setup"], cwd=ROOT, capture_output=True)
    return done.returncode == 0


def _command(port: int) -> tuple[list[str], str]:
    no_token = ["--IdentityProvider.token="]
    if _setup_is_current():
        return [
            "make",
            "--no-print-directory",
            "lab",
            f"PORT={port}",
            "HOST=127.0.0.1",
            "LAB_ARGS=" + " ".join(no_token),
        ], "make lab"
    # set-up not done by make here (a hand-made .venv): run the command `make lab` runs
    return [
        str(JUPYTER),
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--ServerApp.root_dir={ROOT}",
        *no_token,
        *(["--allow-root"] if os.geteuid() == 0 else []),  # as the Makefile does
    ], "jupyter lab"


@pytest.mark.slow
@pytest.mark.reusable
def test_lab_serves_jupyterlab():
    if not JUPYTER.exists():
        pytest.fail(f"{JUPYTER} is missing: run `make lab` (or `make test`) to set up")
    port = free_port()
    command, how = _command(port)
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1"}
    server = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        status = wait_until_served(server, f"http://127.0.0.1:{port}/lab", poll_s=1)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        try:
            out, _ = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            out, _ = server.communicate()
    log = out.decode(errors="replace")[-3000:]
    assert status == 200, f"{how} on port {port}: GET /lab gave {status}\n{log}"
    assert server.returncode is not None
