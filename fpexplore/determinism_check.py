"""Is my forward (and backward) pass deterministic, and which flags make it so, at what cost?

`check` runs a user's callable K times under each of several flag sets (cuDNN benchmark,
cuDNN deterministic, ``torch.use_deterministic_algorithms``, one thread, TF32 on/off), hashes
every output (and, with ``backward=True``, the gradients of every leaf tensor the output
depends on), and reports per flag set: how many distinct results the K runs gave, whether the
result equals the default set's, and the median time per run against the default's.

The target is a callable, or a string: ``"path/to/script.py:function"`` or
``"package.module:function"`` (``"script.py"`` alone means its ``forward`` function). The
function takes no argument, or one: the torch device string. It returns a tensor, or a tuple,
list or dict of tensors. torch's RNG is seeded before every run (``seed=None`` does not), so a
dropout is not mistaken for a non-deterministic kernel.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import InvalidParameter, RecordError

FLAG_SETS: dict[str, dict[str, Any]] = {
    "default": {},
    "cudnn.benchmark": {"benchmark": True},
    "cudnn.deterministic": {"cudnn_deterministic": True},
    "use_deterministic_algorithms": {"deterministic_algorithms": True},
    "threads=1": {"threads": 1},
    "tf32 on": {"tf32": True},
    "tf32 off": {"tf32": False},
}
WHERE = "check-determinism"


@dataclass(frozen=True)
class FlagResult:
    """K runs under one flag set."""

    name: str
    flags: dict[str, Any]
    runs: int
    distinct: int  # distinct hashes among the runs (1: deterministic)
    same_as_default: bool | None  # the result equals the default set's (None: no default)
    median_ms: float
    relative_time: float | None  # median time / the default set's
    raised: str | None = None  # the error the target raised under these flags
    hashes: tuple[str, ...] = ()

    @property
    def deterministic(self) -> bool:
        return self.raised is None and self.distinct == 1


@dataclass(frozen=True)
class DeterminismReport:
    """Every flag set's result for one target on one device."""

    target: str
    device: str
    backward: bool
    runs: int
    torch: str
    results: tuple[FlagResult, ...]
    env: dict[str, str | None] = field(default_factory=dict)

    def result(self, name: str) -> FlagResult:
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no flag set {name!r}; ran: {', '.join(r.name for r in self.results)}")

    def deterministic_sets(self) -> list[str]:
        return [r.name for r in self.results if r.deterministic]

    def ran(self) -> bool:
        """Whether at least one flag set ran without the target raising."""
        return any(r.raised is None for r in self.results)

    def verdict(self) -> str:
        det = self.deterministic_sets()
        nondet = [r.name for r in self.results if not r.deterministic and r.raised is None]
        raised = [r for r in self.results if r.raised is not None]
        if not self.ran():
            why = f" (under {raised[0].name!r}: {raised[0].raised})" if raised else ""
            return (
                f"no verdict: no flag set ran on {self.device}; the target {self.target} raised "
                f"under every flag set tried ({len(self.results)}){why}"
            )
        if not nondet:
            tried = (
                f"every flag set that ran ({len(det)} of {len(self.results)}; raised under: "
                f"{', '.join(r.name for r in raised)})"
                if raised
                else f"every flag set tried ({len(det)})"
            )
            return (
                f"deterministic under {tried} on {self.device}, "
                f"{self.runs} timed runs and a warm-up each"
            )
        fix = ", ".join(n for n in det if n != "default") or "none of the flag sets tried"
        return (
            f"NOT deterministic on {self.device} under {', '.join(nondet)}; deterministic "
            f"with: {fix}"
        )

    def table(self) -> str:
        """The flag sets, one line each, within `COLUMNS` (a raised error on its own line)."""
        import textwrap

        from .result.text_table import COLUMNS

        head = ("flag set", "distinct", "= default", "median ms", "time")
        rows = [head]
        raised = {}
        for r in self.results:
            if r.raised:
                raised[len(rows)] = r.raised
            rows.append(
                (
                    r.name,
                    "raised" if r.raised else f"{r.distinct} of {r.runs}",
                    "—" if r.same_as_default is None else ("yes" if r.same_as_default else "no"),
                    f"{r.median_ms:.3g}" if r.raised is None else "—",
                    f"{r.relative_time:.2f}x" if r.relative_time is not None else "—",
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
        lines = []
        for i, row in enumerate(rows):
            lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if i in raised:
                lines += textwrap.wrap(
                    raised[i][:200], COLUMNS, initial_indent="    ", subsequent_indent="    "
                )
        lines.insert(1, "  ".join("-" * w for w in widths))
        what = "forward + backward" if self.backward else "forward"
        lines[:0] = textwrap.wrap(
            f"{self.target}: {what} on {self.device}, torch {self.torch}", COLUMNS
        )
        lines += textwrap.wrap(self.verdict(), COLUMNS, subsequent_indent="    ")
        return "\n".join(lines)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DeterminismReport:
        """The report back from `to_dict` (e.g. a recorded GPU check); `RecordError` naming the
        first missing or malformed field."""
        if not isinstance(d, dict):
            raise RecordError(f"a determinism report must be an object, got {type(d).__name__}")
        for key in _REPORT_FIELDS:
            if key not in d:
                raise RecordError(f"the determinism report has no {key!r} field")
        if not isinstance(d["results"], list | tuple):
            raise RecordError("the determinism report's 'results' must be a list")
        for i, r in enumerate(d["results"]):
            missing = [k for k in _RESULT_FIELDS if not isinstance(r, dict) or k not in r]
            if missing:
                raise RecordError(f"results[{i}] of the determinism report has no {missing[0]!r}")
            if not isinstance(r["hashes"], list | tuple):
                raise RecordError(f"results[{i}].hashes of the determinism report must be a list")
        keep = set(FlagResult.__dataclass_fields__)
        rows = [{k: v for k, v in r.items() if k in keep} for r in d["results"]]
        try:
            base = rows[0]["hashes"] if rows and rows[0]["name"] == "default" else []
            base_hash = base[0] if base and len(set(base)) == 1 else None
            for r in rows:  # derived from the hashes, as `check` derives it
                r["hashes"] = tuple(r["hashes"])
                one = len(set(r["hashes"])) == 1 and r.get("raised") is None
                r["same_as_default"] = (r["hashes"][0] == base_hash) if one and base_hash else None
            results = tuple(FlagResult(**r) for r in rows)
            head = (d[k] for k in _REPORT_FIELDS[:-1])  # target, device, backward, runs, torch
            return cls(*head, results, dict(d.get("env", {})))
        except (TypeError, ValueError, AttributeError) as exc:
            raise RecordError(f"the determinism report cannot be read ({exc})") from None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict()
        for r, rr in zip(d["results"], self.results, strict=True):
            r["deterministic"] = rr.deterministic
        return d


_REPORT_FIELDS = ("target", "device", "backward", "runs", "torch", "results")
_RESULT_FIELDS = ("name", "flags", "runs", "distinct", "median_ms", "relative_time", "hashes")

# ---------------------------------------------------------------------------------------------
# the target


def load_target(spec: str | Callable[..., Any]) -> tuple[Callable[..., Any], str]:
    """The callable named by ``spec`` (see the module docstring) and a display name."""
    if callable(spec):
        return spec, getattr(spec, "__qualname__", repr(spec))
    if not isinstance(spec, str) or not spec:
        raise _refused(spec, "a callable, 'script.py[:function]' or 'module:function'")
    where, _, fn = spec.partition(":")
    path = Path(where)
    if where.endswith(".py"):
        if not path.is_file():
            raise _refused(spec, "an existing Python file")
        mod_spec = importlib.util.spec_from_file_location(f"_fpx_target_{path.stem}", path)
        if mod_spec is None or mod_spec.loader is None:
            raise _refused(spec, "a Python file Python can load")
        module = importlib.util.module_from_spec(mod_spec)
        try:
            mod_spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:
            raised = f"a file that runs without error; it raised {_error(exc)}"
            raise _refused(spec, raised) from None
        fn = fn or "forward"
    else:
        if not where or where.startswith("."):
            raise _refused(spec, "'module:function' with an absolute module name")
        if not fn:
            raise _refused(spec, "'module:function' (a module needs a function name)")
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise _refused(spec, f"an importable module ({exc})") from None
        except (Exception, SystemExit) as exc:
            raised = f"a module that imports without error; it raised {_error(exc)}"
            raise _refused(spec, raised) from None
    target = getattr(module, fn, None)
    if not callable(target):
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        raise _refused(spec, f"a function of {where}; it has: {', '.join(names[:20])}")
    return target, spec


def _refused(given: Any, accepted: str) -> InvalidParameter:
    return InvalidParameter("target", given, accepted, WHERE)


def _error(exc: BaseException) -> str:
    """``Type: first line of the message``."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"


def _call(fn: Callable[..., Any], device: str) -> Any:
    """``fn(device)`` when it takes a positional argument, ``fn(device=device)`` when
    ``device`` is keyword-only, else ``fn()``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    kind = inspect.Parameter
    positional = (kind.POSITIONAL_ONLY, kind.POSITIONAL_OR_KEYWORD, kind.VAR_POSITIONAL)
    if any(p.kind in positional for p in params):
        return fn(device)
    if any(p.kind is kind.KEYWORD_ONLY and p.name == "device" for p in params):
        return fn(device=device)
    return fn()


def _tensors(out: Any) -> list[Any]:
    if hasattr(out, "detach"):
        return [out]
    if isinstance(out, dict):
        return [t for k in sorted(out) for t in _tensors(out[k])]
    if isinstance(out, list | tuple):
        return [t for o in out for t in _tensors(o)]
    return []


def _leaves(torch: Any, out: Any) -> list[Any]:
    """The leaf tensors (parameters, inputs with requires_grad) ``out`` depends on, in the
    order autograd's graph reaches them. Every node visited is kept alive in ``visited`` while
    the walk runs: ``next_functions`` hands out fresh Python wrappers, and an ``id`` is unique
    only among live objects, so a freed wrapper's id could otherwise be reused by an unvisited
    node and that node skipped."""
    visited: list[Any] = []
    seen: set[int] = set()
    leaves: list[Any] = []
    if out.grad_fn is None and getattr(out, "requires_grad", False):
        return [out]  # the output is itself a leaf
    stack = [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        visited.append(node)
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None and not any(var is v for v in leaves):
            leaves.append(var)
        stack.extend(n for n, _ in node.next_functions)
    return leaves


def _hash_dense(h: Any, torch: Any, t: Any) -> None:
    c = t.detach().contiguous().cpu()
    if c.dtype == torch.bfloat16:
        c = c.view(torch.int16)
    h.update(f"{c.dtype}{tuple(c.shape)}".encode())
    try:
        data = c.numpy()
    except TypeError:  # a dtype numpy lacks: its bytes
        data = c.reshape(-1).view(torch.uint8).numpy()
    h.update(data.tobytes())


def _digest(torch: Any, tensors: list[Any]) -> str:
    """A hash of the tensors' dtypes, shapes and bits; a sparse tensor is hashed through its
    coalesced indices and values."""
    h = hashlib.sha256()
    for t in tensors:
        t = t.detach()
        if t.is_meta:
            raise _refused(t, "a function returning tensors with values (meta tensors have none)")
        if t.layout == torch.strided:
            _hash_dense(h, torch, t)
            continue
        try:
            coo = (t if t.layout == torch.sparse_coo else t.to_sparse()).coalesce()
        except (RuntimeError, NotImplementedError, TypeError) as exc:
            raise _refused(
                f"a tensor of layout {t.layout}",
                f"a function returning strided or sparse tensors torch can coalesce ({exc})",
            ) from None
        h.update(f"sparse{tuple(coo.shape)}".encode())
        _hash_dense(h, torch, coo.indices())
        _hash_dense(h, torch, coo.values())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _flags(torch: Any, flags: dict[str, Any]) -> Iterator[None]:
    from .backends.torch_device import cpu_threads
    from .backends.torch_device import flags as torch_flags

    tf32, threads = flags.get("tf32"), int(flags.get("threads", torch.get_num_threads()))
    cuda = {k: bool(v) for k, v in flags.items() if k not in ("threads", "tf32")}
    with torch_flags(**cuda, matmul_tf32=tf32, conv_tf32=tf32), cpu_threads(threads):
        yield


def _one_run(torch: Any, fn: Callable[..., Any], device: str, backward: bool) -> list[Any]:
    out = _call(fn, device)
    tensors = _tensors(out)
    if not tensors:
        accepted = "a function returning tensors (or a tuple, list or dict of them)"
        raise _refused(type(out).__name__, accepted)
    if backward:
        root = next((t for t in tensors if t.requires_grad), None)
        if root is None:
            raise InvalidParameter(
                "backward", True, "False for a target whose outputs need no gradient", WHERE
            )
        leaves = _leaves(torch, root)
        grads = torch.autograd.grad(root.float().sum(), leaves, allow_unused=True)
        tensors = tensors + [g for g in grads if g is not None]
    return tensors


_NOT_META = (
    "a device whose tensors hold values, such as 'cpu' (meta tensors have no values to hash)"
)


def _flag_set_names(runs: Any, flag_sets: Any, device: Any, backward: Any, seed: Any) -> list[str]:
    """The flag sets to run, "default" first, once the arguments of `check` are valid."""
    if not isinstance(runs, int) or isinstance(runs, bool) or not 2 <= runs <= 1000:
        raise InvalidParameter("runs", runs, "an integer in [2, 1000]", WHERE)
    if not isinstance(backward, bool):  # "no" would be true
        raise InvalidParameter("backward", backward, "True or False", WHERE)
    if not isinstance(device, str) or not device.strip():
        raise InvalidParameter("device", device, "a torch device string such as 'cpu'", WHERE)
    if device.strip().partition(":")[0] == "meta":
        raise InvalidParameter("device", device, _NOT_META, WHERE)
    if seed is not None and (
        not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64
    ):
        raise InvalidParameter("seed", seed, "None or an integer in [0, 2**64)", WHERE)
    names = list(FLAG_SETS) if flag_sets is None else flag_sets
    if (
        not isinstance(names, list | tuple)
        or not names
        or not all(isinstance(n, str) and n in FLAG_SETS for n in names)
    ):
        raise InvalidParameter("flag_sets", flag_sets, "names from: " + ", ".join(FLAG_SETS), WHERE)
    names = list(names)
    if "default" in names:
        names.remove("default")
    return ["default", *names]


def _torch_on(device: str) -> Any:
    """torch, once it is known to hold values on ``device``."""
    from . import backends
    from .errors import BackendUnavailable

    if device.startswith("cuda"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch = backends.load("torch")
    try:
        meta = torch.empty(1, device=device).is_meta
    except Exception as exc:
        raise BackendUnavailable(
            f"torch device {device!r}",
            f"torch cannot use it here ({exc}).",
            "pass --device cpu, or run on a machine with that device",
        ) from None
    if meta:
        raise InvalidParameter("device", device, _NOT_META, WHERE)
    return torch


def _sync(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _run_set(
    torch: Any,
    fn: Callable[..., Any],
    name: str,
    device: str,
    backward: bool,
    runs: int,
    seed: int | None,
) -> tuple[list[str], list[float], str | None]:
    """``runs`` + 1 runs under flag set ``name`` (the first warms up: hashed, not timed): the
    hashes, the times in seconds, and the error the target raised (None: it did not)."""
    hashes: list[str] = []
    times: list[float] = []
    with _flags(torch, FLAG_SETS[name]):
        for i in range(runs + 1):  # run 0 warms up (autotuning, caches): not timed
            if seed is not None:
                torch.manual_seed(seed)
            _sync(torch, device)
            t0 = time.perf_counter()
            try:
                tensors = _one_run(torch, fn, device, backward)
                _sync(torch, device)
            except InvalidParameter:
                raise
            except Exception as exc:  # e.g. an op with no deterministic implementation
                return hashes, times, _error(exc)
            if i:
                times.append(time.perf_counter() - t0)
            hashes.append(_digest(torch, tensors))
    return hashes, times, None


def check(
    target: str | Callable[..., Any],
    runs: int = 5,
    flag_sets: list[str] | tuple[str, ...] | None = None,
    device: str = "cpu",
    backward: bool = False,
    seed: int | None = 0,
) -> DeterminismReport:
    """Run ``target`` ``runs`` times under each flag set and report (see the module docstring).

    Each flag set first runs once more to warm up (cuDNN's benchmark autotunes then); that run
    is hashed but not timed.

    ``flag_sets`` are names from `FLAG_SETS` (default: all; "default" always runs first).
    On a CUDA device ``CUBLAS_WORKSPACE_CONFIG`` is set to ``:4096:8`` when unset, as
    ``use_deterministic_algorithms`` requires for cuBLAS.
    """
    names = _flag_set_names(runs, flag_sets, device, backward, seed)
    fn, label = load_target(target)
    torch = _torch_on(device)
    results: list[FlagResult] = []
    base_hash: str | None = None
    base_ms: float | None = None
    for name in names:
        hashes, times, raised = _run_set(torch, fn, name, device, backward, runs, seed)
        med = statistics.median(times) * 1e3 if times else float("nan")
        if name == "default" and raised is None:
            base_ms = med
            base_hash = hashes[0] if len(set(hashes)) == 1 else None  # else: nothing to match
        distinct = len(set(hashes))
        results.append(
            FlagResult(
                name=name,
                flags=dict(FLAG_SETS[name]),
                runs=len(hashes),
                distinct=distinct,
                same_as_default=None
                if base_hash is None or raised is not None or distinct != 1
                else hashes[0] == base_hash,
                median_ms=med,
                relative_time=med / base_ms if base_ms and raised is None else None,
                raised=raised,
                hashes=tuple(hashes),
            )
        )
    env = {k: os.environ.get(k) for k in ("CUBLAS_WORKSPACE_CONFIG", "OMP_NUM_THREADS")}
    return DeterminismReport(label, device, backward, runs, torch.__version__, tuple(results), env)


# ---------------------------------------------------------------------------------------------
# an example target (used by the notebook and the tests; any user function works the same way)


def example(device: str = "cpu") -> Any:
    """A small conv net forward with an ``index_add_`` (scatter with atomics on a GPU).

    Inputs and weights are made from a fixed generator on the CPU, so every run starts from the
    same bits; the output requires grad (for ``backward=True``).
    """
    from . import backends

    torch = backends.load("torch")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 16, 32, 32, generator=g).to(device)
    w1 = (torch.randn(32, 16, 3, 3, generator=g) * 0.1).to(device).requires_grad_()
    w2 = (torch.randn(32, 32, 3, 3, generator=g) * 0.1).to(device).requires_grad_()
    idx = torch.randint(0, 64, (8 * 32 * 32 * 32,), generator=g).to(device)
    h = torch.nn.functional.conv2d(x, w1, padding=1).relu()
    h = torch.nn.functional.conv2d(h, w2, padding=1)
    bins = torch.zeros(64, device=device).index_add(0, idx, h.reshape(-1))
    return h.mean(dim=(2, 3)), bins


def threads_sum(device: str = "cpu") -> Any:
    """A long float32 sum: deterministic per thread count, but the count changes its bits."""
    from . import backends

    torch = backends.load("torch")
    g = torch.Generator().manual_seed(1)
    x = torch.randn(1 << 20, generator=g).to(device) * 1000
    return x.sum()


@dataclass(frozen=True)
class RecordProvenance:
    """Where and when a recorded check ran."""

    gpu_name: str
    device: str
    torch: str
    date: str  # ISO 8601, UTC


@dataclass(frozen=True)
class DeterminismRecord:
    """A recorded check and the file it was read from."""

    provenance: RecordProvenance
    report: DeterminismReport
    path: Path


def load_record(path: str | os.PathLike[str] | None = None) -> DeterminismRecord:
    """A recorded check (``data/gpu/determinism_check/*.json``, the newest when no path; a file
    ``{"provenance": ..., "settings": ..., "report": DeterminismReport.to_dict()}``), typed;
    `RecordError` naming what is missing."""
    import json

    from .paths import data_dir

    if path is None:
        found = sorted((data_dir() / "gpu" / "determinism_check").glob("*.json"))
        if not found:
            raise RecordError(
                "no recorded determinism check in data/gpu/determinism_check; record one on a "
                "GPU machine with: python3 benchmarks/determinism_record.py "
                "data/gpu/determinism_check/NAME.json"
            )
        path = found[-1]
    if not isinstance(path, str | os.PathLike) or isinstance(path, bytes):
        raise InvalidParameter("path", path, "None or a path to a JSON record", "load_record")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        if data.get("format") != "fpexplore-determinism-check" or "report" not in data:
            raise ValueError("not a determinism-check record")
        prov = data.get("provenance")
        for key in RecordProvenance.__dataclass_fields__:
            if not isinstance(prov, dict) or not isinstance(prov.get(key), str):
                raise ValueError(f"its provenance has no {key!r}")
        report = DeterminismReport.from_dict(data["report"])
    except (OSError, ValueError) as exc:  # RecordError is a ValueError
        raise RecordError(f"{path} is not a readable determinism-check record ({exc})") from None
    provenance = RecordProvenance(**{k: prov[k] for k in RecordProvenance.__dataclass_fields__})
    return DeterminismRecord(provenance, report, Path(path))
