"""Lessons' claims decided in a fresh process under a switch's environment.

The switches are read once, when each library loads, so the only honest way to try a lesson
under one is a new interpreter: `run_claims` starts ``python -m fpexplore.dispatch.worker``
with the environment, hands it the plan on stdin and reads one JSON document back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import FpexploreError
from ..quiet import TF_LOG_LEVEL

#: one lesson run: (lesson name, parameters)
Plan = Sequence[tuple[str, Mapping[str, Any]]]


class WorkerFailed(FpexploreError):
    """The fresh process died or printed no result."""


def _fresh(args: list[str], payload: str, env: Mapping[str, str], timeout: float) -> Any:
    """Run the worker with ``args`` in a fresh interpreter under ``env``; its last line."""
    full = {**os.environ, **env, "PYTHONWARNINGS": "ignore", "TF_CPP_MIN_LOG_LEVEL": TF_LOG_LEVEL}
    proc = subprocess.run(
        [sys.executable, "-m", "fpexplore.dispatch.worker", *args],
        input=payload,
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
        check=False,
    )
    last = proc.stdout.strip().splitlines()[-1:] or [""]
    try:
        return json.loads(last[0])
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout)[-2000:]
        raise WorkerFailed(
            f"the fresh process under {dict(env)} exited with {proc.returncode} and no result:\n"
            + tail
        ) from None


def fingerprint(
    env: Mapping[str, str], label: str, values: bool = False, timeout: float = 300.0
) -> dict[str, Any]:
    """`fingerprint.take(label, values)` in a fresh interpreter whose environment is this one
    plus ``env``."""
    return _fresh(["--fingerprint", label] + (["--values"] if values else []), "", env, timeout)


def run_claims(plan: Plan, env: Mapping[str, str], timeout: float = 900.0) -> dict[str, Any]:
    """Run ``plan`` in a fresh interpreter whose environment is this one plus ``env``.

    Returns ``{"paths": {...}, "runs": [{"lesson", "params", "claims", "observations",
    "error"}]}``: each claim as its ``to_dict()``; ``error`` is the message of a run that
    raised (None otherwise); ``paths`` says which CPU paths the process took."""
    payload = json.dumps([[name, dict(params)] for name, params in plan])
    return _fresh([], payload, env, timeout)
