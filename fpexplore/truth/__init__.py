"""Ground truth: exact sums and products of float arrays, mpmath reference operations.

``sum``, ``mean``, ``dot``, ``matmul`` and ``conv2d`` return exact `Truth` values (dyadic
rationals); `fpexplore.truth.reference` holds mpmath operations certified to a number of digits.
"""

from . import reference
from .ops import conv2d, dot, matmul, mean, sum
from .value import Truth

__all__ = ["Truth", "conv2d", "dot", "matmul", "mean", "reference", "sum"]
