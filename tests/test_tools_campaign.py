"""A generated campaign of bad and edge inputs over the tools' public entry points.

Every case must either raise the package's own error (`fpexplore.errors.FpexploreError`)
naming one of the entry point's arguments, or return an answer that is correct where a simple
oracle exists; a raw exception or a wrong answer fails the area's test. The cases are
generated deterministically (values x argument positions x entry points); valid runs are kept
few and small. ``pytest -s tests/test_tools_campaign.py`` prints the count by area.
"""

from __future__ import annotations

import collections
import contextlib
import io
import math
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from fpexplore import determinism_check, diverge, export, formats, metrics, report, tolerance
from fpexplore import truth as truth_mod
from fpexplore.cli import main
from fpexplore.errors import FpexploreError


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class BadEq:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no ==")

    __hash__ = object.__hash__


#: Hostile values of every kind, tried in every argument position.
HOSTILE: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    3,
    2**31,
    2**63,
    10**400,
    -(10**400),
    0.5,
    -0.0,
    1e-320,
    math.nan,
    math.inf,
    -math.inf,
    1e308,
    "",
    "x",
    "float32",
    "\x00",
    "a" * 300,
    b"f4",
    bytearray(b"x"),
    [],
    [1.0, 2.0],
    [[1.0], [1.0, 2.0]],
    (),
    {},
    {"foo": "bar"},
    range(3),
    set(),
    complex(1, 2),
    Fraction(1, 3),
    Decimal("nan"),
    object(),
    BadRepr(),
    BadEq(),
    np.int64(3),
    np.uint64(2**63),
    np.float32(0.5),
    np.float64("nan"),
    np.bool_(True),
    np.array(2.5),
    np.array([]),
    np.array([1.0, np.nan]),
    np.array(["cpu"]),
    np.array([[1, 2], [3, 4]], dtype=np.int8),
    np.zeros((2, 0)),
    np.str_("float32"),
    np.longdouble("1e4000"),
]


def _label(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text[:60]


class Campaign:
    """Cases by area, and the raw exceptions and wrong answers found."""

    def __init__(self) -> None:
        self.cases: collections.Counter[str] = collections.Counter()
        self.raw: dict[str, list[str]] = collections.defaultdict(list)
        self.wrong: dict[str, list[str]] = collections.defaultdict(list)

    def attempt(
        self,
        area: str,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        names: tuple[str, ...] = (),
        oracle: Callable[[Any], bool] | None = None,
    ) -> Any:
        """One case: the package's error naming one of ``names``, or an answer ``oracle``
        accepts."""
        kwargs = kwargs or {}
        self.cases[area] += 1
        what = f"{getattr(fn, '__name__', fn)}{tuple(map(_label, args))} {_label(kwargs)}"
        try:
            with np.errstate(all="ignore"):
                result = fn(*args, **kwargs)
        except FpexploreError as exc:
            message = str(exc)
            named = getattr(exc, "name", None)
            if names and named not in names and not any(n in message for n in names):
                self.wrong[area].append(f"{what}: error names none of {names}: {message}")
            return None
        except Exception as exc:
            self.raw[area].append(f"{what}: {type(exc).__name__}: {exc}"[:300])
            return None
        if oracle is not None:
            try:
                ok = oracle(result)
            except Exception as exc:
                ok, result = False, f"oracle raised {type(exc).__name__}: {exc}"
            if not ok:
                self.wrong[area].append(f"{what}: wrong answer {_label(result)}")
        return result


# ---------------------------------------------------------------------------------------------
# formats

FMTS: list[Any] = ["binary16", "bfloat16", "tf32", "binary32", "binary64", "float32", "half"]


def _is_float(x: Any) -> bool:
    return isinstance(x, float) and not isinstance(x, bool)


def _formats(c: Campaign) -> None:
    one_x = ("ulp", "next_up", "next_down", "bits", "classify", "fields", "to_grid")
    one_x += ("round_array", "round_bits", "round_exact", "bit_string", "from_bits")
    for name in one_x:
        fn = getattr(formats, name)
        arg = "pattern" if name == "from_bits" else "value" if name.startswith("round_b") else "x"
        if name == "round_exact":
            arg = "value"
        for fmt in [*FMTS, *HOSTILE]:
            for x in HOSTILE:
                c.attempt("formats", fn, (x, fmt), names=(arg, "fmt"))
    for fmt in HOSTILE:
        c.attempt("formats", formats.get, (fmt,), names=("fmt",))
    # oracles: binary64 against math, int and float agree, next_up/next_down invert
    rng = np.random.default_rng(24)
    xs = [float(v) for v in rng.standard_normal(150) * 10.0 ** rng.integers(-30, 30, 150)]
    xs += [0.0, 1.0, 2.0**-1074, 1e308, 65504.0, 65520.0, 2.0**30 + 3]
    for x in xs:
        c.attempt("formats", formats.ulp, (x, "binary64"), oracle=lambda r, x=x: r == math.ulp(x))
        c.attempt(
            "formats",
            formats.next_up,
            (x, "binary64"),
            oracle=lambda r, x=x: r == math.nextafter(x, math.inf),
        )
        with np.errstate(over="ignore"):
            f32 = float(np.float32(x))
        if math.isfinite(f32):
            c.attempt(
                "formats",
                formats.next_up,
                (f32, "binary32"),
                oracle=lambda r, f=f32: r == float(np.nextafter(np.float32(f), np.float32(np.inf))),
            )
    for k in [0, 1, 3, 2049, 65504, 65519, 65520, 2**24 + 1, 2**30 + 3, 2**53 + 1, 2**64, 10**40]:
        for fmt in ("binary16", "bfloat16", "binary32", "binary64"):
            want = formats.ulp(float(k), fmt)
            c.attempt("formats", formats.ulp, (k, fmt), oracle=lambda r, w=want: r == w)


# ---------------------------------------------------------------------------------------------
# tolerance

TOL_FMTS = ["float16", "bfloat16", "float32", "float64"]
UNIT = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24, "float64": 2.0**-53}


