"""No measured number is typed in a notebook's prose: every number in the markdown is a constant
of the formats or the frameworks, an input the notebook sets, or a structural number (notebook,
section, exercise, year of a reference). A measured fact is printed by the code that measured it.

Fast: reads the notebooks' JSON, executes nothing. A new number in the prose fails here until it
is either printed from the run or added below with the reason it is not a measurement.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: constants of the formats and of IEEE 754, true on every machine
FORMAT_CONSTANTS = {
    # precisions, stored mantissa and exponent bits, widths (binary16, bfloat16, TF32, binary32,
    # binary64), their differences (24 - 11 = 13) and the bit fields of MT19937's words
    "5",
    "7",
    "8",
    "10",
    "11",
    "13",
    "16",
    "22",
    "23",
    "24",
    "26",
    "27",
    "31",
    "32",
    "53",
    "64",
    "65504",
    "65536",  # binary16's largest finite value, and 2^16 where it overflows to
    "3.4e38",
    "6e-8",  # float32's largest value, binary16's smallest subnormal (rounded)
    "255",
    "256",  # uint8 levels
    "1024",
    "128",
    "512",  # powers of two as sizes (tile, vector width, ...)
    "32768",  # 2^15: binary16's exponent range boundary in 09's atomic example
    "0.0",  # the signed zero −0.0, a value of every format
}

#: small counts that read as words ("stride 2", "1/(1-p)", "p = 0")
SMALL = {"0", "1", "2"}

#: per notebook: the inputs it sets, and constants of the frameworks it teaches (defaults)
INPUTS = {
    "00_floating_point_formats": {"0.1", "0.2", "0.3", "1.100110011001100"},  # binary of 0.1
    "01_summation_order": {"10,000", "0.0001", "100,000"},
    "02_rng_seeds": {"48", "1.0", "0.0"},  # Java's 48-bit LCG; torch maps 1.0 to 0.0
    "03_train_vs_eval": {"50", "0.9", "0.1", "0.99", "0.01", "1e-3"},  # momentum, eps defaults
    "04_cudnn_determinism": {"100"},  # bins
    "05_djl_vs_pytorch": set(),
    "06_tensorflow_vs_pytorch": {"1000", "100", "4"},  # logits, steps, LSTM hidden size
    "07_tf32": set(),
    "08_cpu_vs_accelerator": {"10000", "0.0001"},
    "09_libtorch_vs_pytorch": {"100000", "10000", "4"},  # sizes, lanes
    # epsilon defaults, a 3×3 kernel, Higham §3.1, mpmath's digits
    "10_find_the_divergence": {"1e-3", "1e-5", "3", "3.1", "30"},
    "11_determinism_and_distributed": {"3", "4"},  # world sizes
    "12_same_code_different_machine": set(),
    "13_small_differences_compound": set(),
    "index": set(),
}

NUMBER = re.compile(r"(?<![\w.⁻-])[-−]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])")
STRIP = [
    re.compile(r"```.*?```", re.S),  # code blocks
    re.compile(r"`[^`]*`"),  # code spans: what the reader types, not a measurement
    re.compile(r"\[\d\d\b[^\]]*\]\([^)]*\)"),  # a link to a notebook: [05 · DJL vs ...](...)
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<[^>]+>"),  # HTML tags and their attributes
    re.compile(r"^#{1,6} *\d\d ·", re.M),  # the notebook number in its title
    re.compile(r"^#{1,6} *\d+\.", re.M),  # a section number
    re.compile(r"\*\*\d+\.\*\*"),  # an exercise number
    re.compile(r"(?:(?<=^)|(?<=· )|(?<=\*\* ))\d+\. ", re.M),  # a step of the Steps line
    re.compile(r"\b(?:notebooks?|[Ee]xercises?|[Ss]ections?|[Ss]teps?|cells?) \d+\b"),
    re.compile(r"\b(?:notebooks?) (?:\d\d(?:, | and | or |–))+\d\d\b"),
    re.compile(r"\((?:\d\d, )+\d\d\)"),  # a list of notebooks: (04, 07, 08)
    # a workshop plan's durations and slots: planned, not measured
    re.compile(r"\b(?:about )?\d+(?:\.\d+)?(?:–\d+)? ?(?:min(?:utes)?|h(?:ours?)?)\b"),
    re.compile(r"^\| *\d+(?:–\d+)? *(?:\||\()", re.M),
]
#: the Further reading list (citations: years, volumes, chapters) is not scanned
REFERENCES = re.compile(r"^#+ *Further reading.*", re.S | re.M | re.I)


def prose_numbers(nb_path: Path) -> list[tuple[int, str, str]]:
    """(cell index, number, the line it is on) for every number left in the markdown."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    found = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = REFERENCES.sub(" ", "".join(cell["source"]))
        for pattern in STRIP:
            text = pattern.sub(" ", text)
        for line in text.splitlines():
            for m in NUMBER.finditer(line):
                found.append((i, m.group().lstrip("-−").rstrip(","), line.strip()))
    return found


