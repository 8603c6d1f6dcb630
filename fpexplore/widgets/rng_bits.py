"""The RNG lesson's two-stream bits widget: the first k values of two streams, bit by bit."""

from __future__ import annotations

from typing import Any


def bits_view() -> Any:
    """Widget: seed, streams a/b, k; the first k values of both streams in bits, and whether
    the two streams are related (the generic `fpexplore.widgets.explore` shows the table)."""
    import ipywidgets as w
    from IPython.display import display

    from ..lessons import get
    from ..lessons.rng_seeds.views import stream_table

    lesson = get("rng_seeds")
    streams = lesson.param("a").choices

    seed = w.BoundedIntText(value=42, min=0, max=2**32 - 1, description="seed")
    k = w.IntSlider(value=4, min=1, max=16, description="k")
    a = w.Dropdown(options=streams, value="torch CPU", description="stream a")
    b = w.Dropdown(options=streams, value="numpy RandomState", description="stream b")
    out = w.Output()

    def show(*_: Any) -> None:
        out.clear_output(wait=True)
        picked = {a.value, b.value}
        with out:
            c = lesson.run(
                seed=seed.value,
                k=k.value,
                n=max(64, 2 * k.value),
                a=a.value,
                b=b.value,
                tensorflow="TensorFlow" in picked,
                java=bool({"java.util.Random", "DJL randomUniform"} & picked),
                weights=False,
            )
            for r in stream_table(c):
                if r["stream"] in picked:
                    print(f"{r['stream']:>18} [{r['i']}] {r['bits']}  {r['value']}")
            rel = c.data["relation"]
            print(f"\nrelated: {rel['related']}  ({rel['evidence']})")
            for o in c.outcomes:
                if not o.ran and o.implementation in picked:
                    print(f"{o.implementation}: {o.unavailable}")

    for control in (seed, k, a, b):
        control.observe(show, names="value")
    show()
    box = w.VBox([w.HBox([seed, k]), w.HBox([a, b]), out])
    display(box)
    return box
