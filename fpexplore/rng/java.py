"""`java.util.Random`, emulated: the 48-bit LCG and its nextInt/nextFloat/nextDouble/nextGaussian.

``nextGaussian`` uses ``StrictMath.log``, which is fdlibm's ``__ieee754_log``; it is ported
below operation for operation so that the emulator matches a real JVM bit for bit (the C
library's ``log`` is more accurate and would differ in the last bit now and then).
`run_java` runs the real class on a JVM, when one is installed, for the tests and lessons.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import select
import shutil
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from ..errors import BackendUnavailable, InvalidParameter, WorkerError

_MULT, _ADD, _MASK = 0x5DEECE66D, 0xB, (1 << 48) - 1


class JavaRandom:
    """``new java.util.Random(seed)``."""

    def __init__(self, seed: int) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise InvalidParameter("seed", seed, "an int (a Java long)")
        self.seed = (seed ^ _MULT) & _MASK
        self._next_gaussian: float | None = None

    def next_bits(self, bits: int) -> int:
        """``next(bits)``: the top ``bits`` of the 48-bit state, as a signed Java int."""
        self.seed = (self.seed * _MULT + _ADD) & _MASK
        r = self.seed >> (48 - bits)
        return r - (1 << 32) if r >= 1 << 31 else r

    def next_int(self) -> int:
        return self.next_bits(32)

    def next_float(self) -> np.float32:
        """24 random bits: ``next(24) / (float)(1 << 24)``."""
        return np.float32(self.next_bits(24)) * np.float32(2.0**-24)

    def next_double(self) -> float:
        """53 random bits: ``((long) next(26) << 27) + next(27)) * 0x1.0p-53``."""
        return ((self.next_bits(26) << 27) + self.next_bits(27)) * 2.0**-53

    def next_gaussian(self) -> float:
        """Marsaglia's polar method with StrictMath (fdlibm) log and sqrt; pairs are cached."""
        if self._next_gaussian is not None:
            value, self._next_gaussian = self._next_gaussian, None
            return value
        while True:
            v1 = 2 * self.next_double() - 1
            v2 = 2 * self.next_double() - 1
            s = v1 * v1 + v2 * v2
            if 0 < s < 1:
                break
        multiplier = math.sqrt(-2 * fdlibm_log(s) / s)
        self._next_gaussian = v2 * multiplier
        return v1 * multiplier

    def floats(self, n: int) -> np.ndarray:
        return np.array([self.next_float() for _ in range(n)], dtype=np.float32)

    def doubles(self, n: int) -> np.ndarray:
        return np.array([self.next_double() for _ in range(n)], dtype=np.float64)

    def gaussians(self, n: int) -> np.ndarray:
        return np.array([self.next_gaussian() for _ in range(n)], dtype=np.float64)


_LN2_HI, _LN2_LO, _TWO54 = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 2.0**54
_LG = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
)


def _words(x: float) -> tuple[int, int]:
    b = struct.unpack("<q", struct.pack("<d", x))[0]
    hi = (b >> 32) & 0xFFFFFFFF
    return (hi - (1 << 32) if hi >= 1 << 31 else hi), b & 0xFFFFFFFF


def _with_hi(x: float, hi: int) -> float:
    lo = struct.unpack("<Q", struct.pack("<d", x))[0] & 0xFFFFFFFF
    return struct.unpack("<d", struct.pack("<Q", ((hi & 0xFFFFFFFF) << 32) | lo))[0]


