"""Run every lesson through the command line, in this one interpreter, and report as JSON.

usage: python tests/support/run_lessons.py OUT.json [--defaults]

Each lesson runs as ``fpexplore run NAME --PARAM VALUE ... --json`` at its ``quick`` values
(its defaults with ``--defaults``). For each: the exit status, the seconds it took, the JSON it
printed (claims and outcomes) and what it wrote to stderr, with the traceback of any exception
that escaped the command.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
import traceback
import warnings


def main(out_path: str, defaults: bool) -> None:
    from fpexplore import cli
    from fpexplore.lessons import all_lessons, broken

    report: dict[str, dict] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lessons = all_lessons()
    for name, lesson in lessons.items():
        tokens: list[str] = []
        if not defaults:
            for key, value in lesson.quick.items():
                tokens += [f"--{key}", str(value)]
        out, err = io.StringIO(), io.StringIO()
        start = time.perf_counter()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = cli.main(["run", name, *tokens, "--json"])
        except BaseException as exc:  # what escaped the command: recorded, never hidden
            rc = -1
            err.write("".join(traceback.format_exception(exc)))
        entry: dict = {"rc": rc, "seconds": round(time.perf_counter() - start, 2)}
        entry["stderr"] = err.getvalue()
        try:
            entry["result"] = json.loads(out.getvalue()) if rc == 0 else None
        except ValueError:
            entry["result"] = None
            entry["stderr"] += "\nstdout was not JSON:\n" + out.getvalue()[-2000:]
        report[name] = entry
    from fpexplore import backends

    summary = {
        "missing": {b: backends.missing(b) for b in ("torch", "tensorflow", "djl")},
        "lessons": report,
        "broken": broken(),
        "warnings": [str(w.message) for w in caught],
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(summary, f)


if __name__ == "__main__":
    main(sys.argv[1], "--defaults" in sys.argv[2:])
