""" "Show me the order": draw the addition tree each framework uses to sum n <= 64 values.

The trees come from `fpexplore.orders.tree`, i.e. from running the very emulators that
reproduce the frameworks bit for bit on symbolic leaves ``x0 .. x{n-1}``. Leaves sit at the
bottom in index order; every addition sits one level above its higher child, so a tall comb is
a left-to-right loop and a flat bush is a pairwise tree.
"""

from __future__ import annotations

from typing import Any

from .. import svg
from ..errors import InvalidParameter
from ..figures import WIDTH_IN, figure_png
from ..params import Interval, Options, validate_all

MAX_N = 64
#: pictures a tree view keeps, per (n, order, threads)
TREES_KEPT = 48
#: the tree view's menu value for "every framework order side by side"
ALL = "all"
#: the framework orders drawn by default, with the title of each panel
FRAMEWORK_ORDERS = {
    "numpy": "np.sum",
    "torch": "torch.sum (also DJL NDArray.sum)",
    "tensorflow": "tf.reduce_sum",
    "java": "Java float loop",
}


#: the trees' size and threads, as `draw`, `tree_svg` and `tree_view` take them
N = Interval("n", 16, "values summed", low=1, high=MAX_N, integer=True)
THREADS = Options("threads", 1, "threads summing", choices=(1, 2))


def layout(
    root: Any,
) -> tuple[list[tuple[float, float, str]], list[tuple[float, float, float, float]]]:
    """A tree's ``(points, edges)``: points ``(x, level, kind)`` with kind ``"leaf:<i>"``,
    ``"const:<value>"`` or ``"sum"``; edges ``(x_child, y_child, x_parent, y_parent)``. Leaf
    ``x<i>`` sits at ``(i, 0)``, a sum above its children's midpoint, one level over the higher.
    """
    points: list[tuple[float, float, str]] = []
    edges: list[tuple[float, float, float, float]] = []
    # value stack entries: [x, y, lo, hi, kind]; constants get their x from their sibling
    values: list[list[Any]] = []
    pending_consts: list[list[Any]] = []
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if node.is_leaf:
            values.append([float(node.index), 0.0, node.index, node.index, f"leaf:{node.index}"])
        elif node.is_const:
            entry = [None, 0.0, None, None, f"const:{node.const!r}"]
            pending_consts.append(entry)
            values.append(entry)
        elif not done:
            stack += [(node, True), (node.right, False), (node.left, False)]
        else:
            right, left = values.pop(), values.pop()
            _place_consts(left, right)
            x = (left[0] + right[0]) / 2
            y = 1.0 + max(left[1], right[1])
            edges += [(left[0], left[1], x, y), (right[0], right[1], x, y)]
            values.append([x, y, min(left[2], right[2]), max(left[3], right[3]), "sum"])
            points.append((x, y, "sum"))
    if values and values[0][0] is None:  # a lone constant (an empty sum)
        values[0][0], values[0][2], values[0][3] = 0.0, 0.0, 0.0
    points += [(e[0], e[1], e[4]) for e in pending_consts]
    points += [(float(i), 0.0, f"leaf:{i}") for i in root.leaves()]
    return points, edges


def _place_consts(left: list[Any], right: list[Any]) -> None:
    if left[0] is None and right[0] is None:
        left[0], right[0] = -0.6, -0.3
    elif left[0] is None:
        left[0] = right[2] - 0.6
    elif right[0] is None:
        right[0] = left[3] + 0.6
    for e in (left, right):
        if e[2] is None:
            e[2] = e[3] = e[0]


def draw_tree(root: Any, ax: Any, title: str = "") -> None:
    """Draw one addition tree on a matplotlib axes."""
    points, edges = layout(root)
    for x0, y0, x1, y1 in edges:
        ax.plot([x0, x1], [y0, y1], color="0.55", lw=0.8, zorder=1)
    sums = [(x, y) for x, y, k in points if k == "sum"]
    leaves = [(x, y, int(k[5:])) for x, y, k in points if k.startswith("leaf:")]
    consts = [(x, y, k[6:]) for x, y, k in points if k.startswith("const:")]
    if sums:
        xs, ys = zip(*sums, strict=True)
        ax.scatter(xs, ys, s=14, c=ys, cmap="viridis", zorder=2)
    below = {"xytext": (0, -9), "textcoords": "offset points", "ha": "center", "va": "top"}
    if leaves:
        xs, ys, _ = zip(*leaves, strict=True)
        ax.scatter(xs, ys, s=10, color="tab:blue", marker="s", zorder=3)
        n = len(leaves)
        step = 1 if n <= 16 else 4 if n <= 32 else 8
        for x, _y, i in leaves:
            if i % step == 0 or i == n - 1:
                ax.annotate(f"x{i}", (x, 0), fontsize=6, **below)
    for x, y, text in consts:
        ax.scatter([x], [y], s=18, color="tab:red", marker="D", zorder=3)
        ax.annotate(text, (x, y), fontsize=6, color="tab:red", **below)
    depth = root.depth()
    import textwrap

    # a two-column panel is about 2.8 in wide: a long title wraps rather than runs off it
    head = textwrap.fill(title, 34)
    ax.set_title(f"{head}\n{root.additions()} additions, depth {depth}", fontsize=9)
    ax.set_ylabel("addition level", fontsize=8)
    ax.set_xticks([])
    ax.tick_params(labelsize=7)
    ax.margins(x=0.04, y=0.08)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)


