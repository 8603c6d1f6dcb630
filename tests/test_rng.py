"""The independent generators against the real ones, bit for bit, on many seeds and sizes."""

from __future__ import annotations

import os
import random
import shutil
import signal

import numpy as np
import pytest
import torch

from fpexplore import backends, rng
from fpexplore.errors import InvalidParameter
from fpexplore.rng import MT19937, JavaRandom, TorchCPURandom
from fpexplore.rng.avx_mathfun import fma
from fpexplore.rng.torch_cpu import linear_init

SEEDS = [0, 1, 2, 7, 42, 1234, 99_999, 2**31 - 1, 2**32 - 1, *range(100, 120)]
SIZES = [1, 2, 3, 15, 16, 17, 31, 32, 33, 100, 624, 625, 1000, 1249, 4099]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and bool((a.view(np.uint8) == b.view(np.uint8)).all())
    )


def test_mt19937_state_matches_numpy_and_python():
    for seed in [0, 5, 42, 2**32 - 1]:
        np_state = np.random.RandomState(seed).get_state()[1]
        assert (rng.init_genrand(seed) == np_state).all()
        py_state = np.array(random.Random(seed).getstate()[1][:624], dtype=np.uint32)
        assert (MT19937.from_python_seed(seed).state == py_state).all()


@pytest.mark.parametrize("seed", [0, 42, 2**32 - 1, 2**40 + 17])
def test_mt19937_words_match_python_getrandbits(seed):
    r = random.Random(seed)
    expected = np.array([r.getrandbits(32) for _ in range(3000)], dtype=np.uint32)
    assert (MT19937.from_python_seed(seed).next_u32(3000) == expected).all()


def test_mt19937_chunked_draws_equal_one_draw():
    a = MT19937.from_seed(3).next_u32(2000)
    g = MT19937.from_seed(3)
    b = np.concatenate([g.next_u32(k) for k in (1, 622, 1, 700, 676)])
    assert (a == b).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_rand_bit_for_bit(dtype):
    tdt = getattr(torch, dtype)
    for seed in SEEDS:
        for n in SIZES:
            torch.manual_seed(seed)
            assert _same(torch.rand(n, dtype=tdt).numpy(), rng.torch_rand(seed, n, dtype)), (
                seed,
                n,
            )


def test_torch_rand_large_tensor():
    torch.manual_seed(11)
    assert _same(torch.rand(200_000).numpy(), rng.torch_rand(11, 200_000))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_randn_bit_for_bit(dtype):
    # n < 16: per-pair float64 Box-Muller with a cached second value; n >= 16: 16-wide kernel
    # (the vectorized float32 one on this CPU), including the redrawn tail when n % 16 != 0.
    tdt = getattr(torch, dtype)
    for seed in SEEDS[:12]:
        for n in SIZES:
            torch.manual_seed(seed)
            got = torch.randn(n, dtype=tdt).numpy()
            assert _same(got, TorchCPURandom(seed).randn(n, dtype)), (seed, n)


def test_torch_randn_cache_spans_calls():
    torch.manual_seed(9)
    a = [torch.randn(1).item() for _ in range(5)]
    g = TorchCPURandom(9)
    b = [float(g.randn(1)[0]) for _ in range(5)]
    assert a == b


def test_torch_randn_many_seeds_large():
    for seed in range(40):
        torch.manual_seed(seed)
        assert _same(torch.randn(4096).numpy(), TorchCPURandom(seed).randn(4096)), seed