def fdlibm_log(x: float) -> float:
    """fdlibm ``__ieee754_log`` (Java's ``StrictMath.log``), step for step."""
    hx, lx = _words(x)
    k = 0
    if hx < 0x00100000:
        if ((hx & 0x7FFFFFFF) | lx) == 0:
            return -math.inf
        if hx < 0:
            return math.nan
        k -= 54
        x *= _TWO54
        hx, _ = _words(x)
    if hx >= 0x7FF00000:
        return x + x
    k += (hx >> 20) - 1023
    hx &= 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000
    x = _with_hi(x, hx | (i ^ 0x3FF00000))
    k += i >> 20
    f = x - 1.0
    if (0x000FFFFF & (2 + hx)) < 3:
        if f == 0.0:
            return 0.0 if k == 0 else k * _LN2_HI + k * _LN2_LO
        r = f * f * (0.5 - 0.33333333333333333 * f)
        return f - r if k == 0 else k * _LN2_HI - ((r - k * _LN2_LO) - f)
    s = f / (2.0 + f)
    dk = float(k)
    z = s * s
    i = hx - 0x6147A
    w = z * z
    j = 0x6B851 - hx
    t1 = w * (_LG[1] + w * (_LG[3] + w * _LG[5]))
    t2 = z * (_LG[0] + w * (_LG[2] + w * (_LG[4] + w * _LG[6])))
    i |= j
    r = t2 + t1
    if i > 0:
        hfsq = 0.5 * f * f
        if k == 0:
            return f - (hfsq - s * (hfsq + r))
        return dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    if k == 0:
        return f - s * (f - r)
    return dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f)


_JAVA_SOURCE = """
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Random;
public class RandomDump {
  // one request: n, then seeds; the answer: one JSON line, per seed the raw bits of each kind
  static String dump(String[] a, int from) {
    int n = Integer.parseInt(a[from]);
    StringBuilder sb = new StringBuilder("{");
    String[] kinds = {"float", "double", "gaussian", "int"};
    for (int q = from + 1; q < a.length; q++) {
      long seed = Long.parseLong(a[q]);
      sb.append(q > from + 1 ? "," : "").append('"').append(seed).append("\\":{");
      for (int k = 0; k < kinds.length; k++) {
        Random r = new Random(seed);
        sb.append(k > 0 ? "," : "").append('"').append(kinds[k]).append("\\":[");
        for (int i = 0; i < n; i++) {
          if (i > 0) sb.append(',');
          switch (kinds[k]) {
            case "float": sb.append(Float.floatToRawIntBits(r.nextFloat())); break;
            case "double": sb.append(Double.doubleToRawLongBits(r.nextDouble())); break;
            case "gaussian": sb.append(Double.doubleToRawLongBits(r.nextGaussian())); break;
            default: sb.append(r.nextInt());
          }
        }
        sb.append(']');
      }
      sb.append('}');
    }
    return sb.append('}').toString();
  }
  public static void main(String[] a) throws Exception {
    if (a.length > 0 && a[0].equals("--serve")) {  // one request per line until stdin closes
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        String answer;
        try {
          answer = dump(line.trim().split(" "), 0);
        } catch (RuntimeException e) {
          answer = "{\\"error\\":\\"" + e.getClass().getName() + "\\"}";
        }
        System.out.println(answer);
        System.out.flush();
      }
      return;
    }
    System.out.println(dump(a, 1));
  }
}
"""


