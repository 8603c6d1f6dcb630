"""Layer-by-layer comparison of two captures against each layer's exact result.

For every layer both implementations ran, each side's output is measured against the exact
(or certified) result of the layer's reference definition applied to *that side's own input*:
the error the layer adds, separated from what it inherited. A layer *parts* the two when
either side's added error exceeds the a-priori bound for its op, format and size
(`fpexplore.tolerance`). The first such layer is the culprit; with none, the two agree within
rounding, however far their final outputs have drifted apart.
"""

from __future__ import annotations

import hashlib
import math
import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .. import formats, metrics
from ..errors import InvalidInput, InvalidParameter
from ..memo import Memo
from ..result import Claim, Observation, check_claims, claim_holds, jsonable
from ..result.spec import declare_texts
from .capture import Capture
from .specs import LayerSpec, spec_of

AGREE = "agree within rounding"

#: key -> the claim as declared; the measured numbers follow it after a colon.
CLAIMS = {
    "agree": "every layer on both sides is within its a-priori rounding bound",
    "first_divergence": "the first layer outside its bound is the expected one, and only the "
    "expected side is outside there",
}
#: the claims declared: each text, then what the run found
SPECS = declare_texts(
    {
        "agree": (CLAIMS["agree"], ": {verdict}"),
        "first_divergence": (CLAIMS["first_divergence"], ": expected '{layer}' on {side}; {found}"),
    }
)


@dataclass(frozen=True)
class Side:
    """One implementation at one layer: its added error against the bound."""

    max_ulp: float  # max |output - exact result of its own input|, in ULPs of the exact result
    bound_ulp: float  # the a-priori bound at that layer, in ULPs of the exact result (largest)
    use: float  # max over elements of |error| / bound (<= 1: within; inf: bound 0, error > 0)
    within: bool
    n_outside: int
    n: int
    truth_digits: float  # inf for exact truths


@dataclass(frozen=True)
class LayerRow:
    """One layer of the comparison."""

    name: str
    kind: str
    description: str
    shape: tuple[int, ...]
    terms: int
    a: Side | None
    b: Side | None
    diff_ulp: float  # max |a - b| between the two outputs, in ULPs of the format
    input_diff_ulp: float  # the same for the first input: what the layer inherited
    note: str = ""
    nonfinite: tuple[int, int] = (0, 0)  # NaN/inf elements in each side's output
    nonfinite_input: bool = False  # a side's input holds NaN/inf

    @property
    def parted(self) -> bool:
        return any(s is not None and not s.within for s in (self.a, self.b))

    def culprits(self, names: tuple[str, str]) -> list[str]:
        return [
            n
            for n, s in zip(names, (self.a, self.b), strict=True)
            if s is not None and not s.within
        ]