def _gamma_ok(n: int, fmt: str) -> Callable[[Any], bool]:
    u = Fraction(UNIT[fmt])

    def ok(r: Any) -> bool:
        if n * u >= 1:
            return r == math.inf
        want = float(n * u / (1 - n * u))
        return isinstance(r, float) and math.isclose(r, want, rel_tol=1e-12, abs_tol=0)

    return ok


def _int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def _tolerance(c: Campaign) -> None:
    for fmt in [*TOL_FMTS, *HOSTILE]:
        c.attempt("tolerance", tolerance.unit_roundoff, (fmt,), names=("fmt",))
        for n in HOSTILE:
            c.attempt("tolerance", tolerance.gamma, (n, fmt), names=("n", "fmt"))
            c.attempt("tolerance", tolerance.probabilistic_gamma, (n, fmt), names=("n", "fmt"))
    for fmt in TOL_FMTS:
        c.attempt(
            "tolerance", tolerance.unit_roundoff, (fmt,), oracle=lambda r, f=fmt: r == UNIT[f]
        )
        for n in [0, 1, 2, 100, 2**20, 2**40, 2**60, 10**400]:
            c.attempt("tolerance", tolerance.gamma, (n, fmt), oracle=_gamma_ok(n, fmt))
            c.attempt(
                "tolerance",
                tolerance.probabilistic_gamma,
                (n, fmt),
                oracle=lambda r: isinstance(r, float) and r >= 0,
            )
        for lam in HOSTILE:
            c.attempt("tolerance", tolerance.probabilistic_gamma, (10, fmt, lam), names=("lam",))
    # advise: one argument bad at a time, the others cheap and valid
    for op in [*tolerance.OPS, *HOSTILE]:
        c.attempt(
            "tolerance", tolerance.advise, (op, "float32", 1_000_000_000), names=("op", "size")
        )
    for op in tolerance.OPS:
        low, high, step = tolerance.SIZES[op]
        for size in [*HOSTILE, low - 1, high + 1, high + step, -step, 10**30]:
            if _int(size) and low <= int(size) <= 4096 and int(size) % step == 0:
                continue  # valid and cheap: `_advise_small` runs those
            c.attempt("tolerance", tolerance.advise, (op, "float32", size), names=("size",))
        for fmt in HOSTILE:
            c.attempt("tolerance", tolerance.advise, (op, fmt, low), names=("fmt",))
        for seed in HOSTILE:
            if _int(seed) and 0 <= int(seed) < 2**64:
                continue
            c.attempt("tolerance", tolerance.advise, (op, "float32", low, seed), names=("seed",))


