"""Ground truth: exact sums and products of float arrays, mpmath reference operations.

``sum``, ``mean``, ``dot``, ``matmul`` and ``conv2d`` return exact `Truth` values (dyadic
rationals); a ``matmul`` of rows spanning a wide exponent range is computed level by level as
far as each question (a rounding, a measurement, the exact values) needs (`levels`).
`fpexplore.truth.reference` holds mpmath operations certified to a number of digits.
"""

from . import reference
from .ops import conv2d, dot, matmul, mean, sum
from .value import Truth

__all__ = ["Truth", "conv2d", "dot", "matmul", "mean", "reference", "sum"]
