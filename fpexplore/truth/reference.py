"""Reference operations on the exact input bits, at an explicit precision, certified.

Rational results (variance, normalize, bilinear resize, centre crop, conv2d) are exact; the
others are mpmath computations at ``prec`` bits, repeated at ``2*prec + 32`` bits, with the
agreeing digits stored as ``Truth.digits``. Precision is always scoped (``mpmath.workprec``);
the global ``mpmath.mp`` is never changed. Non-finite inputs propagate as IEEE arithmetic does
(mpmath's ``inf``/``nan``); ``resize_bilinear`` and ``normalize`` accept finite inputs only.
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from ..errors import InvalidInput, InvalidParameter
from .certify import certified, check_prec
from .exact import dyadic_ints, row_sums
from .inputs import as_float_array, wider
from .ops import _axis, _desc, conv2d, make_truth, product_terms  # conv2d is exact: re-exported
from .value import Truth, _to_mpf, object_map

__all__ = [
    "batch_norm",
    "center_crop",
    "conv2d",
    "cross_entropy",
    "erf",
    "exp",
    "gelu",
    "layer_norm",
    "log",
    "log_softmax",
    "normalize",
    "resize_bilinear",
    "sigmoid",
    "softmax",
    "std",
    "tanh",
    "var",
]

DEFAULT_PREC = 113


# -- helpers ----------------------------------------------------------------------------------


def _mp_array(a: np.ndarray) -> np.ndarray:
    """Object array of mpf equal to the float values (exact: floats have <= 53 bits)."""
    with mpmath.workprec(64):
        return object_map(mpmath.mpf, a)


def _float_param(v: Any, name: str, where: str, low: float = 0.0) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        f = math.nan
    if not (math.isfinite(f) and f >= low):
        raise InvalidParameter(name, v, f"a finite number >= {low}", where)
    return f


def _elementwise(name: str, fn: Any, x: Any, prec: int, keeps_zero_sign: bool = False) -> Truth:
    """``fn`` elementwise, certified. ``keeps_zero_sign``: f(-0) = -0 (tanh, erf, gelu), which
    mpmath cannot say (it has no -0); those elements hold the float -0.0 itself."""
    where = f"reference.{name}"
    p = check_prec(prec, where)
    arr, fmt = as_float_array(x, "x", where)
    xs = _mp_array(arr)
    neg_zero = np.signbit(arr) & (arr == 0) if keeps_zero_sign else None

    def compute(_: int) -> Any:
        out = object_map(fn, xs)
        if neg_zero is not None and neg_zero.any():
            out[neg_zero] = -0.0
        return out if out.ndim else out[()]

    return certified(f"{name}({_desc(arr, fmt)})", compute, p, fmt)


def _real(v: Any) -> Any:
    """IEEE meaning for results mpmath would make complex (log/sqrt of negatives): NaN."""
    return v if not isinstance(v, mpmath.mpc) else mpmath.nan


# -- elementwise functions --------------------------------------------------------------------


def exp(x: Any, prec: int = DEFAULT_PREC) -> Truth:
    """e**x, elementwise."""
    return _elementwise("exp", mpmath.exp, x, prec)


def log(x: Any, prec: int = DEFAULT_PREC) -> Truth:
    """Natural logarithm, elementwise (negative -> NaN, 0 -> -inf, as IEEE)."""
    return _elementwise("log", lambda v: mpmath.nan if v < 0 else _real(mpmath.log(v)), x, prec)


def tanh(x: Any, prec: int = DEFAULT_PREC) -> Truth:
    """Hyperbolic tangent, elementwise."""
    return _elementwise("tanh", mpmath.tanh, x, prec, keeps_zero_sign=True)


def erf(x: Any, prec: int = DEFAULT_PREC) -> Truth:
    """Error function, elementwise."""
    return _elementwise("erf", mpmath.erf, x, prec, keeps_zero_sign=True)


def sigmoid(x: Any, prec: int = DEFAULT_PREC) -> Truth:
    """1 / (1 + exp(-x)), elementwise."""
    return _elementwise("sigmoid", lambda v: 1 / (1 + mpmath.exp(-v)), x, prec)


def _gelu_erf(v: Any) -> Any:
    return v * (1 + mpmath.erf(v / mpmath.sqrt(2))) / 2


def _gelu_tanh(v: Any) -> Any:
    if mpmath.isinf(v):
        return v if v > 0 else mpmath.mpf(0)
    inner = mpmath.sqrt(2 / mpmath.pi) * (v + mpmath.mpf("0.044715") * v**3)
    return v * (1 + mpmath.tanh(inner)) / 2


def gelu(x: Any, approximate: str = "none", prec: int = DEFAULT_PREC) -> Truth:
    """GELU: ``x * Phi(x)`` (``approximate="none"``) or torch's tanh form (``"tanh"``).

    The tanh form uses the decimal constant 0.044715 exactly, as the formula states.
    """
    if approximate not in ("none", "tanh"):
        raise InvalidParameter("approximate", approximate, "'none' or 'tanh'", "reference.gelu")
    fn = _gelu_erf if approximate == "none" else _gelu_tanh
    return _elementwise(f"gelu[{approximate}]", fn, x, prec, keeps_zero_sign=True)


# -- reductions ---------------------------------------------------------------------------------


def _moments(arr: np.ndarray, axes: tuple[int, ...]) -> tuple[int, np.ndarray, np.ndarray]:
    """(n, exact sums, exact sums of squares) over ``axes``; results keep the other axes."""
    keep = [d for d in range(arr.ndim) if d not in axes]
    moved = np.transpose(arr, keep + list(axes))
    rest = moved.shape[: len(keep)]
    n = int(np.prod([arr.shape[d] for d in axes], dtype=np.int64))
    rows = moved.reshape(int(np.prod(rest, dtype=np.int64)), n)
    s1 = row_sums(rows).reshape(rest)
    v, off = product_terms(rows, rows)
    s2 = row_sums(v, off).reshape(rest)
    return n, s1, s2


def _var_exact(n: int, s1: Any, s2: Any, ddof: int) -> Any:
    if not (isinstance(s1, Fraction) and isinstance(s2, Fraction)):
        return math.nan  # any NaN/inf in the data makes the variance NaN (inf - inf)
    return (s2 - s1 * s1 / n) / (n - ddof)


def _check_ddof(ddof: Any, n: int, where: str) -> int:
    try:
        d = operator.index(ddof)
    except TypeError:
        d = None
    if d is None or d < 0 or d >= n:
        raise InvalidParameter("ddof", ddof, f"an integer in [0, {n - 1}] for {n} elements", where)
    return d


def _reduce_axes(axis: Any, ndim: int, where: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple | list):
        axes = tuple(_axis(a, ndim, where, none_ok=False) for a in axis)
        if len(set(axes)) != len(axes):
            raise InvalidParameter("axis", axis, "distinct axes", where)
        return axes
    return (_axis(axis, ndim, where, none_ok=False),)


def var(x: Any, ddof: int = 0, axis: Any = None) -> Truth:
    """Exact variance ``sum((x - mean)**2) / (n - ddof)`` (a rational number).

    ``ddof=0`` is numpy's and TensorFlow's default, ``ddof=1`` torch's (unbiased).
    """
    where = "reference.var"
    arr, fmt = as_float_array(x, "x", where)
    axes = _reduce_axes(axis, arr.ndim, where)
    n, s1, s2 = _moments(arr, axes)
    d = _check_ddof(ddof, n, where)
    out = object_map(lambda a, b: _var_exact(n, a, b, d), s1, s2)
    val = out if out.ndim else out[()]
    return make_truth(f"var({_desc(arr, fmt)}, ddof={d}, axis={axis})", val, fmt)


def std(x: Any, ddof: int = 0, axis: Any = None, prec: int = DEFAULT_PREC) -> Truth:
    """Standard deviation: the square root of the exact `var`, certified at ``prec`` bits."""
    where = "reference.std"
    p = check_prec(prec, where)
    v = var(x, ddof=ddof, axis=axis)
    vals = v.exact if v.is_exact else v.mp()

    def compute(q: int) -> Any:
        if isinstance(vals, np.ndarray):
            return object_map(lambda t: _real(mpmath.sqrt(_to_mpf(t, q))), vals)
        return _real(mpmath.sqrt(_to_mpf(vals, q)))

    return certified(v.label.replace("var(", "std(", 1), compute, p, v.input_format)


def _softmax_rows(xs: np.ndarray, log_form: bool) -> np.ndarray:
    out = np.empty(xs.shape, dtype=object)
    for r in range(xs.shape[0]):
        row = list(xs[r])
        m = max(row) if not any(mpmath.isnan(v) for v in row) else mpmath.nan
        if mpmath.isinf(m) and m < 0:
            m = mpmath.mpf(0)  # all -inf: exp(-inf - 0) = 0, 0/0 = NaN as IEEE
        sh = [v - m for v in row]
        e = [mpmath.exp(v) for v in sh]
        tot = mpmath.fsum(e)
        if log_form:
            lt = mpmath.log(tot) if tot > 0 else mpmath.mpf("-inf")
            out[r] = [v - lt for v in sh]
        else:
            out[r] = [v / tot if tot != 0 else mpmath.nan for v in e]
    return out


def _along(name: str, x: Any, axis: Any, prec: int, log_form: bool) -> Truth:
    where = f"reference.{name}"
    p = check_prec(prec, where)
    arr, fmt = as_float_array(x, "x", where)
    ax = _axis(axis, arr.ndim, where, none_ok=False)
    if arr.shape[ax] == 0:
        raise InvalidInput(
            f"{where}: 'x' has shape {arr.shape}, with no elements along axis {axis}; a "
            f"{name} over zero elements is undefined. Pass at least one element per row."
        )
    moved = np.moveaxis(arr, ax, -1)
    xs = _mp_array(moved.reshape(-1, moved.shape[-1]))

    def compute(_: int) -> Any:
        return np.moveaxis(_softmax_rows(xs, log_form).reshape(moved.shape), -1, ax)

    return certified(f"{name}({_desc(arr, fmt)}, axis={axis})", compute, p, fmt)


def softmax(x: Any, axis: int = -1, prec: int = DEFAULT_PREC) -> Truth:
    """exp(x) / sum(exp(x)) along ``axis``."""
    return _along("softmax", x, axis, prec, False)


def log_softmax(x: Any, axis: int = -1, prec: int = DEFAULT_PREC) -> Truth:
    """x - log(sum(exp(x))) along ``axis``."""
    return _along("log_softmax", x, axis, prec, True)


def cross_entropy(
    logits: Any, target: Any, reduction: str = "mean", prec: int = DEFAULT_PREC
) -> Truth:
    """torch.nn.functional.cross_entropy with class-index targets (no weights, no smoothing).

    ``logits``: (N, C) or (C,); ``target``: N (or one) integer class indices in [0, C).
    ``reduction``: "mean", "sum" or "none".
    """
    where = "reference.cross_entropy"
    p = check_prec(prec, where)
    arr, fmt = as_float_array(logits, "logits", where)
    if reduction not in ("mean", "sum", "none"):
        raise InvalidParameter("reduction", reduction, "'mean', 'sum' or 'none'", where)
    single = arr.ndim == 1
    a2 = arr[None] if single else arr
    if a2.ndim != 2 or a2.shape[1] == 0:
        raise InvalidInput(f"{where}: 'logits' must have shape (N, C) or (C,); got {arr.shape}.")
    t = np.asarray(target.detach().cpu().numpy() if hasattr(target, "detach") else target)
    if t.dtype.kind not in "iu" or t.reshape(-1).shape[0] != a2.shape[0]:
        raise InvalidInput(
            f"{where}: 'target' must hold {a2.shape[0]} integer class indices; got dtype "
            f"{t.dtype} and shape {t.shape}."
        )
    t = t.reshape(-1).astype(np.int64)
    if t.size and (t.min() < 0 or t.max() >= a2.shape[1]):
        bad = int(t[(t < 0) | (t >= a2.shape[1])][0])
        raise InvalidInput(
            f"{where}: 'target' values must be class indices in [0, {a2.shape[1] - 1}]; got {bad}."
        )
    xs = _mp_array(a2)

    def compute(_: int) -> Any:
        ls = _softmax_rows(xs, True)
        losses = [-ls[i, t[i]] for i in range(a2.shape[0])]
        if reduction == "none":
            out = np.empty(len(losses), dtype=object)
            out[:] = losses
            return out[0] if single else out
        tot = mpmath.fsum(losses)
        return tot / len(losses) if reduction == "mean" else tot

    return certified(f"cross_entropy({_desc(arr, fmt)}, {reduction})", compute, p, fmt)


# -- normalization layers ---------------------------------------------------------------------


def _param_array(v: Any, name: str, shape: tuple[int, ...], where: str) -> tuple[np.ndarray, str]:
    a, f = as_float_array(v, name, where)
    if a.shape != shape:
        raise InvalidInput(f"{where}: '{name}' must have shape {shape}; got {a.shape}.")
    return a, f


def _stats(n: int, s1: np.ndarray, s2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact means and biased variances from `_moments` (NaN where the data is not finite)."""
    mean = object_map(lambda a: a / n if isinstance(a, Fraction) else math.nan, s1)
    return mean, object_map(lambda a, b: _var_exact(n, a, b, 0), s1, s2)


