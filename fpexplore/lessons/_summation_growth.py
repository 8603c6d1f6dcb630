"""Error growth of the summation orders against n, with the textbook bounds (cached).

The error is measured as ``|computed - exact| / sum(|x|)``, the quantity the classic bounds
hold for: about ``(n - 1)·u`` for a left-to-right sum and ``log2(n)·u`` for a pairwise tree
(``u`` the unit roundoff of the format). Curves come from the emulators and the exact sum on
prefixes of one array (seed 0), so one computation serves every n; they are kept in memory and
on disk under ``cache_dir()/summation_growth``, keyed by the emulators' source.
"""

from __future__ import annotations

import hashlib
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FpexploreError
from ..paths import cache_dir
from ._summation_inputs import numpy_dtype

#: the orders drawn (emulated), and the n of the curves: 10 to 10^6, four points a decade
ORDERS = ("sequential", "pairwise", "kahan", "numpy", "torch", "tensorflow")
NS = tuple(sorted({round(10 ** (k / 4)) for k in range(4, 25)}))
SEED = 0
X_MAX = 10_000_000  # the largest n of the lesson: the x axis always reaches it
_VERSION = "1"
_memory: dict[str, dict[str, Any]] = {}

_PRECISION = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def unit_roundoff(dtype: str) -> float:
    """u = 2**-p for a format of p significand bits (half the machine epsilon)."""
    return 2.0 ** -_PRECISION[dtype]


def bounds(ns: Any, dtype: str) -> dict[str, list[float]]:
    """The textbook first-order bounds on ``|error| / sum|x|`` at each n."""
    u = unit_roundoff(dtype)
    ns = np.asarray(ns, dtype=np.float64)
    return {
        "sequential bound (n-1)·u": ((ns - 1) * u).tolist(),
        "pairwise bound log2(n)·u": (np.ceil(np.log2(np.maximum(ns, 2))) * u).tolist(),
    }


def relative_error(value: Any, exact: Any, scale: float) -> float:
    """``|value - exact| / scale``; NaN where it is undefined (non-finite, zero scale)."""
    v = float(value)
    if not (math.isfinite(v) and isinstance(exact, Fraction) and scale > 0):
        return math.nan
    return float(abs(Fraction(v) - exact)) / scale


