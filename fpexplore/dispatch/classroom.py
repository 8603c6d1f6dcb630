"""The class table: any number of fingerprints (a folder of them), who got which bits for each
result, and the cause that separates each machine from the first, as `compare` names it; with
the real machines' records (`fpexplore.machines`), which machine broke which claim.

In a workshop every attendee runs ``fpexplore fingerprint --out NAME.json`` and drops the file
into one folder; `class_table` is the exercise's answer sheet. `shipped` is the project's own
class: ``data/fingerprints`` and each real machine's fingerprint in ``data/machines``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from .compare import compare
from .fingerprint import load, parse
from .record import Fingerprint

if TYPE_CHECKING:
    from ..machines import Machine

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def load_folder(folder: str | os.PathLike[str]) -> list[Fingerprint]:
    """Every fingerprint in ``folder`` (``*.json``, sorted by name); a file that is not one
    raises `InvalidInput` naming it."""
    p = Path(folder)
    if not p.is_dir():
        raise InvalidInput(f"{str(p)!r} is not a folder of fingerprints")
    found = [parse(load(f), str(f)) for f in sorted(p.glob("*.json"))]
    if not found:
        raise InvalidInput(
            f"no fingerprints (*.json) in {str(p)!r}: make one with "
            "fpexplore fingerprint --out NAME.json"
        )
    return found


def shipped(data: str | os.PathLike[str] | None = None) -> list[Fingerprint]:
    """The fingerprints the project ships, from ``data`` (default: the shipped data,
    `fpexplore.paths.shipped_data_dir`): ``fingerprints/*.json``, then
    ``machines/NAME/fingerprint.json`` of each real machine."""
    from ..machines import FINGERPRINT_FILE
    from ..paths import shipped_data_dir

    root = Path(shipped_data_dir() if data is None else data)
    files = sorted((root / "fingerprints").glob("*.json"))
    files += sorted((root / "machines").glob(f"*/{FINGERPRINT_FILE}"))
    return [parse(load(f), str(f)) for f in files]


def groups(fingerprints: list[Fingerprint]) -> dict[str, list[str]]:
    """For each result key, a letter per machine: machines with the same letter got the same
    bits ('A' is the first machine's bits; '·' where the result did not run)."""
    keys: list[str] = []
    for fp in fingerprints:
        keys += [k for k in fp.ops if k not in keys]
    table: dict[str, list[str]] = {}
    for key in keys:
        seen: dict[str, str] = {}
        table[key] = [
            seen.setdefault(fp.ops[key].digest, LETTERS[len(seen) % 26]) if key in fp.ops else "·"
            for fp in fingerprints
        ]
    return table


def class_table(
    fingerprints: list[Fingerprint],
    only_differing: bool = True,
    machines: list[Machine] | None = None,
    lessons: Mapping[str, Any] | None = None,
) -> str:
    """The table as text: one row per result, one column per machine (letters as in
    `groups`), then each machine's causes against the first; with ``machines`` (real
    machines' records, `fpexplore.machines.load_all`), which of them broke which claim of
    ``lessons`` (name -> lesson, as `fpexplore.lessons.all_lessons`)."""
    labels = [f"#{n}" if fp.label is None else fp.label for n, fp in enumerate(fingerprints, 1)]
    rows = groups(fingerprints)
    shown = {
        k: v for k, v in rows.items() if not only_differing or len({x for x in v if x != "·"}) > 1
    }
    width = max([len(k) for k in shown] + [len("result")])
    out = ["machines:"] + [f"  {n}. {label}" for n, label in enumerate(labels, 1)]
    out.append(f"{'result':{width}s}  " + " ".join(f"{n:>2d}" for n in range(1, len(labels) + 1)))
    for key, letters in shown.items():
        out.append(f"{key:{width}s}  " + " ".join(f"{x:>2s}" for x in letters))
    if not shown:
        out.append("(every result has the same bits on every machine)")
    out.append(f"causes, against machine 1 ({labels[0]}):")
    for n, fp in enumerate(fingerprints[1:], 2):
        diff = compare(fingerprints[0], fp)
        if not diff.rows:
            out.append(f"  {n}. no difference")
            continue
        causes = "; ".join(f"{c.name} ({len(c.explains)})" for c in diff.causes[:3])
        out.append(f"  {n}. {len(diff.rows)} differ: {causes or 'no described cause'}")
    if machines is not None:
        from ..machines import broken_table

        out += ["claims on real machines:", broken_table(machines, lessons or {})]
    from ..result.text_table import wrapped

    return wrapped("\n".join(out))