def _params(
    weight: Any,
    bias: Any,
    shape: tuple[int, ...],
    bshape: tuple[int, ...],
    arr: np.ndarray,
    fmt: str,
    where: str,
) -> tuple[np.ndarray | None, np.ndarray | None, str]:
    """``weight`` and ``bias`` (of ``shape``; None when not given) as mpf arrays reshaped to
    ``bshape`` and broadcast to ``arr``, and ``fmt`` widened to theirs."""
    out = []
    for name, v in (("weight", weight), ("bias", bias)):
        if v is None:
            out.append(None)
            continue
        a, f = _param_array(v, name, shape, where)
        fmt = wider(fmt, f)
        out.append(np.broadcast_to(_mp_array(a).reshape(bshape), arr.shape))
    return out[0], out[1], fmt


def _normalized(
    label: str,
    arr: np.ndarray,
    fmt: str,
    mean: np.ndarray,
    var_: np.ndarray,
    eps: float,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    prec: int,
) -> Truth:
    """(x - mean) / sqrt(var + eps) * weight + bias, certified; all broadcast to ``arr``."""
    xs = _mp_array(arr)

    def compute(q: int) -> Any:
        epsm = mpmath.mpf(eps)

        def one(x: Any, m: Any, v: Any, w: Any, b: Any) -> Any:
            r = (x - _to_mpf(m, q)) / mpmath.sqrt(_to_mpf(v, q) + epsm)
            r = r if w is None else r * w
            return r if b is None else r + b

        return object_map(one, xs, mean, var_, weight, bias)

    return certified(label, compute, prec, fmt)


