"""``python -m fpexplore``: the same command line as ``fpexplore``."""

import sys

from .cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
