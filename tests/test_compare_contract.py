"""fingerprint, compare and the old corners under the lessons' contract: every input below is
refused with the package's own error naming the argument (or field), or the command line
exits 2 with one line; never a raw exception, never a wrong answer.

The cases are generated: hostile values x argument positions, every known machine field x
values of the wrong type, JSON files nested or sized past what the reader takes."""

from __future__ import annotations

import copy
import datetime
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest

import fpexplore
from fpexplore import cli, determinism_check, formats, tolerance, truth
from fpexplore.dispatch import fingerprint, schema
from fpexplore.dispatch.compare import compare
from fpexplore.errors import FpexploreError, InvalidInput, InvalidParameter
from fpexplore.paths import data_dir

SHIPPED = sorted((data_dir() / "fingerprints").glob("*.json"))
GPU = data_dir() / "fingerprints" / "gpu-machine-h100.json"

#: values that are neither a fingerprint dict nor the path of one
NOT_FINGERPRINTS = [None, [], [1], (), b"x.json", bytearray(b"x"), 5, 1.5, True, object()]
NOT_FINGERPRINTS += [{}, {"format": "fpexplore-fingerprint"}, "", "\x00", "/nonexistent/x.json"]
NOT_FINGERPRINTS += [{"format": "fpexplore-fingerprint", "version": True}, np.array([1.0])]
#: values of every JSON type, and a few that are no JSON at all
WRONG = [None, True, 0, -1, 2.5, "x", [], ["x"], [1], {}, {"a": 1}, [{"device": 1}]]


def stable_id(value: object) -> str:
    """A parameter's repr without memory addresses: the same in every process (xdist's workers
    must collect the same ids)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def _refused(fn, *args, names: tuple[str, ...], **kwargs) -> str:
    """Call ``fn``: it must raise the package's error, naming one of ``names``."""
    with pytest.raises(FpexploreError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert getattr(info.value, "name", None) in names or any(n in message for n in names), message
    return message


def _cli_one_line(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == 2
    _out, err = capsys.readouterr()
    assert err.startswith("fpexplore: error:") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("value", NOT_FINGERPRINTS, ids=stable_id)
def test_compare_refuses_what_is_not_a_fingerprint(value):
    fp = fingerprint.load(SHIPPED[0])
    _refused(
        fpexplore.compare, value, fp, names=("'a'", "A", value if isinstance(value, str) else "a")
    )
    _refused(
        fpexplore.compare, fp, value, names=("'b'", "B", value if isinstance(value, str) else "b")
    )
    _refused(compare, value, fp, names=("A",))


def test_compare_refuses_a_check_that_is_not_a_bool():
    fp = fingerprint.load(SHIPPED[0])
    for check in ("no", 1, None, [True]):
        _refused(fpexplore.compare, fp, fp, check=check, names=("check",))


BAD_JSON = {
    "deeply nested": "[" * 200_000 + "]" * 200_000,
    "nested object": '{"a":' * 200_000 + "1" + "}" * 200_000,
    "a huge integer": "1" * 100_000,
    "not UTF-8": b"\xff\xfe{}",
    "truncated": '{"format": "fpexplore-fingerprint", "ops": {',
}


@pytest.mark.parametrize("name", sorted(BAD_JSON))
def test_unreadable_json_is_refused_in_one_line(tmp_path, capsys, name):
    bad = tmp_path / "bad.json"
    text = BAD_JSON[name]
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    _refused(fingerprint.load, bad, names=(str(bad),))
    _cli_one_line(capsys, "compare", str(bad), str(SHIPPED[0]))


def _with(fp: dict, path: tuple[str, ...], value: object) -> dict:
    out = copy.deepcopy(fp)
    node = out["machine"]
    for p in path[:-1]:
        if not isinstance(node.get(p), dict):
            node[p] = {}
        node = node[p]
    node[path[-1]] = value
    return out


def _wrong_for(types: tuple[type, ...], items: tuple[type, ...] | None) -> list[object]:
    """Values of `WRONG` that ``types`` (a list of ``items``) does not accept."""
    out = []
    for v in WRONG:
        ok = schema._is(v, types)
        if ok and items is not None:
            ok = all(schema._is(x, items) for x in v)
        if not ok:
            out.append(v)
    return out


MACHINE_CASES = [
    (path, value)
    for path, types, items in schema.MACHINE
    for value in _wrong_for(types, items)
    if not (value is None and type(None) not in types)  # a null is a missing field: read
] + [
    (("env",), ["OMP_NUM_THREADS=2"]),
    (("env",), {"OMP_NUM_THREADS": 2}),
    (("cpu_flags",), True),
    (("cards",), ["NVIDIA H100"]),
    (("cards",), [{"device": "cuda:0", "capability": 9.0}]),
    (("numpy", "simd_targets"), "X86_V3"),
    (("torch", "threads"), "2"),
]


@pytest.mark.parametrize(("path", "value"), MACHINE_CASES, ids=stable_id)
def test_wrong_typed_machine_fields_are_refused_by_name(path, value):
    """A machine field of the wrong type is refused before any cause is sought, naming it."""
    good = fingerprint.load(GPU)
    bad = _with(good, path, value)
    field = "machine." + ".".join(path)
    for a, b in ((bad, good), (good, bad)):
        message = _refused(compare, a, b, names=(field,))
        assert field in message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_ulp", 10**400),
        ("max_ulp", True),
        ("max_ulp", "1"),
        ("max_ulp", math.nan),
        ("library", 5),
        ("device", ["cpu"]),
        ("op", {}),
        ("head", "0x1p0"),
    ],
    ids=stable_id,
)
def test_wrong_typed_op_fields_are_refused_by_name(field, value):
    good = fingerprint.load(GPU)
    bad = copy.deepcopy(good)
    key = next(iter(bad["ops"]))
    bad["ops"][key][field] = value
    _refused(compare, good, bad, names=(key,))