def layer_norm(
    x: Any,
    normalized_shape: int | tuple[int, ...],
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
    prec: int = DEFAULT_PREC,
) -> Truth:
    """torch.nn.functional.layer_norm: normalize over the trailing ``normalized_shape`` dims.

    Mean and biased variance are exact; ``eps`` is taken as the exact value of the given float.
    """
    where = "reference.layer_norm"
    p = check_prec(prec, where)
    arr, fmt = as_float_array(x, "x", where)
    ns = (normalized_shape,) if np.ndim(normalized_shape) == 0 else tuple(normalized_shape)
    k = len(ns)
    if k == 0 or k > arr.ndim or tuple(arr.shape[arr.ndim - k :]) != ns:
        raise InvalidParameter(
            "normalized_shape",
            normalized_shape,
            f"the trailing dims of x's shape {arr.shape}",
            where,
        )
    e = _float_param(eps, "eps", where)
    n, s1, s2 = _moments(arr, tuple(range(arr.ndim - k, arr.ndim)))
    mean, v = _stats(n, s1, s2)
    bshape = (*s1.shape, *([1] * k))
    mean, v = (np.broadcast_to(t.reshape(bshape), arr.shape) for t in (mean, v))
    w, b, fmt = _params(weight, bias, ns, ns, arr, fmt, where)
    return _normalized(f"layer_norm({_desc(arr, fmt)}, {ns})", arr, fmt, mean, v, e, w, b, p)


