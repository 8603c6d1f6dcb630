"""Lessons' claims decided in a fresh process under a switch's environment: `run_claims`
starts ``python -m fpexplore.testing.runner`` (`fresh.spawn`), which runs the plan it reads on
stdin and replies with every run's claims and the CPU paths the process took."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ..dispatch import fresh

#: one lesson run: (lesson name, parameters)
Plan = Sequence[tuple[str, Mapping[str, Any]]]
MODULE = "fpexplore.testing.runner"


def run_claims(plan: Plan, env: Mapping[str, str], timeout: float = 900.0) -> dict[str, Any]:
    """Run ``plan`` in a fresh interpreter whose environment is this one plus ``env``.

    Returns ``{"paths": {...}, "runs": [{"lesson", "params", "claims", "observations",
    "error"}]}``: each claim as its ``to_dict()``; ``error`` is the message of a run that
    raised (None otherwise); ``paths`` says which CPU paths the process took. Where the cache
    is on, a result with no error and no failed claim is kept (keyed by the plan, `fresh_key`
    and the data the lessons read), and read back for the same key."""
    payload = json.dumps([[name, dict(params)] for name, params in plan])

    def take() -> dict[str, Any]:
        return fresh.spawn([], payload, env, timeout, MODULE)

    if not fresh.cache_on():
        return take()

    def keep(result: dict[str, Any]) -> bool:  # a failure is never kept: tried again
        return not any(
            run["error"] or any(c["state"] == "fails" for c in run["claims"].values())
            for run in result["runs"]
        )

    what = f"claims of {len(plan)} runs"
    extra = {"plan": payload, "data": fresh.data_hash()}
    return fresh.cached("claims", env, extra, take, keep, what)


def _paths() -> dict[str, Any]:
    """The paths this process took: oneDNN's in TensorFlow, torch's capability and threads."""
    from .. import backends
    from ..probe.paths import tensorflow_onednn, torch_capability

    on, why = tensorflow_onednn()  # TensorFlow's own answer where a run loaded it
    out: dict[str, Any] = {"onednn": on, "onednn_reason": why}
    if backends.missing("torch") is None:
        torch = backends.load("torch")
        out["torch_capability"] = torch_capability()
        out["torch_threads"] = torch.get_num_threads()
    return out


def _run(name: str, params: dict[str, Any]) -> dict[str, Any]:
    from .. import lessons

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
    return entry


#: lessons whose runs take this configuration's fingerprint in a nested fresh process
#: (cpu_dispatch's "this-machine"): this process, fresh itself, takes it first (`main`)
FINGERPRINTING = frozenset({"cpu_dispatch"})


def main() -> None:
    warnings.simplefilter("ignore")
    plan = json.loads(sys.stdin.read() or "[]")
    if FINGERPRINTING & {name for name, _ in plan}:
        fresh.seed_fingerprint()  # before any run changes this process's state
    runs = [_run(name, params) for name, params in plan]
    fresh.reply({"paths": _paths(), "runs": runs})


if __name__ == "__main__":
    main()
