"""Pinned DJL artifacts and where the set-up put them (resolved by Maven, never at run time).

Layout under ``paths.cache_dir() / "djl"``:

- ``jars/``     the resolved jars (``mvn dependency:copy-dependencies``; hard links into ``m2/``)
- ``m2/``       the Maven local repository the set-up uses (kept inside the cache, not ~/.m2)
- ``classes/``  fpexplore's own Java helpers (``Fpx.java``), compiled with javac
- ``native/``   ``DJL_CACHE_DIR``: DJL extracts libtorch here from the native jar
"""

from __future__ import annotations

from pathlib import Path

from ..paths import cache_dir

DJL_VERSION = "0.36.0"
LIBTORCH_VERSION = "2.7.1"
NATIVE_CLASSIFIER = "linux-x86_64"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

#: The artifacts the pom pins (group:artifact:version[:classifier]); their dependencies follow.
PINNED = (
    f"ai.djl:api:{DJL_VERSION}",
    f"ai.djl.pytorch:pytorch-engine:{DJL_VERSION}",
    f"ai.djl.pytorch:pytorch-jni:{LIBTORCH_VERSION}-{DJL_VERSION}",
    f"ai.djl.pytorch:pytorch-native-cpu:{LIBTORCH_VERSION}:{NATIVE_CLASSIFIER}",
)

FIX = "make djl"
SOURCE_DIR = Path(__file__).resolve().parent
POM = SOURCE_DIR / "pom.xml"
HELPER_SOURCES = (SOURCE_DIR / "Fpx.java",)


def djl_dir() -> Path:
    return cache_dir() / "djl"


def jar_dir() -> Path:
    return djl_dir() / "jars"


def maven_repo() -> Path:
    return djl_dir() / "m2"


def classes_dir() -> Path:
    return djl_dir() / "classes"


def native_dir() -> Path:
    """``DJL_CACHE_DIR`` for the worker: where DJL extracts libtorch from the native jar."""
    return djl_dir() / "native"


def jars() -> list[Path]:
    return sorted(jar_dir().glob("*.jar"))


def classpath() -> list[str]:
    """The worker JVM's class path: the jars, then the compiled helpers."""
    return [str(p) for p in jars()] + [str(classes_dir())]


def missing_jars() -> str | None:
    """Why the jars or helpers are not usable, or None when they are in place."""
    names = [p.name for p in jars()]
    if not names:
        return f"the DJL jars are not in {jar_dir()}."
    # Maven names a jar artifact-version[-classifier].jar
    pinned = (coord.split(":")[1:] for coord in PINNED)
    absent = [art for art, *rest in pinned if "-".join([art, *rest]) + ".jar" not in names]
    if absent:
        return f"{', '.join(absent)} missing from {jar_dir()} (DJL {DJL_VERSION} pins)."
    if not (classes_dir() / "fpexplore" / "Fpx.class").exists():
        return f"fpexplore's Java helpers are not compiled into {classes_dir()}."
    return None
