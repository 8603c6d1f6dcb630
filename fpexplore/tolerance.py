"""A-priori rounding-error bounds per operation, and tolerance advice derived from them.

One place for the bounds: `fpexplore.diverge` checks each layer against the same functions.

Notation (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002): ``u = 2**-p`` is
the unit roundoff of a format with ``p`` significand bits, ``gamma(n) = n*u / (1 - n*u)``.

- A sum or dot product of ``n`` terms in any order (sequential, pairwise, blocked, with or
  without FMA) has ``|computed - exact| <= gamma(n) * sum(|terms|)``; a matrix product, a
  linear layer (``k`` products plus a bias: ``n = k + 1``) and a convolution (``k = C*kh*kw``)
  likewise, element by element.
- Elementary functions (exp, erf, tanh, sqrt) in vectorized libraries are not correctly
  rounded; each is allowed `FUNC_ULPS` units of ``u`` of relative error.
- Normalization (BatchNorm, LayerNorm), softmax and GELU are bounded term by term from those
  two rules (see each function); the bounds are worst cases, not estimates.

Higham and Mary (2019) show that with rounding errors that behave like independent random
variables, ``gamma(n)`` may be replaced by ``lambda*sqrt(n)*u`` with probability at least
``1 - 2n*exp(-lambda**2 (1-u)**2 / 2)``: `probabilistic_gamma` gives it, for tolerances that
are realistic rather than worst case.
"""

from __future__ import annotations

import math
import operator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from . import formats
from .errors import InvalidInput, InvalidParameter, shown
from .result.spec import declare_texts
from .result.text_table import wrapped

__all__ = [
    "ERF_ULPS",
    "FUNC_ULPS",
    "OPS",
    "Advice",
    "advise",
    "gamma",
    "probabilistic_gamma",
    "unit_roundoff",
]

FUNC_ULPS = 4  # relative error allowed for one elementary function, in units of u
#: Absolute error allowed for erf inside a GELU kernel, in units of u: torch's CPU GELU uses a
#: vectorized polynomial erf whose absolute error reaches about 10.6 u on [-6, 6] in float32
#: (measured against float64), more than a correctly rounded erf's 1.
ERF_ULPS = 12
_SAFETY = 1 + 2.0**-30  # the bounds themselves are evaluated in float64: cover that rounding


def unit_roundoff(fmt: Any = "float32") -> float:
    """``u = 2**-p`` for a format of `fpexplore.formats` (``2**-24`` for float32)."""
    return math.ldexp(1.0, -formats.get(fmt).precision)


def _count(n: Any, where: str, name: str = "n") -> int:
    """``n`` as a non-negative int (numpy ints too; a bool is not a count)."""
    try:
        k = -1 if isinstance(n, bool | np.bool_) else operator.index(n)
    except TypeError:
        k = -1
    if k < 0:
        raise InvalidParameter(name, n, "a non-negative int", where)
    return k


def gamma(n: int, fmt: Any = "float32") -> float:
    """``n*u / (1 - n*u)``: the relative bound of ``n`` roundings (inf when ``n*u >= 1``)."""
    n = _count(n, "tolerance.gamma")
    f = formats.get(fmt)
    if n >> f.precision:  # n*u >= 1 with u = 2**-p, decided on the int (n may be huge)
        return math.inf
    nu = n * unit_roundoff(f)
    return nu / (1 - nu)


def probabilistic_gamma(n: int, fmt: Any = "float32", lam: float = 5.0) -> float:
    """Higham–Mary's ``exp(lam*sqrt(n)*u + n*u**2/(1-u)) - 1`` (holds with high probability);
    inf, like `gamma`, when ``n*u >= 1`` or the bound overflows."""
    where = "tolerance.probabilistic_gamma"
    n = _count(n, where)
    f = formats.get(fmt)
    real = isinstance(lam, int | float | np.number) and not isinstance(lam, bool | np.bool_)
    try:
        lam_ = float(lam) if real else math.nan
    except (OverflowError, TypeError, ValueError):
        lam_ = math.nan
    if not (math.isfinite(lam_) and lam_ > 0):
        raise InvalidParameter("lam", lam, "a positive finite float", where)
    if n >> f.precision:
        return math.inf
    u = unit_roundoff(f)
    try:
        return math.expm1(lam_ * math.sqrt(n) * u + n * u * u / (1 - u))
    except OverflowError:
        return math.inf


