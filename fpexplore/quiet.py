"""Quiet frameworks: no start-up log lines (cpu_feature_guard, oneDNN, absl) in notebook output.

TensorFlow reads ``TF_CPP_MIN_LOG_LEVEL`` once, when its C++ runtime loads, so `quiet_import`
must run before the first ``import tensorflow`` (the backend registry calls it). A value the user
set already is kept: to see TensorFlow's logs, set ``TF_CPP_MIN_LOG_LEVEL=0`` before starting.
This is the one place that sets TensorFlow's log level.

Recent TensorFlow writes a few lines (absl's "All log messages before absl::InitializeLog()"
and oneDNN's "custom operations are on") straight to file descriptor 2 while it is imported,
whatever the log level says; `quiet_import` silences that descriptor for the import only.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import sys
from types import ModuleType

#: 2 hides TensorFlow's C++ INFO and WARNING lines and keeps its errors
TF_LOG_LEVEL = "2"


def quiet_import(name: str) -> ModuleType:
    """``import name`` with TensorFlow's start-up lines hidden (errors still show), unless the
    user asked for its logs (``TF_CPP_MIN_LOG_LEVEL=0``); an ImportError raises after file
    descriptor 2 is back."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", TF_LOG_LEVEL)
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    if "absl.logging" in sys.modules or importlib.util.find_spec("absl") is not None:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)
        absl_logging.set_stderrthreshold("error")
    wants_logs = os.environ["TF_CPP_MIN_LOG_LEVEL"].strip() in ("0", "")
    if name in sys.modules or wants_logs:
        return importlib.import_module(name)
    with contextlib.suppress(Exception):  # Python's own stderr first
        sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2 (a detached process): nothing to silence
        return importlib.import_module(name)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            return importlib.import_module(name)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