@dataclass(frozen=True)
class DivergenceReport:
    """The comparison: rows per layer, the first layer that parts the two, timings."""

    names: tuple[str, str]
    versions: tuple[str, str]
    fmt: str
    rows: tuple[LayerRow, ...]
    truth_seconds: float
    label: str = ""
    #: (layer, side) where the first divergence is expected (a planted mistake): the claim
    #: "first_divergence" compares it with the finding
    expected: tuple[str, str] | None = None

    @property
    def first(self) -> LayerRow | None:
        """The first layer where an implementation adds more error than the bound allows."""
        return next((r for r in self.rows if r.parted), None)

    @property
    def first_nonfinite(self) -> LayerRow | None:
        """The first layer whose input or output holds a NaN or an infinity (on either side)."""
        return next((r for r in self.rows if r.nonfinite_input or any(r.nonfinite)), None)

    @property
    def agree(self) -> bool:
        """No layer parted and every layer was checked (a NaN or an infinity leaves the layers
        after it unchecked: then nothing says the two agree)."""
        return self.first is None and self.first_nonfinite is None

    def row(self, name: str) -> LayerRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no layer {name!r}; layers: {', '.join(r.name for r in self.rows)}")

    def verdict(self) -> str:
        """Agreement within rounding, or the culprit layer and side; and where NaN or infinity
        first appear."""
        return self._verdict() + self._nonfinite_text()

    def _nonfinite_text(self) -> str:
        r = self.first_nonfinite
        if r is None:
            return ""
        n = math.prod(r.shape)
        counts = ", ".join(f"{k}: {c} of {n}" for k, c in zip(self.names, r.nonfinite, strict=True))
        where = "input" if r.nonfinite_input else "output"
        return (
            f" NaN or infinity first appear in the {where} of layer '{r.name}' (non-finite "
            f"output elements: {counts}); a side whose input or output there or later is not "
            "finite is not checked."
        )

    def _verdict(self) -> str:
        f = self.first
        checked = [r for r in self.rows if r.a is not None or r.b is not None]
        if f is None and self.first_nonfinite is not None:
            return (
                f"{self.names[0]} and {self.names[1]} are not shown to agree: {len(checked)} of "
                f"{len(self.rows)} layers could be checked (each within its a-priori bound)."
            )
        if f is None:
            worst = max((s.use for r in checked for s in (r.a, r.b) if s is not None), default=0)
            last = self.rows[-1] if self.rows else None
            drift = f"; their final outputs differ by {last.diff_ulp:.3g} ULP" if last else ""
            return (
                f"{self.names[0]} and {self.names[1]} {AGREE}: every one of {len(checked)} "
                f"checked layers is within its a-priori bound on both sides (at most "
                f"{worst:.2g} of it){drift}."
            )
        who = f.culprits(self.names)
        side = f.a if who[0] == self.names[0] else f.b
        assert side is not None
        return (
            f"first divergence at layer '{f.name}' ({f.description}): {' and '.join(who)} adds "
            f"an error of up to {side.use:.3g} times the a-priori bound for {self.fmt} rounding "
            f"to the exact result of its own input ({side.n_outside} of {side.n} elements "
            f"outside the bound; largest error {side.max_ulp:.3g} ULP)."
        )

    def claim(self, key: str) -> Claim:
        """Claim ``key``; an unknown key raises KeyError naming the known ones."""
        claims = self.claims
        if key not in claims:
            raise KeyError(f"no claim {key!r}; this report states: {', '.join(claims)}")
        return claims[key]

    @property
    def claims(self) -> dict[str, Claim]:
        """`CLAIMS` with the measured numbers ("first_divergence" only with `expected`)."""
        claims = {"agree": SPECS["agree"].claim(self.agree, verdict=self.verdict())}
        if self.expected is not None:
            layer, side = self.expected
            f = self.first
            if f is None:
                found = "no layer is outside its bound"
            else:
                who = f.culprits(self.names)
                found = f"found at '{f.name}' ({f.description}), outside on {' and '.join(who)}"
                for name, s in zip(self.names, (f.a, f.b), strict=True):
                    if s is not None and not s.within:
                        found += f"; {name}: {s.n_outside} of {s.n} elements, {s.use:.3g} x bound"
            holds = f is not None and f.name == layer and f.culprits(self.names) == [side]
            claims["first_divergence"] = SPECS["first_divergence"].claim(
                holds, layer=layer, side=side, found=found
            )
        return claims

    @property
    def observations(self) -> dict[str, Observation]:
        """How far apart the final outputs are (machine-dependent: never asserted)."""
        if not self.rows:
            return {}
        last = self.rows[-1]
        text = f"ULPs between the two final outputs ({last.name})"
        return {"final_outputs_differ": Observation(text, last.diff_ulp)}

    def holds(self, key: str) -> bool | None:
        """Whether claim ``key`` held, None if it was not checked."""
        return claim_holds(self.claims, key)

    def check(self, *keys: str) -> None:
        """Print and assert claims ``keys`` (all when none are named), as `Comparison.check`."""
        check_claims(self.label or "divergence report", self.claims, keys, self.observations)

    def table(self) -> str:
        """One line per layer, `COLUMNS` wide. "ULP added": the largest error a side adds to the
        exact result of its own input; "/ bound": the largest ratio of an element's error to
        its a-priori bound (above 1: outside); "|a-b| ULP": how far apart the two sides'
        outputs and inputs are. A culprit (or a note) goes on an indented line under its row."""
        from ..result.text_table import COLUMNS, cut

        a, b = (cut(n, 8) for n in self.names)
        groups = ("", "", "ULP added", "", "/ bound", "", "|a-b| ULP", "")
        head = ("layer", "terms", a, b, a, b, "out", "in")
        lines = [head]
        notes: list[str] = []
        for r in self.rows:
            ulp = [s.max_ulp if s else math.nan for s in (r.a, r.b)]
            use = [s.use if s else math.nan for s in (r.a, r.b)]
            numbers = (*ulp, *use, r.diff_ulp, r.input_diff_ulp)
            lines.append((r.name, str(r.terms), *map(_f, numbers)))
            mark = "◀ " + ", ".join(r.culprits(self.names)) if r.parted else r.note
            notes.append(f"{mark} ({r.description})" if mark else "")
        widths = [max(len(row[i]) for row in [groups, *lines]) for i in range(len(head))]
        # a group label spans its two columns
        for i in (2, 4, 6):
            span = widths[i] + 1 + widths[i + 1]
            if len(groups[i]) > span:
                widths[i + 1] += len(groups[i]) - span

        def joined(row: tuple[str, ...]) -> str:
            # numbers right-aligned, one space apart: the table fits `COLUMNS`
            cells = [
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ]
            return " ".join(cells).rstrip()

        group_line = " ".join(
            groups[i].rjust(widths[i] + (1 + widths[i + 1] if groups[i] else 0))
            for i in range(len(head))
            if i not in (3, 5, 7)
        ).rstrip()
        out = [group_line, joined(head), " ".join("-" * w for w in widths)]
        for row, note in zip(lines[1:], notes, strict=True):
            out.append(joined(row))
            if note:
                out += textwrap.wrap(note, COLUMNS, initial_indent="    ", subsequent_indent="    ")
        out += textwrap.wrap(self.verdict(), COLUMNS, subsequent_indent="    ")
        out.append(f"per-layer truth for both sides took {self.truth_seconds:.2f} s")
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "names": list(self.names),
            "versions": list(self.versions),
            "fmt": self.fmt,
            "agree": self.agree,
            "first": None if self.first is None else self.first.name,
            "first_nonfinite": None if self.first_nonfinite is None else self.first_nonfinite.name,
            "verdict": self.verdict(),
            "expected": None if self.expected is None else list(self.expected),
            "claims": {k: c.to_dict() for k, c in self.claims.items()},
            "truth_seconds": self.truth_seconds,
            "rows": [jsonable(asdict(r)) for r in self.rows],
        }


