"""Work done in a fresh process under a switch's environment.

The switches are read once, when each library loads, so the only honest way to try anything
under one is a new interpreter: `spawn` starts ``python -m MODULE`` with the environment,
hands it a payload on stdin and reads one JSON document back (`reply` writes it). A
fingerprint (`fingerprint`) and one function a module `serve`s (`call`) run this way, and so
do the lessons' claims (`fpexplore.testing.runner`).

With ``$FPEXPLORE_FRESH_CACHE=1`` (the test suite sets it) each result is also kept on disk,
under ``cache_dir()/fresh``, and a later call with the same key reads it instead of starting
a process: see `fresh_key` for what the key holds (the environment the process would get, the
CPU, every installed distribution's version and a hash of the package's code, and of its data
for claims). Every take and every reuse is logged (`logging` and ``cache_dir()/fresh/log.jsonl``,
which the test session summarizes).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from functools import cache
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from ..errors import WorkerError
from ..quiet import TF_LOG_LEVEL

T = TypeVar("T")
R = TypeVar("R")

#: a fresh process with numpy, torch, TensorFlow and the DJL worker loaded holds about this
#: much memory of its own (1.3 GB resident with CUDA torch, less with the CPU wheel)
PROCESS_BYTES = 1_300_000_000
#: caps the memory fresh processes may count on, in bytes, below what the machine has (as a
#: container's limit does; the Binder replay sets Binder's 2 GB here)
MEMORY_LIMIT_ENV = "FPEXPLORE_MEMORY_LIMIT"


#: the module a fresh process runs by default (`fingerprint`'s)
WORKER = "fpexplore.dispatch.worker"


def spawn(
    args: list[str], payload: str, env: Mapping[str, str], timeout: float, module: str = WORKER
) -> Any:
    """Run ``python -m module`` with ``args`` and ``payload`` on stdin in a fresh interpreter
    under ``env``: its last line, as JSON (`reply` writes it)."""
    full = {**os.environ, **env, "PYTHONWARNINGS": "ignore", "TF_CPP_MIN_LOG_LEVEL": TF_LOG_LEVEL}
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        input=payload,
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
        check=False,
    )
    if proc.returncode < 0:  # killed by a signal: name it and why, never a bare exit code
        raise WorkerError(f"the fresh process under {dict(env)} {died_by(proc.returncode)}")
    last = proc.stdout.strip().splitlines()[-1:] or [""]
    try:
        return json.loads(last[0])
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout)[-2000:]
        raise WorkerError(
            f"the fresh process under {dict(env)} exited with {proc.returncode} and no result:\n"
            + tail
        ) from None


#: what a signal that ends a fresh process usually means
_SIGNAL_REASONS = {
    "SIGILL": "an instruction this CPU does not have (a path forced beyond the CPU)",
    "SIGKILL": "killed from outside, most often for memory (the out-of-memory killer)",
    "SIGSEGV": "a crash in a library's native code",
    "SIGABRT": "a library aborted",
    "SIGBUS": "a bad memory access in native code",
}


def died_by(returncode: int) -> str:
    """``"died by SIGILL: <reason>"`` for a process's negative ``returncode``."""
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"died by {name}: {_SIGNAL_REASONS.get(name, 'ended by a signal')}"


def _memory_budget() -> float:
    """Bytes this process may still add: the smallest of the machine's available memory, the
    container's (cgroup) limit and ``$FPEXPLORE_MEMORY_LIMIT``, less what this process holds."""
    limits: list[float] = []
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):  # absent, or "max": no limit
            limits.append(float(Path(path).read_text(encoding="ascii").strip()))
    with contextlib.suppress(KeyError, ValueError):
        limits.append(float(os.environ[MEMORY_LIMIT_ENV]))
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            held = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    limits.append(int(line.split()[1]) * 1024 + held)
    except (OSError, ValueError):
        return 0.0  # unknown: one process at a time
    return (min(limits) if limits else 0.0) - held


