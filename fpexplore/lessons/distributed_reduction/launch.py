"""Start ``world`` torch.distributed ranks on this machine (forked by one `worker` process);
rank 0 writes the result file. Every worker gets NVLink multicast off (`SAFE_ENV`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import WorkerError

SAFE_ENV = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def launch(
    job: dict[str, Any],
    world: int,
    timeout_s: float = 180.0,
    env: dict[str, str] | None = None,
    arrays: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the job on ``world`` local ranks (``arrays`` saved as ``<name>.npy`` beside it);
    return rank 0's result. A failed worker or a timeout gives ``{"ok": False, "error": ...}``
    with the workers' last output rather than raising (a collective an algorithm cannot run is
    a finding too); the processes this call started are ended on the way out."""
    with tempfile.TemporaryDirectory(prefix="fpx-dist-") as tmp:
        folder = Path(tmp)
        (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
        for name, arr in (arrays or {}).items():  # numpy arrays the workers load by name
            np.save(folder / f"{name}.npy", arr)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # a port free just now
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        base = {**os.environ, **(env or {}), **SAFE_ENV}
        src = str(Path(__file__).resolve().parents[3])
        base["PYTHONPATH"] = src + os.pathsep + base.get("PYTHONPATH", "")
        worker = f"{__package__}.worker"
        cmd = [sys.executable, "-m", worker, str(folder), "all", str(world), str(port)]
        with open(folder / "launcher.log", "w+b") as log:
            proc = subprocess.Popen(
                cmd, env=base, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            timed_out = False
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:  # the ranks are in the launcher's process group: end them all
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.seek(0)
            texts = [log.read().decode("utf-8", "replace")[-2000:]]
        for rank in range(world):
            path = folder / f"rank{rank}.log"
            if path.exists():
                texts.append(path.read_bytes().decode("utf-8", "replace")[-2000:])
        out = folder / "result.json"
        if out.exists():
            result = json.loads(out.read_text(encoding="utf-8"))
            if timed_out:
                result["timed_out_after_result"] = True
            return result
        reason = (
            f"timed out after {timeout_s:.0f} s" if timed_out else f"exit code {proc.returncode}"
        )
        return {"ok": False, "error": reason, "logs": texts}


def require_ok(result: dict[str, Any], what: str) -> dict[str, Any]:
    """``result`` if it ran, else `WorkerError` with the workers' output."""
    if not result.get("ok"):
        logs = "\n".join(result.get("logs", []))[-3000:]
        raise WorkerError(f"{what} failed: {result.get('error')}\n{logs}")
    return result
