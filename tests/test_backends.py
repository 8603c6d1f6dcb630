import time

import pytest

from fpexplore import backends
from fpexplore.errors import BackendUnavailable, InvalidParameter


def test_registry_names_every_backend():
    assert set(backends.names()) == {
        "numpy",
        "torch",
        "torchvision",
        "tensorflow",
        "keras",
        "java",
        "djl",
        "libtorch",
    }


def test_unknown_backend_lists_known_ones():
    with pytest.raises(InvalidParameter, match="numpy, torch"):
        backends.get("jax")


def test_missing_python_module_says_how_to_fix():
    b = backends.Backend("ghost", "no_such_module_xyz", ("no-such-dist",), "pip install ghost")
    assert not b.available() and b.version() == ""
    with pytest.raises(BackendUnavailable, match="pip install ghost"):
        b.load()
    info = b.probe()
    assert not info.available and info.fix == "pip install ghost"


def test_installed_backends_report_versions():
    for name in ("numpy", "torch", "tensorflow"):
        b = backends.get(name)
        assert b.available(), f"{name} should be installed by the set-up"
        assert b.version()


def test_djl_without_jars_is_unavailable_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    djl = backends.get("djl")
    assert not djl.available()
    with pytest.raises(BackendUnavailable, match="make djl"):
        djl.load()


def test_torch_probe_reports_what_torch_reports(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    info = backends.get("torch").probe(deadline=time.perf_counter() + 120)
    assert info.available and info.detail == backends.get("torch").description
    assert info.threads == torch.get_num_threads()
    assert info.devices[0] == "cpu"
    assert any(d.startswith("cuda:") for d in info.devices) == torch.cuda.is_available()


def test_torch_probe_past_its_deadline_says_so_then_uses_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    torch_backend = backends.get("torch")
    started = torch_backend.start_probe()
    late = torch_backend.probe(started, deadline=time.perf_counter())  # no cache yet
    assert late.threads is None and "threads unknown" in late.detail
    assert late.devices[0] == "cpu"
    started.process.wait(timeout=120)  # the child outlives the deadline and fills the cache
    cached = torch_backend.probe(torch_backend.start_probe(), deadline=time.perf_counter())
    assert cached.threads is not None and "cached" in cached.detail
    # A changed thread environment is a different question: the cache does not answer it.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    other = torch_backend.probe(torch_backend.start_probe(), deadline=time.perf_counter())
    assert other.threads is None


def test_cuda_devices_without_torch_follow_the_wheel(monkeypatch):
    from fpexplore.backends import torch_probe

    monkeypatch.setattr(torch_probe, "built_with_cuda", lambda: False)
    assert torch_probe.driver_devices() == []
