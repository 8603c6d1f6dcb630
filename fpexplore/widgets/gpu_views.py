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


def _view(title: str, controls: list[Any], draw: Callable[[], str]) -> Any:
    """Title, controls, a status line and an HTML output redrawn by ``draw`` on every change."""
    import ipywidgets as w

    from .explorer import hear

    status = w.HTML()
    out = w.HTML()

    def update(_: Any = None) -> None:
        status.value = part("running")
        try:
            out.value = draw()
            status.value = ""
        except FpexploreError as exc:
            status.value = part("error_line", str(exc))

    for c in controls:
        c.observe(update, names="value")
    hear(*controls)  # a move delays the computing ahead of other views
    update()
    row = w.HBox(controls, layout=w.Layout(flex_flow="row wrap"))
    box = w.VBox([w.HTML(part("title", title)), row, status, out])
    box.update = update
    return box


def _dropdown(description: str, options: list[Any], value: Any = None) -> Any:
    import ipywidgets as w

    return w.Dropdown(
        description=description,
        options=options,
        value=value if value is not None else options[0][1],
        style={"description_width": "initial"},
    )


def _card_control() -> tuple[Any, list[tuple[str, str]]]:
    from ..lessons._gpu import cards

    choices = cards.choices()
    if not choices:
        from ..errors import RecordError
        from ..records import RECORD_FIX

        raise RecordError(f"no GPU record in data/gpu. Record one with: {RECORD_FIX}")
    return _dropdown("card", choices), choices


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

    card, choices = _card_control()
    runs = _runs("gpu_determinism")
    first = runs(card.value).data
    ops: list[tuple[str, tuple[str, str, str]]] = []
    for r in first.rows:
        key = (r["op"], r["case"], r["output"])
        label = r["op"] if r["op"] != "conv2d" else f"conv2d {r['case']} · {r['output']}"
        if key not in [k for _, k in ops]:
            ops.append((label, key))
    configs = list(first.configs)
    op = _dropdown("op", ops, next(k for _, k in ops if k[0] == "index_add_"))
    flag = _dropdown("flag set", [(c, c) for c in configs])
    n_threads = _dropdown("CPU threads", [(str(t), t) for t in threads])
    for name in cpu_live.OPS:  # the live part up front: every op at the first two counts
        for t in threads[:2]:
            cpu_live.run_on_cpu(name, t)
    for t in threads:
        cpu_live.run_on_cpu(op.value[0], t)

    def draw() -> str:
        data = runs(card.value).data
        other = _other(choices, card.value)
        odata = runs(other[1]).data if other else None

        def by_config(d: Any) -> dict[str, dict[str, Any]]:
            """The rows of the picked op, by flag set (one each)."""
            return {r["config"]: r for r in d.rows if (r["op"], r["case"], r["output"]) == op.value}

        here, there = by_config(data), by_config(odata) if odata else {}

        head = ["flag set", "distinct", "max diff (ULPs)", "max |error| (ULPs)"]
        if other:
            head.append(f"distinct on {_card_model(other[0])}")
        rows = []
        for config in configs:
            r, o = here.get(config), there.get(config)
            if r is None or r.get("raised"):
                cells = [config, "raises", "—", "—"]
            else:
                worst = max(r["ulp_vs_truth_max"]) if r.get("ulp_vs_truth_max") else None
                distinct = f"{r['distinct']} of {r['runs']}"
                cells = [config, distinct, _g(r["max_ulp_diff"]), _g(worst)]
            if other:
                cells.append(
                    "raises" if o is None or o.get("raised") else f"{o['distinct']} of {o['runs']}"
                )
            rows.append(cells)
        picked = here.get(flag.value)
        same, live, worst = None, None, None
        if picked is not None and not picked.get("raised") and odata is not None:
            o = there.get(flag.value)
            if o is not None and not o.get("raised") and picked["distinct"] == o["distinct"] == 1:
                same = picked["digests"][0] == o["digests"][0]
        if op.value[0] in cpu_live.OPS:
            live = cpu_live.run_on_cpu(op.value[0], n_threads.value)
            worst = _g(max(live["ulp_vs_truth_max"]) if live.get("ulp_vs_truth_max") else None)
        return render(
            "gpu_determinism.html",
            **{"flag": flag.value, "card": data.card, "banner": data.banner},
            **{"head": head, "rows": rows, "pick": configs.index(flag.value)},
            **{"picked": picked, "same": same, "live": live, "worst": worst, "threads": _threads},
        )

    return _view(
        "cuDNN and determinism flags: recorded cards, and this CPU live",
        [card, op, flag, n_threads],
        draw,
    )


