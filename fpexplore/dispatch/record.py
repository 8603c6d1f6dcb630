"""A fingerprint read into typed fields (`Fingerprint.from_dict`, after `fingerprint.check`):
a field this version does not know fails where the file is read, and `to_dict` gives back the
object it was read from (its keys, in their order), so files keep their format."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from types import UnionType
from typing import Any, get_args, get_origin, get_type_hints

import numpy as np

from ..errors import InvalidInput


def _plain(v: Any) -> Any:
    if isinstance(v, _Fields):
        return v.to_dict()
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return {k: _plain(x) for k, x in v.items()} if isinstance(v, dict) else v


def members(hint: Any) -> tuple[Any, ...]:
    """The types a field's annotation allows (``int | None``: int and None)."""
    return get_args(hint) if isinstance(hint, UnionType) else (hint,)


@functools.cache
def hints(cls: type) -> dict[str, Any]:
    """A record's fields and their annotations, in their order."""
    declared = get_type_hints(cls)
    return {f.name: declared[f.name] for f in fields(cls) if f.name != "keys"}


def _read(hint: Any, v: Any) -> Any:
    """A JSON value as ``hint`` declares it: an object as its record, a list as a tuple."""
    for t in members(hint) if v is not None else ():
        origin, args = get_origin(t) or t, get_args(t)
        if origin is tuple:
            return tuple(_read(args[0], x) for x in v)
        if is_dataclass(origin):
            return origin.from_dict(v)  # type: ignore[union-attr]
        if origin is dict and is_dataclass(args[1]):
            return {k: _read(args[1], x) for k, x in v.items()}
    return v


@dataclass(frozen=True)
class _Fields:
    """A JSON object's known fields; ``keys`` are those it was read from, in their order."""

    keys: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Any:
        """The record of JSON object ``d`` (its fields read as their annotations declare); a
        field this version does not know raises `InvalidInput`."""
        known = hints(cls)
        if unknown := [k for k in d if k not in known]:
            raise InvalidInput(f"a {cls.__name__} has no field {unknown[0]!r}: {', '.join(known)}")
        return cls(**{k: _read(known[k], v) for k, v in d.items()}, keys=tuple(d))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object this was read from."""
        return {k: _plain(getattr(self, k)) for k in self.keys}


@dataclass(frozen=True)
class TorchPaths(_Fields):
    """torch's CPU path: its version, ATen's kernels, threads, whether MKL and oneDNN are in."""

    version: str | None = None
    capability: str | None = None
    threads: int | None = None
    mkl: bool | None = None
    mkldnn: bool | None = None


@dataclass(frozen=True)
class TensorflowPaths(_Fields):
    """TensorFlow's: its version, oneDNN on or off and why, its intra-op threads."""

    version: str | None = None
    onednn: bool | None = None
    onednn_reason: str | None = None
    intra_op_threads: int | None = None


@dataclass(frozen=True)
class OpenblasPaths(_Fields):
    """numpy's OpenBLAS: its core kernel, threads and build."""

    core: str | None = None
    threads: int | None = None
    config: str | None = None


@dataclass(frozen=True)
class NumpyPaths(_Fields):
    """numpy's: its version, the SIMD targets it dispatches to, its BLAS (and OpenBLAS's)."""

    version: str | None = None
    simd_targets: tuple[str, ...] = ()
    blas: str | None = None
    openblas: OpenblasPaths | None = None


@dataclass(frozen=True)
class MklPaths(_Fields):
    """torch's MKL: its version, CBWR mode, branch, whether it takes its Intel paths."""

    version: str | None = None
    cbwr: str | None = None
    branch: str | None = None
    intel_paths: bool | None = None


@dataclass(frozen=True)
class Card(_Fields):
    """A CUDA card as torch sees it."""

    device: str = ""
    name: str | None = None
    capability: str | None = None
    cuda: str | None = None
    cudnn: int | None = None
    tf32_matmul: bool | None = None
    tf32_cudnn: bool | None = None


@dataclass(frozen=True)
class MachineDescription(_Fields):
    """The machine and process: CPU, the path each library takes, threads, versions, cards
    (a library that is not installed: None)."""

    cpu: str | None = None
    cpu_vendor: str | None = None
    arch: str | None = None
    system: str | None = None
    cpu_flags: tuple[str, ...] = ()
    cores: int | None = None
    python: str | None = None
    fpexplore: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    onednn_isa: str | None = None
    numpy: NumpyPaths | None = None
    torch: TorchPaths | None = None
    mkl: MklPaths | None = None
    tensorflow: TensorflowPaths | None = None
    cards: tuple[Card, ...] = ()

    def version_of(self, library: str) -> str:
        """``library``'s version ('' where it is not described)."""
        paths = {"numpy": self.numpy, "torch": self.torch, "tensorflow": self.tensorflow}
        return getattr(paths.get(library), "version", "") or ""


@dataclass(frozen=True)
class OpResult(_Fields):
    """One result of the battery: its bits' digest, first values, error against the truth
    (None: a random stream), and, in the lesson's fingerprints, every value."""

    op: str | None = None
    library: str | None = None
    device: str | None = None
    digest: str = ""
    head: tuple[str, ...] | None = None
    max_ulp: float | None = None
    shape: tuple[int, ...] | None = None
    values: tuple[str, ...] | None = None

    def array(self) -> np.ndarray:
        """The values (float32, their shape)."""
        flat = np.array([float.fromhex(v) for v in self.values or ()], dtype=np.float32)
        return flat.reshape(self.shape if self.shape is not None else -1)


@dataclass(frozen=True)
class Fingerprint(_Fields):
    """A machine's fingerprint: what it is, the paths its libraries take, each result."""

    format: str = ""
    version: int = 0
    label: str | None = None
    machine: MachineDescription = field(default_factory=MachineDescription)
    ops: dict[str, OpResult] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    seconds: float | None = None

    def result(self, key: str) -> OpResult:
        """The result ``key`` (``library:device:op``); KeyError names the results there are."""
        if key not in self.ops:
            raise KeyError(f"no result {key!r} in {self.label!r}; it has: {', '.join(self.ops)}")
        return self.ops[key]
