"""Truths that measure many outcomes: an exact truth whose float64 split is computed once
(`once`), and an elementwise truth computed once per distinct input value (`by_value`)."""

from collections.abc import Callable
from typing import Any

import numpy as np

from .value import Truth


class _Once(Truth):
    """A Truth whose float64 (hi, lo, known) split is computed once for every outcome."""

    _known: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def split_known(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._known is None:
            self._known = super().split_known()
        return tuple(a.copy() for a in self._known)  # type: ignore[return-value]


class _Gathered(_Once):
    """A `by_value` truth: its split and its roundings are those of the distinct values,
    gathered back (rounding is elementwise)."""

    def __init__(self, label: str, small: Truth, gather: Callable[[Any], np.ndarray]) -> None:
        exact, prec, fmt = gather(small.exact), small.prec, small.input_format
        super().__init__(label, exact=exact, prec=prec, input_format=fmt)
        self._known = tuple(gather(a) for a in small.split_known())  # type: ignore[assignment]
        self._small, self._gather = small, gather

    def round(self, fmt: Any = "float64") -> Any:
        return self._gather(self._small.round(fmt))


def once(t: Truth) -> Truth:
    """``t`` with its float64 split computed once, for a truth that measures many outcomes
    (a truth that is not exact is returned as it is)."""
    if not t.is_exact:
        return t
    return _Once(t.label, exact=t.exact, prec=t.prec, input_format=t.input_format)


def by_value(
    values: np.ndarray, truth_of: Callable[[np.ndarray], Truth], label: str | None = None
) -> Truth:
    """The elementwise truth ``truth_of`` over ``values`` (C, H, W), computed once per distinct
    value (an image has at most 256 levels per channel) and gathered back, as are its split
    and roundings. ``truth_of`` gets a (C, 1, K) array holding every distinct value in each
    channel; ``label`` defaults to the one ``truth_of`` gives."""
    values = np.asarray(values)
    uniq, inv = np.unique(values, return_inverse=True)
    inv = inv.reshape(values.shape)
    small = truth_of(np.ascontiguousarray(np.broadcast_to(uniq, (values.shape[0], 1, uniq.size))))
    ch = np.arange(values.shape[0])[:, None, None]

    def gather(a: np.ndarray) -> np.ndarray:
        return np.asarray(a).reshape(values.shape[0], uniq.size)[ch, inv]

    return _Gathered(label or small.label, small, gather)