def _advise_small(c: Campaign) -> None:
    """A few real measurements: each within its own bound."""
    for op in tolerance.OPS:
        low = tolerance.SIZES[op][0]
        for fmt in ("float32", "bfloat16"):
            c.attempt(
                "tolerance",
                tolerance.advise,
                (op, fmt, max(low, 9 if op == "conv2d" else 8)),
                oracle=lambda a: a.within_bound is not False,
            )


# ---------------------------------------------------------------------------------------------
# metrics and truth


def _metrics_truth(c: Campaign) -> None:
    t = truth_mod.sum(np.array([1.0, 2.0, 3.0]))
    for got in HOSTILE:
        c.attempt("metrics", metrics.measure, (got, t), names=("got",))
        c.attempt("metrics", metrics.measure, (np.float32(6.0), got), names=("truth",))
        c.attempt("metrics", metrics.measure, (6.0, t), {"fmt": got}, names=("fmt",))
        c.attempt("metrics", metrics.as_format_array, (got,), names=("got", "fmt"))
    rng = np.random.default_rng(7)
    for _ in range(60):
        x = rng.standard_normal(int(rng.integers(1, 40))).astype(np.float32)
        tr = truth_mod.sum(x.astype(np.float64))
        exact = sum(Fraction(float(v)) for v in x)
        got = np.float32(float(exact))  # the correctly rounded sum: 0 ULP
        c.attempt(
            "metrics",
            metrics.measure,
            (got, tr),
            oracle=lambda e: e.max_abs_ulp <= 0.5 and e.correctly_rounded,
        )
    for x in HOSTILE:
        c.attempt("truth", truth_mod.sum, (x,), names=("x",))
        c.attempt("truth", truth_mod.mean, (x,), names=("x",))
        c.attempt("truth", truth_mod.sum, (np.ones(3),), {"axis": x}, names=("axis",))
        c.attempt("truth", truth_mod.mean, (np.ones((2, 3)),), {"axis": x}, names=("axis",))
        c.attempt("truth", truth_mod.dot, (x, np.ones(3)), names=("x", "y"))
        c.attempt("truth", truth_mod.dot, (np.ones(3), x), names=("x", "y"))
        c.attempt("truth", truth_mod.matmul, (x, np.ones((2, 2))), names=("a", "b"))
        c.attempt("truth", truth_mod.matmul, (np.ones((2, 2)), x), names=("a", "b"))
        img, ker = np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2))
        for key in ("bias", "stride", "padding", "dilation", "groups"):
            c.attempt("truth", truth_mod.conv2d, (img, ker), {key: x}, names=(key,))
        c.attempt("truth", truth_mod.conv2d, (x, ker), names=("x", "w"))
        c.attempt("truth", truth_mod.conv2d, (img, x), names=("x", "w"))
    for _ in range(60):
        n = int(rng.integers(1, 30))
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        s = sum(Fraction(float(v)) for v in x)
        d = sum(Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y, strict=True))
        c.attempt("truth", truth_mod.sum, (x,), oracle=lambda t, s=s: t.split()[0] == float(s))
        c.attempt("truth", truth_mod.dot, (x, y), oracle=lambda t, d=d: t.split()[0] == float(d))
        c.attempt(
            "truth", truth_mod.mean, (x,), oracle=lambda t, s=s, n=n: t.split()[0] == float(s / n)
        )


def _orders(c: Campaign) -> None:
    from fpexplore import orders

    for order in [*orders.names(), *HOSTILE]:
        c.attempt("orders", orders.describe, (order,), names=("order",))
        for x in HOSTILE:
            c.attempt("orders", orders.emulate, (x, order), names=("x", "order"))
        for threads in HOSTILE:
            c.attempt(
                "orders", orders.emulate, ([1.0, 2.0], order, threads), names=("threads", "order")
            )
    rng = np.random.default_rng(5)
    for _ in range(40):
        x = rng.standard_normal(int(rng.integers(1, 50))).astype(np.float32)
        want = np.float32(0.0)
        for v in x:
            want = np.float32(want + v)
        c.attempt(
            "orders",
            orders.emulate,
            (x, "sequential"),
            oracle=lambda r, w=want: np.float32(r).tobytes() == w.tobytes(),
        )


