"""Widgets for the GPU lessons that work on a CPU: the recorded cards, and the CPU part live.

- `determinism_view` (notebook 04): card, op, flag set -> how many distinct results the
  recorded runs gave, on this card and the other; the scatter-style ops run live on this CPU
  at a chosen thread count.
- `tf32_view` (notebook 07): card, op, size, precision mode -> error against the exact result
  on the recorded card; the matmul modes emulated live on this CPU (input rounding).
- `accelerator_view` (notebook 08): card, op, CPU threads -> this CPU live beside the recorded
  card and the recording machine's CPU, bit for bit and against the exact result.

Every number comes from the lessons (``device="recorded"``) and their CPU modules, cached.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from ..errors import FpexploreError
from ..params import Depends, Options, Param, validate_all
from ..templates import part, render


def _card_model(label: str) -> str:
    """'NVIDIA H100 80GB HBM3 (recorded …)' -> 'H100': a column header that fits."""
    name = label.split(" (")[0]
    model = re.search(r"\b[A-Z]+\d{2,}[A-Za-z]*\b", name)
    return model.group(0) if model else name


def _threads(n: int) -> str:
    return f"{n} thread{'' if n == 1 else 's'}"


def _g(x: Any, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}g}"


def _view(title: str, controls: Any, draw: Callable[[], str]) -> Any:
    """Title, controls (`explorer.Controls`), a status line and an HTML output redrawn by
    ``draw`` on every change."""
    import ipywidgets as w

    status = w.HTML()
    out = w.HTML()

    def update(_: Any = None) -> None:
        controls.refit()
        status.value = part("running")
        try:
            out.value = draw()
            status.value = ""
        except FpexploreError as exc:
            status.value = part("error_line", str(exc))

    controls.on_change = update
    update()
    box = w.VBox([w.HTML(part("title", title)), controls.row, status, out])
    box.update = update
    return box


def _controls(*params: Param) -> Any:
    """The `explorer.Controls` of a view's declared parameters, at their defaults."""
    from .explorer import Controls

    return Controls(params, validate_all(params, {}, "a GPU view"))


def _threads_menu(threads: tuple[int, ...]) -> Options:
    return Options("CPU threads", threads[0], "threads of the live run here", threads)


def _card_menu() -> tuple[Options, list[tuple[str, str]]]:
    from .. import cards

    choices = cards.choices()
    if not choices:
        from ..errors import RecordError
        from ..records import RECORD_FIX

        raise RecordError(f"no GPU record in data/gpu. Record one with: {RECORD_FIX}")
    labels, keys = zip(*choices, strict=True)
    return Options("card", keys[0], "the recorded card", keys, labels), choices


def _runs(lesson: str) -> Callable[[str], Any]:
    """Lesson comparisons per record, computed once each."""
    import fpexplore

    return functools.cache(lambda record: fpexplore.run(lesson, device="recorded", record=record))


def _other(choices: list[tuple[str, str]], key: str) -> tuple[str, str] | None:
    return next(((label, k) for label, k in choices if k != key), None)