# ----------------------------------------------------------------------------- 07
def tf32_view(threads: tuple[int, ...] = (1, 2, 4)) -> Any:
    """Notebook 07's widget: error against the exact result per card, op, size and precision
    mode, with the matmul modes emulated live on this CPU."""
    from ..lessons.tf32 import cpu_live

    card, choices = _card_control()
    runs = _runs("tf32")
    data0 = runs(card.value).data
    modes = list(data0.modes)
    op = _dropdown("op", [("matmul", "matmul"), ("conv2d", "conv2d")])

    def sizes(which: str) -> list[int]:
        return sorted({r["size"] for r in runs(card.value).data.rows if r["op"] == which})

    size = _dropdown("size", [(str(s), s) for s in sizes("matmul")], 512)
    mode = _dropdown("precision mode", [(m, m) for m in modes], "TF32")
    n_threads = _dropdown("CPU threads", [(str(t), t) for t in threads])

    def on_op(_: Any) -> None:
        opts = sizes(op.value)
        with size.hold_trait_notifications():
            size.options = [(str(s), s) for s in opts]
            size.value = 512 if 512 in opts else opts[len(opts) // 2]

    op.observe(on_op, names="value")

    def rows_for(d: Any) -> dict[str, dict[str, Any]]:
        return {
            r["mode"]: r
            for r in d.rows
            if r["op"] == op.value and r["size"] == size.value and not r.get("raised")
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
            cells = [m, *(_g(r and r[k]) for k in ("rel_error", "median_abs_ulp32", "ms"))]
            if other:
                cells += [_g(o and o["rel_error"]), _g(o and o["ms"])]
            rows.append(cells)
        what = (
            f"{size.value}x{size.value} matmul"
            if op.value == "matmul"
            else f"conv2d, {size.value} channels"
        )
        live_size = max(s for s in cpu_live.SIZES if s <= max(size.value, cpu_live.SIZES[0]))
        emulated = next((e for e, rm in cpu_live.RECORDED_MODE.items() if rm == mode.value), None)
        cpu = cpu_live.matmul_on_cpu(live_size, cpu_live.CPU_MODE, n_threads.value)
        emulated_error = recorded_error = None
        if emulated:
            emulated_error = _g(cpu_live.matmul_on_cpu(live_size, emulated)["rel_error"])
            rec = next(
                (
                    r
                    for r in data.rows
                    if r["op"] == "matmul" and r["size"] == live_size and r["mode"] == mode.value
                ),
                None,
            )
            recorded_error = rec and _g(rec["rel_error"])
        return render(
            "gpu_tf32.html",
            **{"banner": data.banner, "what": what, "mode": mode.value},
            **{"head": head, "rows": rows, "pick": modes.index(mode.value)},
            **{"live_size": live_size, "threads": _threads(n_threads.value)},
            largest=live_size != size.value or op.value != "matmul",
            cpu_error=_g(cpu["rel_error"]),
            emulated=emulated,
            emulated_error=emulated_error,
            recorded_error=recorded_error,
        )

    return _view(
        "TF32 and autocast: recorded cards, and the modes emulated on this CPU",
        [card, op, size, mode, n_threads],
        draw,
    )


# ----------------------------------------------------------------------------- 08
_ACC_OPS = (
    ("sum of 10^6 uniform floats", "sum_uniform"),
    ("sum of 10000 x float32(0.0001)", "sum_tenthousand"),
    ("100 chained matmuls: drift", "chain_drift"),
    ("conv2d, 64 channels: error", "conv_error"),
)


def accelerator_view(threads: tuple[int, ...] | None = None) -> Any:
    """Notebook 08's widget: this CPU live at a chosen thread count beside the recorded card
    and the recording machine's CPU."""
    from ..lessons.cpu_vs_accelerator import cpu_live
    from ..records import find, load

    threads = threads or cpu_live.THREADS
    card, _ = _card_control()
    op = _dropdown("op", list(_ACC_OPS))
    n_threads = _dropdown("CPU threads", [(str(t), t) for t in threads])
    record = functools.cache(lambda key: load(find(key)))
    recorded = functools.cache(lambda key: cpu_live.recorded_sides(record(key)))
    for key in {k for _, k in card.options}:  # every thread count once, up front
        settings = record(key).experiments["cpu_vs_accelerator"]["settings"]
        for t in threads:
            cpu_live.cpu_side(settings, t)

    def draw() -> str:
        rec = record(card.value)
        e = rec.experiments["cpu_vs_accelerator"]
        sides = recorded(card.value)
        _, tr = cpu_live.prepare(e["settings"])
        live = cpu_live.cpu_side(e["settings"], n_threads.value)
        key = op.value
        rec_threads = rec.provenance.get("cpu_threads")
        named = [
            (f"this CPU, {_threads(live['threads'])} (live)", live),
            (f"recording machine's CPU, {rec_threads} threads (recorded)", sides["cpu"]),
            *((f"{rec.card}, {m} (recorded)", s) for m, s in sides.items() if m != "cpu"),
        ]

        def bits_equal(s: dict[str, Any]) -> bool:
            if key.startswith("sum"):
                return s[key] == live[key]
            if key == "chain_drift":
                return s["chain_bits"] == live["chain_bits"]
            return s["conv_digest"] == live["conv_digest"]

        if key.startswith("sum"):
            exact = tr[key]
            head = ["where", "float32 sum", "error (float32 ULPs)", "same bits as this CPU"]
            from .. import formats

            rows = [
                [
                    name,
                    repr(s[key]),
                    _g((s[key] - exact) / float(formats.ulp(exact, "float32"))),
                    "yes" if bits_equal(s) else "no",
                ]
                for name, s in named
            ]
            note = f"exact sum: {exact!r}"
        else:
            head = ["where", "relative error vs exact", "same bits as this CPU"]
            rows = [[name, _g(s[key]), "yes" if bits_equal(s) else "no"] for name, s in named]
            note = "relative error ||got − exact|| / ||exact||"
        return render("gpu_accelerator.html", banner=rec.banner(), head=head, rows=rows, note=note)

    return _view(
        "CPU vs accelerator: this CPU live beside a recorded card",
        [card, op, n_threads],
        draw,
    )
