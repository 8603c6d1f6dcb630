"""Hide frameworks from a child interpreter: FPEXPLORE_TEST_HIDE="torch,tensorflow" makes those
top-level modules (and their submodules) absent, as on a machine without them: every import
finder answers "not found" for them, so ``import`` raises ModuleNotFoundError and
``importlib.util.find_spec`` returns None."""

import os
import sys

_HIDDEN = {n.strip() for n in os.environ.get("FPEXPLORE_TEST_HIDE", "").split(",") if n.strip()}


class _Hiding:
    def __init__(self, inner):
        self._inner = inner

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _HIDDEN:
            return None
        find = getattr(self._inner, "find_spec", None)
        return find(name, path, target) if find is not None else None

    def __getattr__(self, attr):
        return getattr(self._inner, attr)


if _HIDDEN:
    sys.meta_path[:] = [_Hiding(f) for f in sys.meta_path]