class Reports(dict[str, DivergenceReport]):
    """Reports by model (`fpexplore.diverge.run_zoo` of each)."""

    def of(self, model: str) -> DivergenceReport:
        """``model``'s report; KeyError names the models there are."""
        if model not in self:
            raise KeyError(f"no report of {model!r}; there are: {', '.join(self) or 'none'}")
        return self[model]


def _f(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.3g}"


def _ulp_diff(x: np.ndarray, y: np.ndarray, fmt: str) -> float:
    if x.shape != y.shape:
        return math.nan
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        d = np.abs(x64 - y64) / formats.ulp(np.maximum(np.abs(x64), np.abs(y64)), fmt)
    d = np.where(x64 == y64, 0.0, d)
    if not d.size:
        return 0.0
    return math.nan if np.isnan(d).all() else float(np.nanmax(d))


def _nonfinite(a: np.ndarray) -> int:
    """How many elements of ``a`` are NaN or infinite (0 for integer arrays)."""
    return int(np.count_nonzero(~np.isfinite(a))) if a.dtype.kind in "fc" else 0


_TRUTHS = Memo(keep=256)  # recent layer truths, by content digest


def _digest(spec: LayerSpec, inputs: tuple[np.ndarray, ...], shape: tuple[int, ...]) -> str:
    h = hashlib.sha256(f"{spec.kind}|{spec.name}|{shape}".encode())
    for k, v in sorted(spec.params.items()):
        h.update(k.encode())
        if isinstance(v, np.ndarray):
            h.update(f"{v.dtype.str}{v.shape}".encode())
            h.update(v.tobytes())
        else:
            h.update(repr(v).encode())
    for i in inputs:
        h.update(f"{i.dtype.str}{i.shape}".encode())
        h.update(np.ascontiguousarray(i).tobytes())
    return h.hexdigest()


def layer_truth(spec: LayerSpec, inputs: tuple[np.ndarray, ...], shape: tuple[int, ...]) -> Any:
    """The truth of ``spec`` on ``inputs``, the most recent ones kept (by definition and bits)."""
    key = _digest(spec, inputs, shape)
    return _TRUTHS.get(key, lambda: spec.truth(list(inputs), shape))


_SIDES = Memo(keep=512)  # recent measurements, by truth and output bits


def _measure(spec: LayerSpec, inputs: tuple[np.ndarray, ...], output: np.ndarray, fmt: str) -> Side:
    """One side's error and bound use at a layer, the most recent ones kept (by definition,
    input and output bits): another implementation against the same reference reuses them."""
    h = hashlib.sha256(_digest(spec, inputs, output.shape).encode())
    h.update(f"{fmt}|{output.dtype.str}".encode())
    h.update(np.ascontiguousarray(output).tobytes())
    return _SIDES.get(h.hexdigest(), lambda: _measure_once(spec, inputs, output, fmt))