def _signature() -> str:
    """A hash of the emulators' source, so a changed emulator recomputes the curves."""
    from .. import orders

    h = hashlib.sha256(_VERSION.encode())
    for path in sorted(Path(orders.__file__).parent.glob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def curves(distribution: str, dtype: str, threads: int) -> dict[str, Any]:
    """Error against n for each order in `ORDERS` (cached), plus the bounds."""
    key = f"{distribution}-{dtype}-t{threads}-{_signature()}"
    if key in _memory:
        return _memory[key]
    path = cache_dir() / "summation_growth" / f"{key}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = _compute(distribution, dtype, threads)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data))
            tmp.replace(path)
        except OSError:  # a read-only checkout still works, just without the disk cache
            pass
    data = _restore_nans(data)
    _memory[key] = data
    return data


def _restore_nans(data: dict[str, Any]) -> dict[str, Any]:
    data["errors"] = {
        k: [math.nan if v is None else v for v in vs] for k, vs in data["errors"].items()
    }
    return data


def _compute(distribution: str, dtype: str, threads: int) -> dict[str, Any]:
    from .. import orders
    from .. import truth as truth_mod
    from ._summation_inputs import make_input

    target = numpy_dtype(dtype)
    x = make_input(distribution, NS[-1], dtype, SEED)
    scale = np.cumsum(np.abs(x.astype(np.float64)))
    errors: dict[str, list[float | None]] = {}
    skipped: dict[str, str] = {}
    exacts = [truth_mod.sum(x[:n]).exact for n in NS]
    for order in ORDERS:
        if order not in orders.names():
            skipped[order] = "no such emulator"
            continue
        ys: list[float | None] = []
        try:
            for n, exact in zip(NS, exacts, strict=True):
                value = np.asarray(orders.emulate(x[:n], order, threads=threads)).astype(target)
                err = relative_error(value, exact, float(scale[n - 1]))
                ys.append(None if math.isnan(err) else err)
        except FpexploreError as exc:
            skipped[order] = str(exc)
            continue
        errors[order] = ys
    return {
        "n": list(NS),
        "errors": errors,
        "skipped": skipped,
        "bounds": bounds(NS, dtype),
        "unit_roundoff": unit_roundoff(dtype),
        "seed": SEED,
        "threads": threads,
        "distribution": distribution,
        "dtype": dtype,
        "measure": "|computed - exact| / sum|x|",
    }


def point(x: np.ndarray, truth: Any, outcomes: Any) -> dict[str, Any]:
    """This run's error (same measure) for each framework, recorded and reference outcome."""
    scale = float(np.sum(np.abs(x.astype(np.float64))))
    errs = {
        o.implementation: relative_error(o.value, truth.exact, scale)
        for o in outcomes
        if o.ran and o.kind != "emulator"
    }
    return {"n": int(x.size), "errors": errs}


def _log_axes(ax: Any) -> None:
    """Log scales with plain-text decade labels and no minor ticks (mathtext tick labels and
    minor ticks make up most of the time to render the figure)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, numticks=12))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"1e{round(math.log10(v))}"))
        axis.set_minor_locator(NullLocator())


#: figures kept for reuse by `draw` (a redraw then only moves this run's markers), newest last
_FIGURES: dict[tuple[Any, ...], tuple[Any, dict[str, Any]]] = {}
_KEEP = 4
_SHAPES = "os^vDP*Xh"  # one marker line per possible distinct result of a run


def _ylim(growth: dict[str, Any], current: dict[str, Any]) -> tuple[float, float]:
    """y limits holding every curve, both bounds up to n = X_MAX and this run's markers."""
    values = [v for ys in growth["errors"].values() for v in ys]
    values += list(current["errors"].values())
    pos = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    u = growth["unit_roundoff"]
    low = min([*pos, u / 100])
    high = max([*pos, (X_MAX - 1) * u])
    return low / 3, high * 3


def _set_markers(markers: list[Any], current: dict[str, Any]) -> bool:
    """Put this run's results on the marker lines, one marker per distinct error (outcomes
    with the same result share a marker and a legend entry). True if a label changed."""
    groups: dict[float, list[str]] = {}
    for name, err in current["errors"].items():
        if math.isfinite(err) and err > 0:
            groups.setdefault(err, []).append(name)
    changed = False
    items = list(groups.items())
    for i, line in enumerate(markers):
        if i < len(items):
            err, names = items[i]
            line.set_data([current["n"]], [err])
            label = " = ".join(names) + " (this run)"
        else:
            line.set_data([], [])
            label = "_nolegend_"
        if line.get_label() != label:
            line.set_label(label)
            changed = True
    return changed


def draw(comparison: Any, ax: Any = None, fresh: bool = False) -> Any:
    """The log-log error-growth figure of a summation comparison (a matplotlib Figure).

    The curves are the cached emulator curves, the markers this run's results. Without ``ax``
    and unless ``fresh``, the figure drawn last for the same curves is reused with its markers
    moved (the explorer's redraw is then much cheaper); an earlier return value changes too.
    """
    from matplotlib.figure import Figure

    growth, current = comparison.data["growth"], comparison.data["current"]
    p = comparison.params
    key = (p["distribution"], p["dtype"], growth["threads"], _signature())
    own = ax is None and not fresh
    if own and key in _FIGURES:
        fig, markers = _FIGURES.pop(key)
        _FIGURES[key] = (fig, markers)
        ax = fig.axes[0]
        if _set_markers(markers, current):
            ax.legend(fontsize=7, loc="upper left", ncol=2)
        ylo, yhi = ax.get_ylim()
        errs = [e for e in current["errors"].values() if math.isfinite(e) and e > 0]
        if any(not ylo <= e <= yhi for e in errs):  # limits change only when needed
            ax.set_ylim(*_ylim(growth, current))
        return fig
    if ax is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        fig = Figure(figsize=(7.5, 4.6), dpi=90)
        FigureCanvasAgg(fig)  # its own canvas: the renderer and text caches survive redraws
        fig.subplots_adjust(left=0.11, right=0.98, bottom=0.11, top=0.93)
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    ns = np.asarray(growth["n"], dtype=np.float64)
    for order, ys in growth["errors"].items():
        ax.plot(
            ns, np.asarray(ys, dtype=np.float64), marker=".", lw=1.2, label=f"{order} (emulated)"
        )
    for label, ys in growth["bounds"].items():
        ax.plot(
            ns, ys, ls="--", color="0.45" if "sequential" in label else "0.7", lw=1, label=label
        )
    markers = [
        ax.plot([], [], shape, color="black" if i == 0 else f"C{i}", ms=7, mfc="none", mew=1.5)[0]
        for i, shape in enumerate(_SHAPES)
    ]
    if len(current["errors"]) > len(markers):
        raise ValueError(f"at most {len(markers)} results can be marked")
    _set_markers(markers, current)
    _log_axes(ax)
    ax.set_xlim(NS[0] / 1.5, X_MAX * 1.5)  # fixed: moving markers never rescale the axes
    ax.set_ylim(*_ylim(growth, current))
    ax.set_xlabel("n (number of terms)")
    ax.set_ylabel("|sum - exact| / Σ|x|")
    ax.set_title(
        f"Error growth: {p['distribution']}, {p['dtype']} (curves: seed {growth['seed']}, "
        f"{growth['threads']} thread(s); zero errors not drawn)",
        fontsize=9,
    )
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", ncol=2)
    if own:
        _FIGURES[key] = (fig, markers)
        while len(_FIGURES) > _KEEP:
            _FIGURES.pop(next(iter(_FIGURES)))
    return fig
