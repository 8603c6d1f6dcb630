"""The fresh process of `layout.strict_offsets`: `layout.blas_offsets` under the environment it
was started with (MKL reads ``MKL_CBWR`` once, when it loads)."""

from __future__ import annotations

from ...dispatch.fresh import serve
from .layout import blas_offsets

if __name__ == "__main__":
    serve(blas_offsets)