def batch_norm(
    x: Any,
    running_mean: Any = None,
    running_var: Any = None,
    weight: Any = None,
    bias: Any = None,
    training: bool = False,
    eps: float = 1e-5,
    prec: int = DEFAULT_PREC,
) -> Truth:
    """torch.nn.functional.batch_norm on (N, C, ...) input.

    ``training=True``: per-channel batch mean and biased variance (exact) over N and the
    spatial dims; ``training=False``: the given running statistics. Running statistics are not
    updated (this returns the normalized output only).
    """
    where = "reference.batch_norm"
    p = check_prec(prec, where)
    arr, fmt = as_float_array(x, "x", where)
    if arr.ndim < 2:
        raise InvalidInput(f"{where}: 'x' must have shape (N, C, ...); got {arr.shape}.")
    c = arr.shape[1]
    e = _float_param(eps, "eps", where)
    bshape = (1, c) + (1,) * (arr.ndim - 2)
    if training:
        mean, v = _stats(*_moments(arr, (0, *range(2, arr.ndim))))
    else:
        if running_mean is None or running_var is None:
            raise InvalidInput(
                f"{where}: training=False needs 'running_mean' and 'running_var' of shape ({c},); "
                f"got running_mean={running_mean!r:.40}, running_var={running_var!r:.40}."
            )
        rm, f1 = _param_array(running_mean, "running_mean", (c,), where)
        rv, f2 = _param_array(running_var, "running_var", (c,), where)
        fmt = wider(fmt, wider(f1, f2))
        mean, v = _mp_array(rm), _mp_array(rv)
    mean, v = (np.broadcast_to(t.reshape(bshape), arr.shape) for t in (mean, v))
    w, b, fmt = _params(weight, bias, (c,), bshape, arr, fmt, where)
    label = f"batch_norm[{'train' if training else 'eval'}]({_desc(arr, fmt)})"
    return _normalized(label, arr, fmt, mean, v, e, w, b, p)


