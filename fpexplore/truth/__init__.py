"""Ground truth: exact sums and products of float arrays, mpmath reference operations.

``sum``, ``mean``, ``dot``, ``matmul`` and ``conv2d`` return exact `Truth` values (dyadic
rationals); a ``matmul`` of rows spanning a wide exponent range is computed level by level as
far as each question (a rounding, a measurement, the exact values) needs (`levels`).
`fpexplore.truth.reference` holds mpmath operations certified to a number of digits;
`once` and `by_value` (`fpexplore.truth.reuse`): a truth that measures many outcomes, computed once.
"""

from . import reference
from .ops import conv2d, dot, matmul, mean, sum
from .reuse import by_value, once
from .value import Truth

__all__ = ["Truth", "by_value", "conv2d", "dot", "matmul", "mean", "once", "reference", "sum"]
