"""The DJL set-up: pinned artifacts, clear errors without Java/Maven, idempotence."""

from __future__ import annotations

import re

import pytest

from fpexplore import cli
from fpexplore.jvm import artifacts, setup


def test_pom_pins_the_artifacts_of_artifacts_py():
    pom = artifacts.POM.read_text()
    assert f"<djl.version>{artifacts.DJL_VERSION}</djl.version>" in pom
    assert f"<libtorch.version>{artifacts.LIBTORCH_VERSION}</libtorch.version>" in pom
    assert f"<classifier>{artifacts.NATIVE_CLASSIFIER}</classifier>" in pom
    for coord in artifacts.PINNED:
        group, art = coord.split(":")[:2]
        assert re.search(rf"<groupId>{re.escape(group)}</groupId>\s*<artifactId>{art}<", pom)


def test_missing_maven_names_the_package(monkeypatch):
    monkeypatch.setattr(setup.shutil, "which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(setup.SetupError, match="apt-get install openjdk-17-jdk-headless maven"):
        setup._tool("mvn")


def test_main_reports_missing_tools_without_traceback(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    monkeypatch.setattr(setup.shutil, "which", lambda name: None)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    assert cli.main(["setup", "djl", "--no-warm"]) == 1
    err = capsys.readouterr().err
    assert "'mvn' was not found" in err and "Traceback" not in err


def test_maven_runs_with_strict_checksums_in_the_project_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("FPEXPLORE_CACHE", str(tmp_path))
    monkeypatch.setattr(setup, "_tool", lambda name: f"/usr/bin/{name}")
    ran: list[list[str]] = []

    def fake_run(cmd: list[str], what: str) -> None:
        ran.append(cmd)
        raise setup.SetupError("stop here")

    monkeypatch.setattr(setup, "_run", fake_run)
    with pytest.raises(setup.SetupError, match="stop here"):
        setup.resolve_jars(force=True)
    (cmd,) = ran
    assert cmd[0] == "/usr/bin/mvn" and "-C" in cmd and "-B" in cmd  # -C: fail on bad checksums
    assert f"-Dmaven.repo.local={tmp_path / 'djl' / 'm2'}" in cmd


@pytest.mark.java
def test_setup_is_idempotent_and_complete():
    assert cli.main(["setup", "djl", "--no-warm"]) == 0
    assert artifacts.missing_jars() is None
    assert not setup.resolve_jars() and not setup.compile_helpers()
    names = {p.name for p in artifacts.jars()}
    assert f"pytorch-native-cpu-{artifacts.LIBTORCH_VERSION}-linux-x86_64.jar" in names