def _finite(a: np.ndarray, name: str, where: str) -> None:
    if not np.isfinite(a).all():
        raise InvalidInput(f"{where}: '{name}' must be finite (it holds NaN or infinity).")


def _per_channel(v: Any, name: str, c: int, where: str) -> np.ndarray:
    """``v`` as ``c`` finite values (one value is repeated)."""
    a = as_float_array(v, name, where)[0].reshape(-1)
    if a.size == 1:
        a = np.repeat(a, c)
    if a.shape != (c,):
        raise InvalidInput(f"{where}: '{name}' must have 1 or {c} values; got {a.size}.")
    _finite(a, name, where)
    return a


def normalize(x: Any, mean: Any, std: Any) -> Truth:
    """Exact ``(x - mean[c]) / std[c]`` per channel, for (C, H, W) or (N, C, H, W) input.

    ``mean``/``std`` are taken as the exact values given: pass ``np.float32`` values to model
    torchvision's Normalize, which converts them to the image's dtype first.
    """
    where = "reference.normalize"
    arr, fmt = as_float_array(x, "x", where)
    if arr.ndim not in (3, 4):
        raise InvalidInput(
            f"{where}: 'x' must have shape (C, H, W) or (N, C, H, W); got {arr.shape}."
        )
    c = arr.shape[-3]
    m, s = (_per_channel(v, name, c, where) for name, v in (("mean", mean), ("std", std)))
    if (s == 0).any():
        raise InvalidInput(f"{where}: 'std' must be non-zero; got {s.tolist()}.")
    _finite(arr, "x", where)
    # one Fraction per distinct value of a channel, each built at once from integers:
    # (x - m) / s = (X - M) * 2**e0 / s, with x = X * 2**e0 and m = M * 2**e0 (`dyadic_ints`)
    chans = np.moveaxis(arr, -3, 0).reshape(c, -1)
    out = np.empty(chans.shape, dtype=object)
    for ch in range(c):
        u, inv = np.unique(chans[ch], return_inverse=True)
        big, e0 = dyadic_ints(np.append(u, m[ch]))
        n = big[:-1] - big[-1]  # (x - m) * 2**-e0, exact integers
        sn, sd = float(s[ch]).as_integer_ratio()
        num, den = (sd << max(e0, 0)), (sn << max(-e0, 0))  # (x - m) / s = n * num / den
        if den < 0:
            num, den = -num, -den
        vals = np.frompyfunc(Fraction, 2, 1)(n * num, den)
        out[ch] = vals[inv.reshape(-1)]
    shape = np.moveaxis(arr, -3, 0).shape
    out = np.moveaxis(out.reshape(shape), 0, -3)
    return make_truth(f"normalize({_desc(arr, fmt)})", np.ascontiguousarray(out), fmt)