def test_a_huge_max_ulp_reads_as_a_number_and_prints(tmp_path):
    """1e999 in a file is JSON's way to write inf: read, and printed."""
    fp = fingerprint.load(GPU)
    key = next(iter(fp["ops"]))
    text = json.dumps(fp).replace(json.dumps(fp["ops"][key]["max_ulp"]), "1e999", 1)
    path = tmp_path / "inf.json"
    path.write_text(text)
    other = copy.deepcopy(fp)
    other["ops"][key]["digest"] = "0" * 16
    assert "inf" in compare(fingerprint.load(path), other).text()


@pytest.mark.parametrize("target", ["/dev/full", "readonly"])
def test_html_that_cannot_be_written_exits_2_in_one_line(tmp_path, capsys, monkeypatch, target):
    page = tmp_path / "page.html"
    if target == "/dev/full":
        import os

        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full here")
        page = "/dev/full"
    else:
        from pathlib import Path

        def refuse(self, *args, **kwargs):
            raise PermissionError(13, "Permission denied", str(self))

        monkeypatch.setattr(Path, "write_text", refuse)
    err = _cli_one_line(capsys, "compare", str(SHIPPED[0]), str(SHIPPED[-1]), "--html", str(page))
    assert "--html" in err


@pytest.mark.parametrize("label", [5, None, 1.5, b"x", ["x"], True, object()], ids=stable_id)
def test_fingerprint_refuses_a_label_that_is_not_a_string(label):
    _refused(fpexplore.fingerprint, label, names=("label",))
    if not isinstance(label, bool):
        _refused(fingerprint.take, "x", values=label, names=("values",))


@pytest.mark.parametrize("backward", ["no", "yes", "False", "", 0, 1, None, np.bool_(True)])
def test_check_determinism_refuses_a_backward_that_is_not_a_bool(backward):
    def target():
        raise AssertionError("never run: the argument is refused first")

    _refused(determinism_check.check, target, runs=2, backward=backward, names=("backward",))


TIMES = [datetime.timedelta(days=1), datetime.datetime(2020, 1, 1), datetime.date(2020, 1, 1)]
TIMES += [np.timedelta64(3, "s"), np.datetime64(1, "D"), np.array([np.timedelta64(1, "s")])]
NOT_NUMBERS = [*TIMES, bytearray(b"x"), b"x", range(3), memoryview(b"x")]
FORMAT_FNS = ["ulp", "next_up", "next_down", "bits", "classify", "fields", "to_grid"]
FORMAT_FNS += ["round_array", "round_bits", "round_exact", "bit_string", "from_bits"]


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=stable_id)
@pytest.mark.parametrize("fn", FORMAT_FNS)
def test_formats_refuse_times_and_byte_strings(fn, value):
    arg = {"from_bits": "pattern", "round_exact": "value", "round_bits": "value"}.get(fn, "x")
    for fmt in ("binary16", "binary32", "bfloat16"):
        _refused(getattr(formats, fn), value, fmt, names=(arg,))