def test_the_notebooks_are_read():
    assert len(NOTEBOOKS) >= 13
    assert {p.stem for p in NOTEBOOKS} == set(INPUTS), "a notebook without its allow-list entry"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_hand_typed_measurement_in_prose(nb_path):
    allowed = FORMAT_CONSTANTS | SMALL | INPUTS[nb_path.stem]
    bad = [(i, n, line) for i, n, line in prose_numbers(nb_path) if n not in allowed]
    assert not bad, "numbers typed in the prose (print them from the run, or allow-list the "
    "constant with its reason):\n" + "\n".join(
        f"  cell {i}: {n!r} in: {line}" for i, n, line in bad
    )


def test_the_allow_lists_are_used():
    """Every per-notebook entry still occurs: a stale entry would let a new number through."""
    stale = {}
    for nb_path in NOTEBOOKS:
        seen = {n for _, n, _ in prose_numbers(nb_path)}
        unused = INPUTS[nb_path.stem] - seen
        if unused:
            stale[nb_path.stem] = sorted(unused)
    assert not stale, stale


@pytest.mark.parametrize(
    "text, numbers",
    [
        ("## 3. One third", []),
        ("**2.** Why?", []),
        ("see notebook 08 and [05 · DJL](05_djl.ipynb)", []),
        ("the sum is off by 13.6 ULP", ["13.6"]),
        ("`n = 100_000` typed", []),
        ("up to 4.73e-4 near 2.70", ["4.73e-4", "2.70"]),
    ],
)
def test_the_scanner(tmp_path, text, numbers):
    nb = {"cells": [{"cell_type": "markdown", "source": [text]}]}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb))
    assert [n for _, n, _ in prose_numbers(path)] == numbers


def _answers(nb_path: Path) -> list[tuple[int, str, str]]:
    """(cell index, the answer's markdown, the code cell right after it) for every exercise."""
    cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
    out = []
    for i, cell in enumerate(cells):
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and "<summary>Answer" in text:
            after = cells[i + 1] if i + 1 < len(cells) else None
            code = "".join(after["source"]) if after and after["cell_type"] == "code" else ""
            out.append((i, text, code))
    return out


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_answer_is_reread_from_the_run(nb_path):
    """Each exercise answer is followed by the code that re-reads its facts: it prints them
    (a measured number appears in the output, never in the answer) and checks them through a
    lesson's claims (`check`), or, for a fact that depends on the machine, says it prints an
    observation that is never asserted."""
    bad = []
    for i, _, code in _answers(nb_path):
        prints = re.search(r"\b(?:print|display)\(|\.check\(", code)
        asserts = re.search(r"\.check\(|# an observation: printed, never asserted", code)
        if not (prints and asserts):
            bad.append(f"cell {i}: the answer's next cell must print and assert its facts")
    assert not bad, "\n".join(bad)


#: notebooks whose cells still hold bare asserts (to move onto claims, as the others did)
@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_assert_only_through_check(nb_path):
    """A notebook asserts a lesson's claims through `check` (which says "not checked", naming
    the fix, where a part is missing); it never asserts an observation or an availability."""
    cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
    bare = [
        (i, line.strip())
        for i, cell in enumerate(cells)
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if re.match(r"\s*assert\b", line)
    ]
    assert not bare, bare


def test_the_series_has_answers():
    assert sum(len(_answers(p)) for p in NOTEBOOKS) >= 20


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_cell_has_an_id(path):
    """nbformat 4.5 requires cell ids: a cell without one is a validation warning today and an
    error in later nbformat versions."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert all("id" in cell for cell in cells)
