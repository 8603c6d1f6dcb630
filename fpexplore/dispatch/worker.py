"""The fresh process of `fresh.fingerprint` (``--fingerprint LABEL [--values]``): replies
with the fingerprint as one JSON line."""

from __future__ import annotations

import sys
import warnings

from .fresh import reply


def main() -> None:
    warnings.simplefilter("ignore")
    from .fingerprint import take

    reply(take(sys.argv[2], values="--values" in sys.argv[3:]))


if __name__ == "__main__":
    main()
