"""Hide frameworks from a child interpreter: FPEXPLORE_TEST_HIDE="torch,tensorflow" makes those
top-level modules (and their submodules) fail to import, as on a machine without them."""

import os
import sys

_HIDDEN = {n.strip() for n in os.environ.get("FPEXPLORE_TEST_HIDE", "").split(",") if n.strip()}


class _Hide:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in _HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


if _HIDDEN:
    sys.meta_path.insert(0, _Hide())