def java_version() -> str:
    """The version line of the ``java`` on PATH, or '' when there is none."""
    java = shutil.which("java")
    if java is None:
        return ""
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    return (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else ""


def _launcher(java: str, folder: Path) -> list[str]:
    """The command that starts ``RandomDump``: its class compiled once with ``javac`` into
    ``folder`` (a JVM start then costs about 0.1 s), or, without a ``javac``, Java's
    source-file mode (which compiles on every start, about 2 s)."""
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "RandomDump.java"
    if not src.exists() or src.read_text() != _JAVA_SOURCE:
        src.write_text(_JAVA_SOURCE)
        (folder / "RandomDump.class").unlink(missing_ok=True)
    if (folder / "RandomDump.class").exists() or _compile(src, folder):
        return [java, "-Xshare:auto", "-cp", str(folder), "RandomDump"]
    return [java, str(src)]


def _compile(src: Path, folder: Path) -> bool:
    """Compile ``src`` with ``javac`` beside it (written aside, then renamed into place, so a
    concurrent start never reads half a class file); False without a working ``javac``."""
    javac = shutil.which("javac")
    if javac is None:
        return False
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        done = subprocess.run([javac, "-d", tmp, str(src)], capture_output=True, timeout=120)
        if done.returncode != 0:
            return False
        os.replace(Path(tmp) / "RandomDump.class", folder / "RandomDump.class")
    return True


#: how long a request to the Java process may take before it is given up
JAVA_TIMEOUT = 120.0


class _JavaServer:
    """One ``java RandomDump --serve`` process answering requests over stdin/stdout: a JVM
    start (about 0.1 s) once per session instead of once per request. Started lazily, closed
    at exit; any failure ends it, and the request is made again by a one-shot process."""

    def __init__(self, launcher: list[str]) -> None:
        self.launcher = launcher
        self.proc = subprocess.Popen(
            [*launcher, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.pending = b""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, line: str, timeout: float) -> str:
        """Send one request line, return the answer line (``WorkerError`` on any failure)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise WorkerError(f"the Java process stopped taking requests: {exc}") from None
        out = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([out], [], [], left)[0]:
                raise WorkerError(f"the Java process did not answer within {timeout:g} s")
            chunk = os.read(out, 1 << 20)
            if not chunk:
                raise WorkerError("the Java process exited")
            self.pending += chunk
        answer, _, self.pending = self.pending.partition(b"\n")
        return answer.decode()

    def close(self) -> None:
        """Close its stdin (it exits), or kill it if it does not."""
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


_server: _JavaServer | None = None
_server_lock = threading.Lock()


def _shutdown() -> None:
    """Stop the Java process, if one runs (registered at exit)."""
    global _server
    with _server_lock:
        if _server is not None:
            _server.close()
            _server = None


atexit.register(_shutdown)


def _served(launcher: list[str], n: int, seeds: list[int]) -> str | None:
    """The persistent process's answer, started for ``launcher`` if need be; None when it
    failed (it is then stopped, and the caller runs a one-shot process)."""
    global _server
    with _server_lock:
        try:
            if _server is not None and (not _server.alive() or _server.launcher != launcher):
                _server.close()
                _server = None
            if _server is None:
                _server = _JavaServer(launcher)
            answer = _server.ask(" ".join(map(str, [n, *seeds])), JAVA_TIMEOUT)
            if answer.startswith('{"error"'):
                raise WorkerError(answer)
            return answer
        except (OSError, WorkerError):
            if _server is not None:
                _server.close()
                _server = None
            return None


def run_java(seeds: list[int], n: int) -> dict[int, dict[str, np.ndarray]]:
    """Run the real ``java.util.Random`` and return its draws as arrays: per seed, ``float``
    (float32), ``double``, ``gaussian`` (float64) and ``int`` (int32). Requests go to one
    Java process kept running (started on the first call); if it fails, a fresh one-shot
    process answers instead."""
    java = shutil.which("java")
    if java is None:
        raise BackendUnavailable(
            "java", "no Java runtime is on PATH.", "make djl   (or install a Java 17 runtime)"
        )
    from ..paths import cache_dir

    launcher = _launcher(java, cache_dir() / "java-random")
    text = _served(launcher, n, seeds)
    if text is None:
        cmd = [*launcher, "RandomDump", str(n), *map(str, seeds)]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=JAVA_TIMEOUT)
        if out.returncode != 0:
            raise WorkerError(f"java RandomDump failed: {out.stderr.strip()[:500]}")
        text = out.stdout
    raw = json.loads(text)
    result = {}
    for seed, kinds in raw.items():
        result[int(seed)] = {
            "float": np.array(kinds["float"], dtype=np.int64).astype(np.uint32).view(np.float32),
            "double": np.array(kinds["double"], dtype=np.int64).view(np.float64),
            "gaussian": np.array(kinds["gaussian"], dtype=np.int64).view(np.float64),
            "int": np.array(kinds["int"], dtype=np.int32),
        }
    return result
