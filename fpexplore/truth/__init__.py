"""Ground truth: exact sums and products of float arrays, mpmath reference operations."""

from .value import Truth

__all__ = ["Truth"]
