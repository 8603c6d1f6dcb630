"""Exact sums, means, dot products, matrix products and 2-D convolutions of float arrays."""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from ..errors import InvalidInput, InvalidParameter
from . import limits, ozaki
from .exact import dot_f32, row_sums, sum_f32, sum_f64
from .expansion import fractions
from .inputs import as_float_array, wider
from .levels import LeveledProduct
from .value import Truth, _to_mpf, object_map


def _exact_mp(v: Fraction | float) -> Any:
    """An mpmath number equal to ``v`` (a dyadic Fraction or an IEEE special) exactly."""
    return _to_mpf(v, max(v.numerator.bit_length(), 1) + 1 if isinstance(v, Fraction) else 53)


def make_truth(label: str, values: Any, fmt: str | None = None) -> Truth:
    """A Truth from Fraction/IEEE-special value(s); exact when every value is finite."""
    if isinstance(values, np.ndarray):
        if all(isinstance(v, Fraction) for v in values.flat):
            return Truth(label, exact=values, input_format=fmt)
        return Truth(label, mp=object_map(_exact_mp, values), digits=math.inf, input_format=fmt)
    if isinstance(values, Fraction):
        return Truth(label, exact=values, input_format=fmt)
    return Truth(label, mp=mpmath.mpf(values), digits=math.inf, input_format=fmt)


def _desc(a: np.ndarray, fmt: str) -> str:
    return f"{fmt}[{'x'.join(map(str, a.shape))}]"


def _axis(axis: Any, ndim: int, where: str, none_ok: bool = True) -> int | None:
    """``axis`` as an index in [0, ndim) (None stays None where ``none_ok``)."""
    if axis is None and none_ok:
        return None
    try:
        ax = None if isinstance(axis, bool | np.bool_) else operator.index(axis)
    except TypeError:
        ax = None
    if ax is None or ndim == 0 or not -ndim <= ax < ndim:
        accepted = f"an integer in [-{ndim}, {ndim - 1}]"
        if none_ok:
            accepted = "None (a 0-d input has no axis)" if ndim == 0 else f"None or {accepted}"
        raise InvalidParameter("axis", axis, accepted, where)
    return ax % ndim


def _sums(arr: np.ndarray, ax: int | None) -> Any:
    if ax is None:
        return sum_f32(arr) if arr.dtype == np.float32 else sum_f64(arr)
    moved = np.moveaxis(arr, ax, -1)
    rest = moved.shape[:-1]
    rows = moved.reshape(math.prod(rest), moved.shape[-1])
    if rows.shape[1] >= 1 << 12:  # long rows: the range-independent whole-array sums
        one = sum_f32 if rows.dtype == np.float32 else sum_f64
        out = np.empty(rows.shape[0], dtype=object)
        out[:] = [one(r) for r in rows]
        return out.reshape(rest)
    return row_sums(rows).reshape(rest)


def sum(x: Any, axis: int | None = None) -> Truth:
    """The exact sum of ``x`` (all elements, or along ``axis``). Empty sums are 0."""
    arr, fmt = as_float_array(x, "x", "truth.sum")
    ax = _axis(axis, arr.ndim, "truth.sum")
    return make_truth(f"sum({_desc(arr, fmt)}, axis={axis})", _sums(arr, ax), fmt)


def mean(x: Any, axis: int | None = None) -> Truth:
    """The exact mean of ``x`` (all elements, or along ``axis``). Empty input raises."""
    arr, fmt = as_float_array(x, "x", "truth.mean")
    ax = _axis(axis, arr.ndim, "truth.mean")
    n = arr.size if ax is None else arr.shape[ax]
    if n == 0:
        raise InvalidInput(
            f"truth.mean: 'x' has shape {arr.shape}: the mean of zero elements is undefined; "
            "pass a non-empty array."
        )
    s = _sums(arr, ax)

    def div(v: Any) -> Any:
        return v / n if isinstance(v, Fraction) else v

    out = object_map(div, s) if isinstance(s, np.ndarray) else div(s)
    return make_truth(f"mean({_desc(arr, fmt)}, axis={axis})", out, fmt)