# ---------------------------------------------------------------------------------------------
# per-element bounds, shared with fpexplore.diverge: each returns |computed - exact| bounds in
# float64, elementwise, for inputs given as float64 arrays of the very input values.


def _floats(where: str, **arrays: Any) -> list[np.ndarray]:
    """Each of ``arrays`` as a float64 array, in the order given; `InvalidInput` names one that
    holds no numbers, or arguments whose shapes do not broadcast together."""
    out = []
    for name, a in arrays.items():
        try:
            arr = np.asarray(a)
        except (TypeError, ValueError, OverflowError):
            arr = np.asarray(None)
        if arr.dtype.kind not in "fiu":
            raise InvalidInput(
                f"{where}: {name!r} must be a number or an array of numbers (float or int); got "
                f"{shown(a)} of type {type(a).__name__}."
            )
        out.append(arr.astype(np.float64))
    try:
        np.broadcast_shapes(*(a.shape for a in out))
    except ValueError:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in zip(arrays, out, strict=True))
        raise InvalidInput(
            f"{where}: the shapes of {shapes} do not broadcast together; give arrays of one "
            "shape (or shapes numpy broadcasts)."
        ) from None
    return out


def _g(n: int, fmt: Any) -> float:
    return gamma(n, fmt) * _SAFETY


def accumulation_format(fmt: Any) -> str:
    """The format sums are accumulated in: float32 for the 16-bit formats (torch on CPU,
    cuBLAS/cuDNN by default and XLA all widen), else the format itself."""
    name = formats.get(fmt).name
    return "binary32" if name in ("binary16", "bfloat16") else name


def underflow(fmt: Any, roundings: int = 1) -> float:
    """An absolute allowance for results in the subnormal range: half a subnormal spacing per
    rounding (the relative bounds above hold only for normal results)."""
    n = _count(roundings, "tolerance.underflow", "roundings")
    return n * formats.get(fmt).min_subnormal / 2


def widen(bound: np.ndarray, exact: np.ndarray, fmt: Any) -> np.ndarray:
    """A bound for work done in `accumulation_format` and rounded once to ``fmt`` at the end:
    ``bound + u (|exact| + bound)`` (unchanged when the two formats are the same)."""
    bound, exact = _floats("tolerance.widen", bound=bound, exact=exact)
    if accumulation_format(fmt) == formats.get(fmt).name:
        return bound
    return bound + unit_roundoff(fmt) * _SAFETY * (np.abs(exact) + bound) + underflow(fmt)


def dot_bound(abs_sum: np.ndarray, n: int, fmt: Any, exact: np.ndarray | None = None) -> np.ndarray:
    """``gamma(n) * sum|terms|`` for sums of ``n`` terms whose absolute sums are ``abs_sum``.

    For 16-bit formats the sum is accumulated in float32 (`accumulation_format`) and rounded
    once to ``fmt`` at the end: ``gamma_32(n) sum|terms| + u (|exact| + gamma_32(n) sum|terms|)``
    (``exact`` is then needed).
    """
    where = "tolerance.dot_bound"
    n = _count(n, where)
    given = {"abs_sum": abs_sum} if exact is None else {"abs_sum": abs_sum, "exact": exact}
    s, *rest = _floats(where, **given)
    exact = rest[0] if rest else None
    acc = accumulation_format(fmt)
    if acc == formats.get(fmt).name:
        return _g(n, fmt) * s + underflow(fmt, n)
    return widen(_g(n, acc) * s, np.asarray(exact if exact is not None else s, np.float64), fmt)


def rounding_bound(exact: np.ndarray, fmt: Any, roundings: int = 1) -> np.ndarray:
    """A few roundings of the result itself (an add, a scaling by a non-power of two)."""
    roundings = _count(roundings, "tolerance.rounding_bound", "roundings")
    (exact,) = _floats("tolerance.rounding_bound", exact=exact)
    return _g(roundings, fmt) * np.abs(exact) + underflow(fmt, roundings)