# ----------------------------------------------------------------------------- 04
def determinism_view(threads: tuple[int, ...] = (1, 4, 16)) -> Any:
    """Notebook 04's widget: recorded run-to-run variation per card, op and flag set, and the
    scatter-style ops live on this CPU at a chosen thread count."""
    from ..lessons.gpu_determinism import cpu_live

    card_menu, choices = _card_menu()
    runs = _runs("gpu_determinism")
    first = runs(card_menu.default).data
    ops = {  # (op, case, output): its label, in the rows' order
        (r.op, r.case, r.output): r.op if r.op != "conv2d" else f"conv2d {r.case} · {r.output}"
        for r in first.rows
    }
    configs = list(first.configs)
    index_add = next(k for k in ops if k[0] == "index_add_")
    flags = Options("flag set", configs[0], "the flags set before the runs", tuple(configs))
    op_menu = Options("op", index_add, "the operation", tuple(ops), tuple(ops.values()))
    controls = _controls(card_menu, op_menu, flags, _threads_menu(threads))
    card, op, flag, n_threads = controls.widgets.values()
    for name in cpu_live.OPS:  # the live part up front: every op at the first two counts
        for t in threads[:2]:
            cpu_live.run_on_cpu(name, t)
    for t in threads:
        cpu_live.run_on_cpu(op.value[0], t)

    def draw() -> str:
        data = runs(card.value).data
        other = _other(choices, card.value)
        odata = runs(other[1]).data if other else None

        def by_config(d: Any) -> dict[str, Any]:
            """The rows of the picked op, by flag set (one each)."""
            return {r.config: r for r in d.rows if (r.op, r.case, r.output) == op.value}

        here, there = by_config(data), by_config(odata) if odata else {}

        head = ["flag set", "distinct", "max diff (ULPs)", "max |error| (ULPs)"]
        if other:
            head.append(f"distinct on {_card_model(other[0])}")
        rows = []
        for config in configs:
            r, o = here.get(config), there.get(config)
            if r is None or r.raised:
                cells = [config, "raises", "—", "—"]
            else:
                worst = max(r.ulp_vs_truth_max) if r.ulp_vs_truth_max else None
                cells = [config, f"{r.distinct} of {r.runs}", _g(r.max_ulp_diff), _g(worst)]
            if other:
                cells.append("raises" if o is None or o.raised else f"{o.distinct} of {o.runs}")
            rows.append(cells)
        picked = here.get(flag.value)
        same, live, worst = None, None, None
        if picked is not None and not picked.raised and odata is not None:
            o = there.get(flag.value)
            if o is not None and not o.raised and picked.distinct == o.distinct == 1:
                same = picked.digests[0] == o.digests[0]
        if op.value[0] in cpu_live.OPS:
            live = cpu_live.run_on_cpu(op.value[0], n_threads.value)
            worst = _g(max(live.ulp_vs_truth_max) if live.ulp_vs_truth_max else None)
        return render(
            "gpu_determinism.html",
            **{"flag": flag.value, "card": data.card, "banner": data.banner},
            **{"head": head, "rows": rows, "pick": configs.index(flag.value)},
            **{"picked": picked, "same": same, "live": live, "worst": worst, "threads": _threads},
        )

    return _view(
        "cuDNN and determinism flags: recorded cards, and this CPU live",
        controls,
        draw,
    )