# -- products ---------------------------------------------------------------------------------

_SPLIT = 134217729.0  # 2**27 + 1 (Veltkamp)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p, e with p + e == a*b exactly (Dekker, no FMA); needs no over/underflow in a, b."""
    p = a * b
    c = _SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = _SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def product_terms(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Terms whose exact sum along the last axis is the exact sum of ``a * b`` along it.

    float32 (and narrower) products are exact in float64. float64 products are split as
    ``(p + e) * 2**(ea + eb)`` from the frexp mantissas, so nothing over- or underflows.
    Returns ``(values, exponent offsets or None)``.
    """
    if a.dtype == np.float32 and b.dtype == np.float32:
        with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as IEEE says
            return a.astype(np.float64) * b.astype(np.float64), None
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    a, b = np.broadcast_arrays(a, b)
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    with np.errstate(invalid="ignore", over="ignore"):
        p, e = _two_prod(ma, mb)
    off = ea.astype(np.int64) + eb
    bad = ~(np.isfinite(a) & np.isfinite(b))
    if bad.any():
        with np.errstate(invalid="ignore", over="ignore"):
            p = np.where(bad, a * b, p)
        e = np.where(bad, 0.0, e)
        off = np.where(bad, 0, off)
    return np.concatenate([p, e], axis=-1), np.concatenate([off, off], axis=-1)


def _row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact sums along the last axis of a * b (a, b of the same 2-D shape), in blocks."""
    rows, k = a.shape
    out = np.empty(rows, dtype=object)
    step = max(1, (1 << 22) // max(k, 1))
    for r0 in range(0, rows, step):
        v, off = product_terms(a[r0 : r0 + step], b[r0 : r0 + step])
        out[r0 : r0 + step] = row_sums(v, off)
    return out


def _as_pair(x: Any, y: Any, where: str, names: tuple[str, str]) -> tuple[np.ndarray, ...]:
    a, fa = as_float_array(x, names[0], where)
    b, fb = as_float_array(y, names[1], where)
    return a, b, wider(fa, fb)


def dot(x: Any, y: Any) -> Truth:
    """The exact dot product of two 1-D arrays of equal length.

    float32 (and narrower) inputs: the float64 products are exact and are summed exactly by
    `fpexplore.truth.exact.dot_f32` (sigma levels, or exponent bins for wide chunks); float64
    inputs: products split error-free, then summed.
    """
    a, b, fmt = _as_pair(x, y, "truth.dot", ("x", "y"))
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise InvalidInput(
            f"truth.dot: 'x' and 'y' must be 1-D of equal length; got shapes {a.shape} and "
            f"{b.shape}."
        )
    label = f"dot({_desc(a, fmt)}, {_desc(b, fmt)})"
    limits.check("truth.dot", nbytes=a.size * 8 * 8)
    if a.dtype == np.float32 and b.dtype == np.float32:
        # NaN/inf follow IEEE (inf * 0 is NaN); the cost barely depends on the exponent range
        return make_truth(label, dot_f32(a, b), fmt)
    return make_truth(label, _row_dots(a[None, :], b[None, :])[0], fmt)


# products whose whole exact expansion takes more BLAS calls than this are computed level by
# level (`fpexplore.truth.levels`): a rounding usually needs 10 to 15 of them
LEVELED_ABOVE = 15


def _matmul_f32(
    x: np.ndarray, y: np.ndarray, where: str, leveled: bool = False
) -> list[np.ndarray] | LeveledProduct | None:
    """Ozaki expansion of x @ y for float32 inputs (None when an input is not all finite).

    ``leveled``: a `LeveledProduct` instead, when the whole expansion would take more than
    ``LEVELED_ABOVE`` BLAS products."""
    m, k = x.shape
    n = y.shape[1]
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        return None
    limits.check(where, nbytes=8 * (3 * (m * k + k * n) + 2 * m * n), what="inputs as float64")
    how = ozaki.plan_for(x, y)
    na, nb, calls = (how.na, how.nb, how.calls) if k > 2 else (0, 0, 0)
    limits.check(
        where,
        # digits of both sides, Karatsuba sums (as many again), product coefficients (2 sets)
        nbytes=8 * (2 * (na + 1) * m * k + 2 * (nb + 1) * k * n + 2 * (na + nb + 2) * m * n),
        flops=float(m) * n * k * calls,
        what=f"{na} x {nb} digit levels, {calls} products" if k > 2 else f"{k} outer products",
    )
    if leveled and calls > LEVELED_ABOVE:
        return LeveledProduct(x, y, how, levels=2)
    return ozaki.product(x, y, how)


def _matmul_general(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Exact x @ y as an object array of Fractions / IEEE specials (any float inputs)."""
    m, k = x.shape
    n = y.shape[1]
    out = np.empty((m, n), dtype=object)
    yt = np.ascontiguousarray(y.T)
    step = max(1, (1 << 22) // max(n * k, 1))
    for r0 in range(0, m, step):
        xa = x[r0 : r0 + step]
        aa = np.broadcast_to(xa[:, None, :], (xa.shape[0], n, k)).reshape(-1, k)
        bb = np.broadcast_to(yt[None, :, :], (xa.shape[0], n, k)).reshape(-1, k)
        out[r0 : r0 + step] = _row_dots(aa, bb).reshape(xa.shape[0], n)
    return out


def _product_truth(
    x: np.ndarray, y: np.ndarray, where: str, leveled: bool = False
) -> tuple[list[np.ndarray] | LeveledProduct | None, np.ndarray | None]:
    """x @ y exactly: (expansion, None) on the Ozaki path, else (None, object array).

    ``leveled``: see `_matmul_f32`."""
    m, k = x.shape
    n = y.shape[1]
    if k == 0:
        limits.check(where, nbytes=8 * m * n, what=f"{m} x {n} zero outputs")
        return [np.zeros((m, n))], None
    if x.dtype == np.float32 and y.dtype == np.float32:
        parts = _matmul_f32(x, y, where, leveled)
        if parts is not None:
            return parts, None
        # NaN/inf: rows and columns free of them still go through BLAS
        limits.check(where, nbytes=m * n * limits.FRACTION_BYTES, what=f"{m * n} exact outputs")
        bad_r = ~np.isfinite(x).all(axis=1)
        bad_c = ~np.isfinite(y).all(axis=0)
        out = np.empty((m, n), dtype=object)
        gr, gc = np.flatnonzero(~bad_r), np.flatnonzero(~bad_c)
        if gr.size and gc.size:
            good = _matmul_f32(x[gr], y[:, gc], where)
            assert isinstance(good, list)
            out[np.ix_(gr, gc)] = fractions(good)
        br, bc = np.flatnonzero(bad_r), np.flatnonzero(bad_c)
        limits.check(
            where, products=(br.size * n + m * bc.size) * k, what="rows/columns with NaN or inf"
        )
        if br.size:
            out[br] = _matmul_general(x[br], y)
        if bc.size:
            out[:, bc] = _matmul_general(x, y[:, bc])
        return None, out
    limits.check(
        where,
        nbytes=m * n * limits.FRACTION_BYTES + 8 * (1 << 24),
        products=float(m) * n * k,
        what=f"{m * n} exact outputs",
    )
    return None, _matmul_general(x, y)


def matmul(a: Any, b: Any) -> Truth:
    """The exact matrix product of a (m, k) and b (k, n) array: an (m, n) exact Truth.

    float32 (and narrower) inputs: a handful of float64 BLAS products (the Ozaki scheme, see
    `fpexplore.truth.ozaki`), held as an exact float64 expansion; rows spanning a wide exponent
    range are computed level by level from the top, as far as each rounding or measurement
    needs, and exactly term by term where that is cheaper (`fpexplore.truth.levels`). float64
    inputs: exact products summed exactly (slower). Work and memory are checked first
    (`fpexplore.truth.limits`).
    """
    where = "truth.matmul"
    x, y, fmt = _as_pair(a, b, where, ("a", "b"))
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
        raise InvalidInput(
            f"{where}: needs 'a' of shape (m, k) and 'b' of shape (k, n); got {x.shape} "
            f"and {y.shape}."
        )
    label = f"matmul({_desc(x, fmt)}, {_desc(y, fmt)})"
    parts, vals = _product_truth(x, y, where, leveled=True)
    if isinstance(parts, LeveledProduct):
        return Truth(label, leveled=parts, input_format=fmt)
    if parts is not None:
        return Truth(label, expansion=parts, input_format=fmt)
    return make_truth(label, vals, fmt)


def _index(v: Any) -> int:
    """``operator.index(v)``, refusing bools (TypeError)."""
    if isinstance(v, bool | np.bool_):
        raise TypeError("a bool is not an integer size")
    return operator.index(v)


def _pair(v: Any, name: str, low: int) -> tuple[int, int]:
    try:
        t = tuple(v) if isinstance(v, tuple | list | np.ndarray) and np.ndim(v) else (v, v)
        p = tuple(_index(i) for i in t)
    except (TypeError, ValueError):
        p = ()
    if len(p) != 2 or min(p) < low or max(p) > 2**31 - 1:  # no input that large fits anyway
        accepted = f"an integer in [{low}, 2**31 - 1] or a pair of them"
        raise InvalidParameter(name, v, accepted, "truth.conv2d")
    return p[0], p[1]


def _groups(groups: Any, c: int, shape: tuple[int, int]) -> int:
    """``groups`` checked against C and the kernel's (O, C // groups)."""
    try:
        g = _index(groups)
    except TypeError:
        g = 0
    o, cg = shape
    if g < 1 or c % g or o % g or cg != c // g:
        raise InvalidParameter(
            "groups",
            groups,
            f"a positive divisor of C={c} and O={o} with w.shape[1] == C/groups "
            f"(w.shape[1] is {cg})",
            "truth.conv2d",
        )
    return g


def _group_products(
    xa: np.ndarray, wa: np.ndarray, ba: np.ndarray | None, g: int, *pairs: tuple[int, int]
) -> list[tuple[Any, np.ndarray | None]]:
    """Each group's exact products (`_product_truth`) of its (N·OH·OW, C/g·kh·kw) patches and
    its kernels; ``pairs``: stride, padding, dilation and the output's (OH, OW)."""
    (nb, c, h, wd), (o, cg, kh, kw) = xa.shape, wa.shape
    (sh, sw), (ph, pw), (dh, dw), (oh, ow) = pairs
    kk = cg * kh * kw
    dts = (xa.dtype, wa.dtype) + (() if ba is None else (ba.dtype,))
    dt = np.float64 if np.float64 in dts else np.float32
    esz = np.dtype(dt).itemsize
    hp, wp = h + 2 * ph, wd + 2 * pw
    outputs = nb * o * oh * ow
    limits.check(
        "truth.conv2d",
        nbytes=esz * nb * c * hp * wp + 8 * 3 * nb * oh * ow * (kk + 1) + 8 * 4 * outputs,
        what=f"padded input {hp}x{wp}, {nb * oh * ow} patches of {kk}, {outputs} outputs",
    )
    xp = np.zeros((nb, c, hp, wp), dtype=dt)
    xp[:, :, ph : ph + h, pw : pw + wd] = xa
    win = np.lib.stride_tricks.sliding_window_view(
        xp, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(2, 3)
    )[:, :, ::sh, ::sw, ::dh, ::dw]  # (N, C, OH, OW, kh, kw)
    og = o // g
    results = []
    for gi in range(g):
        patches = win[:, gi * cg : (gi + 1) * cg].transpose(0, 2, 3, 1, 4, 5).reshape(-1, kk)
        wg = wa[gi * og : (gi + 1) * og].reshape(og, kk).astype(dt).T
        if ba is not None:  # the bias as one more term: a column of ones times a row of biases
            patches = np.concatenate([patches, np.ones((patches.shape[0], 1), dtype=dt)], axis=1)
            wg = np.concatenate([wg, ba[gi * og : (gi + 1) * og][None, :].astype(dt)], axis=0)
        results.append(_product_truth(np.ascontiguousarray(patches), wg, "truth.conv2d"))
    return results


def conv2d(
    x: Any,
    w: Any,
    bias: Any = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    groups: int = 1,
) -> Truth:
    """Exact 2-D cross-correlation with torch.nn.functional.conv2d's meaning.

    ``x``: (N, C, H, W) or (C, H, W); ``w``: (O, C // groups, kh, kw); ``bias``: (O,) or None.
    Zero padding. The result has shape (N, O, OH, OW) (or (O, OH, OW) for 3-D ``x``).
    """
    where = "truth.conv2d"
    xa, wa, fmt = _as_pair(x, w, where, ("x", "w"))
    squeeze = xa.ndim == 3
    if squeeze:
        xa = xa[None]
    if xa.ndim != 4 or wa.ndim != 4:
        raise InvalidInput(
            f"{where}: needs 'x' of shape (N, C, H, W) or (C, H, W) and 'w' of shape "
            f"(O, C/groups, kh, kw); got {np.shape(x)} and {wa.shape}."
        )
    sh, sw = _pair(stride, "stride", 1)
    ph, pw = _pair(padding, "padding", 0)
    dh, dw = _pair(dilation, "dilation", 1)
    g = _groups(groups, xa.shape[1], wa.shape[:2])
    nb, c, h, wd = xa.shape
    o, _, kh, kw = wa.shape
    ba = None
    if bias is not None:
        ba, fb = as_float_array(bias, "bias", where)
        fmt = wider(fmt, fb)
        if ba.shape != (o,):
            raise InvalidInput(f"{where}: 'bias' must have shape ({o},); got {ba.shape}.")
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise InvalidInput(
            f"{where}: the kernel (with dilation) is larger than the padded input "
            f"({h + 2 * ph}x{wd + 2 * pw}); output would be {oh}x{ow}."
        )
    if c == 0 or kh == 0 or kw == 0:
        raise InvalidInput(
            f"{where}: 'x' must have at least one channel and 'w' a kernel of at least 1x1; "
            f"got x of shape {xa.shape} and w of shape {wa.shape}."
        )
    results = _group_products(xa, wa, ba, g, (sh, sw), (ph, pw), (dh, dw), (oh, ow))
    og = o // g
    label = f"conv2d({_desc(xa, fmt)}, {_desc(wa, fmt)})"

    def place(vals: list[np.ndarray], dtype: Any) -> np.ndarray:
        full = np.empty((nb, o, oh, ow), dtype=dtype)
        for gi, v in enumerate(vals):
            full[:, gi * og : (gi + 1) * og] = v.reshape(nb, oh, ow, og).transpose(0, 3, 1, 2)
        return full[0] if squeeze else full

    if all(parts is not None for parts, _ in results):
        expansion = [
            place([p[j] if j < len(p) else np.zeros_like(p[0]) for p, _ in results], np.float64)
            for j in range(max(len(p) for p, _ in results))
        ]
        return Truth(label, expansion=expansion, input_format=fmt)
    out = place([fractions(p) if p is not None else v for p, v in results], object)
    return make_truth(label, out, fmt)
