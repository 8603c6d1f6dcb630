"""Quiet frameworks: no start-up log lines (cpu_feature_guard, oneDNN, absl) in notebook output.

TensorFlow reads ``TF_CPP_MIN_LOG_LEVEL`` once, when its C++ runtime loads, so `quiet_tensorflow`
must run before the first ``import tensorflow`` (the backend registry calls it). A value the user
set already is kept: to see TensorFlow's logs, set ``TF_CPP_MIN_LOG_LEVEL=0`` before starting.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["TF_LOG_LEVEL", "quiet_tensorflow"]

#: 2 hides TensorFlow's C++ INFO and WARNING lines and keeps its errors
TF_LOG_LEVEL = "2"


def quiet_tensorflow() -> None:
    """Hide TensorFlow's C++ start-up lines and absl's Python warnings (errors still show)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", TF_LOG_LEVEL)
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    if "absl.logging" in sys.modules or _has_absl():
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)
        absl_logging.set_stderrthreshold("error")


def _has_absl() -> bool:
    from importlib.util import find_spec

    return find_spec("absl") is not None