def jobs(n: int) -> int:
    """How many fresh processes to run at once for ``n`` of them: one per CPU core, as many
    as the memory budget holds (`PROCESS_BYTES` each), at least one."""
    fit = int(_memory_budget() // PROCESS_BYTES)
    return max(1, min(n, os.cpu_count() or 1, fit))


def each(
    fn: Callable[[T], R], items: Iterable[T], done: Callable[[], object] | None = None
) -> list[R]:
    """``[fn(x) for x in items]``, with `jobs` of them at once (``fn`` starts a fresh process
    and waits for it, so threads suffice); results in the order of ``items``. ``done`` is
    called in the caller's thread as each one finishes (a progress bar's update)."""
    items = list(items)
    with ThreadPoolExecutor(jobs(len(items))) as pool:
        futures = [pool.submit(fn, x) for x in items]
        for _ in as_completed(futures):
            if done is not None:
                done()
        return [f.result() for f in futures]


def fingerprint(
    env: Mapping[str, str], label: str, values: bool = False, timeout: float = 300.0
) -> dict[str, Any]:
    """`fingerprint.take(label, values)` in a fresh interpreter whose environment is this one
    plus ``env`` (read from the on-disk cache where it is on and holds this key: `fresh_key`;
    one take, with values, serves every label and both ``values``)."""
    if not cache_on():
        return _take_fingerprint(env, label, values, timeout)
    fp = cached(
        "fingerprint",
        env,
        {},
        lambda: _take_fingerprint(env, "", True, timeout),
        _fingerprint_kept,
        label,
    )
    fp["label"] = label or platform.node() or "this machine"  # as `fingerprint.take` names it
    if not values:
        for op in fp["ops"].values():
            op.pop("shape", None)
            op.pop("values", None)
    return fp


def _fingerprint_kept(fp: dict[str, Any]) -> bool:
    """Whether a fingerprint is kept: not one whose worker failed (it is tried again)."""
    return not any(" did not run: " in why for why in fp.get("unavailable", {}).values())


def seed_fingerprint() -> None:
    """In a process that is itself fresh (started by `spawn` under its switch, nothing run
    yet): take its own fingerprint here, and keep it where the cache is on as the one
    `fingerprint` would start another interpreter for under the same environment (``env``
    empty). The same interpreter, environment and libraries, loaded the same way, so a
    lesson's nested fingerprint of this configuration reads it instead of starting one."""
    if not cache_on():
        return
    from .fingerprint import take

    def taken() -> dict[str, Any]:
        return json.loads(json.dumps(take("", values=True)))  # as a worker's reply reads

    cached("fingerprint", {}, {}, taken, _fingerprint_kept, "this process")


def call(module: str, args: Sequence[Any], env: Mapping[str, str], timeout: float = 300.0) -> Any:
    """The function ``module`` `serve`s, on ``args`` (JSON in, JSON out), in a fresh
    interpreter whose environment is this one plus ``env``: for what a library decides once,
    when it loads (MKL's CBWR mode); kept in the on-disk cache where it is on."""
    payload = json.dumps(list(args))
    if not cache_on():
        return spawn([], payload, env, timeout, module)
    return cached(
        "call",
        env,
        {"call": module, "args": payload},
        lambda: {"value": spawn([], payload, env, timeout, module)},
        lambda result: True,
        module,
    )["value"]


def reply(value: Any) -> NoReturn:
    """End a fresh process with ``value`` as its last line (what `spawn` reads): the JVM worker
    it started is stopped, but the interpreter's teardown of torch and TensorFlow, which takes
    seconds and decides nothing, is skipped."""
    sys.stdout.write("\n" + json.dumps(value) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    client = sys.modules.get("fpexplore.jvm.client")  # loaded: a JVM may run
    if client is not None:
        client.shutdown()
    os._exit(0)


def serve(fn: Callable[..., Any]) -> NoReturn:
    """The fresh process of `call`: ``fn`` on the arguments read from stdin, `reply`-ed."""
    reply(fn(*json.loads(sys.stdin.read() or "[]")))


def _take_fingerprint(
    env: Mapping[str, str], label: str, values: bool, timeout: float
) -> dict[str, Any]:
    return spawn(["--fingerprint", label] + (["--values"] if values else []), "", env, timeout)


# ----------------------------------------------------------------------------- the cache
#: "1" turns the on-disk cache of fresh processes' results on (the test suite sets it)
CACHE_ENV = "FPEXPLORE_FRESH_CACHE"
#: names the run (a test session) in the cache's log, so that it can say what it reused
RUN_ENV = "FPEXPLORE_FRESH_RUN"
#: this process's variables that a fresh process's result may depend on: exact names ...
KEY_NAMES = frozenset(
    {
        "PYTHONPATH",
        "PYTHONHASHSEED",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "JAVA_HOME",
        "HOME",
        "XDG_DATA_HOME",
    }
)
#: ... and prefixes (every library's path, thread and device switches, fpexplore's own)
KEY_PREFIXES = (
    "OMP_",
    "GOMP_",
    "KMP_",
    "MKL_",
    "OPENBLAS_",
    "GOTO",
    "NPY_",
    "NUMPY_",
    "ATEN_",
    "TORCH",
    "PYTORCH_",
    "TF_",
    "TENSORFLOW",
    "XLA_",
    "KERAS",
    "ONEDNN_",
    "DNNL_",
    "CUDA_",
    "CUBLAS_",
    "CUDNN_",
    "NVIDIA_",
    "DJL_",
    "JAVA",
    "FPEXPLORE_",
)
#: variables left out of the key: the cache's own, where the test suite keeps screenshots,
#: how many processes may run at once, what `spawn` sets in every child anyway, and where
#: compilers cache their work
KEY_IGNORED = frozenset(
    {
        CACHE_ENV,
        RUN_ENV,
        MEMORY_LIMIT_ENV,
        "FPEXPLORE_SCREENSHOTS",
        "FPEXPLORE_CACHE",  # replaced by the cache folder it names (`paths.cache_dir`)
        "TF_CPP_MIN_LOG_LEVEL",
        # where compilers keep their own caches (torch.compile sets the first when it runs, so
        # a process that compiled once passes it to its children): no result depends on it
        "TORCHINDUCTOR_CACHE_DIR",
        "TRITON_CACHE_DIR",
        "PYTORCH_KERNEL_CACHE_PATH",
        "CUDA_CACHE_PATH",
    }
)
#: the package's folders that are not code (an installed package's shipped data)
_NOT_CODE = ("__pycache__", "data")

log = logging.getLogger(__name__)


def cache_on() -> bool:
    """Whether fresh processes' results are kept on disk (``$FPEXPLORE_FRESH_CACHE=1``)."""
    return os.environ.get(CACHE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _files_hash(root: Path, skip: tuple[str, ...] = ()) -> str:
    """sha256 of every file under ``root`` (relative path and bytes), in path order; folders
    named in ``skip`` (at any depth) and compiled ``.pyc`` files left out."""
    h = hashlib.sha256()
    if root.is_dir():
        files = sorted(
            p
            for p in root.rglob("*")
            if p.is_file()
            and p.suffix != ".pyc"
            and not set(p.relative_to(root).parts[:-1]) & set(skip)
        )
        for p in files:
            h.update(p.relative_to(root).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def code_hash() -> str:
    """A hash of the fpexplore package's code: every file of it but compiled ones and shipped
    data (the same for a checkout and an installed copy of the same code). Hashed at each call
    (a few milliseconds): code edited while this process runs is what a new process imports."""
    return _files_hash(Path(__file__).resolve().parents[1], _NOT_CODE)


@cache
def _data_hash(roots: tuple[str, ...]) -> str:
    return hashlib.sha256("".join(_files_hash(Path(r)) for r in roots).encode()).hexdigest()


def data_hash() -> str:
    """A hash of the data the lessons read: `paths.data_dir` (recorded runs, images) and every
    folder GPU records are read from."""
    from ..paths import data_dir, gpu_record_dirs

    roots = (data_dir(), *gpu_record_dirs())
    return _data_hash(tuple(str(r.resolve()) for r in roots))


@cache
def _machine() -> dict[str, Any]:
    """What a result may depend on that no environment variable says: the CPU, the cores
    this process may use, the cards, the interpreter and every installed distribution."""
    import importlib.metadata

    from ..probe.cpu import cpu_flags, cpu_model

    dists = sorted(
        {
            (str(d.metadata["Name"] or "").lower(), str(d.version))
            for d in importlib.metadata.distributions()
        }
    )
    quota = ""
    with contextlib.suppress(OSError):
        quota = Path("/sys/fs/cgroup/cpu.max").read_text().strip()
    return {
        "python": sys.version,
        "arch": platform.machine(),
        "system": platform.system(),
        "cpu": cpu_model(),
        "flags": sorted(cpu_flags()),
        "cpus": os.cpu_count(),
        "usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "quota": quota,
        "cards": sorted(str(p) for p in Path("/dev").glob("nvidia*")),
        "distributions": hashlib.sha256(json.dumps(dists).encode()).hexdigest(),
    }


def _stamps(folder: Path, deep: bool = True) -> list[Any]:
    """Every file in ``folder`` (``deep``: and below it) with its size and modification time:
    what a set-up step made there."""
    if not folder.is_dir():
        return []
    out = []
    for p in sorted(folder.rglob("*") if deep else folder.iterdir()):
        with contextlib.suppress(OSError):
            if p.is_file():
                st = p.stat()
                out.append([p.relative_to(folder).as_posix(), st.st_size, st.st_mtime_ns])
    return out


def fresh_key(env: Mapping[str, str], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a fresh process's result under ``env`` depends on, as a JSON-ready dict: every
    variable of its environment (this one plus ``env``) named in `KEY_NAMES` or starting with
    `KEY_PREFIXES` (but `KEY_IGNORED`); the cache folder, where the DJL jars and the LibTorch
    program live, and what set-up built there (names, sizes and times); which ``java`` its
    PATH finds; `_machine`; the package's `code_hash`; and ``extra``."""
    from ..paths import cache_dir

    full = {**os.environ, **env}
    variables = {
        k: v
        for k, v in full.items()
        if (k in KEY_NAMES or k.startswith(KEY_PREFIXES)) and k not in KEY_IGNORED
    }
    folder = cache_dir().resolve()
    java = shutil.which("java", path=full.get("PATH"))
    return {
        "env": dict(sorted(variables.items())),
        "cache": str(folder),
        # what `make setup` built there: the DJL jars and classes, the LibTorch program
        "setup": {
            name: hashlib.sha256(json.dumps(_stamps(folder / name, deep)).encode()).hexdigest()
            for name, deep in (("djl/jars", True), ("djl/classes", True), ("libtorch/build", False))
        },
        "java": str(Path(java).resolve()) if java else None,
        "machine": _machine(),
        "code": code_hash(),
        **dict(extra or {}),
    }


def _digest(key: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def _folder() -> Path:
    from ..paths import cache_dir

    return cache_dir() / "fresh"


def _log(kind: str, what: str, env: Mapping[str, str], digest: str, reused: bool, s: float):
    from .fingerprint import PATH_ENV

    # the switches the process runs under: those given, and those this process was started with
    env = {**{k: v for k, v in os.environ.items() if k in PATH_ENV}, **env}
    line = {
        "run": os.environ.get(RUN_ENV, ""),
        "kind": kind,
        "what": what,
        "env": dict(env),
        "key": digest[:16],
        "reused": reused,
        "seconds": round(s, 2),
        "pid": os.getpid(),
    }
    verb = "reused" if reused else "took"
    log.info("%s %s %s under %s (key %s)", verb, kind, what, dict(env), digest[:16])
    with contextlib.suppress(OSError), open(_folder() / "log.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


@contextlib.contextmanager
def _locked(path: Path):
    """Hold an exclusive lock on ``path`` (other processes taking the same key wait, then read
    what the first one kept)."""
    try:
        import fcntl
    except ImportError:  # no flock: two processes may take the same key, harmlessly
        yield
        return
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached(
    kind: str,
    env: Mapping[str, str],
    extra: Mapping[str, Any],
    compute: Callable[[], dict[str, Any]],
    keep: Callable[[dict[str, Any]], bool],
    what: str,
) -> dict[str, Any]:
    """``compute()``'s result for ``fresh_key(env, extra)``: read from the cache where it holds
    that key, else computed and (where ``keep`` approves it) kept."""
    key = {"kind": kind, **fresh_key(env, extra)}
    digest = _digest(key)
    folder = _folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}-{digest[:32]}.json"
    t0 = time.monotonic()
    with _locked(folder / f"{kind}-{digest[:32]}.lock"):
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = None
        if isinstance(stored, dict) and stored.get("key") == key:
            with contextlib.suppress(OSError):
                os.utime(path)  # recently used: kept longest by `prune`
            _log(kind, what, env, digest, True, time.monotonic() - t0)
            return stored["result"]
        result = compute()
        if keep(result):
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"key": key, "result": result}), encoding="utf-8")
            os.replace(tmp, path)
        _log(kind, what, env, digest, False, time.monotonic() - t0)
        return result


def prune(max_bytes: int = 300_000_000, max_age_days: float = 30.0, log_lines: int = 5000) -> None:
    """Keep the cache small: results unused for ``max_age_days`` go, then the least recently
    used ones until the rest fit in ``max_bytes``; the log keeps its last ``log_lines`` lines."""
    folder = _folder()
    if not folder.is_dir():
        return
    now = time.time()
    entries = []
    for p in folder.glob("*.json"):
        with contextlib.suppress(OSError):
            st = p.stat()
            entries.append((st.st_mtime, st.st_size, p))
    entries.sort(reverse=True)  # newest first
    total = 0
    for mtime, size, p in entries:
        total += size
        if total > max_bytes or now - mtime > max_age_days * 86400:
            for gone in (p, p.with_suffix(".lock")):
                with contextlib.suppress(OSError):
                    gone.unlink()
    log_file = folder / "log.jsonl"
    with contextlib.suppress(OSError):
        if log_file.stat().st_size > 200 * log_lines:
            lines = log_file.read_text(encoding="utf-8").splitlines()[-log_lines:]
            tmp = log_file.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
            os.replace(tmp, log_file)