def test_truth_refuses_meta_tensors():
    torch = pytest.importorskip("torch")
    meta = torch.ones(3, device="meta")
    for fn, args in [
        (truth.sum, (meta,)),
        (truth.mean, (meta,)),
        (truth.dot, (meta, torch.ones(3))),
        (truth.dot, (torch.ones(3), meta)),
    ]:
        assert "meta" in _refused(fn, *args, names=("'x'", "'y'"))


ARRAYS = {"2": np.ones(2), "3": np.ones(3)}
STRINGS = ["x", "1.0", ["a", "b"], None, {"a": 1}, object(), np.array(["1"])]


def _helpers(a, b):
    """Each tolerance helper with two array arguments ``a`` and ``b`` (names, call)."""
    ok = np.ones(3)
    return [
        (("abs_sum", "exact"), lambda: tolerance.dot_bound(a, 3, "float16", b)),
        (("bound", "exact"), lambda: tolerance.widen(a, b, "float16")),
        (("exact",), lambda: tolerance.rounding_bound(a, "float32")),
        (("x", "exact"), lambda: tolerance.softmax_bound(a, b, 0, "float32")),
        (("x", "exact"), lambda: tolerance.gelu_bound(a, b, "float32")),
        (("exact", "x"), lambda: tolerance.function_bound(a, b, "float32")),
        (
            ("x", "mean", "sigma", "weight", "bias"),
            lambda: tolerance.normalize_bound(a, b, ok, ok, ok, "float32"),
        ),
    ]


@pytest.mark.parametrize("bad", STRINGS, ids=stable_id)
def test_tolerance_helpers_refuse_what_holds_no_numbers(bad):
    for first in (True, False):
        a, b = (bad, np.ones(3)) if first else (np.ones(3), bad)
        for names, call in _helpers(a, b):
            if not first and (len(names) == 1 or (bad is None and names[0] == "abs_sum")):
                continue  # one array argument, or dot_bound's optional exact left out
            _refused(call, names=tuple(f"'{n}'" for n in names))


def test_tolerance_helpers_refuse_shapes_that_do_not_broadcast():
    for names, call in _helpers(ARRAYS["2"], ARRAYS["3"]):
        if len(names) > 1:
            assert "broadcast" in _refused(call, names=names)
    _refused(tolerance.softmax_bound, np.ones(3), np.ones(3), 1, "float32", names=("axis",))


@pytest.mark.parametrize(
    "count", [-1, -(10**30), 1.5, "2", None, True, Fraction(1, 2)], ids=stable_id
)
def test_counts_of_roundings_are_non_negative_ints(count):
    _refused(tolerance.underflow, "float32", count, names=("roundings",))
    _refused(tolerance.rounding_bound, np.ones(2), "float32", count, names=("roundings",))
    _refused(tolerance.dot_bound, np.ones(2), count, "float32", names=("'n'",))


def test_valid_helper_calls_still_answer_with_the_same_bound():
    """The checks change no answer: the bounds equal the formulas on valid input."""
    x = np.array([1.0, -2.0, 3.0])
    u = 2.0**-24
    assert tolerance.underflow("float32", 0) == 0.0
    assert tolerance.underflow("float32", 3) == 3 * formats.get("float32").min_subnormal / 2
    got = tolerance.rounding_bound(x, "float32", 2)
    want = tolerance.gamma(2, "float32") * (1 + 2.0**-30) * np.abs(x) + tolerance.underflow(
        "float32", 2
    )
    assert np.array_equal(got, want) and got[2] > 6 * u
    assert np.array_equal(tolerance.widen(x, x, "float32"), x)


def test_bad_machine_fields_in_a_file_exit_2_in_one_line(tmp_path, capsys):
    fp = json.loads(GPU.read_text())
    for path, value in [(("env",), []), (("cpu_flags",), True), (("cards",), ["H100"])]:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(_with(fp, path, value)))
        err = _cli_one_line(capsys, "compare", str(bad), str(GPU))
        assert "machine." + ".".join(path) in err


def test_invalid_parameter_is_the_error_for_a_non_path():
    with pytest.raises(InvalidParameter, match="'a'"):
        fpexplore.compare(None, str(GPU))
    with pytest.raises(InvalidInput, match="does not exist"):
        fpexplore.compare("/nonexistent/fp.json", str(GPU))
