"""Real machines' records: ``data/machines/NAME/`` holds one machine's ``fingerprint.json``
(``fpexplore fingerprint``) and ``claims.json`` (``fpexplore verify``). `verdicts` says, for
each lesson's claim, which machines held it, failed it or could not check it.

Claims records of both shapes are read: ``fpexplore verify``'s (``"format":
"fpexplore-claims"``) and the older one without a format (``{"paths", "runs",
"provenance"}``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import FpexploreError, InvalidInput
from .result import State
from .result.spec import ClaimSpec

if TYPE_CHECKING:
    from .dispatch.record import Fingerprint

FORMAT = "fpexplore-claims"
VERSION = 1
STATES = tuple(s.value for s in State)
CLAIMS_FILE = "claims.json"
FINGERPRINT_FILE = "fingerprint.json"


@dataclass(frozen=True)
class Machine:
    """One real machine's records: ``name`` is its folder's name, ``record`` its claims record
    (as `check_claims` returns it), ``fingerprint`` its fingerprint (None when absent)."""

    name: str
    label: str
    record: dict[str, Any]
    fingerprint: Fingerprint | None = None

    @property
    def runs(self) -> list[dict[str, Any]]:
        return list(self.record["runs"])

    def states(self) -> dict[tuple[str, str], str]:
        """Each (lesson, claim key) this machine ran, and its state over all its runs: "fails"
        if any run failed it, else "holds" if any held it, else "not checked"."""
        out: dict[tuple[str, str], str] = {}
        for run in self.runs:
            for key, claim in run["claims"].items():
                at = (run["lesson"], key)
                out[at] = min(out.get(at, "not checked"), claim["state"], key=_STATE_RANK.get)
        return out


_STATE_RANK = {"fails": 0, "holds": 1, "not checked": 2}


@dataclass(frozen=True)
class Failure:
    """A claim that failed on a machine: where, at which parameters, and its text."""

    machine: str
    lesson: str
    key: str
    params: dict[str, Any]
    text: str


@dataclass(frozen=True)
class Verdict:
    """A lesson's claim across machines: the machines that held it, failed it or did not check
    it (by name), and each failure."""

    lesson: str
    key: str
    held: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    not_checked: tuple[str, ...] = ()
    failures: tuple[Failure, ...] = ()


def folder() -> Path:
    """The fleet's folder: ``machines`` of `fpexplore.paths.shipped_data_dir`."""
    from .paths import shipped_data_dir

    return shipped_data_dir() / "machines"


def names(root: str | os.PathLike[str] | None = None) -> list[str]:
    """The machines in ``root`` (default `folder`): sub-folders holding a claims record,
    sorted; none when the folder does not exist."""
    p = Path(folder() if root is None else root)
    if not p.is_dir():
        return []
    return sorted(d.name for d in p.iterdir() if (d / CLAIMS_FILE).is_file())


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(f"no {what} at {str(path)!r}: the file does not exist") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"{str(path)!r} is not a readable JSON {what}: {exc}") from None


def check_claims(data: Any, where: str = "claims record") -> dict[str, Any]:
    """``data`` as a claims record of the current shape (an older record gains ``format`` and
    ``version``), else `InvalidInput` naming what is wrong."""
    hint = "make one with: fpexplore verify --out claims.json"
    if not isinstance(data, dict):
        raise InvalidInput(f"{where} is not a claims record (a JSON object); {hint}")
    if "format" in data and data["format"] != FORMAT:
        raise InvalidInput(f"{where} is not a claims record (format {data['format']!r}); {hint}")
    if "format" in data and data.get("version") != VERSION:
        raise InvalidInput(
            f"{where} is a claims record of version {data.get('version')!r}; this fpexplore "
            f"reads version {VERSION}: {hint}"
        )
    runs, provenance = data.get("runs"), data.get("provenance", {})
    if not isinstance(runs, list) or not isinstance(provenance, dict):
        raise InvalidInput(f"{where} needs a list 'runs' and an object 'provenance'; {hint}")
    for n, run in enumerate(runs):
        _check_run(run, f"{where}, run {n}")
    paths = data.get("paths", {})
    return {
        **data,
        "format": FORMAT,
        "version": VERSION,
        "provenance": provenance,
        "paths": paths if isinstance(paths, dict) else {},
    }