def _heading(n: int, threads: int, simplify: bool) -> str:
    hidden = "; additions of +0.0 hidden" if simplify else ""
    return f"How {n} values are added ({threads} thread(s){hidden})"


def _panels(
    n: int, order: str | None, threads: int, dtype: str, simplify: bool, where: str
) -> tuple[list[tuple[Any, str]], int, int]:
    """The trees to draw with their titles (the four framework orders for ``None``), checked,
    and their grid: two columns when there is more than one."""
    from .. import orders

    n, threads = validate_all((N, THREADS), {"n": n, "threads": threads}, where).values()
    names = list(FRAMEWORK_ORDERS) if order is None else [order]
    known = tree_orders()
    for name in names:
        if name not in known:
            raise InvalidParameter("order", name, "None or one of " + ", ".join(known), where)
    cols = 2 if len(names) > 1 else 1
    trees = [
        (
            orders.tree(n, name, threads=threads, dtype=dtype, simplify=simplify),
            f"{FRAMEWORK_ORDERS.get(name, name)}: order {name!r}",
        )
        for name in names
    ]
    return trees, (len(names) + cols - 1) // cols, cols


def draw(
    n: int,
    order: str | None = None,
    threads: int = 1,
    dtype: str = "float32",
    simplify: bool = True,
) -> Any:
    """The addition tree(s) for summing ``x0 .. x{n-1}`` (``n <= 64``) as a matplotlib Figure.

    ``order``: a name of `tree_orders()`, or None for the four framework orders side by side.
    ``dtype`` sets the vector width (torch and TensorFlow add float64 in 4 lanes, float32 in
    8). ``simplify`` hides additions of a constant zero (an accumulator's start).
    """
    from matplotlib.figure import Figure

    trees, rows, cols = _panels(n, order, threads, dtype, simplify, "order_tree.draw")
    scale = min(1.0, WIDTH_IN / (5.2 * cols))  # the panels' shape, the notebook's width
    fig = Figure(figsize=(min(WIDTH_IN, 5.2 * cols), 3.4 * rows * scale), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, (root, title) in zip(axes, trees, strict=False):
        draw_tree(root, ax, title)
    for ax in axes[len(trees) :]:
        ax.set_visible(False)
    fig.suptitle(_heading(n, threads, simplify), fontsize=10)
    return fig


#: one panel of `tree_svg`, in CSS pixels: the panels one above the other, as wide as the
#: notebook's output area
PANEL_W, PANEL_H = 560, 250
#: the longest heading drawn on one line (14 px); a longer one breaks before its "("
HEADING_CHARS = 56


def _axis_svg(x0: float, up: float, down: float, top: float, py: svg.Scale) -> list[str]:
    """A panel's level axis: its label, its line left of the tree and its labelled levels."""
    left = x0 + 44
    out = [
        svg.text(x0 + 12, (up + down) / 2, "addition level", font_size=10, rotate=-90),
        svg.line(left - 8, up, left - 8, down, stroke="#000", stroke_width="0.8"),
    ]
    return out + [
        svg.text(left - 11, py(k) + 3.5, str(k), "end", font_size=10)
        for k in range(0, int(top) + 1, max(1, int(top) // 6 or 1))
    ]


def _panel_svg(root: Any, title: str, x0: float, y0: float) -> list[str]:
    """One addition tree as SVG elements in the panel whose top left corner is (x0, y0)."""
    points, edges = layout(root)
    xs = [x for x, _y, _k in points] or [0.0]
    top = max([y for _x, y, _k in points] or [0.0])
    left, right, up, down = x0 + 44, x0 + PANEL_W - 14, y0 + 46, y0 + PANEL_H - 30
    px = svg.linear(min(xs) - 0.6, max(xs) + 0.6, left, right)
    py = svg.linear(0, max(top, 1.0), down, up)
    mid = x0 + PANEL_W / 2
    depth = f"{root.additions()} additions, depth {root.depth()}"
    out = [svg.text(mid, y0 + 15, title, font_size=13), svg.text(mid, y0 + 32, depth, font_size=11)]
    out += _axis_svg(x0, up, down, top, py)
    out += [
        svg.line(px(a), py(b), px(c), py(d), stroke="#8c8c8c", stroke_width="0.8")
        for a, b, c, d in edges
    ]
    return out + _points_svg(points, px, py, top)


def _points_svg(
    points: list[tuple[float, float, str]], px: svg.Scale, py: svg.Scale, top: float
) -> list[str]:
    """A tree's additions (darker higher up), its leaves (every one up to 16, else every 4th
    or 8th named) and its constants (named where no other name is near)."""
    out: list[str] = []
    n = sum(k.startswith("leaf:") for _x, _y, k in points)
    step = 1 if n <= 16 else 4 if n <= 32 else 8
    shown = [(px(x), int(k[5:])) for x, _y, k in points if k.startswith("leaf:")]
    named = [cx for cx, i in shown if i % step == 0 or i == n - 1]  # where names are
    for x, y, k in points:
        cx, cy = px(x), py(y)
        if k == "sum":
            shade = int(200 * (1 - y / max(top, 1.0)))  # darker higher up the tree
            fill = f"rgb({shade},{80 + shade // 2},140)"
            out.append(svg.el("circle", cx=cx, cy=cy, r=3, fill=fill))
        elif k.startswith("leaf:"):
            i = int(k[5:])
            leaf = {"x": cx - 2.5, "y": cy - 2.5, "width": 5, "height": 5, "fill": "#1f77b4"}
            out.append(svg.tip(f"x{i}", tag="rect", **leaf))
            if i % step == 0 or i == n - 1:
                out.append(svg.text(cx, cy + 15, f"x{i}", font_size=10))
        else:  # a constant (an accumulator's start)
            red = {"fill": "#d62728"}
            d = f"M{cx:.1f},{cy - 4:.1f} l4,4 l-4,4 l-4,-4 z"
            out.append(svg.tip(k[6:], tag="path", d=d, **red))
            if all(abs(cx - at) > 6.5 * len(k[6:]) for at in named):
                out.append(svg.text(cx, cy + 15, k[6:], font_size=10, **red))
                named.append(cx)
    return out


def _heading_svg(heading: str) -> list[str]:
    """The figure's heading, centred, broken before its "(" when it is too long for a line."""
    head, _, tail = heading.partition(" (")
    lines = [head, f"({tail}"] if len(heading) > HEADING_CHARS and tail else [heading]
    return [svg.text(PANEL_W / 2, 18 + 18 * i, s, font_size=14) for i, s in enumerate(lines)]


def tree_svg(
    n: int,
    order: str | None = None,
    threads: int = 1,
    dtype: str = "float32",
    simplify: bool = True,
) -> str:
    """The trees of `draw` as SVG markup (drawn by the browser: a move costs milliseconds),
    one above the other."""
    trees, _rows, _cols = _panels(n, order, threads, dtype, simplify, "order_tree.tree_svg")
    suptitle = _heading(n, threads, simplify)
    out = _heading_svg(suptitle)
    top = 18 * len(out) + 12
    for i, (root, title) in enumerate(trees):
        out += _panel_svg(root, title, 0, top + i * PANEL_H)
    return svg.doc(PANEL_W, top + PANEL_H * len(trees), *out, title=suptitle)


def tree_orders() -> list[str]:
    """The orders whose tree depends on n alone (not ``sorted``, which depends on the values,
    nor the compensated sums, which also subtract)."""
    from .. import orders

    return [
        o
        for o in orders.names()
        if not orders.ORDERS[o].uses_values and o not in ("kahan", "neumaier")
    ]


#: a figure as PNG bytes (`fpexplore.figures.figure_png`), under the notebooks' name
to_png = figure_png


def tree_view(n: int = 16, threads: int = 1) -> Any:
    """An ipywidgets box: an n slider, an order menu and the trees (`tree_svg`), each kept and
    their neighbours drawn ahead (`explorer.Ahead`)."""
    import ipywidgets as w

    from .explorer import Ahead, Controls, neighbours

    def picture(p: dict[str, Any]) -> str:
        return tree_svg(p["n"], None if p["order"] == ALL else p["order"], p["threads"])

    ahead = Ahead(picture, keep=TREES_KEPT)
    orders = tree_orders()  # "all" a string: a None value shows as a blank menu
    order = Options("order", ALL, "the order drawn", (ALL, *orders), ("all frameworks", *orders))
    params = (N, order, THREADS)
    image = w.HTML()  # the trees as SVG, drawn by the browser

    def redraw(change: Any = None) -> None:
        p = controls.values
        image.value = ahead.get(p)
        near = neighbours(tuple(controls.specs.values()), controls.widgets, p)
        ahead.plan(near, first=change is None)

    given = {"n": n, "threads": threads}
    controls = Controls(params, validate_all(params, given, "order_tree.tree_view"), redraw)
    redraw()
    title = w.HTML("<b>Show me the order</b>: the addition tree of each framework")
    return w.VBox([title, controls.row, image])


def summation_explorer() -> Any:
    """The summation lesson's explorer above the "show me the order" tree view, both drawn as
    SVG (`growth_svg`, `tree_svg`)."""
    import ipywidgets as w

    from . import explore
    from .growth_svg import growth_svg

    return w.VBox([explore("summation_order", svg=growth_svg), tree_view()])
