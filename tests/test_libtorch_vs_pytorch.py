"""The LibTorch program (built for real by the set-up) and the libtorch_vs_pytorch lesson."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fpexplore import backends, cli, orders
from fpexplore.backends import libtorch_program
from fpexplore.backends.libtorch import build
from fpexplore.errors import BackendUnavailable, InvalidParameter, RecordError
from fpexplore.lessons import get
from fpexplore.lessons.libtorch_vs_pytorch import cuda_kernels, cuda_view, loops, sides

torch = pytest.importorskip("torch")


def _program() -> None:
    """The set-up builds the program; a test run without it fails, saying how to build it."""
    if libtorch_program.executable() is None:
        pytest.fail(
            f"the LibTorch program is not built: {libtorch_program.missing()} "
            f"Build it with: {libtorch_program.fix()}"
        )


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    return sides.same_bits(np.asarray(a), np.asarray(b))


@pytest.fixture(scope="module")
def lesson_run():
    _program()
    return get("libtorch_vs_pytorch").run(cuda="recorded")


def test_program_reports_the_wheels_libtorch():
    _program()
    info = libtorch_program.info()
    assert info.torch_version == torch.__version__.split("+")[0]
    assert info.cpu_capability == torch.backends.cpu.get_cpu_capability()
    assert info.mkldnn == torch.backends.mkldnn.is_available()
    built = libtorch_program.build_info()
    assert built["source_key"] == build.source_key() and built["build_s"] > 0
    said = libtorch_program.describe()
    assert "built" in said and libtorch_program.executable().name in said
    assert str(Path.home()) not in said and "T" not in said.split("built ")[1][:12]


@pytest.mark.parametrize(
    ("seed", "n", "length"), [(1, 17, 40_000), (2, 64, 100_000), (3, 100, 250_001)]
)
def test_cpp_and_python_agree_bit_for_bit(seed, n, length):
    _program()
    gen = np.random.default_rng(seed)
    a = gen.standard_normal((n, n), dtype=np.float32)
    b = gen.standard_normal((n, n + 3), dtype=np.float32)
    v = gen.standard_normal(length, dtype=np.float32)
    jobs = [
        libtorch_program.Job(op, ins, threads=t)
        for t in (1, 2, 3)
        for op, ins in (("mm", [a, b]), ("grad", [a]), ("sum", [v]))
    ]
    got = libtorch_program.run(jobs)
    saved = torch.get_num_threads()
    try:
        for job, out in zip(jobs, got, strict=True):
            assert job.ran.threads == job.threads
            torch.set_num_threads(job.threads)
            if job.op == "mm":
                want = torch.mm(torch.from_numpy(a), torch.from_numpy(b)).numpy()
            elif job.op == "grad":
                x = torch.from_numpy(a).clone().requires_grad_(True)
                (x @ x.T).sum().backward()
                want = x.grad.numpy()
            else:
                want = torch.from_numpy(v).sum().numpy()
                assert _bits_equal(out, orders.emulate(v, "torch", job.threads))
            assert _bits_equal(out, want), (job.op, job.threads)
    finally:
        torch.set_num_threads(saved)


def test_rng_and_loops():
    _program()
    v = np.random.default_rng(7).standard_normal(1003, dtype=np.float32)
    jobs = [libtorch_program.Job("randn", seed=s, n=n) for s, n in ((0, 5), (42, 1000))]
    jobs += [libtorch_program.Job("loop_sum", [v]), libtorch_program.Job("loop_sum_fastmath", [v])]
    r = libtorch_program.run(jobs)
    for job, out in zip(jobs[:2], r[:2], strict=True):
        torch.manual_seed(job.seed)
        assert _bits_equal(out, torch.randn(job.n).numpy())
    assert _bits_equal(r[2], loops.plain(v))
    assert not _bits_equal(loops.plain(v), loops.lanes(v))  # the emulators do differ here


def test_lesson_claims(lesson_run):
    c = lesson_run
    for key in (
        "mm_same_bits",
        "grad_same_bits",
        "mlp_same_bits",
        "sum_same_bits",
        "randn_same_bits",
        "emulator_reproduces_sum",
        "threads_explain_sum",
        "plain_loop_is_sequential",
    ):
        assert c.holds(key), c.claims[key]
    assert c.data.sum_threads_differ  # the default input: 1 and 2 threads differ
    row = c.outcome("sum · C++ · 2 threads")
    assert row.error is not None and row.error.n == 1
    assert c.outcome("mm · Python · 1 thread").note == "same bits as the other language"


def test_cuda_part_from_the_record(lesson_run):
    c = lesson_run
    path, _ = cuda_kernels.load()
    assert c.data.cuda.source == "recorded" and path.name in c.data.cuda.banner
    for key in cuda_view.CLAIMS:
        assert c.holds(key), c.claims[key]


def test_emulators_of_the_naive_kernel_are_exact():
    from fractions import Fraction

    from fpexplore import formats

    gen = np.random.default_rng(3)
    a = (gen.standard_normal((3, 30)) * 2.0 ** gen.integers(-30, 30, (3, 30))).astype(np.float32)
    b = (gen.standard_normal((30, 4)) * 2.0 ** gen.integers(-30, 30, (30, 4))).astype(np.float32)
    fma, plain = cuda_kernels.fma_chain(a, b), cuda_kernels.plain_chain(a, b)
    for i in range(3):
        for j in range(4):
            acc = acc2 = Fraction(0)
            for p in range(30):
                prod = Fraction(float(a[i, p])) * Fraction(float(b[p, j]))
                acc = Fraction(float(formats.round_exact(prod + acc, "binary32")))
                rp = Fraction(float(formats.round_exact(prod, "binary32")))
                acc2 = Fraction(float(formats.round_exact(rp + acc2, "binary32")))
            assert fma[i, j] == np.float32(float(acc)) and plain[i, j] == np.float32(float(acc2))
    assert not _bits_equal(fma, plain)


def test_record_validation_names_the_field(tmp_path):
    _, data = cuda_kernels.load()
    broken = json.loads(json.dumps(data))
    del broken["experiments"]["sum"]["variants"]["torch_sum"]
    (tmp_path / "x.json").write_text(json.dumps(broken))
    with pytest.raises(RecordError, match=r"sum\.variants\.torch_sum"):
        cuda_kernels.load(directory=tmp_path)
    with pytest.raises(RecordError, match="no CUDA kernel record"):
        cuda_kernels.load(directory=tmp_path / "none")


def test_unavailable_without_cmake(tmp_path, monkeypatch):
    """No cmake/compiler and no build: Unavailable rows naming the fix, claims not checked."""
    monkeypatch.setenv("PATH", str(tmp_path))  # hides cmake and the compilers
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.delenv(libtorch_program.ENV_EXE, raising=False)
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path / "cache"))
    reason = build.missing_tools()
    assert reason and "cmake" in reason and "apt-get install cmake g++" in reason
    with pytest.raises(BackendUnavailable, match="cmake"):
        backends.load("libtorch")
    with pytest.raises(BackendUnavailable, match="cmake"):
        build.build()
    assert cli.main(["setup", "libtorch"]) == 0  # set-up goes on, having said what to install
    info = backends.get("libtorch").probe()
    assert not info.available and "apt-get install cmake g++" in info.fix
    c = get("libtorch_vs_pytorch").run(size=16, sum_length=1_000, cuda="recorded")
    row = c.outcome("mm · C++ · 1 thread")
    assert not row.ran and "cmake" in row.unavailable and "apt-get" in row.unavailable
    assert c.outcome("mm · Python · 1 thread").ran
    assert c.claims["mm_same_bits"].holds is None
    assert "cmake" in c.claims["mm_same_bits"].reason


def test_out_of_date_build_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    monkeypatch.delenv(libtorch_program.ENV_EXE, raising=False)
    build.build_dir().mkdir(parents=True)
    exe = build.build_dir() / build.EXE_NAME
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    build.info_path().write_text(json.dumps({"source_key": "stale"}))
    assert libtorch_program.executable() is None
    assert "out of date" in libtorch_program.missing()
    build.info_path().write_text(json.dumps({"source_key": build.source_key()}))
    assert libtorch_program.executable() == exe


def test_bad_parameters():
    lesson = get("libtorch_vs_pytorch")
    with pytest.raises(InvalidParameter, match="size"):
        lesson.run(size=7)
    with pytest.raises(InvalidParameter, match="cuda"):
        lesson.run(cuda="gpu")
    with pytest.raises(InvalidParameter, match="op"):
        libtorch_program.run([libtorch_program.Job("conv", [])])


def test_external_program_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(libtorch_program.ENV_EXE, str(tmp_path / "missing"))
    assert libtorch_program.executable() is None
    assert libtorch_program.ENV_EXE in libtorch_program.missing()
