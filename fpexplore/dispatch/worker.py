"""The fresh process of `fresh.run_claims` (reads a plan on stdin), `fresh.fingerprint`
(``--fingerprint LABEL``) and `fresh.call` (``--call``, reads its target and arguments on
stdin): prints one JSON line."""

from __future__ import annotations

import atexit
import json
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any, NoReturn


def _paths() -> dict[str, Any]:
    from .. import backends
    from .paths import tensorflow_onednn, torch_capability

    on, why = tensorflow_onednn()  # TensorFlow's own answer where a run loaded it
    out: dict[str, Any] = {"onednn": on, "onednn_reason": why}
    if backends.missing("torch") is None:
        torch = backends.load("torch")
        out["torch_capability"] = torch_capability()
        out["torch_threads"] = torch.get_num_threads()
    return out


def _blas_offsets(seed: int) -> dict[str, int]:
    from ..lessons.summation_order.layout import blas_offsets

    return blas_offsets(seed)


#: what `fresh.call` may run here, by name (JSON arguments in, JSON out)
CALLS: dict[str, Callable[..., Any]] = {"blas_offsets": _blas_offsets}


def main() -> None:
    warnings.simplefilter("ignore")
    if sys.argv[1:2] == ["--fingerprint"]:
        from .fingerprint import take

        data = take(sys.argv[2], values="--values" in sys.argv[3:])
        sys.stdout.write("\n" + json.dumps(data) + "\n")
        _exit()
    if sys.argv[1:2] == ["--call"]:
        asked = json.loads(sys.stdin.read())
        value = CALLS[asked["target"]](*asked["args"])
        sys.stdout.write("\n" + json.dumps(value) + "\n")
        _exit()
    from .. import lessons

    plan = json.loads(sys.stdin.read() or "[]")
    runs = []
    for name, params in plan:
        entry: dict[str, Any] = {"lesson": name, "params": params, "error": None}
        try:
            c = lessons.run(name, **params)
        except Exception as exc:  # reported per run, the others go on
            entry["error"] = f"{type(exc).__name__}: {exc}"
            entry["claims"], entry["observations"] = {}, {}
        else:
            entry["claims"] = {k: v.to_dict() for k, v in c.claims.items()}
            entry["observations"] = {
                k: {"text": v.text, "value": repr(v.value)} for k, v in c.observations.items()
            }
        runs.append(entry)
    sys.stdout.write("\n" + json.dumps({"paths": _paths(), "runs": runs}) + "\n")
    _exit()


def _exit() -> NoReturn:
    """Exit once the result is out: the exit handlers run (the DJL worker's JVM and any other
    child are stopped, temporary folders removed), but not the interpreter's teardown of torch
    and TensorFlow, which takes seconds and decides nothing."""
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(0)


if __name__ == "__main__":
    main()