# -- bilinear resize ----------------------------------------------------------------------------


def _scale(n_in: int, n_out: int, align_corners: bool) -> Fraction:
    if align_corners:
        return Fraction(n_in - 1, n_out - 1) if n_out > 1 else Fraction(0)
    return Fraction(n_in, n_out)


def _linear_weights(n_in: int, n_out: int, align_corners: bool) -> list[dict[int, Fraction]]:
    """torch upsample_bilinear2d (CPU) source positions and weights, in exact arithmetic."""
    rows: list[dict[int, Fraction]] = []
    scale = _scale(n_in, n_out, align_corners)
    for i in range(n_out):
        src = scale * i if align_corners else max(scale * (i + Fraction(1, 2)) - Fraction(1, 2), 0)
        x0 = math.floor(src)
        x1 = x0 + 1 if x0 < n_in - 1 else x0
        lam = src - x0
        w = {x0: 1 - lam}
        w[x1] = w.get(x1, Fraction(0)) + lam
        rows.append(w)
    return rows


def _aa_weights(n_in: int, n_out: int, align_corners: bool) -> list[dict[int, Fraction]]:
    """torch _upsample_bilinear2d_aa (triangle filter widened by the scale when shrinking)."""
    scale = _scale(n_in, n_out, align_corners)
    support = scale if scale >= 1 else Fraction(1)
    invscale = 1 / scale if scale >= 1 else Fraction(1)
    rows: list[dict[int, Fraction]] = []
    for i in range(n_out):
        center = scale * (i + Fraction(1, 2))
        xmin = max(int(center - support + Fraction(1, 2)), 0)  # int() truncates, as in C++
        xsize = min(int(center + support + Fraction(1, 2)), n_in) - xmin
        ws = {}
        for j in range(max(xsize, 0)):
            t = abs((j + xmin - center + Fraction(1, 2)) * invscale)
            ws[xmin + j] = 1 - t if t < 1 else Fraction(0)
        tot = sum(ws.values(), Fraction(0))
        rows.append({k: (w / tot if tot != 0 else w) for k, w in ws.items()})
    return rows


