"""``fpexplore verify``: every lesson's claims on this machine, at quick and edge parameters
(`fpexplore.testing.matrix.plan`), plus CUDA runs where torch sees a card, decided in one fresh
process. `verify` returns the record (`fpexplore.machines` reads it; it belongs in
``data/machines/NAME/claims.json``), `summary` says what held, failed and raised.

    from fpexplore import verify
    record = verify.verify("my laptop")
    print(verify.summary(record))
"""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import subprocess
import sys
import time
from typing import Any

from .errors import WorkerError
from .machines import FORMAT, VERSION, counts, failures_of, params_text

#: runs on a CUDA card, beside the plan's: where the GPU lessons decide their claims live
CUDA_EXTRA: tuple[tuple[str, dict[str, Any]], ...] = (
    ("gpu_determinism", {"device": "cuda", "runs": 3, "processes": 1, "quick": True}),
    ("tf32", {"device": "cuda", "max_size": 512}),
    ("cpu_vs_accelerator", {"device": "cuda"}),
    ("rng_seeds", {"n": 4096, "k": 8, "seed": 5}),
)


def cards() -> list[str]:
    """The names of the CUDA cards torch sees (none where torch is missing or sees none)."""
    from . import backends

    if backends.missing("torch") is not None:
        return []
    torch = backends.load("torch")
    if not torch.cuda.is_available():
        return []
    return [torch.cuda.get_device_name(n) for n in range(torch.cuda.device_count())]


def plan(cuda: bool) -> list[tuple[str, dict[str, Any]]]:
    """Every lesson at its quick parameters and the edges of `matrix.EXTRA`; with ``cuda``,
    `CUDA_EXTRA` too."""
    from .testing import matrix

    return matrix.plan() + ([(n, dict(p)) for n, p in CUDA_EXTRA] if cuda else [])


def versions() -> dict[str, str]:
    """The versions of numpy, torch, TensorFlow, Java and DJL that are present here."""
    from . import __version__, backends
    from .backends import java_version

    out = {"fpexplore": __version__, "python": platform.python_version()}
    for name in ("numpy", "torch", "tensorflow"):
        if backends.missing(name) is None:
            out[name] = backends.get(name).version()
    if java := java_version():
        out["java"] = java
    if backends.missing("djl") is None:
        out["djl"] = backends.get("djl").version()
    return out


def provenance(label: str, command: str, card_names: list[str]) -> dict[str, Any]:
    """Who, where and with what: the label, the date, the CPU, the versions, the cards."""
    from .dispatch.fingerprint import PATH_FLAGS
    from .probe.cpu import cpu_flags, cpu_model, cpu_vendor

    flags = cpu_flags()
    return {
        "label": label,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu": cpu_model(),
        "vendor": cpu_vendor(),
        "cpu_flags": sorted(f for f in PATH_FLAGS if f in flags),
        "arch": platform.machine(),
        "system": platform.system(),
        "cores": os.cpu_count(),
        "versions": versions(),
        "card": card_names[0] if card_names else "no CUDA device",
        "cards": card_names,
        "command": command,
    }


def _is_plan(runs: Any) -> bool:
    """Whether ``runs`` is a list of (lesson name, parameters dict) pairs."""
    return isinstance(runs, list | tuple) and all(
        isinstance(r, tuple | list)
        and len(r) == 2
        and isinstance(r[0], str)
        and isinstance(r[1], dict)
        for r in runs
    )


def verify(
    label: str = "",
    *,
    runs: list[tuple[str, dict[str, Any]]] | None = None,
    command: str = "fpexplore.verify.verify()",
    timeout: float = 3600.0,
) -> dict[str, Any]:
    """Decide every claim of ``runs`` (default: `plan`, with CUDA runs where a card is seen)
    in a fresh process; the record, with its provenance (``label`` names the machine)."""
    from .errors import InvalidParameter
    from .testing.runner import run_claims

    if not isinstance(label, str) or not label.isprintable():
        raise InvalidParameter("label", label, "a printable string", "verify")
    if runs is not None and not _is_plan(runs):
        raise InvalidParameter("runs", runs, "None or a list of (lesson, params dict)", "verify")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise InvalidParameter("timeout", timeout, "a positive number of seconds", "verify")
    seen = cards()
    the_plan = plan(bool(seen)) if runs is None else list(runs)
    t0 = time.monotonic()
    try:
        result = run_claims(the_plan, {}, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise WorkerError(f"the claims did not finish within {timeout:.0f} s") from None
    prov = provenance(label or platform.node() or "this machine", command, seen)
    prov["seconds"] = round(time.monotonic() - t0, 1)
    return {
        "format": FORMAT,
        "version": VERSION,
        "provenance": prov,
        "counts": counts(result["runs"]),
        "paths": result["paths"],
        "runs": result["runs"],
    }


def summary(record: dict[str, Any]) -> str:
    """The record in words: the machine, the counts, each failure and each run that raised."""
    from .machines import Machine

    prov, runs = record.get("provenance", {}), record["runs"]
    c = counts(runs)
    lines = [
        f"{prov.get('label', '?')}: {prov.get('cpu', '?')}, {prov.get('card', '?')}; "
        f"{len(runs)} lesson runs in {prov.get('seconds', '?')} s",
        f"claims: {c['holds']} hold, {c['fails']} fail, {c['not checked']} not checked",
    ]
    paths = {k: v for k, v in record.get("paths", {}).items() if not k.endswith("_reason")}
    if paths:
        lines.insert(1, "paths: " + ", ".join(f"{k} {v}" for k, v in paths.items()))
    grouped: dict[tuple[str, str, str], list[str]] = {}  # one text, many parameter sets
    for f in failures_of(Machine("", "", record)):
        grouped.setdefault((f.lesson, f.key, f.text), []).append(params_text(f.params))
    for (lesson, key, text), at in grouped.items():
        lines.append(f"FAILS {lesson} {key} at ({'); ('.join(at)}):\n  {text}")
    for run in runs:
        if run["error"]:
            error = run["error"] if len(run["error"]) <= 500 else run["error"][:500] + "…"
            lines.append(f"ERROR {run['lesson']} ({params_text(run['params'])}): {error}")
    return "\n".join(lines)


def command(out: str | None, label: str) -> int:
    """``fpexplore verify``'s body: ``out`` checked before anything runs, the summary printed,
    the record written; 1 when a claim failed or a run raised, else 0."""
    import json

    from .errors import InvalidInput
    from .paths import check_out

    path = None if out is None else check_out(out, "--out", "fpexplore verify")
    words = (
        ["fpexplore", "verify"]
        + (["--out", out] if out else [])
        + (["--label", label] if label else [])
    )
    print("deciding every lesson's claims in a fresh process (minutes)…", file=sys.stderr)
    record = verify(label, command=shlex.join(words))
    print(summary(record))
    if path is None:
        print("no record written: --out FILE keeps one")
    else:
        try:
            path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"--out {out!r} could not be written: {exc}") from None
        print(f"wrote {out}")
    failed = record["counts"]["fails"] or any(r["error"] for r in record["runs"])
    return 1 if failed else 0
