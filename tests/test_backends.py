import pytest

from fpexplore import backends
from fpexplore.errors import BackendUnavailable, InvalidParameter


def test_registry_names_every_backend():
    assert set(backends.names()) == {"numpy", "torch", "tensorflow", "djl", "libtorch"}


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
