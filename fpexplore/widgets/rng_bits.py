"""The RNG lesson's two-stream bits widget: the first k values of two streams, bit by bit.

One lesson run per (seed, TensorFlow needed, Java needed) is kept: changing k or the streams
only re-reads it (milliseconds); a new seed reruns the lesson without the weight comparison.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..memo import Memo
from ..templates import part, render

#: the most values the view shows per stream (the k slider's maximum)
MAX_K = 16
_KEEP = 8  # lesson runs kept, newest last
_TF = ("TensorFlow", "TensorFlow stateless")
_JAVA = ("java.util.Random", "java.util.Random emulator", "DJL randomUniform")


class StreamCache:
    """Lesson runs by (seed, tensorflow, java), at most `_KEEP` of them."""

    def __init__(self) -> None:
        self._runs = Memo(keep=_KEEP)

    def get(self, seed: int, tensorflow: bool, java: bool) -> Any:
        from .. import lessons

        params = {"k": MAX_K, "n": 64, "tensorflow": tensorflow, "java": java, "weights": False}
        key = (seed, tensorflow, java)
        return self._runs.get(key, lambda: lessons.run("rng_seeds", seed=seed, **params))

    def __contains__(self, key: tuple[int, bool, bool]) -> bool:
        """Whether the run for ``(seed, tensorflow, java)`` is kept."""
        return key in self._runs


def view_html(comparison: Any, a: str, b: str, k: int) -> str:
    """Both streams' first ``k`` values with their bits, and whether the streams are related."""
    from ..lessons.rng_seeds import GENERATORS, relation
    from ..lessons.rng_seeds.views import stream_table
    from ..rng import TorchCPURandom

    picked = (a, b)
    rows = [r for r in stream_table(comparison) if r.stream in picked and r.i < k]
    rows.sort(key=lambda r: (r.i, picked.index(r.stream)))
    seed = comparison.params["seed"]
    share32 = TorchCPURandom(seed).rand(2 * max(32, MAX_K))  # torch's words, as the lesson does
    rel = relation(comparison.outcomes, a, b, share32, bool(comparison.data.djl_uniform_equal))
    related = {True: "yes", False: "no", None: "not measured"}[rel.related]
    missing = [o for o in comparison.outcomes if not o.ran and o.implementation in picked]
    names = (GENERATORS[a], GENERATORS[b])
    return render(
        "rng_bits.html", rows=rows, rel=rel, related=related, names=names, missing=missing
    )


def bits_view(
    seed: int = 42, k: int = 4, a: str = "torch CPU", b: str = "numpy RandomState"
) -> Any:
    """Widget: seed, streams a/b, k; the first k values of both streams in bits, and whether
    they are related. The settings one step away are computed ahead, as the explorer does."""
    import ipywidgets as w

    from .. import lessons
    from ..params import validate_all
    from .explorer import Ahead, Controls, setting_key

    lesson = lessons.get("rng_seeds")  # the lesson's declarations, k up to MAX_K
    params = (
        lesson.param("seed"),
        replace(lesson.param("k"), high=MAX_K),
        replace(lesson.param("a"), name="stream a"),
        replace(lesson.param("b"), name="stream b"),
    )
    cache = StreamCache()
    ahead = Ahead(lambda params: _html(cache, **params))  # the view's HTML by setting
    status = w.HTML()
    out = w.HTML()

    def show(change: Any = None) -> None:
        v = controls.values
        params = {"seed": v["seed"], "k": v["k"], "a": v["stream a"], "b": v["stream b"]}
        if setting_key(params) not in ahead.seen:
            status.value = part("running")
        try:
            out.value = ahead.get(params)
            status.value = ""
        except Exception as exc:  # shown in the widget, which keeps working
            status.value = part("error_line", f"{type(exc).__name__}: {exc}")
            return
        streams, seed_max = lesson.param("a").choices, int(lesson.param("seed").high)
        ahead.plan(_next_settings(params, streams, seed_max), first=change is None)

    given = {"seed": seed, "k": k, "stream a": a, "stream b": b}
    controls = Controls(params, validate_all(params, given, "bits_view"), show)
    show()
    seed_box, k_slider, a_menu, b_menu = controls.widgets.values()
    box = w.VBox([w.HBox([seed_box, k_slider]), w.HBox([a_menu, b_menu]), status, out])
    box.cache = cache  # the kept runs, for notebooks and tests
    return box


def _html(cache: StreamCache, seed: int, k: int, a: str, b: str) -> str:
    """The view at one setting (the lesson run for its seed and streams kept in ``cache``)."""
    picked = {a, b}
    c = cache.get(seed, bool(picked & set(_TF)), bool(picked & set(_JAVA)))
    return view_html(c, a, b, k)


def _next_settings(
    params: dict[str, Any], streams: tuple[str, ...], seed_max: int
) -> list[dict[str, Any]]:
    """The settings one control step away: each control one step up, then down. Streams
    needing TensorFlow or Java are left to the student (their first run starts a framework)."""
    ups, downs = [], []
    for name, low, high in (("seed", 0, seed_max), ("k", 1, MAX_K)):
        v = params[name]
        ups += [{**params, name: v + 1}] if v + 1 <= high else []
        downs += [{**params, name: v - 1}] if v - 1 >= low else []
    for name in ("a", "b"):
        i = streams.index(params[name]) if params[name] in streams else -1
        for j, side in ((i + 1, ups), (i - 1, downs)):
            if i >= 0 and 0 <= j < len(streams) and streams[j] not in _TF + _JAVA:
                side.append({**params, name: streams[j]})
    return ups + downs