def _check_run(run: Any, where: str) -> None:
    if not isinstance(run, dict) or not isinstance(run.get("lesson"), str):
        raise InvalidInput(f"{where} is not an object with a 'lesson' name")
    if not isinstance(run.get("params"), dict) or not isinstance(run.get("claims"), dict):
        raise InvalidInput(f"{where} ({run['lesson']}) needs the objects 'params' and 'claims'")
    if not isinstance(run.get("error"), str | None):
        raise InvalidInput(f"{where} ({run['lesson']}) has an 'error' that is not text or null")
    for key, claim in run["claims"].items():
        if not isinstance(claim, dict) or claim.get("state") not in STATES:
            raise InvalidInput(
                f"{where} ({run['lesson']}): claim {key!r} has no 'state' of {', '.join(STATES)}"
            )
        if not isinstance(claim.get("text", ""), str):
            raise InvalidInput(f"{where} ({run['lesson']}): claim {key!r} has a non-text 'text'")


def load_claims(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The claims record at ``path``, checked (`check_claims`)."""
    p = Path(path)
    return check_claims(_read_json(p, "claims record"), str(p))


def load(machine: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> Machine:
    """The machine in folder ``machine``: a bare name is looked up in ``root`` (default
    `folder`), anything else is a path. Its label: the claims record's, else its
    fingerprint's, else the folder's name."""
    from .dispatch import fingerprint

    bare = isinstance(machine, str) and machine and "/" not in machine and os.sep not in machine
    p = Path(folder() if root is None else root) / machine if bare else Path(machine)
    if not p.is_dir():
        raise InvalidInput(f"{str(p)!r} is not a machine's folder (it holds {CLAIMS_FILE})")
    record = load_claims(p / CLAIMS_FILE)
    file = p / FINGERPRINT_FILE
    fp = fingerprint.parse(fingerprint.load(file), str(file)) if file.exists() else None
    label = record["provenance"].get("label") or (fp and fp.label) or p.name
    return Machine(p.name, str(label), record, fp)


def load_all(root: str | os.PathLike[str] | None = None) -> list[Machine]:
    """Every machine in ``root`` (default `folder`), by name; a bad record raises
    `InvalidInput` naming its file."""
    base = Path(folder() if root is None else root)
    return [load(base / name) for name in names(base)]


def try_load_all(root: str | os.PathLike[str] | None = None) -> tuple[list[Machine], str]:
    """`load_all`, or no machines and why (for pages that show the fleet beside other things)."""
    try:
        return load_all(root), ""
    except FpexploreError as exc:
        return [], str(exc)


def verdicts(machines: Iterable[Machine]) -> dict[tuple[str, str], Verdict]:
    """For each (lesson, claim key) any machine ran: who held, failed or did not check it."""
    by: dict[tuple[str, str], dict[str, list[Any]]] = {}
    for m in machines:
        for at, state in m.states().items():
            entry = by.setdefault(at, {s: [] for s in (*STATES, "failures")})
            entry[state].append(m.name)
        for f in failures_of(m):
            by[(f.lesson, f.key)]["failures"].append(f)
    return {
        at: Verdict(
            *at, tuple(e["holds"]), tuple(e["fails"]), tuple(e["not checked"]), tuple(e["failures"])
        )
        for at, e in by.items()
    }


def unscoped_failures(machines: Iterable[Machine], lessons: Mapping[str, Any]) -> list[str]:
    """The rule of the fleet: a claim is universal only where it held on every real machine
    that had its parts. One message for each claim of ``lessons`` (name -> lesson, as
    `fpexplore.lessons.all_lessons`) still declared for every machine (`ClaimSpec.applies` left
    at its default) that failed on a machine, naming the lesson, the claim, the machines, the
    failure and the fix."""
    unscoped = ClaimSpec("", "").applies
    out = []
    for v in verdicts(machines).values():
        spec = lessons[v.lesson].claims.get(v.key) if v.lesson in lessons else None
        if not v.failed or spec is None or spec.applies != unscoped:
            continue
        f = v.failures[0]
        out.append(
            f"{v.lesson}: claim {v.key!r} is declared for {unscoped!r} but failed on "
            f"{', '.join(v.failed)} (at {params_text(f.params)}: {f.text}); scope it with "
            "applies=... to the machines where it holds, or make it an observation"
        )
    return out


def failures_of(machine: Machine) -> list[Failure]:
    """Every claim that failed on ``machine``, run by run."""
    return [
        Failure(machine.name, run["lesson"], key, dict(run["params"]), str(claim.get("text", "")))
        for run in machine.runs
        for key, claim in run["claims"].items()
        if claim["state"] == "fails"
    ]


def counts(runs: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many claims of ``runs`` hold, fail and were not checked."""
    out = dict.fromkeys(STATES, 0)
    for run in runs:
        for claim in run["claims"].values():
            out[claim["state"]] += 1
    return out


def params_text(params: Mapping[str, Any]) -> str:
    """Parameters as ``name=value, ...`` ("defaults" when none)."""
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"


def broken_table(machines: list[Machine], lessons: Mapping[str, Any]) -> str:
    """Which machine broke which claim, as text: the machines, then one line per claim that
    failed on any of them, naming where it failed, held and was not checked (and whether
    ``lessons``, name -> lesson, declare it no more)."""
    if not machines:
        return "no real-machine records"
    lines = [
        f"{len(machines)} real machines: " + "; ".join(f"{m.name} ({m.label})" for m in machines)
    ]
    broken = [v for v in verdicts(machines).values() if v.failed]
    for v in broken:
        parts = [("FAILS on", v.failed), ("holds on", v.held), ("not checked on", v.not_checked)]
        said = "; ".join(f"{word} {', '.join(ms)}" for word, ms in parts if ms)
        lines.append(f"  {v.lesson}.{v.key}{_retired(v, lessons)}: {said}")
    if not broken:
        lines.append("  every claim held or was not checked on every one of them")
    return "\n".join(lines)


def summary_row(m: Machine) -> tuple[str, str, str, str, str]:
    """A machine in one row: name (label), CPU, card, date, and its claims' counts."""
    prov = m.record["provenance"]
    said = ", ".join(f"{n} {state}" for state, n in counts(m.runs).items())
    cpu = str(prov.get("cpu") or (m.fingerprint and m.fingerprint.machine.cpu) or "?")
    return (
        f"{m.name} ({m.label})",
        cpu,
        str(prov.get("card", "?")),
        str(prov.get("date", "?")),
        said,
    )


def broken_rows(
    machines: list[Machine], lessons: Mapping[str, Any], lesson: str | None = None
) -> list[tuple[str, str, str, str, str]]:
    """Each claim (of ``lesson``, or of every lesson) that failed on a real machine: the
    claim (marked where ``lessons``, name -> lesson, declare it no more), the machines it
    failed, held and was not checked on, and its first failure."""
    rows = []
    for v in verdicts(machines).values():
        if not v.failed or lesson not in (None, v.lesson):
            continue
        f = v.failures[0]
        first = f"{f.machine} ({params_text(f.params)}): {f.text}"
        rows.append(
            (
                f"{v.lesson}.{v.key}{_retired(v, lessons)}",
                ", ".join(v.failed),
                ", ".join(v.held) or "—",
                ", ".join(v.not_checked) or "—",
                first,
            )
        )
    return rows


def _retired(v: Verdict, lessons: Mapping[str, Any]) -> str:
    """`` (no longer a claim)`` where the lesson declares ``v``'s key no more (a claim that
    failed on a real machine and became an observation, as the rule asks); else ""."""
    lesson = lessons.get(v.lesson)
    if lesson is None or v.key in lesson.claims:
        return ""
    return " (no longer a claim)"


def findings(
    machines: Iterable[Machine],
    lesson: str,
    keys: Iterable[str],
    stated: Collection[str] | None = None,
) -> list[str]:
    """What each machine recorded for ``keys`` of ``lesson`` (claims with their state,
    observations with their value), one line each, the first run's text: how one finding
    reads across the fleet (a claim renamed or turned into an observation keeps its old key
    in older records, so name both). ``stated``: the keys this version's lesson states (its
    claims and observations); a key outside it is marked as one it no longer states."""
    keys = tuple(keys)
    current = set(keys if stated is None else stated)
    lines = []
    for m in machines:
        seen: set[str] = set()
        for run in (r for r in m.runs if r["lesson"] == lesson):
            for key in (k for k in keys if k not in seen):  # each key from its first run
                claim = run["claims"].get(key)
                observed = (run.get("observations") or {}).get(key)
                if claim is not None:
                    said = f"[{claim['state']}] {claim.get('text', '')}"
                elif observed is not None:
                    said = f"[observed: {observed.get('value')}] {observed.get('text', '')}"
                else:
                    continue
                seen.add(key)
                old = "" if key in current else " (a finding this version no longer states)"
                lines.append(f"{m.name} · {key}{old}: {said}")
    return lines
