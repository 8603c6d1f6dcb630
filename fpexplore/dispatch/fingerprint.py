"""A machine's numerical fingerprint: what it is, which paths its libraries take, and the bits
and exact-truth errors of a fixed battery of computations (`battery`). Seconds, no network.

``fpexplore fingerprint --out NAME.json`` writes one; `compare` explains two.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, InvalidParameter, shown
from ..probe.cpu import cpu_flags, cpu_model, cpu_vendor
from ..probe.libpaths import mkl_paths, onednn_isa, openblas_paths
from ..probe.paths import ONEDNN_DEFAULT_FLAGS, tensorflow_onednn, torch_capability
from . import battery, schema
from .record import Fingerprint
from .switches import SWITCHES

FORMAT = "fpexplore-fingerprint"
VERSION = 1
#: the CPU flags that decide a library's path (the rest of /proc/cpuinfo's flags are noise)
PATH_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512dq",
    "avx512_fp16",
    *ONEDNN_DEFAULT_FLAGS,
    "asimd",
    "sve",
    "sve2",
)
#: environment variables that pick a path: every switch's, and MKL's and OpenBLAS's own
PATH_ENV = tuple(
    sorted(
        {k for s in SWITCHES for k in s.env}
        | {"MKL_CBWR", "MKL_DEBUG_CPU_TYPE", "MKL_NUM_THREADS", "OMP_NUM_THREADS"}
        | {"OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "DNNL_MAX_CPU_ISA"}
        | {"TF_NUM_INTRAOP_THREADS", "CUBLAS_WORKSPACE_CONFIG"}
    )
)


def describe() -> dict[str, Any]:
    """This machine and process: CPU, the path each library takes, threads, versions, cards."""
    from .. import __version__, backends

    flags = cpu_flags()
    machine: dict[str, Any] = {
        "cpu": cpu_model(),
        "cpu_vendor": cpu_vendor(),
        "arch": platform.machine(),
        "system": platform.system(),
        "cpu_flags": sorted(f for f in PATH_FLAGS if f in flags),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "fpexplore": __version__,
        "env": {k: os.environ[k] for k in PATH_ENV if k in os.environ},
        "numpy": _numpy_paths(),
    }
    if backends.missing("torch") is None:
        torch = backends.load("torch")
        machine["torch"] = {
            "version": torch.__version__,
            "capability": torch_capability(),
            "threads": torch.get_num_threads(),
            "mkl": bool(torch.backends.mkl.is_available()),
            "mkldnn": bool(torch.backends.mkldnn.is_available()),
        }
        machine["mkl"] = mkl_paths(torch)
        machine["cards"] = _cards(torch)
    machine["onednn_isa"] = onednn_isa(flags, os.environ)
    if backends.missing("tensorflow") is None:
        tf = backends.load("tensorflow")
        on, why = tensorflow_onednn()
        machine["tensorflow"] = {
            "version": tf.__version__,
            "onednn": on,
            "onednn_reason": why,
            "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        }
    return machine


def _numpy_paths() -> dict[str, Any]:
    import numpy as np

    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import (  # type: ignore[no-redef]
            __cpu_dispatch__,
            __cpu_features__,
        )
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:  # the layout of show_config changes between versions
        blas = "unknown"
    return {
        "version": np.__version__,
        "simd_targets": [t for t in __cpu_dispatch__ if __cpu_features__.get(t)],
        "blas": blas,
        "openblas": openblas_paths(),
    }


def _cards(torch: Any) -> list[dict[str, Any]]:
    if not torch.cuda.is_available():
        return []
    props = [torch.cuda.get_device_properties(n) for n in range(torch.cuda.device_count())]
    return [
        {
            "device": f"cuda:{n}",
            "name": p.name,
            "capability": f"{p.major}.{p.minor}",
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
            "tf32_cudnn": bool(torch.backends.cudnn.allow_tf32),
        }
        for n, p in enumerate(props)
    ]


def take(label: str = "", values: bool = False) -> dict[str, Any]:
    """This machine's fingerprint as a JSON-ready dict (``label`` names it in class tables);
    with ``values``, every result's values too (exact float hex, for the lesson; files keep
    digests only)."""
    if not isinstance(label, str):
        raise InvalidParameter("label", label, "a string", "fpexplore.fingerprint")
    if not isinstance(values, bool):
        raise InvalidParameter("values", values, "True or False", "fpexplore.fingerprint")
    t0 = time.monotonic()
    results, unavailable = battery.run()
    errors = battery.errors(results)
    ops = {
        r.key: {
            "op": r.op,
            "library": r.library,
            "device": r.device,
            "digest": battery.digest(r.values),
            "head": [float(v).hex() for v in r.values.ravel()[:3]],
            "max_ulp": errors[r.key],
            **(_values(r.values) if values else {}),
        }
        for r in results
    }
    return {
        "format": FORMAT,
        "version": VERSION,
        "label": label or platform.node() or "this machine",
        "machine": describe(),
        "ops": ops,
        "unavailable": unavailable,
        "seconds": round(time.monotonic() - t0, 2),
    }


def _values(a: Any) -> dict[str, Any]:
    return {"shape": list(a.shape), "values": [v.hex() for v in a.ravel().tolist()]}


def load(path: str | os.PathLike[str], name: str = "path") -> dict[str, Any]:
    """A fingerprint from ``path``, checked: `InvalidInput` says what is wrong with it."""
    if not isinstance(path, str | os.PathLike) or isinstance(path, bytes):
        raise InvalidParameter(
            name, path, "a fingerprint dict or the path of its JSON file", "fpexplore.compare"
        )
    who = f"{str(path)!r} (argument {name!r})"
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(f"no fingerprint at {who}: the file does not exist") from None
    except (OSError, UnicodeDecodeError, TypeError, ValueError) as exc:  # JSON errors too
        raise InvalidInput(f"{who} is not a readable JSON fingerprint: {exc}") from None
    except RecursionError:
        raise InvalidInput(f"{who} is not a fingerprint: its JSON is nested too deeply") from None
    return check(data, str(path))


def parse(data: Any, where: str = "fingerprint") -> Fingerprint:
    """``data`` (`check`ed) read into a `Fingerprint`."""
    return Fingerprint.from_dict(check(data, where))


def check(data: Any, where: str = "fingerprint") -> dict[str, Any]:
    """``data`` (a `Fingerprint`: its JSON object) if it is a fingerprint this version reads,
    else `InvalidInput` naming why (every field `compare` reads is checked for its type)."""
    if isinstance(data, Fingerprint):
        data = data.to_dict()
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidInput(
            f'{where} is not an fpexplore fingerprint (expected "format": {FORMAT!r}); '
            "make one with: fpexplore fingerprint --out NAME.json"
        )
    if type(data.get("version")) is not int or data["version"] != VERSION:
        raise InvalidInput(
            f"{where} is a fingerprint of format version {shown(data.get('version'))}; this "
            f"fpexplore reads version {VERSION}: take it again with this version's fpexplore "
            "fingerprint"
        )
    ops, machine = data.get("ops"), data.get("machine")
    if not isinstance(ops, dict) or not isinstance(machine, dict):
        raise InvalidInput(f"{where}: a fingerprint needs the objects 'ops' and 'machine'")
    if not isinstance(data.get("label", ""), str):
        raise InvalidInput(f"{where}: its 'label' must be a string")
    for key, op in ops.items():
        schema.check_op(key, op, where)
    schema.check_machine(machine, where)
    return data


def main_take(out: str | None, label: str) -> int:
    """The command's body: take a fingerprint, write it to ``out`` (checked before any work
    starts) or print it."""
    from ..paths import check_out

    path = None if out is None else check_out(out, "--out", "fpexplore fingerprint")
    data = take(label)
    if path is None:
        json.dump(data, sys.stdout, indent=1)
        print()
        return 0
    try:
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"--out {out!r} could not be written: {exc}") from None
    print(f"wrote {out}: {len(data['ops'])} results in {data['seconds']:.1f} s")
    return 0