def _measure_once(
    spec: LayerSpec, inputs: tuple[np.ndarray, ...], output: np.ndarray, fmt: str
) -> Side:
    truth = layer_truth(spec, inputs, output.shape)
    err = metrics.measure(output, truth)
    got = output.astype(np.float64)
    u = np.asarray(err.unit, dtype=np.float64)  # the exact truth's ULP, the error's unit
    signed = np.asarray(err.abs_error(), dtype=np.float64)  # got - truth
    exact = got - signed
    bound = spec.bound(list(inputs), exact, fmt)
    absd = np.abs(signed)
    with np.errstate(divide="ignore", invalid="ignore"):
        use = np.where(absd == 0, 0.0, absd / bound)
    outside = absd > bound
    return Side(
        max_ulp=err.max_abs_ulp,
        bound_ulp=float(np.max(bound / u, initial=0.0)),
        use=float(np.max(use, initial=0.0)),
        within=not bool(outside.any()),
        n_outside=int(outside.sum()),
        n=int(output.size),
        truth_digits=float(truth.digits),
    )


def _pairs(a: Capture, b: Capture) -> list[tuple[str, str, str]]:
    common = [n for n in a.taps if n in b.taps]
    if common:
        return [(n, n, n) for n in common]
    if len(a.taps) != len(b.taps):
        raise InvalidInput(
            f"the two captures share no layer names and have different layer counts "
            f"({len(a.taps)} in {a.implementation}, {len(b.taps)} in {b.implementation}); "
            "name the layers alike so they can be matched."
        )
    return [(na, na, nb) for na, nb in zip(a.taps, b.taps, strict=True)]


def compare(
    a: Capture,
    b: Capture,
    specs: Mapping[str, LayerSpec] | None = None,
    label: str = "",
    progress: Callable[[str], None] | None = None,
    expect: tuple[str, str] | None = None,
) -> DivergenceReport:
    """Compare two captures layer by layer against each layer's exact result.

    ``specs``: each layer's reference definition by name, by default read off the torch modules
    of ``a`` (or ``b``), against which a torch side is measured too (a dropout left in train
    mode is caught). ``expect``: (layer, side name) where a planted mistake should be found
    first, checked by the claim "first_divergence".
    """
    for name, side in (("a", a), ("b", b)):
        if not isinstance(side, Capture):
            raise InvalidParameter(name, side, "a Capture (from capture_torch, ...)", "compare")
    if specs is None:
        src = a if a.modules else b
        specs = {n: s for n, m in src.modules.items() if (s := spec_of(n, m)) is not None}
    names = (a.implementation, b.implementation)
    if names[0] == names[1]:
        names = (names[0] + " A", names[1] + " B")
    expected = None
    if expect is not None:
        if not (isinstance(expect, tuple | list) and len(expect) == 2):
            raise InvalidParameter("expect", expect, "a (layer, side) pair", "compare")
        layer, side = expect
        by_name = {a.implementation: names[0], b.implementation: names[1]}
        if side not in (*names, *by_name):
            accepted = f"a side named {' or '.join(names)}"
            raise InvalidParameter("expect", expect, accepted, "compare")
        expected = (str(layer), by_name.get(side, side))
    rows = []
    t0 = time.perf_counter()
    fmt = formats.get(next(iter(a.taps.values())).output.dtype).name
    for key, na, nb in _pairs(a, b):
        ta, tb = a.taps[na], b.taps[nb]
        spec = specs.get(key)
        in_diff = (
            _ulp_diff(ta.inputs[0], tb.inputs[0], fmt) if ta.inputs and tb.inputs else math.nan
        )
        diff = _ulp_diff(ta.output, tb.output, fmt)
        bad = (_nonfinite(ta.output), _nonfinite(tb.output))
        bad_in = tuple(any(_nonfinite(i) for i in t.inputs) for t in (ta, tb))
        extra = {"nonfinite": bad, "nonfinite_input": any(bad_in)}
        if spec is None:
            note = "not checked: no truth for this op"
            row = (key, "?", "no reference definition", ta.output.shape, 1, None, None)
            rows.append(LayerRow(*row, diff, in_diff, note, **extra))
            continue
        if progress:
            progress(f"{key}: {spec.describe()}")
        sides, skipped = [], []
        for name, tap, n_bad, in_bad in zip(names, (ta, tb), bad, bad_in, strict=True):
            floats = tap.output.dtype.kind == "f"
            if floats and (n_bad or in_bad):  # no exact result to measure against: reported
                where = "input" if in_bad else f"{n_bad} of {tap.output.size}"
                skipped.append(f"{name} ({where})")
            measured = floats and not (n_bad or in_bad)
            sides.append(_measure(spec, tap.inputs, tap.output, fmt) if measured else None)
        note = "not checked: NaN/inf in " + ", ".join(skipped) if skipped else ""
        row = (key, spec.kind, spec.describe(), tuple(ta.output.shape), spec.terms(list(ta.inputs)))
        rows.append(LayerRow(*row, sides[0], sides[1], diff, in_diff, note, **extra))
    seconds = time.perf_counter() - t0
    return DivergenceReport(
        names, (a.version, b.version), fmt, tuple(rows), seconds, label, expected
    )