def normalize_bound(
    x: np.ndarray,
    mean: np.ndarray,
    sigma: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray,
    fmt: Any,
    stats_terms: int = 0,
    mean_abs: np.ndarray | None = None,
) -> np.ndarray:
    """``(x - mean) / sigma * weight + bias`` computed in any arrangement.

    Implementations differ: torch folds ``scale = weight/sigma`` and ``shift = bias -
    mean*scale`` then does ``x*scale + shift``; Keras does ``x*inv + (-mean*inv)``. Each product
    and sum rounds once, the square root (or reciprocal square root) of ``var + eps`` is an
    elementary function, so with ``z = (x - mean)/sigma``:

        |err| <= |w|/sigma * gamma(4) (|x| + |mean|) + gamma(4 + F) |w z| + gamma(2) |b|

    with ``F`` = `FUNC_ULPS`. When the statistics are computed (LayerNorm, BatchNorm in train
    mode) over ``n = stats_terms`` values, the mean carries ``gamma(n+1) mean|x|`` and the
    variance a relative ``gamma(2n+4)``, which adds ``|w|/sigma gamma(n+1) mean|x|`` and
    ``gamma(n+2) |w z|``.
    """
    where = "tolerance.normalize_bound"
    stats_terms = _count(stats_terms, where, "stats_terms")
    named = {"x": x, "mean": mean, "sigma": sigma, "weight": weight, "bias": bias}
    if mean_abs is not None:
        named["mean_abs"] = mean_abs
    x, mean, sigma, weight, bias, *rest = _floats(where, **named)
    mean_abs = rest[0] if rest else None
    w = np.abs(weight)
    z = np.abs(x - mean) / sigma
    out = w / sigma * _g(4, fmt) * (np.abs(x) + np.abs(mean))
    out = out + _g(4 + FUNC_ULPS, fmt) * w * z + _g(2, fmt) * np.abs(bias)
    if stats_terms:
        ma = mean_abs if mean_abs is not None else np.abs(x)
        out = out + w / sigma * _g(stats_terms + 1, fmt) * ma
        out = out + _g(stats_terms + 2, fmt) * w * z
    return out + underflow(fmt, 8)