def test_torch_randn_scalar_kernel_in_subprocess():
    """ATEN_CPU_CAPABILITY=default selects the scalar libm kernel: emulated too, and it gives
    other bits than the vector kernel for the same seed."""
    import subprocess
    import sys

    code = (
        "import torch,numpy as np,sys\n"
        "from fpexplore.rng.torch_cpu import TorchCPURandom\n"
        "assert torch.backends.cpu.get_cpu_capability()=='DEFAULT'\n"
        "bad=0\n"
        "for s in range(12):\n"
        "  for n in (16,17,100,1000):\n"
        "    torch.manual_seed(s); t=torch.randn(n).numpy()\n"
        "    bad+=int((t!=TorchCPURandom(s,'default').randn(n)).sum())\n"
        "torch.manual_seed(0); np.save(sys.argv[1], torch.randn(4096).numpy())\n"
        "print(bad)\n"
    )
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "scalar.npy")
        env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
        out = subprocess.run(
            [sys.executable, "-c", code, path], env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip().splitlines()[-1] == "0"
        scalar = np.load(path)
    if torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"):
        torch.manual_seed(0)
        assert (torch.randn(4096).numpy() != scalar).any()


def test_linear_init_bit_for_bit():
    for seed in SEEDS[:10]:
        for fan_in, fan_out in [(1, 1), (8, 4), (3, 17), (100, 30)]:
            torch.manual_seed(seed)
            lin = torch.nn.Linear(fan_in, fan_out)
            w, b = linear_init(seed, fan_in, fan_out)
            assert (lin.weight.detach().numpy() == w).all()
            assert (lin.bias.detach().numpy() == b).all()


def test_numpy_legacy_and_python_mappings():
    for seed in SEEDS:
        assert (rng.numpy_legacy_random(seed, 50) == np.random.RandomState(seed).rand(50)).all()
        r = random.Random(seed)
        assert (rng.python_random(seed, 50) == np.array([r.random() for _ in range(50)])).all()


def test_documented_first_values():
    # torch 0.8823 / numpy legacy 0.3745 / java 0.7276 for seed 42, computed here not typed
    assert rng.torch_rand(42, 3).tolist() == pytest.approx([0.8823, 0.9150, 0.3829], abs=1e-4)
    assert rng.numpy_legacy_random(42, 1)[0] == pytest.approx(0.3745, abs=1e-4)
    assert float(JavaRandom(42).next_float()) == pytest.approx(0.7276, abs=1e-4)


def test_shared_bits_and_random_bits():
    for seed in SEEDS[:8]:
        t, n = rng.torch_rand(seed, 64), rng.numpy_legacy_random(seed, 32)
        assert rng.shared_bits_agree(t, n).all()
        assert rng.shared_bits_agree(t, rng.python_random(seed, 32)).mean() < 0.2
    assert rng.random_bits(rng.torch_rand(1, 4096)) == 24
    assert rng.random_bits(rng.torch_rand(1, 4096, "float64")) == 53
    assert rng.random_bits(rng.numpy_legacy_random(1, 4096)) == 53


def test_fma_is_correctly_rounded():
    import mpmath

    g = np.random.default_rng(0)
    a, b = g.standard_normal(500).astype(np.float32), g.standard_normal(500).astype(np.float32)
    c = (g.standard_normal(500) * 1e-3).astype(np.float32)
    got = fma(a, b, c)
    with mpmath.workprec(24):
        want = [
            np.float32(float(mpmath.fadd(mpmath.fmul(float(x), float(y), exact=True), float(z))))
            for x, y, z in zip(a, b, c, strict=True)
        ]
    assert (got == np.array(want, dtype=np.float32)).all()


def test_bad_input_is_named():
    with pytest.raises(InvalidParameter, match="seed"):
        rng.init_genrand(-1)
    with pytest.raises(InvalidParameter, match="dtype"):
        TorchCPURandom(0).rand(3, "float16")
    with pytest.raises(InvalidParameter, match="path"):
        TorchCPURandom(0, "neon")


def test_java_emulator_values_are_lcg():
    j = JavaRandom(0)
    assert j.next_int() == -1155484576  # first nextInt() of new Random(0), a JDK constant
    assert 0 <= JavaRandom(5).next_double() < 1


NO_JVM = "no Java runtime or JPype here (make djl installs them)"
needs_jvm = pytest.mark.skipif(not backends.get("java").available(), reason=NO_JVM)


@pytest.mark.java
@needs_jvm
def test_java_random_bit_for_bit_against_jvm():
    from fpexplore.rng.java import run_java

    seeds = [0, 1, 42, -7, 2**40 + 3, *range(1000, 1030)]
    real = run_java(seeds, 500)
    for s in seeds:
        assert (JavaRandom(s).floats(500).view(np.uint32) == real[s]["float"].view(np.uint32)).all()
        assert (JavaRandom(s).doubles(500) == real[s]["double"]).all()
        assert (
            JavaRandom(s).gaussians(500).view(np.int64) == real[s]["gaussian"].view(np.int64)
        ).all()
        j = JavaRandom(s)
        assert [j.next_int() for _ in range(500)] == real[s]["int"].tolist()


@pytest.mark.java
@needs_jvm
def test_java_random_runs_on_the_one_jvm_worker():
    """java.util.Random is served by the JVM worker of `fpexplore.jvm.client` (the one DJL
    uses): reused between calls, replaced when it dies, and taken over by DJL when DJL runs."""
    from fpexplore.jvm import client
    from fpexplore.rng import java as jr

    client.shutdown()
    first = jr.run_java([4], 8)
    pid = client.current_pid()
    assert pid is not None and jr.java_version().startswith("Java ")
    six = JavaRandom(6)
    assert jr.run_java([5, 6], 8)[6]["int"].tolist() == [six.next_int() for _ in range(8)]
    assert client.current_pid() == pid  # one JVM for every request
    os.kill(pid, signal.SIGKILL)
    client._worker.proc.wait(timeout=30)  # dead: the next call starts another
    again = jr.run_java([4], 8)  # a dead worker is replaced, the answer unchanged
    assert again[4]["double"].tobytes() == first[4]["double"].tobytes()
    assert client.current_pid() not in (None, pid)
    if backends.get("djl").available():  # a DJL call replaces the JVM-only worker...
        djl_pid = client.call("info")["pid"]
        assert jr.run_java([4], 8)[4]["float"].tobytes() == first[4]["float"].tobytes()
        assert client.current_pid() == djl_pid  # ...which then serves java.util.Random too
    client.shutdown()
    assert client.current_pid() is None


def test_java_random_without_java_is_unavailable_with_the_fix(monkeypatch):
    from fpexplore.errors import BackendUnavailable
    from fpexplore.rng import java as jr

    real_which = shutil.which
    monkeypatch.setattr(backends.shutil, "which", lambda n: None if n == "java" else real_which(n))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(BackendUnavailable, match="Java 17"):
        jr.run_java([1], 4)
    assert jr.java_version() == ""