# ---------------------------------------------------------------------------------------------
# diverge, determinism_check, export, report (argument checks only)


def _diverge(c: Campaign) -> None:
    for v in HOSTILE:
        c.attempt("diverge", diverge.run_zoo, (v,), names=("model",))
        c.attempt("diverge", diverge.run_zoo, ("mlp", v), names=("against",))
        c.attempt("diverge", diverge.run_zoo, ("mlp", "torch", v), names=("plant",))
        c.attempt("diverge", diverge.compare, (v, v), names=("a", "b"))
        c.attempt("diverge", diverge.plot, (v,), names=("report",))
        c.attempt("diverge", diverge.capture_torch, (v, np.ones(3)), names=("model",))
        c.attempt("diverge", diverge.capture_keras, (v, np.ones(3)), names=("model",))
        c.attempt("diverge", diverge.capture_djl, (v, np.ones(3)), names=("model",))
        c.attempt("diverge", diverge.capture_libtorch, (v, np.ones(3)), names=("model",))
        c.attempt("diverge", diverge.spec_of, (v, v), names=("name", "module"))


def _determinism(c: Campaign) -> None:
    def target() -> Any:
        import torch

        return torch.ones(2) * 2

    specs = [":forward", "x:", ".rel:f", "no_such_module_h24:f", "os:no_such_attr", "/dev/null:f"]
    specs += ["/nonexistent/x.py:f", "os.path:sep", "a b:c", "::", "x.py:1f", "/proc/self:f"]
    for spec in [*specs, *HOSTILE]:
        c.attempt("determinism", determinism_check.load_target, (spec,), names=("target", "spec"))
    arg_names = ("target", "runs", "flag_sets", "device", "backward", "seed")
    for key in ("runs", "flag_sets", "device", "backward", "seed"):
        for v in HOSTILE:
            if key == "seed" and (v is None or _int(v)):
                continue  # valid seeds: would run
            if key == "flag_sets" and v is None:
                continue
            c.attempt(
                "determinism",
                determinism_check.check,
                (target,),
                {key: v, "runs": 2} if key != "runs" else {key: v},
                names=arg_names,
            )
    for v in HOSTILE:
        c.attempt(
            "determinism", determinism_check.check, (v,), {"runs": 2}, names=("target", "spec")
        )
        c.attempt(
            "determinism",
            determinism_check.DeterminismReport.from_dict,
            (v,),
            names=("d", "report", "record"),
        )
        c.attempt(
            "determinism",
            determinism_check.DeterminismReport.from_dict,
            ({"target": v, "results": v, "runs": v},),
            names=("d", "report", "record", "target", "results", "runs"),
        )
        c.attempt("determinism", determinism_check.load_record, (v,), names=("path", "record"))


def _runs_nothing(v: Any) -> bool:
    """Not a value that would make export/report do a whole (valid) run."""
    if v is None or (type(v) in (list, tuple, dict, set, range) and not v):
        return False
    return not (isinstance(v, str) and v and "\x00" not in v and len(v) < 200)


def _export_report(c: Campaign, tmp: Any) -> None:
    out_ok = str(tmp / "page.html")
    bad_paths = ["", str(tmp), "/proc/x/y.html", "/dev/null/x.html", "\x00", "a" * 5000]
    values = [v for v in HOSTILE if _runs_nothing(v)]
    for v in [*values, *bad_paths]:
        c.attempt("export", export.export, ("summation_order", v), names=("out",))
        c.attempt("export", export.export, (v, out_ok), names=("lesson_name", "lesson"))
        for key in ("params", "vary", "values", "interactive", "progress"):
            c.attempt(
                "export",
                export.export,
                ("summation_order", "\x00bad"),
                {key: v},
                names=("out", key),
            )
        c.attempt("report", report.write, (v,), names=("out",))
        c.attempt("report", report.write, (str(tmp / "r.html"), v), names=("names", "lesson"))
        c.attempt("report", report.run_lessons, (v,), names=("names", "lesson"))
        for key in ("all_records", "progress"):
            c.attempt("report", report.write, ("\x00",), {key: v}, names=("out", key))
    from fpexplore.lessons import get

    param = get("summation_order").param("n")
    for v in HOSTILE:
        c.attempt("export", export.grid, (param, v), names=("current", "n"))
        c.attempt("export", export.grid, (param, 10, v), names=("points",))
        c.attempt("export", export.grid, (v, 10), names=("param",))