# ----------------------------------------------------------------------------- 07
def tf32_view(threads: tuple[int, ...] = (1, 2, 4)) -> Any:
    """Notebook 07's widget: error against the exact result per card, op, size and precision
    mode, with the matmul modes emulated live on this CPU."""
    card_menu, choices = _card_menu()
    runs = _runs("tf32")
    data0 = runs(card_menu.default).data
    modes = list(data0.modes)

    def sizes(which: str) -> Options:
        """The sizes recorded for ``which``, 512 by default or else the middle one."""
        opts = tuple(sorted({r.size for r in data0.rows if r.op == which}))
        return Options("size", 512 if 512 in opts else opts[len(opts) // 2], choices=opts)

    ops = ("matmul", "conv2d")
    controls = _controls(
        card_menu,
        Options("op", "matmul", "the operation", ops),
        Depends(
            "size", 512, "matrix size, or conv2d channels", "op", tuple((o, sizes(o)) for o in ops)
        ),
        Options("precision mode", "TF32", "the recorded precision mode", tuple(modes)),
        _threads_menu(threads),
    )
    card, op, size, mode, n_threads = controls.widgets.values()

    def rows_for(d: Any) -> dict[str, Any]:
        return {
            r.mode: r for r in d.rows if r.op == op.value and r.size == size.value and not r.raised
        }

    def draw() -> str:
        data = runs(card.value).data
        other = _other(choices, card.value)
        here = rows_for(data)
        there = rows_for(runs(other[1]).data) if other else {}
        head = ["mode", "relative error", "median |error| (float32 ULPs)", "ms"]
        if other:
            head += [f"rel. error on {other[0].split(' (')[0]}", "ms there"]
        rows = []
        for m in modes:
            r, o = here.get(m), there.get(m)
            cells = [m, *(_g(r and getattr(r, k)) for k in ("rel_error", "median_abs_ulp32", "ms"))]
            if other:
                cells += [_g(o and o.rel_error), _g(o and o.ms)]
            rows.append(cells)
        what = (
            f"{size.value}x{size.value} matmul"
            if op.value == "matmul"
            else f"conv2d, {size.value} channels"
        )
        live = _tf32_live(data, size.value, mode.value, n_threads.value)
        return render(
            "gpu_tf32.html",
            **{"banner": data.banner, "what": what, "mode": mode.value},
            **{"head": head, "rows": rows, "pick": modes.index(mode.value)},
            **live,
            largest=live["live_size"] != size.value or op.value != "matmul",
        )

    return _view(
        "TF32 and autocast: recorded cards, and the modes emulated on this CPU",
        controls,
        draw,
    )


def _tf32_live(data: Any, size: int, mode: str, threads: int) -> dict[str, Any]:
    """The TF32 view's live part: the matmul on this CPU at the largest live size up to
    ``size``, and ``mode`` emulated there beside its recorded error (``data``'s)."""
    from ..lessons.tf32 import cpu_live

    live_size = max(s for s in cpu_live.SIZES if s <= max(size, cpu_live.SIZES[0]))
    emulated = next((e for e, rm in cpu_live.RECORDED_MODE.items() if rm == mode), None)
    cpu = cpu_live.matmul_on_cpu(live_size, cpu_live.CPU_MODE, threads)
    emulated_error = recorded_error = None
    if emulated:
        emulated_error = _g(cpu_live.matmul_on_cpu(live_size, emulated).rel_error)
        rec = next(
            (r for r in data.rows if r.op == "matmul" and r.size == live_size and r.mode == mode),
            None,
        )
        recorded_error = rec and _g(rec.rel_error)
    return {
        "live_size": live_size,
        "threads": _threads(threads),
        "cpu_error": _g(cpu.rel_error),
        "emulated": emulated,
        "emulated_error": emulated_error,
        "recorded_error": recorded_error,
    }


# ----------------------------------------------------------------------------- 08
_ACC_OP = Options(
    "op",
    "sum_uniform",
    "the result compared",
    ("sum_uniform", "sum_tenthousand", "chain_drift", "conv_error"),
    (
        "sum of 10^6 uniform floats",
        "sum of 10000 x float32(0.0001)",
        "100 chained matmuls: drift",
        "conv2d, 64 channels: error",
    ),
)


def accelerator_view(threads: tuple[int, ...] | None = None) -> Any:
    """Notebook 08's widget: this CPU live at a chosen thread count beside the recorded card
    and the recording machine's CPU."""
    from ..lessons.cpu_vs_accelerator import cpu_live
    from ..records import find, load

    threads = threads or cpu_live.THREADS
    card_menu, _ = _card_menu()
    controls = _controls(card_menu, _ACC_OP, _threads_menu(threads))
    card, op, n_threads = controls.widgets.values()
    record = functools.cache(lambda key: load(find(key)))
    recorded = functools.cache(cpu_live.recorded)
    for key in {k for _, k in card.options}:  # every thread count once, up front
        for t in threads:
            cpu_live.cpu_side(recorded(key).settings, t)

    def draw() -> str:
        rec = record(card.value)
        run = recorded(card.value)
        live = cpu_live.cpu_side(run.settings, n_threads.value)
        key = op.value
        named = [
            (f"this CPU, {_threads(live.threads)} (live)", live),
            (f"recording machine's CPU, {run.cpu_threads} threads (recorded)", run.cpu),
            *((f"{rec.card}, {m} (recorded)", s) for m, s in run.sides.items() if m != "cpu"),
        ]

        # the bits compared: the sum itself, the chain's bits, the conv's digest
        bits = {"chain_drift": "chain_bits", "conv_error": "conv_digest"}.get(key, key)

        def same(s: Any) -> str:
            return "yes" if getattr(s, bits) == getattr(live, bits) else "no"

        if key.startswith("sum"):
            exact = getattr(run.exact, key)
            head = ["where", "float32 sum", "error (float32 ULPs)", "same bits as this CPU"]
            from .. import formats

            rows = [
                [
                    name,
                    repr(getattr(s, key)),
                    _g((getattr(s, key) - exact) / float(formats.ulp(exact, "float32"))),
                    same(s),
                ]
                for name, s in named
            ]
            note = f"exact sum: {exact!r}"
        else:
            head = ["where", "relative error vs exact", "same bits as this CPU"]
            rows = [[name, _g(getattr(s, key)), same(s)] for name, s in named]
            note = "relative error ||got − exact|| / ||exact||"
        return render("gpu_accelerator.html", banner=rec.banner(), head=head, rows=rows, note=note)

    return _view(
        "CPU vs accelerator: this CPU live beside a recorded card",
        controls,
        draw,
    )