def _weight_matrix(rows: list[dict[int, Fraction]], n_in: int) -> tuple[np.ndarray, list[int]]:
    """Integer matrix A and per-row denominators D with weight[o, j] = A[o, j] / D[o]."""
    a = np.zeros((len(rows), n_in), dtype=object)
    dens = []
    for o, r in enumerate(rows):
        d = math.lcm(*(w.denominator for w in r.values())) if r else 1
        dens.append(d)
        for j, w in r.items():
            a[o, j] = w.numerator * (d // w.denominator)
    return a, dens


def resize_bilinear(
    x: Any, size: int | tuple[int, int], align_corners: bool = False, antialias: bool = False
) -> Truth:
    """Exact bilinear resize with torch.nn.functional.interpolate's meaning (mode="bilinear").

    ``x``: (H, W), (C, H, W) or (N, C, H, W), finite; ``size``: output (h, w). Coordinates
    and weights are exact rationals (torch computes them in floating point, so its results
    differ from these by rounding).
    """
    where = "reference.resize_bilinear"
    arr, fmt = as_float_array(x, "x", where)
    if arr.ndim not in (2, 3, 4) or min(arr.shape[-2:], default=0) < 1:
        raise InvalidInput(
            f"{where}: 'x' must have shape (..., H, W) with H, W >= 1; got {arr.shape}."
        )
    sz = (size, size) if np.ndim(size) == 0 else tuple(size)
    try:
        oh, ow = (operator.index(s) for s in sz)
    except (TypeError, ValueError):
        oh = ow = 0
    if len(sz) != 2 or oh < 1 or ow < 1:
        raise InvalidParameter("size", size, "a positive integer or a pair of them", where)
    _finite(arr, "x", where)
    h, w = arr.shape[-2:]
    mk = _aa_weights if antialias else _linear_weights
    ay, dy = _weight_matrix(mk(h, oh, bool(align_corners)), h)
    ax, dx = _weight_matrix(mk(w, ow, bool(align_corners)), w)
    # Python ints (object arrays: numpy loops in C over them), x = xi * 2**emin
    xi, emin = dyadic_ints(arr.reshape(-1, h, w))
    # weights are sparse (a few taps per output): rows first, then columns, exact integers
    tmp = np.zeros((xi.shape[0], oh, w), dtype=object)
    for o in range(oh):
        for j in np.flatnonzero(ay[o] != 0).tolist():
            tmp[:, o] += xi[:, j] * ay[o, j]
    num = np.zeros((xi.shape[0], oh, ow), dtype=object)
    for q in range(ow):
        for j in np.flatnonzero(ax[q] != 0).tolist():
            num[:, :, q] += tmp[:, :, j] * ax[q, j]
    den = np.array([[dy[o] * dx[q] for q in range(ow)] for o in range(oh)], dtype=object)
    if emin >= 0:
        num = num * (1 << emin)
    else:
        den = den * (1 << -emin)
    frac = np.frompyfunc(Fraction, 2, 1)
    out = frac(num, np.broadcast_to(den, num.shape))
    out = out.reshape((*arr.shape[:-2], oh, ow))
    tag = f"align_corners={bool(align_corners)}, antialias={bool(antialias)}"
    return make_truth(f"resize_bilinear({_desc(arr, fmt)} -> {oh}x{ow}, {tag})", out, fmt)


def center_crop(img: np.ndarray, crop: int) -> Truth:
    """The centre ``crop`` x ``crop`` of an HWC integer image at the exact offset
    (H - crop) / 2, (W - crop) / 2: where an offset is half a pixel, the average of the two
    neighbouring integer crops along that axis (exact quarters)."""
    (y0, y1), (x0, x1) = (((n - crop) // 2, (n - crop + 1) // 2) for n in img.shape[:2])
    # the mean of the crops at the floor and the ceiling offsets: a sum of four in integers
    parts = [img[y : y + crop, x : x + crop] for y in (y0, y1) for x in (x0, x1)]
    acc = sum(a.astype(np.int64) for a in parts)
    exact = np.frompyfunc(lambda n: Fraction(int(n), 4), 1, 1)(acc).astype(object)
    label = f"exact centre crop {crop}x{crop} (half-pixel offsets interpolated)"
    return Truth(label, exact=exact)