def softmax_bound(x: np.ndarray, exact: np.ndarray, axis: int, fmt: Any) -> np.ndarray:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``.

    The shift ``x - max`` rounds (an absolute error ``u|x - max|`` in the exponent, a relative
    one in exp), exp adds ``F*u``, the sum of ``n`` positive terms ``gamma(n-1)``, the division
    ``u``; relative to the exact output:

        |err_i| <= y_i * (u|x_i - m| + max_j u|x_j - m| + 2 F u + gamma(n+1)),

    to first order (each rounding counted once more by the gammas, which covers the second
    order).
    """
    where = "tolerance.softmax_bound"
    x, exact = _floats(where, x=x, exact=exact)
    try:
        ax = None if isinstance(axis, bool | np.bool_) else operator.index(axis)
    except TypeError:
        ax = None
    if ax is None or not -x.ndim <= ax < x.ndim:
        raise InvalidParameter("axis", axis, f"an axis of x (x has {x.ndim})", where)
    axis = ax
    u = unit_roundoff(fmt)
    n = x.shape[axis]
    d = np.abs(x - np.max(x, axis=axis, keepdims=True))
    rel = u * d + u * np.max(d, axis=axis, keepdims=True) + 2 * FUNC_ULPS * u + _g(n + 2, fmt)
    return np.abs(exact) * rel * _SAFETY + underflow(fmt, 4)


def gelu_bound(x: np.ndarray, exact: np.ndarray, fmt: Any) -> np.ndarray:
    """``x/2 * (1 + erf(x/sqrt(2)))`` (or torch's tanh form, for its own definition).

    erf is within an absolute ``E*u`` (`ERF_ULPS`: the vectorized erf of torch's kernel), its
    argument carries a relative ``u`` (``|erf'(t) t| <= 0.49``), and ``1 + erf`` can cancel, so
    the error is absolute in ``x`` plus relative in the result:

        |err| <= (E + 2) u |x| / 2 + gamma(3) |y|.
    """
    x, exact = _floats("tolerance.gelu_bound", x=x, exact=exact)
    u = unit_roundoff(fmt)
    return ((ERF_ULPS + 2) * u * np.abs(x) / 2 + _g(3, fmt) * np.abs(exact)) * _SAFETY + (
        underflow(fmt, 4)
    )


def function_bound(exact: np.ndarray, x: np.ndarray, fmt: Any, slope: float = 1.0) -> np.ndarray:
    """An elementary function ``f`` (tanh, sigmoid): ``F u |f(x)| + slope * u |x|``.

    ``slope`` bounds ``|f'|`` (1 for tanh, 1/4 for sigmoid; 1 covers both): an argument off by
    a relative ``u`` moves the result by at most ``slope * u |x|``.
    """
    where = "tolerance.function_bound"
    exact, x = _floats(where, exact=exact, x=x)
    ok = isinstance(slope, int | float | np.number) and not isinstance(slope, bool | np.bool_)
    if not (ok and math.isfinite(float(slope)) and slope >= 0):
        raise InvalidParameter("slope", slope, "a finite non-negative float", where)
    u = unit_roundoff(fmt)
    return (FUNC_ULPS * u * np.abs(exact) + slope * u * np.abs(x)) * _SAFETY + underflow(fmt, 2)


# ---------------------------------------------------------------------------------------------
# tolerance advice

OPS = ("sum", "dot", "matmul", "conv2d", "softmax", "layer_norm", "gelu")

_MATMUL_N = 16  # matmul samples are n x k times k x n
_ROWS = 4  # rows of the softmax and LayerNorm samples
_CONV_OUT = 4 * 4 * 4  # conv2d outputs: 4 channels of 4 x 4 (a 6 x 6 image, 3 x 3 kernels)
#: Exact products the truths of one `advise` may take (`work`): a few seconds on a laptop.
MAX_WORK = 1 << 23
#: Elements a certified (mpmath, two precisions) truth may take here: seconds, not minutes.
MAX_CERTIFIED = 1 << 15


def work(op: str, size: int) -> int:
    """The exact products (reductions) or certified elements (softmax, LayerNorm) that the
    truths of ``advise(op, size=size)`` take; `SIZES` keeps it within `MAX_WORK` and
    `MAX_CERTIFIED`."""
    return {
        "sum": size,
        "dot": size,
        "matmul": _MATMUL_N * _MATMUL_N * size,
        "conv2d": 2 * _CONV_OUT * size,  # the truth and the bound's truth on |x|, |w|
        "softmax": _ROWS * size,
        "layer_norm": _ROWS * size,
        "gelu": min(size, 4096),
    }[op]


#: (smallest, largest, step) of the size per op: the largest whose `work` fits the budget, so
#: that every accepted size finishes in bounded time (and ``--help`` prints these).
SIZES: dict[str, tuple[int, int, int]] = {
    "sum": (1, 1 << 20, 1),
    "dot": (1, 1 << 20, 1),
    "matmul": (1, MAX_WORK // (_MATMUL_N * _MATMUL_N), 1),
    "conv2d": (9, MAX_WORK // (2 * _CONV_OUT) // 9 * 9, 9),
    "softmax": (1, MAX_CERTIFIED // _ROWS, 1),
    "layer_norm": (1, MAX_CERTIFIED // _ROWS, 1),
    "gelu": (1, 1 << 20, 1),
}


_SIZE_MEANING = {
    "sum": "number of terms",
    "dot": "vector length",
    "matmul": "inner dimension k (n x k times k x n, n = 16)",
    "conv2d": "C*kh*kw, the terms per output (3x3 kernels, C = size/9)",
    "softmax": "length of the softmax axis",
    "layer_norm": "number of normalized elements",
    "gelu": "number of elements (the bound does not depend on it)",
}


@dataclass(frozen=True)
class Advice:
    """Bound, measurement and the tolerances to use for one op, format and size."""

    op: str
    fmt: str
    size: int
    size_meaning: str
    terms: int  # the n in gamma(n) (1 for elementwise ops)
    accumulation: str  # the format sums are accumulated in
    gamma: float  # worst-case relative bound gamma(n) of the error of one implementation
    gamma_probabilistic: float  # Higham–Mary lambda=5 version
    rtol: float  # for assert_close(a, b): two implementations, each within the bound
    atol: float
    rtol_probabilistic: float
    atol_probabilistic: float
    measured_max_abs: float | None  # of the implementation below, against the exact result
    measured_max_rel: float | None
    measured_max_ulp: float | None
    bound_max_abs: float  # the largest per-element a-priori bound on the sample data
    within_bound: bool | None  # every element of the measurement inside its bound
    implementation: str
    note: str = ""

    def assert_close_kwargs(self, probabilistic: bool = False) -> dict[str, float]:
        """``rtol``/``atol`` for ``torch.testing.assert_close`` / ``np.testing.assert_allclose``."""
        if probabilistic:
            return {"rtol": self.rtol_probabilistic, "atol": self.atol_probabilistic}
        return {"rtol": self.rtol, "atol": self.atol}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def claims(self) -> dict[str, Any]:
        """The claims of this advice (`ADVICE_CLAIMS`), the measured numbers filled in:
        "within_bound" (not checked when nothing was measured; the note says why) and, for a
        reduction, "growth" of its bounds with the number of terms."""
        spec = ADVICE_CLAIMS["within_bound"]
        if self.within_bound is None or self.measured_max_abs is None:
            what = f"{self.op} in {self.fmt}, size {self.size}"
            claims = {"within_bound": spec.not_checked(f"{what}: {self.note or 'not measured'}")}
        else:
            claims = {
                "within_bound": spec.claim(
                    self.within_bound,
                    implementation=self.implementation or "the implementation",
                    op=self.op,
                    fmt=self.fmt,
                    size=self.size,
                    max_abs=self.measured_max_abs,
                    max_ulp=self.measured_max_ulp,
                    bound=self.bound_max_abs,
                )
            }
        if self.terms > 1:
            claims["growth"] = _growth_claim(self.terms, self.accumulation)
        return claims

    def check(self, *keys: str) -> None:
        """Print and assert claims ``keys`` (all when none are named) as a lesson's
        `Comparison.check` does (`ClaimFailed`, `ClaimNotChecked`)."""
        from .result import check_claims

        check_claims(f"tolerance advice for {self.op}", self.claims, keys)

    def text(self) -> str:
        """A short report, as the CLI prints it."""
        lines = [
            f"{self.op} in {self.fmt}, size {self.size} ({self.size_meaning})",
            (
                f"  a-priori bound, one implementation: gamma({self.terms}) = {self.gamma:.3g} "
                f"in {self.accumulation} (probabilistic, lambda=5: "
                f"{self.gamma_probabilistic:.3g}) times the sum of |terms|"
            )
            if self.terms > 1
            else f"  a-priori bound per element: see fpexplore.tolerance ({self.op})",
        ]
        if self.measured_max_abs is not None:
            lines.append(
                f"  measured ({self.implementation}, seeded standard-normal data): max |error| "
                f"{self.measured_max_abs:.3g}, {self.measured_max_ulp:.3g} ULP, relative "
                f"{self.measured_max_rel:.3g}; largest bound {self.bound_max_abs:.3g}; "
                f"{'inside' if self.within_bound else 'OUTSIDE'} the bound"
            )
        else:
            lines.append(f"  not measured: {self.note}")
        lines.append(f"  worst case:    rtol={self.rtol:.3g}, atol={self.atol:.3g}")
        lines.append(
            f"  probabilistic: rtol={self.rtol_probabilistic:.3g}, "
            f"atol={self.atol_probabilistic:.3g}"
        )
        if self.note and self.measured_max_abs is not None:
            lines.append(f"  note: {self.note}")
        # wrapped to the notebook's width, as `Comparison.check` prints a claim
        return wrapped("\n".join(lines))


#: key -> the claim of an `Advice` as declared, with the template of its measured numbers
ADVICE_CLAIMS = declare_texts(
    {
        "within_bound": (
            "every element the implementation computed is inside the a-priori bound of the op",
            " ({implementation}: {op} in {fmt}, size {size}): max |error| {max_abs:.3g} "
            "({max_ulp:.3g} ULP), largest bound {bound:.3g}",
        ),
        "growth": (
            "the worst-case bound grows linearly with the number of terms, the probabilistic "
            "one like its square root",
            ": from {n} to {n100} terms the worst case grows {worst:.4g}-fold, the "
            "probabilistic one {likely:.4g}-fold",
        ),
    }
)


def _growth_claim(n: int, fmt: str) -> Any:
    """ADVICE_CLAIMS["growth"] from ``n`` to 100 n terms: gamma 100-fold, the probabilistic
    gamma 10-fold (to 1 %, 10 %), where 100 n u is small enough for both to be that close."""
    spec = ADVICE_CLAIMS["growth"]
    u = unit_roundoff(fmt)
    if 100 * n * u > 0.01:
        why = f"at {100 * n} terms n*u = {100 * n * u:.3g} is not small: neither bound is linear"
        return spec.not_checked(why)
    worst = gamma(100 * n, fmt) / gamma(n, fmt)
    likely = probabilistic_gamma(100 * n, fmt) / probabilistic_gamma(n, fmt)
    holds = abs(worst / 100 - 1) < 0.01 and abs(likely / 10 - 1) < 0.1
    return spec.claim(holds, n=n, n100=100 * n, worst=worst, likely=likely)


def _checked(op: Any, fmt: Any, size: Any) -> tuple[str, str, int]:
    """``advise``'s arguments validated, in that order: the op, the format (its float name),
    the size the op takes."""
    where = "tolerance.advise"
    if not isinstance(op, str) or op not in OPS:
        raise InvalidParameter("op", op, "one of " + ", ".join(OPS), where)
    ok = ("float16", "bfloat16", "float32", "float64")
    try:
        name = formats.get(fmt).name
    except Exception:
        name = ""
    name = {"binary16": "float16", "binary32": "float32", "binary64": "float64"}.get(name, name)
    if name not in ok:
        raise InvalidParameter("fmt", fmt, "one of " + ", ".join(ok), where)
    low, high, step = SIZES[op]
    try:
        n = 0 if isinstance(size, bool | np.bool_) else operator.index(size)
    except TypeError:
        n = 0
    if not low <= n <= high or n % step:
        many = f", a multiple of {step} (C*3*3)" if step > 1 else ""
        raise InvalidParameter("size", size, f"an int in [{low}, {high}]{many} for {op}", where)
    return op, name, n


def sample(op: str, size: int, seed: int) -> dict[str, np.ndarray]:
    """The inputs `advise` measures ``op`` on at ``size`` from ``seed``, by argument name."""
    rng = np.random.default_rng(seed)
    if op == "sum":
        return {"x": rng.standard_normal(size)}
    if op == "dot":
        return {"x": rng.standard_normal(size), "y": rng.standard_normal(size)}
    if op == "matmul":
        k = _MATMUL_N
        return {"a": rng.standard_normal((k, size)), "b": rng.standard_normal((size, k))}
    if op == "conv2d":
        c = size // 9
        return {"x": rng.standard_normal((1, c, 6, 6)), "w": rng.standard_normal((4, c, 3, 3))}
    if op in ("softmax", "layer_norm"):
        return {"x": rng.standard_normal((_ROWS, size)) * 3}
    return {"x": rng.standard_normal(min(size, 4096)) * 3}


def _bound_and_truth(op: str, data: dict[str, np.ndarray], fmt: str) -> tuple[Any, np.ndarray]:
    """The exact/certified truth of ``op`` on ``data`` and its per-element a-priori bound."""
    from . import truth
    from .truth import reference

    def approx(t: Any) -> np.ndarray:
        return np.asarray(t.split()[0], dtype=np.float64)

    if op in ("sum", "dot"):
        x = data["x"]
        t = truth.sum(x) if op == "sum" else truth.dot(x, data["y"])
        terms = x if op == "sum" else x * data["y"]
        return t, dot_bound(np.sum(np.abs(terms)), x.size, fmt, approx(t))
    if op == "matmul":
        a, b = data["a"], data["b"]
        t = truth.matmul(a, b)
        return t, dot_bound(np.abs(a) @ np.abs(b), a.shape[1], fmt, approx(t))
    if op == "conv2d":
        x, w = data["x"], data["w"]
        t = truth.conv2d(x, w)
        ab = approx(truth.conv2d(np.abs(x), np.abs(w)))
        return t, dot_bound(ab, w[0].size, fmt, approx(t))
    x = data["x"]
    acc = accumulation_format(fmt)  # 16-bit formats: computed in float32, rounded at the end
    if op == "softmax":
        t = reference.softmax(x, axis=-1)
        return t, widen(softmax_bound(x, approx(t), -1, acc), approx(t), fmt)
    if op == "layer_norm":
        n = x.shape[-1]
        t = reference.layer_norm(x, n)
        mean = x.mean(axis=-1, keepdims=True)
        sigma = np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
        ma = np.abs(x).mean(axis=-1, keepdims=True)
        one, zero = np.ones_like(x), np.zeros_like(x)
        return t, widen(normalize_bound(x, mean, sigma, one, zero, acc, n, ma), approx(t), fmt)
    t = reference.gelu(x)
    return t, widen(gelu_bound(x, approx(t), acc), approx(t), fmt)


def _run_torch(op: str, data: dict[str, np.ndarray], fmt: str) -> tuple[Any, str]:
    from . import backends

    torch = backends.load("torch")
    t = {k: torch.from_numpy(v).to(getattr(torch, fmt)) for k, v in data.items()}
    f = torch.nn.functional
    with torch.no_grad():
        out = {
            "sum": lambda: t["x"].sum(),
            "dot": lambda: torch.dot(t["x"], t["y"]),
            "matmul": lambda: t["a"] @ t["b"],
            "conv2d": lambda: f.conv2d(t["x"], t["w"]),
            "softmax": lambda: torch.softmax(t["x"], dim=-1),
            "layer_norm": lambda: f.layer_norm(t["x"], (t["x"].shape[-1],)),
            "gelu": lambda: f.gelu(t["x"]),
        }[op]()
    return out, f"torch {torch.__version__} (CPU)"


def advise(op: str, fmt: Any = "float32", size: int = 1024, seed: int = 0) -> Advice:
    """Bound, measured error and ``rtol``/``atol`` for ``op`` in ``fmt`` at ``size``.

    The measurement runs torch on seeded standard-normal data stored in ``fmt`` and compares
    it with the exact (sums, products, convolutions) or certified (softmax, LayerNorm, GELU)
    result of those very inputs. The worst-case tolerances let two implementations that each
    meet the a-priori bound pass: ``|a - b| <= 2 * bound``, split into ``rtol`` (relative to the
    result) and ``atol`` (the part that the result's own size cannot carry when it cancels:
    twice the largest bound on this data). Without torch the advice is still given, the
    measurement is not.
    """
    from . import formats as fm
    from . import metrics
    from .errors import BackendUnavailable

    op, fmt, n = _checked(op, fmt, size)
    raw = sample(op, n, _count(seed, "tolerance.advise", "seed"))
    data = {k: np.asarray(fm.round_array(v, fmt), dtype=np.float64) for k, v in raw.items()}
    reduction = op in ("sum", "dot", "matmul", "conv2d")
    terms = n if reduction else 1
    acc = accumulation_format(fmt) if reduction else formats.get(fmt).name
    g = gamma(terms, acc)
    gp = probabilistic_gamma(terms, acc)
    truth_value, bound = _bound_and_truth(op, data, fmt)
    bound = np.atleast_1d(bound)
    hi, lo = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in truth_value.split())
    exact = np.abs(hi)
    # Two implementations each within bound_i differ by at most 2 bound_i. Split that into the
    # largest relative part r |y_i| that every element's bound covers, and the rest (atol).
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(exact > 0, bound / exact, np.inf)
    r = float(np.min(ratio)) if np.isfinite(ratio).any() else 0.0
    rest = np.maximum(bound - r * exact, 0.0)
    rtol, atol = 2 * r * _SAFETY, 2 * float(rest.max()) * _SAFETY
    bmax = float(bound.max())
    # probabilistic: gamma(n) replaced by Higham–Mary's lambda=5 version (reductions only)
    scale = min(gp / g, 1.0) if reduction and g > 0 and math.isfinite(g) else 1.0
    measured: tuple[float | None, float | None, float | None] = (None, None, None)
    within: bool | None = None
    impl, note = "torch", ""
    try:
        got, impl = _run_torch(op, data, fmt)
        err = metrics.measure(got, truth_value)
        g64 = np.atleast_1d(np.asarray(metrics.as_format_array(got)[0], dtype=np.float64))
        diff = np.abs((g64 - hi) - lo)
        measured = (float(diff.max()), err.max_rel, err.max_abs_ulp)
        within = bool(np.all(diff <= bound))
    except BackendUnavailable as exc:
        note = str(exc)
    if reduction and not note:
        note = (
            f"accumulated in {acc}; the bound is relative to the sum of |terms|, not to the "
            "result: atol covers results that cancel, and grows with the data's scale"
        )
    return Advice(
        op=op,
        fmt=fmt,
        size=n,
        size_meaning=_SIZE_MEANING[op],
        terms=terms,
        accumulation=acc,
        gamma=g,
        gamma_probabilistic=gp,
        rtol=rtol,
        atol=atol,
        rtol_probabilistic=rtol * scale,
        atol_probabilistic=atol * scale,
        measured_max_abs=measured[0],
        measured_max_rel=measured[1],
        measured_max_ulp=measured[2],
        bound_max_abs=bmax,
        within_bound=within,
        implementation=impl,
        note=note,
    )