# ---------------------------------------------------------------------------------------------
# the command line, in process


def _cli_ok(code: Any) -> bool:
    return code in (0, 1, 2)


def _cli(c: Campaign, tmp: Any) -> None:
    words = ["", "-1", "0", "nan", "inf", "1e400", "9" * 40, "x", "--", "-h2", "\x01", "1.5"]
    words += ["float8", "bfloat16", "float64", "True", "[]", "/dev/null/x", str(tmp)]

    def run(argv: list[str]) -> Any:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                return main(argv)
            except SystemExit as exc:  # argparse's refusal: exit status 2
                return 2 if exc.code == 2 else ("exit", exc.code)

    for w in words:
        for op in ("sum", "matmul", "conv2d", "softmax", w):
            c.attempt("cli", run, (["tolerance", op, "--size", w],), oracle=_cli_ok)
            c.attempt("cli", run, (["tolerance", op, "--fmt", w],), oracle=_cli_ok)
        c.attempt("cli", run, (["check-determinism", w, "--runs", "2"],), oracle=_cli_ok)
        c.attempt("cli", run, (["check-determinism", "os:sep", "--runs", w],), oracle=_cli_ok)
        c.attempt("cli", run, (["check-determinism", ":f", "--device", w],), oracle=_cli_ok)
        c.attempt("cli", run, (["check-determinism", ":f", "--flags", w],), oracle=_cli_ok)
        c.attempt("cli", run, (["diverge", w],), oracle=_cli_ok)
        c.attempt("cli", run, (["diverge", "mlp", "--against", w],), oracle=_cli_ok)
        c.attempt("cli", run, (["diverge", "mlp", "--plot", w, "--plant", w],), oracle=_cli_ok)
        c.attempt("cli", run, (["export", w, "--html", w],), oracle=_cli_ok)
        c.attempt("cli", run, (["report", "--out", w, "--lesson", w],), oracle=_cli_ok)
    for path in ["", str(tmp), "/proc/x/y.html", "/dev/null/x.html", "\x00"]:
        for lesson in ("summation_order", "x"):
            c.attempt("cli", run, (["export", lesson, "--html", path],), oracle=_cli_ok)
            c.attempt("cli", run, (["report", "--out", path, "--lesson", lesson],), oracle=_cli_ok)
            c.attempt("cli", run, (["diverge", "mlp", "--plot", path],), oracle=_cli_ok)
        c.attempt("cli", run, (["compare", w, w],), oracle=_cli_ok)
        c.attempt("cli", run, (["run", w, "--n", w],), oracle=_cli_ok)


# ---------------------------------------------------------------------------------------------


AREAS = ("formats", "tolerance", "metrics", "truth", "orders", "diverge", "determinism")
AREAS += ("export",)
AREAS += ("report", "cli")


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Campaign:
    tmp = tmp_path_factory.mktemp("campaign")
    c = Campaign()
    _formats(c)
    _tolerance(c)
    _advise_small(c)
    _metrics_truth(c)
    _orders(c)
    _diverge(c)
    _determinism(c)
    _export_report(c, tmp)
    _cli(c, tmp)
    return c


@pytest.mark.parametrize("area", AREAS)
def test_area_has_no_raw_exception_and_no_wrong_answer(campaign, area):
    assert campaign.cases[area] > 0
    raw, wrong = campaign.raw.get(area, []), campaign.wrong.get(area, [])
    assert not raw, f"{len(raw)} raw exceptions in {area}:\n" + "\n".join(raw[:40])
    assert not wrong, f"{len(wrong)} wrong answers in {area}:\n" + "\n".join(wrong[:40])


def test_campaign_is_large(campaign):
    total = sum(campaign.cases.values())
    print("\ntool campaign cases by area:")
    for area in AREAS:
        print(f"  {area:12s} {campaign.cases[area]:7d}")
    print(f"  {'total':12s} {total:7d}")
    assert set(campaign.cases) == set(AREAS)
    assert total > 10_000
