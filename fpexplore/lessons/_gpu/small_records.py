"""The small GPU records made by ``benchmarks/gpu_edges_run.py`` (relu's edge values, seeding
across GPUs, nn.Linear under cuDNN's flags): one header check and one reader for all of them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ...errors import RecordError

FIX = "record it again with benchmarks/gpu_edges_run.py"


def header(
    data: Any, fmt: str, version: int, source: str, fix: str = FIX
) -> Callable[[str], RecordError]:
    """Check ``data``'s format and version; returns the error-maker for the rest of the checks
    (`RecordError` naming ``source``, what is wrong and ``fix``)."""

    def bad(what: str) -> RecordError:
        return RecordError(f"{source}: {what}; {fix}")

    if not isinstance(data, Mapping) or data.get("format") != fmt:
        raise bad(f"not a {fmt} record (its format must be {fmt!r})")
    if data.get("version") != version:
        raise bad(f"version {data.get('version')!r}, this fpexplore reads {version}")
    return bad


def _folders(folder: str, directory: Any) -> list[Path]:
    from ...records import gpu_dirs

    return [Path(directory)] if directory is not None else [d / folder for d in gpu_dirs()]


def _valid_in(where: Path, validate: Callable[[Any, str], dict[str, Any]]) -> list[dict]:
    """The valid records in ``where`` by file name, each with its ``path``; files that cannot
    be read or do not validate are skipped."""
    out = []
    for path in sorted(where.glob("*.json")) if where.is_dir() else []:
        try:
            data = validate(json.loads(path.read_text(encoding="utf-8")), str(path))
        except (OSError, ValueError, RecordError):
            continue
        data["path"] = path.name
        out.append(data)
    return out


def read_all(
    folder: str, validate: Callable[[Any, str], dict[str, Any]], directory: Any = None
) -> list[dict[str, Any]]:
    """Every valid record in ``data/gpu/<folder>`` of every records folder (or ``directory``)."""
    return [d for where in _folders(folder, directory) for d in _valid_in(where, validate)]


def newest(
    folder: str, validate: Callable[[Any, str], dict[str, Any]], directory: Any = None
) -> dict[str, Any] | None:
    """The last valid record by name in the first records folder that holds one, or None."""
    found = (_valid_in(where, validate) for where in _folders(folder, directory))
    return next((f[-1] for f in found if f), None)


def newest_dated(paths: Iterable[Path]) -> tuple[Path, dict[str, Any]] | None:
    """The readable JSON record among ``paths`` with the latest ``provenance.date``, or None."""
    found = []
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            found.append((data["provenance"]["date"], path, data))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return max(found, key=lambda t: t[0])[1:] if found else None
